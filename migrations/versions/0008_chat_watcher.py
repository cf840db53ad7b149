"""chat.watcher: the public tag of the spectator who wrote a line (the host may mute one spectator)

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-04 04:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add ``chat.watcher`` (NULL for every line stored so far)."""
    with op.batch_alter_table("chat") as batch:
        batch.add_column(sa.Column("watcher", sa.String(length=16), nullable=True))


def downgrade() -> None:
    """Drop ``chat.watcher``."""
    with op.batch_alter_table("chat") as batch:
        batch.drop_column("watcher")
