"""Seat claims and the host's commands, run inside a room's task (`Room.call`). Each follows the
room's one order: compute the change, store it with the next version in one transaction, adopt
it, then close what it ends and send everyone the new state."""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Mapping

from app.rooms import chat, frames
from app.rooms.errors import RoomError
from app.rooms.recovery import round_end
from app.rooms.room import Room
from app.rooms.seats import (
    COVER_BOT,
    check_bot_swap,
    check_claim,
    check_leave,
    check_resize,
    hash_token,
    seat_of_token,
)
from app.rooms.unattended import rounds_after_deal
from app.rooms.watchers import is_tag
from app.store.rows import SeatChange, SeatSpec
from engine.core import Phase
from engine.errors import EngineError
from engine.variants import make_rules

__all__ = [
    "begin_match",
    "check_host",
    "check_starter",
    "claim",
    "leave",
    "remove_spectator",
    "set_bot",
    "set_open",
    "set_options",
    "stop_match",
]


def check_host(room: Room, token: str | None) -> None:
    """Raises `RoomError` (``not_host``, 403) unless ``token`` is ``room``'s host token."""
    if token is None or not hmac.compare_digest(hash_token(token), room.host_token_hash):
        raise RoomError("not_host", "only the room's host may do this", 403)


def check_starter(room: Room, token: str | None) -> None:
    """Whether ``token`` may start the match and set its options: the host's token, or, while
    the host is away (`app.rooms.presence.Presence.deputy`), the seat token of the deputy seat.
    Nothing else passes to the deputy (bots, the open table, the chat's rules stay the host's).
    Raises `RoomError` (``not_host``, 403)."""
    if token is not None and hmac.compare_digest(hash_token(token), room.host_token_hash):
        return
    deputy = room.deputy()
    if token is None or deputy is None:
        raise RoomError("not_host", "only the room's host may do this", 403)
    try:
        seat = seat_of_token(room.seats, token)
    except RoomError:
        seat = None
    if seat != deputy:
        raise RoomError("not_host", "only the host, or their deputy while they are away, may do this", 403)


async def claim(
    room: Room, seat: int, name: str, address: str | None = None, watcher: str | None = None
) -> str:
    """Give ``seat`` to a person called ``name``, from client ``address``
    (`app.addresses.counted_address`; None: not known) with spectator key ``watcher`` (None:
    none); returns their secret seat token. The seat's chat mute, if any, was the last person's:
    it ends, unless a mute holds this person too, which they bring to the seat
    (`app.rooms.chat.new_person`). A person the host removed as a spectator (their key's tag, or
    their address unless it spared that tag: `app.rooms.chat.refuse_removed`) does not come back
    by a seat either. Raises `RoomError` as `app.rooms.seats.check_claim` does, and
    ``spectator_removed`` (403)."""
    await chat.refuse_removed(room, None, False, watcher, address)
    token = secrets.token_urlsafe(32)
    change = SeatChange(seat, check_claim(room.seats, seat, name, room.status, hash_token(token)))
    version = await room.save(seats=[change])
    room.adopt(version, seats=[change])
    frames.send_updates(room, room.conns, _log_length(room))
    await chat.new_person(room, seat, address, watcher)
    return token


async def leave(room: Room, seat: int, token: str | None) -> None:
    """The player holding ``seat`` (by its ``token``) leaves it before the start: it is empty
    again, their sockets close (4005: they watch on as spectators) and their token stops working.
    Raises `RoomError`: ``not_your_seat`` (403), as `app.rooms.seats.check_leave` does."""
    if token is None or seat_of_token(room.seats, token) != seat:
        raise RoomError("not_your_seat", f"this token does not hold seat {seat}", 403)
    change = SeatChange(seat, check_leave(room.seats, seat, room.status))
    version = await room.save(seats=[change])
    room.adopt(version, seats=[change])
    for conn in [c for c in room.conns if c.seat == seat]:
        room.close(conn, "seat_left")
    frames.send_updates(room, room.conns, _log_length(room))


