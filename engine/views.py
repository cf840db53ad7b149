"""What one seat (or a spectator) may see of a match: `player_view` (D20).

The server sends only views, bots decide only from views, and the client computes no rules: the
legal actions come in the view of the seat to act. A view holds the viewer's own hand, every hand's
tile count, the chain, the public score (stones or points) and the round's public events. Another
seat's hand, the unused tiles and the bazaar appear only in the round-end ``reveal``, which lasts
until the next round is dealt.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.actions import Action
from engine.core import Phase, State, chain_line
from engine.events import (
    DomengOutcome,
    Drew,
    Event,
    KozelOutcome,
    Outcome,
    Passed,
    Placed,
    Reason,
    RoundEnded,
    Settlement,
    Termination,
)
from engine.pickling import pickle_by_fields
from engine.tiles import MAX_PIP, TILES, Tile

if TYPE_CHECKING:
    from engine.rules.base import Rules

__all__ = [
    "PRIVATE_KEYS",
    "PlayerView",
    "Reveal",
    "event_to_json",
    "events_json",
    "outcome_agrees",
    "outcome_to_json",
    "player_view",
    "private_view_json",
    "settlement_to_json",
    "shared_view_json",
]

PRIVATE_KEYS = ("seat", "hand", "legal")
"""The keys of a view's JSON that differ between recipients (`private_view_json`); every other key
but ``log`` is the same for all of them (`shared_view_json`)."""


@dataclass(frozen=True, slots=True)
class Reveal:
    """The round-end reveal: every seat's remaining hand and the tiles set aside (Domeng: unused;
    Kozel: what is left of the bazaar)."""

    hands: tuple[tuple[Tile, ...], ...]
    rest: tuple[Tile, ...]


@dataclass(frozen=True, slots=True)
class PlayerView:
    """One recipient's view of a match. ``seat`` is None for a spectator.

    ``hand`` is the viewer's own tiles (None for a spectator), ``hand_counts`` every seat's tile
    count, ``chain`` the line left to right as oriented pip pairs, ``ends`` the open ends (None
    before the opening tile), ``legal`` the viewer's legal actions (empty unless it is their turn).
    Domeng fills ``table``, ``stones``, ``camat``, ``elections``, ``cycle``, ``received`` (stones
    each seat received over the match, the standings' second key) and ``placed`` (seats that
    placed a tile this round, so everyone can tell a passebunge); Kozel fills ``bazaar``, ``points``,
    ``pending`` and ``opened``, and the rule facts ``goal`` (101, K9) and ``sides`` (the seats as the
    score counts them, K10). ``standings`` ranks the sides (each a tuple of seats) best first, by the
    variant's order (`engine.core.State.standings`), and ``places`` gives each its place (1 best;
    tied sides share one, `engine.core.State.places`). ``outcome`` is the last finished round's;
    ``reveal`` is set only between that round's end and the next deal.
    """

    variant: str
    options: Mapping[str, object]
    seat: int | None
    phase: Phase
    round: int
    to_act: int | None
    hand: tuple[Tile, ...] | None
    hand_counts: tuple[int, ...]
    chain: tuple[tuple[int, int], ...]
    ends: tuple[int, int] | None
    legal: tuple[Action, ...]
    log: tuple[Event, ...]
    last_placer: int | None
    placed: tuple[int, ...]
    outcome: Outcome | None
    reveal: Reveal | None
    match_over: bool
    table: int | None = None
    stones: tuple[int, ...] | None = None
    camat: int | None = None
    elections: tuple[int, ...] | None = None
    cycle: int | None = None
    received: tuple[int, ...] | None = None
    bazaar: int | None = None
    points: tuple[int, ...] | None = None
    pending: tuple[int, ...] | None = None
    opened: tuple[bool, ...] | None = None
    goal: int | None = None
    sides: tuple[tuple[int, ...], ...] | None = None
    standings: tuple[tuple[int, ...], ...] = ()
    places: tuple[int, ...] = ()

    def to_json(self, log: bool = True) -> dict[str, Any]:
        """The view as JSON-ready data (tiles as ``"a-b"``, actions in RECORD.md notation); without
        the ``log`` key when ``log`` is false."""
        out: dict[str, Any] = {
            "variant": self.variant,
            "options": dict(self.options),
            **_private_json(self.seat, self.hand, self.legal),
            "phase": self.phase.value,
            "round": self.round,
            "to_act": self.to_act,
            "hand_counts": list(self.hand_counts),
            "chain": [f"{a}-{b}" for a, b in self.chain],
            "ends": None if self.ends is None else list(self.ends),
        }
        if log:
            out["log"] = [event_to_json(e) for e in self.log]
        out |= {
            "last_placer": self.last_placer,
            "placed": list(self.placed),
            "outcome": None if self.outcome is None else outcome_to_json(self.outcome),
            "reveal": None
            if self.reveal is None
            else {
                "hands": [[str(t) for t in hand] for hand in self.reveal.hands],
                "rest": [str(t) for t in self.reveal.rest],
            },
            "match_over": self.match_over,
        }
        for key in _SCORE_FIELDS:
            value = getattr(self, key)
            if value is not None:
                out[key] = list(value) if isinstance(value, tuple) else value
        if self.sides is not None:
            out["sides"] = [list(side) for side in self.sides]
        out["standings"] = [list(side) for side in self.standings]
        out["places"] = list(self.places)
        return out


_SCORE_FIELDS = (
    "table",
    "stones",
    "camat",
    "elections",
    "cycle",
    "received",
    "bazaar",
    "points",
    "pending",
    "opened",
    "goal",
)


_PLAYING, _OVER = Phase.PLAYING, Phase.OVER  # an Enum member looked up on its class costs a descriptor call
_PHASE_TEXT: dict[Phase, str] = {phase: phase.value for phase in Phase}
"""Each phase's ``value``, without the Enum's ``value`` descriptor (a phase hashes as its text)."""
_END_TEXT: dict[Termination, str] = {end: end.value for end in Termination}
_REASON_TEXT: dict[Reason, str] = {reason: reason.value for reason in Reason}

_BIT_COUNT = int.bit_count
"""A hand's tile count (``map`` calls it in C: a method call per hand costs a lookup by name)."""

