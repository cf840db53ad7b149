"""Bot decisions in real worker processes (app.bots.workers): legal moves in both variants, the same
move as in-process for the same seed, a killed or stuck worker replaced, nothing left after close."""

from __future__ import annotations

import asyncio
import os
import pickle
import random
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.bots import FALLBACK_LEVEL, WorkerBots, decide_in_process
from app.bots.fair import FairSlots
from app.bots.workers import MIN_HARD_BUDGET_MS, hard_budget_for
from app.rooms.pace import pause_s
from engine.bots import PLAYER_LEVELS
from engine.core import Phase, State
from engine.tiles import Tile
from engine.variants import make_rules
from engine.views import PlayerView, player_view
from tests.serverkit import alive, wait_gone

ROOT = Path(__file__).resolve().parents[1]

LEVEL = "medium"


def _rounds(variant: str, options: dict[str, object], seats: int | None, rounds: int) -> Iterator[State]:
    rules = make_rules(variant, options, seats) if seats else make_rules(variant, options)
    state = rules.new_match()
    rng = random.Random(7)
    for _ in range(rounds):
        if state.phase is Phase.OVER:
            return
        state.start_round(rules.deal(rng))
        yield state


async def _play_round(bots: WorkerBots, state: State, seed: int, level: str = LEVEL) -> int:
    """Play ``state``'s round to its end with every decision from the workers; the moves made."""
    moves = 0
    while state.phase is Phase.PLAYING:
        view = player_view(state, state.to_act)
        action = await bots.decide(level, view, seed + moves)
        assert action in view.legal
        state.apply(action)
        moves += 1
    return moves


def test_a_tile_crosses_processes_as_the_shared_instance() -> None:
    """A pickled view keeps its tiles shared (the engine compares tiles with ``is``)."""
    tile = Tile.parse("5-3")
    assert pickle.loads(pickle.dumps(tile)) is tile
    state = next(_rounds("domeng", {"camat_target": 1}, None, 1))
    view = player_view(state, state.to_act)
    again: PlayerView = pickle.loads(pickle.dumps(view))
    assert again == view
    assert all(a is b for a, b in zip(again.hand or (), view.hand or (), strict=True))


@pytest.mark.parametrize(
    ("variant", "options", "seats"),
    [("domeng", {"camat_target": 1}, None), ("kozel", {"pairs": True}, 4), ("kozel", {}, 2)],
)
def test_worker_decisions_are_legal_and_match_in_process(
    variant: str, options: dict[str, object], seats: int | None
) -> None:
    async def main() -> None:
        async with WorkerBots(1, hard_budget_ms=5) as bots:
            moves = 0
            for index, state in enumerate(_rounds(variant, options, seats, len(PLAYER_LEVELS))):
                moves += await _play_round(bots, state, 1000, PLAYER_LEVELS[index])
            assert moves > 10
            state = next(_rounds(variant, options, seats, 1))
            view = player_view(state, state.to_act)
            for level in ("easy", "medium"):  # hard searches until its clock runs out
                assert await bots.decide(level, view, 99) == decide_in_process(level, view, 99)
            assert (bots.replaced, bots.fallbacks) == (0, 0)

    asyncio.run(main())


def test_a_killed_worker_is_replaced_and_the_decision_retried() -> None:
    async def main() -> None:
        async with WorkerBots(2) as bots:
            before = await bots.worker_pids()
            assert len(before) == 2
            victim = min(before)
            os.kill(victim, signal.SIGKILL)
            # dead before the first decision: while results keep coming the pool's manager thread
            # reads them first and notices a dead worker's sentinel only when it is idle, so a
            # round decided on the other worker in the meantime would never meet the broken pool
            assert await asyncio.to_thread(wait_gone, [victim]) == []
            state = next(_rounds("domeng", {"camat_target": 1}, None, 1))
            await _play_round(bots, state, 5)  # the first decision meets the broken pool
            after = await bots.worker_pids()
            assert bots.replaced == 1
            assert bots.fallbacks == 0  # retried in the new pool, not decided in-process
            assert after.isdisjoint(before) and len(after) == 2
            assert not alive(victim)

    asyncio.run(main())


