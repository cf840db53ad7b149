"""Bots that play from a `PlayerView` alone: the registry finds one by name and strength."""

from __future__ import annotations

import random

from engine.bots.base import Bot
from engine.bots.greedy import GreedyBot
from engine.bots.random_bot import RandomBot

__all__ = ["BOTS", "Bot", "GreedyBot", "RandomBot", "make_bot"]

BOTS: dict[str, type[Bot]] = {RandomBot.name: RandomBot, GreedyBot.name: GreedyBot}
"""Every bot by its level name, weakest first."""


def make_bot(name: str, rng: random.Random) -> Bot:
    """A new bot of level ``name`` drawing its choices from ``rng``; raises ValueError if unknown."""
    try:
        return BOTS[name](rng)
    except KeyError:
        raise ValueError(f"unknown bot {name!r} (known: {', '.join(BOTS)})") from None
