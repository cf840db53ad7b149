"""The ``hard`` bot: determinized Monte Carlo search (PIMC) under hidden information.

For each decision it infers what the other hands and the rest can hold (`engine.bots.inference`),
samples worlds consistent with the view, weights each by how well it explains the other seats'
placements (`engine.bots.likelihood`; unlikely worlds go through `roulette` before any playout),
and evaluates every legal action on the same worlds (common random numbers): a playout with the
medium heuristic for every seat, or an exact max^n solve once few tiles are left
(`engine.bots.search`). It takes the action with the lowest mean loss (Domeng: stones received
minus paid; Kozel: points written, the pair's with K10); ties go to the medium heuristic's
preference: it leaves the medium choice only for an action that is better by more than
`SWITCH_MARGIN` standard errors of the paired differences.

It is anytime: by default it samples worlds until its time budget (``time.perf_counter``) and
answers by its deadline with whatever it has found (the medium choice if not one world was
done). With ``samples`` set it evaluates exactly that many worlds and never reads the clock, so
a seed fixes its decision.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from math import sqrt
from typing import ClassVar

from engine.actions import Action
from engine.bots.base import Bot, check_turn, forced_action
from engine.bots.facts import pairs_of, rules_of
from engine.bots.inference import infer, public_missing, sample_weighted
from engine.bots.likelihood import world_weight
from engine.bots.medium import best_actions, situation_of
from engine.bots.search import evaluate_on_world
from engine.bots.worlds import world_state
from engine.tiles import TILES
from engine.views import PlayerView

__all__ = [
    "DEFAULT_BUDGET_MS",
    "MAX_PROPOSALS",
    "ROULETTE_LEVEL",
    "SWITCH_MARGIN",
    "HardBot",
    "choose_from",
    "evaluate_options",
    "roulette",
    "world_losses",
]

DEFAULT_BUDGET_MS = 100.0
"""The hard bot's thinking time per decision, in milliseconds (one core)."""

ROULETTE_LEVEL = 2.0
"""`roulette`'s level, as a multiple of the mean likelihood of the worlds proposed so far: worlds
below it are evaluated only in proportion to their likelihood (measured on 80 Domeng positions:
about twice the effective worlds per millisecond of a plain weighted average)."""

MAX_PROPOSALS = 64
"""At most this many worlds proposed per world evaluated (a guard; roulette rarely needs more than
a few)."""

SWITCH_MARGIN = 1.0
"""The hard bot leaves the medium heuristic's choice only for an action whose mean gain over it,
paired over the same worlds, exceeds this many standard errors (sampling noise is not a reason)."""


def world_losses(
    view: PlayerView,
    rng: random.Random,
    samples: int | None = 64,
    deadline: float | None = None,
) -> tuple[list[list[float]], list[float]]:
    """Per evaluated world, the loss of ``view``'s seat after each of ``view.legal`` (in order), and
    the world's weight: its likelihood (`engine.bots.likelihood.world_weight`) times its sampling
    correction (`engine.bots.inference.sample_weighted`), after `roulette`.

    ``samples`` worlds are evaluated, or, with ``samples=None``, as many as fit before ``deadline``
    (a ``time.perf_counter()`` value; a world not finished by then is dropped). Every action is
    evaluated on the same worlds with the same playout seed (common random numbers). Raises
    ValueError when the view offers no action.
    """
    check_turn(view)
    legal = list(view.legal)
    know = infer(view)
    rows: list[list[float]] = []
    weights: list[float] = []
    rules = rules_of(view)
    pairs = pairs_of(view)
    start_size = rules.hand_sizes()[know.seat]
    slowest = 0.0
    clock = time.perf_counter
    proposed = 0
    proposed_weight = 0.0
    memo: dict[tuple[int, int], tuple[float, float, float]] = {}
    missing = public_missing(view)
    while samples is None or len(rows) < samples:
        began = clock() if deadline is not None else 0.0
        if deadline is not None and began + slowest > deadline:
            break
        hands, rest, prior = sample_weighted(know, rng)
        likelihood = prior * world_weight(view.log, know.seat, hands, start_size, rules.name, pairs, memo)
        proposed += 1
        proposed_weight += likelihood
        weight = roulette(likelihood, ROULETTE_LEVEL * proposed_weight / proposed, rng)
        if weight is None and proposed < MAX_PROPOSALS * (len(rows) + 1):
            continue
        world = world_state(view, hands, rest)
        rest_mask = sum(TILES[i].bit for i in rest)
        seed = rng.getrandbits(32)
        losses = evaluate_on_world(world, legal, know.seat, rest_mask, seed, 0, deadline, missing)
        if losses is None:
            break
        if deadline is not None:
            now = clock()
            if now > deadline:
                break
            slowest = max(slowest, now - began)
        rows.append(losses)
        weights.append(likelihood if weight is None else weight)
    return rows, weights


