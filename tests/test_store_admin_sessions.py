"""Migration 0020 and the store's admin sessions (`app.store.admin_sessions`), on SQLite and
PostgreSQL (a new scratch database, since the test migrates down and up again): a session is kept
by its digest with its expiry until it expires or is ended, at most `MAX_ADMIN_SESSIONS` at once
(the soonest to expire goes first); down to 0019 drops the table, up again makes it empty."""

from __future__ import annotations

import asyncio
import time

from sqlalchemy import inspect

from app.store import Store
from app.store.admin_sessions import MAX_ADMIN_SESSIONS
from app.store.db import make_engine
from tests.adminkit import migrate
from tests.test_store_cover_check import database_url  # noqa: F401  (a fixture)


async def _tables(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        async with engine.connect() as connection:
            return set(await connection.run_sync(lambda sync: inspect(sync).get_table_names()))
    finally:
        await engine.dispose()


async def _sessions(url: str) -> tuple[float | None, float | None, float | None, float | None]:
    """Put sessions a (live), b (expired), c (ended), then read all three, and a again."""
    later = time.time() + 3600
    async with Store(url) as store:  # migrates to the head
        await store.put_admin_session("a" * 64, later)
        await store.put_admin_session("b" * 64, time.time() - 1)
        await store.put_admin_session("c" * 64, later)
        await store.end_admin_session("c" * 64)
        await store.end_admin_session("d" * 64)  # unknown: nothing happens
        found = (
            await store.admin_session("a" * 64),
            await store.admin_session("b" * 64),
            await store.admin_session("c" * 64),
        )
    async with Store(url) as store:  # a restart of the store keeps them
        return (*found, await store.admin_session("a" * 64))


async def _capped(url: str) -> tuple[int, float | None, float | None]:
    """`MAX_ADMIN_SESSIONS` + 1 sessions: how many are kept, the first's and the last's expiry."""
    now = time.time() + 3600
    async with Store(url) as store:
        for n in range(MAX_ADMIN_SESSIONS + 1):
            await store.put_admin_session(f"{n:064x}", now + n)
        kept = [await store.admin_session(f"{n:064x}") for n in range(MAX_ADMIN_SESSIONS + 1)]
    return sum(e is not None for e in kept), kept[0], kept[-1]


def test_admin_sessions_are_kept_until_they_expire_or_end_and_migrate_down_and_up(database_url: str) -> None:  # noqa: F811
    a, expired, ended, again = asyncio.run(_sessions(database_url))
    assert a is not None and a > time.time() and again == a
    assert expired is None and ended is None
    migrate(database_url, "0019")
    assert "admin_sessions" not in asyncio.run(_tables(database_url))
    migrate(database_url, "head")
    assert "admin_sessions" in asyncio.run(_tables(database_url))
    kept, first, last = asyncio.run(_capped(database_url))
    assert kept == MAX_ADMIN_SESSIONS and first is None and last is not None  # the soonest went
