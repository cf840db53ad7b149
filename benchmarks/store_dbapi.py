"""What SQLAlchemy costs the store writer's batch (issue 15: where ours' CPU per delivery goes).

The group commit (`app.store.group_commit`) writes the moves of several rooms in one transaction:
`app.store.batches.insert_actions` (SQLAlchemy Core: one executemany of the action rows, then one
of the matches' versions and turn clocks) between ``BEGIN IMMEDIATE`` and ``COMMIT``, on the
writer's synchronous connection (`app.store.sqlite_thread`). This runs that transaction of
``--batch`` rows (one move in each of ``--batch`` matches), as the server runs it, beside the same
SQL through the standard library's sqlite3 module with hand-made parameters (the JSON action
dumped, the time as SQLAlchemy stores it on SQLite), on the same SQLite file (WAL, ``synchronous=
NORMAL``, as `app.store.db.SQLITE_PRAGMAS`). Each side runs ``--transactions`` transactions per
sample, alternating, ``--samples`` times; printed: CPU (this thread's, `time.thread_time`) per
transaction and per write, medians and every sample, their ratio, and the load average.

Read it beside `benchmarks/load.py`'s figures: at 2,000 connections a stored version reaches 5
sockets, so a microsecond saved per write is a fifth of one per delivery.

Usage: ``python benchmarks/store_dbapi.py [--batch 7] [--transactions 300] [--samples 7]``.
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
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.store import SeatSpec, Store
from app.store.batches import insert_actions
from app.store.db import SQLITE_BEGIN_OPTION, SQLITE_PRAGMAS, make_sync_engine

INSERT = (
    "INSERT INTO actions (match_id, round_index, seq, version, seat, action, actor, created_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
SET_TURN = (
    "UPDATE matches SET version = ?, turn_at = ((julianday('now') - 2440587.5) * 86400.0), "
    "handed_fence = NULL, handed_at = NULL WHERE id = ?"
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


def main() -> None:
    """``python benchmarks/store_dbapi.py [--batch 7] [--transactions 300] [--samples 7]``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=7, help="writes per transaction (load.py: about 7)")
    parser.add_argument("--transactions", type=int, default=300, help="transactions per sample")
    parser.add_argument("--samples", type=int, default=7)
    args = parser.parse_args()
    path = Path(tempfile.mkdtemp(prefix="store-dbapi-")) / "bench.db"
    url = f"sqlite+aiosqlite:///{path}"
    batches = Batches(asyncio.run(playing_matches(url, args.batch)))

    engine = make_sync_engine(url).execution_options(**{SQLITE_BEGIN_OPTION: "BEGIN IMMEDIATE"})
    connection = engine.connect()

    def core() -> None:
        rows = batches.rows()
        with connection.begin():
            insert_actions(connection, rows)

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
    sides = {"SQLAlchemy Core (as served)": core, "sqlite3 directly": dbapi}
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
            f"{name:28} {medians[name]:6.0f} µs CPU per transaction, "
            f"{medians[name] / args.batch:5.1f} per write  (samples: {every})"
        )
    core_us, dbapi_us = medians.values()
    print(
        f"ratio SQLAlchemy / sqlite3: {core_us / dbapi_us:.2f}; SQLAlchemy's own cost per write: "
        f"{(core_us - dbapi_us) / args.batch:.1f} µs"
    )
    print(
        f"load average before {load_before[0]:.2f}, after {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"
    )


if __name__ == "__main__":
    main()