_TILE_TEXT: tuple[str, ...] = tuple(str(t) for t in TILES)
"""Each tile's ``"a-b"`` by its index (made once: a view names many tiles on every update)."""

_PAIR_TEXT: tuple[str, ...] = tuple(f"{a}-{b}" for a in range(MAX_PIP + 1) for b in range(MAX_PIP + 1))
"""A chain tile's ``"a-b"`` as it lies, left pip ``a``, by ``a * 7 + b``."""


def _tiles_json(tiles: tuple[Tile, ...]) -> list[str]:
    return [_TILE_TEXT[t.index] for t in tiles]


def _private_json(
    seat: int | None, hand: tuple[Tile, ...] | None, legal: tuple[Action, ...]
) -> dict[str, Any]:
    return {
        "seat": seat,
        "hand": None if hand is None else _tiles_json(hand),
        "legal": [a.to_json() for a in legal],
    }


def private_view_json(state: State, seat: int | None) -> dict[str, Any]:
    """The `PRIVATE_KEYS` of ``player_view(state, seat).to_json()``: the seat, its own hand (None
    for a spectator) and its legal actions (empty unless it is its turn). Raises ValueError for a
    seat that is not at this table."""
    if seat is not None and not 0 <= seat < state.seats:
        raise ValueError(f"seat {seat} is not at this {state.seats}-seat table")
    playing = state.phase is Phase.PLAYING
    legal = tuple(state.legal_actions()) if playing and seat == state.to_act else ()
    return _private_json(seat, None if seat is None else state.hand(seat), legal)