def roulette(likelihood: float, level: float, rng: random.Random) -> float | None:
    """Russian roulette on a world's ``likelihood`` (importance weight): a world at or above
    ``level`` is kept with its own weight; one below is kept with chance ``likelihood / level``
    and then weighs ``level``, else dropped (None) before any playout. The expected weight is
    unchanged, but worlds that would count little in the average no longer cost a playout each.
    """
    if likelihood >= level:
        return likelihood
    if rng.random() * level < likelihood:
        return level
    return None


def evaluate_options(
    view: PlayerView,
    rng: random.Random,
    samples: int | None = 64,
    deadline: float | None = None,
) -> dict[Action, float]:
    """The expected loss of ``view``'s seat for each legal action (Domeng: stones received minus
    paid this round; Kozel: points written this round), averaged over sampled worlds (see
    `world_losses` for ``samples`` and ``deadline``). Empty when no world was evaluated in time;
    raises ValueError when the view offers no action.
    """
    rows, weights = world_losses(view, rng, samples, deadline)
    if not rows:
        return {}
    total = sum(weights, 0.0)
    return {
        action: sum(w * row[i] for row, w in zip(rows, weights, strict=True)) / total
        for i, action in enumerate(view.legal)
    }


def choose_from(
    legal: Sequence[Action],
    rows: list[list[float]],
    weights: list[float],
    preferred: Action,
    margin: float = SWITCH_MARGIN,
) -> Action:
    """From `world_losses`' ``rows`` and ``weights``: the action of ``legal`` with the lowest
    weighted mean loss, unless its gain over ``preferred`` (paired over the same worlds) is within
    ``margin`` standard errors: then ``preferred``."""
    top = max(weights, default=0.0)
    weights = [w / top for w in weights] if top > 0 else [1.0] * len(rows)
    total = sum(weights, 0.0)
    effective = total * total / sum(w * w for w in weights)
    base = legal.index(preferred)
    best, best_gain = preferred, 0.0
    for i, action in enumerate(legal):
        if i == base:
            continue
        diffs = [row[base] - row[i] for row in rows]
        mean = sum(w * d for w, d in zip(weights, diffs, strict=True)) / total
        if mean <= best_gain:
            continue
        spread = sum(w * (d - mean) ** 2 for w, d in zip(weights, diffs, strict=True)) / total
        if effective > 1 and mean > margin * sqrt(spread / (effective - 1)):
            best, best_gain = action, mean
    return best


class HardBot(Bot):
    """PIMC search (see the module docstring).

    ``budget_ms``: the time per decision (default `DEFAULT_BUDGET_MS`), scaled by
    ``budget_scale`` (an arena may run it faster); ``samples``: a fixed number of worlds instead
    of the clock (deterministic for a seed).
    """

    name: ClassVar[str] = "hard"

    def __init__(
        self,
        rng: random.Random,
        budget_ms: float = DEFAULT_BUDGET_MS,
        samples: int | None = None,
        budget_scale: float = 1.0,
    ) -> None:
        super().__init__(rng)
        self.budget_ms = budget_ms * budget_scale
        self.samples = samples

    def choose(self, view: PlayerView) -> Action:
        started = time.perf_counter()
        forced = forced_action(view)
        if forced is not None:
            return forced
        deadline = None if self.samples is not None else started + self.budget_ms / 1000
        sit = situation_of(view)
        preferred = best_actions(sit, view.legal)
        rows, weights = world_losses(view, self.rng, self.samples, deadline)
        if not rows:
            return preferred[0]
        return choose_from(view.legal, rows, weights, preferred[0])
