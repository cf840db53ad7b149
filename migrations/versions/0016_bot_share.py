"""matches.bot_share: whom the room's bot decisions count for when they queue for the bot
workers (`app.rooms.room.Room.bot_share`, a key made from its creator's client address), so that
a room loaded again (a restart, a handoff, an idle unload, a later match of Play again) still
shares the workers with its creator's other rooms instead of counting alone

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-05 08:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0016"
down_revision: str | Sequence[str] | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add ``matches.bot_share`` (NULL: its creator not known, or a match stored before this
    revision: its room counts as the hub knows its creator, else alone, as before)."""
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("bot_share", sa.String(length=32), nullable=True))


def downgrade() -> None:
    """Drop ``matches.bot_share``."""
    with op.batch_alter_table("matches") as batch:
        batch.drop_column("bot_share")
