"""Hints (issue 16): when the host allows them, a player may ask on their turn for the hard bot's
choice; it is shown on their hand, and every hint used is told to the whole table and stored.

A hint is not game state: it never changes the room's version. It is computed by the room's bot
port (a worker process) from the asker's own `player_view`, never from the state, outside the
room's task; it is given only if the turn has not moved on meanwhile, and then stored before it is
sent. Asking again on the same turn gives the same hint and is not counted twice."""

from __future__ import annotations

import secrets
from typing import Any, Final

from app.rooms import frames
from app.rooms.errors import RoomError
from app.rooms.ports import Outbox
from app.rooms.room import Room
from engine.actions import Action
from engine.core import Phase
from engine.views import PlayerView, player_view

__all__ = ["HINT_LEVEL", "ask"]

HINT_LEVEL: Final = "hard"
"""The bot level whose choice a hint shows."""


def _request(room: Room, conn: Outbox) -> tuple[int, int, PlayerView, dict[str, Any] | None]:
    """In the room's task: the version, the asker's seat and view at their turn, and the hint
    already given at this version (or None). Raises `RoomError` (``hints_off``, ``not_seated``,
    ``not_your_turn``)."""
    if not room.hints:
        raise RoomError("hints_off", "the host has not allowed hints at this table")
    seat = conn.seat
    if seat is None:
        raise RoomError("not_seated", "hints are for the players at the table")
    state = room.state
    if state is None or state.phase is not Phase.PLAYING or state.to_act != seat:
        raise RoomError("not_your_turn", "a hint is for your own turn")
    given = room.hint_at if room.hint_at is not None and room.hint_at[0] == room.version else None
    return room.version, seat, player_view(state, seat), None if given is None else given[1]


async def _give(room: Room, version: int, seat: int, action: Action) -> dict[str, Any]:
    """In the room's task: store the hint and tell the table (the asker's sockets get the action,
    everyone that ``seat`` used a hint). Raises `RoomError` ``hint_stale`` when the turn moved on."""
    state = room.state
    if room.version != version or state is None:
        raise RoomError("hint_stale", "the turn moved on before the hint was ready")
    if room.hint_at is not None and room.hint_at[0] == version:  # a second ask, answered meanwhile
        return room.hint_at[1]
    shown = action.to_json()
    round_index, seq = state.round_index - 1, len(state.actions)
    await room.store.add_hint(room.match_id, round_index, seq, seat, shown)
    room.hint_at = (version, shown)
    room.hints_given.append({"seat": seat, "seq": seq, "at": len(state.log)})  # where its move's events begin
    used = frames.dumps({"type": "hint_used", "seat": seat, "round": round_index, "seq": seq})
    for each in room.conns:
        each.send(used)
    return shown


async def ask(room: Room, conn: Outbox) -> None:
    """``conn``'s request for a hint: checked in the room's task, computed by the bot port from
    the seat's view outside it, given if still that turn. The asker's sockets get ``{"type":
    "hint", "version", "action"}``. Raises `RoomError` (see `_request`, ``hint_stale``)."""
    version, seat, view, given = await room.call(lambda r: _request(r, conn))
    if given is None:
        action = (
            view.legal[0]
            if len(view.legal) == 1
            else await room.bots.decide(HINT_LEVEL, view, secrets.randbits(32), room.bot_share)
        )

        async def give(r: Room) -> dict[str, Any]:
            return await _give(r, version, seat, action)

        given = await room.call(give)
    message = frames.dumps({"type": "hint", "version": version, "action": given})
    for each in room.conns:
        if each.seat == seat:
            each.send(message)
