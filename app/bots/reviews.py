"""Round reviews in their own worker process: `ReviewWorkers`, on demand, cached, never in play's way.

A review (`engine.review.review_record`) costs every option of a seat's decisions on a few hundred
sampled worlds each: about a second of CPU. It runs in a process pool of its own (a ``spawn``
context, like the bots' `app.bots.workers.WorkerBots`), not in the bots' pool, so a queue of
reviews never holds up a bot's move; its worker runs at a lower CPU priority than the bots'
(``nice`` +10 against +5), so on a busy machine the tables come first. Reviews are computed once
per match, round and seat: an LRU cache (async-lru) keeps the last ones and joins concurrent
requests for the same review into one computation. At most ``max_waiting`` different reviews
wait or run at once, and at most ``max_per_asker`` of them for one asker (a client address): beyond
either `ReviewsBusyError` asks the caller to retry later. Without the second, one client with a few
rooms of its own (every seat of a four-seat Kozel table its own: four reviews a round, a round
every few seconds) kept all the places taken, and nobody else got a review.

The match's record is read by ``load_record`` (the store's export, injected: this package imports
only the engine); the review uses `engine.review`'s defaults (samples, seed 0 and thresholds), so
``domeng review`` prints the same figures for the same round.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import multiprocessing
import os
import signal
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from async_lru import alru_cache

from app.bots.workers import exit_with_parent, kill_pool
from engine.review import DEFAULT_SAMPLES, review_record

__all__ = ["REVIEW_NICENESS", "ReviewWorkers", "ReviewsBusyError", "review_in_process"]

_log = structlog.get_logger("domeng.reviews")

REVIEW_NICENESS = 10
"""How much lower a review worker's CPU priority is than the server's (the bots' is 5)."""


class ReviewsBusyError(Exception):
    """Too many reviews are waiting: ask again in a moment (HTTP 503 with Retry-After)."""


def review_in_process(doc: dict[str, Any], round_index: int, seat: int, samples: int) -> dict[str, Any]:
    """``seat``'s review of round ``round_index`` (both from 0) of the RECORD.md document ``doc``
    with ``samples`` worlds per decision and seed 0, as `engine.review.RoundReview.to_json` writes
    it. Raises `engine.errors.RecordError` (``unfinished_round``, ``invalid_round``,
    ``invalid_seat`` and every record error)."""
    return review_record(doc, round_index, seat, samples=samples).to_json()


def _init_worker(parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent shuts the pool down
    with contextlib.suppress(OSError):
        os.nice(REVIEW_NICENESS)
    exit_with_parent(parent)


class ReviewWorkers:
    """Reviews computed in ``workers`` processes (see the module docstring).

    ``load_record(match_id)`` returns a match's RECORD.md document; ``samples`` is the worlds per
    decision; ``timeout_s`` how long one review may take before its worker is replaced and the
    request fails (TimeoutError); ``cache_size`` how many reviews are kept. Call `close` at
    shutdown.
    """

    def __init__(
        self,
        load_record: Callable[[int], Awaitable[dict[str, Any]]],
        workers: int = 1,
        *,
        samples: int = DEFAULT_SAMPLES,
        timeout_s: float = 60.0,
        max_waiting: int = 8,
        max_per_asker: int = 2,
        cache_size: int = 512,
    ) -> None:
        self.load_record = load_record
        self.workers = workers
        self.samples = samples
        self.timeout_s = timeout_s
        self.max_waiting = max_waiting
        self.max_per_asker = max_per_asker
        self.computed = 0
        """How many reviews were computed (not served from the cache)."""
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._closed = False
        self._waiting: set[tuple[int, int, int]] = set()
        self._asked: dict[str, set[tuple[int, int, int]]] = {}
        """The reviews each asker (a client address) waits for, while it waits."""
        self._cached = alru_cache(maxsize=cache_size)(self._compute)

    async def review(
        self, match_id: int, round_index: int, seat: int, asker: str | None = None
    ) -> dict[str, Any]:
        """The review of ``seat`` in round ``round_index`` of match ``match_id`` (the caller has
        checked that the round has ended and the seat is the asker's), asked by ``asker`` (a client
        address, `app.addresses.counted_address`; None: not counted, the admin's). Raises
        `ReviewsBusyError` when ``max_waiting`` other reviews are in the works, or ``max_per_asker``
        other reviews of the same asker, TimeoutError after ``timeout_s``, and
        `engine.errors.RecordError` for a record that cannot be reviewed there."""
        key = (match_id, round_index, seat)
        if key not in self._waiting and len(self._waiting) >= self.max_waiting:
            raise ReviewsBusyError(f"{len(self._waiting)} reviews are in the works")
        mine = None if asker is None else self._asked.setdefault(asker, set())
        if mine is not None and key not in mine and len(mine) >= self.max_per_asker:
            raise ReviewsBusyError(f"{len(mine)} reviews of this asker are in the works")
        self._waiting.add(key)
        if mine is not None:
            mine.add(key)
        try:
            return await self._cached(match_id, round_index, seat)
        finally:
            self._waiting.discard(key)
            if mine is not None and asker is not None:
                mine.discard(key)
                if not mine:
                    self._asked.pop(asker, None)

    async def _compute(self, match_id: int, round_index: int, seat: int) -> dict[str, Any]:
        doc = await self.load_record(match_id)
        pool = self._current_pool()
        future = pool.submit(review_in_process, doc, round_index, seat, self.samples)
        try:
            async with asyncio.timeout(self.timeout_s):  # not wait_for: on 3.11 it can swallow a cancel
                result = await asyncio.wrap_future(future)
        except TimeoutError:
            _log.error(
                "review_timeout", match=match_id, round=round_index, seat=seat, timeout_s=self.timeout_s
            )
            self._replace(pool)
            raise
        except concurrent.futures.process.BrokenProcessPool:
            _log.warning("review_pool_broken", match=match_id)
            self._replace(pool)
            raise
        self.computed += 1
        return result

    async def close(self) -> None:
        """Shut the pool down (in a thread, not on the loop) and wait for its process. Idempotent."""
        self._closed = True
        await self._cached.cache_close(wait=False)
        pool, self._pool = self._pool, None
        if pool is not None:
            await asyncio.to_thread(pool.shutdown, wait=True, cancel_futures=True)

    def _current_pool(self) -> concurrent.futures.ProcessPoolExecutor:
        if self._closed:
            raise RuntimeError("the review workers are closed")
        if self._pool is None:
            self._pool = concurrent.futures.ProcessPoolExecutor(
                self.workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_init_worker,
                initargs=(os.getpid(),),
            )
        return self._pool

    def _replace(self, pool: concurrent.futures.ProcessPoolExecutor) -> None:
        """Drop ``pool`` and kill its processes; the next review starts a new one."""
        if self._pool is not pool:
            return
        self._pool = None
        kill_pool(pool)
