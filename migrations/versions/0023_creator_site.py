"""matches.creator_site: the IPv6 /48 of the client address that created the room, as a keyed
hash (`app.rooms.making.share_of`, beside ``matches.bot_share``, the hash of the address itself),
so that a room loaded again after a restart still counts against its creator's /48 in the caps
of open rooms and listed tables (`app.rooms.hub.Hub.creators`)

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-05 19:45:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0023"
down_revision: str | Sequence[str] | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add ``matches.creator_site`` (NULL: an IPv4 creator, one not known, or a match stored
    before this revision)."""
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("creator_site", sa.String(length=32), nullable=True))


def downgrade() -> None:
    """Drop ``matches.creator_site``."""
    with op.batch_alter_table("matches") as batch:
        batch.drop_column("creator_site")