async def set_bot(room: Room, seat: int, level: str | None) -> None:
    """Make ``seat`` a bot of ``level`` (None: empty it) before the match starts, or replace a
    human with a bot at any time: their connections close (``seat_to_bot``, 4007: the page says
    the host gave the seat to a bot; an emptied seat's ``seat_emptied``, 4005: the page watches
    on, the seat free to take again), their grace ends. Raises `RoomError` as
    `app.rooms.seats.check_bot_swap` does."""
    change = SeatChange(seat, check_bot_swap(room.seats, seat, level, room.status))
    version = await room.save(seats=[change])
    room.adopt(version, seats=[change])
    for conn in [c for c in room.conns if c.seat == seat]:
        room.close(conn, "seat_to_bot" if level is not None else "seat_emptied")
    room.end_grace(seat)
    room.schedule()
    frames.send_updates(room, room.conns, _log_length(room))


async def remove_spectator(room: Room, tag: str) -> int:
    """The host removes the spectator whose public tag is ``tag`` (`app.rooms.watchers`: the tag
    its chat lines carry) from the room: the removal is stored with the chat's rules
    (`app.rooms.chat.remove`: by its tag and its client addresses, as a mute is held), then every
    socket of it closes (4006, "the host removed you from this room"), the host's own sockets never.
    The removal holds for the rest of the match, and after Play again as the chat's mutes do: a new
    socket of that spectator (a reload, another key from the same address) is refused with 4006
    (`app.rooms.chat.refuse_removed`). The version does not change. Returns how many sockets
    closed. The caller checks the host (`check_host`). Raises `RoomError`: ``bad_spectator`` (422:
    not a tag), ``no_such_spectator`` (404: no socket of that spectator is open, it left already)."""
    if not is_tag(tag):
        raise RoomError("bad_spectator", f"{tag[:16]!r} is not a spectator's tag", 422)
    removed = [c for c in room.conns if c.seat is None and c.watcher == tag and c not in room.host_conns]
    if not removed:
        raise RoomError("no_such_spectator", "no spectator with this tag is watching", 404)
    await chat.remove(room, tag)
    for conn in removed:
        conn.close("spectator_removed")
        room.on_disconnect(conn)  # as a spectator who left: with nobody left, no next deal
    return len(removed)


async def set_open(room: Room, open_table: bool) -> None:
    """List the room in the lobby's open tables (or take it off) while it waits for players.
    The listing time (`Room.listed_at`) is the match's first, stored on the database's clock with
    the first listing (`app.store.models.Match.listed_at`): taking the table off and listing it
    again, or loading its room again on another process, does not make it new in the lobby
    (`app.rooms.lobby.rank_tables`). Raises `RoomError`
    (``already_started``) once the match has begun."""
    if room.status != "waiting":
        raise RoomError("already_started", "the match has already started")
    version = await room.save(open_table=open_table)
    room.adopt(version)
    room.open_table = open_table
    if open_table and room.listed_at is None:
        room.listed_at = room.clock.time()
    frames.send_updates(room, room.conns, _log_length(room))


async def set_options(
    room: Room,
    options: Mapping[str, object] | None,
    turn_timer_s: float | None,
    hints: bool | None = None,
    seats: int | None = None,
) -> None:
    """The host changes the match's options (the variant's, as at the room's creation: Domeng's
    ``camat_target``, Kozel's ``two_lempas`` and ``pairs``; None: as they are) and, when given,
    its turn timer (seconds, 0: none), whether hints are allowed and the table's number of
    ``seats`` (Kozel's 2, 3 or 4, K1; Domeng's is always 5, D10), before the start: the next
    match after Play again, say. New seats are added empty at the end; the seats past a smaller
    count go (a bot's, an empty one), never a person's. The options are checked against the new
    count as at creation: ``pairs`` needs 4 seats (K10), so a pairs table shrinks only with
    ``pairs`` off in the same change. All of it is stored in one transaction with the next
    version, then everyone is sent the state.

    Raises `RoomError`: ``already_started`` (409); the engine's ``invalid_options`` and
    ``invalid_seats`` (422) as `engine.variants.make_rules` raises them; ``seat_taken`` (409: a
    person sits past the new count, `app.rooms.seats.check_resize`)."""
    if room.status != "waiting":
        raise RoomError("already_started", "the match has already started")
    count = len(room.seats) if seats is None else seats
    try:
        rules = make_rules(room.rules.name, room.rules.options() if options is None else options, count)
    except EngineError as error:
        raise RoomError(error.code, error.message, 422) from None
    resize = None if count == len(room.seats) else count
    if resize is not None:
        check_resize(room.seats, resize)
        await chat.rules_of(room)  # read now: its mutes end with the seats (below), read failing first
    timer = room.turn_timer_s if turn_timer_s is None else turn_timer_s
    version = await room.save(options=rules.options(), turn_timer_s=timer, hints=hints, seat_count=resize)
    room.adopt(version)
    if resize is not None:
        room.resize(resize)
    room.rules, room.turn_timer_s = rules, timer
    if hints is not None:
        room.hints = hints
    frames.send_updates(room, room.conns, _log_length(room))
    if resize is not None:
        await chat.forget_seats(room, resize)  # the mutes of the seats gone end with them


