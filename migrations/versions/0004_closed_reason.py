"""matches.closed_reason: why a match was stored as abandoned (an admin closed it, or idle)

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01 17:45:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add ``matches.closed_reason`` (NULL for every match stored so far)."""
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("closed_reason", sa.String(length=16), nullable=True))


def downgrade() -> None:
    """Drop ``matches.closed_reason``."""
    with op.batch_alter_table("matches") as batch:
        batch.drop_column("closed_reason")
