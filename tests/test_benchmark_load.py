"""benchmarks/load.py runs end to end at a tiny size: our server and the bare fan-out baseline
both start on their default stack, take every connection and deliver updates. The figures are
for closing notes, not for tests; this only keeps the benchmark runnable (the baseline stopped
starting when the loop's setting gained a default factory, and nothing noticed)."""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks.load import bucket_quantile, goals

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
    # ours' own action-to-broadcast latency, a bucket bound of its histogram (the fan-out has none)
    own = _row(out, "server's own latency p99 (ms, ≤)")
    assert float(own[0]) > 0 and own[1] == "-", out
    lag = _row(out, "  its loop's lag p99 (ms)")  # the load generator's, beside each server
    assert float(lag[0]) >= 0 and float(lag[1]) >= 0, out
    for label in ("  its loop's CPU wait (ms/s)", "server loop's CPU wait (ms/s)"):
        waited = _row(out, label)  # from /proc's schedstat, for both servers and the generator
        assert float(waited[0]) >= 0 and float(waited[1]) >= 0, out
    assert "our server's settings for this run: DOMENG_GROUP_COMMIT_WRITES=4" in out, out
    assert "2 pairs in the order they ran, ours then the fan-out each time" in out, out
    assert len(_row(out, "pair 1")) == len(_row(out, "pair 2")) == len(_row(out, "medians")) == 11, out


def test_the_load_benchmark_refuses_a_setting_that_is_not_ours() -> None:
    """``--server-env`` takes only ``DOMENG_…=value``: anything else is a usage error, not a run."""
    command = [sys.executable, "benchmarks/load.py", "--server-env", "PATH=/tmp"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2 and "expected DOMENG_NAME=VALUE" in done.stderr, done.stderr


def _figures(p99_ms: float, rss_mb: float, client_actions_per_s: float, opened: int) -> dict[str, Any]:
    """The figures of ours that `benchmarks.load.goals` reads."""
    return {
        "client_actions_per_s": client_actions_per_s,
        "connections_opened": opened,
        "connections_failed": 0,
        "latency_ms": {"p99": p99_ms},
        "server_rss_mb_peak": rss_mb,
    }


def test_the_goals_judged_are_issue_15s_for_the_runs_size() -> None:
    """At 2,000 connections: p99 ≤ 50 ms and RSS ≤ 250 MB. At 5,000: the full offered pace and
    p99 ≤ 100 ms, with no memory goal (a 5,000 run's 406 MB used to be printed as a MISS of the
    2,000 one's)."""
    small = argparse.Namespace(tables=400, pace=1.0)
    judged = goals(_figures(p99_ms=60.0, rss_mb=240.0, client_actions_per_s=400.0, opened=2000), small)
    assert judged == {
        "2000 connections at 1 action/s per table": True,
        "p99 <= 50 ms": False,
        "0 failed connections": True,
        "server RSS <= 250 MB": True,
    }
    large = argparse.Namespace(tables=1000, pace=1.0)
    judged = goals(_figures(p99_ms=60.0, rss_mb=406.0, client_actions_per_s=1000.0, opened=5000), large)
    assert judged == {
        "5000 connections at the full offered pace": True,
        "p99 <= 100 ms": True,
        "0 failed connections": True,
    }
    saturated = goals(_figures(p99_ms=948.0, rss_mb=332.0, client_actions_per_s=945.0, opened=5000), large)
    assert saturated["5000 connections at the full offered pace"] is False
    assert saturated["p99 <= 100 ms"] is False


def test_a_quantile_of_the_servers_histogram_is_the_bound_of_its_bucket() -> None:
    """Of what the server's cumulative histogram counted between two readings (its counts by upper
    bound, seconds): the bound of the bucket that holds the quantile, ``inf`` above the last finite
    one, nan when nothing was counted in between."""
    before = {0.01: 5.0, 0.05: 5.0, 0.1: 5.0, math.inf: 5.0}  # 5 observations before the window
    after = {0.01: 95.0, 0.05: 103.0, 0.1: 104.0, math.inf: 105.0}  # 90, 8, 1 and 1 in it
    assert bucket_quantile(before, after, 0.50) == 0.01
    assert bucket_quantile(before, after, 0.90) == 0.01  # the 90th of 100 is the last ≤ 10 ms
    assert bucket_quantile(before, after, 0.95) == 0.05
    assert bucket_quantile(before, after, 0.99) == 0.1
    assert bucket_quantile(before, after, 1.0) == math.inf
    assert math.isnan(bucket_quantile(after, after, 0.99))
    assert math.isnan(bucket_quantile({}, {}, 0.5))
