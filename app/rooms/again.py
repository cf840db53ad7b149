"""Play again: the room's next match, with the same seats (issue 14). Runs inside the room's task
(`app.rooms.room.Room.call`) and follows the room's one order: compute, store, adopt, send.

At a match's end a seated person (or the host) asks to play again. The first ask stores the
room's next match in one transaction: the same code, the next number (``room_match``), the same
variant, options and turn timer, the room's host token, open-table choice and chat rules, and the
same seats: each person keeps their seat and token (ready only if it is they who asked), each bot
its level. Its version is the last match's plus one, so versions grow across the room's matches
and a client never mixes the two (its ``since`` from the last match is not a mark of the new one:
it gets a whole state). Then everyone connected gets the new match's whole state, waiting for its
start, and the room's chat: the conversation carries on (the room's recent lines, each saying its
match, so the client marks where this match began), with the host's rules; each match's own lines
stay with it in the store. Each later ask marks
that person ready. The host starts when they want (`app.rooms.host.begin_match`): absent people
are covered by bots as at any start; a person may leave their seat before it, which is then free.
"""

from __future__ import annotations

import hmac

import structlog

from app.rooms import chat as chat_room
from app.rooms import frames
from app.rooms.errors import RoomError
from app.rooms.room import Room
from app.rooms.seats import SeatInfo, hash_token
from app.store.rows import SeatChange, SeatSpec

__all__ = ["carried_seat", "play_again"]

_log = structlog.get_logger("domeng.room")


def carried_seat(info: SeatInfo, ready: bool) -> SeatSpec:
    """What ``info`` becomes in the room's next match: a person keeps it (name and token hash;
    ``ready`` as given; the level of the bot they took it from, which it goes back to if they
    leave it before the start), a bot keeps its level (and the token hash of the person the host
    gave the seat to a bot from, `SeatInfo.former_token_hash`), an empty seat stays empty."""
    if info.kind == "human":
        return SeatSpec(
            kind="human",
            name=info.name,
            token_hash=info.token_hash,
            seat=info.seat,
            ready=ready,
            replaced=info.replaced,
        )
    if info.kind == "bot":  # with the token of the person the host gave it from (told so later)
        return SeatSpec(
            kind="bot",
            name=info.name,
            bot_level=info.bot_level,
            seat=info.seat,
            former_token_hash=info.former_token_hash,
        )
    return SeatSpec(kind="empty", seat=info.seat)


def _asker(room: Room, token: str | None) -> int | None:
    """The seat whose token ``token`` is, None for the host's token; raises `RoomError`
    (``again_refused``, 403) for any other."""
    if token is not None:
        digest = hash_token(token)
        for info in room.seats:
            if info.kind == "human" and info.token_hash and hmac.compare_digest(info.token_hash, digest):
                return info.seat
        if hmac.compare_digest(digest, room.host_token_hash):
            return None
    raise RoomError("again_refused", "only a seated person or the host may ask to play again", 403)


async def play_again(room: Room, token: str | None) -> None:
    """``token`` (a seat's, or the host's) asks to play again. At the match's end: store and
    adopt the room's next match (module docstring), the asking seat ready, and send everyone its
    whole state and its chat. While that match waits for its start: mark the asking seat ready
    (the host's own ask changes nothing). Raises `RoomError`: ``again_refused`` (403),
    ``not_started`` (409: the room's first match waits for its start, so there is nothing to play
    again), ``not_finished`` (409: the match is being played)."""
    seat = _asker(room, token)
    if room.status == "waiting" and room.room_match == 1:
        raise RoomError("not_started", "the match has not started yet: there is nothing to play again")
    if room.status == "waiting":
        info = None if seat is None else room.seats[seat]
        if info is None or info.ready:
            return
        change = SeatChange(info.seat, carried_seat(info, ready=True))
        version = await room.save(seats=[change])
        room.adopt(version, seats=[change])
        frames.send_updates(room, room.conns, 0)
        return
    if room.status != "finished":
        raise RoomError("not_finished", "the match is not over yet")
    await _next_match(room, seat)


async def _next_match(room: Room, asker: int | None) -> None:
    specs = [carried_seat(info, ready=info.seat == asker) for info in room.seats]
    rules = await chat_room.rules_of(room)
    number, version = room.room_match + 1, room.version + 1
    match_id = await room.store.create_match(
        room.code,
        room.rules.name,
        room.rules.options(),
        len(room.seats),
        room.turn_timer_s,
        room.host_token_hash,
        specs,
        room_match=number,
        version=version,
        open_table=room.open_table,
        chat_rules=rules,
        hints=room.hints,
        bot_share=None if room.bot_share == room.code else room.bot_share,
        creator_site=room.creator_site,
    )
    room.next_match(match_id, number, version, specs)
    await chat_room.carry_on(room)
    _log.info("room_next_match", room=room.code, match=match_id, number=number)
    frames.send_updates(room, room.conns, 0)
    for conn in room.conns:
        await chat_room.send_log(room, conn)
