"""The variant-neutral core: deals, the chain, turn order, legal placements and the round log.

A `State` is one match in play: the current round's hands (bit sets), the chain's open ends, whose
turn it is, and what has happened. Variants (`engine.rules.domeng`, `engine.rules.kozel`) subclass it
and hold only what differs: passes, draws, scoring, how a round ends.

State is mutable for speed: `State.apply` changes it in place and `State.fork` copies it cheaply
(search bots fork once per node). `legal_actions` and `apply` are the only rules code: the server,
replay, bots, tests and benchmarks all go through them.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar, Self

from engine.actions import Action, Draw, End, Pass, Play, PlayLempas
from engine.errors import IllegalActionError, InvalidActionError, quoted
from engine.events import Event, Outcome, Placed, RoundEnded
from engine.pickling import pickle_by_fields
from engine.tiles import FULL_SET, PIP_MASKS, TILES, Tile, mask_of, pip_sum, tiles_of

if TYPE_CHECKING:
    from engine.rules.base import Rules
    from engine.score import Score

__all__ = ["MAX_SEATS", "Deal", "Phase", "RoundLog", "State", "chain_line", "play_actions", "shared_places"]

MAX_SEATS = 5


class Phase(StrEnum):
    """Where a match stands: ``ready`` (a round may be dealt), ``playing``, or ``over``."""

    READY = "ready"
    PLAYING = "playing"
    OVER = "over"


_TILE_RANGE = range(len(TILES))
_TILE_AT = TILES.__getitem__
_BIT_AT = tuple(1 << i for i in _TILE_RANGE).__getitem__


class Deal:
    """One round's deal: ``hands`` per seat, and ``rest`` (Domeng: the 3 unused tiles, D10; Kozel:
    the bazaar, top first, K1). Together they are the whole set, each tile once. Immutable; equal
    when the hands and the rest are.

    ``Deal(hands, rest)`` raises ValueError when the tiles are not exactly the 28-tile set.
    """

    __slots__ = ("_hands", "masks", "rest")

    masks: tuple[int, ...]
    """Each hand as a bit set (the engine plays from these)."""
    rest: tuple[Tile, ...]
    _hands: tuple[tuple[Tile, ...], ...] | None

    def __new__(cls, *args: object, **kwargs: object) -> Self:
        """A blank instance (`Deal.shuffled` fills it without `__init__`'s check): spelled out so a
        mypyc-compiled class, whose own ``__new__`` would run ``__init__``, allows it too."""
        return object.__new__(cls)

    def __init__(self, hands: Sequence[Sequence[Tile]], rest: Sequence[Tile]) -> None:
        dealt = tuple(tuple(hand) for hand in hands)
        aside = tuple(rest)
        # 28 distinct bits sum to FULL_SET; any repeat carries and leaves fewer than 28 one-bits.
        count = len(aside) + sum(len(hand) for hand in dealt)
        bits = sum(t.bit for t in aside) + sum(t.bit for hand in dealt for t in hand)
        if count != len(TILES) or bits != FULL_SET:
            raise ValueError("a deal must hold each of the 28 tiles exactly once")
        self._init(tuple(mask_of(hand) for hand in dealt), aside, dealt)

    def _init(
        self, masks: tuple[int, ...], rest: tuple[Tile, ...], hands: tuple[tuple[Tile, ...], ...] | None
    ) -> None:
        object.__setattr__(self, "masks", masks)
        object.__setattr__(self, "rest", rest)
        object.__setattr__(self, "_hands", hands)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Deal is immutable (cannot set {name!r})")

    @property
    def hands(self) -> tuple[tuple[Tile, ...], ...]:
        """Each seat's tiles, in index order (derived from ``masks`` on first use)."""
        hands = self._hands
        if hands is None:
            hands = tuple(tiles_of(mask) for mask in self.masks)
            object.__setattr__(self, "_hands", hands)
        return hands

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Deal):
            return NotImplemented
        return self.masks == other.masks and self.rest == other.rest

    def __hash__(self) -> int:
        return hash((self.masks, self.rest))

    def __repr__(self) -> str:
        return f"Deal(hands={self.hands!r}, rest={self.rest!r})"

    def __reduce__(self) -> tuple[type[Deal], tuple[tuple[tuple[Tile, ...], ...], tuple[Tile, ...]]]:
        return Deal, (self.hands, self.rest)

    @staticmethod
    def shuffled(rng: random.Random, hand_sizes: Sequence[int]) -> Deal:
        """Shuffle the set with ``rng`` and deal ``hand_sizes[i]`` tiles to seat i, the rest aside.

        The shuffle sorts the 28 tiles (in index order) by one ``rng.random()`` key each, drawn in
        that order: a uniform permutation, several times cheaper than ``rng.shuffle``. Hands are
        dealt from the front (a hand lists its tiles in index order); the rest keeps its shuffled
        order (for Kozel the first is the bazaar's top). Uses only ``rng`` (never the module's
        global RNG), so a seed fixes the deal. Raises ValueError when the sizes ask for more than
        28 tiles.
        """
        random_key = rng.random
        keys = [random_key() for _ in _TILE_RANGE]
        order = sorted(_TILE_RANGE, key=keys.__getitem__)
        masks, at = [], 0
        for size in hand_sizes:
            end = at + size
            masks.append(sum(map(_BIT_AT, order[at:end])))
            at = end
        if at > len(TILES):
            raise ValueError(f"cannot deal {at} of {len(TILES)} tiles")
        # A permutation of the set is a valid deal by construction: skip __init__'s check.
        deal = Deal.__new__(Deal)
        deal._init(tuple(masks), tuple(map(_TILE_AT, order[at:])), None)
        return deal

    @staticmethod
    def from_seed(seed: int | str | bytes, hand_sizes: Sequence[int]) -> Deal:
        """The deal of ``random.Random(seed)`` (see `shuffled`); the same seed always deals the same."""
        return Deal.shuffled(random.Random(seed), hand_sizes)


