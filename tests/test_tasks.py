"""`app.tasks.stop`: a background task cancelled while a library swallows the cancellation (Python
3.11's ``asyncio.wait_for``, CPython gh-86296, inside redis-py) is stopped all the same, and the
shared board, whose loop makes such calls, closes (a SIGTERM'd server process hung on it)."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from app.cluster import RedisShared
from app.rooms.hub import Hub
from app.tasks import stop
from app.web.shared import Board


class _SwallowingCall:
    """A call in flight that drops the first cancellation it gets, as ``asyncio.wait_for`` does on
    Python 3.11 when the write it waits on completes in the same turn of the loop."""

    def __init__(self) -> None:
        self.in_flight = asyncio.Event()
        self.swallowed = 0

    async def __call__(self) -> None:
        self.in_flight.set()
        try:
            await asyncio.Event().wait()  # a command on its way to Redis
        except asyncio.CancelledError:
            if self.swallowed:
                raise
            self.swallowed += 1  # the write completed: wait_for returns its result instead


def test_stop_ends_a_loop_whose_call_swallowed_the_first_cancellation() -> None:
    async def main() -> None:
        call = _SwallowingCall()
        rounds = 0

        async def loop() -> None:
            nonlocal rounds
            while True:
                await call()
                rounds += 1
                await asyncio.sleep(0)

        task = asyncio.create_task(loop())
        await call.in_flight.wait()
        stopping = asyncio.create_task(stop(task))
        await asyncio.wait([stopping], timeout=30)
        assert stopping.done() and task.cancelled() and call.swallowed == 1 and rounds >= 1

    asyncio.run(main())


def test_stop_raises_what_the_task_raised() -> None:
    async def main() -> None:
        async def fails() -> None:
            raise ValueError("broken")

        task = asyncio.create_task(fails())
        await asyncio.wait([task])
        with pytest.raises(ValueError, match="broken"):
            await stop(task)

    asyncio.run(main())


class _Shared:
    """`RedisShared`'s side of a board: its publication swallows the first cancellation."""

    def __init__(self) -> None:
        self.call = _SwallowingCall()
        self.closed = False

    async def publish(self, tables: list[dict[str, Any]], owners: dict[str, int]) -> None:
        await self.call()

    def serve(self, answer: object) -> None:
        pass

    async def close(self) -> None:
        self.closed = True


class _Hub:
    def __init__(self) -> None:
        self.rooms: dict[str, object] = {}
        self.owners: dict[str, str] = {}

    def open_tables(self, private: bool = False) -> list[dict[str, Any]]:
        return []


def test_the_board_closes_when_its_publication_swallowed_the_cancellation() -> None:
    async def main() -> None:
        shared = _Shared()
        board = Board(cast(Hub, _Hub()), cast(RedisShared, shared), every_s=0.01)
        board.start(lambda kind, body: asyncio.sleep(0))
        await shared.call.in_flight.wait()
        closing = asyncio.create_task(board.close())
        await asyncio.wait([closing], timeout=30)  # it hung for good
        assert closing.done() and shared.closed and shared.call.swallowed == 1

    asyncio.run(main())
