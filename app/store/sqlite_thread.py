"""SQLite's writer connection (`app.store.writer`): one synchronous connection (the standard
library's sqlite3 driver) in a thread of its own, where every batch runs as one transaction in one
hand-over. An async driver would hand every statement to its thread and back."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sqlalchemy.engine import Connection

from app.store.batches import Op, run_ops
from app.store.db import SQLITE_BEGIN_OPTION, make_sync_engine

__all__ = ["SqliteThread"]


class SqliteThread:
    """The writer's one SQLite connection and the one thread it is used in. Transactions begin
    with ``BEGIN IMMEDIATE`` (the write lock is taken at BEGIN, not at the first write)."""

    def __init__(self, database_url: str, pragmas: Sequence[str]) -> None:
        """``database_url``: an ``sqlite+aiosqlite`` (or ``sqlite``) URL of a file; ``pragmas``
        run on every new connection (`app.store.db.make_sync_engine`)."""
        engine = make_sync_engine(database_url, sqlite_pragmas=pragmas)
        self._engine = engine.execution_options(**{SQLITE_BEGIN_OPTION: "BEGIN IMMEDIATE"})
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="store-writer")
        self._connection: Connection | None = None

    async def run(self, ops: Sequence[Op[Any]]) -> list[Any]:
        """Run ``ops`` in order in one transaction, in the thread; their results. Raises what a
        write raises (SQLAlchemy's errors: nothing of the batch is stored)."""
        return await asyncio.get_running_loop().run_in_executor(self._thread, self._transaction, ops)

    async def close(self) -> None:
        """Close the connection and the engine's pool in the thread that opened them, then end the
        thread."""
        await asyncio.get_running_loop().run_in_executor(self._thread, self._close)
        self._thread.shutdown(wait=False)

    def _transaction(self, ops: Sequence[Op[Any]]) -> list[Any]:
        """In the thread: the connection is opened on first use and kept (taking one from the pool
        and building a `Connection` for every transaction cost about a tenth of a move's CPU), and
        opened again if it was closed or invalidated."""
        connection = self._connection
        if connection is None or connection.closed or connection.invalidated:
            connection = self._connection = self._engine.connect()
        with connection.begin():
            return run_ops(connection, ops)

    def _close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()
        self._engine.engine.dispose()
