"""The SQLite writer runs a batch on the event loop when the write lock is free at once, and in its
thread when another connection holds the lock or a write may take long
(`app.store.sqlite_thread.SqliteThread.run`, issue 15)."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from sqlalchemy import text
from sqlalchemy.engine import Connection

from app.store.batches import Op
from app.store.db import SQLITE_PRAGMAS
from app.store.sqlite_thread import SqliteThread

_T = TypeVar("_T")


def _with_thread(path: Path, body: Callable[[SqliteThread], Awaitable[_T]]) -> _T:
    async def main() -> _T:
        writer = SqliteThread(f"sqlite:///{path}", SQLITE_PRAGMAS)
        try:
            return await body(writer)
        finally:
            await writer.close()

    return asyncio.run(main())


def _ops(*runs: Callable[[Connection], Any], long: bool = False) -> list[Op[Any]]:
    loop = asyncio.get_running_loop()
    return [Op(loop.create_future(), run=run, long=long) for run in runs]


def _thread_id(_connection: Connection) -> int:
    return threading.get_ident()


def _insert(value: int) -> Callable[[Connection], int]:
    def run(connection: Connection) -> int:
        connection.execute(text("INSERT INTO t (x) VALUES (:x)"), {"x": value})
        return threading.get_ident()

    return run


def _table(path: Path) -> None:
    """A database in write-ahead-log mode, as the store's always is: opening a connection then
    changes no journal mode, which would need the lock another connection of a test may hold (and
    under load made the thread's connection wait for it until it failed)."""
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE t (x INTEGER)")
    db.close()


def _stored(path: Path) -> list[int]:
    db = sqlite3.connect(path)
    try:
        return [x for (x,) in db.execute("SELECT x FROM t ORDER BY x")]
    finally:
        db.close()


def test_a_batch_on_a_free_database_runs_on_the_loop_and_is_done_at_once(tmp_path: Path) -> None:
    path = tmp_path / "w.sqlite3"
    _table(path)

    async def body(writer: SqliteThread) -> None:
        future = writer.run(_ops(_insert(1), _thread_id))
        assert future.done()  # no hand-over to wait for
        assert await future == [threading.get_ident()] * 2

    _with_thread(path, body)
    assert _stored(path) == [1]


def test_a_locked_database_sends_the_batch_to_the_thread_and_the_loop_goes_on(tmp_path: Path) -> None:
    """Another connection holds the write lock: the batch waits in the writer's thread, not on the
    loop, commits once the lock is let go, and the next batch runs on the loop again."""
    path = tmp_path / "w.sqlite3"
    _table(path)
    holder = sqlite3.connect(path, isolation_level=None)

    async def body(writer: SqliteThread) -> tuple[list[int], list[int]]:
        holder.execute("BEGIN IMMEDIATE")
        future = writer.run(_ops(_insert(1)))
        assert not future.done()
        await asyncio.sleep(0)  # the loop is not held while the thread waits for the lock
        holder.execute("COMMIT")
        waited = await future
        again = await writer.run(_ops(_insert(2)))
        return waited, again

    try:
        waited, again = _with_thread(path, body)
    finally:
        holder.close()
    assert waited != [threading.get_ident()]
    assert again == [threading.get_ident()]
    assert _stored(path) == [1, 2]


def test_a_long_write_runs_in_the_thread(tmp_path: Path) -> None:
    async def body(writer: SqliteThread) -> list[int]:
        return await writer.run(_ops(_thread_id, long=True))

    assert _with_thread(tmp_path / "w.sqlite3", body) != [threading.get_ident()]


def test_a_failing_write_on_the_loop_fails_its_batch_and_stores_none_of_it(tmp_path: Path) -> None:
    path = tmp_path / "w.sqlite3"
    _table(path)

    def fail(_connection: Connection) -> None:
        raise ValueError("bad write")

    async def body(writer: SqliteThread) -> None:
        future = writer.run(_ops(_insert(1), fail))
        with pytest.raises(ValueError, match="bad write"):
            await future
        assert await writer.run(_ops(_insert(2))) == [threading.get_ident()]

    _with_thread(path, body)
    assert _stored(path) == [2]


def test_a_batch_whose_caller_stopped_waiting_is_not_overtaken_by_the_next(tmp_path: Path) -> None:
    """A caller cancelled (at shutdown) leaves its batch queued in the thread: the next batch
    still goes to the thread, behind it, rather than commit first on the loop."""
    path = tmp_path / "w.sqlite3"
    _table(path)
    gate = threading.Event()

    async def body(writer: SqliteThread) -> None:
        busy = writer._call(gate.wait)  # the thread is busy: what follows is queued behind
        first = writer.run(_ops(_insert(1)))
        busy.cancel()
        first.cancel()  # both callers stop waiting; the thread still has both jobs
        await asyncio.sleep(0)  # what runs when a future is cancelled has run
        second = writer.run(_ops(_insert(2)))
        gate.set()
        await writer._call(lambda: None)  # the thread ran everything queued before
        await second

    _with_thread(path, body)
    db = sqlite3.connect(path)
    try:
        assert [x for (x,) in db.execute("SELECT x FROM t ORDER BY rowid")] == [1, 2]
    finally:
        db.close()
