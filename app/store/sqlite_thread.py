"""SQLite's writer connections (`app.store.writer`): synchronous ones (the standard library's
sqlite3 driver), where every batch runs as one transaction. A batch runs on the event loop itself
when the write lock is free at once (`SqliteThread.run`), and in a thread of its own, in one
hand-over, when another process holds the lock (the thread waits for it) or the batch may take
long. An async driver would hand every statement to its thread and back."""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Final

from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import OperationalError

from app.store.batches import Op, run_ops
from app.store.db import SQLITE_BEGIN_OPTION, make_sync_engine
from app.store.errors import locked

__all__ = ["LOCK_WAIT_S", "SqliteThread"]

LOCK_WAIT_S: Final = 5.0
"""Seconds a transaction waits for a write lock another process holds (as ``busy_timeout`` in
`app.store.db.SQLITE_PRAGMAS`) before it fails with ``database is locked``."""

_LOCK_STEP: Final = "PRAGMA busy_timeout=50"
"""The writer's connection waits for the lock in steps this long (ms), so that `stop_waiting`
ends a wait within one."""

_NO_WAIT: Final = "PRAGMA busy_timeout=0"
"""The event loop's connection never waits for the lock: a batch that finds it taken goes to the
thread, which does."""

_Job = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", Callable[..., Any], tuple[Any, ...]]


def _immediate(database_url: str, pragmas: Sequence[str]) -> Engine:
    """A synchronous engine on the file (`app.store.db.make_sync_engine`, ``pragmas`` on every new
    connection) whose transactions begin with ``BEGIN IMMEDIATE``."""
    engine = make_sync_engine(database_url, sqlite_pragmas=pragmas)
    return engine.execution_options(**{SQLITE_BEGIN_OPTION: "BEGIN IMMEDIATE"})


