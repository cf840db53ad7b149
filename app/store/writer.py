"""The store's writer: one task that commits every write ("group commit", `app.store.group_commit`).
Callers queue operations; the writer takes the first, waits ``batch_window_s`` for more (or
until ``batch_target`` are at hand) while writes come faster than it commits them one by one (the
last batch held more than one; `app.web.settings.Settings.group_commit_s` and
``group_commit_writes``: a few milliseconds of each move under load for far fewer transactions),
drains up to ``batch_limit`` queued ones, runs them all in one
transaction and commits, and only then answers each caller. A write is therefore durable when its
``await`` returns, and writes are applied in the order they were called. When a batch fails, the
writer retries its operations one by one, so a bad operation fails only its own caller. A write
whose caller is cancelled still happens. ("Durable" means it survives a crash of the process; on
SQLite, whose commits are synced at checkpoints (``synchronous=NORMAL``), a power cut may lose the
last ones.) On SQLite the writer never checkpoints the write-ahead log itself: a checkpoint syncs
the database file, and every write queued behind it would wait for the disk. A background task
checkpoints instead (``PRAGMA wal_checkpoint(PASSIVE)`` every ``checkpoint_interval_s`` seconds on
a connection of its own, which never blocks the writer).

Fencing (docs/cluster.md): a room hosted under a lease writes through a view of the store bound to
its lease's token (`Writer.fenced`), so each of its writes carries ``(match, token)``. In the
write's own transaction, before it runs, the writer compares the match's stored ``fence`` with
``token``: higher, the write is refused with `FencedOutError` and runs nothing, while the batch's
other writes go on (the check changed nothing, so no savepoint is needed); lower, it is raised to
``token``. The batch reads the fences of all its matches at once, locking their rows (``SELECT …
FOR UPDATE`` on PostgreSQL; SQLite has one writer) until the commit, so a new owner's claim
(`Writer.claim_room`) waits for the batch and then sees its writes. After a write that may change
fences (a claim, Play again) the next ones are checked one by one (``UPDATE … WHERE fence <=
token``). A write without a token (the store itself; no Redis: one process) is not checked.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Self, TypeVar

import structlog
from sqlalchemy import select
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import OperationalError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from app.store.batches import Op
from app.store.database import upgrade_database
from app.store.db import (
    DATABASE_TIMEOUT_S,
    SQLITE_PRAGMAS,
    is_sqlite,
    make_engine,
    sqlite_path,
)
from app.store.errors import DatabaseLockedError, FencedOutError, StoreClosedError, locked
from app.store.fencing import claim_fences
from app.store.group_commit import (
    WriteQueue,
    checkpoint_loop,
    commit_batch,
    pg_transaction,
    write_loop,
)
from app.store.sqlite_thread import SqliteThread
from app.store.stalled import past_stalled_owners

_T = TypeVar("_T")


__all__ = ["Writer", "now_utc"]

_log = structlog.get_logger("domeng.store")


def now_utc() -> datetime:
    return datetime.now(UTC)


class Writer:
    """The database of the match store on ``database_url`` (``sqlite+aiosqlite:///path`` or
    ``postgresql+asyncpg://...``). `start` it before use and `close` it after, or use
    ``async with Store(url) as store``. Writes are queued to one writer (see the module
    docstring); a write's ``await`` returns once it is committed.

    Counters for tests and metrics: ``transactions_committed`` (write transactions),
    ``writes_committed`` (operations in them) and ``batches_retried`` (failed batches retried one
    operation at a time), with ``stale_connections`` (PostgreSQL: batches run again on a new
    connection because their pooled one was found dead).

    A view from `fenced` is the same store (one ``__dict__``: engines, writer, counters) whose
    writes carry a fencing token; only ``fence`` and its ``on_fenced`` callback are its own (slots).
    """

    __slots__ = ("__dict__", "_fence", "_on_fenced")

    def __init__(
        self,
        database_url: str,
        *,
        batch_limit: int = 500,
        batch_window_s: float = 0.0,
        batch_target: int = 0,
        checkpoint_interval_s: float = 1.0,
        on_commit: Callable[[float, int], None] | None = None,
        migrate: bool = True,
        database_timeout_s: float = DATABASE_TIMEOUT_S,
        holding: Callable[[], bool] | None = None,
    ) -> None:
        if batch_limit < 1:
            raise ValueError(f"batch_limit must be at least 1, got {batch_limit}")
        if batch_window_s < 0:
            raise ValueError(f"batch_window_s must be >= 0, got {batch_window_s}")
        if batch_target < 0:
            raise ValueError(f"batch_target must be >= 0, got {batch_target}")
        if checkpoint_interval_s <= 0:
            raise ValueError(f"checkpoint_interval_s must be > 0, got {checkpoint_interval_s}")
        if database_timeout_s <= 0:
            raise ValueError(f"database_timeout_s must be > 0, got {database_timeout_s}")
        self.database_url = database_url
        self.batch_limit = batch_limit
        self.batch_window_s = batch_window_s
        """Seconds the writer waits after a batch's first write for more to join it, when the last
        batch held more than one (under load)."""
        self.batch_target = batch_target
        """Writes in a batch at which that wait ends early (0: it lasts the whole window)."""
        self.checkpoint_interval_s = checkpoint_interval_s
        self.checkpoints = 0
        """SQLite: background checkpoints run so far."""
        self.on_commit = on_commit
        """Called after each write transaction with its duration (seconds) and its writes."""
        self.database_timeout_s = database_timeout_s
        """PostgreSQL: seconds a statement, a new connection or a pooled one may take (`make_engine`)."""
        self.migrate = migrate
        """Whether `start` brings the schema up to date (Alembic ``upgrade head``); False when the
        database is migrated once elsewhere (``domeng migrate``) before several servers start."""
        self.holding = holding
        """PostgreSQL without Redis: whether this process holds its database alone now
        (`app.store.pghold.PostgresHold.held`); while it does not, no write transaction commits
        (each is rolled back and its writes fail as if the database were unreachable: another
        process may have taken the database). None: not checked."""
        self.transactions_committed = 0
        self.writes_committed = 0
        self.batches_retried = 0
        self.stale_connections = 0
        """PostgreSQL: batches run again because their pooled connection was found dead."""
        self._engine: AsyncEngine | None = None
        self._write_engine: AsyncEngine | None = None
        self._read_engine: AsyncEngine | None = None
        self._sqlite: SqliteThread | None = None
        """SQLite: the writer's connections, on the event loop and in a thread of its own."""
        self._queue = WriteQueue()
        self._writer: asyncio.Task[None] | None = None
        self._checkpointer: asyncio.Task[None] | None = None
        self._closing = False
        self._stopping = False
        self._locked_at_stop = 0
        """Writes failed because the SQLite database was locked after `stop_waiting`."""
        self._fence: int | None = None
        self._on_fenced: Callable[[], None] | None = None

    def fenced(self, token: int, on_fenced: Callable[[], None] | None = None) -> Self:
        """This store as a room held under a lease with fencing ``token`` writes to it
        (docs/cluster.md): an object of the same class sharing everything with this one, whose
        every write of a match is checked against ``token``. Such a write is refused with
        `FencedOutError`, storing nothing, when the match already holds a higher token (another
        process took the room); the first refusal calls ``on_fenced`` (the hub unloads the room).
        Reads are the store's."""
        view = object.__new__(type(self))
        view.__dict__ = self.__dict__
        view._fence = token
        view._on_fenced = on_fenced
        return view

    @property
    def fence(self) -> int | None:
        """The fencing token this store's writes carry: a `fenced` view's, None for the store itself."""
        return self._fence

    @property
    def dialect(self) -> str:
        """The database's kind: ``"sqlite"`` or ``"postgresql"``."""
        return make_url(self.database_url).get_backend_name()

    @property
    def is_sqlite(self) -> bool:
        """Whether the store is a SQLite database."""
        return is_sqlite(self.database_url)

    @property
    def engine(self) -> AsyncEngine:
        """The async engine; raises StoreClosedError before `start` and after `close`."""
        if self._engine is None:
            raise StoreClosedError("the store is not started")
        return self._engine

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Open the database: create a SQLite file's directory, migrate to the latest schema
        (Alembic ``upgrade head``, in a worker thread; unless ``migrate`` is False) and start the
        writer.

        Raises RuntimeError when already started, ValueError for an in-memory SQLite URL, and
        the migration's errors.
        """
        if self._engine is not None:
            raise RuntimeError("the store is already started")
        path = sqlite_path(self.database_url)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        if self.migrate:
            await asyncio.to_thread(upgrade_database, self.database_url, self.database_timeout_s)
        if self.is_sqlite:  # checkpoints are the checkpointer's, never a commit's (module docstring)
            pragmas = (*SQLITE_PRAGMAS, "PRAGMA wal_autocheckpoint=0")
            engine = self._read_engine = make_engine(self.database_url, sqlite_pragmas=pragmas)
            self._sqlite = SqliteThread(self.database_url, pragmas)
        else:
            engine = make_engine(self.database_url, timeout_s=self.database_timeout_s)
            # several SELECTs of one load see one snapshot
            self._read_engine = engine.execution_options(isolation_level="REPEATABLE READ")
            # The writer's own connections are not pinged when taken from the pool: the ping of
            # SQLAlchemy's asyncpg dialect is three round trips (BEGIN, ";", ROLLBACK) before a
            # transaction of five, 40% of a move's database CPU. A connection found dead instead
            # fails before anything is committed, and `pg_transaction` runs the batch again once on
            # a new one (SQLAlchemy's "optimistic" disconnect handling).
            self._write_engine = make_engine(
                self.database_url,
                timeout_s=self.database_timeout_s,
                pool_pre_ping=False,
                pool_size=1,
                max_overflow=1,
            )
        self._engine = engine
        self._closing = False
        self._queue = WriteQueue()
        loop = write_loop(
            self._queue,
            self._commit,
            batch_limit=self.batch_limit,
            batch_window_s=self.batch_window_s,
            batch_target=self.batch_target,
        )
        self._writer = asyncio.create_task(loop, name="store-writer")
        if self.is_sqlite:
            checkpoints = checkpoint_loop(engine, self.checkpoint_interval_s, self._checkpointed)
            self._checkpointer = asyncio.create_task(checkpoints, name="store-checkpointer")

    async def close(self) -> None:
        """Let the writer finish every queued write, then close the database's connections.

        Writes called after `close` has begun raise StoreClosedError. Safe to call twice.
        """
        self._closing = True
        checkpointer, self._checkpointer = self._checkpointer, None
        if checkpointer is not None:
            checkpointer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await checkpointer
        writer, self._writer = self._writer, None
        if writer is not None:
            self._queue.put_nowait(None)
            await asyncio.shield(writer)  # a cancelled close must not cancel queued writes
        engine, self._engine = self._engine, None
        write_engine, self._write_engine = self._write_engine, None
        self._read_engine = None
        if engine is not None:
            await engine.dispose()
        if write_engine is not None:
            await write_engine.dispose()
        sqlite, self._sqlite = self._sqlite, None
        if sqlite is not None:
            await sqlite.close()  # in its thread: SQLite connections belong to the thread that opened them
        if self._locked_at_stop:
            _log.warning(
                "store_locked_at_stop",
                failed=self._locked_at_stop,
                message="the SQLite database was locked by another process as the server stopped: "
                "writes still pending failed without waiting for it, and none of them was stored",
            )
            self._locked_at_stop = 0

    def stop_waiting(self) -> None:
        """The server is stopping (SIGTERM, before its connections and rooms are closed): from now
        on a write that finds the SQLite database locked by another process fails at once with
        `DatabaseLockedError`, storing nothing, instead of waiting for it (one waiting now stops
        within 50 ms), so that a lock nobody releases does not hold the shutdown; a write that gets
        the lock still commits. `close` logs how many failed so (``store_locked_at_stop``). Only
        sets flags: safe from a signal handler. PostgreSQL: nothing (its timeouts bound each wait)."""
        self._stopping = True
        if self._sqlite is not None:
            self._sqlite.stop_waiting()

    async def ping(self, timeout_s: float = 2.0) -> bool:
        """Readiness: whether the writer is running and the database answers ``SELECT 1`` within
        ``timeout_s`` seconds. Never raises."""
        writer, engine = self._writer, self._read_engine
        if writer is None or writer.done() or self._closing or engine is None:
            return False
        try:
            async with asyncio.timeout(timeout_s), engine.connect() as connection:
                await connection.execute(select(1))
        except (TimeoutError, SQLAlchemyError, OSError):
            return False
        return True

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # -- the writer ----------------------------------------------------------------------------

    def _checkpointed(self) -> None:
        self.checkpoints += 1

    async def _submit(
        self,
        run: Callable[[Connection], _T] | None,
        row: dict[str, Any] | None = None,
        match: int | None = None,
        rekeys: bool = False,
        long: bool = False,
    ) -> _T:
        """Queue ``run`` (or an action ``row``) for the writer and wait until it is committed;
        returns ``run``'s value. A write of ``match`` from a `fenced` view is refused with
        `FencedOutError` when the match holds a higher token than the view's (module docstring);
        any `FencedOutError` calls the view's ``on_fenced`` the first time. ``rekeys`` and ``long``:
        as `Op` says."""
        return await self._answer(self._queued(run, row, match, rekeys, long))

    def _queued(
        self,
        run: Callable[[Connection], _T] | None,
        row: dict[str, Any] | None = None,
        match: int | None = None,
        rekeys: bool = False,
        long: bool = False,
    ) -> asyncio.Future[_T]:
        """Queue the write now (`_submit`); the future of its result."""
        writer = self._writer
        if writer is None or writer.done() or self._closing:
            raise StoreClosedError("the store is not started or is closing")
        # the writer's loop is the running one; `asyncio.get_running_loop` makes a getpid system
        # call on Python 3.11, once per move (issue 15)
        future: asyncio.Future[_T] = writer.get_loop().create_future()
        checked = None if match is None or self._fence is None else (match, self._fence)
        self._queue.put_nowait(Op(future, run, row, checked, rekeys, long))
        return future

    async def _answer(self, future: Awaitable[_T]) -> _T:
        """``future``'s result; a `FencedOutError` calls ``on_fenced`` first (`_submit`)."""
        try:
            return await future
        except FencedOutError:
            on_fenced, self._on_fenced = self._on_fenced, None
            if on_fenced is not None:
                on_fenced()
            raise

    async def claim_room(self, code: str, token: int) -> None:
        """A new owner's first write (docs/cluster.md): raise the ``fence`` of every match of room
        ``code`` to ``token``, so that from its commit on, a write carrying an older token is
        refused. Call it after taking the room's lease and before reading the room: on PostgreSQL
        it waits for a write of the old owner in progress, and the read then sees it.

        A former owner stopped inside a write holds the lock until its session ends; on
        PostgreSQL, while the claim waits, that session is ended after
        `app.store.stalled.PATIENCE_S` (1 s).

        Raises `FencedOutError` (its ``stored``: the highest fence found) when a match of the room
        already holds a higher token; a room with no match passes.
        """

        def run(connection: Connection) -> None:
            claim_fences(connection, code, token)

        claim = self._queued(run, rekeys=True)  # queued now: writes keep the order of the calls
        if self._sqlite is None and self._engine is not None:
            # looked on a connection of the store's own pool, not the writer's
            await self._answer(past_stalled_owners(self._engine, claim))
        else:
            await self._answer(claim)

    async def _commit(self, batch: list[Op[Any]]) -> None:
        if await commit_batch(batch, self._transaction):
            self.batches_retried += 1

    async def _transaction(self, ops: Sequence[Op[Any]]) -> list[Any]:
        """Run ``ops`` in order in one transaction. SQLite: on the writer's own synchronous
        connection in its thread (`SqliteThread`). PostgreSQL: on an asyncpg connection."""
        started = time.perf_counter()
        if self._sqlite is not None:
            try:
                results = await self._sqlite.run(ops)
            except OperationalError as error:
                if not (self._stopping and locked(error)):
                    raise
                self._locked_at_stop += len(ops)
                raise DatabaseLockedError(
                    "the server is stopping and the SQLite database is locked by another process; "
                    "nothing of this write was stored",
                    at_stop=True,
                ) from error
        else:
            assert self._write_engine is not None
            results = await pg_transaction(self._write_engine, ops, self._stale, self._check_held)
        self.transactions_committed += 1
        self.writes_committed += len(ops)
        if self.on_commit is not None:
            self.on_commit(time.perf_counter() - started, len(ops))
        return results

    def _stale(self) -> None:
        self.stale_connections += 1

    def _check_held(self) -> None:
        """Raise ConnectionError (the database counted unreachable) unless `holding` says this
        process still holds its database."""
        if self.holding is not None and not self.holding():
            raise ConnectionError("this server's hold on its database is lost: nothing is committed")
