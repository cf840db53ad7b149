"""Stopping a background task for good, even when a library swallowed its cancellation."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Final

__all__ = ["STOP_AGAIN_S", "stop"]

STOP_AGAIN_S: Final = 1.0
"""Seconds `stop` gives a cancelled task to end before cancelling it again (more than a bounded
Redis call takes, so a task's own clean-up on its cancellation is not cut short)."""


async def stop(task: asyncio.Task[Any]) -> None:
    """Cancel ``task`` and wait until it has ended, cancelling it again each ``STOP_AGAIN_S``
    seconds while it runs on. On Python 3.11 ``asyncio.wait_for`` drops a cancellation that lands
    as the future it waits on completes (CPython gh-86296, fixed in 3.12), and redis-py wraps the
    write of every command in it when its client has a socket timeout (every client of
    app.cluster has): a loop cancelled during a Redis call then goes on looping, and a shutdown
    awaiting it never ends (a `domeng serve` stopped with SIGTERM kept running, and publishing its
    board, for good). Raises what the task raised, other than its cancellation."""
    while not task.done():
        task.cancel()
        await asyncio.wait([task], timeout=STOP_AGAIN_S)
    with contextlib.suppress(asyncio.CancelledError):
        await task
