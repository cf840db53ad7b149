"""The rules a bot's view is played under, asked once per variant, options and seat count."""

from __future__ import annotations

from functools import lru_cache

from engine.rules.base import Rules
from engine.variants import make_rules
from engine.views import PlayerView

__all__ = ["in_pairs", "rules_of"]


@lru_cache(maxsize=64)
def _rules(variant: str, options: tuple[tuple[str, object], ...], seats: int) -> Rules:
    return make_rules(variant, dict(options), seats)


def rules_of(view: PlayerView) -> Rules:
    """The `Rules` of ``view``'s match (cached: views of one match share one object)."""
    return _rules(view.variant, tuple(sorted(view.options.items())), len(view.hand_counts))


def in_pairs(rules: Rules) -> bool:
    """Whether ``rules`` score seats in pairs (a side of more than one seat; Kozel K10)."""
    return len(rules.sides()) < rules.seats
