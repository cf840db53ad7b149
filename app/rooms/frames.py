"""What a room sends: its public form, state frames (whole, or an update with the events since a
point of the round), presence, errors and the welcome (docs/protocol.md). Built here, sent by the
room through each connection's `Outbox`."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import orjson

from app.rooms.ports import Outbox
from app.rooms.recovery import Ended
from app.rooms.seats import PUBLIC_KEYS
from engine.core import Phase
from engine.events import Drew
from engine.views import events_json, player_view, private_view_json, shared_view_json

if TYPE_CHECKING:
    from app.rooms.room import Room

__all__ = [
    "PROTOCOL_VERSION",
    "RoundBefore",
    "dumps",
    "error_frame",
    "full_frame",
    "presence_frame",
    "previous_json",
    "previous_public",
    "room_public",
    "room_public_json",
    "round_end_json",
    "round_end_later",
    "send_updates",
    "send_whole",
    "turn_public",
    "welcome_frame",
]

PROTOCOL_VERSION = 1
"""The WebSocket protocol's version (docs/protocol.md), sent in ``welcome``."""


def dumps(message: dict[str, Any]) -> str:
    """One JSON text frame (orjson: the server serialises a view per seat per update)."""
    return orjson.dumps(message).decode()


def room_public(room: Room) -> dict[str, Any]:
    """The room as everyone may see it (RoomPublic in docs/protocol.md)."""
    rules = room.rules
    seats = [s.public() for s in room.seats]
    return _public(room, rules.options(), seats, rules.sides(), turn_public(room))


def room_public_json(room: Room, turn: dict[str, Any] | None) -> bytes:
    """`room_public` as JSON, the same bytes as ``orjson.dumps(room_public(room))``; ``turn``: the
    room's `turn_public` (the caller has it). Made for every update (`send_updates`) of parts
    kept while they hold (issue 15: rebuilding the room's public form was about 4% of a move's
    CPU): the options and sides of the room's rules, fixed for that object (a frozen
    `engine.rules.base.Rules`), kept beside it (`Room.rules_json`); the seats', kept beside their
    `app.rooms.seats.SeatInfo.public_key` (`Room.seats_json`), which their public forms are made
    of."""
    rules = room.rules
    kept = room.rules_json
    if kept is None or kept[0] is not rules:
        options, sides = orjson.dumps(rules.options()), orjson.dumps(rules.sides())
        kept = room.rules_json = (rules, orjson.Fragment(options), orjson.Fragment(sides))
    key = tuple([s.public_key() for s in room.seats])
    seats = room.seats_json
    if seats is None or seats[0] != key:
        text = orjson.dumps([dict(zip(PUBLIC_KEYS, k, strict=True)) for k in key])
        seats = room.seats_json = (key, orjson.Fragment(text))
    return orjson.dumps(_public(room, kept[1], seats[1], kept[2], turn))


def _public(room: Room, options: Any, seats: Any, sides: Any, turn: dict[str, Any] | None) -> dict[str, Any]:
    """`room_public` with its rules' ``options`` and ``sides``, its ``seats`` and ``turn`` given
    (as values, or as JSON: `room_public_json`)."""
    state = room.state
    return {
        "code": room.code,
        "match": room.room_match,
        "variant": room.rules.name,
        "options": options,
        "status": room.status,
        "version": room.version,
        "turn_timer_s": room.turn_timer_s,
        "open": room.open_table,
        "hints": room.hints,
        "host_stop": room.host_stop if room.rules.host_stops else None,
        "keep_watching": room.asks_watching(),
        "seats": seats,
        "sides": sides,
        "host": room.host_public(),
        "turn": turn,
        "round": None
        if state is None or state.round_index == 0
        else {
            "index": state.round_index - 1,
            "commitment": room.commitment,
            "seed": room.seed if state.phase is not Phase.PLAYING else None,
            "by_bot": room.by_bot,
            "hints": room.hints_given,
        },
        "last_round": room.last_round,
    }


def turn_public(room: Room) -> dict[str, Any] | None:
    """Whose turn it is and when its timer runs out: ``{"seat": 3, "deadline_ms": 1796036412000}``
    (epoch ms; None when no timer runs: a bot's turn, a forced pass, no timer), or None between
    rounds."""
    state = room.state
    if state is None or state.phase is not Phase.PLAYING:
        return None
    deadline = room.turn_deadline
    return {"seat": state.to_act, "deadline_ms": None if deadline is None else int(deadline * 1000)}


