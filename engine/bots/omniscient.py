"""A bot that sees every hand, for measurement only: the ceiling of what better information gives.

It runs the hard bot's search (`engine.bots.search`) on the one true world instead of sampled
ones. It is never offered to players: it is not in `engine.bots.BOTS`, and its entry point takes
the real `State`, which no player's bot ever gets.
"""

from __future__ import annotations

import random

from engine.actions import Action
from engine.bots.search import evaluate_on_world
from engine.core import Phase, State
from engine.tiles import mask_of

__all__ = ["OmniscientBot"]


class OmniscientBot:
    """Searches the true position: ``samples`` playouts per action (they differ only in the
    playout policy's tie-breaks), or an exact solve near the end."""

    name = "omniscient"

    def __init__(self, rng: random.Random, samples: int = 4) -> None:
        self.rng = rng
        self.samples = samples

    def choose_seeing(self, state: State, seat: int) -> Action:
        """The action for ``seat`` (the seat to act) in the real ``state``, which is not changed
        (the search works on forks). Raises ValueError when it is not ``seat``'s turn."""
        if state.phase is not Phase.PLAYING or state.to_act != seat:
            raise ValueError(f"P{seat} has no legal action: it is not their turn")
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]
        # the rest as it stands; once Kozel's bazaar is empty, the deal's bazaar as before
        rest = mask_of(state.rest() or (state.deal.rest if state.deal else ()))
        start = len(state.log)
        totals = [0.0] * len(legal)
        for _ in range(self.samples):
            losses = evaluate_on_world(state, legal, seat, rest, self.rng.getrandbits(32), start)
            assert losses is not None  # no deadline
            totals = [t + x for t, x in zip(totals, losses, strict=True)]
        low = min(totals)
        return legal[totals.index(low)]
