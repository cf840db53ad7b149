"""seats.cover holds only the covers a room stores (``covered``, ``stand_in``, ``timed_out``) or NULL

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-05 06:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0015"
down_revision: str | Sequence[str] | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COVERS = "('covered', 'stand_in', 'timed_out')"
"""`app.store.models.SEAT_COVERS` as this revision knows them (a later one that adds a cover alters
the constraint; this one stays as written)."""


def upgrade() -> None:
    """Check ``seats.cover``. A value the store never wrote (it refuses any other) would make a
    room loaded again leave the seat uncovered, so one found here is cleared to NULL, as it reads."""
    op.execute(f"UPDATE seats SET cover = NULL WHERE cover NOT IN {_COVERS}")
    # SQLite adds a constraint by rebuilding the table (batch mode); PostgreSQL in place
    with op.batch_alter_table("seats") as batch:
        batch.create_check_constraint(op.f("ck_seats_cover"), f"cover IN {_COVERS}")


def downgrade() -> None:
    """Drop the check (the column stays, as 0014 made it)."""
    with op.batch_alter_table("seats") as batch:
        batch.drop_constraint(op.f("ck_seats_cover"), type_="check")
