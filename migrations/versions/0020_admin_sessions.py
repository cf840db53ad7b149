"""admin_sessions: signed-in admins kept in the database, so that a restart of a one-process
server (no Redis) no longer signs the admin out. A row holds the HMAC-SHA256 of the session's
cookie value under the admin secret (never the value) and its expiry in epoch seconds
(`app.store.models.AdminSessionRow`, `app.admin.auth`).

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-05 09:20:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0020"
down_revision: str | Sequence[str] | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create ``admin_sessions`` (empty: the sessions of the running servers were in memory)."""
    op.create_table(
        "admin_sessions",
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("expires_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("digest", name=op.f("pk_admin_sessions")),
    )
    op.create_index(op.f("ix_admin_sessions_expires_at"), "admin_sessions", ["expires_at"])


def downgrade() -> None:
    """Drop ``admin_sessions`` (every stored admin session ends)."""
    op.drop_index(op.f("ix_admin_sessions_expires_at"), table_name="admin_sessions")
    op.drop_table("admin_sessions")
