"""What every variant's rules object offers: options, dealing, and starting a match."""

from __future__ import annotations

import random
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from engine.core import Deal, Phase, State
from engine.errors import EngineError, quoted
from engine.tiles import Tile

if TYPE_CHECKING:
    from engine.views import PlayerView

__all__ = ["Rules", "check_seat"]


def check_seat(value: object, seats: int, what: str) -> int | None:
    """``value`` as a seat index or None; raises `EngineError` (``invalid_start``) otherwise."""
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < seats:
        raise EngineError(
            "invalid_start", f"{what} must be a seat 0..{seats - 1} or null, got {quoted(value)}"
        )
    return value


class Rules:
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
    opening_order: ClassVar[tuple[Tile, ...]]
    """The match's first round opens with the first of these tiles dealt, its holder leading
    (Domeng's lempas 6-6 … 3-3, D11; Kozel's lempas high to low, then 6-5 … 1-0, K2)."""
    draws_from_rest: ClassVar[bool] = False
    """Whether a seat with no fitting tile draws from the rest while it holds tiles (Kozel's
    bazaar, K3) instead of passing at once (Domeng D3)."""
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

    @abstractmethod
    def start_after(self, outcome: Mapping[str, Any]) -> dict[str, object]:
        """RECORD.md's ``start`` object of the match as it stands after a round whose outcome is
        ``outcome`` (as `engine.views.outcome_to_json` writes it): the score after the round and
        its ``next_leader`` as ``leader``. Raises KeyError for an outcome without them."""

    @abstractmethod
    def world(self, view: PlayerView, hands: Sequence[int], rest: Sequence[Tile]) -> State:
        """The round being played in ``view`` rebuilt with a guess of the hidden tiles: ``hands``
        per seat (bit sets, ``view``'s own included) and ``rest`` (the tiles set aside; Kozel: the
        bazaar, top first). The score comes from the view's public facts (Domeng: table, stones,
        camat, elections; Kozel: points, pending); see `resume_round` for the rest. Search bots
        play on it; it shares nothing mutable. Its log starts empty and it cannot be recorded.
        """

    def sides(self) -> tuple[tuple[int, ...], ...]:
        """The seats as the score counts them, each side a tuple of seats: every seat alone unless
        the variant plays in pairs (Kozel, K10)."""
        return tuple((seat,) for seat in range(self.seats))

    @property
    def host_stops(self) -> bool:
        """Whether only the host can end a match of these options (its options set no end: Domeng's
        ``camat_target`` 0, "Match end (room option)"): the host's stop ends it after the round in
        play (`engine.core.State.stop`). False by default (Kozel ends at its goat, K9)."""
        return False

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
    def resume_round(state: State, view: PlayerView, hands: Sequence[int]) -> State:
        """Put ``state`` (a match between rounds) into the round of ``view``: ``hands`` (bit sets
        per seat), the chain's ends, the turn, the last placer, who has placed, the round number
        and, before the first placement, the opening tile when the view's one legal action names
        it (D11, K2). Returns ``state``."""
        state.hands = list(hands)
        if view.ends is not None:
            state.left, state.right = view.ends
        state.to_act = view.to_act if view.to_act is not None else 0
        state.last_placer = view.last_placer
        state.placed = sum(1 << s for s in view.placed)
        state.phase = Phase.PLAYING
        state.round_index = view.round
        if view.ends is None and len(view.legal) == 1:
            only = view.legal[0]
            state.opening = getattr(only, "tile", None)
        return state

    @staticmethod
    def _check_keys(options: Mapping[str, object], known: Mapping[str, type]) -> None:
        """Raise `EngineError` (``invalid_options``) unless ``options`` is a mapping whose every key
        is ``known`` with a value of its type (RECORD.md's ``options`` object; a stored or sent one
        may be anything JSON holds)."""
        if not isinstance(options, Mapping):
            raise EngineError("invalid_options", f"options must be an object, got {type(options).__name__}")
        for key, value in options.items():
            if key not in known:
                raise EngineError("invalid_options", f"unknown option {quoted(key)}")
            kind = known[key]
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                raise EngineError(
                    "invalid_options", f"option {quoted(key)} must be {kind.__name__}, got {quoted(value)}"
                )
