"""`benchmarks/store_mix.py` still plays rooms' moves, round ends and deals through the store,
here and in another checkout (`--tree`), and prints the writer thread's and the event loop's CPU
per action of each (it checks that every match stored its last version), and the write system
calls and bytes the store made per action (SQLite's log: every action writes some)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_benchmark_plays_every_tree_and_prints_their_ratio() -> None:
    small = ["--matches", "3", "--rounds", "1", "--round-moves", "3", "--batch", "2", "--samples", "1"]
    run = subprocess.run(
        [sys.executable, "benchmarks/store_mix.py", *small, "--tree", str(ROOT)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.count("writer thread") == 2
    assert run.stdout.count("ratio to the first: ") == 2
    assert "9 actions per sample" in run.stdout
    per_action = [line for line in run.stdout.splitlines() if line.startswith("  per action: ")]
    assert len(per_action) == 2, run.stdout
    for line in per_action:
        calls = float(line.split()[2])
        assert calls > 0, run.stdout  # /proc/self/io counted the log's writes
