"""Rate limits counted with the `limits` package (room creation, admin login), in this process's
memory or, with several processes (``DOMENG_REDIS_URL``), in Redis, so that a limit spent through
one process is spent on all (docs/cluster.md); and the ``Retry-After`` of a 429."""

from __future__ import annotations

import time

from limits import RateLimitItem
from limits.aio.storage import RedisStorage
from limits.aio.strategies import MovingWindowRateLimiter as SharedLimiter
from limits.errors import StorageError
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter

__all__ = ["LimitsUnavailableError", "RateLimits", "retry_after_s"]


class LimitsUnavailableError(ConnectionError):
    """The shared counters (Redis) did not answer: the caller refuses the request (503)."""


class RateLimits:
    """Moving-window limits by identifiers: in memory (one process, as always) or, with
    ``redis_url``, in that Redis under the key prefix ``prefix`` (calls bounded by ``timeout_s``
    seconds; when Redis does not answer they raise `LimitsUnavailableError`)."""

    def __init__(
        self, redis_url: str | None = None, *, prefix: str = "domeng", timeout_s: float = 1.0
    ) -> None:
        self.shared = redis_url is not None
        self._local = MovingWindowRateLimiter(MemoryStorage())
        self._redis: SharedLimiter | None = None
        if redis_url is not None:
            storage = RedisStorage(
                f"async+{redis_url}",
                implementation="redispy",
                key_prefix=f"{prefix}:limits",
                wrap_exceptions=True,
                socket_timeout=timeout_s,
                socket_connect_timeout=timeout_s,
            )
            self._redis = SharedLimiter(storage)

    async def hit(self, limit: RateLimitItem, *identifiers: str) -> bool:
        """Count one more against ``limit``; False (not counted) when it is spent."""
        if self._redis is None:
            return self._local.hit(limit, *identifiers)
        try:
            return await self._redis.hit(limit, *identifiers)
        except StorageError as error:
            raise _unavailable(error) from None

    async def test(self, limit: RateLimitItem, *identifiers: str) -> bool:
        """Whether ``limit`` would let one more through (nothing counted)."""
        if self._redis is None:
            return self._local.test(limit, *identifiers)
        try:
            return await self._redis.test(limit, *identifiers)
        except StorageError as error:
            raise _unavailable(error) from None

    async def retry_after_s(self, limit: RateLimitItem, *identifiers: str) -> int:
        """Whole seconds until ``limit`` lets ``identifiers`` through again (at least 1): the
        ``Retry-After`` of a 429."""
        if self._redis is None:
            return retry_after_s(self._local, limit, *identifiers)
        try:
            reset, _ = await self._redis.get_window_stats(limit, *identifiers)
        except StorageError:
            return 1
        return max(1, int(reset - time.time()) + 1)


def _unavailable(error: StorageError) -> LimitsUnavailableError:
    return LimitsUnavailableError(
        f"the rate limits' Redis did not answer: {type(error.storage_error).__name__}"
    )


def retry_after_s(limiter: MovingWindowRateLimiter, limit: RateLimitItem, *identifiers: str) -> int:
    """Whole seconds until ``limiter`` lets ``identifiers`` through ``limit`` again (at least 1):
    the ``Retry-After`` of a 429."""
    reset, _ = limiter.get_window_stats(limit, *identifiers)
    return max(1, int(reset - time.time()) + 1)
