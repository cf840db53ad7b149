"""Another room's hard-bot decision wait while one client floods the bot workers with hard bots.

A flood of ``--rooms`` rooms of hard bots, opened from ``--clients`` addresses (the rooms' shares,
`app.bots.fair`), each keep one hard decision asked of a real `WorkerBots` pool of ``--workers``
processes at all times (a room asks for its next bot's move as soon as the last one is made, and
a queued search takes far longer than a bot's pause); meanwhile another room, its own share, asks
for one hard decision after another. Printed: how long that room waited per decision (median,
p90, max), the flood's decisions per second, and the load average before and after.

Run it on the old code and the new (on the old, where ``decide`` takes no share, the shares are
left out: first come first served) on an otherwise idle machine:
``python benchmarks/bot_flood.py [--rooms 80] [--clients 4] [--workers 1] [--seconds 20]``.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.bots import WorkerBots
from engine.bots import make_bot
from engine.core import Phase
from engine.variants import make_rules
from engine.views import PlayerView, player_view


def views(count: int, seed: int) -> list[PlayerView]:
    """``count`` Domeng views with a choice, from seeded medium self-play."""
    rules, rng = make_rules("domeng", {}), random.Random(seed)
    found: list[PlayerView] = []
    while len(found) < count:
        state = rules.new_match()
        state.start_round(rules.deal(rng))
        while state.phase is Phase.PLAYING and len(found) < count:
            view = player_view(state, state.to_act)
            if len(view.legal) > 1:
                found.append(view)
            state.apply(make_bot("medium", rng).choose(view))
    return found


async def flood(args: argparse.Namespace) -> tuple[list[float], int]:
    """The other room's waits (seconds) and the flood's decision count over ``args.seconds``."""
    positions = views(64, args.seed)
    stop = asyncio.Event()
    flooded = 0
    async with WorkerBots(args.workers) as bots:
        shared = "share" in inspect.signature(bots.decide).parameters

        async def decide(view: PlayerView, seed: int, share: str) -> None:
            if shared:
                await bots.decide("hard", view, seed, share)  # type: ignore[call-arg,unused-ignore]
            else:
                await bots.decide("hard", view, seed)

        async def room(number: int) -> None:
            nonlocal flooded
            share = f"client-{number % args.clients}"
            for move in range(10**9):
                if stop.is_set():
                    return
                await decide(positions[(number + move) % len(positions)], move, share)
                flooded += 1

        async def other() -> list[float]:
            waits: list[float] = []
            for move in range(10**9):
                if stop.is_set():
                    return waits
                started = time.perf_counter()
                await decide(positions[move % len(positions)], move, "another-room")
                waits.append(time.perf_counter() - started)
            return waits

        rooms = [asyncio.create_task(room(number)) for number in range(args.rooms)]
        await asyncio.sleep(1.0)  # the queue fills up before the other room asks
        measured = asyncio.create_task(other())
        await asyncio.sleep(args.seconds)
        stop.set()
        waits = await measured
        await asyncio.gather(*rooms)
    return waits, flooded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=80)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    before = os.getloadavg()
    started = time.perf_counter()
    waits, flooded = asyncio.run(flood(args))
    took = time.perf_counter() - started
    ordered = sorted(waits)
    print(f"load average before {before[0]:.2f} {before[1]:.2f} {before[2]:.2f}")
    print(
        f"other room: {len(waits)} decisions, wait median {statistics.median(waits) * 1000:.0f} ms, "
        f"p90 {ordered[int(0.9 * (len(ordered) - 1))] * 1000:.0f} ms, max {ordered[-1] * 1000:.0f} ms"
    )
    print(f"flood: {args.rooms} rooms from {args.clients} clients, {flooded / took:.1f} decisions/s")
    after = os.getloadavg()
    print(f"load average after {after[0]:.2f} {after[1]:.2f} {after[2]:.2f}")


if __name__ == "__main__":
    main()
