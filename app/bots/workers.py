"""Bot decisions in worker processes: `WorkerBots`, the room's bot port over a process pool.

A bot's thinking is CPU work (the hard level searches for about a tenth of a second, longer with a
bigger budget); on the event loop it would stall every room and socket of the process, and threads
do not help under the GIL. `WorkerBots.decide` sends the seat's `PlayerView` to a worker of a
``concurrent.futures.ProcessPoolExecutor`` (a ``spawn`` context: no copy of the server's sockets,
threads or database pool in the child) and awaits the `Action` without blocking the loop. The
room stays the only writer of its state: a decision is only an intent, applied by the room if its
version is unchanged.

Failures never cost a turn:

- a worker dies (killed, out of memory): the pool is broken (``BrokenProcessPool``); a new pool
  replaces it and the decision is tried once more there;
- the new pool breaks too, a decision takes longer than ``timeout_s`` (the pool's workers are then
  killed and replaced) or a bot raises: the decision is made in-process by the cheap
  `FALLBACK_LEVEL` (microseconds), and logged.

Only a search waits for a worker. While every worker is busy (many rooms' hard bots), a level
outside `SEARCHING_LEVELS` (easy, medium and the cover bot: microseconds a decision) decides
in-process at once, so one client's hard-bot tables never hold up another room's easy bots or the
bot covering an absent player by the seconds their searches queue.

The searches themselves are shared out so that no client can make other rooms' hard bots take
seconds a move (issue: eighty rooms of five hard bots from four addresses on one worker made
another room's hard bot wait 4.4 s a decision):

- fairly: a freed worker goes round-robin to the next *share* with a search waiting (the room's
  creator's address, else its code; `FairSlots`), not to the oldest decision, so a room waits for
  about one search of each other client with searches queued, never for all of them;
- with a budget that follows demand: the hard search is anytime, and while searches queue each
  gets `hard_budget_for` (the budget times the workers over the searches running and waiting),
  never under `MIN_HARD_BUDGET_MS`, so the pool's throughput grows with the queue.

`WorkerBots.close` shuts the pool down and waits for its processes, so none outlives the app.
Workers run at a lower CPU priority (``nice`` +5): on a small machine, sockets come first.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import multiprocessing
import os
import random
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool

import structlog

from app.bots.fair import FairSlots
from engine.actions import Action
from engine.bots import COVER_LEVEL, HardBot, make_bot
from engine.bots.hard import DEFAULT_BUDGET_MS
from engine.views import PlayerView

__all__ = [
    "FALLBACK_LEVEL",
    "MIN_HARD_BUDGET_MS",
    "PARENT_CHECK_S",
    "SEARCHING_LEVELS",
    "WORKER_NICENESS",
    "WorkerBots",
    "decide_in_process",
    "exit_with_parent",
    "hard_budget_for",
    "kill_pool",
    "pool_processes",
]

_log = structlog.get_logger("domeng.bots")

FALLBACK_LEVEL = COVER_LEVEL
"""The level that decides in-process when the workers cannot: the medium heuristic (well under a
millisecond a decision)."""

SEARCHING_LEVELS = frozenset({HardBot.name})
"""The levels whose decision is a search (for the hard budget); every other level decides in
microseconds, and never waits behind a search for a worker (`WorkerBots.decide`)."""

WORKER_NICENESS = 5
"""How much lower a worker's CPU priority is than the server's (``os.nice``)."""

MIN_HARD_BUDGET_MS = 20.0
"""The least a queued hard search gets (milliseconds): about 40 worlds at 0.3–0.5 ms each, and
the hard bot with 40 worlds played level with its 100 ms default against medium (docs/bots.md:
the search's own choice is worth a few hundredths of a stone a decision however many worlds it
gets)."""


def hard_budget_for(budget_ms: float, workers: int, demand: int) -> float:
    """The hard budget (milliseconds) of a search that starts while ``demand`` searches run or
    wait for ``workers`` workers: ``budget_ms`` scaled by ``workers / demand`` once demand exceeds
    the workers, never under `MIN_HARD_BUDGET_MS` (nor over ``budget_ms``).

    >>> hard_budget_for(100.0, 1, 1), hard_budget_for(100.0, 2, 4), hard_budget_for(100.0, 1, 80)
    (100.0, 50.0, 20.0)
    """
    scaled = budget_ms * workers / max(workers, demand)
    return min(budget_ms, max(MIN_HARD_BUDGET_MS, scaled))


def decide_in_process(level: str, view: PlayerView, seed: int, hard_budget_ms: float | None = None) -> Action:
    """One decision of a new bot of ``level`` seeded with ``seed``: for every level but ``hard``
    (which searches until its clock runs out), the same seed and view give the same action.
    ``hard_budget_ms`` is the hard level's budget in milliseconds (None: its default). Raises
    ValueError for an unknown level or a view with no legal action."""
    rng = random.Random(seed)
    if level == HardBot.name and hard_budget_ms is not None:
        return HardBot(rng, budget_ms=hard_budget_ms).choose(view)
    return make_bot(level, rng).choose(view)


PARENT_CHECK_S = 1.0
"""How often (seconds) a worker looks whether the server that started it is still alive."""


def exit_with_parent(parent: int, period_s: float = PARENT_CHECK_S) -> threading.Thread:
    """In a pool's worker: a daemon thread that ends this process within ``period_s`` seconds of
    the death of ``parent`` (the server's pid, given by the server: a worker whose server died
    while it was starting has the system's reaper as its parent already, and would take that for
    its server). A server killed with SIGKILL never shuts its pools down, and a worker blocked on
    the pool's queue would otherwise wait for work for ever (it holds both ends of that pipe, so it
    never reads an end of file). Returns the started thread."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(period_s)
        os._exit(0)  # no cleanup to run: the pool's queues died with the parent

    thread = threading.Thread(target=watch, name="exit-with-parent", daemon=True)
    thread.start()
    return thread


