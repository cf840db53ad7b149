"""The hard bot's gain over the medium heuristic per decision, judged on the true deal.

Positions come from medium self-play (seeded; Domeng, or Kozel with ``--variant kozel --seats N
[--pairs]``, first rounds of fresh matches): every decision with a choice. For each, the
*true value* of every legal action is its loss for the seat to act when, after it, every seat plays
the medium heuristic on the real hands (`engine.bots.search.playout`, mean of 4 tie-break seeds).
The hard bot's search (`engine.bots.hard.world_losses`, only the view) then gives its rows, and
for each number of worlds and switch margin the script reports the mean of ``true value of medium's
choice - true value of the search's choice`` (stones per decision, Kozel points; positive: the
search helps), its ±2 standard errors, and how often the search left medium's choice. The
*oracle* line is what a seat seeing every hand would gain (the best true value).

Far cheaper than the arena for comparing search settings, since one search serves every margin,
but it judges one decision at a time, with medium playing the rest of the round.

The true value of one deal is a very noisy judge (a round played out from one deal swings by
stones on a single placement). With ``--judge-worlds J`` each decision is also judged by its
*posterior gain*: the mean loss of medium's choice minus the search's choice over J further worlds
sampled and weighted from the same view, independent of the search's (the expected gain if the
hard bot's model of the hidden tiles is right; far less noisy). The line ``best one-step`` is the
posterior gain of the judge's own best action: what any choice of this one move could gain under
that model (biased upward by selecting on the same worlds).

    .venv/bin/python benchmarks/bots_regret.py --positions 300 --worlds 200
    .venv/bin/python benchmarks/bots_regret.py --positions 150 --worlds 400 --judge-worlds 1000
    .venv/bin/python benchmarks/bots_regret.py --variant kozel --seats 3 --positions 150 --worlds 60 \
        --judge-worlds 300
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from math import sqrt
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.bots import make_bot
from engine.bots.hard import choose_from, world_losses
from engine.bots.inference import public_missing
from engine.bots.medium import best_actions, situation_of
from engine.bots.search import playout
from engine.bots.worlds import round_costs
from engine.core import Phase, State
from engine.tiles import mask_of
from engine.variants import make_rules
from engine.views import player_view


def positions(
    count: int, seed: int, variant: str = "domeng", seats: int | None = None, pairs: bool = False
) -> list[State]:
    """The first ``count`` decisions with a choice in medium self-play from ``seed`` (the first
    round of fresh matches) of ``variant`` with ``seats`` (Kozel: ``pairs``, K10)."""
    rules = make_rules(variant, {"pairs": True} if pairs else {}, seats)
    rng = random.Random(seed)
    found: list[State] = []
    while len(found) < count:
        players = [make_bot("medium", random.Random(rng.getrandbits(32))) for _ in range(rules.seats)]
        state = rules.new_match()
        state.start_round(rules.deal(rng))
        while state.phase is Phase.PLAYING:
            if len(state.legal_actions()) > 1:
                found.append(state.fork())
            seat = state.to_act
            state.apply(players[seat].choose(player_view(state, seat)))
    return found[:count]


def true_values(state: State) -> list[float]:
    """Each legal action's loss for the seat to act on the real hands, medium playing on."""
    seat = state.to_act
    rest, start = mask_of(state.rest()), len(state.log)
    missing = public_missing(player_view(state, seat))
    values = []
    for action in state.legal_actions():
        total = 0.0
        for seed in range(4):
            child = state.fork()
            child.apply(action)
            playout(child, rest, random.Random(seed), missing)
            total += round_costs(child, start)[seat]
        values.append(total / 4)
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=300)
    parser.add_argument("--worlds", type=int, default=200)
    parser.add_argument("--seed", type=int, default=99)
    parser.add_argument("--judge-worlds", type=int, default=0, help="also judge by the posterior gain")
    parser.add_argument("--variant", default="domeng", choices=("domeng", "kozel"))
    parser.add_argument("--seats", type=int, help="Kozel: 2, 3 or 4 seats (default: the variant's)")
    parser.add_argument("--pairs", action="store_true", help="Kozel, 4 seats: P0+P2 against P1+P3 (K10)")
    args = parser.parse_args()
    cases = []
    judged: list[list[float]] = []
    found = positions(args.positions, args.seed, args.variant, args.seats, args.pairs)
    for k, state in enumerate(found):
        view = player_view(state, state.to_act)
        preferred = view.legal.index(best_actions(situation_of(view), view.legal)[0])
        rows, weights = world_losses(view, random.Random(k), args.worlds)
        cases.append((true_values(state), preferred, rows, weights, view.legal))
        if args.judge_worlds:
            judge_rows, judge_weights = world_losses(view, random.Random(10**6 + k), args.judge_worlds)
            total = sum(judge_weights)
            legal_count = len(view.legal)
            mean_loss = [
                sum(w * row[i] for row, w in zip(judge_rows, judge_weights, strict=True)) / total
                for i in range(legal_count)
            ]
            judged.append(mean_loss)
    oracle = [values[p] - min(values) for values, p, *_ in cases]
    unit = "stones" if args.variant == "domeng" else "points"
    print(f"{len(cases)} positions; oracle gain {statistics.mean(oracle):.3f} {unit} per decision")
    if judged:
        best = [ev[case[1]] - min(ev) for ev, case in zip(judged, cases, strict=True)]
        print(f"best one-step posterior gain {statistics.mean(best):+.4f} ({args.judge_worlds} judge worlds)")
    for worlds in sorted({w for w in (25, 50, 100, 200, 400, 800) if w < args.worlds} | {args.worlds}):
        for margin in (0.0, 0.5, 1.0, 1.5):
            gains, posterior, switched = [], [], 0
            for k, (values, p, rows, weights, legal) in enumerate(cases):
                chosen = legal.index(choose_from(legal, rows[:worlds], weights[:worlds], legal[p], margin))
                switched += chosen != p
                gains.append(values[p] - values[chosen])
                if judged:
                    posterior.append(judged[k][p] - judged[k][chosen])
            spread = 2 * statistics.stdev(gains) / sqrt(len(gains))
            line = (
                f"worlds {worlds:4d} margin {margin:.1f}: gain {statistics.mean(gains):+.3f} ± {spread:.3f}"
            )
            if posterior:
                judge_spread = 2 * statistics.stdev(posterior) / sqrt(len(posterior))
                line += f"  posterior gain {statistics.mean(posterior):+.4f} ± {judge_spread:.4f}"
            print(f"{line}  switched {switched / len(cases):.2f}")


if __name__ == "__main__":
    main()
