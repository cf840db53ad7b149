"""matches.listed_at: when, on the database's clock, the host first listed the match in the
lobby's open tables, so that a room loaded again (a restart, a handoff, an idle unload) keeps its
place among the newest instead of starting over

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-05 02:50:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0013"
down_revision: str | Sequence[str] | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add ``matches.listed_at`` (NULL: never listed, or listed before this revision: such a
    table counts as listed when its room is next loaded, as before)."""
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("listed_at", sa.Float(), nullable=True))


def downgrade() -> None:
    """Drop ``matches.listed_at``."""
    with op.batch_alter_table("matches") as batch:
        batch.drop_column("listed_at")
