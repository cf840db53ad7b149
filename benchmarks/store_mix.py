"""The store writer's CPU per action, for the writes a playing room makes (issue 15).

`benchmarks/load.py` plays Domeng at five-seat tables: most writes are a move (an action row, which
the group commit inserts together with other rooms'), and each round adds its end (the last move
with the round's outcome and tallies, `app.store.Store.append_action`'s ``round_end``) and the next
deal (`app.store.Store.save_room`'s ``new_round``). This plays ``--matches`` such matches at once
through a real `app.store.Store` on a temporary SQLite file, each round ``--round-moves`` moves
long, with the group commit's batches held to ``--batch`` writes (load.py: about 7), and measures
the CPU of the writer's thread (SQLite's `app.store.sqlite_thread.SqliteThread`, from its
thread's CPU clock; 0 while it never started: a batch runs on the event loop when the database is
free) and of the event loop's over ``--rounds`` rounds after one to warm up, per action stored.

``--tree DIR`` (repeatable) measures the store of another checkout of the project too (e.g. a
``git worktree`` of the commit before a change): each sample runs every tree in turn, in a process
of its own, so old and new are measured in one run on the same machine. Printed: per tree, the
writer thread's and the loop's CPU per action (µs, medians and every sample), the ratio of each
tree's CPU of both threads to the first's, and the load average.

Usage: ``python benchmarks/store_mix.py [--tree DIR ...] [--samples 5] [--matches 56]
[--rounds 3] [--round-moves 20] [--batch 7]``.
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
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def thread_cpu_s(thread: threading.Thread | None) -> float:
    """The CPU ``thread`` has used so far (seconds), from its own clock; 0 for None (not started)."""
    if thread is None or thread.ident is None:
        return 0.0
    return time.clock_gettime(time.pthread_getcpuclockid(thread.ident))


def written() -> tuple[int, int]:
    """This process's write system calls (write, pwrite…) and bytes written so far, from
    ``/proc/self/io`` (``syscw``, ``wchar``); (0, 0) where it cannot be read."""
    try:
        fields = dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())
        return int(fields["syscw"]), int(fields["wchar"])
    except (OSError, KeyError, ValueError):
        return 0, 0


async def play(args: argparse.Namespace, url: str) -> dict[str, float]:
    """Play the matches (in the tree on ``sys.path``): CPU per action of the writer's thread and
    of the loop's, over the measured rounds."""
    from app.store import RoundEnd, SeatSpec, Store, TallySpec  # noqa: PLC0415 (the tree measured)
    from app.store.rows import NewRound  # noqa: PLC0415 (the tree measured)

    deal = {
        "hands": [[f"{a}-{b}" for a, b in ((i, 0), (i, 1), (i, 2), (i, 3), (i, 4))] for i in range(5)],
        "rest": ["5-5", "5-6", "6-6"],
    }
    outcome = {"winner": 2, "stones": [3, 1, 0, 2, 4], "match_over": False, "reason": "domino"}
    tallies = [TallySpec(seat, received=1, paid=0, stones=2) for seat in range(5)]
    actions = 0
    async with Store(url, batch_limit=args.batch) as store:
        matches = []
        for i in range(args.matches):
            seats = [SeatSpec(kind="bot", name="bot", bot_level="easy", seat=s) for s in range(5)]
            matches.append(await store.create_match(f"mix{i:018d}", "domeng", {}, 5, 0.0, "h" * 64, seats))

        async def deal_round(match: int, index: int, version: int) -> None:
            new_round = NewRound(index, "s" * 64, "c" * 64, deal)
            status = "playing" if index == 0 else None
            await store.save_room(match, version, new_round=new_round, unattended=0, status=status)

        await asyncio.gather(*(deal_round(m, 0, 1) for m in matches))

        async def round_of(match: int, index: int) -> None:
            nonlocal actions
            version = 1 + index * (args.round_moves + 1)
            for seq in range(args.round_moves):
                version += 1
                action = {"seat": seq % 5, "play": "3-6", "end": "R"}
                end = None
                if seq == args.round_moves - 1:
                    end = RoundEnd(outcome, 3, tallies, False)
                await store.append_action(match, index, seq, version, seq % 5, action, "human", end)
                actions += 1
            await deal_round(match, index + 1, version + 1)

        await asyncio.gather(*(round_of(m, 0) for m in matches))  # warm up
        sqlite = store._sqlite
        assert sqlite is not None
        started = sqlite._thread  # None: every batch so far ran on the loop
        actions = 0
        writer_start, loop_start = thread_cpu_s(started), time.thread_time()
        calls_start, bytes_start = written()
        for index in range(1, args.rounds + 1):
            await asyncio.gather(*(round_of(m, index) for m in matches))
        writer = sqlite._thread  # started meanwhile (a batch that found the database locked): all its CPU
        writer_s = thread_cpu_s(writer) - (writer_start if writer is started else 0.0)
        loop_s = time.thread_time() - loop_start
        calls_end, bytes_end = written()
        expected = 1 + (args.rounds + 1) * (args.round_moves + 1)  # every move and deal stored
        for match in matches:
            row = await store.load_match_by_id(match)
            if row is None or row.version != expected:
                raise SystemExit(f"match {match} stored {row and row.version}, expected {expected}")
    return {
        "writer_us": writer_s / actions * 1e6,
        "loop_us": loop_s / actions * 1e6,
        "actions": actions,
        "write_calls": (calls_end - calls_start) / actions,
        "kib_written": (bytes_end - bytes_start) / actions / 1024,
    }


