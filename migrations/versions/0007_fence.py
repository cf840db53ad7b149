"""matches.fence: the fencing token of the room's owner that last wrote it (multi-process hosting)

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02 04:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add ``matches.fence`` (0 for every match stored so far: any owner's first token passes)."""
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("fence", sa.BigInteger(), server_default=sa.text("0"), nullable=False))


def downgrade() -> None:
    """Drop ``matches.fence``."""
    with op.batch_alter_table("matches") as batch:
        batch.drop_column("fence")
