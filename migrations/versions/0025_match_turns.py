"""match_turns: a match's version and turn clock (``version``, ``turn_at``, ``handed_fence``,
``handed_at``) move from its wide ``matches`` row to a narrow row of their own, the only row a
move updates (issue 15: a batch of moves of different matches wrote one ``matches`` page each
to the log; `app.store.models.MatchTurn`)

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-07 00:20:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0025"
down_revision: str | Sequence[str] | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_MOVED = ("version", "turn_at", "handed_fence", "handed_at")


def upgrade() -> None:
    """Create ``match_turns``, one row per match holding its four columns as they were, then drop
    them from ``matches``."""
    op.create_table(
        "match_turns",
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("turn_at", sa.Float(), nullable=True),
        sa.Column("handed_fence", sa.BigInteger(), nullable=True),
        sa.Column("handed_at", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(
            ["match_id"], ["matches.id"], name=op.f("fk_match_turns_match_id_matches"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("match_id", name=op.f("pk_match_turns")),
    )
    columns = ", ".join(_MOVED)
    op.execute(f"INSERT INTO match_turns (match_id, {columns}) SELECT id, {columns} FROM matches")
    with op.batch_alter_table("matches") as batch:
        for column in _MOVED:
            batch.drop_column(column)


def downgrade() -> None:
    """Put the four columns back on ``matches`` with each match's values, and drop
    ``match_turns``."""
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("version", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("turn_at", sa.Float(), nullable=True))
        batch.add_column(sa.Column("handed_fence", sa.BigInteger(), nullable=True))
        batch.add_column(sa.Column("handed_at", sa.Float(), nullable=True))
    for column in _MOVED:
        value = f"(SELECT t.{column} FROM match_turns t WHERE t.match_id = matches.id)"
        op.execute(f"UPDATE matches SET {column} = " + (f"COALESCE({value}, 0)" if column == "version" else value))
    with op.batch_alter_table("matches") as batch:
        batch.alter_column("version", server_default=None)
    op.drop_table("match_turns")
