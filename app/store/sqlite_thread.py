"""SQLite's writer connection (`app.store.writer`): one synchronous connection (the standard
library's sqlite3 driver) in a thread of its own, where every batch runs as one transaction in one
hand-over. An async driver would hand every statement to its thread and back."""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Final

from sqlalchemy.engine import Connection
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

_Job = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", Callable[..., Any], tuple[Any, ...]]


class SqliteThread:
    """The writer's one SQLite connection and the one thread it is used in. Transactions begin
    with ``BEGIN IMMEDIATE`` (the write lock is taken at BEGIN, not at the first write).

    The thread is a plain one fed by a `queue.SimpleQueue` and answering through
    ``call_soon_threadsafe``: half the CPU of a hand-over through ``run_in_executor`` (issue 15:
    about 27 µs instead of 55 per transaction, both threads counted), which wraps a
    `concurrent.futures.Future` in an asyncio one for every call.

    A transaction whose lock another process holds waits for it up to `LOCK_WAIT_S`, in steps
    (`_LOCK_STEP`), and not at all once `stop_waiting` was called."""

    def __init__(self, database_url: str, pragmas: Sequence[str]) -> None:
        """``database_url``: an ``sqlite+aiosqlite`` (or ``sqlite``) URL of a file; ``pragmas``
        run on every new connection (`app.store.db.make_sync_engine`)."""
        engine = make_sync_engine(database_url, sqlite_pragmas=(*pragmas, _LOCK_STEP))
        self._engine = engine.execution_options(**{SQLITE_BEGIN_OPTION: "BEGIN IMMEDIATE"})
        self._stopping = threading.Event()
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._connection: Connection | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def run(self, ops: Sequence[Op[Any]]) -> asyncio.Future[list[Any]]:
        """A future of running ``ops`` in order in one transaction, in the thread: their results.
        It raises what a write raises (SQLAlchemy's errors: nothing of the batch is stored). A
        cancelled caller does not stop the transaction. (A future, not a coroutine: one Python
        frame less per batch on the event loop, issue 15.)"""
        return self._call(self._transaction, ops)

    def stop_waiting(self) -> None:
        """From now on a transaction that finds the database locked by another process fails at
        once (``database is locked``), and one waiting for it stops within a step. Safe from any
        thread, and from a signal handler."""
        self._stopping.set()

    async def close(self) -> None:
        """Close the connection and the engine's pool in the thread that opened them, then end the
        thread."""
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
        # the loop of the last call, while it runs: `asyncio.get_running_loop` makes a getpid
        # system call on Python 3.11, once per batch (issue 15)
        loop = self._loop
        if loop is None or not loop.is_running():
            loop = self._loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._jobs.put((loop, future, function, args))
        return future

    def _serve(self) -> None:
        """The thread: run each job and hand its result or error to its loop, until None."""
        while (job := self._jobs.get()) is not None:
            loop, future, function, args = job
            try:
                result = function(*args)
            except BaseException as error:  # as run_in_executor: every error reaches the caller
                _hand_over(loop, future, None, error)
            else:
                _hand_over(loop, future, result, None)

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


def _hand_over(
    loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], result: Any, error: BaseException | None
) -> None:
    """From the thread: settle ``future`` in ``loop`` (nothing when the loop is closed)."""
    with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
        loop.call_soon_threadsafe(_settle, future, result, error)


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():  # the caller was cancelled
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)
