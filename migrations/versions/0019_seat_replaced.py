"""seats.replaced: the level of the bot a seat's person took it from (the host's choice at the
room's creation, or a bot the host set there since), which the seat goes back to when they leave
it before a start (`app.rooms.seats.check_leave`). Kept in memory only before, so a room loaded
again (a restart, a handoff, an idle unload) between Play again and the leave emptied the seat,
and the start then filled it with the covering (medium) bot

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-05 09:20:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0019"
down_revision: str | Sequence[str] | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add ``seats.replaced`` (NULL: the seat was empty when its person took it, it is no
    person's, or it was stored before this revision)."""
    with op.batch_alter_table("seats") as batch:
        batch.add_column(sa.Column("replaced", sa.String(length=16), nullable=True))


def downgrade() -> None:
    """Drop ``seats.replaced``."""
    with op.batch_alter_table("seats") as batch:
        batch.drop_column("replaced")
