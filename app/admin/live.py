"""The open rooms as the admin sees them, and closing a stuck one: this process's, and with
several processes (docs/cluster.md) every process's, asked through the `Peers` port (each
process answers for the rooms it hosts: `answer`).

Listing reads each room's fields directly instead of going through the room's queue, so a room
whose task is stuck still shows (asyncio runs one thing at a time: the snapshot is consistent).

Closing (`close_room`) keeps everything stored: it takes the room out of the hub (new sockets and
HTTP calls get "no room"), stops the room's task after the intents already queued (cancelling it if
it does not stop within ``stop_timeout_s``: a store write it was awaiting still completes, the
store's writer owns it), stores the match as ``abandoned`` unless it had finished, and only then
closes every socket with 4003 (room closed): nothing is seen before it is stored. Its rounds and
actions stay in the store and export as before.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Literal, Protocol

import structlog
from fastapi import HTTPException

from app.admin.schemas import RoomClosed, RoomList, RoomLive, SeatLive
from app.rooms.frames import room_public
from app.rooms.hub import Hub
from app.rooms.room import Room

__all__ = ["Peers", "answer", "close_anywhere", "close_room", "live_everywhere", "room_live"]

_log = structlog.get_logger("domeng.admin")


class Peers(Protocol):
    """The other server processes (`app.cluster.RedisShared`): ``holder`` is this process's id."""

    @property
    def holder(self) -> str:
        """This process's id (host:pid:random)."""

    async def ask(self, kind: str, body: dict[str, Any], timeout_s: float = 3.0) -> dict[str, Any]:
        """Every other process's answer to ``kind`` (`answer`), by process id, as many as came in
        time. Raises ConnectionError."""

    async def processes(self) -> list[str]:
        """The live processes' ids, this one included. Raises ConnectionError."""

    async def holder_of(self, code: str) -> str | None:
        """The id of the process holding room ``code``'s lease, or None. Raises ConnectionError."""


async def answer(hub: Hub, kind: str, body: dict[str, Any]) -> Any:
    """This process's answer to another's ask: ``live`` → its rooms (`RoomLive` as JSON);
    ``close`` (``{"code": ...}``) → the `RoomClosed` of that room if it hosts it, else None."""
    if kind == "live":
        return [room_live(room).model_dump(mode="json") for room in hub.rooms.values()]
    if kind == "close":
        closed = await close_room(hub, str(body.get("code", "")))
        return None if closed is None else closed.model_dump(mode="json")
    return None


def _unreachable() -> HTTPException:
    message = "the other server processes cannot be reached now (Redis); try again"
    return HTTPException(503, detail={"code": "cluster_unavailable", "message": message})


async def live_everywhere(hub: Hub, peers: Peers | None) -> RoomList:
    """This process's rooms and, with ``peers``, every other process's that answered within a few
    seconds (`RoomList.unanswered` names the others); newest match first. Raises HTTPException
    503 ``cluster_unavailable`` when Redis does not answer."""
    here = None if peers is None else peers.holder
    rooms = [room_live(room).model_copy(update={"process": here}) for room in hub.rooms.values()]
    unanswered: list[str] = []
    if peers is not None:
        try:
            processes = await peers.processes()  # before the ask: who was live when it was sent
            answers = await peers.ask("live", {})
        except ConnectionError:
            raise _unreachable() from None
        answered = {p: listed for p, listed in answers.items() if isinstance(listed, list)}  # else it failed
        for process, listed in answered.items():
            rooms += [RoomLive.model_validate({**r, "process": process}) for r in listed]
        unanswered = sorted(
            {p for p in processes if p != here and p not in answered} | (answers.keys() - answered.keys())
        )
    rooms.sort(key=lambda r: r.match_id, reverse=True)
    return RoomList(rooms=rooms, unanswered=unanswered)


