"""Rooms' ownership leases in Redis, each with a fencing token (docs/cluster.md).

A lease is one key per room, ``domeng:{CODE}:lease``, holding ``HOLDER:TOKEN`` with a time to live
of ``lease_s``; the token comes from ``INCR domeng:{CODE}:fence``, a counter that never expires, so
every acquisition of a room gets a strictly greater token than the last. Taking a lease (``SET NX
PX`` and the ``INCR``), renewing it and releasing it are Lua scripts, each atomic in Redis; renewal
and release compare the key's value with the holder's first (compare-and-set), so only the holder
extends or deletes it. (``{CODE}`` is a hash tag: both keys of a room live in one slot of a Redis
Cluster.)

One task renews every held lease each ``lease_s / 3`` seconds, in one pipeline; the same script
extends the room's creator (``domeng:{CODE}:creator``, written with the lease of a new room by
`RedisLeases.acquire`, in one script: a room is never held without it), so it outlives a match
that stays on one process however long it lasts. A lease is counted valid until ``lease_s`` (less
a tenth) after the renewal request that last succeeded was *sent*, which is never later than
Redis's own expiry. When that time passes without a renewal (Redis unreachable, or this process
was paused), or a renewal finds the key gone or another holder's, the lease is lost: it leaves
`RedisLeases.held` and its ``on_lost`` is called once.
Redis unreachable for less than that: nothing happens, the rooms keep their owner.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

import structlog
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from app.cluster.calls import bounded
from app.tasks import stop

__all__ = ["LeaseLike", "RedisLease", "RedisLeases"]

_log = structlog.get_logger("domeng.cluster")

_ACQUIRE: Final = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local token = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. token, 'NX', 'PX', ARGV[2])
if ARGV[3] ~= '' then redis.call('SET', KEYS[3], ARGV[3], 'PX', ARGV[4]) end
return token
"""
"""KEYS: lease, fence counter, creator; ARGV: holder, lease ms, the creator's address ('': leave
it), creator ms. The new token, or 0 when it is held (and then no creator is written)."""

_ADVANCE: Final = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if tonumber(redis.call('GET', KEYS[2]) or '0') < tonumber(ARGV[3]) then
  redis.call('SET', KEYS[2], ARGV[3])
end
local token = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[2] .. ':' .. token, 'PX', ARGV[4])
return token
"""
"""KEYS: lease, fence counter; ARGV: the lease's value, holder, floor, lease ms. A token above
the floor for a lease still held (its value unchanged), or 0."""

_RENEW: Final = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if tonumber(ARGV[3]) > 0 then redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
"""
"""KEYS: lease, creator; ARGV: the lease's value, lease ms, creator ms (0: leave it). 1 if renewed
(and the room's creator, if one is noted, kept that long again), 0 if no longer held."""

_RELEASE: Final = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
"""KEYS: lease; ARGV: the lease's value. 1 if deleted, 0 if no longer held."""


class LeaseLike(Protocol):
    """What the callers hand back (`app.rooms.ports.Lease`): a lease is found by its code."""

    @property
    def code(self) -> str: ...

    @property
    def token(self) -> int: ...


def _milliseconds(seconds: float) -> int:
    return max(1, round(seconds * 1000))


@dataclass(eq=False, slots=True)
class RedisLease:
    """A held lease (`app.rooms.ports.Lease`): room ``code``, fencing ``token``; ``valid_until``
    is the `time.monotonic` second until which it is surely still ours."""

    code: str
    token: int
    holder: str
    valid_until: float
    on_lost: Callable[[RedisLease], None] = field(repr=False)
    lost: bool = False

    @property
    def value(self) -> str:
        """What the lease key holds while this lease is held: ``HOLDER:TOKEN``."""
        return f"{self.holder}:{self.token}"


