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


def facts_of(view: PlayerView) -> tuple[Rules, bool]:
    """``(rules_of(view), pairs_of(view))`` with one cache look-up (the medium bot's hot path)."""
    # the options in their own order: equal options in another order only take another entry
    return _facts(view.variant, tuple(view.options.items()), len(view.hand_counts))


def rules_of(view: PlayerView) -> Rules:
    """The `Rules` of ``view``'s match (cached: views of one match share one object)."""
    return facts_of(view)[0]


def pairs_of(view: PlayerView) -> bool:
    """`in_pairs` of ``view``'s rules (cached)."""
    return facts_of(view)[1]


def in_pairs(rules: Rules) -> bool:
    """Whether ``rules`` score seats in pairs (a side of more than one seat; Kozel K10)."""
    return len(rules.sides()) < rules.seats