def _init_worker(parent: int) -> None:
    """A worker's start: yield the CPU to the server, leave Ctrl+C to it, and end with the server,
    process ``parent`` (`exit_with_parent`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent shuts the pool down
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICENESS)
    exit_with_parent(parent)


def _decide(level: str, view: PlayerView, seed: int, hard_budget_ms: float) -> Action:
    """In a worker: one decision (see `decide_in_process`)."""
    return decide_in_process(level, view, seed, hard_budget_ms)


def _pid() -> int:
    """In a worker: its process id (warms the pool up; tests find the workers by it)."""
    return os.getpid()


class WorkerBots:
    """A bot port whose decisions run in ``workers`` processes (see the module docstring).

    ``hard_budget_ms`` is the hard level's thinking budget per decision (None: the bot's default),
    less while searches queue (`hard_budget_for`);
    ``timeout_s`` how long a decision may take before the in-process fallback plays instead
    (default: 10 s plus the hard budget); ``on_decision(level, seconds, fallback)`` is told of
    every decision (the server's metrics). Use it as an async context manager, or call `start`
    and `close`.
    """

    def __init__(
        self,
        workers: int = 1,
        *,
        hard_budget_ms: float | None = None,
        timeout_s: float | None = None,
        on_decision: Callable[[str, float, bool], None] | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError(f"a bot pool needs at least one worker, got {workers}")
        self.workers = workers
        self.hard_budget_ms = hard_budget_ms
        self._budget_ms = DEFAULT_BUDGET_MS if hard_budget_ms is None else hard_budget_ms
        self.on_decision = on_decision
        self.timeout_s = timeout_s if timeout_s is not None else 10.0 + (hard_budget_ms or 0) / 1000
        self.replaced = 0
        """How many times a broken or stuck pool was replaced."""
        self.fallbacks = 0
        """How many decisions the in-process fallback made."""
        self._context = multiprocessing.get_context("spawn")
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._closed = False
        self._slots = FairSlots(workers)

    async def __aenter__(self) -> WorkerBots:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Start the workers now (each imports the engine once), rather than on the first decision."""
        await self.worker_pids()

    async def worker_pids(self) -> frozenset[int]:
        """The process ids of the live workers (starting them if needed)."""
        for _ in range(2):
            pool = self._current_pool()
            try:
                await asyncio.gather(
                    *(asyncio.wrap_future(pool.submit(_pid)) for _ in range(self.workers * 4))
                )
            except BrokenProcessPool:
                self._replace(pool)
                continue
            return frozenset(p.pid for p in pool_processes(pool) if p.pid is not None)
        raise BrokenProcessPool("the bot workers fail to start")

    async def decide(self, level: str, view: PlayerView, seed: int, share: str = "") -> Action:
        """The action a bot of ``level`` takes in ``view`` (its seat's view, its turn), computed in
        a worker (a level outside `SEARCHING_LEVELS` here, when every worker is busy); ``seed``
        seeds the bot's choices; ``share`` is who the decision counts for when searches queue (the
        room's creator's address, else its code: `FairSlots`). Never raises for a worker's
        failure: the fallback decides instead (see the module docstring). Raises RuntimeError once closed."""
        started = time.perf_counter()
        if level not in SEARCHING_LEVELS and self._slots.locked():
            self._current_pool()  # raises once closed
            action = decide_in_process(level, view, seed)  # every worker searches: no queueing
            self._told(level, started, fallback=False)
            return action
        for attempt in (1, 2):
            # At most one decision per worker in the pool at a time: the others wait here, so the
            # timeout measures a decision's own computing, never the queue before it (a queue of
            # many rooms' bots would otherwise time out and kill a healthy pool).
            await self._slots.acquire(share)
            try:
                pool = self._current_pool()
                budget_ms = hard_budget_for(self._budget_ms, self.workers, self._slots.demand)
                try:
                    future = asyncio.wrap_future(pool.submit(_decide, level, view, seed, budget_ms))
                    async with asyncio.timeout(self.timeout_s):  # not wait_for (3.11: a lost cancel)
                        action = await future
                except BrokenProcessPool:
                    _log.warning("bot_pool_broken", level=level, attempt=attempt)
                    self._replace(pool)
                    continue
                except TimeoutError:
                    _log.error("bot_decision_timeout", level=level, timeout_s=self.timeout_s)
                    self._replace(pool, kill=True)
                    break
                except Exception:
                    _log.exception("bot_decision_failed", level=level)
                    break
            finally:
                self._slots.release()
            self._told(level, started, fallback=False)
            return action
        action = self._fallback(level, view, seed, started)
        self._told(level, started, fallback=True)
        return action

    async def close(self) -> None:
        """Shut the pool down and wait (in a thread, not on the loop) until its processes are gone.
        Decisions still queued are cancelled. Idempotent."""
        self._closed = True
        pool, self._pool = self._pool, None
        if pool is not None:
            await asyncio.to_thread(pool.shutdown, wait=True, cancel_futures=True)

    def _current_pool(self) -> concurrent.futures.ProcessPoolExecutor:
        if self._closed:
            raise RuntimeError("the bot workers are closed")
        if self._pool is None:
            self._pool = concurrent.futures.ProcessPoolExecutor(
                self.workers,
                mp_context=self._context,
                initializer=_init_worker,
                initargs=(os.getpid(),),
            )
        return self._pool

    def _replace(self, pool: concurrent.futures.ProcessPoolExecutor, *, kill: bool = False) -> None:
        """Drop ``pool`` (once, however many decisions saw it fail); the next decision starts a new one."""
        if self._pool is not pool:
            return
        self._pool = None
        self.replaced += 1
        if kill:
            kill_pool(pool)
        else:
            pool.shutdown(wait=False, cancel_futures=True)

    def _told(self, level: str, started: float, *, fallback: bool) -> None:
        if self.on_decision is not None:
            self.on_decision(level, time.perf_counter() - started, fallback)

    def _fallback(self, level: str, view: PlayerView, seed: int, started: float) -> Action:
        self.fallbacks += 1
        _log.warning(
            "bot_fallback",
            level=level,
            fallback=FALLBACK_LEVEL,
            after_ms=round((time.perf_counter() - started) * 1000),
        )
        return decide_in_process(FALLBACK_LEVEL, view, seed)


def pool_processes(pool: concurrent.futures.ProcessPoolExecutor) -> list[multiprocessing.process.BaseProcess]:
    """The worker processes of ``pool`` (none before it started one)."""
    # the executor has no public list of its processes before Python 3.14 (kill_workers)
    processes: dict[int, multiprocessing.process.BaseProcess] | None = getattr(pool, "_processes", None)
    return list((processes or {}).values())


def kill_pool(pool: concurrent.futures.ProcessPoolExecutor) -> None:
    """Kill ``pool``'s processes (a stuck one would never finish) and shut it down without waiting;
    its pending work is cancelled."""
    for process in pool_processes(pool):
        with contextlib.suppress(OSError):
            process.kill()
    pool.shutdown(wait=False, cancel_futures=True)