def shared_view_json(state: State) -> dict[str, Any]:
    """What every recipient's ``player_view(...).to_json()`` has in common: all keys but
    `PRIVATE_KEYS` and ``log``, in the same order. A server builds this once per update and adds
    each recipient's `private_view_json`, so the whole view is ``{**private, **shared, "log": ...}``.

    Built straight from ``state`` (no `PlayerView`, no hand, no legal actions, no log: it runs on
    every update); `tests/test_views_shared.py` checks it gives the same JSON bytes as the view.
    What an update seldom changes comes from a `_ViewMemo` kept in ``state.view_memo`` (which
    `State.fork` carries to the next update's state): the score part while `State.score_key` is
    the same, and the chain of the events the state's log still starts with. The result's dicts
    and lists are new on every call, shared with no other result and not with the memo."""
    phase = state.phase
    playing = phase is _PLAYING
    ends = state.ends
    outcome = state.outcome
    reveal = None
    if not playing and outcome is not None and state.deal is not None:
        reveal = {
            "hands": [_tiles_json(state.hand(s)) for s in range(state.seats)],
            "rest": _tiles_json(state.rest()),
        }
    placed = state.placed
    memo = _remembered(state)
    out: dict[str, Any] = {
        "variant": state.variant,
        "options": dict(state.rules.options()),
        "phase": _PHASE_TEXT[phase],
        "round": state.round_index,
        "to_act": state.to_act if playing else None,
        "hand_counts": list(map(_BIT_COUNT, state.hands)),
        "chain": memo.chain[:],
        "ends": None if ends is None else list(ends),
        "last_placer": state.last_placer,
        "placed": [s for s in range(state.seats) if placed >> s & 1],
        "outcome": None if outcome is None else outcome_to_json(outcome),
        "reveal": reveal,
        "match_over": phase is _OVER,
    }
    for key, value, depth in memo.score:
        if depth == 0:
            out[key] = value
        elif depth == 1:
            out[key] = list(value)
        else:
            out[key] = [list(side) for side in value]
    return out


_ScorePart = tuple[tuple[str, Any, int], ...]
"""A view's score part as `shared_view_json` writes it, in order: ``(key, value, depth)``, where
depth 0 is a plain value, 1 a tuple sent as a list, 2 a tuple of tuples sent as a list of lists."""


class _ViewMemo:
    """What `shared_view_json` made for a state, kept in its ``view_memo`` for the next call (on
    it or on a fork of it). Never changed once made: forks share it.

    ``rules`` and ``key`` are the state's ``rules`` and `State.score_key`, ``score`` the score part
    made with them (the score's fields, the rules' `view_facts`, ``standings`` and ``places``).
    ``events`` are the log's events (a copy) and ``chain`` each tile of their chain as ``"a-b"``,
    left to right."""

    __slots__ = ("chain", "events", "key", "rules", "score")

    def __init__(
        self, rules: Rules, key: tuple[object, ...], score: _ScorePart, events: list[Event], chain: list[str]
    ) -> None:
        self.rules = rules
        self.key = key
        self.score = score
        self.events = events
        self.chain = chain


def _remembered(state: State) -> _ViewMemo:
    """The memo for ``state`` now, made from the one it holds (reusing what still holds) and kept
    in ``state.view_memo``.

    Safe whatever memo the state holds. The score part is reused only for the same ``rules`` object
    and an equal ``state.score_key()``: the part derives from `State.score`, `State.standings`,
    `State.places` and the rules' `view_facts` alone, which are the same for those. The chain is
    reused only when the log starts with the very events (``is``) it was made from: the chain is a
    function of the log's events in order (`chain_line`), so only the rest are laid on it."""
    old = state.view_memo
    rules = state.rules
    key = state.score_key()
    log = state.log
    score: _ScorePart | None = None
    start, chain = 0, _NO_TILES
    if isinstance(old, _ViewMemo):
        if old.rules is rules and old.key == key:
            score = old.score
        if _begins_with(log, old.events):
            start, chain = len(old.events), old.chain
            if start == len(log) and score is not None:
                return old
    if score is None:
        score = _score_part(state)
    memo = _ViewMemo(rules, key, score, log[:], _chain_texts(log, start, chain))
    state.view_memo = memo
    return memo


