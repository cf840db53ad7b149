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
    """Two pairs (``--repeat 2``), our server with a setting of the run's own (``--server-env``):
    every pair is listed with the medians, and ours reports the store's transactions from its
    ``/metrics`` (the fan-out has none: a dash)."""
    command = [sys.executable, "benchmarks/load.py", "--tables", "2", "--seconds", "2", "--warmup", "1"]
    command += ["--repeat", "2", "--server-env", "DOMENG_GROUP_COMMIT_WRITES=4"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert _row(out, "connections opened")[:2] == ["10", "10"], out
    assert _row(out, "connections failed")[:2] == ["0", "0"], out
    ours, fanout = (float(cell) for cell in _row(out, "deliveries/s")[:2])
    assert ours > 0 and fanout > 0, out
    loop_thread = _row(out, "  of it the loop's thread (µs)")
    assert float(loop_thread[0]) >= 0 and loop_thread[1] != "-", out  # both servers are one process
    kernel = _row(out, "  of it the kernel's (µs)")
    assert float(kernel[0]) >= 0 and float(kernel[1]) >= 0, out  # stime, of ours and the fan-out
    transactions = _row(out, "store transactions/s")
    assert float(transactions[0]) > 0 and transactions[1] == "-", out
    assert "our server's settings for this run: DOMENG_GROUP_COMMIT_WRITES=4" in out, out
    assert "2 pairs in the order they ran, ours then the fan-out each time" in out, out
    assert len(_row(out, "pair 1")) == len(_row(out, "pair 2")) == len(_row(out, "medians")) == 9, out


def test_the_load_benchmark_refuses_a_setting_that_is_not_ours() -> None:
    """``--server-env`` takes only ``DOMENG_…=value``: anything else is a usage error, not a run."""
    command = [sys.executable, "benchmarks/load.py", "--server-env", "PATH=/tmp"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2 and "expected DOMENG_NAME=VALUE" in done.stderr, done.stderr
