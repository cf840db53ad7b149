"""matches.unattended_rounds: rounds a room dealt in a row with no person at the table, so that a
room that stopped dealing to ask its spectators whether they still watch (`app.rooms.unattended`)
still waits when it is loaded again (a restart, a handoff, an idle unload), instead of dealing on
its own

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-05 09:10:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0021"
down_revision: str | Sequence[str] | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add ``matches.unattended_rounds`` (0 for every match stored before: its count starts
    again from its next deal)."""
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("unattended_rounds", sa.Integer(), server_default=sa.text("0"), nullable=False))


def downgrade() -> None:
    """Drop ``matches.unattended_rounds``."""
    with op.batch_alter_table("matches") as batch:
        batch.drop_column("unattended_rounds")
