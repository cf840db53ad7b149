"""The leases of the rooms one process holds, when several processes share the rooms
(docs/cluster.md): taking a room's lease and claiming its fence, giving it up, and noticing its
loss. The hub owns one `Ownership` when a `Leases` port is configured, none otherwise."""

from __future__ import annotations

from collections.abc import Callable

import structlog

from app.rooms.errors import RoomError
from app.rooms.ports import Lease, Leases
from app.store import FencedOutError, Store

__all__ = [
    "RETRY",
    "Ownership",
    "elsewhere",
    "unavailable",
]

_log = structlog.get_logger("domeng.hub")

RETRY: dict[str, str] = {"Retry-After": "1"}
"""Headers of a 503 for a room that another process holds, or that no one can reach now."""


def elsewhere(detail: str = "this room is hosted by another server; try again") -> RoomError:
    """The 503 ``room_elsewhere`` (with ``Retry-After: 1``): another process holds the room."""
    return RoomError("room_elsewhere", detail, 503, RETRY)


def unavailable(detail: str) -> RoomError:
    """The 503 ``room_unavailable`` (with ``Retry-After: 1``): the room cannot be reached or
    loaded right now (its leases, or its store)."""
    return RoomError("room_unavailable", detail, 503, RETRY)


class Ownership:
    """The rooms' leases held by one process (`held`, by room code), over the `Leases` port.

    ``on_lost(lease)`` is called once when a held lease is lost: not renewed in time, or a write
    refused by the store's fence (`fenced`); the lease is out of `held` by then.
    """

    def __init__(self, leases: Leases, store: Store, on_lost: Callable[[Lease], None]) -> None:
        self.leases = leases
        self.store = store
        self.held: dict[str, Lease] = {}
        """The lease of each room in memory, by code."""
        self._on_lost = on_lost

    def fence_of(self, code: str) -> int | None:
        """The fencing token room ``code`` is held under, or None when it is not held here."""
        lease = self.held.get(code)
        return None if lease is None else lease.token

    def holds(self, lease: Lease) -> bool:
        """Whether ``lease`` is still the one held for its room (not lost meanwhile)."""
        return self.held.get(lease.code) is lease

    def fenced(self, lease: Lease) -> Store:
        """The store as a room held under ``lease`` writes to it (`app.store.Store.fenced`): each
        write carries the lease's token, and a refused one counts as the lease's loss."""
        return self.store.fenced(lease.token, on_fenced=lambda: self.lost(lease))

    async def take(
        self, code: str, *, claim: bool = True, creator: str | None = None, creator_ttl_s: float = 0.0
    ) -> Lease:
        """Room ``code``'s lease, held (in `held`) from now on, and, with ``claim`` (a room the
        store knows), its stored fence raised to the lease's token (`app.store.Store.claim_room`)
        before anything of it is read; with ``creator`` (a new room), that client address noted
        as its creator with the lease, for ``creator_ttl_s`` seconds (`Leases.acquire`). Raises
        `RoomError` (503, ``Retry-After``): ``room_elsewhere`` while another process holds it,
        ``room_unavailable`` while the leases cannot be reached."""
        try:
            lease = await self.leases.acquire(code, self.lost, creator=creator, creator_ttl_s=creator_ttl_s)
        except ConnectionError:
            raise unavailable("the room's server cannot be found right now; try again") from None
        if lease is None:
            raise elsewhere()
        self.held[code] = lease  # from now on a loss is seen (`lost`), even while the room loads
        try:
            if claim:
                await self._claim(lease)
        except BaseException:
            await self.give_up(lease)
            raise
        return lease

    async def _claim(self, lease: Lease) -> None:
        try:
            await self.store.claim_room(lease.code, lease.token)
        except FencedOutError as stale:
            # the store knows a higher token than the leases (their data was lost): take one above it
            _log.warning("room_fence_behind", room=lease.code, fence=lease.token, stored=stale.stored)
            if not await self.leases.advance(lease, stale.stored):
                raise elsewhere("this room is hosted by another server") from None
            await self.store.claim_room(lease.code, lease.token)

    async def give_up(self, lease: Lease) -> None:
        """Stop holding ``lease`` and release it (another process may take the room at once)."""
        if self.held.get(lease.code) is lease:
            del self.held[lease.code]
        await self.leases.release(lease)

    async def release(self, code: str) -> None:
        """Give up the lease of room ``code``, if it is held here."""
        lease = self.held.get(code)
        if lease is not None:
            await self.give_up(lease)

    async def abandon_stored(self, match_id: int, code: str) -> bool:
        """Store an idle match that is not in memory as abandoned, under its room's lease
        (skipped while another process holds the room or the leases cannot be reached). Whether
        it was."""
        try:
            lease = await self.take(code)
        except RoomError:
            return False
        try:
            return await self.store.fenced(lease.token).abandon(match_id, "idle")
        finally:
            await self.give_up(lease)

    def lost(self, lease: Lease) -> None:
        """``lease`` is lost: out of `held`, and ``on_lost`` told, once."""
        if self.held.get(lease.code) is not lease:
            return
        del self.held[lease.code]
        self._on_lost(lease)

    async def close(self) -> None:
        """Give up every held lease, then close the leases' connection."""
        for code in list(self.held):
            await self.release(code)
        await self.leases.close()
