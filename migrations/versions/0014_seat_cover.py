"""seats.cover: whether a bot plays for the seat's person (covering it, standing in for one turn, or
their last turn's timer ran out), so that a room loaded again goes on covering it

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-05 02:55:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0014"
down_revision: str | Sequence[str] | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add ``seats.cover`` (NULL: the person plays their own turns; a room stored before this
    revision loads its seats uncovered, as before)."""
    with op.batch_alter_table("seats") as batch:
        batch.add_column(sa.Column("cover", sa.String(length=10), nullable=True))


def downgrade() -> None:
    """Drop ``seats.cover``."""
    with op.batch_alter_table("seats") as batch:
        batch.drop_column("cover")
