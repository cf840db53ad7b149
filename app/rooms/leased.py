"""The leases of the hub's rooms (several processes, docs/cluster.md): the fencing token each room
writes under, releasing a lease, and dropping a room whose lease is lost."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import structlog

from app.metrics import Metrics
from app.rooms.ownership import Ownership, elsewhere
from app.rooms.ports import CloseReason, Lease
from app.rooms.room import Room
from app.store import Store

__all__ = [
    "LeasedRooms",
]

_log = structlog.get_logger("domeng.hub")


class LeasedRooms:
    """The lease half of `app.rooms.hub.Hub` (which provides the attributes declared here)."""

    rooms: dict[str, Room]
    owners: dict[str, str]
    creators: dict[str, tuple[str, str | None]]
    store: Store
    metrics: Metrics
    ownership: Ownership | None

    def __init__(self) -> None:
        self._stopping: set[asyncio.Task[None]] = set()
        """The tasks stopping rooms unloaded on a lost lease."""

    def fence_of(self, code: str) -> int | None:
        """The fencing token the room ``code`` in memory is held under (None without leases)."""
        return None if self.ownership is None else self.ownership.fence_of(code)

    def store_of(self, code: str) -> Store:
        """The store as room ``code`` writes to it: under its lease's fencing token while this
        process holds the room (`app.store.Store.fenced`), the store itself otherwise."""
        fence = self.fence_of(code)
        return self.store if fence is None else self.store.fenced(fence)

    async def release(self, code: str) -> None:
        """Give up the lease of room ``code`` (a no-op without one): call it once the room is out
        of memory and its task stopped (`app.admin.live.close_room`)."""
        if self.ownership is not None:
            await self.ownership.release(code)

    async def hand_over(self, code: str) -> bool:
        """Give room ``code`` up for another process to take (docs/cluster.md, "Handoff"): out
        of memory at once (nothing new slips into its queue), its task stopped after the intents
        already queued (each stored and sent as usual), then its sockets closed (``room_moved``:
        their clients reconnect and reach the room's new owner) and its lease released. False,
        and nothing changes, when this process does not hold the room's lease with the room in
        memory."""
        room = self.rooms.get(code)
        if room is None or self.ownership is None or self.ownership.fence_of(code) is None:
            return False
        self._take_out(room)
        try:
            await room.stop(hand_over=True)  # its turn's deadline stands on the next owner
        finally:
            room.close_all("room_moved")
            await self.release(code)
        _log.info("room_handed_over", room=code, version=room.version)
        return True

    def _lost(self, lease: Lease) -> None:
        """The room's lease is lost (not renewed in time, or a write refused by its fence): the
        room leaves memory at once and its sockets close (``room_moved``, the client reconnects);
        its task stops in the background (what it had queued is refused by the fence, or stored
        if no other process took the room yet)."""
        room = self.rooms.get(lease.code)
        if room is not None:
            self._drop(room, lease)

    def reload(self, room: Room) -> None:
        """``room``'s state is behind its stored log (`Room.out_of_step`: a write it was told had
        failed was stored): out of memory at once, its sockets closed (``room_reloading``: their
        clients reconnect, and `open` loads the room from the store, that write included); its
        task stops in the background, then its lease is released."""
        if self.rooms.get(room.code) is not room:
            return
        sockets = self._evict(room, "room_reloading", self._stop_reloaded(room), self.ownership is None)
        _log.warning("room_out_of_step", room=room.code, sockets=sockets, version=room.version)

    async def _stop_reloaded(self, room: Room) -> None:
        await room.stop()
        await self.release(room.code)

    def _lost_meanwhile(self, room: Room, lease: Lease) -> None:
        """After a room was loaded or created under ``lease``: if the lease was lost meanwhile
        (before the room was in `rooms`), drop the room now, as `_lost` would have."""
        if self.ownership is not None and not self.ownership.holds(lease):
            self._drop(room, lease)
            raise elsewhere()

    def _take_out(self, room: Room, keep_creator: bool = False) -> None:
        """``room`` retired and out of memory (`rooms`, the rooms gauge, and `owners` unless
        ``keep_creator``), with no await in between: nothing slips into its queue any more."""
        room.retired = True
        if self.rooms.get(room.code) is room:
            del self.rooms[room.code]
        if not keep_creator:
            self.owners.pop(room.code, None)
        self.creators.pop(room.code, None)  # noted again when it is loaded again
        self.metrics.rooms.set(len(self.rooms))

    def _evict(
        self, room: Room, reason: CloseReason, stopping: Coroutine[Any, Any, None], keep_creator: bool
    ) -> int:
        """``room`` out of memory at once (`_take_out`), its sockets closed with ``reason`` (their
        clients reconnect), and ``stopping`` (its task stopped, its lease let go) run in the
        background (`_stopping`); how many sockets it had."""
        self._take_out(room, keep_creator)
        sockets = len(room.conns)
        room.close_all(reason)
        task = asyncio.ensure_future(stopping)
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)
        return sockets

    def _drop(self, room: Room, lease: Lease) -> None:
        sockets = self._evict(room, "room_moved", self._stop_lost(room, lease), keep_creator=False)
        _log.warning(
            "room_lease_lost", room=room.code, fence=lease.token, sockets=sockets, version=room.version
        )

    async def _stop_lost(self, room: Room, lease: Lease) -> None:
        await room.stop()
        if self.ownership is not None:  # after a refused write the lease is still renewed: stop that
            await self.ownership.leases.release(lease)
