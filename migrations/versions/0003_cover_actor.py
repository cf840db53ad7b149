"""actions.actor may be 'cover': a bot covering a person's seat (before: 'bot', like a bot seat's)

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01 17:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_OLD = "actor IN ('human', 'bot', 'timer', 'server')"
_NEW = "actor IN ('human', 'bot', 'timer', 'cover', 'server')"


def _actor_check(condition: str) -> None:
    # SQLite alters a constraint by rebuilding the table (batch mode); PostgreSQL in place
    with op.batch_alter_table("actions") as batch:
        batch.drop_constraint(op.f("ck_actions_actor"), type_="check")
        batch.create_check_constraint(op.f("ck_actions_actor"), condition)


def upgrade() -> None:
    """Allow the actor ``cover`` (earlier moves keep what they were stored with)."""
    _actor_check(_NEW)


def downgrade() -> None:
    """Back to four actors: a covering bot's moves become ``bot`` moves, as they were stored."""
    op.execute("UPDATE actions SET actor = 'bot' WHERE actor = 'cover'")
    _actor_check(_OLD)
