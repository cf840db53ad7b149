"""A server process's hold on its PostgreSQL database (issue: two servers without Redis on one
database each host the same rooms apart, and both write the same matches' actions).

A process without Redis is the only one serving its rooms: nothing but itself decides that a room
is its own. So it takes an *exclusive* PostgreSQL session-level advisory lock on the database and
schema it serves, for as long as it runs; a process with Redis (the rooms' leases decide who hosts
each: docs/cluster.md) takes the same lock *shared*. Any number of processes with Redis serve one
database together; one without Redis serves it alone, and neither kind starts beside the other.
The SQLite counterpart is `app.store.db.hold_sqlite` (a ``flock`` beside the file).

The lock is keyed on the schema the server's tables live in (``current_schema()``, the first schema
of the session's ``search_path``: ``public`` unless the role or database sets another); PostgreSQL
scopes advisory locks to a database already, so the key is one per database and schema: one
deployment. Two deployments in two databases, or two schemas of one database, hold apart (as the
tests do: each test that runs servers without Redis has a database of its own).

The lock lives on a connection of its own, opened in a thread of its own with its own event loop,
so it does not depend on the server's loop or pool; PostgreSQL lets go of it when that connection
ends, however the process ends (a ``kill -9`` closes its socket). A connection lost while the
server runs (PostgreSQL restarted, the network cut) is opened again and the lock taken again, its
old session ended first if PostgreSQL still keeps it (a reset that never reached PostgreSQL); if
another process took it meanwhile, two processes would host the same rooms apart, so this one must
stop serving: the hold logs ``database_hold_taken`` as an error and calls its ``on_taken`` callback
(``domeng serve`` ends the process at once, status 1: `app.cli`; a hold without one tries again
every second until that process lets go). A refusal that names only this process's own lost
session (still held by PostgreSQL until it sees the old connection gone) is waited out rather than
taken for another process. From the moment the connection is seen lost (asyncpg's termination
listener: at once when PostgreSQL ends the session) until the lock is held again, ``held`` is False,
and the store of a server without Redis commits nothing meanwhile (`app.store.writer.Writer`
``holding``): a write then is refused as if the database were unreachable, never stored beside
another process's.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, Final

import structlog
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from app.store.db import application_name, make_engine

__all__ = ["HOLD_TAG", "DatabaseServedError", "PostgresHold"]

_log = structlog.get_logger("domeng.store")

HOLD_TAG: Final = 0x446F6D65
"""The advisory lock key's high 32 bits ("Dome"); the low 32 are the schema's oid. (Migrations lock
``0x446F6D656E67`` for their transaction: another key.)"""

_WHERE: Final = text(
    "SELECT current_database(), current_schema(), COALESCE(n.oid::bigint, 0) "
    "FROM (SELECT 1) AS one LEFT JOIN pg_namespace AS n ON n.nspname = current_schema()"
)
_HOLDERS: Final = text(
    "SELECT l.mode, a.application_name FROM pg_locks AS l "
    "LEFT JOIN pg_stat_activity AS a ON a.pid = l.pid "
    "WHERE l.locktype = 'advisory' AND l.granted AND l.pid <> pg_backend_pid() "
    "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
    "AND l.classid::bigint = :high AND l.objid::bigint = :low AND l.objsubid = 1"
)
_END_GHOST: Final = text(
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
    "WHERE pid = :pid AND application_name = :name AND pid <> pg_backend_pid()"
)
_CHECK_S: Final = 1.0
"""How often a held lock's connection is looked at, and a lost one opened again (seconds)."""


class DatabaseServedError(Exception):
    """Other server processes serve this PostgreSQL database and schema in a way this one cannot
    join: ``alone`` is True when the others run without Redis (each one alone), False when they run
    with it and this one does not; ``holders`` names them as they told PostgreSQL
    (``application_name``: host and process id), when it says."""

    def __init__(self, database: str, schema: str, *, alone: bool, holders: list[str]) -> None:
        self.database = database
        self.schema = schema
        self.alone = alone
        self.holders = holders
        where = f"the PostgreSQL database {database!r} (schema {schema!r})"
        named = f" ({', '.join(holders)})" if holders else ""
        if alone:
            message = (
                f"another Domeng server{named} is serving {where} without Redis: two servers on one "
                "database would each host the same rooms apart and corrupt their matches. Stop that "
                "server first (its host gone, end its sessions with pg_terminate_backend: "
                "docs/deploy.md), or run several servers with Redis: set DOMENG_REDIS_URL (the same "
                "Redis and DOMENG_REDIS_PREFIX) on every one of them"
            )
        else:
            message = (
                f"Domeng servers with Redis{named} are serving {where}, and this one has no "
                "DOMENG_REDIS_URL: it would host their rooms apart from them. Set DOMENG_REDIS_URL "
                "(the same Redis and DOMENG_REDIS_PREFIX as theirs), or stop them first "
                "(docs/deploy.md)"
            )
        super().__init__(message)


