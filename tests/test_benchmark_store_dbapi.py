"""`benchmarks/store_dbapi.py` still runs the writer's transaction both ways on today's schema: its
hand-written SQL and the old Core path store the same rows as `app.store.batches.insert_actions`
(it checks the count)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_benchmark_stores_every_row_both_ways_and_prints_their_ratio() -> None:
    small = ["--batch", "3", "--transactions", "5", "--samples", "2", "--handovers", "5"]
    run = subprocess.run(
        [sys.executable, "benchmarks/store_dbapi.py", *small],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert "driver SQL (as served)" in run.stdout
    assert "SQLAlchemy Core (before)" in run.stdout
    assert "sqlite3 directly" in run.stdout
    assert "ratio served / Core: " in run.stdout
    assert "ratio served / sqlite3: " in run.stdout
    assert "run_in_executor (before)" in run.stdout
