"""matches.host_stop: the host asked to end a no-limit match after the round in play (or ended it)

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-04 12:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add ``matches.host_stop`` (false: no host had a way to stop a match so far)."""
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("host_stop", sa.Boolean(), server_default=sa.false(), nullable=False))


def downgrade() -> None:
    """Drop ``matches.host_stop``."""
    with op.batch_alter_table("matches") as batch:
        batch.drop_column("host_stop")
