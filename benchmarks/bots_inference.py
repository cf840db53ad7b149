"""How well the hard bot's sampled worlds predict the hidden tiles, judged on the true deal.

Positions come from Domeng medium self-play (every decision with a choice, as in
`benchmarks/bots_regret.py`). For each, the seat to act samples ``--worlds`` worlds from its view
(`engine.bots.inference.sample_weighted`) and the script reports, per weighting of those worlds:

- the *log loss* and *Brier score* of the predicted chance that seat s holds tile t, over every
  other seat and unseen tile (lower is better; the truth is the real deal);
- the *rank* of the true deal's weight among the sampled worlds' (0.5: the weighting cannot tell
  the truth from a sampled world; 1: the truth always weighs most) and the mean of
  ``log(weight of the truth / mean weight)`` (nats of evidence for the truth).

Weightings: ``plain`` (every sampled world alike), ``fill`` (the sampler's correction only: a
uniform draw over consistent deals), ``likelihood`` (what the hard bot uses: the correction times
`engine.bots.likelihood.world_weight` with its default kinds), ``medium-only`` (the likelihood with
the medium kind alone, which is the exact model of a medium field).

    .venv/bin/python benchmarks/bots_inference.py --positions 300 --worlds 200
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bots_regret import positions

from engine.bots import likelihood
from engine.bots.inference import infer, sample_weighted
from engine.core import State
from engine.tiles import TILES
from engine.views import player_view

Weighting = Callable[[State, list[int], float], float]


def judge(states: list[State], worlds: int, weigh: Weighting) -> dict[str, float]:
    """The log loss, Brier score, rank and evidence of one weighting (module docstring)."""
    loss = brier = 0.0
    count = 0
    ranks, evidence = [], []
    for k, state in enumerate(states):
        seat = state.to_act
        know = infer(player_view(state, seat))
        rng = random.Random(k)
        held: dict[tuple[int, int], float] = {}
        weights = []
        for _ in range(worlds):
            hands, _, prior = sample_weighted(know, rng)
            weight = weigh(state, hands, prior)
            weights.append(weight)
            for other, hand in enumerate(hands):
                for tile in TILES:
                    if other != seat and hand & tile.bit:
                        held[other, tile.index] = held.get((other, tile.index), 0.0) + weight
        total = sum(weights)
        for other in range(state.seats):
            for tile in TILES:
                if other == seat or not know.unseen & tile.bit:
                    continue
                p = held.get((other, tile.index), 0.0) / total
                y = 1.0 if state.hands[other] & tile.bit else 0.0
                q = min(max(p, 1e-3), 1 - 1e-3)
                loss -= y * math.log(q) + (1 - y) * math.log(1 - q)
                brier += (p - y) ** 2
                count += 1
        truth = weigh(state, list(state.hands), 1.0)
        unweighted = [weigh(state, sample_weighted(know, rng)[0], 1.0) for _ in range(worlds)]
        if max(unweighted) > min(unweighted) or truth != unweighted[0]:
            below = sum(w < truth for w in unweighted) + 0.5 * sum(w == truth for w in unweighted)
            ranks.append(below / worlds)
            evidence.append(math.log(max(truth, 1e-300) / statistics.fmean(unweighted)))
    return {
        "log_loss": loss / count,
        "brier": brier / count,
        "rank": statistics.fmean(ranks) if ranks else 0.5,
        "nats": statistics.fmean(evidence) if evidence else 0.0,
    }


def likelihood_weighting(kinds: tuple[float, float, float]) -> Weighting:
    """``prior * world_weight`` with the likelihood's kinds set to ``kinds``."""

    def weigh(state: State, hands: list[int], prior: float) -> float:
        saved = likelihood.KINDS
        likelihood.KINDS = kinds
        try:
            log = player_view(state, state.to_act).log
            return prior * likelihood.world_weight(log, state.to_act, hands, 5, "domeng", False)
        finally:
            likelihood.KINDS = saved

    return weigh


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=300)
    parser.add_argument("--worlds", type=int, default=200)
    parser.add_argument("--seed", type=int, default=99)
    args = parser.parse_args()
    states = positions(args.positions, args.seed)
    weightings: dict[str, Weighting] = {
        "plain": lambda state, hands, prior: 1.0,
        "fill": lambda state, hands, prior: prior,
        "likelihood": likelihood_weighting(likelihood.KINDS),
        "medium-only": likelihood_weighting((1.0, 0.0, 0.0)),
    }
    print(f"{len(states)} positions, {args.worlds} worlds each")
    print(f"{'weighting':12} {'log loss':>9} {'Brier':>7} {'rank':>6} {'nats':>6}")
    for name, weigh in weightings.items():
        r = judge(states, args.worlds, weigh)
        print(f"{name:12} {r['log_loss']:9.4f} {r['brier']:7.4f} {r['rank']:6.3f} {r['nats']:6.2f}")


if __name__ == "__main__":
    main()
