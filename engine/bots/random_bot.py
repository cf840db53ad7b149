"""The ``random`` bot: a uniformly random legal action."""

from __future__ import annotations

from typing import ClassVar

from engine.actions import Action
from engine.bots.base import Bot, check_turn
from engine.views import PlayerView

__all__ = ["RandomBot"]


class RandomBot(Bot):
    """Picks uniformly among the legal actions of its view (the weakest level)."""

    name: ClassVar[str] = "random"

    def choose(self, view: PlayerView) -> Action:
        check_turn(view)
        return self.rng.choice(view.legal)
