"""Event-loop CPU a room spends per move, in-process (issue 15: CPU per delivered update).

Drives ``--rooms`` five-seat Domeng rooms (``camat_target`` 0: matches never end; no turn timer,
no bot delay, no round pause: as `benchmarks/load.py` runs the server) through the path a client's
message takes once the edge has parsed it: `app.rooms.room.Room.act` with an `engine.actions`
action made at the room's version, then the room's task (check, store, adopt, send). The store is
a real SQLite one (`app.store.Store`, its writer in its own thread) in a temporary directory; every
seat is connected through a null outbox that only counts what it is sent (no JSON parsed), so a
version reaches 5 outboxes, as a move reaches 5 sockets at 2,000 connections in the load test.
Forced passes and deals are the room's own (its timers, on the real event loop).

The driver picks each seat's move (``legal_actions()[0]``) outside the figures: that CPU is
measured apart and taken off, and the call counter is paused meanwhile.

Printed, each a median over ``--samples`` samples of ``--moves`` client moves (after ``--warmup``):

- loop CPU per version (µs): `time.thread_time` of the event loop's thread (the store's writer
  thread apart) over the sample, per stored version (client moves, forced passes and deals);
  per client move beside it; and per delivery (a version's 5 updates: the first / 5);
- Python calls per version: function calls on the loop thread (``sys.setprofile`` ``call``
  events, C calls apart) over one extra sample of ``--moves`` moves;
- the load average before and after.

``--compare TREE`` measures another checkout (e.g. ``git worktree add /tmp/old HEAD~3``) beside
this one in one run: each sample is a fresh subprocess of each tree's own copy of this script, old
and new alternating, and the medians' ratios are printed. ``--profile FILE`` writes a cProfile of
one sample and prints its top functions by tottime and by ncalls.

Usage: ``python benchmarks/room_moves.py [--rooms 4] [--moves 1500] [--samples 5] [--compare TREE]``.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import functools
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.metrics import Metrics
from app.rooms import host
from app.rooms.config import RoomConfig
from app.rooms.hub import Hub
from app.rooms.local import LocalBots, LoopClock
from app.rooms.room import Room
from app.store import Store, sqlite_url
from app.web.logs import configure_logging
from engine.actions import Pass
from engine.core import Phase

SEATS = 5
CONFIG = RoomConfig(disconnect_grace_s=600.0, bot_delay_s=0.0, round_pause_s=0.0, turn_timer_s=0.0)


class NullOutbox:
    """A connection that only counts its frames and wakes its table's driver."""

    def __init__(self, wake: asyncio.Event) -> None:
        self.seat: int | None = None
        self.watcher: str | None = None
        self.client: str | None = None
        self.name: str | None = None
        self.closed = False
        self.sent = 0
        self._wake = wake

    def send(self, text: str) -> None:
        self.sent += 1
        self._wake.set()

    def send_latest(self, kind: str, text: str) -> None:
        self.send(text)

    def close(self, reason: Any) -> None:
        self.closed = True


class Meter:
    """What the drivers share: client moves made, and the CPU and calls of choosing them."""

    def __init__(self) -> None:
        self.moves = 0
        self.choosing_s = 0.0
        self.counting = False
        self.calls = 0
        self.choosing = False

    def profile(self, frame: Any, event: str, arg: Any) -> None:
        if event == "call" and not self.choosing:
            self.calls += 1


async def table(hub: Hub) -> tuple[Room, list[NullOutbox], asyncio.Event]:
    """A started five-seat room with a person connected at each seat."""
    room, _ = await hub.create_room("domeng", {"camat_target": 0}, SEATS, 0.0, [None] * SEATS)
    wake = asyncio.Event()
    conns = []
    for seat in range(SEATS):
        token: str = await room.call(functools.partial(host.claim, seat=seat, name=f"P{seat}"))
        conn = NullOutbox(wake)
        await room.connect(conn, token, None)
        conns.append(conn)

    async def start(r: Room) -> None:
        await host.begin_match(r)

    await room.call(start)
    return room, conns, wake