def child(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(Path(args.child).resolve()))
    with tempfile.TemporaryDirectory(prefix="store-mix-") as directory:
        url = f"sqlite+aiosqlite:///{directory}/mix.db"
        print(json.dumps(asyncio.run(play(args, url))))


def main() -> None:
    """``python benchmarks/store_mix.py [--tree DIR ...] [--samples 5] [--matches 56] [--rounds 3]
    [--round-moves 20] [--batch 7]``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", default=[], help="another checkout to measure too")
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--matches", type=int, default=56, help="matches played at once")
    parser.add_argument("--rounds", type=int, default=3, help="rounds measured (after one to warm up)")
    parser.add_argument("--round-moves", type=int, default=20, help="moves per round, the last ends it")
    parser.add_argument("--batch", type=int, default=7, help="writes per transaction at most")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    trees = [str(HERE), *(str(Path(t).resolve()) for t in args.tree)]
    passed = [
        f"--{name}={getattr(args, name.replace('-', '_'))}"
        for name in ("matches", "rounds", "round-moves", "batch")
    ]
    load_before = os.getloadavg()
    found: list[list[dict[str, float]]] = [[] for _ in trees]
    for _ in range(args.samples):
        for tree, samples in zip(trees, found, strict=True):
            command = [sys.executable, __file__, f"--child={tree}", *passed]
            out = subprocess.run(command, check=True, capture_output=True, text=True, cwd=tree).stdout
            samples.append(json.loads(out.strip().splitlines()[-1]))
    first = statistics.median(s["writer_us"] + s["loop_us"] for s in found[0])
    print(
        f"{args.matches} matches, rounds of {args.round_moves} moves and a deal, batches of "
        f"{args.batch}; {found[0][0]['actions']:.0f} actions per sample"
    )
    for tree, samples in zip(trees, found, strict=True):
        writer = [s["writer_us"] for s in samples]
        loop = [s["loop_us"] for s in samples]
        both = statistics.median(s["writer_us"] + s["loop_us"] for s in samples)
        print(
            f"{tree}: writer thread {statistics.median(writer):6.1f} µs CPU per action "
            f"(samples: {', '.join(f'{v:.1f}' for v in writer)}); event loop "
            f"{statistics.median(loop):6.1f} µs (samples: {', '.join(f'{v:.1f}' for v in loop)}); "
            f"both {both:6.1f} µs, ratio to the first: {both / first:.2f}"
        )
        calls = statistics.median(s.get("write_calls", 0.0) for s in samples)
        kib = statistics.median(s.get("kib_written", 0.0) for s in samples)
        print(f"  per action: {calls:.2f} write system calls, {kib:.1f} KiB written (log and checkpoints)")
    print(
        f"load average before {load_before[0]:.2f}, after {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"
    )


if __name__ == "__main__":
    main()
