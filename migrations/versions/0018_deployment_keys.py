"""deployment_keys: secrets made once per deployment and shared by its processes; the first,
``bot_share``, keys the hash that `matches.bot_share` keeps of a room creator's client address
(`app.rooms.making.share_of`), so that the stored value cannot be turned back into the address by
hashing every IPv4 address (an unkeyed hash could). The shares stored before it (unkeyed) are
cleared: their rooms count alone, or as their hub knows their creator.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-05 09:10:00
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0018"
down_revision: str | Sequence[str] | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create ``deployment_keys`` with a new random ``bot_share`` key (256 bits, hex), and clear
    the unkeyed ``matches.bot_share`` values."""
    keys = op.create_table(
        "deployment_keys",
        sa.Column("name", sa.String(length=32), primary_key=True),
        sa.Column("value", sa.String(length=64), nullable=False),
    )
    op.bulk_insert(keys, [{"name": "bot_share", "value": secrets.token_hex(32)}])
    op.execute(sa.text("UPDATE matches SET bot_share = NULL"))


def downgrade() -> None:
    """Drop ``deployment_keys`` (shares stored under its key stay, and are then unmatched by any
    new one: those rooms count as their own share until they end)."""
    op.drop_table("deployment_keys")
