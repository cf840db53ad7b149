"""The ``easy`` bot: a beginner with simple habits and some deliberate mistakes.

1. It always takes a move that goes out (the round ends in its favour): pollo before ceki
   before a plain out in Domeng; the two-lempas move too in Kozel (K4). Not doing so looks broken.
2. Otherwise, one time in three it plays a legal action at random (a beginner's mistake).
3. Otherwise its habit: lay the heaviest tile (pips), ties at random. It does not count tiles,
   read passes or think about the next seat.
"""

from __future__ import annotations

from typing import ClassVar

from engine.actions import Action, Play, PlayLempas
from engine.bots.base import Bot, forced_action
from engine.tiles import mask_of
from engine.views import PlayerView

__all__ = ["MISTAKE_RATE", "EasyBot", "going_out"]

MISTAKE_RATE = 1 / 3
"""How often the easy bot ignores its habit and plays a random legal action."""


def going_out(view: PlayerView) -> list[Action]:
    """The legal actions of ``view`` that place the seat's last tile(s), best out first (pollo,
    then ceki, then a plain out, D5; Kozel's two-lempas out among them, K4)."""
    hand = mask_of(view.hand or ())
    outs: list[tuple[int, Action]] = []
    for action in view.legal:
        if isinstance(action, PlayLempas):
            if not hand & ~(action.tiles[0].bit | action.tiles[1].bit):
                outs.append((0, action))
        elif isinstance(action, Play) and hand == action.tile.bit:
            outs.append((-_out_kind(view, action), action))
    return [a for _, a in sorted(outs, key=lambda pair: pair[0])]


def _out_kind(view: PlayerView, action: Play) -> int:
    """2 for pollo, 1 for ceki, 0 for a plain out (the last placement decides, D15)."""
    if view.ends is None:
        return 0
    left, right = view.ends
    tile = action.tile
    after = (tile.other(left), right) if action.end != "R" else (left, tile.other(right))
    if after[0] != after[1]:
        return 0
    return 2 if tile.is_lempa else 1


class EasyBot(Bot):
    """A beginner (see the module docstring)."""

    name: ClassVar[str] = "easy"

    def choose(self, view: PlayerView) -> Action:
        forced = forced_action(view)
        if forced is not None:
            return forced
        outs = going_out(view)
        if outs:
            return outs[0]
        if self.rng.random() < MISTAKE_RATE:
            return self.rng.choice(view.legal)
        weights = [_pips(a) for a in view.legal]
        top = max(weights)
        return self.rng.choice([a for a, w in zip(view.legal, weights, strict=True) if w == top])


def _pips(action: Action) -> int:
    if isinstance(action, PlayLempas):
        return sum(t.pips for t in action.tiles)
    return action.tile.pips if isinstance(action, Play) else 0
