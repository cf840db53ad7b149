"""What the web app shares with the other server processes (docs/cluster.md, "What is shared"):
this process's board (its listed tables and its unfinished rooms per creating address), published
to Redis every ``every_s`` seconds and at once after a room is created, and the lobby and the
per-address cap of open rooms read across every process. Without ``DOMENG_REDIS_URL`` there is no
`Board`: the lobby and the cap count this process only, as always."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from typing import TYPE_CHECKING, Any

import structlog

from app.addresses import counted_keys
from app.rooms.hub import Hub
from app.rooms.lobby import rank_tables
from app.tasks import stop

if TYPE_CHECKING:
    from app.cluster import AskHandler, RedisShared

__all__ = ["Board", "open_rooms_by_address"]

_log = structlog.get_logger("domeng.cluster")


def open_rooms_by_address(hub: Hub) -> dict[str, int]:
    """Unfinished rooms in ``hub``'s memory by the client address that created them, and by the
    IPv6 /48 of each IPv6 one (`app.addresses.counted_keys`; the count `Hub.open_rooms_of` gives
    for one address or /48)."""
    counts: Counter[str] = Counter()
    for code, owner in hub.owners.items():
        room = hub.rooms.get(code)
        if room is not None and room.status != "finished":
            counts.update(key for key, _share in counted_keys(owner))
    return dict(counts)


class Board:
    """This process's part of the shared board in ``shared``, kept up to date from ``hub`` every
    ``every_s`` seconds (`start` … `close`); readers skip a process whose board is older than
    ``shared.stale_s``."""

    def __init__(self, hub: Hub, shared: RedisShared, every_s: float = 2.0) -> None:
        self.hub = hub
        self.shared = shared
        self.every_s = every_s
        self.published = 0
        """Publications that reached Redis (tests wait on it)."""
        self._task: asyncio.Task[None] | None = None
        self._unreachable = False

    def start(self, answer: AskHandler) -> None:
        """Publish now and every ``every_s`` seconds, and answer the other processes' asks with
        ``answer`` (`app.admin.live.answer`), until `close`."""
        self._task = asyncio.create_task(self._loop(), name="cluster-board")
        self.shared.serve(answer)

    async def close(self) -> None:
        """Stop publishing and answering, take this process off the board, close its Redis
        connections."""
        task, self._task = self._task, None
        if task is not None:
            await stop(task)  # a Redis call may swallow one cancellation (app.tasks)
        await self.shared.close()

    async def publish_now(self) -> None:
        """Publish at once (a room was created or listed), so the other processes see it when the
        caller answers; when Redis does not answer, the next period publishes it."""
        with contextlib.suppress(ConnectionError):
            await self.publish()

    async def publish(self) -> None:
        """Publish this process's listed tables and open rooms per address once; raises
        ConnectionError when Redis does not answer."""
        await self.shared.publish(self.hub.open_tables(private=True), open_rooms_by_address(self.hub))
        self.published += 1

    async def _loop(self) -> None:
        while True:
            try:
                await self.publish()
                if self._unreachable:
                    _log.info("redis_reachable", at="board")
                self._unreachable = False
            except ConnectionError as error:
                if not self._unreachable:
                    _log.warning("redis_unreachable", at="board", error=str(error))
                self._unreachable = True
            except Exception:  # never let the board die: the process would vanish from the lobby
                _log.exception("board_publish_failed")
            await asyncio.sleep(self.every_s)

    async def open_tables(self) -> list[dict[str, Any]]:
        """The lobby's open tables of every process (`app.rooms.lobby.open_tables`), each room
        once, in `app.rooms.lobby.rank_tables`' order and number; this process's alone when Redis
        does not answer."""
        tables = self.hub.open_tables(private=True)
        try:
            others = await self.shared.tables()
        except ConnectionError:
            return rank_tables(tables)
        listed = {t["code"] for t in tables}
        for table in others:  # a room just handed over may still be on its former host's board
            if table["code"] not in listed:
                listed.add(table["code"])
                tables.append({k: v for k, v in table.items() if k != "process"})
        return rank_tables(tables)

    async def rooms_of(self, address: str) -> int:
        """Unfinished rooms ``address`` created on every process: this one's now, the others' as
        last published. Raises ConnectionError when Redis does not answer."""
        return self.hub.open_rooms_of(address) + await self.shared.rooms_of(address)
