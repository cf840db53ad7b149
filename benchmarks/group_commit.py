"""The store's group commit under a paced load: CPU per write and the wait it adds, by setting.

``--rooms`` rooms each append actions to their own match at ``--pace`` writes per second (from a
random phase, each awaited before that room's next, as a table's moves are), for ``--seconds``
after a warm-up, on the real `app.store.Store` (a new SQLite file per run, or ``--database-url``).
Every ``--setting WINDOW_S:TARGET`` (the store's ``batch_window_s`` and ``batch_target``, as
``DOMENG_GROUP_COMMIT_S`` and ``DOMENG_GROUP_COMMIT_WRITES`` set them) runs in a fresh process, the
settings in turn ``--runs`` times (the machine is shared and its speed drifts, so only figures
taken side by side compare), and the medians are printed:

- CPU per write (µs): this process's user + system time (`time.process_time`: the event loop's
  thread and the writer's) over the window, divided by the writes committed in it;
- writes per transaction (the group commit's batches);
- a write's wait from its call to its commit (ms, p50 and p99): what the window adds to a move.

CPU time, not wall time, is what the figure counts, so other jobs on the machine slow a run but
change its figure far less than they change a load test's.

Usage: ``python benchmarks/group_commit.py [--rooms 400] [--pace 1.35] [--seconds 10] [--runs 3]
[--setting 0.005:0 --setting 0.02:16] [--database-url URL]``. The defaults compare the old
setting (5 ms, no target) with the current defaults of `app.web.settings.Settings`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WARMUP_S = 2.0


async def measure(url: str, rooms: int, pace: float, seconds: float, window_s: float, target: int) -> dict:
    """One run in this process: the figures of the module docstring."""
    from app.store import Store  # noqa: PLC0415 (imported in the child only)
    from benchmarks.store_write import playing_match  # noqa: PLC0415

    rng = random.Random(1)
    async with Store(url, batch_window_s=window_s, batch_target=target) as store:
        matches = [await playing_match(store) for _ in range(rooms)]
        loop = asyncio.get_running_loop()
        start = loop.time() + 0.5
        window = (start + WARMUP_S, start + WARMUP_S + seconds)
        waits: list[float] = []

        async def room(match_id: int) -> None:
            seq = 0
            at = start + rng.random() / pace
            while at < window[1]:
                await asyncio.sleep(max(0.0, at - loop.time()))
                called = loop.time()
                action = {"seat": seq % 5, "pass": True}
                await store.append_action(match_id, 0, seq, seq + 2, seq % 5, action, "bot")
                if window[0] <= called < window[1]:
                    waits.append(loop.time() - called)
                seq += 1
                at += 1 / pace

        async def sample() -> tuple[float, float, int, int]:
            await asyncio.sleep(max(0.0, window[0] - loop.time()))
            cpu0, tx0, w0 = time.process_time(), store.transactions_committed, store.writes_committed
            await asyncio.sleep(max(0.0, window[1] - loop.time()))
            cpu1, tx1, w1 = time.process_time(), store.transactions_committed, store.writes_committed
            return cpu1 - cpu0, seconds, tx1 - tx0, w1 - w0

        sampler = asyncio.create_task(sample())
        await asyncio.gather(*(room(m) for m in matches))
        cpu, _, transactions, writes = await sampler
    waits.sort()
    return {
        "cpu_us_per_write": 1e6 * cpu / writes if writes else float("nan"),
        "writes_per_transaction": writes / transactions if transactions else float("nan"),
        "writes_per_s": writes / seconds,
        "wait_p50_ms": 1000 * waits[len(waits) // 2] if waits else float("nan"),
        "wait_p99_ms": 1000 * waits[min(len(waits) - 1, int(0.99 * len(waits)))] if waits else float("nan"),
    }


def one_run(args: argparse.Namespace, setting: tuple[float, int]) -> dict:
    """One measurement of ``setting`` in a fresh process on a fresh database (SQLite: a new file)."""
    url = args.database_url or f"sqlite+aiosqlite:///{Path(tempfile.mkdtemp()) / 'bench.db'}"
    command = [sys.executable, __file__, "--child", "--database-url", url, "--rooms", str(args.rooms)]
    command += ["--pace", str(args.pace), "--seconds", str(args.seconds)]
    command += ["--setting", f"{setting[0]}:{setting[1]}"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True, timeout=900)
    return json.loads(done.stdout.strip().splitlines()[-1])


def parse_setting(text: str) -> tuple[float, int]:
    """``WINDOW_S:TARGET`` as (seconds, writes)."""
    window, _, target = text.partition(":")
    try:
        return float(window), int(target or 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WINDOW_S:TARGET, e.g. 0.02:16, got {text!r}") from None


def main() -> None:
    """Run the settings in turn and print the medians."""
    from app.web.settings import Settings  # noqa: PLC0415

    fields = Settings.model_fields
    default = (fields["group_commit_s"].default, fields["group_commit_writes"].default)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", help="default: a new SQLite file per run")
    parser.add_argument("--rooms", type=int, default=400, help="rooms writing at once (400)")
    parser.add_argument("--pace", type=float, default=1.35, help="writes per second per room (1.35)")
    parser.add_argument("--seconds", type=float, default=10.0, help="measured window (10)")
    parser.add_argument("--runs", type=int, default=3, help="runs per setting (3)")
    parser.add_argument("--setting", action="append", type=parse_setting, help="WINDOW_S:TARGET (repeatable)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    settings = args.setting or [(0.005, 0), default]
    if args.child:
        window_s, target = settings[0]
        run = measure(args.database_url, args.rooms, args.pace, args.seconds, window_s, target)
        print(json.dumps(asyncio.run(run)))
        return
    before = [round(x, 2) for x in os.getloadavg()]
    runs: dict[tuple[float, int], list[dict]] = {s: [] for s in settings}
    for _ in range(args.runs):
        for setting in settings:
            runs[setting].append(one_run(args, setting))
    database = "PostgreSQL" if args.database_url and "postgresql" in args.database_url else "SQLite"
    print(
        f"group commit: {args.rooms} rooms × {args.pace:g} writes/s, {args.seconds:g} s window, {database}, "
        f"{args.runs} runs per setting in turn (medians; defaults {default[0]:g} s : {default[1]})"
    )
    names = ("cpu_us_per_write", "writes_per_transaction", "writes_per_s", "wait_p50_ms", "wait_p99_ms")
    print(f"{'window s : target':>18}" + "".join(f"{n:>24}" for n in names))
    first = None
    for setting, figures in runs.items():
        medians = {n: statistics.median(f[n] for f in figures) for n in names}
        first = first or medians
        label = f"{setting[0]:g} : {setting[1]}"
        print(f"{label:>18}" + "".join(f"{medians[n]:>24.2f}" for n in names))
        cpu = ", ".join(f"{f['cpu_us_per_write']:.0f}" for f in figures)
        print(
            f"{'':>18}  CPU per write in each run: {cpu} µs; vs the first setting: "
            f"{medians['cpu_us_per_write'] / first['cpu_us_per_write']:.3f}x"
        )
    after = [round(x, 2) for x in os.getloadavg()]
    print(f"load average (1/5/15 min): before {before}, after {after} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
