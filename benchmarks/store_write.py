"""CPU per write transaction of the store's writer (`app.store.writer`), the cost every move pays.

One room appends ``--writes`` actions, each awaited before the next, so every transaction holds
one write (the worst case of the group commit, and the common one below saturation); before the
window, 50 writes warm the connection and the statement caches. Reports this process's CPU (user +
system, `time.process_time`) and wall time per transaction, median of ``--runs`` runs, with the
load average. ``--fence 1`` writes under a fencing token (several processes: each batch reads and
locks its match's fence, docs/cluster.md).

With ``--baseline DIR`` (a checkout of another revision with its own ``.venv``, e.g. made by
``git worktree add /tmp/base REV`` and ``scripts/bootstrap``) each run alternates between that
tree and this one, in separate processes on fresh databases, and the ratio of the medians is
printed: the machine is shared and its speed drifts, so only side-by-side figures compare.

Usage: ``python benchmarks/store_write.py [--database-url URL] [--writes 3000] [--runs 3]
[--fence 1] [--baseline DIR]`` (default database: a new SQLite file per run).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


async def playing_match(store: Any) -> int:
    """A new Domeng match of five empty seats in ``store`` (an `app.store.Store` or a fenced view
    of one), its first round dealt from seed ``"s"``: its id, for actions to be appended to."""
    from app.store import SeatSpec  # noqa: PLC0415 (the tree the process runs in)
    from engine.hashing import commitment_of  # noqa: PLC0415
    from engine.variants import make_rules  # noqa: PLC0415

    deal = make_rules("domeng").deal_from_seed("s")
    dealt = {"hands": [[str(t) for t in hand] for hand in deal.hands], "rest": [str(t) for t in deal.rest]}
    code = f"bench-{uuid.uuid4().hex[:12]}"
    match_id: int = await store.create_match(code, "domeng", {}, 5, 30.0, "h", [SeatSpec()] * 5)
    await store.start_round(match_id, 0, "s", commitment_of("s"), dealt, 1)
    return match_id


async def measure(url: str, writes: int, fence: int | None) -> dict[str, float]:
    """CPU and wall microseconds per one-write transaction, in this process."""
    sys.path.insert(0, str(Path.cwd()))
    from app.store import Store  # noqa: PLC0415 (the tree the process runs in)

    async with Store(url) as store:
        owner = store if fence is None else store.fenced(fence)
        match_id = await playing_match(owner)

        async def write(seq: int) -> None:
            action = {"seat": seq % 5, "pass": True}
            await owner.append_action(match_id, 0, seq, seq + 2, seq % 5, action, "bot")

        for seq in range(50):
            await write(seq)
        cpu, wall = time.process_time(), time.perf_counter()
        for seq in range(50, 50 + writes):
            await write(seq)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {"cpu_us": cpu / writes * 1e6, "wall_us": wall / writes * 1e6}


def one_run(tree: Path, args: argparse.Namespace) -> dict[str, float]:
    """One measurement in a fresh process of ``tree``'s own interpreter and code."""
    url = args.database_url or f"sqlite+aiosqlite:///{Path(tempfile.mkdtemp()) / 'bench.db'}"
    command = [
        str(tree / ".venv" / "bin" / "python"),
        str(ROOT / "benchmarks" / "store_write.py"),
        "--child",
        "--database-url",
        url,
        "--writes",
        str(args.writes),
    ]
    if args.fence is not None:
        command += ["--fence", str(args.fence)]
    done = subprocess.run(command, cwd=tree, capture_output=True, text=True, check=True, timeout=600)
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", help="default: a new SQLite file per run")
    parser.add_argument("--writes", type=int, default=3000, help="transactions measured per run (3000)")
    parser.add_argument("--runs", type=int, default=3, help="runs per tree (3)")
    parser.add_argument("--fence", type=int, help="write under this fencing token")
    parser.add_argument("--baseline", type=Path, help="another checkout, measured alternately")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(measure(args.database_url, args.writes, args.fence))))
        return
    trees = {"this tree": ROOT} if args.baseline is None else {"baseline": args.baseline, "this tree": ROOT}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    before = os.getloadavg()
    for _ in range(args.runs):
        for name, tree in trees.items():
            runs[name].append(one_run(tree, args))
    database = "PostgreSQL" if args.database_url and "postgresql" in args.database_url else "SQLite"
    fence = f", fence {args.fence}" if args.fence is not None else ""
    print(
        f"store writer, one write per transaction, {database}{fence}, {args.writes} writes × {args.runs} runs"
    )
    medians = {}
    for name, figures in runs.items():
        cpu = statistics.median(f["cpu_us"] for f in figures)
        wall = statistics.median(f["wall_us"] for f in figures)
        medians[name] = cpu
        every = ", ".join(f"{f['cpu_us']:.0f}" for f in figures)
        print(f"{name:>10}: CPU {cpu:6.0f} µs (runs {every}), wall {wall:6.0f} µs per transaction")
    if len(medians) == 2:
        print(f"this tree / baseline, CPU per transaction: {medians['this tree'] / medians['baseline']:.2f}x")
    after = [round(x, 2) for x in os.getloadavg()]
    print(f"load average (1/5/15 min): before {[round(x, 2) for x in before]}, after {after}")


if __name__ == "__main__":
    main()
