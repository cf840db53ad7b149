"""What SQLAlchemy costs the store writer's batch (issue 15: where ours' CPU per delivery goes).

The group commit (`app.store.group_commit`) writes the moves of several rooms in one transaction:
`app.store.batches.insert_actions` (one executemany of the action rows, then one of the matches'
versions and turn clocks) between ``BEGIN IMMEDIATE`` and ``COMMIT``, on the writer's synchronous
connection (`app.store.sqlite_thread`). This runs that transaction of ``--batch`` rows (one move in
each of ``--batch`` matches) three ways, on the same SQLite file (WAL, ``synchronous=NORMAL``, as
`app.store.db.SQLITE_PRAGMAS`): as the server runs it (the statements' SQL compiled once and run
with positional parameters on the sqlite3 connection under SQLAlchemy's, `app.store.driver_sql`),
its statements as they ran before (SQLAlchemy Core's `Connection.execute`,
`app.store.batches.insert_actions_core`; both begin as the server does), and the same SQL
through the standard library's sqlite3 module with hand-made parameters (the JSON action dumped,
the time as SQLAlchemy stores it on SQLite). Each side runs ``--transactions``
transactions per sample, alternating, ``--samples`` times; printed: CPU (this thread's,
`time.thread_time`) per transaction and per write, medians and every sample, their ratios, and the
load average. Then the hand-over of a batch from the event loop to the writer's thread and back,
as served and as before (``--handovers`` per sample; process CPU, both threads).

Read it beside `benchmarks/load.py`'s figures: at 2,000 connections a stored version reaches 5
sockets, so a microsecond saved per write is a fifth of one per delivery.

Usage: ``python benchmarks/store_dbapi.py [--batch 7] [--transactions 300] [--samples 7]
[--handovers 2000]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.store import SeatSpec, Store
from app.store.batches import insert_actions, insert_actions_core
from app.store.db import SQLITE_BEGIN_OPTION, SQLITE_PRAGMAS, make_sync_engine
from app.store.sqlite_thread import SqliteThread

INSERT = (
    "INSERT INTO actions (match_id, round_index, seq, version, seat, action, actor, created_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
SET_TURN = (
    "UPDATE match_turns SET version = ?, turn_at = ((julianday('now') - 2440587.5) * 86400.0), "
    "handed_fence = NULL, handed_at = NULL WHERE match_id = ?"
)


async def playing_matches(url: str, count: int) -> list[int]:
    """``count`` new Domeng matches of five bots, each with its first round stored: their ids."""
    ids = []
    async with Store(url) as store:
        for i in range(count):
            seats = [SeatSpec(kind="bot", name="bot", bot_level="easy", seat=s) for s in range(5)]
            match = await store.create_match(f"bench{i:018d}", "domeng", {}, 5, 0.0, "h" * 64, seats)
            deal = {"hands": [[] for _ in range(5)], "rest": []}
            await store.start_round(match, 0, "s" * 64, "c" * 64, deal, 1)
            ids.append(match)
    return ids


class Batches:
    """The next batch's rows: one move in each match, ``seq`` counting up (shared by both sides,
    so neither writes a row the other did)."""

    def __init__(self, matches: list[int]) -> None:
        self.matches = matches
        self.seq = 0

    def rows(self) -> list[dict[str, Any]]:
        """One action row per match, as `app.store.Store.append_action` builds it."""
        seq, self.seq = self.seq, self.seq + 1
        now = datetime.now(UTC)
        return [
            {
                "match_id": match,
                "round_index": 0,
                "seq": seq,
                "version": seq + 2,
                "seat": seq % 5,
                "action": {"seat": seq % 5, "play": "3-6", "end": "R"},
                "actor": "human",
                "created_at": now,
            }
            for match in self.matches
        ]


def cpu_us(transaction: Callable[[], None], count: int) -> float:
    """This thread's CPU per call of ``transaction`` over ``count`` calls, in µs."""
    start = time.thread_time()
    for _ in range(count):
        transaction()
    return (time.thread_time() - start) / count * 1e6


def _nothing() -> None:
    return None


async def handover_cpu_us(path: Path, count: int, samples: int) -> dict[str, list[float]]:
    """The process's CPU (`time.process_time`: the loop's thread and the writer's) per hand-over
    of a call that does nothing to the writer's thread and back, ``count`` per sample, ``samples``
    times, alternating: ``run_in_executor`` on a one-thread `ThreadPoolExecutor` (before) and
    `SqliteThread`'s own queue (as served)."""
    loop = asyncio.get_running_loop()
    executor = ThreadPoolExecutor(max_workers=1)
    thread = SqliteThread(f"sqlite:///{path}", SQLITE_PRAGMAS)

    async def executor_side() -> None:
        await loop.run_in_executor(executor, _nothing)

    async def served_side() -> None:
        await thread._call(_nothing)

    sides = {"SqliteThread queue (served)": served_side, "run_in_executor (before)": executor_side}
    found: dict[str, list[float]] = {name: [] for name in sides}
    try:
        for _ in range(samples):
            for name, side in sides.items():
                start = time.process_time()
                for _ in range(count):
                    await side()
                found[name].append((time.process_time() - start) / count * 1e6)
    finally:
        executor.shutdown()
        await thread.close()
    return found