_NO_TILES: list[str] = []
"""An empty chain (never changed: `_chain_texts` makes a new list)."""


def _begins_with(log: list[Event], events: list[Event]) -> bool:
    """Whether ``log`` starts with the very objects of ``events``, in order."""
    if len(events) > len(log):
        return False
    return all(log[i] is events[i] for i in range(len(events)))


def _score_part(state: State) -> _ScorePart:
    """``state``'s score part, made afresh (see `_ScorePart`)."""
    facts: dict[str, Any] = state.score().fields()
    facts.update(state.rules.view_facts())
    part: list[tuple[str, Any, int]] = []
    for name in _SCORE_FIELDS:
        value = facts.get(name)
        if value is not None:
            part.append((name, value, 1 if isinstance(value, tuple) else 0))
    sides = facts.get("sides")
    if sides is not None:
        part.append(("sides", sides, 2))
    standings = state.standings()
    part.append(("standings", standings, 2))
    part.append(("places", state.places(standings), 1))
    return tuple(part)


def _chain_texts(log: list[Event], start: int, chain: list[str]) -> list[str]:
    """The chain of ``log`` as ``"a-b"`` left to right, given ``chain``, that of ``log[:start]``.
    `chain_line` lays each placement on an ``L`` end at the front and any other at the back, so the
    tiles of ``log[start:]`` go round ``chain``: its ``L`` placements before it, the rest after."""
    added = log[start:]
    texts = [_PAIR_TEXT[a * (MAX_PIP + 1) + b] for a, b in chain_line(added)]
    if not chain:
        return texts
    lefts = 0
    for event in added:
        if type(event) is Placed and event.end == "L":
            lefts += 1
    return texts[:lefts] + chain + texts[lefts:]


def events_json(state: State, seat: int | None, start: int = 0) -> list[dict[str, Any]]:
    """``seat``'s view of this round's events from index ``start`` on, as JSON-ready data (the
    ``log`` of its view sliced: another seat's drawn tile shows as None)."""
    return [event_to_json(_public_event(e, seat)) for e in state.log[start:]]


def _public_event(event: Event, seat: int | None) -> Event:
    if type(event) is Drew and event.seat != seat and event.tile is not None:
        return Drew(event.seat, None)
    return event


def player_view(state: State, seat: int | None) -> PlayerView:
    """Exactly what ``seat`` may see of ``state`` (D20); ``seat=None`` is a spectator.

    Raises ValueError for a seat that is not at this table.
    """
    if seat is not None and not 0 <= seat < state.seats:
        raise ValueError(f"seat {seat} is not at this {state.seats}-seat table")
    return _view(state, seat)


def _view(state: State, seat: int | None) -> PlayerView:
    """`player_view` of a seat at the table (or None)."""
    playing = state.phase is Phase.PLAYING
    reveal = None
    if not playing and state.outcome is not None and state.deal is not None:
        reveal = Reveal(tuple(state.hand(s) for s in range(state.seats)), state.rest())
    standings = state.standings()
    view = PlayerView(
        variant=state.variant,
        options=state.rules.options(),
        seat=seat,
        phase=state.phase,
        round=state.round_index,
        to_act=state.to_act if playing else None,
        hand=None if seat is None else state.hand(seat),
        hand_counts=tuple(h.bit_count() for h in state.hands),
        chain=tuple(chain_line(state.log)),
        ends=state.ends,
        legal=tuple(state.legal_actions()) if playing and seat == state.to_act else (),
        log=tuple(_public_event(e, seat) for e in state.log),
        last_placer=state.last_placer,
        placed=tuple(s for s in range(state.seats) if state.placed >> s & 1),
        outcome=state.outcome,
        reveal=reveal,
        match_over=state.phase is Phase.OVER,
        standings=standings,
        places=state.places(standings),
        **state.score().fields(),
        **state.rules.view_facts(),  # type: ignore[arg-type]
    )
    return view