class SqliteThread:
    """The writer's SQLite connections: one on the event loop and one in a thread of its own, used
    one at a time. Transactions begin with ``BEGIN IMMEDIATE`` (the write lock is taken at BEGIN,
    not at the first write).

    A batch runs on the loop's connection when that gets the lock at once: no hand-over to the
    thread and back, and none of the switches between the two threads that each statement's step
    makes while the loop is busy (the sqlite3 driver lets go of the interpreter's lock around every
    step). In `benchmarks/load.py` at 2,000 connections that cut the server's CPU per delivered
    update by about a tenth (issue 15: 97.7 → 86.2 µs beside the fan-out's 49.2 and 49.8, one run
    each). Such a batch holds the loop for its length: well under a millisecond
    (``synchronous=NORMAL``: a commit writes the write-ahead log and syncs nothing;
    checkpoints run elsewhere, `app.store.group_commit.checkpoint_loop`). A batch goes to the
    thread instead when another process holds the lock (the thread waits for it; the loop never
    does), when it holds a write that may take long (`Op.long`), or when the loop's connection is
    not this thread's (a store used from another thread than the one it first wrote from).

    The thread is a plain one fed by a `queue.SimpleQueue` and answering through
    ``call_soon_threadsafe``: half the CPU of a hand-over through ``run_in_executor`` (issue 15:
    about 27 µs instead of 55 per transaction, both threads counted), which wraps a
    `concurrent.futures.Future` in an asyncio one for every call.

    A transaction whose lock another process holds waits for it up to `LOCK_WAIT_S`, in steps
    (`_LOCK_STEP`), and not at all once `stop_waiting` was called."""

    def __init__(self, database_url: str, pragmas: Sequence[str]) -> None:
        """``database_url``: an ``sqlite+aiosqlite`` (or ``sqlite``) URL of a file; ``pragmas``
        run on every new connection (`app.store.db.make_sync_engine`)."""
        self._engine = _immediate(database_url, (*pragmas, _LOCK_STEP))
        self._stopping = threading.Event()
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._connection: Connection | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._inline_engine = _immediate(database_url, (*pragmas, _NO_WAIT))
        self._inline: Connection | None = None
        self._inline_thread: int | None = None  # the thread that opened `_inline`
        self._in_thread = 0  # jobs handed to the thread that it has not finished (`_settle`)

    def run(self, ops: Sequence[Op[Any]]) -> asyncio.Future[list[Any]]:
        """A future of running ``ops`` in order in one transaction: their results. On the event
        loop, done already, when the lock is free at once and no op is `Op.long`; otherwise in the
        thread (class docstring). It raises what a write raises (SQLAlchemy's errors: nothing of
        the batch is stored). A cancelled caller does not stop the transaction. (A future, not a
        coroutine: one Python frame less per batch on the event loop, issue 15.)"""
        if not self._in_thread and self._inline_here() and not any(op.long for op in ops):
            future: asyncio.Future[list[Any]] = self._running_loop().create_future()
            try:
                results = self._run_inline(ops)
            except Exception as error:  # as the thread's: every error reaches the caller...
                if not locked(error):  # ...but a lock another process holds: the thread waits
                    future.set_exception(error)
                    return future
            else:
                future.set_result(results)
                return future
        return self._call(self._transaction, ops)

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        """The running event loop: the last call's, while it runs (`asyncio.get_running_loop`
        makes a getpid system call on Python 3.11, once per batch, issue 15)."""
        loop = self._loop
        if loop is None or not loop.is_running():
            loop = self._loop = asyncio.get_running_loop()
        return loop

    def _inline_here(self) -> bool:
        """Whether the loop's connection may be used in this thread: none is open, or this thread
        opened it (sqlite3 connections stay in their thread)."""
        return self._inline is None or self._inline_thread == threading.get_ident()

    def _run_inline(self, ops: Sequence[Op[Any]]) -> list[Any]:
        """Run ``ops`` in one transaction on the loop's connection (opened on first use and kept,
        opened again if closed or invalidated). OperationalError ``database is locked`` at once
        when another process holds the lock (rolled back: nothing stored)."""
        connection = self._inline
        if connection is None or connection.closed or connection.invalidated:
            connection = self._inline = self._inline_engine.connect()
            self._inline_thread = threading.get_ident()
        with connection.begin():
            return run_ops(connection, ops)

    def stop_waiting(self) -> None:
        """From now on a transaction that finds the database locked by another process fails at
        once (``database is locked``), and one waiting for it stops within a step. Safe from any
        thread, and from a signal handler."""
        self._stopping.set()

    async def close(self) -> None:
        """Close the connections and the engines' pools, each in the thread that opened them, then
        end the thread."""
        inline, self._inline = self._inline, None
        if inline is not None and self._inline_thread == threading.get_ident():
            inline.close()
        self._inline_engine.engine.dispose()
        try:
            await self._call(self._close)
        finally:
            self._jobs.put(None)
            self._thread = None

    def _call(self, function: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        """A future of ``function(*args)`` run in the thread (started on first use)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="store-writer", daemon=True)
            self._thread.start()
        loop = self._running_loop()
        future = loop.create_future()
        self._in_thread += 1
        self._jobs.put((loop, future, function, args))
        return future

    def _serve(self) -> None:
        """The thread: run each job and hand its result or error to its loop, until None."""
        while (job := self._jobs.get()) is not None:
            loop, future, function, args = job
            try:
                result = function(*args)
            except BaseException as error:  # as run_in_executor: every error reaches the caller
                self._hand_over(loop, future, None, error)
            else:
                self._hand_over(loop, future, result, None)

    def _hand_over(
        self,
        loop: asyncio.AbstractEventLoop,
        future: asyncio.Future[Any],
        result: Any,
        error: BaseException | None,
    ) -> None:
        """From the thread: settle ``future`` in ``loop`` (nothing when the loop is closed)."""
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
            loop.call_soon_threadsafe(self._settle, future, result, error)

    def _settle(self, future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
        """In the loop: the thread finished a job. Counted here, not when the caller stops
        waiting: a caller cancelled (at shutdown) leaves its batch in the thread, and a batch on
        the loop must not overtake it."""
        self._in_thread -= 1
        if future.done():  # the caller was cancelled
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    def _transaction(self, ops: Sequence[Op[Any]]) -> list[Any]:
        """In the thread: the connection is opened on first use and kept (taking one from the pool
        and building a `Connection` for every transaction cost about a tenth of a move's CPU), and
        opened again if it was closed or invalidated."""
        deadline = time.monotonic() + LOCK_WAIT_S
        while True:
            connection = self._connection
            if connection is None or connection.closed or connection.invalidated:
                connection = self._connection = self._engine.connect()
            try:
                with connection.begin():
                    return run_ops(connection, ops)
            except OperationalError as error:  # rolled back: nothing of ``ops`` is stored
                if not locked(error) or self._stopping.is_set() or time.monotonic() >= deadline:
                    raise

    def _close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()
        self._engine.engine.dispose()
