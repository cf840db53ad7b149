"""matches.turn_at and matches.handed_fence: when the turn in play began, on the database's clock,
and whether the room was handed over in an orderly way during it

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-04 23:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add ``matches.turn_at`` (NULL: not known, a turn begun before this revision, measured from
    its move's ``created_at`` as before) and ``matches.handed_fence`` (NULL: not handed over)."""
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("turn_at", sa.Float(), nullable=True))
        batch.add_column(sa.Column("handed_fence", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    """Drop ``matches.turn_at`` and ``matches.handed_fence``."""
    with op.batch_alter_table("matches") as batch:
        batch.drop_column("handed_fence")
        batch.drop_column("turn_at")
