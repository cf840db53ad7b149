"""The bot interface: a bot sees only its seat's `PlayerView` and returns one of its legal actions."""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from typing import ClassVar

from engine.actions import Action
from engine.views import PlayerView

__all__ = ["Bot"]


class Bot(ABC):
    """A player that picks from ``view.legal``; its only randomness is its own ``rng``."""

    name: ClassVar[str]

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    @abstractmethod
    def choose(self, view: PlayerView) -> Action:
        """One of ``view.legal``. Raises ValueError when the view offers no action (not its turn)."""
