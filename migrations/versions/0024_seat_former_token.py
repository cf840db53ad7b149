"""seats.former_token_hash: the token hash of the person whose seat the host gave to a bot
(``PUT /api/rooms/{code}/seats/{seat}/bot``), so that their token, opened later (they were away
when it happened), is told so (close 4007, as a connected player is) rather than refused as a
token the room never knew (4004, "your seat was given to someone else")

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-05 22:55:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0024"
down_revision: str | Sequence[str] | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add ``seats.former_token_hash`` (NULL: the host gave no person's seat to a bot, or it was
    stored before this revision)."""
    with op.batch_alter_table("seats") as batch:
        batch.add_column(sa.Column("former_token_hash", sa.String(length=128), nullable=True))


def downgrade() -> None:
    """Drop ``seats.former_token_hash``."""
    with op.batch_alter_table("seats") as batch:
        batch.drop_column("former_token_hash")
