"""`FairSlots`: the bot workers shared out round-robin between clients, not first come first served.

A slot is a worker's turn to search. When all are taken, a decision waits in the line of its
``share`` (who it is counted for: a room's creator's address, else the room's code), and a freed
slot goes to the head of the next share in turn: one decision each, round the shares. A client
that opened eighty hard-bot rooms gets one decision per turn of the shares, like any other room,
which then waits for about one decision of each other share with searches queued, never for all
of them. (Shares by room would not do: a room asks one decision at a time, so eighty rooms would
be eighty turns, first come first served again.)
"""

from __future__ import annotations

import asyncio
from collections import deque

__all__ = ["FairSlots"]


class FairSlots:
    """``slots`` slots shared out round-robin between shares (see the module docstring)."""

    def __init__(self, slots: int) -> None:
        if slots < 1:
            raise ValueError(f"at least one slot is needed, got {slots}")
        self.slots = slots
        self._free = slots
        self._lines: dict[str, deque[asyncio.Future[None]]] = {}
        """The waiting decisions, a line per share; the dict's order is the shares' turn."""

    def locked(self) -> bool:
        """Whether a decision asking now would wait (every slot is taken)."""
        return self._free == 0

    @property
    def waiting(self) -> int:
        """How many decisions wait for a slot."""
        return sum(len(line) for line in self._lines.values())

    @property
    def demand(self) -> int:
        """The decisions holding a slot plus those waiting for one."""
        return self.slots - self._free + self.waiting

    async def acquire(self, share: str) -> None:
        """Take a slot for a decision counted for ``share``, waiting for its turn if none is free."""
        if self._free > 0 and not self._lines:
            self._free -= 1
            return
        granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._lines.setdefault(share, deque()).append(granted)
        try:
            await granted
        except asyncio.CancelledError:
            if granted.done() and not granted.cancelled():
                self.release()  # the slot came as the waiter was cancelled: hand it on
            else:
                self._leave(share, granted)
            raise

    def release(self) -> None:
        """Give a slot back: to the head of the next share's line in turn (that share then goes
        last), else to the free slots."""
        while self._lines:
            share = next(iter(self._lines))
            line = self._lines.pop(share)
            granted = line.popleft()
            if line:
                self._lines[share] = line  # its next decision waits for the other shares
            if not granted.done():
                granted.set_result(None)
                return
        self._free += 1

    def _leave(self, share: str, granted: asyncio.Future[None]) -> None:
        line = self._lines.get(share)
        if line is None:
            return
        if granted in line:
            line.remove(granted)
        if not line:
            del self._lines[share]
