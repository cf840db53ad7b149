"""chat: a room's chat lines, the host's chat rules, open tables

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01 18:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add ``chat``, ``matches.chat_rules`` and ``matches.open_table`` (app/store/models.py)."""
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("chat_rules", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("open_table", sa.Boolean(), server_default=sa.false(), nullable=False))
    op.create_table(
        "chat",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=True),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("text", sa.String(length=1024), nullable=True),
        sa.Column("reaction", sa.String(length=16), nullable=True),
        sa.Column("round_index", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["match_id"], ["matches.id"], name=op.f("fk_chat_match_id_matches"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_chat")),
    )
    op.create_index(op.f("ix_chat_match_id"), "chat", ["match_id"], unique=False)


def downgrade() -> None:
    """Drop them again."""
    op.drop_index(op.f("ix_chat_match_id"), table_name="chat")
    op.drop_table("chat")
    with op.batch_alter_table("matches") as batch:
        batch.drop_column("open_table")
        batch.drop_column("chat_rules")