def settlement_to_json(settlement: Settlement) -> dict[str, Any]:
    """A settlement as JSON-ready data (see `Settlement`); ``received`` is what the receiver got
    (``from_table`` plus every payer's share, D5), so nobody sums it again."""
    return {
        "reason": _REASON_TEXT[settlement.reason],
        "receiver": settlement.receiver,
        "owed": settlement.owed,
        "received": settlement.received,
        "from_table": settlement.from_table,
        "from_payers": [list(p) for p in settlement.from_payers],
        "cancelled": settlement.cancelled,
    }


def outcome_to_json(outcome: Outcome) -> dict[str, Any]:
    """A round outcome as JSON-ready data; the keys are RECORD.md's replay fields plus details
    (Kozel: ``opened`` per seat after the round, K8; a settlement's ``received``)."""
    if isinstance(outcome, DomengOutcome):
        return {
            "end": _END_TEXT[outcome.end],
            "winner": outcome.winner,
            "first_cappu": outcome.first_cappu,
            "cucuq": outcome.cucuq,
            "manguno": outcome.manguno,
            "mattikkeng": list(outcome.mattikkeng),
            "pip_sums": list(outcome.pip_sums),
            "settlement": settlement_to_json(outcome.settlement),
            "camat_elected": outcome.camat_elected,
            "camat": outcome.camat,
            "table": outcome.table,
            "stones": list(outcome.stones),
            "next_leader": outcome.next_leader,
            "match_over": outcome.match_over,
        }
    assert isinstance(outcome, KozelOutcome)
    return {
        "end": _END_TEXT[outcome.end],
        "winner": outcome.winner,
        "hand_values": list(outcome.hand_values),
        "written": list(outcome.written),
        "points": list(outcome.points),
        "pending": list(outcome.pending),
        "opened": [p > 0 for p in outcome.points],
        "goat": list(outcome.goat),
        "next_leader": outcome.next_leader,
        "match_over": outcome.match_over,
    }


_ADDED_KEYS = frozenset({"received", "opened"})
"""Keys `outcome_to_json` writes today that outcomes stored by older servers lack."""


def outcome_agrees(outcome: Outcome, stored: Mapping[str, Any]) -> bool:
    """Whether a stored outcome JSON says what ``outcome`` says: every stored key has the value
    `outcome_to_json` gives, and any key missing from ``stored`` was added after it was written
    (a settlement's ``received``, a Kozel outcome's ``opened``)."""
    return _agrees(outcome_to_json(outcome), stored)


def _agrees(fresh: object, stored: object) -> bool:
    if isinstance(fresh, dict) and isinstance(stored, Mapping):
        missing = fresh.keys() - stored.keys()
        if missing - _ADDED_KEYS or stored.keys() - fresh.keys():
            return False
        return all(_agrees(fresh[key], stored[key]) for key in stored)
    return bool(fresh == stored)


def event_to_json(event: Event) -> dict[str, Any]:
    """One event as JSON-ready data with a ``type`` key: placed, passed, drew or round_ended."""
    if type(event) is Placed:
        return {
            "type": "placed",
            "seat": event.seat,
            "tile": f"{event.tile.high}-{event.tile.low}" if event.flip else str(event.tile),
            "end": event.end,
            "ends": list(event.ends),
            "mappakuling": event.mappakuling,
        }
    if type(event) is Passed:
        return {
            "type": "passed",
            "seat": event.seat,
            "passebunge": event.passebunge,
            "settlement": None if event.settlement is None else settlement_to_json(event.settlement),
        }
    if type(event) is Drew:
        return {"type": "drew", "seat": event.seat, "tile": None if event.tile is None else str(event.tile)}
    assert type(event) is RoundEnded
    return {"type": "round_ended", "outcome": outcome_to_json(event.outcome)}


pickle_by_fields(Reveal, PlayerView)
