"""hints: the host may allow hints (matches.hints); every hint used is stored (hints)

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 22:10:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add ``matches.hints`` (false: no match stored so far allowed hints) and the ``hints`` table."""
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("hints", sa.Boolean(), server_default=sa.false(), nullable=False))
    op.create_table(
        "hints",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True),
        sa.Column("match_id", sa.Integer(), sa.ForeignKey("matches.id", ondelete="CASCADE"), nullable=False),
        sa.Column("round_index", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("action", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index(op.f("ix_hints_match_id"), "hints", ["match_id"], unique=False)


def downgrade() -> None:
    """Drop the ``hints`` table and ``matches.hints``."""
    op.drop_index(op.f("ix_hints_match_id"), table_name="hints")
    op.drop_table("hints")
    with op.batch_alter_table("matches") as batch:
        batch.drop_column("hints")