@dataclass(frozen=True, slots=True)
class RoundLog:
    """A finished (or, in records, unfinished) round: its deal, its actions, and its outcome."""

    deal: Deal
    actions: tuple[Action, ...]
    outcome: Outcome | None


def _build_play_tables() -> tuple[
    tuple[tuple[tuple[Play, Play, Play], ...], ...], tuple[tuple[dict[int, tuple[Play, ...]], ...], ...]
]:
    plays = tuple(
        tuple((Play(s, t, None), Play(s, t, "L"), Play(s, t, "R")) for t in TILES) for s in range(MAX_SEATS)
    )
    fits: list[tuple[dict[int, tuple[Play, ...]], ...]] = []
    for seat in range(MAX_SEATS):
        per_ends: list[dict[int, tuple[Play, ...]]] = []
        for key in range(49):
            left, right = divmod(key, 7)
            table: dict[int, tuple[Play, ...]] = {}
            for t in TILES:
                on_left, on_right = t.has(left), t.has(right)
                if left == right and on_left:
                    table[t.bit] = (plays[seat][t.index][1],)
                elif on_left or on_right:
                    table[t.bit] = tuple(
                        plays[seat][t.index][i] for i, ok in ((1, on_left), (2, on_right)) if ok
                    )
            per_ends.append(table)
        fits.append(tuple(per_ends))
    return plays, tuple(fits)


_PLAYS, _FIT_PLAYS = _build_play_tables()


_Placement = tuple[Placed, Play]


_Placements = tuple[tuple[dict[End | None, tuple[_Placement | None, ...]], ...], ...]


def _build_placements(marks_mappakuling: bool) -> _Placements:
    """Per seat, pair of open ends and end named (None, L, R), per tile index: what placing it
    does, ``(the Placed event, the Play as a record writes it)``, or None when it is not legal.
    Events are immutable, so one instance serves every state. An omitted end is legal when the
    placement is unambiguous: one end fits, or the ends are equal (the tile goes on L) (D13). A
    lempa is mappakuling only if both ends already showed its number (D14); with
    ``marks_mappakuling`` false (Kozel, where the word means nothing) no event is mappakuling."""
    seats = []
    for seat in range(MAX_SEATS):
        table = []
        for key in range(49):
            left, right = divmod(key, 7)
            moves: dict[tuple[int, End | None], _Placement] = {}
            for t in TILES:
                on_left, on_right = t.has(left), t.has(right)
                if on_left:
                    ends = (t.other(left), right)
                    event = Placed(seat, t, "L", ends, marks_mappakuling and ends[0] == ends[1])
                    moves[(t.index, "L")] = (event, _PLAYS[seat][t.index][1])
                if on_right:
                    ends = (left, t.other(right))
                    event = Placed(seat, t, "R", ends, marks_mappakuling and ends[0] == ends[1])
                    moves[(t.index, "R")] = (event, _PLAYS[seat][t.index][2])
                if on_left and (left == right or not on_right):
                    moves[(t.index, None)] = moves[(t.index, "L")]
                elif on_right and not on_left:
                    moves[(t.index, None)] = moves[(t.index, "R")]
            ends_named: tuple[End | None, ...] = (None, "L", "R")
            table.append({end: tuple(moves.get((t.index, end)) for t in TILES) for end in ends_named})
        seats.append(tuple(table))
    return tuple(seats)


