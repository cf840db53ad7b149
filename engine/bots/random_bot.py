"""The ``random`` bot: a uniformly random legal action."""

from __future__ import annotations

from typing import ClassVar

from engine.actions import Action
from engine.bots.base import Bot
from engine.views import PlayerView

__all__ = ["RandomBot"]


class RandomBot(Bot):
    """Picks uniformly among the legal actions of its view (the weakest level)."""

    name: ClassVar[str] = "random"

    def choose(self, view: PlayerView) -> Action:
        if not view.legal:
            raise ValueError(f"P{view.seat} has no legal action: it is not their turn")
        return self.rng.choice(view.legal)
