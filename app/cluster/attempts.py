"""Attempt counts shared by every process (docs/cluster.md, "What is shared"): failed admin
sign-ins, checked against their limits and counted in one step, so that attempts made at once
through several processes cannot all pass a check made before any of them is counted.

Keys (``P`` is the prefix, ``domeng`` by default): ``P:attempts:NAME``, a sorted set per count
(``NAME`` says what it counts, e.g. ``LIMITER/admin-login/10.0.0.1/5/1/minute``): each member an
attempt's random ticket, scored by when it was counted (milliseconds, Redis's own clock, so
processes on hosts whose clocks differ count in one time). A set holds at most its limit's
amount of attempts and expires one window after its last.

Every call is bounded by ``timeout_s`` and raises ConnectionError when Redis does not answer in
time (this module never retries).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import Final

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from app.cluster.calls import bounded

__all__ = ["RedisAttempts"]

_TAKE: Final = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i, key in ipairs(KEYS) do
  local amount, window = tonumber(ARGV[2 * i]), tonumber(ARGV[2 * i + 1])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local held = redis.call('ZCARD', key)
  if held >= amount then
    if amount <= 0 then return {i, window} end
    local first = redis.call('ZRANGE', key, held - amount, held - amount, 'WITHSCORES')
    return {i, tonumber(first[2]) + window - now}
  end
end
if ARGV[1] ~= '' then
  for i, key in ipairs(KEYS) do
    redis.call('ZADD', key, now, ARGV[1])
    redis.call('PEXPIRE', key, ARGV[2 * i + 1])
  end
end
return {0, 0}
"""
"""KEYS: one sorted set per count; ARGV: the ticket ('': check only), then each count's amount and
window (ms). Returns {0, 0} when every count had room (and the ticket, if any, is now counted under
each), else {i, ms}: count i (from 1) has no room for ``ms`` more milliseconds, and nothing was
counted."""


class RedisAttempts:
    """Moving-window attempt counts in the Redis at ``url``, under the key prefix ``prefix``."""

    def __init__(self, url: str, *, prefix: str = "domeng", timeout_s: float = 1.0) -> None:
        self.prefix = prefix
        self.timeout_s = timeout_s
        self._redis: Redis = Redis.from_url(
            url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s, retry=Retry(NoBackoff(), 0)
        )
        self._take = self._redis.register_script(_TAKE)

    def _key(self, name: str) -> str:
        return f"{self.prefix}:attempts:{name}"

    async def take(self, counts: Sequence[tuple[str, int, int]], *, failed: bool) -> tuple[int, int] | None:
        """Whether every one of ``counts`` (name, amount, window in ms) has had fewer than its
        amount of failed attempts in its last window: None, and a ``failed`` attempt is counted
        under each in the same atomic step. Otherwise nothing is counted and the answer is the
        index (from 0) of the first count without room and the milliseconds until it has room.
        Raises ConnectionError."""
        keys = [self._key(name) for name, _, _ in counts]
        limits = [str(value) for _, amount, window_ms in counts for value in (amount, window_ms)]
        ticket = secrets.token_urlsafe(12) if failed else ""
        spent, wait_ms = await bounded(self._take(keys=keys, args=[ticket, *limits]), self.timeout_s)
        return None if int(spent) == 0 else (int(spent) - 1, int(wait_ms))

    async def close(self) -> None:
        """Close the connections."""
        await self._redis.aclose()
