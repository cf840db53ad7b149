"""The bot interface: a bot sees only its seat's `PlayerView` and returns one of its legal actions."""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from typing import ClassVar

from engine.actions import Action
from engine.views import PlayerView

__all__ = ["Bot", "check_turn", "forced_action"]


class Bot(ABC):
    """A player that picks from ``view.legal``; its only randomness is its own ``rng``."""

    name: ClassVar[str]

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    @abstractmethod
    def choose(self, view: PlayerView) -> Action:
        """One of ``view.legal``. Raises ValueError when the view offers no action (not its turn)."""


def check_turn(view: PlayerView) -> None:
    """Raise ValueError when ``view`` offers its seat no action (it is not their turn)."""
    if not view.legal:
        raise ValueError(f"P{view.seat} has no legal action: it is not their turn")


def forced_action(view: PlayerView) -> Action | None:
    """The one legal action when there is only one (a bot need not think), else None; raises
    ValueError when there is none (`check_turn`)."""
    check_turn(view)
    return view.legal[0] if len(view.legal) == 1 else None
