"""Rate limits, in this process's memory or, with several processes (``DOMENG_REDIS_URL``), in
Redis, so that a limit spent through one process is spent on all (docs/cluster.md): room creation
counted with the `limits` package (`RateLimits.hit`); attempts judged against several limits and,
when they fail, counted under all of them in one atomic step (admin sign-in) with
`RateLimits.attempt`. Also the ``Retry-After`` of a 429. A client is counted under
`app.addresses.counted_address`."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from limits import RateLimitItem
from limits.aio.storage import RedisStorage
from limits.aio.strategies import MovingWindowRateLimiter as SharedLimiter
from limits.errors import StorageError
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter

from app.addresses import counted_keys

if TYPE_CHECKING:
    from app.cluster import RedisAttempts

__all__ = [
    "Count",
    "LimitSpentError",
    "LimitsUnavailableError",
    "MemoryAttempts",
    "RateLimits",
    "counted_limits",
    "retry_after_s",
]

Count = tuple[RateLimitItem, tuple[str, ...]]
"""A limit and the identifiers it counts under (e.g. ``(5 per minute, ("admin-login", ADDRESS))``)."""


def counted_limits(limit: RateLimitItem, address: str) -> list[tuple[RateLimitItem, str]]:
    """``limit`` under each key a per-address limit counts client ``address`` under (a peer
    address, or a client as `app.addresses.counted_address` gives it; `app.addresses.counted_keys`):
    the client itself at ``limit``, and an IPv6 client's /48 at `app.addresses.SITE_SHARE` times
    its amount, in the same window. A use is refused when any of them is spent.

    >>> from limits import parse
    >>> [(str(each), key) for each, key in counted_limits(parse("5 per minute"), "2001:db8:1:2::7")]
    [('5 per 1 minute', '2001:db8:1:2::/64'), ('20 per 1 minute', '2001:db8:1::/48')]
    >>> [(str(each), key) for each, key in counted_limits(parse("5 per minute"), "192.0.2.7")]
    [('5 per 1 minute', '192.0.2.7')]
    """
    return [
        (limit if share == 1 else type(limit)(limit.amount * share, limit.multiples, limit.namespace), key)
        for key, share in counted_keys(address)
    ]


class LimitsUnavailableError(ConnectionError):
    """The shared counters (Redis) did not answer: the caller refuses the request (503)."""


class LimitSpentError(Exception):
    """`RateLimits.attempt` counted nothing: ``counts[index]`` has had its amount of attempts in its
    window; it has room again in ``retry_after_s`` whole seconds (at least 1)."""

    def __init__(self, index: int, retry_after_s: int) -> None:
        super().__init__(f"limit {index} spent; retry after {retry_after_s} s")
        self.index = index
        self.retry_after_s = retry_after_s


def _name(count: Count) -> str:
    limit, identifiers = count
    return limit.key_for(*identifiers)


def _window_ms(limit: RateLimitItem) -> int:
    return int(limit.get_expiry() * 1000)


@dataclass
class MemoryAttempts:
    """Moving-window attempt counts in this process's memory: per count's name, the times of the
    failed attempts of its last window (monotonic milliseconds), oldest first. Each call runs to
    its end without yielding to the event loop, so concurrent requests of one process are judged
    one after another. Names whose window has passed are dropped once they are many."""

    held: dict[str, tuple[int, list[float]]] = field(default_factory=dict)
    """Each count's name → its window (ms) and the times of its failed attempts."""
    sweep_at: int = 1024
    """Drop the names with nothing in their window when there are more than this many."""
    clock: Callable[[], float] = time.monotonic
    """Seconds, never going back."""

    def take(self, counts: Sequence[tuple[str, int, int]], *, failed: bool) -> tuple[int, int] | None:
        """`app.cluster.RedisAttempts.take`, in memory: None when every (name, amount, window ms)
        of ``counts`` had room, and a ``failed`` attempt is now counted under each; else nothing
        is counted and the answer is the index of the first count without room and the
        milliseconds until it has room."""
        now = self.clock() * 1000
        for index, (name, amount, window_ms) in enumerate(counts):
            recent = [at for at in self.held.get(name, (0, []))[1] if at > now - window_ms]
            self.held[name] = (window_ms, recent)
            if len(recent) >= amount:
                first = recent[len(recent) - amount] if amount > 0 else now
                return index, math.ceil(first + window_ms - now)
        if failed:
            for name, _, _ in counts:
                self.held[name][1].append(now)
        if len(self.held) > self.sweep_at:
            self._sweep(now)
        return None

    def _sweep(self, now: float) -> None:
        self.held = {
            name: (window_ms, times)
            for name, (window_ms, times) in self.held.items()
            if times and times[-1] > now - window_ms
        }
        self.sweep_at = max(1024, 2 * len(self.held))


class RateLimits:
    """Moving-window limits by identifiers: in memory (one process, as always) or, with
    ``redis_url``, in that Redis under the key prefix ``prefix`` (calls bounded by ``timeout_s``
    seconds; when Redis does not answer they raise `LimitsUnavailableError`)."""

    def __init__(
        self, redis_url: str | None = None, *, prefix: str = "domeng", timeout_s: float = 1.0
    ) -> None:
        self.shared = redis_url is not None
        self._local = MovingWindowRateLimiter(MemoryStorage())
        self._local_attempts = MemoryAttempts()
        self._redis: SharedLimiter | None = None
        self._attempts: RedisAttempts | None = None
        if redis_url is not None:
            from app.cluster import RedisAttempts  # noqa: PLC0415 (only with a Redis URL)

            self._attempts = RedisAttempts(redis_url, prefix=prefix, timeout_s=timeout_s)
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

    async def attempt(self, *counts: Count, failed: bool) -> None:
        """One attempt judged against ``counts``: raises `LimitSpentError` (nothing counted)
        naming the first count that has had its amount of failed attempts in its window;
        otherwise a ``failed`` one is counted under every count. Checked and counted in one atomic
        step (in memory: without yielding to the event loop; in Redis: one Lua script), so
        attempts made at the same moment, through any process, never fail more often than a limit
        allows. Raises `LimitsUnavailableError` when Redis does not answer."""
        wanted = [(_name(count), count[0].amount, _window_ms(count[0])) for count in counts]
        if self._attempts is None:
            spent = self._local_attempts.take(wanted, failed=failed)
        else:
            try:
                spent = await self._attempts.take(wanted, failed=failed)
            except ConnectionError as error:
                raise LimitsUnavailableError(f"the rate limits' Redis did not answer: {error}") from None
        if spent is not None:
            index, wait_ms = spent
            raise LimitSpentError(index, max(1, math.ceil(wait_ms / 1000)))

    async def close(self) -> None:
        """Close the connections of the attempt counts in Redis (nothing in memory)."""
        if self._attempts is not None:
            await self._attempts.close()

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
