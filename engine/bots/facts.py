"""The rules a bot's view is played under, asked once per variant, options and seat count."""

from __future__ import annotations

from functools import lru_cache

from engine.rules.base import Rules
from engine.variants import make_rules
from engine.views import PlayerView

__all__ = ["facts_of", "in_pairs", "pairs_of", "rules_of"]


@lru_cache(maxsize=64)
def _facts(variant: str, options: tuple[tuple[str, object], ...], seats: int) -> tuple[Rules, bool]:
    rules = make_rules(variant, dict(options), seats)
    return rules, in_pairs(rules)


_LAST: list[tuple[str, dict[str, object], int, tuple[Rules, bool]] | None] = [None]
"""The last answer of `facts_of` with its key (a copy of the options): one match's views repeat it."""


def facts_of(view: PlayerView) -> tuple[Rules, bool]:
    """``(rules_of(view), pairs_of(view))``: the last answer again when the variant, options and
    seat count are the same (the bots' hot path), else from a cache of the rules."""
    seats = len(view.hand_counts)
    last = _LAST[0]
    if last is not None and last[0] == view.variant and last[2] == seats and last[1] == view.options:
        return last[3]
    # the options in their own order: equal options in another order only take another entry
    facts = _facts(view.variant, tuple(view.options.items()), seats)
    _LAST[0] = (view.variant, dict(view.options), seats, facts)
    return facts


def rules_of(view: PlayerView) -> Rules:
    """The `Rules` of ``view``'s match (cached: views of one match share one object)."""
    return facts_of(view)[0]


def pairs_of(view: PlayerView) -> bool:
    """`in_pairs` of ``view``'s rules (cached)."""
    return facts_of(view)[1]


def in_pairs(rules: Rules) -> bool:
    """Whether ``rules`` score seats in pairs (a side of more than one seat; Kozel K10)."""
    return len(rules.sides()) < rules.seats
