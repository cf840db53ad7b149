"""Kozel ("Goat"), for 2 to 4 players: the bazaar, two lempas, fish, points, the 13 opening, the goat.

Implements RULES.md's Kozel part (K1–K10) on the shared core. The core's hooks hold every difference:
`KozelState._no_fit_actions` offers a draw while the bazaar has tiles (else the forced pass, K3),
`_extra_actions` adds the two-lempas move (K4), and `apply` ends the round in a fish as soon as the
bazaar is empty and no seat can place (K5). Scoring (K6–K10) runs once, when the round ends.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar, cast

from engine.actions import Action, Draw, Pass, PlayLempas
from engine.core import _DRAWS, _FIT_MASKS, _PASSES, Deal, Phase, State
from engine.errors import EngineError, IllegalActionError, quoted
from engine.events import Drew, Event, KozelOutcome, Passed, Placed, RoundEnded, Termination
from engine.pickling import pickle_by_fields
from engine.rules.base import Rules, check_seat
from engine.score import KozelScore
from engine.tiles import Tile, mask_of, pip_sum

if TYPE_CHECKING:
    from engine.views import PlayerView

__all__ = [
    "GOAT_POINTS",
    "LONE_ZERO_VALUE",
    "OPENING_ORDER",
    "OPENING_POINTS",
    "Kozel",
    "KozelState",
    "hand_value",
    "kozel_standing_key",
]

OPENING_POINTS = 13
"""K8: a seat's (or pair's) points are recorded once its unrecorded points reach this."""

GOAT_POINTS = 101
"""K9: the first recorded total at or above this makes the goat and ends the match."""

LONE_ZERO_VALUE = 25
"""K6: a hand that is exactly {0-0} is worth this many points."""

OPENING_ORDER: tuple[Tile, ...] = tuple(Tile.from_pips(p, p) for p in range(6, -1, -1)) + tuple(
    Tile.from_pips(high, low) for high in range(6, 0, -1) for low in range(high - 1, -1, -1)
)
"""K2: the first round's leader holds the first of these that was dealt and must open with it: the
lempas 6-6 … 0-0, then the other tiles 6-5 > 6-4 > … > 1-0."""

_LEMPAS = tuple(Tile.from_pips(p, p) for p in range(7))
_ZERO_ZERO = Tile.from_pips(0, 0).bit
_PLAYING = Phase.PLAYING
_SEAT_COUNTS = (2, 3, 4)


def hand_value(mask: int) -> int:
    """K6: the pip sum of a hand (bit set); a hand that is exactly {0-0} is worth 25.

    >>> hand_value(Tile.parse("0-0").bit), hand_value(Tile.parse("0-0").bit | Tile.parse("1-2").bit)
    (25, 3)
    """
    return LONE_ZERO_VALUE if mask == _ZERO_ZERO else pip_sum(mask)


def kozel_standing_key(points: Sequence[int], pending: Sequence[int], seat: int) -> tuple[int, int]:
    """What ranks ``seat`` (or its pair, whose partners hold the same figures, K10) in the
    standings, lower first (K9): its recorded ``points``, then its ``pending`` points. Seats with
    equal keys share a place."""
    return (points[seat], pending[seat])


_HAND_SIZES = {seats: (7 if seats == 2 else 5,) * seats for seats in _SEAT_COUNTS}
"""K1: 7 tiles each with 2 seats, else 5; one tuple per seat count, shared (the bots ask often)."""


@cache
def _sides(seats: int, pairs: bool) -> tuple[tuple[int, ...], ...]:
    return ((0, 2), (1, 3)) if pairs else tuple((seat,) for seat in range(seats))


class _KozelFacts(Rules):
    """Kozel's class-level facts, kept out of `Kozel`'s dataclass body (a mypyc-compiled dataclass
    would take a class variable with a value for a field: docs/engine.md, "Compiled build")."""

    name: ClassVar[str] = "kozel"
    rest_name: ClassVar[str] = "bazaar"
    unit: ClassVar[str] = "points"
    opening_order: ClassVar[tuple[Tile, ...]] = OPENING_ORDER
    draws_from_rest: ClassVar[bool] = True


@dataclass(frozen=True, slots=True)
class Kozel(_KozelFacts):
    """Kozel's rules: 2, 3 or 4 seats; 7 tiles each with 2 seats, else 5; the rest is the bazaar (K1).

    ``two_lempas``: the two-lempas move (K4, default on). ``pairs``: P0+P2 against P1+P3 (K10, 4
    seats only, default off).
    """

    seats: int = 4
    two_lempas: bool = True
    pairs: bool = False

    @classmethod
    def from_options(cls, options: Mapping[str, object], seats: int | None = None) -> Kozel:
        """RECORD.md options ``two_lempas`` and ``pairs``; ``seats`` defaults to 4.

        Raises `EngineError`: ``invalid_seats`` (not 2–4), ``invalid_options`` (unknown key, not a
        bool, ``pairs`` without 4 seats).
        """
        cls._check_keys(options, {"two_lempas": bool, "pairs": bool})
        seats = 4 if seats is None else seats
        if seats not in _SEAT_COUNTS:
            raise EngineError("invalid_seats", f"Kozel is played by 2, 3 or 4 seats, not {seats}")
        pairs = options.get("pairs", False)
        two_lempas = options.get("two_lempas", True)
        assert isinstance(pairs, bool) and isinstance(two_lempas, bool)
        if pairs and seats != 4:
            raise EngineError("invalid_options", f"pairs need 4 seats, not {seats} (K10)")
        return cls(seats=seats, two_lempas=two_lempas, pairs=pairs)

    def options(self) -> dict[str, object]:
        return {"two_lempas": self.two_lempas, "pairs": self.pairs}

    def hand_sizes(self) -> tuple[int, ...]:
        return _HAND_SIZES[self.seats]

    def sides(self) -> tuple[tuple[int, ...], ...]:
        """The seats as the score counts them: with pairs P0+P2 and P1+P3 (K10), else each alone."""
        return _sides(self.seats, self.pairs)

    def view_facts(self) -> dict[str, object]:
        """``goal``: the recorded points that make a goat (101, K9); ``sides``: see `sides` (K10)."""
        return {"goal": GOAT_POINTS, "sides": _sides(self.seats, self.pairs)}

    def side_of(self, seat: int) -> int:
        """The scoring side of ``seat``: its pair (0 for P0+P2, 1 for P1+P3) with pairs, else itself."""
        return seat % 2 if self.pairs else seat

    def start_after(self, outcome: Mapping[str, Any]) -> dict[str, object]:
        """Recorded and pending points after the round (K8), and its next leader."""
        return {
            "points": list(outcome["points"]),
            "pending": list(outcome["pending"]),
            "leader": outcome["next_leader"],
        }

    def new_match(self, start: Mapping[str, object] | None = None) -> KozelState:
        """A match from RECORD.md's ``start`` (``points``, ``pending``, ``leader``), or a new one.

        Raises `EngineError` (``invalid_start``) for a score no match can reach: points must be 0 or
        13–100, pending 0–12 and 0 once opened (K8), and partners equal with pairs (K10).
        """
        start = start or {}
        zeros = [0] * self.seats
        points, pending = start.get("points", zeros), start.get("pending", zeros)
        for what, value in (("points", points), ("pending", pending)):
            if (
                not isinstance(value, list)
                or len(value) != self.seats
                or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)
            ):
                raise EngineError("invalid_start", f"start {what!r} must be {self.seats} non-negative ints")
        assert isinstance(points, list) and isinstance(pending, list)
        self._check_score(points, pending)
        leader = check_seat(start.get("leader"), self.seats, "leader")
        return KozelState(self, points, pending, leader, dict(start) or None)

    def _check_score(self, points: Sequence[int], pending: Sequence[int]) -> None:
        for seat, (recorded, unrecorded) in enumerate(zip(points, pending, strict=True)):
            if recorded and not OPENING_POINTS <= recorded < GOAT_POINTS:
                raise EngineError(
                    "invalid_start",
                    f"P{seat}: recorded points are 0 or {OPENING_POINTS}..{GOAT_POINTS - 1},"
                    f" got {quoted(recorded)}",
                )
            if unrecorded >= OPENING_POINTS or (recorded and unrecorded):
                raise EngineError(
                    "invalid_start", f"P{seat}: pending {unrecorded} cannot stand with {recorded} points (K8)"
                )
            partner = (seat + 2) % 4
            if self.pairs and (points[partner], pending[partner]) != (recorded, unrecorded):
                raise EngineError("invalid_start", f"partners P{seat} and P{partner} share one score (K10)")

    def world(self, view: PlayerView, hands: Sequence[int], rest: Sequence[Tile]) -> KozelState:
        """`Rules.world`: the view's recorded and pending points, ``rest`` as the bazaar (top
        first, K1)."""
        zeros = [0] * self.seats
        state = KozelState(self, view.points or zeros, view.pending or [0] * self.seats, None, None)
        state.bazaar = list(rest)
        self.resume_round(state, view, hands)
        return state

    def position(
        self,
        hands: Sequence[Iterable[str]],
        ends: tuple[int, int],
        *,
        to_act: int,
        last_placer: int,
        bazaar: Iterable[str] = (),
        points: Sequence[int] | None = None,
        pending: Sequence[int] | None = None,
    ) -> KozelState:
        """A mid-round position built by hand (tests, analysis): ``hands`` per seat as tile strings,
        the chain's open ``ends``, whose turn it is, who placed last, the ``bazaar`` (top first) and
        the score. The tiles elsewhere are taken as played; such a state cannot be recorded.
        """
        zeros = [0] * self.seats
        state = KozelState(self, points or zeros, pending or zeros, None, None)
        state.hands = [mask_of(Tile.parse(t) for t in hand) for hand in hands]
        state.bazaar = [Tile.parse(t) for t in bazaar]
        state.left, state.right = ends
        state.to_act = to_act
        state.last_placer = last_placer
        state.placed = 1 << last_placer
        state.phase = _PLAYING
        state.round_index = 1
        return state


class KozelState(State):
    """A Kozel match in play: the core plus the bazaar (top first), each seat's recorded ``points``
    and unrecorded ``pending`` points (K8; with pairs both partners carry their pair's score)."""

    __slots__ = ("bazaar", "points", "pending")
    variant: ClassVar[str] = "kozel"
    extra_moves: ClassVar[bool] = True

    bazaar: list[Tile]
    points: list[int]
    pending: list[int]

    @property
    def _rules(self) -> Kozel:
        """``rules`` as `Kozel` (the core declares `Rules`: a compiled build keeps the declared type)."""
        return cast(Kozel, self.rules)

    def __init__(
        self,
        rules: Kozel,
        points: Sequence[int],
        pending: Sequence[int],
        leader: int | None,
        start: Mapping[str, object] | None,
    ) -> None:
        self._init_core(rules, leader, start)
        self.bazaar = []
        self.points = list(points)
        self.pending = list(pending)

    def fork(self) -> KozelState:
        new = KozelState.__new__(KozelState)
        self._fork_core(new)
        new.bazaar = self.bazaar[:]
        new.points = self.points[:]
        new.pending = self.pending[:]
        return new

    # -- reading -------------------------------------------------------------------------------

    def is_opened(self, seat: int) -> bool:
        """K8: whether ``seat``'s points are recorded (its unrecorded points once reached 13)."""
        return self.points[seat] > 0

    def hand_value(self, seat: int) -> int:
        """K6: the pip sum of ``seat``'s hand; exactly {0-0} is worth 25."""
        return hand_value(self.hands[seat])

    def standing_key(self, side: tuple[int, ...]) -> tuple[int, ...]:
        """Fewest recorded points, then fewest pending (a side is a seat, or a pair, K10): the goat
        (K9), if any, is last."""
        return kozel_standing_key(self.points, self.pending, side[0])

    def score_key(self) -> tuple[object, ...]:
        """(bazaar size, points, pending): all `score` is made of (``opened`` is points above 0)."""
        return (len(self.bazaar), tuple(self.points), tuple(self.pending))

    def score(self) -> KozelScore:
        """Kozel's public score: tiles left in the bazaar, recorded and pending points, who opened (K8)."""
        return KozelScore(
            len(self.bazaar), tuple(self.points), tuple(self.pending), tuple(p > 0 for p in self.points)
        )

    def rest(self) -> tuple[Tile, ...]:
        """The bazaar as it stands, top first (K1, K3)."""
        return tuple(self.bazaar)

    def is_fish(self) -> bool:
        """K5: the bazaar is empty and no seat holds a tile that fits an open end."""
        if self.bazaar or self.left < 0:
            return False
        fits = _FIT_MASKS[self.left * 7 + self.right]
        return not any(hand & fits for hand in self.hands)

    # -- legal actions -------------------------------------------------------------------------

    def _no_fit_actions(self, seat: int) -> list[Action]:
        """K3: with no fit, draw while the bazaar has tiles, else pass."""
        return [_DRAWS[seat]] if self.bazaar else [_PASSES[seat]]

    def _extra_actions(self, seat: int, plays: list[Action]) -> list[Action]:
        """K4: both lempas of differing ends in one move, written in end order (L's lempa first)."""
        move = self._two_lempas_move(seat)
        return plays if move is None else [*plays, move]

    def _two_lempas_move(self, seat: int) -> PlayLempas | None:
        left, right = self.left, self.right
        if not self._rules.two_lempas or left < 0 or left == right:
            return None
        pair = (_LEMPAS[left], _LEMPAS[right])
        hand = self.hands[seat]
        return PlayLempas(seat, pair) if hand & pair[0].bit and hand & pair[1].bit else None

    # -- applying ------------------------------------------------------------------------------

    def apply(self, action: Action) -> list[Event]:
        """`State.apply`, then the fish (K5): once the bazaar is empty, a placement or a draw after
        which no seat can place ends the round at once."""
        events = State.apply(self, action)
        if self.phase is _PLAYING and not self.bazaar and type(action) is not Pass and self.is_fish():
            self._end_fish()
            events.append(self.log[-1])
        return events

    def _apply_draw(self, action: Draw) -> None:
        """K3: take the bazaar's top tile, only with no fit; the seat keeps the turn."""
        seat = action.seat
        if self.can_place(seat):
            raise IllegalActionError(
                "draw_not_allowed", f"{action}: a tile fits, so drawing is not allowed ({self.position()})"
            )
        if not self.bazaar:
            raise IllegalActionError("draw_not_allowed", f"{action}: the bazaar is empty ({self.position()})")
        tile = self.bazaar.pop(0)
        self.hands[seat] |= tile.bit
        self.actions.append(action)
        self.log.append(Drew(seat, tile))

    def _apply_pass(self, action: Pass) -> None:
        """K3: a pass only with no fit and an empty bazaar."""
        self._check_pass(action)
        if self.bazaar:
            raise IllegalActionError(
                "voluntary_pass",
                f"{action}: the bazaar still holds {len(self.bazaar)} tiles, so draw ({self.position()})",
            )
        self.actions.append(action)
        self.log.append(Passed(action.seat))
        self.to_act = self._next_seat(action.seat)

    def _apply_lempas(self, action: PlayLempas) -> None:
        """K4: with ends ``[L|R]``, L≠R, place L-L on L and R-R on R in one move (either order
        named); it may go out."""
        seat = action.seat
        first, second = action.tiles
        left, right = self.left, self.right
        if not self._rules.two_lempas:
            raise IllegalActionError(
                "not_two_lempas", f"{action}: this table plays without two lempas ({self.position()})"
            )
        if left < 0 or left == right or {first, second} != {_LEMPAS[left], _LEMPAS[right]}:
            raise IllegalActionError(
                "not_two_lempas",
                f"{action}: two lempas need the lempas of two different open ends ({self.position()})",
            )
        for tile in action.tiles:
            if not self.hands[seat] & tile.bit:
                raise IllegalActionError(
                    "tile_not_in_hand", f"{action}: {tile} is not in P{seat}'s hand ({self.position()})"
                )
        for tile in action.tiles:
            self._place(seat, tile, "L" if tile.low == left else "R")
        del self.actions[-2:]
        self.actions.append(action)
        if self.hands[seat]:
            self.to_act = self._next_seat(seat)
        else:
            self._end_out(seat)

    # -- rounds --------------------------------------------------------------------------------

    def start_round(self, deal: Deal) -> None:
        """Deal a round: the rest of the set is the bazaar, top first (K1). The leader is the
        previous round's winner (any tile); in a match's first round without one, the holder of the
        first dealt tile of `OPENING_ORDER` must open with it (K2). Raises IllegalActionError outside
        the ready phase, ValueError for a deal of the wrong shape."""
        self._begin_round(deal, self.rules.hand_sizes(), OPENING_ORDER)
        self.bazaar = list(deal.rest)

    def _went_out(self, seat: int, event: Placed) -> None:
        self._end_out(seat)

    def _end_out(self, winner: int) -> None:
        """K5, K7, K10: the winner (with pairs, the winner's pair) writes 0, everyone else adds
        their hand value (the other pair, its pair's hand value)."""
        values = self._hand_values()
        side_values = self._side_values(values)
        rules = self._rules
        won = rules.side_of(winner)
        written = tuple(
            0 if rules.side_of(s) == won else side_values[rules.side_of(s)] for s in range(self.seats)
        )
        self._conclude(Termination.OUT, winner, winner, values, written)

    def _end_fish(self) -> None:
        """K5, K7, K10: the lowest hand value (pairs: the lower pair) writes 0, ties all write 0;
        the rest add their own. The lowest seat leads next (pairs: the lower partner of the winning
        pair); ties go to the first in seat order after the last placer. A tie: no winner."""
        values = self._hand_values()
        side_values = self._side_values(values)
        rules = self._rules
        sides = [rules.side_of(s) for s in range(self.seats)]
        low = min(side_values.values())
        lowest = [side for side, v in side_values.items() if v == low]
        written = tuple(0 if side_values[side] == low else side_values[side] for side in sides)
        assert self.last_placer is not None
        order = [(self.last_placer + k) % self.seats for k in range(1, self.seats + 1)]
        if len(lowest) == 1:
            candidates = [s for s in order if sides[s] == lowest[0]]
            best = min(values[s] for s in candidates)
            leader = next(s for s in candidates if values[s] == best)
            winner: int | None = leader
        else:
            best = min(values)
            leader = next(s for s in order if values[s] == best)
            winner = None
        self._conclude(Termination.FISH, winner, leader, values, written)

    def _hand_values(self) -> tuple[int, ...]:
        return tuple(hand_value(hand) for hand in self.hands)

    def _side_values(self, values: Sequence[int]) -> dict[int, int]:
        sides: dict[int, int] = {}
        for seat, value in enumerate(values):
            side = self._rules.side_of(seat)
            sides[side] = sides.get(side, 0) + value
        return sides

    def _conclude(
        self,
        end: Termination,
        winner: int | None,
        next_leader: int,
        values: tuple[int, ...],
        written: tuple[int, ...],
    ) -> None:
        """Write the round's points with the 13 opening (K8), find the goat (K9) and end the round."""
        for seat, amount in enumerate(written):
            if self.points[seat]:
                self.points[seat] += amount
            elif self.pending[seat] + amount >= OPENING_POINTS:
                self.points[seat], self.pending[seat] = self.pending[seat] + amount, 0
            else:
                self.pending[seat] += amount
        crossed = [s for s in range(self.seats) if self.points[s] >= GOAT_POINTS]
        top = max((self.points[s] for s in crossed), default=0)
        goat = tuple(s for s in crossed if self.points[s] == top)
        outcome = KozelOutcome(
            end=end,
            winner=winner,
            hand_values=values,
            written=written,
            points=tuple(self.points),
            pending=tuple(self.pending),
            goat=goat,
            next_leader=next_leader,
            match_over=bool(goat),
        )
        self.log.append(RoundEnded(outcome))
        self._finish_round(outcome, next_leader, bool(goat))


pickle_by_fields(Kozel)