class RedisLeases:
    """`app.rooms.ports.Leases` in Redis at ``url`` (``redis://host:port/db``), each lease
    ``lease_s`` seconds long and renewed every ``lease_s / 3``. `start` it before use and `close`
    it after. ``holder`` names this process in the lease keys (default host:pid:random; no
    secret); ``prefix`` starts every key."""

    def __init__(
        self, url: str, lease_s: float, *, holder: str | None = None, prefix: str = "domeng"
    ) -> None:
        if lease_s <= 0:
            raise ValueError(f"lease_s must be > 0, got {lease_s}")
        self.lease_s = lease_s
        self.renew_every_s = lease_s / 3
        """Seconds between renewals; also the bound of one Redis call."""
        self.margin_s = lease_s / 10
        """A lease counts as lost this long before it would expire in Redis."""
        self.holder = holder or f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        self.prefix = prefix
        self.held: dict[str, RedisLease] = {}
        """The leases held, by room code."""
        self.renewals = 0
        self.on_change: Callable[[str, bool], None] | None = None
        """Called with (code, True) when a lease is taken, (code, False) when it is released or
        lost (`app.cluster.relay.RedisRelay.host` and ``unhost``)."""
        """Renewal rounds that reached Redis (tests wait on it)."""
        # no retries inside the client: a call that fails is retried by the next renewal, and one
        # that hangs is bounded by the socket timeout, so a lease is never counted on too long
        self._redis: Redis = Redis.from_url(
            url,
            socket_timeout=self.renew_every_s,
            socket_connect_timeout=self.renew_every_s,
            retry=Retry(NoBackoff(), 0),
        )
        self._acquire = self._redis.register_script(_ACQUIRE)
        self._advance = self._redis.register_script(_ADVANCE)
        self._renew = self._redis.register_script(_RENEW)
        self._release = self._redis.register_script(_RELEASE)
        self._creator_ms = 0
        """How long a held room's creator is kept after each renewal (ms): what `acquire` or
        `creator` last asked for; 0 until then."""
        self._renewer: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._unreachable = False

    def _keys(self, code: str) -> list[str]:
        return [f"{self.prefix}:{{{code}}}:lease", f"{self.prefix}:{{{code}}}:fence"]

    def _renewal_keys(self, code: str) -> list[str]:
        return [f"{self.prefix}:{{{code}}}:lease", self._creator_key(code)]

    @property
    def _ms(self) -> int:
        return _milliseconds(self.lease_s)

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Start renewing; logs (does not raise) when Redis does not answer yet: rooms then
        cannot be opened until it does."""
        if self._renewer is not None:
            raise RuntimeError("the leases are already started")
        if not await self.ping():
            _log.error("redis_unreachable", at="start")
        self._renewer = asyncio.create_task(self._renew_loop(), name="lease-renewer")

    async def close(self) -> None:
        """Stop renewing, release every held lease (best effort) and close the connections."""
        renewer, self._renewer = self._renewer, None
        if renewer is not None:
            await stop(renewer)  # a Redis call may swallow one cancellation (app.tasks)
        for lease in list(self.held.values()):
            await self.release(lease)
        await self._redis.aclose()

    async def ping(self) -> bool:
        """Whether Redis answers within ``renew_every_s``; never raises."""
        try:
            async with asyncio.timeout(self.renew_every_s):
                return bool(await self._redis.ping())
        except (RedisError, OSError, TimeoutError):
            return False

    # -- the port ------------------------------------------------------------------------------

    async def acquire(
        self,
        code: str,
        on_lost: Callable[[RedisLease], None],
        *,
        creator: str | None = None,
        creator_ttl_s: float = 0.0,
    ) -> RedisLease | None:
        """Take room ``code``'s lease with a new token (`app.rooms.ports.Leases.acquire`); None
        while it is held, by another process or by this one. With ``creator`` (a new room), the
        same script notes that client address as the room's creator in ``P:{CODE}:creator`` for
        ``creator_ttl_s`` seconds (and as long again after each renewal while the lease is held
        here): the lease is never taken without it. Raises ConnectionError when Redis does not
        answer within ``renew_every_s`` (then neither may have been written, or both)."""
        if creator is not None:
            self._creator_ms = _milliseconds(creator_ttl_s)
        noted = ["", 0] if creator is None else [creator, _milliseconds(creator_ttl_s)]
        keys = [*self._keys(code), self._creator_key(code)]
        sent = time.monotonic()
        token = int(await self._call(self._acquire, keys, [self.holder, self._ms, *noted]))
        if not token:
            return None
        lease = RedisLease(code, token, self.holder, sent + self.lease_s - self.margin_s, on_lost)
        self.held[code] = lease
        self._changed(code, True)
        self._wake.set()  # the renewer's next wait may be shorter now
        return lease

    async def advance(self, held: LeaseLike, floor: int) -> bool:
        """Re-key a held lease with a token above ``floor`` (`app.rooms.ports.Leases.advance`);
        raises ConnectionError when Redis does not answer."""
        lease = self.held.get(held.code)
        if lease is None or lease is not held or lease.lost:
            return False
        sent = time.monotonic()
        args = [lease.value, self.holder, floor, self._ms]
        token = int(await self._call(self._advance, self._keys(lease.code), args))
        if not token:
            self._lose(lease, "taken")
            return False
        lease.token = token
        lease.valid_until = sent + self.lease_s - self.margin_s
        return True

    async def release(self, held: LeaseLike) -> None:
        """Stop renewing ``held`` and delete its key if it still holds it (never raises)."""
        if not isinstance(held, RedisLease):
            return
        lease = held
        if self.held.get(lease.code) is lease:
            del self.held[lease.code]
        if lease.lost:
            return
        lease.lost = True
        self._changed(lease.code, False)
        with contextlib.suppress(ConnectionError):  # else it expires by itself
            await self._call(self._release, self._keys(lease.code)[:1], [lease.value])

    async def creator(self, code: str, ttl_s: float) -> str | None:
        """The client address that created room ``code`` (noted by `acquire`), its memory
        extended to ``ttl_s`` seconds from now (and after each renewal of the room's lease held
        here), or None (`app.rooms.ports.Leases.creator`); raises ConnectionError when Redis does
        not answer within ``renew_every_s``."""
        self._creator_ms = _milliseconds(ttl_s)
        found = await self._command(self._redis.getex(self._creator_key(code), px=_milliseconds(ttl_s)))
        return None if found is None else bytes(found).decode()

    def _creator_key(self, code: str) -> str:
        return f"{self.prefix}:{{{code}}}:creator"

    async def _command(self, command: Awaitable[Any]) -> Any:
        return await bounded(command, self.renew_every_s)

    def _changed(self, code: str, held: bool) -> None:
        if self.on_change is not None:
            try:
                self.on_change(code, held)
            except Exception:
                _log.exception("lease_listener_failed")

    async def _call(self, script: Any, keys: list[str], args: list[Any]) -> Any:
        return await self._command(script(keys=keys, args=args))

    # -- renewal -------------------------------------------------------------------------------

    async def _renew_loop(self) -> None:
        while True:
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._next_wait()):
                    await self._wake.wait()
            try:
                await self.renew()
            except Exception:  # never let the renewer die: every lease would be lost
                _log.exception("lease_renewal_failed")

    def _next_wait(self) -> float:
        """Seconds until the next renewal: ``renew_every_s``, or less when a lease would be lost
        sooner (it is then found lost on time)."""
        now = time.monotonic()
        wait = self.renew_every_s
        for lease in self.held.values():
            wait = min(wait, lease.valid_until - now)
        return max(0.0, wait)

    async def renew(self) -> None:
        """One renewal round: leases past their validity are lost first (a paused process never
        counts on a lease it may have lost), then every other held lease is renewed in one
        pipeline; one that Redis no longer holds for us is lost."""
        self._expire()
        leases = [lease for lease in self.held.values() if not lease.lost]
        if not leases:
            return
        sent = time.monotonic()
        try:
            async with asyncio.timeout(self.renew_every_s):
                async with self._redis.pipeline(transaction=False) as pipe:
                    for lease in leases:
                        args: list[str | int] = [lease.value, self._ms, self._creator_ms]
                        await self._renew(keys=self._renewal_keys(lease.code), args=args, client=pipe)
                    results = await pipe.execute()
        except (RedisError, OSError, TimeoutError) as error:
            if not self._unreachable:
                _log.warning("redis_unreachable", at="renew", error=type(error).__name__, leases=len(leases))
            self._unreachable = True
            self._expire()
            return
        if self._unreachable:
            _log.info("redis_reachable")
        self._unreachable = False
        self.renewals += 1
        for lease, renewed in zip(leases, results, strict=True):
            if lease.lost or self.held.get(lease.code) is not lease:
                continue  # released (or lost) while the renewal was on its way
            if renewed:
                lease.valid_until = sent + self.lease_s - self.margin_s
            else:
                self._lose(lease, "taken")

    def _expire(self) -> None:
        now = time.monotonic()
        for lease in list(self.held.values()):
            if now >= lease.valid_until:
                self._lose(lease, "expired")

    def _lose(self, lease: RedisLease, why: str) -> None:
        if self.held.get(lease.code) is lease:
            del self.held[lease.code]
        if lease.lost:
            return
        lease.lost = True
        self._changed(lease.code, False)
        _log.warning("lease_lost", room=lease.code, fence=lease.token, why=why)
        lease.on_lost(lease)
