"""What stays in memory: the hub's sweeper unloads the rooms nobody uses and stores the long
idle matches as abandoned (issue 13: only rooms someone is using live in memory)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import structlog

from app.tasks import stop

if TYPE_CHECKING:
    from app.rooms.hub import Hub

__all__ = ["Sweeper"]

_log = structlog.get_logger("domeng.hub")


class Sweeper:
    """Sweeps one hub's rooms: `sweep` now, or every few seconds from `start` until `stop`."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self._task: asyncio.Task[None] | None = None
        self._next_scan = 0.0  # clock time of the next scan of the store for idle matches

    def start(self, interval_s: float) -> None:
        """Run `sweep` every ``interval_s`` seconds until `stop` (a failed sweep is logged)."""

        async def loop() -> None:
            while True:
                await asyncio.sleep(interval_s)
                try:
                    await self.sweep()
                except Exception:
                    _log.exception("room_sweep_failed")

        self._task = asyncio.create_task(loop(), name="room-sweeper")

    async def stop(self) -> None:
        """Stop the periodic sweep, if it runs."""
        if self._task is not None:
            await stop(self._task)  # a Redis call (the leases') may swallow one cancellation

    async def sweep(self) -> tuple[int, int]:
        """Unload every room nobody has used for ``config.unload_after_s`` (nobody connected,
        nothing handled: finished, never joined or left), and store as ``abandoned`` every
        unfinished match nobody has used for ``config.abandon_after_s``: in memory by its idle
        time, out of it by its last stored change (that scan runs at most every
        ``abandon_after_s / 24`` seconds, and at least hourly; it also deletes up to 500 matches
        abandoned before their first deal ``config.unplayed_kept_s`` ago, `Store.prune_unplayed`).
        Returns (unloaded, abandoned)."""
        hub, config = self.hub, self.hub.config
        unloaded = abandoned = 0
        for room in list(hub.rooms.values()):
            idle = room.idle_s()
            if not idle:
                continue
            if room.status != "finished" and idle >= config.abandon_after_s:
                if await hub.abandon(room):
                    abandoned += 1
            elif idle >= config.unload_after_s and await hub.unload(room):
                unloaded += 1
        now = hub.clock.time()
        if now < self._next_scan:  # the store's scan (its NOT EXISTS over actions) at most hourly
            return self._swept(unloaded, abandoned)
        self._next_scan = now + min(3600.0, config.abandon_after_s / 24)
        cutoff = datetime.now(UTC) - timedelta(seconds=config.abandon_after_s)
        for match_id, code in await hub.store.idle_matches(cutoff):
            if hub.loaded_or_loading(code):
                continue
            if hub.ownership is None:
                await hub.store.abandon(match_id, "idle")
            elif not await hub.ownership.abandon_stored(match_id, code):
                continue
            hub.owners.pop(code, None)
            _log.info("room_abandoned", room=code, match=match_id, why="idle")
            abandoned += 1
        if config.unplayed_kept_s:
            kept_since = datetime.now(UTC) - timedelta(seconds=config.unplayed_kept_s)
            gone = await hub.store.prune_unplayed(kept_since)
            if gone:
                _log.info("unplayed_matches_deleted", count=gone)
        return self._swept(unloaded, abandoned)

    def _swept(self, unloaded: int, abandoned: int) -> tuple[int, int]:
        if unloaded or abandoned:
            _log.info("rooms_swept", unloaded=unloaded, abandoned=abandoned, in_memory=len(self.hub.rooms))
        return unloaded, abandoned
