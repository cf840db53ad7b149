"""seats.name and chat.name take the longest name a person may give: 512 characters, not 64

A name is at most 32 user-perceived characters of at most 16 code points each
(app/rooms/names.py); PostgreSQL counts a varchar in code points, and refused one of joined emoji
(32 times 👩🏽‍💻 is 128) with a server error. SQLite never held the limit.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-04 21:10:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COLUMNS = (("seats", True), ("chat", False))
"""The tables whose ``name`` column holds a person's name, and whether it may be null."""


def upgrade() -> None:
    """Widen ``seats.name`` and ``chat.name`` to 512 characters."""
    for table, nullable in _COLUMNS:
        with op.batch_alter_table(table) as batch:
            batch.alter_column(
                "name", existing_type=sa.String(64), type_=sa.String(512), existing_nullable=nullable
            )


def downgrade() -> None:
    """Narrow them to 64 characters again (a longer name stored since fails the downgrade on
    PostgreSQL)."""
    for table, nullable in _COLUMNS:
        with op.batch_alter_table(table) as batch:
            batch.alter_column(
                "name", existing_type=sa.String(512), type_=sa.String(64), existing_nullable=nullable
            )
