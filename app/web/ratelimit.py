"""The ``Retry-After`` of a 429 from a `limits` limiter (room creation, admin login)."""

from __future__ import annotations

import time

from limits import RateLimitItem
from limits.strategies import MovingWindowRateLimiter

__all__ = ["retry_after_s"]


def retry_after_s(limiter: MovingWindowRateLimiter, limit: RateLimitItem, *identifiers: str) -> int:
    """Whole seconds until ``limiter`` lets ``identifiers`` through ``limit`` again (at least 1):
    the ``Retry-After`` of a 429."""
    reset, _ = limiter.get_window_stats(limit, *identifiers)
    return max(1, int(reset - time.time()) + 1)