async def close_anywhere(hub: Hub, peers: Peers | None, code: str) -> RoomClosed | None:
    """Close room ``code`` here (`close_room`) or, with ``peers``, on the process that hosts it;
    when no process hosts it (it left memory, or nobody opened it since a restart), it is loaded
    here from the store, as opening its link does (`Hub.open`), and closed. None when the code
    opens no room (unknown, or already abandoned). Raises HTTPException 503: ``room_elsewhere``
    naming the process that holds the room but did not answer, ``cluster_unavailable`` when Redis
    does not answer; `app.rooms.errors.RoomError` as `Hub.open`; `app.store.StoreError` as
    `close_room`."""
    closed = await close_room(hub, code)
    if closed is None and peers is not None:
        closed = await _close_elsewhere(peers, code)
    if closed is not None:
        return closed
    if await hub.open(code) is None:  # out of memory everywhere: load it, then close it
        return None
    return await close_room(hub, code)


async def _close_elsewhere(peers: Peers, code: str) -> RoomClosed | None:
    """Room ``code`` closed by the process hosting it; None when no process hosts it."""
    try:
        answers = await peers.ask("close", {"code": code})
        for found in answers.values():
            if isinstance(found, dict) and "code" in found:  # the host's (others answer None)
                return RoomClosed.model_validate(found)
        holder = await peers.holder_of(code)
    except ConnectionError:
        raise _unreachable() from None
    if holder is None or holder == peers.holder:
        return None
    message = f"room {code} is hosted by process {holder}, which did not answer; try again"
    raise HTTPException(503, detail={"code": "room_elsewhere", "message": message})


def room_live(room: Room) -> RoomLive:
    """A snapshot of ``room``: match, status, phase, turn, connections per seat, queue."""
    state = room.state
    spectators = sum(1 for conn in room.conns if conn.seat is None)
    turn = room_public(room)["turn"]
    return RoomLive(
        code=room.code,
        match_id=room.match_id,
        variant=room.rules.name,
        status=room.status,
        version=room.version,
        phase=None if state is None else state.phase.value,
        round=None if state is None or state.round_index == 0 else state.round_index - 1,
        to_act=None if turn is None else turn["seat"],
        turn_deadline_ms=None if turn is None else turn["deadline_ms"],
        connections=len(room.conns),
        spectators=spectators,
        queued=room.queue.qsize(),
        task_alive=room.task is not None and not room.task.done(),
        idle_s=round(room.idle_s(), 1),
        seats=[
            SeatLive(
                seat=s.seat,
                kind=s.kind,
                name=s.name,
                bot_level=s.bot_level,
                connections=s.connections,
                covered=s.covered,
            )
            for s in room.seats
        ],
    )


async def _stop_task(room: Room, timeout_s: float) -> Literal["stopped", "cancelled", "none"]:
    task = room.task
    if task is None or task.done():
        return "none"
    room.queue.put_nowait(None)  # the task ends after the intents already queued
    try:
        async with asyncio.timeout(timeout_s):  # not wait_for: on 3.11 it can swallow a cancel
            await asyncio.shield(task)
        return "stopped"
    except TimeoutError:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        return "cancelled"
    finally:
        room.cancel_timers()  # as Room.stop does after its task ends


async def close_room(hub: Hub, code: str, stop_timeout_s: float = 5.0) -> RoomClosed | None:
    """Close the room ``code`` (see the module docstring); None when this server has no such room.

    Raises `app.store.StoreError` when the status cannot be stored (the room is closed anyway).
    """
    room = hub.rooms.pop(code, None)
    if room is None:
        return None
    store = hub.store_of(code)  # with several processes: under the room's lease's token (docs/cluster.md)
    room.retired = True  # a caller holding it gets "reloading", and then no room
    hub.owners.pop(code, None)
    hub.metrics.rooms.set(len(hub.rooms))
    how = await _stop_task(room, stop_timeout_s)
    disconnected = len(room.conns)
    try:
        stored = await hub.store.load_match_by_id(room.match_id)
        status = stored.status if stored is not None else room.status
        if status != "finished":
            version = max(room.version, stored.version if stored is not None else 0)
            await store.abandon(room.match_id, "admin", version)
            status = "abandoned"
    finally:
        room.close_all("room_closed")  # after the status is stored (or could not be)
        await hub.release(code)
    _log.info("room_closed_by_admin", room=code, match=room.match_id, task=how, sockets=disconnected)
    return RoomClosed(code=code, match_id=room.match_id, disconnected=disconnected, task=how, status=status)
