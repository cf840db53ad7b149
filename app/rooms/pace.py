"""The human-like moment a bot waits before it plays: varied, shorter when forced, longer when it has choices.

A fixed pause makes bots feel mechanical; people take a moment that varies from move to move, less
for a pass they cannot avoid, more when several tiles fit. `pause_s` draws that moment from the
room's own ``random.Random`` (so a test that pins the room's rng gets fixed pauses). The bot's
compute time counts into it: the room asks the `BotPort` at once and plays when both the pause
and the decision are done, so a 120 ms search does not lengthen a 900 ms pause.
"""

from __future__ import annotations

import random

__all__ = ["CHOICE_STEP", "FORCED_RANGE", "PAUSE_RANGE", "pause_s"]

FORCED_RANGE = (0.5, 0.8)
"""A forced move's pause (one legal action: a pass or a draw), in multiples of the setting."""

PAUSE_RANGE = (0.6, 1.3)
"""A choice's pause before `CHOICE_STEP` is added, in multiples of the setting."""

CHOICE_STEP = 0.1
"""Added per legal action beyond the first (three at most), in multiples of the setting: a
decision between four tiles takes longer than between two."""


def pause_s(rng: random.Random, delay_s: float, choices: int) -> float:
    """Seconds to wait before a bot's (or a forced) move when the room's pause setting is
    ``delay_s`` seconds and the seat has ``choices`` legal actions (>= 1). 0 when ``delay_s`` is
    0 (tests), otherwise between 0.5x and 1.6x of it. Draws once from ``rng``.

    >>> pause_s(random.Random(1), 0.0, 3)
    0.0
    >>> 0.5 * 0.7 <= pause_s(random.Random(1), 0.7, 1) <= 0.8 * 0.7
    True
    """
    if delay_s <= 0:
        return 0.0
    if choices <= 1:
        low, high = FORCED_RANGE
        return delay_s * rng.uniform(low, high)
    low, high = PAUSE_RANGE
    return delay_s * (rng.uniform(low, high) + CHOICE_STEP * min(choices - 1, 3))
