"""Handoff: a room moves to the process its clients reach (several processes, docs/cluster.md).

Behind nginx's consistent hashing of the room code (deploy/nginx.conf) every socket and every HTTP
call of a room reaches one process, which need not be the room's owner: the room was created, or
taken over after a failover, wherever that request happened to land. Relaying every frame of such
a room to its owner costs both processes CPU for as long as the room lives (docs/cluster.md, "The
relay"). So a process that gets a room hosted elsewhere first asks the owner to hand it over
(`Handoff.open`), and the owner does when no socket of its own is in the room (`Handoff.answer`):
it stops the room after what is queued, closes its relayed sockets with ``room_moved`` and
releases the lease; the asker then takes the lease and loads the room from the store, as after a
failover. The lease and the fence stay the only guard of one writer per room: a handoff is a
lease given up and taken, nothing more. An owner with a socket of its own keeps the room (the
asker relays), so without hashing rooms do not bounce between processes.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import structlog

from app.rooms.errors import RoomError
from app.rooms.hub import Hub
from app.rooms.ownership import elsewhere
from app.rooms.room import Room

__all__ = ["HANDOFF", "Asker", "Handoff"]

_log = structlog.get_logger("domeng.handoff")

HANDOFF = "handoff"
"""The kind of the ask (`Asker.ask`) that requests a room: body ``{"code": CODE}``."""


class Asker(Protocol):
    """The other server processes (`app.cluster.RedisShared`)."""

    async def ask(self, kind: str, body: dict[str, Any], timeout_s: float = 3.0) -> dict[str, Any]:
        """Every other process's answer to ``kind``, by process id, as many as came within
        ``timeout_s`` seconds. Raises ConnectionError when Redis cannot be reached."""


class Handoff:
    """This process's side of handoffs: the rooms' local sockets (`arrived`, `left`), the answer
    to another process's request (`answer`) and its own (`open`).

    ``asker`` is None with one process (or handoffs turned off, ``DOMENG_ROOM_HANDOFF=false``):
    `open` is then `Hub.open`. ``timeout_s``: how long `open` waits for the owner's answer
    before relaying instead (seconds)."""

    def __init__(
        self,
        hub: Hub,
        asker: Asker | None,
        timeout_s: float = 2.0,
        moved: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.hub = hub
        self.asker = asker
        self.timeout_s = timeout_s
        self.moved = moved
        """Called once a room has left this process or come to it (the board publishes at once,
        so the lobbies list a moved open table on its new host: `app.web.shared.Board`)."""
        self.local: Counter[str] = Counter()
        """The sockets of each room admitted on this process (not the relayed ones), by code."""
        self._asking: dict[str, asyncio.Future[tuple[bool, str | None]]] = {}

    def arrived(self, code: str) -> None:
        """A socket of this process opened room ``code`` here (before its hello: a room is not
        handed over while one of its sockets is joining it)."""
        self.local[code] += 1

    def left(self, code: str) -> None:
        """A socket counted by `arrived` has closed."""
        self.local[code] -= 1
        if self.local[code] <= 0:
            del self.local[code]

    async def answer(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """Another process asks for room ``body["code"]``: hand it over (`Hub.hand_over`) if it
        is held here and no socket of this process is in it. ``{"released": True, "owner":
        ADDRESS | None}`` (the address that created it, for the per-address cap) when it was,
        ``{"released": False}`` when it is held here and kept, None when it is not held here."""
        code = str(body.get("code", ""))
        if self.hub.get(code) is None:
            return None
        if self.local[code] > 0:
            return {"released": False}
        owner = self.hub.owners.get(code)
        if not await self.hub.hand_over(code):
            return None
        if self.moved is not None:
            await self.moved()
        return {"released": True, "owner": owner}

    async def open(self, code: str) -> Room | None:
        """Room ``code`` on this process (`Hub.open`); while another process holds it, that
        process is first asked to hand it over, and the room is taken here if it did. Raises
        `RoomError` as `Hub.open` does (``room_elsewhere`` when the owner kept the room or did not
        answer in time: the caller relays, or answers 503)."""
        try:
            return await self.hub.open(code)
        except RoomError as error:
            if self.asker is None or error.code != "room_elsewhere" or len(code) > 64:
                raise
        asking = self._asking.get(code)
        if asking is None:  # one request per room, however many of its clients arrive at once
            asking = self._asking[code] = asyncio.ensure_future(self._request(code))
            asking.add_done_callback(lambda _: self._asking.pop(code, None))
        released, creator = await asyncio.shield(asking)
        if not released:
            raise elsewhere()
        room = await self.hub.open(code)
        if room is not None:
            if creator is not None:
                self.hub.owners.setdefault(code, creator)  # it counts in its creator's open rooms here
            if self.moved is not None:
                await self.moved()
        return room

    async def _request(self, code: str) -> tuple[bool, str | None]:
        """Ask the room's owner to hand it over: whether it did (the room's lease is then free),
        and the address that created the room."""
        assert self.asker is not None
        try:
            answers = await self.asker.ask(HANDOFF, {"code": code}, timeout_s=self.timeout_s)
        except ConnectionError:
            return False, None
        for answer in answers.values():
            if isinstance(answer, dict) and answer.get("released"):
                creator = answer.get("owner")
                _log.info("room_taken_over", room=code)
                return True, creator if isinstance(creator, str) else None
        return False, None
