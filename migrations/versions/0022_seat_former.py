"""seats.former: the name of the person whose seat the host gave to a bot during the match
(``PUT /api/rooms/{code}/seats/{seat}/bot``), so the admin's history still says who played the
seat's first moves. Before, the seat's name was overwritten and the person was lost from the
history (the seat's earlier moves read as the bot's)

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-05 17:05:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0022"
down_revision: str | Sequence[str] | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add ``seats.former`` (NULL: no person's seat was given to a bot during the match, or it
    was stored before this revision)."""
    with op.batch_alter_table("seats") as batch:
        batch.add_column(sa.Column("former", sa.String(length=512), nullable=True))


def downgrade() -> None:
    """Drop ``seats.former``."""
    with op.batch_alter_table("seats") as batch:
        batch.drop_column("former")
