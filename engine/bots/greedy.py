"""The ``greedy`` bot: a one-ply heuristic over the legal actions, from its view alone.

Each legal action gets a score; the best wins, ties broken at random:

1. Going out (placing the last tile) beats everything; pollo beats ceki beats a plain out, since
   the cucuq owes more and the table pays first (Domeng). Kozel's two-lempas move counts as two
   tiles shed.
2. Otherwise shed pips: the higher the tile's pip sum, the better. In Domeng a blocked round is
   settled by pip sums (D8), in Kozel leftover pips are points against you (K6).
3. Then keep options: prefer the placement after which more of the bot's remaining tiles fit an
   open end, so its next turn is less likely to be a pass (a stone) or a draw.
4. Then prefer a mappakuling placement in Domeng: it narrows the next players to one number.

Forced actions (a pass, a draw) are simply taken. In Kozel this reads: prefer the two-lempas move
(K4), then the highest-pip tile, then the placement that keeps more of the hand playable; draws
come one at a time as the only legal action until a tile fits (K3).
"""

from __future__ import annotations

from typing import ClassVar

from engine.actions import Action, Play, PlayLempas
from engine.bots.base import Bot, forced_action
from engine.bots.facts import rules_of
from engine.views import PlayerView

__all__ = ["GreedyBot"]


def _ends_after(ends: tuple[int, int] | None, action: Play) -> tuple[int, int]:
    tile = action.tile
    if ends is None:
        return (tile.high, tile.low) if action.flip else (tile.low, tile.high)
    left, right = ends
    if action.end == "R":
        return left, tile.other(right)
    return tile.other(left), right


class GreedyBot(Bot):
    """A simple, documented heuristic (see the module docstring); deterministic up to ties."""

    name: ClassVar[str] = "greedy"

    def choose(self, view: PlayerView) -> Action:
        forced = forced_action(view)
        if forced is not None:
            return forced
        counts = rules_of(view).mappakuling_counts
        scored = [(self._score(view, action, counts), action) for action in view.legal]
        best = max(score for score, _ in scored)
        return self.rng.choice([action for score, action in scored if score == best])

    def _score(self, view: PlayerView, action: Action, mappakuling_counts: bool) -> tuple[int, int, int, int]:
        hand = view.hand or ()
        if isinstance(action, PlayLempas):
            remaining = [t for t in hand if t not in action.tiles]
            shed = sum(t.pips for t in action.tiles) + 13  # two tiles at once
            return (0 if remaining else 3, shed, 0, 0)
        if not isinstance(action, Play):
            return (0, 0, 0, 0)
        remaining = [t for t in hand if t is not action.tile]
        left, right = _ends_after(view.ends, action)
        if not remaining:
            kind = 1 + (left == right and view.ends is not None) + action.tile.is_lempa * (left == right)
            return (kind, 0, 0, 0)
        keep = sum(1 for t in remaining if t.has(left) or t.has(right))
        mappakuling = int(left == right and view.ends is not None and mappakuling_counts)
        return (0, action.tile.pips, keep, mappakuling)
