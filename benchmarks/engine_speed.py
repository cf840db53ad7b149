"""Engine throughput: random self-play actions per second, against the `dominoes` package.

Measures, on one core and in one run so both sides see the same machine load:

- ours: Domeng matches played by uniformly random legal actions through ``State.legal_actions``
  and ``State.apply`` (the one rules implementation the server and replay use), dealing each
  round from a seeded RNG;
- baseline: the `dominoes` package from PyPI (6.1.0), random legal moves in its 4-player game
  (``Game.new`` then ``make_move`` with a random entry of ``valid_moves``); its actions are its
  ``moves``, passes included, as ours include passes;
- the cost of forking a mid-round state (what a search bot pays per node), beside
  ``copy.deepcopy`` of a mid-game `dominoes` game.

``--views`` measures instead what the server pays per room update for the view's shared part: random
matches played as a room plays them (every update a fork of the state before, one action or deal
applied), timing `engine.views.shared_view_json` on each update's state; median µs per call over
``--runs`` runs of ``--updates`` updates, per variant (Domeng; Kozel with 2 and 4 seats, and pairs).

Runs alternate ours/baseline (A/B/A/B…) for ``--runs`` pairs of ``--seconds`` each; the figures are
medians. Rates divide by this process's CPU time (``time.process_time``), so time spent waiting for
a core that another process holds does not count against either side.

Usage: ``python benchmarks/engine_speed.py [--runs 7] [--seconds 1.0] [--json]``, or
``python benchmarks/engine_speed.py --views [--runs 7] [--updates 20000] [--json]``.
"""

from __future__ import annotations

import argparse
import copy
import json
import platform
import random
import statistics
import sys
import time
import timeit
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import engine
from engine.core import Phase
from engine.variants import make_rules
from engine.views import shared_view_json

GOAL_RATIO = 2.0
GOAL_FORK_US = 5.0


def ours(seconds: float, seed: int) -> float:
    """Actions per second of random Domeng self-play for about ``seconds``."""
    rules = make_rules("domeng")
    rng = random.Random(seed)
    choice = rng.choice
    playing, over = Phase.PLAYING, Phase.OVER
    actions = 0
    state = rules.new_match()
    start = time.process_time()
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        for _ in range(50):  # rounds between clock reads
            if state.phase is over:
                state = rules.new_match()
            state.start_round(rules.deal(rng))
            while state.phase is playing:
                state.apply(choice(state.legal_actions()))
                actions += 1
    return actions / (time.process_time() - start)


def baseline(seconds: float, seed: int) -> float:
    """Actions per second of random play in `dominoes` 6.1.0 for about ``seconds``."""
    import dominoes  # noqa: PLC0415 - the baseline is optional at import time

    random.seed(seed)  # dominoes deals from the module RNG
    rng = random.Random(seed)
    choice = rng.choice
    actions = 0
    start = time.process_time()
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        for _ in range(50):
            game = dominoes.Game.new()
            while game.result is None:
                tile, left = choice(game.valid_moves)
                game.make_move(tile, left)
            actions += len(game.moves)
    return actions / (time.process_time() - start)


def _median_time(func: Callable[[], object], number: int = 20000, repeat: int = 7) -> float:
    return statistics.median(timeit.repeat(func, number=number, repeat=repeat)) / number


def fork_costs(seed: int) -> tuple[float, float, int]:
    """(our fork, dominoes deepcopy) in seconds, and the actions into the round at which we fork."""
    import dominoes  # noqa: PLC0415

    rules = make_rules("domeng")
    rng = random.Random(seed)
    state = rules.new_match()
    state.start_round(rules.deal(rng))
    for _ in range(12):  # mid-round: about half of a round's actions
        if state.phase is not Phase.PLAYING:
            break
        state.apply(rng.choice(state.legal_actions()))
    game = dominoes.Game.new()
    for _ in range(12):
        if game.result is not None:
            break
        game.make_move(*rng.choice(game.valid_moves))
    return _median_time(state.fork), _median_time(lambda: copy.deepcopy(game), number=200), len(state.actions)


VIEW_TABLES: tuple[tuple[str, str, dict[str, object], int | None], ...] = (
    ("domeng", "domeng", {}, None),
    ("kozel:4", "kozel", {}, 4),
    ("kozel:4 pairs", "kozel", {"pairs": True}, 4),
    ("kozel:2", "kozel", {}, 2),
)
"""(label, variant, options, seats) of the tables `--views` measures."""