async def drive(room: Room, conns: list[NullOutbox], wake: asyncio.Event, meter: Meter, quota: int) -> None:
    """Make each human choice of ``room`` (its first legal action) until ``meter`` counts ``quota``."""
    acted = -1
    while meter.moves < quota:
        state = room.state
        if state is not None and state.phase is Phase.PLAYING and room.version != acted:
            meter.choosing = True
            started = time.thread_time()
            legal = state.legal_actions()
            choice = None if len(legal) == 1 and isinstance(legal[0], Pass) else legal[0]
            meter.choosing_s += time.thread_time() - started
            meter.choosing = False
            if choice is not None:  # a lone pass is the room's own (forced)
                acted = room.version
                room.act(conns[state.to_act], acted, choice)
                meter.moves += 1
        wake.clear()
        await wake.wait()  # a hung room: `run`'s timeout


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    """One process's samples: loop CPU per version and per move, then calls per version."""
    with tempfile.TemporaryDirectory() as data:
        async with Store(sqlite_url(Path(data))) as store:
            hub = Hub(CONFIG, store, Metrics(), clock=LoopClock(), bots=LocalBots())
            tables = [await table(hub) for _ in range(args.rooms)]

            async def run(moves: int, meter: Meter) -> tuple[float, int, int]:
                versions = sum(t[0].version for t in tables)
                sent = sum(c.sent for t in tables for c in t[1])
                started = time.thread_time()
                await asyncio.wait_for(asyncio.gather(*(drive(*t, meter, moves) for t in tables)), 600.0)
                cpu = time.thread_time() - started - meter.choosing_s
                for t in tables:
                    await t[0].settled(bots=False)
                return (
                    cpu,
                    sum(t[0].version for t in tables) - versions,
                    sum(c.sent for t in tables for c in t[1]) - sent,
                )

            await run(args.warmup, Meter())
            samples = []
            for _ in range(args.samples):
                meter = Meter()
                cpu, versions, sent = await run(args.moves, meter)
                samples.append(
                    {
                        "us_per_version": cpu / versions * 1e6,
                        "us_per_move": cpu / meter.moves * 1e6,
                        "versions_per_move": versions / meter.moves,
                        "frames_per_version": sent / versions,
                    }
                )
            meter = Meter()
            sys.setprofile(meter.profile)
            try:
                _, versions, _ = await run(args.moves, meter)
            finally:
                sys.setprofile(None)
            calls = meter.calls / versions
            if args.profile:
                profiler = cProfile.Profile(time.thread_time)  # CPU: the machine is shared
                profiler.enable()
                try:
                    await run(args.moves, Meter())
                finally:
                    profiler.disable()
                profiler.dump_stats(args.profile)
            await hub.stop()
    import app  # noqa: PLC0415 (which tree was measured)

    return {"samples": samples, "calls_per_version": calls, "tree": str(Path(app.__file__).parents[1])}


def summary(result: dict[str, Any]) -> dict[str, float]:
    """Medians of one or more processes' samples."""
    return {
        key: statistics.median(s[key] for s in result["samples"])
        for key in ("us_per_version", "us_per_move", "versions_per_move", "frames_per_version")
    } | {"calls_per_version": result["calls_per_version"]}


def worker(tree: Path, args: argparse.Namespace) -> dict[str, Any]:
    """One process of ``tree``'s copy of this script, measuring one sample round."""
    command = [
        sys.executable,
        str(tree / "benchmarks" / "room_moves.py"),
        "--json",
        *("--rooms", str(args.rooms), "--moves", str(args.moves), "--warmup", str(args.warmup)),
        *("--samples", str(args.per_process)),
    ]
    done = subprocess.run(command, check=True, capture_output=True, text=True, cwd=tree)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def print_profile(path: str) -> None:
    """The top functions of a cProfile dump, by own time and by calls."""
    for key in ("tottime", "ncalls"):
        print(f"\n-- by {key} --")
        pstats.Stats(path).sort_stats(key).print_stats(25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rooms", type=int, default=4)
    parser.add_argument("--moves", type=int, default=1500, help="client moves per sample (all rooms)")
    parser.add_argument("--warmup", type=int, default=300)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--per-process", type=int, default=2, help="samples per subprocess (--compare)")
    parser.add_argument("--compare", type=Path, help="another checkout, measured alternately")
    parser.add_argument("--profile", help="write a cProfile of one more sample here, and print its top")
    parser.add_argument("--json", action="store_true", help="print one JSON line (for --compare)")
    args = parser.parse_args()
    configure_logging("warning")  # as `benchmarks/load.py` runs the server
    load = os.getloadavg()
    if args.json:
        print(json.dumps(asyncio.run(measure(args))))
        return
    if args.compare is None:
        result = asyncio.run(measure(args))
        med = summary(result)
        print(f"tree {result['tree']} · {args.rooms} rooms · {args.moves} moves × {args.samples} samples")
        print(
            f"loop CPU per version {med['us_per_version']:.1f} µs (per delivery /{SEATS}: "
            f"{med['us_per_version'] / SEATS:.1f} µs) · per client move {med['us_per_move']:.1f} µs"
        )
        print(f"samples µs/version: {[round(s['us_per_version'], 1) for s in result['samples']]}")
        print(
            f"versions per move {med['versions_per_move']:.3f} · frames per version "
            f"{med['frames_per_version']:.2f} · Python calls per version {med['calls_per_version']:.0f}"
        )
        print(f"load average {load[0]:.2f} → {os.getloadavg()[0]:.2f}")
        if args.profile:
            print_profile(args.profile)
        return
    trees = {"old": args.compare.resolve(), "new": Path(__file__).resolve().parents[1]}
    runs: dict[str, list[dict[str, Any]]] = {"old": [], "new": []}
    for _ in range(args.samples):
        for name, tree in trees.items():
            runs[name].append(worker(tree, args))
    meds = {}
    for name, results in runs.items():
        merged = {
            "samples": [s for r in results for s in r["samples"]],
            "calls_per_version": statistics.median(r["calls_per_version"] for r in results),
        }
        meds[name] = summary(merged)
        m = meds[name]
        print(
            f"{name}: {trees[name]}  loop CPU {m['us_per_version']:.1f} µs/version "
            f"({m['us_per_version'] / SEATS:.1f} µs/delivery), {m['us_per_move']:.1f} µs/client move, "
            f"{m['calls_per_version']:.0f} calls/version; samples "
            f"{[round(s['us_per_version'], 1) for s in merged['samples']]}"
        )
    for key in ("us_per_version", "us_per_move", "calls_per_version"):
        print(f"new/old {key}: {meds['new'][key] / meds['old'][key]:.3f}")
    print(f"load average {load[0]:.2f} → {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
