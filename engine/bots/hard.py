"""The ``hard`` bot: determinized Monte Carlo search (PIMC) under hidden information.

For each decision it infers what the other hands and the rest can hold (`engine.bots.inference`),
samples worlds consistent with the view, and evaluates every legal action on the same worlds
(common random numbers): a playout with the medium heuristic for every seat, or an exact max^n
solve once few tiles are left (`engine.bots.search`). It takes the action with the lowest mean
loss (Domeng: stones received minus paid; Kozel: points written, the pair's with K10); ties go to
the medium heuristic's preference.

It is anytime: by default it samples worlds until its time budget (``time.perf_counter``) and
answers by its deadline with whatever it has found (the medium choice if not one world was
done). With ``samples`` set it evaluates exactly that many worlds and never reads the clock, so
a seed fixes its decision.
"""

from __future__ import annotations

import random
import time
from typing import ClassVar

from engine.actions import Action
from engine.bots.base import Bot
from engine.bots.inference import infer, sample_hidden
from engine.bots.medium import best_actions, situation_of
from engine.bots.search import evaluate_on_world
from engine.bots.worlds import world_state
from engine.tiles import TILES
from engine.views import PlayerView

__all__ = ["DEFAULT_BUDGET_MS", "HardBot", "evaluate_options"]

DEFAULT_BUDGET_MS = 100.0
"""The hard bot's thinking time per decision, in milliseconds (one core)."""


def evaluate_options(
    view: PlayerView,
    rng: random.Random,
    samples: int | None = 64,
    deadline: float | None = None,
) -> dict[Action, float]:
    """The expected loss of ``view``'s seat for each legal action (Domeng: stones received minus
    paid this round; Kozel: points written this round), averaged over sampled worlds.

    ``samples`` worlds (or, with ``samples=None``, as many as fit before ``deadline``, a
    ``time.perf_counter()`` value). Every action is evaluated on the same worlds. Returns an empty
    mapping when no world could be evaluated in time; raises ValueError when the view offers no
    action.
    """
    legal = list(view.legal)
    if not legal:
        raise ValueError(f"P{view.seat} has no legal action: it is not their turn")
    know = infer(view)
    seat = know.seat
    totals = [0.0] * len(legal)
    done = 0
    slowest = 0.0
    clock = time.perf_counter
    while samples is None or done < samples:
        began = clock() if deadline is not None else 0.0
        if deadline is not None and began + slowest > deadline:
            break
        hands, rest = sample_hidden(know, rng)
        world = world_state(view, hands, rest)
        rest_mask = sum(TILES[i].bit for i in rest)
        losses = evaluate_on_world(world, legal, seat, rest_mask, rng.getrandbits(32))
        if deadline is not None:
            now = clock()
            if now > deadline:
                break
            slowest = max(slowest, now - began)
        totals = [t + x for t, x in zip(totals, losses, strict=True)]
        done += 1
    if not done:
        return {}
    return {action: total / done for action, total in zip(legal, totals, strict=True)}


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
        if not view.legal:
            raise ValueError(f"P{view.seat} has no legal action: it is not their turn")
        if len(view.legal) == 1:
            return view.legal[0]
        deadline = None if self.samples is not None else started + self.budget_ms / 1000
        sit = situation_of(view)
        preferred = best_actions(sit, view.legal)
        values = evaluate_options(view, self.rng, self.samples, deadline)
        if not values:
            return preferred[0]
        low = min(values.values())
        best = [a for a in view.legal if values[a] <= low + 1e-9]
        for action in preferred:
            if action in best:
                return action
        return best[0]
