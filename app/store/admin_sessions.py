"""Admin sessions in the store (`app.store.models.AdminSessionRow`): a signed-in admin stays
signed in across a restart of a one-process server until the session expires (docs/admin.md).
The store keeps only a keyed hash of each session (`app.admin.auth.AdminAuth` makes it) and its
expiry in epoch seconds."""

from __future__ import annotations

import time
from typing import Final

from sqlalchemy import delete, func, insert, select
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from app.store.errors import StoreClosedError
from app.store.models import AdminSessionRow
from app.store.reads import _failures_as_store_errors
from app.store.writer import Writer

__all__ = ["MAX_ADMIN_SESSIONS", "AdminSessionStore"]

MAX_ADMIN_SESSIONS: Final = 256
"""Admin sessions kept at once; a new one beyond this ends the one that expires first."""


class AdminSessionStore(Writer):
    """The admin-session writes and reads of `app.store.repository.Store`. Each raises
    `app.store.StoreError` when the database fails, `StoreClosedError` when the store is closed."""

    _read_engine: AsyncEngine | None

    async def put_admin_session(self, digest: str, expires_at: float) -> None:
        """Keep the session ``digest`` (hex, at most 64 characters) until ``expires_at`` (epoch
        seconds), deleting expired sessions first and, at `MAX_ADMIN_SESSIONS`, the soonest to
        expire."""
        now = time.time()

        def run(connection: Connection) -> None:
            connection.execute(delete(AdminSessionRow).where(AdminSessionRow.expires_at <= now))
            kept = connection.execute(select(func.count()).select_from(AdminSessionRow)).scalar_one()
            if kept >= MAX_ADMIN_SESSIONS:
                soonest = (
                    select(AdminSessionRow.digest)
                    .order_by(AdminSessionRow.expires_at)
                    .limit(kept - MAX_ADMIN_SESSIONS + 1)
                )
                connection.execute(delete(AdminSessionRow).where(AdminSessionRow.digest.in_(soonest)))
            connection.execute(delete(AdminSessionRow).where(AdminSessionRow.digest == digest))
            connection.execute(insert(AdminSessionRow).values(digest=digest, expires_at=expires_at))

        await self._submit(run)

    async def admin_session(self, digest: str) -> float | None:
        """The expiry (epoch seconds) of the session ``digest``, or None (unknown or expired)."""
        if self._read_engine is None:
            raise StoreClosedError("the store is not started")
        query = select(AdminSessionRow.expires_at).where(AdminSessionRow.digest == digest)
        async with _failures_as_store_errors(), AsyncSession(self._read_engine) as session:
            expires_at = await session.scalar(query)
        return expires_at if expires_at is not None and expires_at > time.time() else None

    async def end_admin_session(self, digest: str) -> None:
        """End the session ``digest`` (nothing happens for an unknown one)."""

        def run(connection: Connection) -> None:
            connection.execute(delete(AdminSessionRow).where(AdminSessionRow.digest == digest))

        await self._submit(run)
