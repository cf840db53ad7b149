"""Rough strength and speed of the bot levels: one candidate seat against a field, on shared deals.

For each deal (a fresh match: 25 stones on the table, or Kozel 0 points) the field plays it alone,
then the candidate takes seat k (k cycling over the seats, the same deal): the candidate's loss in
seat k is compared with the field's own loss in seat k on that deal (luck mostly cancels).
Domeng loss: stones received in the round; Kozel: points written in the round.

    .venv/bin/python benchmarks/bots_strength.py medium easy --deals 300
    .venv/bin/python benchmarks/bots_strength.py hard medium --deals 100 --budget 50
    .venv/bin/python benchmarks/bots_strength.py omniscient medium --deals 100
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from engine.actions import Action
from engine.bots import BOTS, HardBot, OmniscientBot
from engine.core import Phase, State
from engine.events import DomengOutcome, KozelOutcome, Passed, RoundEnded
from engine.variants import make_rules
from engine.views import player_view

Chooser = Callable[[State, int], Action]


def chooser(name: str, seed: int, budget: float, samples: int | None) -> Chooser:
    rng = random.Random(seed)
    if name == "omniscient":
        omni = OmniscientBot(rng)
        return omni.choose_seeing
    bot = HardBot(rng, budget_ms=budget, samples=samples) if name == "hard" else BOTS[name](rng)
    return lambda state, seat: bot.choose(player_view(state, seat))


def losses(state: State) -> list[int]:
    out = [0] * state.seats
    for event in state.log:
        if type(event) is Passed and event.settlement is not None:
            out[event.settlement.receiver] += event.settlement.received
        elif type(event) is RoundEnded:
            outcome = event.outcome
            if isinstance(outcome, DomengOutcome):
                out[outcome.settlement.receiver] += outcome.settlement.received
            elif isinstance(outcome, KozelOutcome):
                out = list(outcome.written)
    return out


def play(
    rules_args: tuple[str, dict[str, object], int],
    deal_seed: int,
    players: list[Chooser],
    times: list[float],
    timed: int | None,
) -> list[int]:
    rules = make_rules(*rules_args)
    state = rules.new_match()
    state.start_round(rules.deal_from_seed(deal_seed))
    while state.phase is Phase.PLAYING:
        seat = state.to_act
        began = time.perf_counter()
        action = players[seat](state, seat)
        if seat == timed and len(state.legal_actions()) > 1:
            times.append((time.perf_counter() - began) * 1000)
        state.apply(action)
    return losses(state)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("candidate")
    parser.add_argument("field")
    parser.add_argument("--deals", type=int, default=200)
    parser.add_argument("--first", type=int, default=0, help="the first deal's seed (a fresh set of deals)")
    parser.add_argument("--variant", default="domeng")
    parser.add_argument("--seats", type=int, default=5)
    parser.add_argument("--pairs", action="store_true")
    parser.add_argument("--budget", type=float, default=100.0)
    parser.add_argument("--samples", type=int, default=None)
    args = parser.parse_args()
    options: dict[str, object] = {"pairs": True} if args.pairs else {}
    rules_args = (args.variant, options, args.seats)
    cand, base, times = [], [], []
    for deal in range(args.first, args.first + args.deals):
        seat = deal % args.seats
        field = [chooser(args.field, deal * 10 + s, args.budget, args.samples) for s in range(args.seats)]
        alone = play(rules_args, deal, field, [], None)
        mixed = list(field)
        mixed[seat] = chooser(args.candidate, deal * 10 + 7, args.budget, args.samples)
        with_candidate = play(rules_args, deal, mixed, times, seat)
        cand.append(with_candidate[seat])
        base.append(alone[seat])
    diffs = [c - b for c, b in zip(cand, base, strict=True)]
    mean_c, mean_b = statistics.fmean(cand), statistics.fmean(base)
    err = statistics.stdev(diffs) / len(diffs) ** 0.5
    print(f"{args.candidate} vs field {args.field} ({args.variant}, {args.seats} seats, {args.deals} deals)")
    print(
        f"  candidate {mean_c:.3f}, field {mean_b:.3f}, ratio {mean_c / max(mean_b, 1e-9):.3f},",
        f"diff {mean_c - mean_b:+.3f} ± {2 * err:.3f}",
    )
    if times:
        q = statistics.quantiles(times, n=100)
        print(
            f"  decision ms: n={len(times)} p50 {q[49]:.2f} p95 {q[94]:.2f} p99 {q[98]:.2f}",
            f"max {max(times):.2f}",
        )


if __name__ == "__main__":
    main()
