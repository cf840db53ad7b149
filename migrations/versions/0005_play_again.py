"""play again: a room (one code) holds several matches, numbered from 1; seats say who is ready

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 21:20:00

``matches.code`` stops being unique: every match played in a room is its own row (its own id,
rounds, actions, tallies and chat) with the room's code and ``room_match``, its number in the
room (1, 2, …; unique with the code). Every match stored so far becomes match 1 of its room.
``seats.ready`` marks a person who said they play this match (Play again).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add ``matches.room_match`` (1 for every stored match), unique with ``code`` instead of the
    code alone, and ``seats.ready`` (false)."""
    op.drop_index(op.f("ix_matches_code"), table_name="matches")
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("room_match", sa.Integer(), server_default=sa.text("1"), nullable=False))
        batch.create_unique_constraint(op.f("uq_matches_code_room_match"), ["code", "room_match"])
        batch.create_check_constraint(op.f("ck_matches_room_match"), "room_match > 0")
    op.create_index(op.f("ix_matches_code"), "matches", ["code"], unique=False)
    with op.batch_alter_table("seats") as batch:
        batch.add_column(sa.Column("ready", sa.Boolean(), server_default=sa.false(), nullable=False))


def downgrade() -> None:
    """Keep only each room's first match's code unique again: fails while a room holds more than
    one match (delete the later ones first)."""
    with op.batch_alter_table("seats") as batch:
        batch.drop_column("ready")
    op.drop_index(op.f("ix_matches_code"), table_name="matches")
    with op.batch_alter_table("matches") as batch:
        batch.drop_constraint(op.f("ck_matches_room_match"), type_="check")
        batch.drop_constraint(op.f("uq_matches_code_room_match"), type_="unique")
        batch.drop_column("room_match")
    op.create_index(op.f("ix_matches_code"), "matches", ["code"], unique=True)
