"""A queue with one reader, for the hottest hand-offs of the event loop (issue 15)."""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Generic, TypeVar

__all__ = ["ReaderQueue"]

_T = TypeVar("_T")


class ReaderQueue(Generic[_T]):
    """First in, first out, unbounded, with one reader, which can also wait until it holds a
    number of items (`_wait`); None is an end marker that wakes the reader at once.
    `asyncio.Queue`'s ``put_nowait``, ``get``, ``empty`` and ``qsize`` without its bookkeeping for
    ``join``, ``maxsize`` and several readers, which cost several Python calls per item and an
    `asyncio.Event` cleared on every put (`benchmarks/room_moves.py`). Used inside one event loop
    (the one its reader first waits in). A room's intents (`app.rooms.intents.IntentQueue`) and
    the store's writes (`app.store.group_commit.WriteQueue`) go through one."""

    def __init__(self) -> None:
        self._items: deque[_T | None] = deque()
        self._waiter: asyncio.Future[None] | None = None
        """Set while the reader waits, for ``_wanted`` items."""
        self._wanted = 1
        self._loop: asyncio.AbstractEventLoop | None = None

    def put_nowait(self, item: _T | None) -> None:
        """Queue ``item``; wakes the reader once what it waits for is queued, or at the end
        marker (None). Never blocks."""
        items = self._items
        items.append(item)
        waiter = self._waiter
        if waiter is not None and (item is None or len(items) >= self._wanted) and not waiter.done():
            waiter.set_result(None)

    async def get(self) -> _T | None:
        """The oldest item, waiting for one if there is none."""
        items = self._items
        while not items:
            try:
                await self._wait(1)
            finally:
                self._waiter = None
        return items.popleft()

    def empty(self) -> bool:
        """Whether nothing is queued."""
        return not self._items

    def qsize(self) -> int:
        """How many items are queued."""
        return len(self._items)

    def _wait(self, count: int) -> asyncio.Future[None]:
        """The future `put_nowait` settles once it sees ``count`` items queued, or the end marker;
        the caller clears ``_waiter`` when its wait ends. (Not a coroutine: a Python frame less
        per wait.)"""
        loop = self._loop
        if loop is None or loop.is_closed():
            loop = self._loop = asyncio.get_running_loop()
        self._wanted = count
        self._waiter = waiter = loop.create_future()
        return waiter