def test_a_stuck_worker_times_out_the_fallback_plays_and_the_pool_is_renewed() -> None:
    async def main() -> None:
        told: list[tuple[str, bool]] = []
        tell = lambda level, seconds, fallback: told.append((level, fallback))  # noqa: E731
        async with WorkerBots(1, timeout_s=1.0, on_decision=tell) as bots:
            (stuck,) = await bots.worker_pids()
            os.kill(stuck, signal.SIGSTOP)  # a worker that never answers
            state = next(_rounds("kozel", {}, 3, 1))
            view = player_view(state, state.to_act)
            action = await bots.decide("hard", view, 3)
            assert action == decide_in_process(FALLBACK_LEVEL, view, 3)
            assert (bots.replaced, bots.fallbacks) == (1, 1)
            (fresh,) = await bots.worker_pids()
            assert fresh != stuck
            assert not alive(stuck)  # killed, not left stopped
            assert await bots.decide("medium", view, 3) == action
            assert bots.fallbacks == 1
            assert told == [("hard", True), ("medium", False)]

    asyncio.run(main())


def test_close_leaves_no_worker_and_refuses_decisions() -> None:
    async def main() -> None:
        bots = WorkerBots(2)
        await bots.start()
        pids = await bots.worker_pids()
        assert pids and all(alive(pid) for pid in pids)
        await bots.close()
        assert not any(alive(pid) for pid in pids)
        await bots.close()  # idempotent
        state = next(_rounds("domeng", {"camat_target": 1}, None, 1))
        with pytest.raises(RuntimeError, match="closed"):
            await bots.decide(LEVEL, player_view(state, state.to_act), 1)

    asyncio.run(main())


def test_the_loop_keeps_running_while_a_worker_decides() -> None:
    """Decisions are awaited, not computed on the loop: a ticker keeps ticking between them."""

    async def main() -> None:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        async with WorkerBots(1) as bots:
            task = asyncio.create_task(ticker())
            state = next(_rounds("domeng", {"camat_target": 1}, None, 1))
            view = player_view(state, state.to_act)
            for seed in range(5):
                before = ticks
                await bots.decide(LEVEL, view, seed)
                assert ticks > before  # the loop ran other work while the worker thought
            task.cancel()

    asyncio.run(main())


def test_no_workers_is_an_error() -> None:
    with pytest.raises(ValueError, match="at least one worker"):
        WorkerBots(0)


def test_the_pause_varies_with_the_seed_and_is_shorter_when_forced() -> None:
    rng = random.Random(11)
    placing = [pause_s(rng, 0.7, forced=False) for _ in range(200)]
    forced = [pause_s(rng, 0.7, forced=True) for _ in range(200)]
    assert all(0.7 * 0.6 <= p <= 0.7 * 1.6 for p in placing)
    assert all(0.7 * 0.5 <= p <= 0.7 * 0.8 for p in forced)
    assert len(set(placing)) == 200  # varied, not one fixed wait
    assert sum(forced) < sum(placing)
    assert [pause_s(random.Random(3), 0.7, False) for _ in range(2)] == [
        pause_s(random.Random(3), 0.7, False)
    ] * 2
    assert pause_s(rng, 0, False) == 0.0


def _a_choice(state: State) -> PlayerView:
    """The first view in ``state``'s round with two legal actions or more (a search to make)."""
    while True:
        view = player_view(state, state.to_act)
        if len(view.legal) > 1:
            return view
        state.apply(view.legal[0])


