"""What every variant's rules object offers: options, dealing, and starting a match."""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import ClassVar

from engine.core import Deal, State
from engine.errors import EngineError

__all__ = ["Rules", "check_seat"]


def check_seat(value: object, seats: int, what: str) -> int | None:
    """``value`` as a seat index or None; raises `EngineError` (``invalid_start``) otherwise."""
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < seats:
        raise EngineError("invalid_start", f"{what} must be a seat 0..{seats - 1} or null, got {value!r}")
    return value


class Rules(ABC):
    """A variant with its options fixed: it deals rounds and starts matches.

    Subclasses are frozen dataclasses named in `engine.variants.VARIANTS`.
    """

    name: ClassVar[str]
    rest_name: ClassVar[str]
    """What the tiles outside the hands are called (``unused`` or ``bazaar``): RECORD.md's key."""
    unit: ClassVar[str]
    """What the per-seat score counts (``stones`` or ``points``)."""
    mappakuling_counts: ClassVar[bool] = False
    """Whether a mappakuling (both ends showing one number) matters to the score (Domeng D14)."""
    seats: int

    @classmethod
    @abstractmethod
    def from_options(cls, options: Mapping[str, object], seats: int | None = None) -> Rules:
        """Build the rules from RECORD.md ``options`` (absent keys take RULES.md defaults).

        Raises `EngineError` with code ``invalid_options`` (unknown key, wrong type, bad value) or
        ``invalid_seats`` (a seat count the variant does not allow).
        """

    @abstractmethod
    def options(self) -> dict[str, object]:
        """Every option with its value, as RECORD.md names them."""

    @abstractmethod
    def hand_sizes(self) -> tuple[int, ...]:
        """Tiles dealt to each seat (D10, K1)."""

    @abstractmethod
    def new_match(self, start: Mapping[str, object] | None = None) -> State:
        """A match before its first round; ``start`` is RECORD.md's ``start`` object (or None).

        Raises `EngineError` (``invalid_start``) when ``start`` is not a position of this variant.
        """

    def sides(self) -> tuple[tuple[int, ...], ...]:
        """The seats as the score counts them, each side a tuple of seats: every seat alone unless
        the variant plays in pairs (Kozel, K10)."""
        return tuple((seat,) for seat in range(self.seats))

    def view_facts(self) -> dict[str, object]:
        """Rule facts a view carries so the client need not know them, as `engine.views.PlayerView`
        keyword arguments (Kozel: ``goal`` and ``sides``); none by default."""
        return {}

    def deal(self, rng: random.Random) -> Deal:
        """Shuffle with ``rng`` (never the global RNG) and deal one round."""
        return Deal.shuffled(rng, self.hand_sizes())

    def deal_from_seed(self, seed: int | str | bytes) -> Deal:
        """The round dealt by ``random.Random(seed)``: anyone with the seed can re-derive it."""
        return Deal.from_seed(seed, self.hand_sizes())

    @staticmethod
    def _check_keys(options: Mapping[str, object], known: Mapping[str, type]) -> None:
        for key, value in options.items():
            if key not in known:
                raise EngineError("invalid_options", f"unknown option {key!r}")
            kind = known[key]
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                raise EngineError("invalid_options", f"option {key!r} must be {kind.__name__}, got {value!r}")