def view_cost(variant: str, options: dict[str, object], seats: int | None, updates: int, seed: int) -> float:
    """Seconds per `shared_view_json` call over ``updates`` updates of random play, each on a fork
    of the state before (as `app.rooms.moves` forks for every move) with one action applied, or the
    next round dealt; a match over starts a new one."""
    rules = make_rules(variant, options, seats)
    rng = random.Random(seed)
    choice = rng.choice
    playing, over = Phase.PLAYING, Phase.OVER
    clock = time.perf_counter
    state = rules.new_match()
    spent = 0.0
    for _ in range(updates):
        if state.phase is over:
            state = rules.new_match()
        else:
            state = state.fork()
            if state.phase is playing:
                state.apply(choice(state.legal_actions()))
            else:
                state.start_round(rules.deal(rng))
        start = clock()
        shared_view_json(state)
        spent += clock() - start
    return spent / updates


def views_main(args: argparse.Namespace) -> None:
    """``--views``: print (or with ``--json`` dump) the median µs per `shared_view_json` call per table."""
    figures: dict[str, object] = {
        "python": platform.python_version(),
        "engine": engine.BUILD,
        "runs": args.runs,
    }
    for label, variant, options, seats in VIEW_TABLES:
        runs = [view_cost(variant, options, seats, args.updates, args.seed + run) for run in range(args.runs)]
        figures[f"{label} µs"] = round(statistics.median(runs) * 1e6, 2)
    if args.json:
        print(json.dumps(figures, ensure_ascii=False))
        return
    print(
        f"shared_view_json per update · {engine.BUILD} engine · {args.runs} runs of {args.updates:,}, medians"
    )
    for label, *_ in VIEW_TABLES:
        print(f"  {label:<14} {figures[f'{label} µs']:>6} µs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="A/B pairs (default 7)")
    parser.add_argument("--seconds", type=float, default=1.0, help="seconds per run (default 1)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--views", action="store_true", help="time shared_view_json per update instead")
    parser.add_argument("--updates", type=int, default=20000, help="updates per --views run (default 20000)")
    args = parser.parse_args()
    if args.views:
        views_main(args)
        return

    ours_runs, base_runs = [], []
    for run in range(args.runs):
        ours_runs.append(ours(args.seconds, args.seed + run))
        base_runs.append(baseline(args.seconds, args.seed + run))
    ratios = [a / b for a, b in zip(ours_runs, base_runs, strict=True)]
    fork, deepcopy_game, depth = fork_costs(args.seed)
    figures = {
        "python": platform.python_version(),
        "runs": args.runs,
        "seconds_per_run": args.seconds,
        "ours_actions_per_s": round(statistics.median(ours_runs)),
        "baseline_actions_per_s": round(statistics.median(base_runs)),
        "ratio_median_of_pairs": round(statistics.median(ratios), 2),
        "ratio_min_max": [round(min(ratios), 2), round(max(ratios), 2)],
        "fork_us": round(fork * 1e6, 2),
        "fork_at_action": depth,
        "baseline_deepcopy_us": round(deepcopy_game * 1e6, 1),
        "goal_ratio": GOAL_RATIO,
        "goal_fork_us": GOAL_FORK_US,
    }
    if args.json:
        print(json.dumps(figures))
        return
    print(f"engine speed · Python {figures['python']} · {args.runs} A/B pairs of {args.seconds:g} s, medians")
    print(f"  ours (Domeng, random legal actions)   {figures['ours_actions_per_s']:>10,} actions/s")
    print(f"  baseline (dominoes 6.1.0, 4 players)  {figures['baseline_actions_per_s']:>10,} actions/s")
    lo, hi = figures["ratio_min_max"]
    verdict = "meets" if figures["ratio_median_of_pairs"] >= GOAL_RATIO else "MISSES"
    print(
        f"  ratio {figures['ratio_median_of_pairs']}x (pairs {lo}-{hi}x) · {verdict} the {GOAL_RATIO}x goal"
    )
    verdict = "meets" if figures["fork_us"] <= GOAL_FORK_US else "MISSES"
    print(
        f"  fork of a mid-round state (action {depth}) {figures['fork_us']} µs · {verdict} the "
        f"{GOAL_FORK_US} µs goal · dominoes deepcopy {figures['baseline_deepcopy_us']} µs"
    )


if __name__ == "__main__":
    main()
