"""The in-process implementations of the room's clock and bot ports."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable

from app.rooms.ports import Timer
from engine.actions import Action
from engine.bots import make_bot
from engine.views import PlayerView

__all__ = ["LocalBots", "LoopClock"]


class LoopClock:
    """The `Clock` of a running server: wall time, and the event loop's timers. Used inside one
    event loop at a time (a hub's): the loop it first runs in is kept until that loop closes
    (`asyncio.get_running_loop` makes a getpid system call on Python 3.11, and a move reads the
    clock several times: issue 15)."""

    def __init__(self) -> None:
        self._running: asyncio.AbstractEventLoop | None = None

    def _loop(self) -> asyncio.AbstractEventLoop:
        loop = self._running
        if loop is None or loop.is_closed():
            loop = self._running = asyncio.get_running_loop()
        return loop

    def time(self) -> float:
        """Now, in seconds since the epoch."""
        return time.time()

    def monotonic(self) -> float:
        """The event loop's clock (its timers'), in seconds. Raises RuntimeError outside a
        running loop the first time."""
        return self._loop().time()

    def call_later(self, delay_s: float, callback: Callable[[], None]) -> Timer:
        """Arm ``callback`` on the loop after ``delay_s`` seconds. Raises RuntimeError outside a
        running loop the first time."""
        return self._loop().call_later(delay_s, callback)


class LocalBots:
    """The `BotPort` computed in this process (a bot's choice is quick: microseconds to a few
    milliseconds), the default until decisions move to worker processes."""

    async def decide(self, level: str, view: PlayerView, seed: int, share: str = "") -> Action:
        """A new bot of ``level`` with ``random.Random(seed)`` chooses from ``view`` (nothing
        queues here: ``share`` is not needed)."""
        return make_bot(level, random.Random(seed)).choose(view)