class PostgresHold:
    """This process's hold on the PostgreSQL database of ``url`` (module docstring): exclusive
    unless ``shared`` (the server runs with Redis). `take` it before serving, `release` it after.
    ``timeout_s`` bounds opening the connection and each statement (seconds); a lock held by a
    process that just ended is waited for up to ``grace_s`` (its session may outlive it by a few
    milliseconds). ``on_taken`` is called, in the hold's own thread, with the refusal when the lock
    was lost and another process took it meanwhile (the module docstring); without it that is only
    logged."""

    def __init__(
        self,
        url: str,
        *,
        shared: bool,
        timeout_s: float = 10.0,
        grace_s: float = 3.0,
        on_taken: Callable[[DatabaseServedError], None] | None = None,
    ) -> None:
        self.url = url
        self.on_taken = on_taken
        self.shared = shared
        self.timeout_s = timeout_s
        self.grace_s = grace_s
        self.name = application_name()
        """The hold's ``application_name`` (this process's connections' name: ``domeng serve pid N
        on HOST``), which a refused process names."""
        self.held = False
        """Whether the lock is held now (False while its lost connection is opened again)."""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="database-hold", daemon=True)
        self._engine: AsyncEngine | None = None
        self._connection: AsyncConnection | None = None
        self._key: tuple[str, str, int] | None = None
        self._keeper: Future[None] | None = None
        self._wake = asyncio.Event()
        """Set (in the hold's loop) when the lock's connection ends: the keeper looks at once."""
        self._backend: int | None = None
        """The PostgreSQL backend pid of the session holding the lock (the last one that did)."""

    def take(self) -> None:
        """Take the hold (blocking). Raises `DatabaseServedError` when other processes hold it in a
        way this one cannot share; OSError, TimeoutError or SQLAlchemy's DBAPIError when the
        database cannot be reached (nothing is held then)."""
        self._thread.start()
        try:
            asyncio.run_coroutine_threadsafe(self._take(), self._loop).result()
        except BaseException:
            self.release()
            raise
        self._keeper = asyncio.run_coroutine_threadsafe(self._keep(), self._loop)

    def release(self) -> None:
        """Let go of the hold (close its connection) and stop its thread. Safe to call twice."""
        if not self._thread.is_alive():
            return
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(5.0)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5.0)
        if not self._thread.is_alive():
            self._loop.close()

    async def _take(self, ghost: int | None = None, grace_s: float | None = None) -> None:
        """Open the hold's connection and take the lock on it, waiting up to ``grace_s`` (else
        `grace_s`) for a holder that has just gone. ``ghost``: the PostgreSQL backend pid of this
        process's own lost hold, ended if it still holds the lock (its session outlived the
        connection's end on this side: a reset by the network that never reached PostgreSQL, which
        keeps it, and the lock, until its TCP keepalive gives up, by default after hours)."""
        if self._engine is None:
            self._engine = make_engine(
                self.url,
                timeout_s=self.timeout_s,
                pool_size=1,
                max_overflow=0,
                isolation_level="AUTOCOMMIT",  # never idle in a transaction (its timeout ends the session)
                connect_args={"server_settings": {"application_name": self.name}},  # as it names itself
            )
        connection = await self._engine.connect()
        try:
            database, schema, oid = (await connection.execute(_WHERE)).one()
            self._key = (str(database), str(schema), int(oid))
            key = (HOLD_TAG << 32) | int(oid)
            lock = "pg_try_advisory_lock_shared" if self.shared else "pg_try_advisory_lock"
            take = text(f"SELECT {lock}(:key)")
            deadline = time.monotonic() + (self.grace_s if grace_s is None else grace_s)
            while not (await connection.execute(take, {"key": key})).scalar():
                if ghost is not None:  # this process's own lost session, not another server's
                    with contextlib.suppress(DBAPIError):  # not allowed: refused as by another
                        await connection.execute(_END_GHOST, {"pid": ghost, "name": self.name})
                    ghost = None
                if time.monotonic() >= deadline:
                    raise await self._refusal(connection, int(oid))
                await asyncio.sleep(0.1)
            self._backend = int((await connection.execute(text("SELECT pg_backend_pid()"))).scalar_one())
        except BaseException:
            await _drop(connection)
            raise
        with contextlib.suppress(Exception):
            _driver(await connection.get_raw_connection()).add_termination_listener(self._ended)
        self._connection = connection
        self.held = True

    def _ended(self, _connection: object) -> None:
        """asyncpg: the lock's connection is closed (PostgreSQL ended the session, the socket
        broke, or it was dropped here): the lock is not held from now on."""
        self.held = False
        self._wake.set()

    async def _refusal(self, connection: AsyncConnection, oid: int) -> DatabaseServedError:
        assert self._key is not None
        rows = (await connection.execute(_HOLDERS, {"high": HOLD_TAG, "low": oid})).all()
        # a shared taker is refused by an exclusive holder only; an exclusive one by any holder
        alone = self.shared or not rows or any(mode == "ExclusiveLock" for mode, _ in rows)
        names = sorted({str(name) for mode, name in rows if name and (mode == "ExclusiveLock") == alone})
        return DatabaseServedError(self._key[0], self._key[1], alone=alone, holders=names)

    async def _lost(self) -> bool:
        connection = self._connection
        if connection is None:
            return True
        try:
            return bool(_driver(await connection.get_raw_connection()).is_closed())
        except Exception:
            return True

    async def _keep(self) -> None:
        """Watch the held lock's connection; when it is lost, open it again and take the lock again
        (module docstring). This process's own lost session, should PostgreSQL still keep it, is
        ended first; a lock another process took meanwhile is logged once and handed to
        ``on_taken`` (``domeng serve`` ends the process); a hold without one tries again every
        `_CHECK_S` until that process has let go of it."""
        taken = False  # another process holds the lock in a way this one cannot share: said once
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(_CHECK_S):
                    await self._wake.wait()
            self._wake.clear()
            if not await self._lost():
                continue
            self.held = False
            if self._connection is not None:  # the first look at this loss
                _log.warning(
                    "database_hold_lost",
                    message="the database connection holding this "
                    "server's lock on it was lost; taking it again",
                )
                connection, self._connection = self._connection, None
                if connection is not None:
                    await _drop(connection)
            try:
                await self._take(ghost=self._backend, grace_s=0.0 if taken else None)
            except DatabaseServedError as error:
                if error.holders and set(error.holders) == {self.name}:
                    # only our own lost session, which PostgreSQL has not ended yet: wait it out
                    _log.debug("database_hold_retry", error="own_session")
                    continue
                if not taken:
                    taken = True
                    _log.error("database_hold_taken", message=str(error))
                if self.on_taken is not None:
                    self.on_taken(error)
                    return
                continue
            except Exception as error:  # still unreachable: try again in a moment
                _log.debug("database_hold_retry", error=type(error).__name__)
                continue
            taken = False
            _log.info("database_hold_taken_again")

    async def _close(self) -> None:
        keeper, self._keeper = self._keeper, None
        if keeper is not None:
            keeper.cancel()
        connection, self._connection = self._connection, None
        self.held = False
        if connection is not None:
            await _drop(connection)
        engine, self._engine = self._engine, None
        if engine is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(1.0):
                    await engine.dispose()


def _driver(raw: Any) -> Any:
    """The asyncpg connection under SQLAlchemy's pooled connection ``raw``."""
    return raw.driver_connection


async def _drop(connection: AsyncConnection) -> None:
    """Close ``connection`` at once: its socket first (``terminate``: nothing is sent, nothing
    waited for, even with the database out of reach; PostgreSQL lets go of the lock when it sees the
    socket closed), then SQLAlchemy's side of it."""
    with contextlib.suppress(Exception):
        _driver(await connection.get_raw_connection()).terminate()
    with contextlib.suppress(Exception):
        async with asyncio.timeout(1.0):
            await connection.close()
