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
from typing import Any

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
    RoundEnded,
    Settlement,
)
from engine.pickling import pickle_by_fields
from engine.tiles import MAX_PIP, TILES, Tile

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


_TILE_TEXT: tuple[str, ...] = tuple(str(t) for t in TILES)
"""Each tile's ``"a-b"`` by its index (made once: a view names many tiles on every update)."""

_PAIR_TEXT: tuple[str, ...] = tuple(f"{a}-{b}" for a in range(MAX_PIP + 1) for b in range(MAX_PIP + 1))
"""A chain tile's ``"a-b"`` as it lies, left pip ``a``, by ``a * 7 + b``."""


def _tiles_json(tiles: tuple[Tile, ...]) -> list[str]:
    return [_TILE_TEXT[t.index] for t in tiles]


def _chain_json(state: State) -> list[str]:
    return [_PAIR_TEXT[a * (MAX_PIP + 1) + b] for a, b in chain_line(state.log)]


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
    every update); `tests/test_views_shared.py` checks it gives the same JSON bytes as the view."""
    phase = state.phase
    playing = phase is Phase.PLAYING
    ends = state.ends
    outcome = state.outcome
    reveal = None
    if not playing and outcome is not None and state.deal is not None:
        reveal = {
            "hands": [_tiles_json(state.hand(s)) for s in range(state.seats)],
            "rest": _tiles_json(state.rest()),
        }
    placed = state.placed
    out: dict[str, Any] = {
        "variant": state.variant,
        "options": dict(state.rules.options()),
        "phase": phase.value,
        "round": state.round_index,
        "to_act": state.to_act if playing else None,
        "hand_counts": [h.bit_count() for h in state.hands],
        "chain": _chain_json(state),
        "ends": None if ends is None else list(ends),
        "last_placer": state.last_placer,
        "placed": [s for s in range(state.seats) if placed >> s & 1],
        "outcome": None if outcome is None else outcome_to_json(outcome),
        "reveal": reveal,
        "match_over": phase is Phase.OVER,
    }
    facts: dict[str, Any] = state.score().fields()
    facts.update(state.rules.view_facts())
    for key in _SCORE_FIELDS:
        value = facts.get(key)
        if value is not None:
            out[key] = list(value) if isinstance(value, tuple) else value
    sides = facts.get("sides")
    if sides is not None:
        out["sides"] = [list(side) for side in sides]
    standings = state.standings()
    out["standings"] = [list(side) for side in standings]
    out["places"] = list(state.places(standings))
    return out


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
        "reason": settlement.reason.value,
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
            "end": outcome.end.value,
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
        "end": outcome.end.value,
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
