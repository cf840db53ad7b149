"""Round review time (engine/review.py, issue 16): seconds to review one seat's round, p50/p95/p99.

Rounds come from seeded play (medium and easy bots alternating by seat, so there are mistakes to
find); every seat of every round is reviewed, which is what "Review my round" asks of a bot worker
process (one core). Each review is timed with ``time.perf_counter`` around `review_record` on the
round's RECORD.md document: replaying the record to each decision and costing every option on
``samples`` worlds. Two sample counts run interleaved, review by review (A/B), so a change in the
machine's load falls on both: the default (`engine.review.DEFAULT_SAMPLES`) and, as the baseline,
half of it; their ratio of medians says how the time scales with the worlds. Decisions per review
and worlds per second are printed beside the times, and the load average before and after (the
machine is shared).

Goal (issue 16): a round's review is ready within 3 s at p95 on one core.

Usage: ``python benchmarks/review.py [--rounds 40] [--variants domeng,kozel:3,kozel:4p,kozel:2]
[--samples 200] [--seed 0] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.bots import make_bot
from engine.core import Deal
from engine.record import write_record
from engine.review import DEFAULT_SAMPLES, review_record
from engine.simulate import play_round
from engine.variants import make_rules

GOAL_P95_S = 3.0


def _table(spec: str) -> tuple[str, int, dict[str, object]]:
    """``domeng``, ``kozel:3``, ``kozel:4p`` (pairs) → (variant, seats, options)."""
    if spec == "domeng":
        return "domeng", 5, {}
    name, _, size = spec.partition(":")
    pairs = size.endswith("p")
    return name, int(size.rstrip("p") or 4), {"pairs": True} if pairs else {}


def _records(
    variant: str, seats: int, options: dict[str, object], rounds: int, seed: int
) -> list[dict[str, Any]]:
    """``rounds`` one-round records of seeded play (a new match each, so every round is round 0)."""
    out = []
    rng = random.Random(seed)
    for n in range(rounds):
        rules = make_rules(variant, options, seats)
        state = rules.new_match(None)
        state.start_round(Deal.shuffled(rng, rules.hand_sizes()))
        bots = [make_bot("easy" if s % 2 else "medium", random.Random(n * 10 + s)) for s in range(seats)]
        play_round(state, bots)
        out.append(write_record(state, [f"P{s}" for s in range(seats)]))
    return out


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(spec: str, rounds: int, samples: int, seed: int) -> dict[str, Any]:
    """Review every seat of ``rounds`` rounds at ``samples`` and at half of it, interleaved."""
    variant, seats, options = _table(spec)
    records = _records(variant, seats, options, rounds, seed)
    levels = {"default": samples, "baseline": max(1, samples // 2)}
    times: dict[str, list[float]] = {name: [] for name in levels}
    decisions: list[int] = []
    worlds = dict.fromkeys(levels, 0)
    for doc in records:
        for seat in range(seats):
            for name, count in levels.items():
                started = time.perf_counter()
                review = review_record(doc, 0, seat, samples=count, seed=seed)
                times[name].append(time.perf_counter() - started)
                worlds[name] += sum(d.worlds for d in review.decisions)
                if name == "default":
                    decisions.append(len(review.decisions))
    out: dict[str, Any] = {
        "table": spec,
        "reviews": len(decisions),
        "decisions_mean": statistics.fmean(decisions),
    }
    for name, count in levels.items():
        spent = sum(times[name])
        out[name] = {
            "samples": count,
            "p50_s": round(statistics.median(times[name]), 3),
            "p95_s": round(_quantile(times[name], 0.95), 3),
            "p99_s": round(_quantile(times[name], 0.99), 3),
            "max_s": round(max(times[name]), 3),
            "worlds_per_s": round(worlds[name] / spent) if spent else 0,
        }
    out["ratio_p50"] = round(out["default"]["p50_s"] / max(out["baseline"]["p50_s"], 1e-9), 2)
    out["meets_goal"] = out["default"]["p95_s"] <= GOAL_P95_S
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=40, help="rounds per table (every seat reviewed)")
    parser.add_argument("--variants", default="domeng,kozel:3,kozel:4p,kozel:2", help="tables to measure")
    parser.add_argument("--samples", type=int, default=DEFAULT_SAMPLES, help="worlds per decision")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args()
    report: dict[str, Any] = {
        "python": platform.python_version(),
        "load_before": [round(x, 2) for x in os.getloadavg()],
        "tables": [measure(spec, args.rounds, args.samples, args.seed) for spec in args.variants.split(",")],
    }
    report["load_after"] = [round(x, 2) for x in os.getloadavg()]
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"Round review time, one process (Python {report['python']}), load {report['load_before']}")
    print(
        "| table | reviews | decisions/review | samples | p50 s | p95 s | p99 s | max s | worlds/s | goal |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for t in report["tables"]:
        for name in ("default", "baseline"):
            f = t[name]
            goal = (
                ("meets" if t["meets_goal"] else "MISSES")
                if name == "default"
                else f"ratio {t['ratio_p50']}×"
            )
            print(
                f"| {t['table']} ({name}) | {t['reviews']} | {t['decisions_mean']:.2f} | {f['samples']} | "
                f"{f['p50_s']} | {f['p95_s']} | {f['p99_s']} | {f['max_s']} | {f['worlds_per_s']} | {goal} |"
            )
    print(f"load after {report['load_after']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
