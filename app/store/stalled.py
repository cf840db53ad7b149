"""A new owner's claim not held up by a former owner stopped inside a write (issue 15, docs/cluster.md).

An owner paused (``SIGSTOP``, a stalled VM) while its write transaction holds a match's row locked
keeps that lock for as long as the pause lasts, and the next owner's claim (`Writer.claim_room`,
``UPDATE matches SET fence``) waits on it. When the pause finds the session idle inside the
transaction, PostgreSQL ends it after ``idle_in_transaction_session_timeout`` (`make_engine`). But
asyncpg pipelines an ``executemany`` (every row's Bind and Execute, then one Sync): paused after the
first Executes and before the Sync, the session is *active* (waiting to read the rest of the
pipeline), no idle timeout applies, and the claim waited until its own statement timeout, again
and again: the room stayed unavailable for as long as the pause (a test of a stopped process saw
it).

So while a claim waits, every `PATIENCE_S` this process looks at its own sessions that wait for a
lock (``pg_blocking_pids``) and ends (``pg_terminate_backend``) the sessions that block them when
each is another ``domeng serve`` process's (its ``application_name``: `app.store.db.application_name`)
and its transaction has been open for longer than `PATIENCE_S`. That process lost the room's lease
before this one took it (the lease outlasts any write of a live owner), so its write would be
fenced out anyway; ending its session rolls the write back, and nothing of it was acknowledged (a
caller of a live process gets the database's error). Sessions of anything else (``domeng
migrate``, an operator's ``psql``) are never ended: the claim waits for them as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Final, TypeVar

import structlog
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from app.store.db import application_name

__all__ = ["PATIENCE_S", "SERVER_PREFIX", "end_stalled_blockers", "past_stalled_owners"]

_log = structlog.get_logger("domeng.store")

_T = TypeVar("_T")

PATIENCE_S: Final = 1.0
"""How long a claim waits before this process looks for stalled blockers, and how long a blocker's
transaction must have been open to be ended (seconds)."""

SERVER_PREFIX: Final = "domeng serve "
"""The start of every ``domeng serve`` process's ``application_name``."""

_END_STALLED: Final = text(
    "SELECT b.pid, b.application_name, "
    "EXTRACT(EPOCH FROM clock_timestamp() - b.xact_start)::float8 AS open_s, "
    "pg_terminate_backend(b.pid) AS ended "
    "FROM pg_stat_activity AS b WHERE b.pid IN ("
    "  SELECT unnest(pg_blocking_pids(w.pid)) FROM pg_stat_activity AS w"
    "  WHERE w.application_name = :ours AND w.wait_event_type = 'Lock'"
    "  AND w.datname = current_database()"
    ") AND starts_with(b.application_name, :servers) AND b.application_name <> :ours "
    "AND b.xact_start < clock_timestamp() - make_interval(secs => :patience)"
)


async def end_stalled_blockers(engine: AsyncEngine, patience_s: float = PATIENCE_S) -> int:
    """End the sessions of other ``domeng serve`` processes that block one of this process's
    sessions and have had their transaction open for longer than ``patience_s`` seconds (module
    docstring); each is logged (``store_stalled_owner_ended``: its pid, name and how long its
    transaction was open, in seconds). Returns how many were ended. Raises the database's errors
    (SQLAlchemy's)."""
    ours = application_name()
    async with engine.connect() as connection:
        rows = (
            await connection.execute(
                _END_STALLED, {"ours": ours, "servers": SERVER_PREFIX, "patience": patience_s}
            )
        ).all()
        await connection.rollback()
    for row in rows:
        _log.warning(
            "store_stalled_owner_ended",
            pid=row.pid,
            session=row.application_name,
            open_s=round(row.open_s, 1),
            ended=row.ended,
        )
    return sum(1 for row in rows if row.ended)


async def past_stalled_owners(
    engine: AsyncEngine, claim: Awaitable[_T], patience_s: float = PATIENCE_S
) -> _T:
    """Await ``claim`` (a write that may wait on a former owner's row lock); every ``patience_s``
    seconds it has not finished, `end_stalled_blockers` on ``engine``. A failure to look (the
    database unreachable) is logged and looked again; ``claim``'s own result or error is returned
    or raised."""
    waiting = asyncio.ensure_future(claim)
    try:
        while True:
            done, _ = await asyncio.wait({waiting}, timeout=patience_s)
            if done:
                return waiting.result()
            try:
                await end_stalled_blockers(engine, patience_s)
            except Exception as error:  # the claim's own timeout decides
                _log.warning("store_stalled_owner_check_failed", error=type(error).__name__)
    finally:
        if not waiting.done():
            waiting.cancel()
