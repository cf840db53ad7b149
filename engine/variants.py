"""The registry of variants: find a game's rules by name (as python-chess finds its variants)."""

from __future__ import annotations

from collections.abc import Mapping

from engine.errors import EngineError, quoted
from engine.rules.base import Rules
from engine.rules.domeng import Domeng
from engine.rules.kozel import Kozel

__all__ = ["VARIANTS", "find_variant", "make_rules"]

VARIANTS: dict[str, type[Rules]] = {Domeng.name: Domeng, Kozel.name: Kozel}
"""Every playable variant by its RECORD.md name."""


def find_variant(name: str) -> type[Rules]:
    """The rules class called ``name``; raises `EngineError` (``unknown_variant``) otherwise."""
    try:
        return VARIANTS[name]
    except (KeyError, TypeError):
        known = ", ".join(sorted(VARIANTS))
        raise EngineError("unknown_variant", f"unknown variant {quoted(name)} (known: {known})") from None


def make_rules(name: str, options: Mapping[str, object] | None = None, seats: int | None = None) -> Rules:
    """``find_variant(name).from_options(options or {}, seats)``; raises `EngineError`."""
    return find_variant(name).from_options(options or {}, seats)
