"""The writer's loop (`app.store.writer`, "group commit"): take the first queued write, let more
join it, run them in one transaction, answer every caller; a failed batch is retried one write at a
time so a bad write fails only its own caller. Also SQLite's background checkpoints, which keep
the write-ahead log's syncs off that loop."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any

import structlog
from sqlalchemy.exc import DBAPIError, InterfaceError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from app.store.batches import Op, answer, drain, run_ops
from app.store.errors import StoreClosedError

__all__ = [
    "Transaction",
    "checkpoint_loop",
    "commit_batch",
    "pg_transaction",
    "timed_out",
    "unreachable",
    "write_loop",
]

_log = structlog.get_logger("domeng.store")

Transaction = Callable[[Sequence[Op[Any]]], Awaitable[list[Any]]]
"""Runs operations in order in one transaction and returns their results."""


async def write_loop(
    queue: asyncio.Queue[Op[Any] | None],
    commit: Callable[[list[Op[Any]]], Awaitable[None]],
    *,
    batch_limit: int,
    batch_window_s: float,
) -> None:
    """Until ``queue`` yields its end marker (None): take a write, wait ``batch_window_s`` seconds
    for more when none is queued behind it but the last batch held more than one (writes come
    faster than one transaction each: under load; a lone write on a quiet server never waits),
    take up to ``batch_limit`` in all and ``commit`` them as one batch. The writes queued before
    the end marker are committed; when the loop is cancelled, every write it has not committed
    fails with `StoreClosedError`."""
    batch: list[Op[Any]] = []
    busy = False  # the last batch held more than one write
    try:
        while True:
            first = await queue.get()
            if first is None:
                return
            batch = [first]  # held from here: failed in `finally` if cancelled in the window
            if batch_window_s and busy and queue.empty():
                await asyncio.sleep(batch_window_s)  # let more writes join this one
            stop = False
            while len(batch) < batch_limit and not queue.empty():
                op = queue.get_nowait()
                if op is None:
                    stop = True
                    break
                batch.append(op)
            busy = len(batch) > 1
            await commit(batch)
            batch = []
            if stop:
                return
    finally:
        # cancelled (the loop is shutting down): nobody will run what is left
        closed = StoreClosedError("the store closed before this write was committed")
        for op in [*batch, *drain(queue)]:
            if not op.future.done():
                op.future.set_exception(closed)


def _chain(error: BaseException) -> Iterator[BaseException]:
    """``error`` and the errors it was raised from (its cause, else its context), each once."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def unreachable(error: BaseException) -> bool:
    """Whether ``error`` (or one of the errors it was raised from) says the database could not be
    reached or did not answer in time: no connection, a dropped one, a statement or connection
    timeout. Not a refusal of one write, so retrying each write on its own would only wait as
    long again for each."""
    return any(
        isinstance(e, (TimeoutError, OSError, InterfaceError))
        or (isinstance(e, DBAPIError) and e.connection_invalidated)
        for e in _chain(error)
    )


def timed_out(error: BaseException) -> bool:
    """Whether ``error`` (or one of the errors it was raised from) is a timeout: the database did
    not answer in time (a statement's ``command_timeout``, a connection's ``timeout``)."""
    return any(isinstance(e, TimeoutError) for e in _chain(error))


async def commit_batch(batch: list[Op[Any]], transaction: Transaction) -> bool:
    """Run ``batch`` in one ``transaction`` and answer its callers; when that fails, run each
    operation in a transaction of its own and answer each with its own result or error, unless
    the database was `unreachable` (then every caller gets that error at once). Returns whether
    the batch was retried one by one (a failed batch of one is not)."""
    try:
        results = await transaction(batch)
    except Exception as error:
        if len(batch) == 1 or unreachable(error):
            for op in batch:
                answer(op, error=error)
            return False
        for op in batch:
            try:
                (result,) = await transaction([op])
            except Exception as single_error:
                answer(op, error=single_error)
            else:
                answer(op, result)
        return True
    for op, result in zip(batch, results, strict=True):
        answer(op, result)
    return False


async def checkpoint_loop(engine: AsyncEngine, interval_s: float, on_done: Callable[[], None]) -> None:
    """SQLite: copy the write-ahead log into the database file every ``interval_s`` seconds, on a
    connection of ``engine``'s, off the writer's path; ``on_done`` after each. PASSIVE takes no
    lock that a writer waits for; what it cannot copy (pages a reader still needs) the next round
    copies. A failure is logged and retried at the next interval (the log only grows meanwhile).
    Runs until cancelled."""
    while True:
        await asyncio.sleep(interval_s)
        try:
            async with engine.connect() as connection:
                await connection.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)")
                await connection.commit()
            on_done()
        except (SQLAlchemyError, OSError) as error:
            _log.warning("store_checkpoint_failed", error=str(error))


async def pg_transaction(
    engine: AsyncEngine, ops: Sequence[Op[Any]], on_stale: Callable[[], None]
) -> list[Any]:
    """PostgreSQL: run ``ops`` in one transaction on a connection of ``engine``'s pool; their
    results. A pooled connection that turns out dead (the database restarted, or dropped it) fails
    the batch before its COMMIT is sent, so nothing of it was stored: ``on_stale`` is called and it
    runs once more on a new connection (SQLAlchemy invalidated the pool's old ones). A failed
    COMMIT, a timeout (the database did not answer) or a second dead connection is raised."""
    for attempt in (1, 2):
        async with engine.connect() as connection:
            try:
                await connection.begin()
                results = await connection.run_sync(run_ops, ops)
            except DBAPIError as error:
                if attempt == 1 and error.connection_invalidated and not timed_out(error):
                    on_stale()
                    _log.warning("store_connection_dead", error=type(error.orig).__name__)
                    continue
                raise
            await connection.commit()
            return results
    raise AssertionError("unreachable: the second attempt returns or raises")