async def begin_match(room: Room) -> None:
    """The host's ``start``: fill empty seats with bots and deal the first round, stored in one
    transaction (with it, 1 round dealt with no person at the table when none is connected to
    their seat: `app.rooms.unattended`). Raises `RoomError` (``already_started``)."""
    if room.status != "waiting":
        raise RoomError("already_started", "the match has already started")
    fills = [
        SeatChange(s.seat, SeatSpec(kind="bot", bot_level=COVER_BOT, seat=s.seat))
        for s in room.seats
        if s.kind == "empty"
    ]
    state = room.rules.new_match()
    new_round, fork, seed = room.next_deal(state)
    unattended = rounds_after_deal(room.seats, 0)
    version = await room.save(seats=fills, status="playing", new_round=new_round, unattended=unattended)
    room.state, room.unattended = state, unattended
    room.adopt(version, seats=fills, status="playing")
    room.adopt_deal(fork, seed)
    room.grace_for_absent()  # those who left before the start: their grace runs from now
    room.schedule()
    frames.send_updates(room, room.conns, 0)


async def stop_match(room: Room, stop: bool) -> None:
    """The host ends a match that only the host ends (no-limit Domeng, `Rules.host_stops`; RULES.md
    "Match end (room option)"), or with ``stop`` false takes that back. While a round is played the
    ask is stored and shown to everyone (`RoomPublic.host_stop`): the match ends when that round
    ends by the rules (`app.rooms.commits.Commits.commit`), never cut. Between rounds (the last one
    ended, the next not dealt) the match ends at once, with its standings. Asking twice changes
    nothing. The caller checks the host (`check_host`: the deputy may not, and an ask stands while
    the host is away). Raises `RoomError`: ``not_stoppable`` (409: the options end the match),
    ``not_playing`` (409: it has not started, or is over)."""
    if not room.rules.host_stops:
        raise RoomError(
            "not_stoppable", "this match ends by its options; the host ends only a match with no limit"
        )
    state = room.state
    if room.status != "playing" or state is None:
        raise RoomError("not_playing", "the match is not being played")
    if stop == room.host_stop:
        return
    if stop and state.phase is Phase.READY:
        fork = state.fork()
        fork.stop()
        # the last round's stored outcome says the match ended with it, as when a round in play
        # ends after the ask (`app.rooms.recovery.round_end`)
        ended = (fork.round_index - 1, round_end(fork).outcome)
        # no bot plays for anyone any more: the covers end with the match, in its transaction
        covers = room.covers_after(fork) or None
        version = await room.save(status="finished", host_stop=True, ended_round=ended, covers=covers)
        room.state, room.host_stop = fork, True
        room.adopt(version, status="finished")
        room.after_move(fork)
        room.covers_adopted()
        room.schedule()  # the next deal is off
        frames.send_whole(room, room.conns)  # the round's end they were sent now says so too
        return
    version = await room.save(host_stop=stop)
    room.adopt(version)
    room.host_stop = stop
    room.schedule()  # the wait at the new version: a turn's deadline stands (`Timing.schedule`)
    frames.send_updates(room, room.conns, len(state.log))


def _log_length(room: Room) -> int:
    return 0 if room.state is None else len(room.state.log)
