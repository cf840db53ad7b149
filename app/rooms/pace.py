"""The human-like moment a bot waits before it plays: varied, and shorter for a forced pass or draw.

A fixed pause makes bots feel mechanical; people take a moment that varies from move to move, less
for a pass or a draw they cannot avoid. `pause_s` draws that moment from the room's own
``random.Random`` (so a test that pins the room's rng gets fixed pauses). The bot's compute time
counts into it: the room asks the `BotPort` at once and plays when both the pause and the decision
are done, so a 120 ms search does not lengthen a 900 ms pause.

The pause tells nothing a seat may not see (D20). Whether a move is forced is public once it is
made: a pass or a draw is only ever the one legal action (RULES.md: a pass only when no tile
fits; K3: no voluntary pass, no drawing while holding a fit). How many tiles fit is the bot's own
knowledge, so every move that places a tile draws from the same range, whether one tile fits or
five: a pause that grew with the count let a spectator with a stopwatch tell a bot (or a person a
bot covers) with one fitting tile.
"""

from __future__ import annotations

import random

__all__ = ["FORCED_RANGE", "PAUSE_RANGE", "pause_s"]

FORCED_RANGE = (0.5, 0.8)
"""A forced move's pause (the one legal action is a pass or a draw), in multiples of the setting."""

PAUSE_RANGE = (0.6, 1.6)
"""The pause of a move that places a tile, however many fit, in multiples of the setting."""


def pause_s(rng: random.Random, delay_s: float, forced: bool) -> float:
    """Seconds to wait before a bot's (or a forced) move when the room's pause setting is
    ``delay_s`` seconds; ``forced``: the seat's one legal action is a pass or a draw. 0 when
    ``delay_s`` is 0 (tests), otherwise 0.5x to 0.8x of it when forced, 0.6x to 1.6x when not.
    Draws once from ``rng``.

    >>> pause_s(random.Random(1), 0.0, False)
    0.0
    >>> 0.5 * 0.7 <= pause_s(random.Random(1), 0.7, True) <= 0.8 * 0.7
    True
    """
    if delay_s <= 0:
        return 0.0
    low, high = FORCED_RANGE if forced else PAUSE_RANGE
    return delay_s * rng.uniform(low, high)
