"""matches.handed_at: when, on the database's clock, the owner handed the room over in an orderly
way (with ``handed_fence``), so that the time no process had the room does not count in the turn

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-05 00:10:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add ``matches.handed_at`` (NULL: not handed over, or handed over before this revision: the
    turn then counts until the room is read, as before)."""
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("handed_at", sa.Float(), nullable=True))


def downgrade() -> None:
    """Drop ``matches.handed_at``."""
    with op.batch_alter_table("matches") as batch:
        batch.drop_column("handed_at")