def test_a_heuristic_level_never_waits_behind_a_search() -> None:
    """With every worker searching (say, another client's many hard-bot tables), an easy or medium
    decision (a room's easy bot, the bot covering an absent player) is made at once in-process
    while the search goes on, not after it: no room's cheap bots queue behind other rooms' hard
    ones."""

    async def main() -> None:
        told: list[tuple[str, bool]] = []
        tell = lambda level, seconds, fallback: told.append((level, fallback))  # noqa: E731
        async with WorkerBots(1, hard_budget_ms=2000, on_decision=tell) as bots:
            view = _a_choice(next(_rounds("kozel", {}, 3, 1)))
            search = asyncio.create_task(bots.decide("hard", view, 1))
            await asyncio.sleep(0)  # the search takes the one worker
            for level in ("medium", "easy"):
                assert await bots.decide(level, view, 2) == decide_in_process(level, view, 2)
            assert not search.done()
            assert await search in view.legal
            assert told == [("medium", False), ("easy", False), ("hard", False)]
            assert (bots.replaced, bots.fallbacks) == (0, 0)

    asyncio.run(main())


def test_another_rooms_search_is_served_before_a_flood_of_queued_searches() -> None:
    """Four clients' forty hard-bot rooms each have a search queued for the one worker; another
    room's hard bot asks last, yet its search is served after one of each client's (the workers
    go round-robin by share, `FairSlots`), not after all forty (first come first served)."""

    async def main() -> None:
        done: list[str] = []

        async def decide(share: str, seed: int) -> None:
            assert await bots.decide("hard", view, seed, share) in view.legal
            done.append(share)

        async with WorkerBots(1) as bots:
            view = _a_choice(next(_rounds("domeng", {"camat_target": 1}, None, 1)))
            flood = [f"client-{seed % 4}" for seed in range(41)]  # the first takes the worker
            tasks = [asyncio.create_task(decide(share, seed)) for seed, share in enumerate(flood)]
            tasks.append(asyncio.create_task(decide("another-room", 99)))
            await asyncio.gather(*tasks)
            assert sorted(done) == sorted([*flood, "another-room"])
            assert done.index("another-room") <= 1 + 4  # the search running, one of each client's
            assert (bots.replaced, bots.fallbacks) == (0, 0)

    asyncio.run(main())


def test_a_queued_search_gets_a_smaller_budget_never_under_the_floor() -> None:
    assert hard_budget_for(100.0, 1, 1) == 100.0  # nothing queued: the full budget
    assert hard_budget_for(100.0, 2, 2) == 100.0
    assert hard_budget_for(100.0, 2, 5) == 40.0  # the workers over the searches
    assert hard_budget_for(100.0, 1, 80) == MIN_HARD_BUDGET_MS
    assert hard_budget_for(10.0, 1, 80) == 10.0  # never more than asked for


def test_fair_slots_skip_a_cancelled_waiter() -> None:
    async def main() -> None:
        slots = FairSlots(1)
        await slots.acquire("a")
        gone = asyncio.create_task(slots.acquire("a"))
        kept = asyncio.create_task(slots.acquire("b"))
        await asyncio.sleep(0)
        assert slots.locked() and slots.waiting == 2 and slots.demand == 3
        gone.cancel()
        with pytest.raises(asyncio.CancelledError):
            await gone
        slots.release()
        await kept
        slots.release()
        assert not slots.locked() and slots.demand == 0

    asyncio.run(main())


def test_a_worker_whose_server_died_before_it_started_ends_too() -> None:
    """A worker's guard watches the server's pid, which the server gives it: a worker whose server
    was killed (SIGKILL) while it was still starting has the system's reaper for a parent by the
    time it looks, and took that for its server, waiting on the pool's queue for ever (two were
    found an hour later, beside a test that kills a server at once). Here the server is a process
    already ended: the worker ends; with its real parent it lives on until it ends by itself."""
    gone = subprocess.Popen([sys.executable, "-c", ""])
    gone.wait(timeout=30)
    worker = "import sys, time; from app.bots.workers import exit_with_parent; exit_with_parent({}, 0.02)"
    orphan = subprocess.Popen([sys.executable, "-c", worker.format(gone.pid) + "; time.sleep(120)"], cwd=ROOT)
    assert orphan.wait(timeout=60) == 0  # ended by its guard, not by its 120 s sleep
    lives = worker.format("__import__('os').getppid()") + "; time.sleep(0.3); sys.exit(3)"
    assert subprocess.run([sys.executable, "-c", lives], cwd=ROOT, timeout=60, check=False).returncode == 3