def main() -> None:
    """``python benchmarks/store_dbapi.py [--batch 7] [--transactions 300] [--samples 7]
    [--handovers 2000]``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=7, help="writes per transaction (load.py: about 7)")
    parser.add_argument("--transactions", type=int, default=300, help="transactions per sample")
    parser.add_argument("--samples", type=int, default=7)
    parser.add_argument("--handovers", type=int, default=2000, help="hand-overs per sample (0: none)")
    args = parser.parse_args()
    path = Path(tempfile.mkdtemp(prefix="store-dbapi-")) / "bench.db"
    url = f"sqlite+aiosqlite:///{path}"
    batches = Batches(asyncio.run(playing_matches(url, args.batch)))

    engine = make_sync_engine(url).execution_options(**{SQLITE_BEGIN_OPTION: "BEGIN IMMEDIATE"})
    connection = engine.connect()

    def served() -> None:
        rows = batches.rows()
        with connection.begin():
            insert_actions(connection, rows)

    def core() -> None:
        rows = batches.rows()
        with connection.begin():
            insert_actions_core(connection, rows)

    raw = sqlite3.connect(path, isolation_level=None)
    for pragma in SQLITE_PRAGMAS:
        raw.execute(pragma)

    def dbapi() -> None:
        rows = batches.rows()
        raw.execute("BEGIN IMMEDIATE")
        raw.executemany(
            INSERT,
            [
                (
                    *(r[k] for k in ("match_id", "round_index", "seq", "version", "seat")),
                    json.dumps(r["action"]),
                    r["actor"],
                    r["created_at"].strftime("%Y-%m-%d %H:%M:%S.%f"),
                )
                for r in rows
            ],
        )
        last = {r["match_id"]: r["version"] for r in rows}
        raw.executemany(SET_TURN, [(version, match) for match, version in last.items()])
        raw.execute("COMMIT")

    load_before = os.getloadavg()
    sides = {
        "driver SQL (as served)": served,
        "SQLAlchemy Core (before)": core,
        "sqlite3 directly": dbapi,
    }
    for transaction in sides.values():  # warm the statement caches
        cpu_us(transaction, 50)
    samples: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(args.samples):
        for name, transaction in sides.items():
            samples[name].append(cpu_us(transaction, args.transactions))
    stored = raw.execute("SELECT count(*) FROM actions").fetchone()[0]
    expected = args.batch * (args.samples * args.transactions + 50) * len(sides)
    connection.close()
    engine.dispose()
    raw.close()
    if stored != expected:
        raise SystemExit(f"stored {stored} action rows, expected {expected}")

    print(f"the store writer's transaction of {args.batch} action rows, {args.transactions} per sample")
    medians = {}
    for name, values in samples.items():
        medians[name] = statistics.median(values)
        every = ", ".join(f"{v:.0f}" for v in values)
        print(
            f"{name:24} {medians[name]:6.0f} µs CPU per transaction, "
            f"{medians[name] / args.batch:5.1f} per write  (samples: {every})"
        )
    served_us, core_us, dbapi_us = medians.values()
    print(
        f"ratio served / Core: {served_us / core_us:.2f}; saved per write: "
        f"{(core_us - served_us) / args.batch:.1f} µs"
    )
    for name, side_us in (("served", served_us), ("Core", core_us)):
        print(
            f"ratio {name} / sqlite3: {side_us / dbapi_us:.2f}; SQLAlchemy's own cost per write: "
            f"{(side_us - dbapi_us) / args.batch:.1f} µs"
        )
    if args.handovers:
        handovers = asyncio.run(handover_cpu_us(path, args.handovers, args.samples))
        print(f"the hand-over of a batch to the writer's thread and back, {args.handovers} per sample")
        for name, values in handovers.items():
            every = ", ".join(f"{v:.0f}" for v in values)
            print(f"{name:28} {statistics.median(values):5.1f} µs process CPU  (samples: {every})")
        served_s, before_s = (statistics.median(v) for v in handovers.values())
        print(f"ratio served / before: {served_s / before_s:.2f}")
    print(
        f"load average before {load_before[0]:.2f}, after {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"
    )


if __name__ == "__main__":
    main()
