"""benchmarks/load.py runs end to end at a tiny size: our server and the bare fan-out baseline
both start on their default stack, take every connection and deliver updates. The figures are
for closing notes, not for tests; this only keeps the benchmark runnable (the baseline stopped
starting when the loop's setting gained a default factory, and nothing noticed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _row(output: str, label: str) -> list[str]:
    """The cells after ``label`` on its row of load.py's table."""
    for line in output.splitlines():
        if line.startswith(label):
            return line[len(label) :].split()
    raise AssertionError(f"no row {label!r} in:\n{output}")


def test_the_load_benchmark_runs_ours_beside_the_fan_out_baseline() -> None:
    command = [sys.executable, "benchmarks/load.py", "--tables", "2", "--seconds", "2", "--warmup", "1"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert _row(out, "connections opened")[:2] == ["10", "10"], out
    assert _row(out, "connections failed")[:2] == ["0", "0"], out
    ours, fanout = (float(cell) for cell in _row(out, "deliveries/s")[:2])
    assert ours > 0 and fanout > 0, out
