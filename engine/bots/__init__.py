"""Bots that play from a `PlayerView` alone: the registry finds one by name and strength.

Levels for players: ``easy``, ``medium``, ``hard`` (`PLAYER_LEVELS`); ``random`` and ``greedy``
stay for stored matches that name them. The omniscient bot sees the real state and exists for
measurement only (`MEASUREMENT_BOTS`), never in `BOTS`.
"""

from __future__ import annotations

import random

from engine.bots.base import Bot
from engine.bots.easy import EasyBot
from engine.bots.greedy import GreedyBot
from engine.bots.hard import HardBot, evaluate_options
from engine.bots.medium import MediumBot
from engine.bots.omniscient import OmniscientBot
from engine.bots.random_bot import RandomBot

__all__ = [
    "BOTS",
    "COVER_LEVEL",
    "MEASUREMENT_BOTS",
    "PLAYER_LEVELS",
    "Bot",
    "EasyBot",
    "GreedyBot",
    "HardBot",
    "MediumBot",
    "OmniscientBot",
    "RandomBot",
    "evaluate_options",
    "make_bot",
]

BOTS: dict[str, type[Bot]] = {
    RandomBot.name: RandomBot,
    GreedyBot.name: GreedyBot,
    EasyBot.name: EasyBot,
    MediumBot.name: MediumBot,
    HardBot.name: HardBot,
}
"""Every bot a seat may play with, by its level name; ``random`` and ``greedy`` are legacy levels
that stored matches name."""

PLAYER_LEVELS: tuple[str, ...] = ("easy", "medium", "hard")
"""The levels the lobby offers, weakest first."""

COVER_LEVEL = "medium"
"""The level of the bot that covers for an absent player."""

MEASUREMENT_BOTS = {"omniscient": OmniscientBot}
"""Bots for measurement only (they see the real state); never offered to players."""


def make_bot(name: str, rng: random.Random) -> Bot:
    """A new bot of level ``name`` drawing its choices from ``rng``; raises ValueError if unknown."""
    try:
        return BOTS[name](rng)
    except KeyError:
        raise ValueError(f"unknown bot {name!r} (known: {', '.join(BOTS)})") from None
