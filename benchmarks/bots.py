"""Bot decision time per level and variant (p50, p95, p99 ms), one process, beside a baseline level.

Positions come from seeded play: greedy bots play rounds of each variant and every position where
the seat to act has a real choice (more than one legal action) is kept; ``--positions`` of them
are drawn at random (seeded). Every level then decides on the same positions, the levels taking
turns position by position (A/B/C…), so a change in the machine's load falls on all of them alike.
Each decision is timed with ``time.perf_counter`` around the bot's whole answer (building its
`PlayerView` included, as the server does); forks of the positions are made outside the timing.

Levels are every name `engine.arena.known_players` lists (`engine.bots.BOTS`, then
``engine.bots.MEASUREMENT_BOTS``), at their default settings, so new levels are picked up
without edits. The baseline (``--baseline``, default greedy) is printed beside each level as a
ratio of p50s. Where a bot has them it also reports:

- ``budget_ms``: its time budget per decision; the decisions that took longer are counted;
- ``playouts``: a running count of playouts (or sampled worlds) the bot has done; divided by the
  time spent deciding it gives playouts per second.

Goals (issue 10): hard p95 ≤ 150 ms and p99 ≤ 300 ms, answering by its deadline; easy and medium
p99 ≤ 2 ms. The load average is printed before and after: the machine is shared.

Usage: ``python benchmarks/bots.py [--positions 300] [--variants domeng,kozel:4,kozel:2]
[--levels a,b] [--baseline greedy] [--seed 0] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.arena import Player, known_players, make_player
from engine.bots import make_bot
from engine.core import Phase, State
from engine.paired import percentiles
from engine.rules.base import Rules
from engine.variants import make_rules
from engine.views import player_view

GOALS_MS: dict[str, dict[str, float]] = {
    "easy": {"p99": 2.0},
    "medium": {"p99": 2.0},
    "hard": {"p95": 150.0, "p99": 300.0},
}


def parse_variant(text: str) -> Rules:
    """``domeng``, ``kozel:N`` (N seats) or ``kozel:pairs`` as rules."""
    name, _, seats = text.partition(":")
    if seats == "pairs":
        return make_rules(name, {"pairs": True}, 4)
    return make_rules(name, {}, int(seats) if seats else None)


def positions(rules: Rules, count: int, seed: int) -> list[State]:
    """``count`` positions with a choice, drawn from greedy play of ``rules`` seeded by ``seed``."""
    rng = random.Random(seed)
    bots = [make_bot("greedy", random.Random(rng.getrandbits(64))) for _ in range(rules.seats)]
    found: list[State] = []
    state = rules.new_match()
    while len(found) < 4 * count:
        if state.phase is Phase.OVER:
            state = rules.new_match()
        state.start_round(rules.deal(rng))
        while state.phase is Phase.PLAYING:
            seat = state.to_act
            view = player_view(state, seat)
            if len(view.legal) > 1:
                found.append(state.fork())
            state.apply(bots[seat].choose(view))
    return rng.sample(found, count)


@dataclass
class LevelTimes:
    """One level's decision times (ms) on one variant and what its bot tells about itself."""

    level: str
    player: Player
    bot: object
    times_ms: list[float] = field(default_factory=list)
    playouts_start: int | None = None

    def figures(self) -> dict[str, Any]:
        """p50, p95, p99 and max ms; budget and decisions over it; playouts per second."""
        pct = percentiles(self.times_ms)
        out: dict[str, Any] = {
            "decisions": len(self.times_ms),
            **{k: None if v is None else round(v, 4) for k, v in pct.items()},
            "max": round(max(self.times_ms), 4),
            "mean": round(sum(self.times_ms) / len(self.times_ms), 4),
        }
        budget = getattr(self.bot, "budget_ms", None)
        if isinstance(budget, int | float):
            out["budget_ms"] = budget
            out["over_budget"] = sum(t > budget for t in self.times_ms)
        playouts = getattr(self.bot, "playouts", None)
        if isinstance(playouts, int) and self.playouts_start is not None:
            out["playouts_per_s"] = round((playouts - self.playouts_start) / (sum(self.times_ms) / 1000), 1)
        return out


def _make(level: str, seed: int) -> LevelTimes:
    player = make_player(level, random.Random(seed))
    playouts = getattr(player.bot, "playouts", None)
    return LevelTimes(
        level, player, player.bot, playouts_start=playouts if isinstance(playouts, int) else None
    )


def measure(rules: Rules, levels: list[str], count: int, seed: int) -> dict[str, LevelTimes]:
    """Every level decides on the same ``count`` positions of ``rules``, taking turns."""
    timed = {level: _make(level, seed) for level in levels}
    clock = time.perf_counter
    for state in positions(rules, count, seed):
        for entry in timed.values():
            fork = state.fork()
            seat = fork.to_act
            start = clock()
            entry.player.act(fork, seat)
            entry.times_ms.append((clock() - start) * 1000)
    return timed


def _goal_text(level: str, figures: dict[str, Any]) -> str:
    goals = GOALS_MS.get(level, {})
    checks = [f"{k} ≤ {v:g} {'ok' if figures[k] <= v else 'MISSED'}" for k, v in goals.items()]
    if "over_budget" in figures:
        checks.append(f"over budget {figures['over_budget']}")
    return "; ".join(checks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=300, help="positions per variant (default 300)")
    parser.add_argument("--variants", default="domeng,kozel:4,kozel:2", help="domeng, kozel:N, kozel:pairs")
    parser.add_argument("--levels", help="comma-separated levels (default: every known level)")
    parser.add_argument("--baseline", default="greedy", help="the level printed beside the others")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    levels = args.levels.split(",") if args.levels else known_players()
    if args.baseline not in levels:
        levels.insert(0, args.baseline)
    load_before = os.getloadavg()
    report: dict[str, Any] = {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_before": [round(x, 2) for x in load_before],
        "positions": args.positions,
        "baseline": args.baseline,
        "variants": {},
    }
    for text in args.variants.split(","):
        timed = measure(parse_variant(text), levels, args.positions, args.seed)
        report["variants"][text] = {level: entry.figures() for level, entry in timed.items()}
    report["load_after"] = [round(x, 2) for x in os.getloadavg()]
    if args.json:
        print(json.dumps(report))
        return
    print(
        f"Python {report['python']}, {report['cpus']} CPUs, one process; load average before"
        f" {report['load_before']}, after {report['load_after']}; {args.positions} positions per variant"
    )
    for text, figures in report["variants"].items():
        base = figures[args.baseline]["p50"]
        print(f"\n{text}")
        print("| level | p50 ms | p95 ms | p99 ms | max ms | p50 vs baseline | playouts/s | goals |")
        print("|---|---:|---:|---:|---:|---:|---:|---|")
        for level, f in figures.items():
            ratio = f"{f['p50'] / base:.1f}×" if base else "–"
            pps = f"{f['playouts_per_s']:.0f}" if "playouts_per_s" in f else "–"
            print(
                f"| {level} | {f['p50']:.3f} | {f['p95']:.3f} | {f['p99']:.3f} | {f['max']:.3f}"
                f" | {ratio} | {pps} | {_goal_text(level, f)} |"
            )


if __name__ == "__main__":
    main()