def send_updates(room: Room, conns: Iterable[Outbox], log_before: int) -> None:
    """Send each connection its own update: the view without its ``log``, and the round's events
    from ``log_before`` on (docs/protocol.md, "state"). The room and the part of the view that
    every recipient shares are serialised once; each seat (and the spectators) adds its own hand
    and legal actions, and its own events only when they hold a drawn tile."""
    conns = list(conns)
    state = room.state
    turn = turn_public(room)
    if room.conns.issubset(conns):
        room.told_turn = turn
    if not conns:
        return
    if state is None:
        whole = full_frame(room, None)
        for conn in conns:
            conn.send(whole)
        return
    # Each frame is head + the recipient's private keys + the rest (the shared keys and the
    # events), made once as text: a recipient's frame is then one join of three strings.
    head = (
        b'{"type":"state","version":%d,"from":%d,"room":%s,"view":'
        % (room.version, log_before, room_public_json(room, turn))
    ).decode()
    shared = orjson.dumps(shared_view_json(state))

    def rest(seat: int | None) -> str:
        events = orjson.dumps(events_json(state, seat, log_before))
        return b"".join((b",", memoryview(shared)[1:], b',"events":', events, b"}")).decode()

    private_events = any(type(e) is Drew for e in state.log[log_before:])
    public_rest = rest(None)
    to_act = state.to_act if state.phase is Phase.PLAYING else None
    frames: dict[int | None, str] = {}
    for conn in conns:
        seat = conn.seat
        frame = frames.get(seat)
        if frame is None:
            own = rest(seat) if private_events and seat is not None else public_rest
            frame = frames[seat] = "".join((head, _private_part(room, seat, to_act), own))
        conn.send(frame)


def _private_part(room: Room, seat: int | None, to_act: int | None) -> str:
    """``seat``'s `private_view_json` of ``room.state`` as JSON text without its closing brace.
    A seat that is not to act has no legal actions: its part is then its seat and its hand alone,
    kept in `Room.private_parts` with the hand (a bit set: the tiles are the same set in every
    variant), and made again when it changes (the seat's own move, a draw, a deal): four seats of
    five send the same part as at the version before."""
    state = room.state
    assert state is not None
    if seat is None or seat == to_act:
        return orjson.dumps(private_view_json(state, seat))[:-1].decode()
    hand = state.hands[seat]
    parts = room.private_parts
    if parts is None:
        parts = room.private_parts = {}
    kept = parts.get(seat)
    if kept is None or kept[0] != hand:
        kept = parts[seat] = (hand, orjson.dumps(private_view_json(state, seat))[:-1].decode())
    return kept[1]


def send_whole(room: Room, conns: Iterable[Outbox]) -> None:
    """Send each connection its whole state (`full_frame`), as after a ``sync``: for a change to
    an event it was sent already (the host's stop between rounds rewrites the round's end,
    `engine.core.State.stop`), which an update's ``log[:from] + events`` cannot carry."""
    conns = list(conns)
    if room.conns.issubset(conns):
        room.told_turn = turn_public(room)
    frames: dict[int | None, str] = {}
    for conn in conns:
        if conn.seat not in frames:
            frames[conn.seat] = full_frame(room, conn.seat)
        conn.send(frames[conn.seat])


def full_frame(room: Room, seat: int | None) -> str:
    """A whole state for one recipient (on connect and on ``sync``): the view with its ``log``, and
    the room's last match as it ended (``previous``, `Room.previous_match`), serialised once per
    match (`previous_json`): it is the largest part of the frame, and fixed once that match ended.
    While a round is played, the round of this match before it as it ended (``round_before``,
    `Room.round_before`), when this process saw it end; else null."""
    state = room.state
    view = None if state is None else player_view(state, seat).to_json()
    head = orjson.dumps(
        {
            "type": "state",
            "version": room.version,
            "from": 0 if state is None else len(state.log),
            "room": room_public(room),
            "view": view,
            "events": [],
        }
    )
    before = room.round_before
    if (
        state is None
        or state.phase is not Phase.PLAYING
        or before is None
        or before.round != state.round_index - 1
    ):
        before_json = b"null"
    else:
        before_json = before.json()
    return (
        head[:-1] + b',"previous":' + previous_json(room) + b',"round_before":' + before_json + b"}"
    ).decode()


class RoundBefore:
    """`Room.round_before`: the round that ended last, ``round`` its number (`State.round_index`
    then), and its JSON (`round_end_json`), made the first time a whole state asks for it
    (`json`) and kept: most rounds end and the next is played out with no page opened or synced
    in between, so serialising every round's end at once cost about 1.5% of a busy server's CPU
    (issue 15, benchmarks/load.py's profile at 5,000 connections)."""

    __slots__ = ("_json", "_make", "round")

    def __init__(
        self, round: int, json: bytes | None = None, make: Callable[[], bytes] | None = None
    ) -> None:
        """``json``: made already; else ``make`` makes it (ValueError for neither)."""
        if json is None and make is None:
            raise ValueError("a round before needs its JSON or a way to make it")
        self.round = round
        self._json = json
        self._make = make

    def json(self) -> bytes:
        """The round's JSON (`round_end_json`'s), made on the first call."""
        if self._json is None:
            assert self._make is not None
            self._json, self._make = self._make(), None
        return self._json


