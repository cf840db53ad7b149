"""The writer's loop (`app.store.writer`, "group commit"): take the first queued write, let more
join it, run them in one transaction, answer every caller; a failed batch is retried one write at a
time so a bad write fails only its own caller. Also SQLite's background checkpoints, which keep
the write-ahead log's syncs off that loop."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any

import structlog
from sqlalchemy.exc import DBAPIError, InterfaceError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from app.queues import ReaderQueue
from app.store.batches import Op, answer, answer_all, run_ops
from app.store.errors import StoreClosedError, locked

__all__ = [
    "Transaction",
    "WriteQueue",
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


class WriteQueue(ReaderQueue[Op[Any]]):
    """The writer's queue of operations (None: the end marker), read by the writer's loop alone
    (`app.queues.ReaderQueue`: issue 15, `benchmarks/room_moves.py`), which can also wait until it
    holds a number of them (`filled`), so the group commit's window ends as soon as its batch is
    full instead of always lasting its whole length."""

    def take(self, batch: list[Op[Any]], limit: int) -> bool:
        """Move the oldest operations into ``batch`` until it holds ``limit`` or none is left;
        whether the end marker was reached (taken out too; what follows it stays queued)."""
        items = self._items
        while len(batch) < limit and items:
            op = items.popleft()
            if op is None:
                return True
            batch.append(op)
        return False

    def drain(self) -> list[Op[Any]]:
        """The operations still queued (the end marker left out), taking them out."""
        items, self._items = self._items, deque()
        return [op for op in items if op is not None]

    async def filled(self, count: int, timeout_s: float) -> None:
        """Return once ``count`` items are queued (or the end marker is), or after ``timeout_s``
        seconds, whichever comes first."""
        if len(self._items) >= count or None in self._items:  # a few items: the window is for few
            return
        waiter = self._wait(count)
        # a timer that settles the wait, not `asyncio.timeout`: no Timeout object, and no
        # CancelledError raised and caught when the window runs out (issue 15: the group commit's
        # window is waited out once per batch under load)
        timer = waiter.get_loop().call_later(timeout_s, _wake, waiter)
        try:
            await waiter
        finally:
            timer.cancel()
            self._waiter = None


def _wake(waiter: asyncio.Future[None]) -> None:
    """End `WriteQueue.filled`'s wait (its window ran out), unless it has ended."""
    if not waiter.done():
        waiter.set_result(None)


async def write_loop(
    queue: WriteQueue,
    commit: Callable[[list[Op[Any]]], Awaitable[None]],
    *,
    batch_limit: int,
    batch_window_s: float,
    batch_target: int = 0,
) -> None:
    """Until ``queue`` yields its end marker (None): take a write; when the last batch held more
    than one (writes come faster than one transaction each: under load; a lone write on a quiet
    server never waits) and none is queued behind it, wait up to ``batch_window_s`` seconds for
    more, ending the wait as soon as ``batch_target`` writes in all are at hand (0: wait the whole
    window); then take up to ``batch_limit`` in all and ``commit`` them as one batch. When the
    last batch held at least half the target (writes come fast enough to fill the window), the
    writes a busy loop queued meanwhile wait for the target too: committed at once, batches at
    5,000 connections held about 8 writes, not the 16 of the target (issue 15,
    benchmarks/load.py); after a smaller batch (a few rooms playing) they are committed at once,
    as the window would add to their moves' time for little company. A transaction's cost is
    mostly fixed (issue 15: about 220 µs of CPU for one write, 30 µs more for each further one,
    on SQLite), so the window trades a few milliseconds of each move under load for far fewer
    transactions. The writes queued before the end marker are committed; when the loop is
    cancelled, every write it has not committed fails with `StoreClosedError`."""
    batch: list[Op[Any]] = []
    busy = False  # the last batch held more than one write
    full = False  # ...and at least half its target: writes come fast enough to fill the window
    target = min(batch_target, batch_limit)
    try:
        while True:
            first = await queue.get()
            if first is None:
                return
            batch = [first]  # held from here: failed in `finally` if cancelled in the window
            if batch_window_s and busy:
                # let more writes join this one
                if batch_target:
                    if queue.empty() or (full and queue.qsize() < target - 1):
                        await queue.filled(target - 1, batch_window_s)
                elif queue.empty():
                    await asyncio.sleep(batch_window_s)
            stop = queue.take(batch, batch_limit)
            busy = len(batch) > 1
            full = busy and 2 * len(batch) >= target
            await commit(batch)
            batch = []
            if stop:
                return
    finally:
        # cancelled (the loop is shutting down): nobody will run what is left
        closed = StoreClosedError("the store closed before this write was committed")
        for op in [*batch, *queue.drain()]:
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
    timeout, or a SQLite database another process kept locked (`locked`). Not a refusal of one
    write, so retrying each write on its own would only wait as long again for each."""
    return any(
        isinstance(e, (TimeoutError, OSError, InterfaceError))
        or (isinstance(e, DBAPIError) and e.connection_invalidated)
        or locked(e)
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
    answer_all(batch, results)
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
    engine: AsyncEngine,
    ops: Sequence[Op[Any]],
    on_stale: Callable[[], None],
    check: Callable[[], None] | None = None,
) -> list[Any]:
    """PostgreSQL: run ``ops`` in one transaction on a connection of ``engine``'s pool; their
    results. A pooled connection that turns out dead (the database restarted, or dropped it) fails
    the batch before its COMMIT is sent, so nothing of it was stored: ``on_stale`` is called and it
    runs once more on a new connection (SQLAlchemy invalidated the pool's old ones). A failed
    COMMIT, a timeout (the database did not answer) or a second dead connection is raised.
    ``check`` is called just before the COMMIT: what it raises rolls the batch back and is raised."""
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
            if check is not None:
                check()
            await connection.commit()
            return results
    raise AssertionError("unreachable: the second attempt returns or raises")