_PLACEMENTS = _build_placements(True)
_PLAIN_PLACEMENTS = _build_placements(False)
"""`_PLACEMENTS` for rules where a mappakuling does not count (`Rules.mappakuling_counts`)."""
_OPENINGS: tuple[tuple[tuple[Placed, Play], ...], ...] = tuple(
    tuple(
        (Placed(s, t, None, (t.high, t.low), False, True), Play(s, t, None, True))
        if not t.is_lempa
        else (Placed(s, t, None, (t.low, t.high), False), _PLAYS[s][t.index][0])
        for t in TILES
    )
    for s in range(MAX_SEATS)
)
"""Per seat and tile: the opening laid high-low (``flip``) as (event, Play); a lempa never flips."""
_OPEN_EVENTS: tuple[tuple[Placed, ...], ...] = tuple(
    tuple(Placed(s, t, None, (t.low, t.high), False) for t in TILES) for s in range(MAX_SEATS)
)
_OPEN_PLAYS: tuple[dict[int, tuple[Play, ...]], ...] = tuple(
    {t.bit: (_PLAYS[s][t.index][0],) for t in TILES} for s in range(MAX_SEATS)
)
_FIT_MASKS = tuple(PIP_MASKS[key // 7] | PIP_MASKS[key % 7] for key in range(49))
_READY = Phase.READY
_PLAYING = Phase.PLAYING  # module constants: an Enum member lookup costs a descriptor call
_PASSES = tuple(Pass(s) for s in range(MAX_SEATS))
_DRAWS = tuple(Draw(s) for s in range(MAX_SEATS))


def play_actions(seat: int, tile: Tile) -> tuple[Play, Play, Play]:
    """The shared `Play` instances for ``seat`` and ``tile``: (no end, on L, on R)."""
    return _PLAYS[seat][tile.index]


def shared_places(keys: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    """The places (1 best) of sides whose ranking ``keys`` are listed best first: equal keys share
    a place and the next place counts everyone above it (standard competition ranking).

    >>> shared_places([(-1, 3), (0, 4), (0, 4), (0, 9)])
    (1, 2, 2, 4)
    """
    places: list[int] = []
    for i, key in enumerate(keys):
        places.append(places[-1] if i and key == keys[i - 1] else i + 1)
    return tuple(places)


def chain_line(log: Sequence[Event]) -> list[tuple[int, int]]:
    """The chain as laid, left to right, each tile oriented ``(left pip, right pip)``.

    >>> from engine.tiles import Tile
    >>> from engine.events import Placed
    >>> chain_line([Placed(0, Tile.parse("3-6"), None, (6, 3), False, True),
    ...             Placed(1, Tile.parse("1-3"), "R", (6, 1), False)])
    [(6, 3), (3, 1)]
    """
    line: list[tuple[int, int]] = []
    for event in log:
        if type(event) is not Placed:
            continue
        tile = event.tile
        if event.end is None:
            line.append((tile.high, tile.low) if event.flip else (tile.low, tile.high))
        elif event.end == "L":
            line.insert(0, (event.ends[0], tile.other(event.ends[0])))
        else:
            line.append((tile.other(event.ends[1]), event.ends[1]))
    return line


class State:
    """A match in play. Read it through properties and `engine.views.player_view`; change it only
    with `apply` (and `start_round` between rounds).

    Attributes (read-only by convention): ``rules``, ``seats`` (count), ``phase``, ``to_act`` (seat),
    ``round_index`` (rounds dealt so far, the current one included), ``log`` (this round's events),
    ``actions`` (this round's actions), ``history`` (finished rounds), ``outcome`` (the last round's),
    ``last_placer`` (the seat that placed the most recent tile this round: Domeng's last mappano),
    ``placed`` (bit set of the seats that placed a tile this round), ``start`` (RECORD.md's
    ``start`` object the match began from, None for a new match).
    """

    __slots__ = (
        "rules",
        "seats",
        "hands",
        "left",
        "right",
        "log",
        "actions",
        "to_act",
        "phase",
        "round_index",
        "deal",
        "history",
        "leader",
        "opening",
        "last_placer",
        "placed",
        "outcome",
        "start",
        "view_memo",
    )

    variant: ClassVar[str] = ""
    extra_moves: ClassVar[bool] = False
    """Whether `_extra_actions` adds moves beyond single placements (Kozel's two lempas)."""

    rules: Rules
    seats: int
    hands: list[int]
    left: int
    right: int
    log: list[Event]
    actions: list[Action]
    to_act: int
    phase: Phase
    round_index: int
    deal: Deal | None
    history: tuple[RoundLog, ...]
    leader: int | None
    opening: Tile | None
    last_placer: int | None
    placed: int
    outcome: Outcome | None
    start: Mapping[str, object] | None
    view_memo: object
    """Not part of the match: what `engine.views.shared_view_json` last made for this state or for
    the one it was forked from (`fork` carries it: the server forks for every move, and a move
    changes little of the view), or None. The views check what still holds before they use it."""

    def __new__(cls, *args: object, **kwargs: object) -> Self:
        """A blank instance (a variant's `fork` fills it with `_fork_core`): spelled out so a
        mypyc-compiled class, whose own ``__new__`` would run ``__init__``, allows it too."""
        return object.__new__(cls)

    def _init_core(self, rules: Rules, leader: int | None, start: Mapping[str, object] | None) -> None:
        self.rules = rules
        self.start = start
        self.seats = rules.seats
        self.hands = [0] * self.seats
        self.left = self.right = -1
        self.log = []
        self.actions = []
        self.to_act = 0
        self.phase = Phase.READY
        self.round_index = 0
        self.deal = None
        self.history = ()
        self.leader = leader
        self.opening = None
        self.last_placer = None
        self.placed = 0
        self.outcome = None
        self.view_memo = None

    def _fork_core(self, new: State) -> None:
        new.rules = self.rules
        new.seats = self.seats
        new.hands = self.hands[:]
        new.left = self.left
        new.right = self.right
        new.log = self.log[:]
        new.actions = self.actions[:]
        new.to_act = self.to_act
        new.phase = self.phase
        new.round_index = self.round_index
        new.deal = self.deal
        new.history = self.history
        new.leader = self.leader
        new.opening = self.opening
        new.last_placer = self.last_placer
        new.placed = self.placed
        new.outcome = self.outcome
        new.start = self.start
        new.view_memo = self.view_memo

    def fork(self) -> State:
        """An independent copy (O(seats + round length)); applying to it leaves ``self`` alone."""
        raise NotImplementedError

    # -- reading -------------------------------------------------------------------------------

    @property
    def ends(self) -> tuple[int, int] | None:
        """The chain's open ends ``(L, R)`` in pips, or None before the opening tile."""
        return None if self.left < 0 else (self.left, self.right)

    def hand(self, seat: int) -> tuple[Tile, ...]:
        """``seat``'s tiles in index order (hidden information: views decide who sees it)."""
        return tiles_of(self.hands[seat])

    def pip_sum(self, seat: int) -> int:
        """The pip sum of ``seat``'s hand (D9: 0-0 counts 0)."""
        return pip_sum(self.hands[seat])

    def can_place(self, seat: int) -> bool:
        """Whether ``seat`` holds a tile that fits an open end (always true before the opening)."""
        if self.left < 0:
            return bool(self.hands[seat])
        return bool(self.hands[seat] & _FIT_MASKS[self.left * 7 + self.right])

    def score(self) -> Score:
        """The variant's public score: `DomengScore` (stones) or `KozelScore` (points)."""
        raise NotImplementedError

    def score_key(self) -> tuple[object, ...]:
        """The variant's own score figures as one tuple, cheaper to make than `score`: two states
        of one `rules` with equal keys have equal `score`, `standings` and `places` (they are
        derived from these figures and the rules' sides). Domeng: (table, camat, stones, camat
        elections, stones received); Kozel: (bazaar size, recorded points, pending points); each
        per-seat figure a tuple in seat order."""
        raise NotImplementedError

    def standing_key(self, side: tuple[int, ...]) -> tuple[int, ...]:
        """What ranks ``side`` (a tuple of seats, `Rules.sides`) in the standings, lower first.
        Domeng: (minus camat elections, stones received over the match); Kozel: (recorded points,
        pending points), K9."""
        raise NotImplementedError

    def standings(self) -> tuple[tuple[int, ...], ...]:
        """The match's standings now, best first: each entry a side (its seats; one seat unless
        Kozel's pairs), by `standing_key`, then seat. Domeng: most camat elections, then fewest
        stones received; Kozel: fewest recorded points, then fewest pending."""
        return tuple(sorted(self.rules.sides(), key=lambda side: (self.standing_key(side), side[0])))

    def places(self, standings: Sequence[tuple[int, ...]] | None = None) -> tuple[int, ...]:
        """Each side's place in `standings` (same order, 1 best; pass them when already at hand):
        sides with the same `standing_key` share a place, as seat order breaks no tie between
        players (Domeng: "most elections, then fewest stones"; Kozel K9), e.g. ``(1, 1, 3, 4, 5)``."""
        ranked = self.standings() if standings is None else standings
        return shared_places([self.standing_key(side) for side in ranked])

    def public_score(self) -> dict[str, Any]:
        """``self.score().fields()``: the score fields of `engine.views.PlayerView` (kept while
        callers still read a dict; prefer `score`)."""
        return self.score().fields()

    @property
    def rest_name(self) -> str:
        """What the tiles outside the hands are called: ``unused`` (Domeng, D10) or ``bazaar``
        (Kozel, K1); RECORD.md's key for them in a round."""
        return self.rules.rest_name

    def rest(self) -> tuple[Tile, ...]:
        """The tiles outside the hands now: Domeng's unused tiles (the deal's rest, D10), Kozel's
        bazaar as it stands (top first, K3). Empty before the first deal. Hidden information."""
        return () if self.deal is None else self.deal.rest

    def chain(self) -> list[tuple[int, int]]:
        """The chain, left to right, as oriented ``(left pip, right pip)`` pairs."""
        return chain_line(self.log)

    def position(self) -> str:
        """A short description of where play stands, for error messages: the round (from 1), the
        action being tried (from 1) and the open ends."""
        ends = "empty" if self.left < 0 else f"[{self.left}|{self.right}]"
        return f"round {self.round_index}, action {len(self.actions) + 1}, chain {ends}"

    # -- legal actions -------------------------------------------------------------------------

    def legal_actions(self) -> list[Action]:
        """The legal actions of the seat to act, in canonical order: placements by tile index,
        ``L`` before ``R``; then a variant's extra moves; or the single forced pass/draw.

        Empty when no round is being played. Unambiguous placements name their end (the end the
        tile goes on, L when ends are equal), so the actions are exactly what a record writes.
        """
        if self.phase is not _PLAYING:
            return []
        seat = self.to_act
        hand = self.hands[seat]
        left = self.left
        if left < 0:
            if self.opening is not None:
                return [_PLAYS[seat][self.opening.index][0]]
            table = _OPEN_PLAYS[seat]
        else:
            key = left * 7 + self.right
            fit = hand & _FIT_MASKS[key]
            if not fit:
                return self._no_fit_actions(seat)
            hand = fit
            table = _FIT_PLAYS[seat][key]
        out: list[Action] = []
        while hand:
            low = hand & -hand
            hand ^= low
            out += table[low]
        if self.extra_moves:
            return self._extra_actions(seat, out)
        return out

    def _no_fit_actions(self, seat: int) -> list[Action]:
        return [_PASSES[seat]]

    def _extra_actions(self, seat: int, plays: list[Action]) -> list[Action]:
        return plays

    # -- applying ------------------------------------------------------------------------------

    def apply(self, action: Action) -> list[Event]:
        """Apply ``action`` for the seat to act and return the events it caused (in order).

        Raises `IllegalActionError` (codes in `engine.errors`) and leaves the state unchanged when
        the action breaks a rule, `InvalidActionError` when it is not an action.
        """
        if self.phase is not _PLAYING:
            code = "match_over" if self.phase is Phase.OVER else "round_over"
            raise IllegalActionError(code, f"{action}: no round is being played ({self.position()})")
        if action.seat != self.to_act:
            raise IllegalActionError(
                "wrong_seat", f"{action}: it is P{self.to_act}'s turn ({self.position()})"
            )
        kind = type(action)
        if kind is Play:
            seat = action.seat
            event = self._place(seat, action.tile, action.end, action.flip)  # type: ignore[union-attr]
            if self.hands[seat]:
                self.to_act = seat + 1 if seat + 1 < self.seats else 0
                return [event]
            self._went_out(seat, event)
            return self.log[-2:]
        start = len(self.log)
        if kind is Pass:
            self._apply_pass(action)  # type: ignore[arg-type]
        elif kind is Draw:
            self._apply_draw(action)  # type: ignore[arg-type]
        elif kind is PlayLempas:
            self._apply_lempas(action)  # type: ignore[arg-type]
        else:
            raise InvalidActionError("invalid_action", f"not an action: {quoted(action)}")
        return self.log[start:]

    def _went_out(self, seat: int, event: Placed) -> None:
        """``seat`` placed its last tile with ``event``: end the round (D15, K5)."""
        raise NotImplementedError

    def _apply_pass(self, action: Pass) -> None:
        raise NotImplementedError

    def _apply_draw(self, action: Draw) -> None:
        raise IllegalActionError(
            "draw_not_allowed", f"{action}: {self.variant} has no drawing ({self.position()})"
        )

    def _apply_lempas(self, action: PlayLempas) -> None:
        raise IllegalActionError(
            "not_two_lempas", f"{action}: {self.variant} has no two-lempas move ({self.position()})"
        )

    def _check_pass(self, action: Pass) -> None:
        if self.can_place(action.seat):
            raise IllegalActionError(
                "voluntary_pass",
                f"{action}: a tile fits, so passing is not allowed ({self.position()})",
            )

    def _place(self, seat: int, tile: Tile, end: End | None, flip: bool = False) -> Placed:
        """Validate and lay one tile; returns the `Placed` event (already logged).

        Raises `IllegalActionError`: ``tile_not_in_hand``, ``wrong_opening_tile`` (D11, K2),
        ``does_not_fit``, ``end_required`` (D13).
        """
        hand = self.hands[seat]
        if not hand & tile.bit:
            raise IllegalActionError(
                "tile_not_in_hand",
                f"{Play(seat, tile, end, flip)}: not in P{seat}'s hand ({self.position()})",
            )
        left = self.left
        if left < 0:
            if self.opening is not None and tile is not self.opening:
                raise IllegalActionError(
                    "wrong_opening_tile",
                    f"{Play(seat, tile, end, flip)}: this round must open with {self.opening} "
                    f"({self.position()})",
                )
            if flip:
                event, played = _OPENINGS[seat][tile.index]
            else:
                event, played = _OPEN_EVENTS[seat][tile.index], _PLAYS[seat][tile.index][0]
        else:
            try:
                placements = _PLACEMENTS if self.rules.mappakuling_counts else _PLAIN_PLACEMENTS
                entry = placements[seat][left * 7 + self.right][end][tile.index]
            except KeyError:  # not an end at all
                entry = None
            if entry is None:
                raise self._placement_error(seat, tile, end)
            event, played = entry
        self.hands[seat] = hand ^ tile.bit
        self.left, self.right = event.ends
        self.last_placer = seat
        self.placed |= 1 << seat
        self.actions.append(played)
        self.log.append(event)
        return event

    def _placement_error(self, seat: int, tile: Tile, end: End | None) -> IllegalActionError:
        on_left, on_right = tile.has(self.left), tile.has(self.right)
        what = Play(seat, tile, end)
        if end is None and on_left and on_right:
            return IllegalActionError(
                "end_required",
                f"{what}: it fits both ends with different results; name the end ({self.position()})",
            )
        where = f"on {end}" if on_left or on_right else "anywhere"
        return IllegalActionError("does_not_fit", f"{what}: does not fit {where} ({self.position()})")

    # -- rounds --------------------------------------------------------------------------------

    def start_round(self, deal: Deal) -> None:
        """Deal a round from ``deal`` and find its leader (D11, K2).

        Raises `IllegalActionError` (``round_over``/``match_over``) outside the ready phase and
        ValueError for a deal of the wrong shape.
        """
        raise NotImplementedError

    def _begin_round(self, deal: Deal, hand_sizes: Sequence[int], opening_order: Sequence[Tile]) -> None:
        """Lay out ``deal`` and find who leads: ``self.leader`` with any tile, else the holder of the
        first tile of ``opening_order`` that was dealt, which they must open with (D11, K2).

        Raises IllegalActionError (``match_over``/``round_over``) outside the ready phase and
        ValueError for a deal of the wrong shape.
        """
        phase = self.phase
        if phase is not _READY:
            if phase is _PLAYING:
                raise IllegalActionError("round_over", f"a round is still being played ({self.position()})")
            raise IllegalActionError("match_over", "the match is over; no more rounds")
        masks = deal.masks
        if [mask.bit_count() for mask in masks] != list(hand_sizes):
            raise ValueError(f"deal hands must have sizes {list(hand_sizes)}")
        self.hands = hands = list(masks)
        self.left = self.right = -1
        self.log = []
        self.actions = []
        self.deal = deal
        self.last_placer = None
        self.placed = 0
        self.round_index += 1
        self.opening = None
        if self.leader is None:
            for tile in opening_order:
                for seat, hand in enumerate(hands):
                    if hand & tile.bit:
                        self.leader, self.opening = seat, tile
                        break
                if self.opening is not None:
                    break
            else:
                raise ValueError("no seat holds an opening tile")
        assert self.leader is not None
        self.to_act = self.leader
        self.phase = _PLAYING

    def _finish_round(self, outcome: Outcome, next_leader: int, match_over: bool) -> None:
        if self.deal is not None:  # positions built by hand have no deal to keep
            self.history = (*self.history, RoundLog(self.deal, tuple(self.actions), outcome))
        self.outcome = outcome
        self.leader = next_leader
        self.phase = Phase.OVER if match_over else _READY

    def stop(self) -> None:
        """End the match between rounds because the host stopped it: a match whose options set no
        end (`engine.rules.base.Rules.host_stops`, RULES.md "Match end (room option)") is over
        once its last round has ended; no round is cut. The score and standings stay as they stand
        (Domeng: most camat elections, then fewest stones received). That last round's outcome then
        says ``match_over`` (the match ended with it): ``outcome`` and the last of ``history``;
        nothing else in it changes (its ``next_leader`` stays what the rules gave, though nobody
        leads again). The round's `RoundEnded`, the last of ``log``, says so too, so the round's
        events agree with its outcome (a server that stops a match between rounds sends its
        clients the whole state again, docs/protocol.md: they keep no event from before the stop).

        Raises `IllegalActionError`: ``not_stoppable`` (the options end the match themselves),
        ``round_in_play`` (a round is being played: stop once it has ended), ``match_over``.
        """
        if not self.rules.host_stops:
            raise IllegalActionError("not_stoppable", "this match ends by its options, not by the host")
        if self.phase is _PLAYING:
            raise IllegalActionError("round_in_play", f"a round is still being played ({self.position()})")
        if self.phase is Phase.OVER:
            raise IllegalActionError("match_over", "the match is over already")
        self.phase = Phase.OVER
        ended = self.outcome
        if ended is None:  # no round was played: nothing says the match went on
            return
        over = replace(ended, match_over=True)
        self.outcome = over
        if self.history and self.history[-1].outcome is ended:
            self.history = (*self.history[:-1], replace(self.history[-1], outcome=over))
        if self.log and isinstance(self.log[-1], RoundEnded) and self.log[-1].outcome is ended:
            self.log[-1] = RoundEnded(over)  # the list is this state's own (`fork` copies it)

    def forget_rounds(self, keep: int = 1) -> None:
        """Drop all but the last ``keep`` finished rounds from ``history`` (a server that plays a
        match without an end keeps only what its views show: the last round's reveal)."""
        if len(self.history) > keep:
            self.history = self.history[len(self.history) - keep :] if keep else ()

    def round_log(self) -> RoundLog | None:
        """The current round as a `RoundLog` (outcome None while it is being played), or None."""
        if self.deal is None:
            return None
        if self.phase is not Phase.PLAYING and self.history:
            return self.history[-1]
        return RoundLog(self.deal, tuple(self.actions), None)

    def _next_seat(self, seat: int) -> int:
        seat += 1
        return 0 if seat == self.seats else seat


pickle_by_fields(RoundLog)