def round_end_later(room: Room) -> RoundBefore:
    """The round ``room.state`` has just ended, as `RoundBefore` for `Room.round_before`: what
    `round_end_json` reads of the room that the next deal replaces (the ended state, which the
    next deal forks and never changes; the seed, the commitment, the version and the lists of
    moves bots made and hints used, which a deal replaces by new lists) is taken now, the JSON
    made when first asked for, with the room's public part as it is then (who is connected, its
    settings: `round_end_json`)."""
    state = room.state
    assert state is not None
    seed, commitment, by_bot, version, hints = (
        room.seed,
        room.commitment,
        room.by_bot,
        room.version,
        room.hints_given,
    )

    def make() -> bytes:
        ended = Ended(
            state.round_index, player_view(state, None).to_json(), seed, commitment, by_bot, version
        )
        ended.hints = hints
        return round_end_json(room, ended)[1]

    return RoundBefore(state.round_index, make=make)


def round_end_json(room: Room, ended: Ended) -> tuple[int, bytes]:
    """A round as everyone saw it end (`previous_public`'s shape: the room then, its seed
    revealed and no turn, and the spectator's view with the round's log, outcome and reveal),
    serialised once for the whole states sent while the next round is played (`full_frame`'s
    ``round_before``): the round's number (`State.round_index`) and the JSON. ``ended``: that
    round (`app.rooms.recovery.Ended`), as the room kept it when it ended (`round_end_later`) or
    as a room read back mid-round rebuilt it. Either way the same bytes for the same round, but
    for what changed in the room since (who is connected, its settings)."""
    index, seed, commitment = ended.round - 1, ended.seed, ended.commitment
    public = {
        **room_public(room),
        "version": ended.version,
        "round": {
            "index": index,
            "commitment": commitment,
            "seed": seed,
            "by_bot": ended.by_bot,
            "hints": ended.hints,
        },
        "turn": None,
        "last_round": {"index": index, "seed": seed, "commitment": commitment},
    }
    return ended.round, orjson.dumps({"room": public, "view": ended.view})


def previous_json(room: Room) -> bytes:
    """``room.previous_match`` as JSON, serialised the first time it is asked for and kept with
    the object it was made from (`Room.previous_json`): the same bytes until that is replaced (Play
    again, a room loaded again). ``b"null"`` in the room's first match."""
    kept = room.previous_json
    if kept is None or kept[0] is not room.previous_match:
        kept = room.previous_json = (room.previous_match, orjson.dumps(room.previous_match))
    return kept[1]


def previous_public(room: Room) -> dict[str, Any] | None:
    """The room's match as it ended, as every seat may see it, kept for its next match's whole
    states (`full_frame`'s ``previous``: the client's "Previous match" panel after a reload):
    ``{"room": RoomPublic, "view": the spectator's view with its log}`` (the round's end reveals
    every hand); None before its first deal."""
    state = room.state
    if state is None:
        return None
    return {"room": room_public(room), "view": player_view(state, None).to_json()}


def presence_frame(room: Room) -> str:
    """Who is connected and covered, whether the host is (`Room.host_public`), the turn with
    its deadline (`turn_public`), and whether the room asks who still watches (a person coming or
    going changes it: `app.rooms.unattended`); it does not change the version."""
    seats = [s.public() for s in room.seats]
    host = room.host_public()
    return dumps(
        {
            "type": "presence",
            "version": room.version,
            "seats": seats,
            "host": host,
            "turn": turn_public(room),
            "keep_watching": room.asks_watching(),
        }
    )


def error_frame(code: str, message: str, version: int) -> str:
    """A refused action's answer."""
    return dumps({"type": "error", "code": code, "message": message, "version": version})


def welcome_frame(
    seat: int | None, watcher: str | None = None, tag: str | None = None, connection: str | None = None
) -> str:
    """The first frame on a connection: the protocol and the seat it holds (None: watching); a
    seat connection's identity, ``connection`` (`app.rooms.presence.new_connection_id`: the
    ``resume`` of its automatic reconnects' hellos); a spectator's own ``watcher`` key (for its
    next ``hello``), public ``tag`` (`app.rooms.watchers`) and ``name`` in the chat, None on a new
    socket: its presence tells the client this server takes a ``name`` message
    (`app.rooms.chat.name_spectator`), which an older one closes with 1007."""
    frame: dict[str, Any] = {"type": "welcome", "protocol": PROTOCOL_VERSION, "seat": seat}
    if connection is not None:
        frame["connection"] = connection
    if seat is None:
        frame |= {"watcher": watcher, "tag": tag, "name": None}
    return dumps(frame)
