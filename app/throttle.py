"""Log lines of a flood, at most one per window: `Throttle`, for the server's own log of something a
client or a failing database can make happen many times a second (a refused connection, a socket
cut off for its frames, a room's failed write)."""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["Throttle"]


class Throttle:
    """At most one pass per ``window_s`` seconds per key (on ``clock``, `time.monotonic` seconds by
    default); `allow` says how many were held back before it.

    >>> now = [0.0]
    >>> throttle = Throttle(10.0, lambda: now[0])
    >>> throttle.allow("cut"), throttle.allow("cut"), throttle.allow("cut")
    (0, None, None)
    >>> now[0] = 10.0
    >>> throttle.allow("cut")
    2
    """

    def __init__(self, window_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.window_s = window_s
        self._clock = clock
        self._last: dict[str, float] = {}
        self._held: dict[str, int] = {}

    def allow(self, key: str) -> int | None:
        """None when ``key`` passed less than ``window_s`` ago (counted as held back), else the
        number held back since its last pass."""
        now = self._clock()
        last = self._last.get(key)
        if last is not None and now - last < self.window_s:
            self._held[key] = self._held.get(key, 0) + 1
            return None
        self._last[key] = now
        return self._held.pop(key, 0)
