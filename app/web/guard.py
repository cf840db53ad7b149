"""Connections one client cannot use to take the server down (issue 13).

uvicorn's HTTP protocol (h11) closes an idle keep-alive connection after ``timeout_keep_alive``,
but it waits forever for a request's headers and lets one address open as many connections as the
process has file descriptors. `guarded_protocol` subclasses it with the two limits it lacks:

- a request deadline: a connection that has not sent a whole request (headers and body) within
  ``request_timeout_s`` of opening, or of its previous response, is closed (a half-sent request,
  "slowloris", or an idle connection that never sends anything);
- a cap on the connections one peer address holds open at once (`ConnectionGuard`): past it a new
  connection is aborted as soon as it is accepted, so its file descriptor is free again at once.
  A WebSocket keeps counting after its upgrade (its transport is the same) until it is lost;
- a cap on the connections the process holds open at once, all addresses together, a little below
  its open-files limit (`open_files_cap`; a limit too low for a few players is named at start,
  `connections_cap`): past it a new connection is aborted the same way and the refusal is logged
  at a bounded rate. Without it the accept loop would meet the limit, which
  asyncio reports once a second (below) but uvloop (libuv) not at all: it accepts and closes such
  a connection without a word. (A burst of connections accepted together before their protocols
  start may still pass the cap by up to the burst: the reserve absorbs it, asyncio reports what
  it cannot.)

Opening a WebSocket is bounded at every stage, whichever implementation uvicorn runs
(``DOMENG_WS_IMPL``; `tests/test_server_guard.py` checks ``websockets-sansio`` and the legacy
``websockets``): uvicorn's h11 protocol hands a connection to the WebSocket protocol only once the
whole upgrade request is in, so until then this request deadline applies; the answer then waits on
the room socket's own work (the legacy ``websockets`` also gives the handshake 10 s, its
``open_timeout``, which uvicorn leaves at its default); after it, the ``hello`` timeout and the pings.

`RateLimitedExceptionHandler` is the event loop's exception handler: asyncio's accept loop reports
running out of file descriptors once per second per listening socket, with a traceback; this
writes the first of each kind and then one line per ``window_s`` with how many it left out.
"""

from __future__ import annotations

import asyncio
import resource
import time
from collections.abc import Callable, Iterable
from typing import Any, Final

import h11
import structlog
from uvicorn.protocols.http.h11_impl import H11Protocol

from app.addresses import counted_address, counted_keys
from app.throttle import Throttle

__all__ = [
    "ENOUGH_CONNECTIONS",
    "ConnectionGuard",
    "RateLimitedExceptionHandler",
    "connections_cap",
    "guarded_protocol",
    "open_files_cap",
    "raise_open_files_limit",
]

_log = structlog.get_logger("domeng.guard")


class ConnectionGuard:
    """Open transports per peer address (an IPv6 peer: its /64, `app.addresses`), at most ``limit``
    each (0: no limit), and per IPv6 /48, `app.addresses.SITE_SHARE` times ``limit`` for all its
    /64s together. Addresses in ``exempt`` (trusted reverse proxies) are not capped;
    ``exempt_all`` exempts everyone (``*``).

    A transport counts from `admit` until `release`, which its protocol calls when the connection
    is lost (the HTTP one's, or after an upgrade the WebSocket's: `guarded_protocol`), and only
    while it is not closing: one already closing (its last bytes still going out) is forgotten when
    a cap is met, before a new one is refused (the process's cap at most every 0.1 s)."""

    def __init__(
        self,
        limit: int,
        exempt: Iterable[str] = (),
        exempt_all: bool = False,
        *,
        total: int = 0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``total``: the connections the process holds open at once, every address (exempt ones
        too) counted; 0: no such cap."""
        self.limit = limit
        self.exempt = frozenset(exempt)
        self.exempt_all = exempt_all
        self.total = total
        self.refused = 0
        """Connections refused since start (all addresses, either cap)."""
        self._open: dict[str, set[asyncio.BaseTransport]] = {}
        self._all: set[asyncio.BaseTransport] = set()
        self._clock = clock
        self._pruned_at = float("-inf")
        self._refusals = Throttle(10.0, clock)

    @classmethod
    def from_settings(cls, limit: int, forwarded_allow_ips: str | None, total: int = 0) -> ConnectionGuard:
        """The guard of ``max_connections_per_address`` and of ``total`` connections in all (0:
        none), exempting the trusted proxies from the first."""
        proxies = [p.strip() for p in (forwarded_allow_ips or "").split(",") if p.strip()]
        return cls(limit, [p for p in proxies if p != "*"], exempt_all="*" in proxies, total=total)

    def open_total(self) -> int:
        """Connections the process holds open now (counted by the ``total`` cap; 0 without it)."""
        _prune(self._all)
        return len(self._all)

    def open_count(self, address: str) -> int:
        """Connections ``address`` (its /64 if IPv6; or an IPv6 /48 as `counted_site` gives it:
        all its /64s') holds open now."""
        held = self._open.get(counted_address(address))
        if not held:
            return 0
        _prune(held)
        return len(held)

    def admit(self, address: str, transport: asyncio.BaseTransport) -> bool:
        """Count ``transport`` for ``address``; False (not counted) when the address is at its
        limit, or the process at its ``total``. The caller aborts a refused transport."""
        if self.total and not self._admit_one_more(transport):
            return False
        if not self.limit or self.exempt_all or address in self.exempt:
            return True
        keys = counted_keys(address)  # an IPv6 client: its /64, and its /48 at a larger share
        held = [(self._open.setdefault(key, set()), self.limit * share) for key, share in keys]
        if any(len(h) >= limit for h, limit in held):
            for h, _limit in held:
                _prune(h)
        if any(len(h) >= limit for h, limit in held):
            for key, _share in keys:
                if not self._open[key]:
                    del self._open[key]  # made for this refusal: nothing of the address is open
            self._all.discard(transport)
            self.refused += 1
            suppressed = self._refusals.allow("refused")
            if suppressed is not None:
                _log.warning(
                    "connections_refused", limit=self.limit, refused_total=self.refused, unlogged=suppressed
                )
            return False
        for h, _limit in held:
            h.add(transport)
        return True

    def _admit_one_more(self, transport: asyncio.BaseTransport) -> bool:
        """Count ``transport`` among all the process holds, unless that is ``total`` already
        (the closing ones forgotten first, at most every 0.1 s: a flood at the cap does not pay a
        pass over every connection each time)."""
        if len(self._all) >= self.total and self._clock() - self._pruned_at >= 0.1:
            self._pruned_at = self._clock()
            _prune(self._all)
        if len(self._all) >= self.total:
            self.refused += 1
            suppressed = self._refusals.allow("total")
            if suppressed is not None:
                _log.warning(
                    "connections_refused_process_full",
                    total=self.total,
                    refused_total=self.refused,
                    unlogged=suppressed,
                )
            return False
        self._all.add(transport)
        return True

    def release(self, address: str, transport: asyncio.BaseTransport) -> None:
        """``transport`` has closed (its HTTP protocol saw it go)."""
        self._all.discard(transport)
        for key, _share in counted_keys(address):  # as `admit` counted it: an IPv6 client's /64 and /48
            held = self._open.get(key)
            if held is not None:
                held.discard(transport)
                if not held:
                    del self._open[key]


ENOUGH_CONNECTIONS: Final = 64
"""An open-files limit that leaves fewer connections than this beside the server's own files is
named in a warning at start (`connections_cap`): a browser opens up to six connections to one host
and a room's socket besides, so a handful of players' pages fill it."""


def raise_open_files_limit() -> tuple[int, int]:
    """Raise the process's soft open-files limit (RLIMIT_NOFILE) to its hard limit, as Go's
    runtime and the JVM do at start: the soft limit (often 1,024) is what a shell's ``ulimit -n``
    left, the hard one what the process may use. Never above the hard limit; an unlimited hard
    limit is not asked for (Linux refuses it for open files): the soft limit stays. Returns the
    soft limit before and after (equal when nothing was raised, ``RLIM_INFINITY`` for unlimited).
    Logs ``open_files_limit_raised`` (info: ``raised_from``, ``raised_to``) when it raised it, and
    ``open_files_limit_not_raised`` (a warning, with the system's reason) when the system refused;
    a hard limit too low for a few players is then named by `connections_cap`."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if resource.RLIM_INFINITY in (soft, hard) or soft >= hard:
        return soft, soft
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (OSError, ValueError) as error:
        _log.warning("open_files_limit_not_raised", open_files_limit=soft, hard_limit=hard, error=str(error))
        return soft, soft
    _log.info("open_files_limit_raised", raised_from=soft, raised_to=hard)
    return soft, hard


def open_files_cap(reserve_fraction: float = 0.05, reserve_min: int = 32) -> int:
    """The connections a process may hold open at once below its open-files limit (the soft
    RLIMIT_NOFILE): the limit less a reserve for everything else it opens (the database and its
    log, the bot workers' pipes, the log file), ``reserve_fraction`` of it but at least
    ``reserve_min`` descriptors (a server with SQLite and one bot worker holds about 30 files of
    its own), at least 1; a low limit gives a small cap, which `connections_cap` warns of. 0 (no
    cap) when the limit is unlimited."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 0
    return max(1, _beside_reserve(soft, reserve_fraction, reserve_min))


def connections_cap(configured: int | None) -> int:
    """The process's cap on open connections: ``configured`` (``DOMENG_MAX_CONNECTIONS``; 0: none)
    or else `open_files_cap`. Logs ``open_files_limit_low`` (a warning) when the open-files limit
    leaves fewer than `ENOUGH_CONNECTIONS` beside the server's own files, naming the limit, the
    cap and how to raise it (``ulimit -n``): players' pages may then be refused, or closed by the
    accept loop without a word (uvloop's)."""
    cap = open_files_cap() if configured is None else configured
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or _beside_reserve(soft) >= ENOUGH_CONNECTIONS:
        return cap
    hard_limit = None if hard == resource.RLIM_INFINITY else hard
    _log.warning(
        "open_files_limit_low",
        open_files_limit=soft,
        hard_limit=hard_limit,
        max_connections=cap,
        message=(
            f"the open-files limit (ulimit -n) is {soft}, too low for more than a few players' pages:"
            " raise it before starting the server, e.g. `ulimit -n 4096` (systemd: LimitNOFILE=4096;"
            f" above the hard limit, {hard_limit or 'unlimited'}, only as root)"
        ),
    )
    return cap


def _beside_reserve(soft: int, reserve_fraction: float = 0.05, reserve_min: int = 32) -> int:
    """What an open-files limit of ``soft`` leaves for connections beside `open_files_cap`'s
    reserve (may be 0 or less)."""
    return soft - max(reserve_min, int(soft * reserve_fraction))


def _prune(held: set[asyncio.BaseTransport]) -> None:
    for transport in [t for t in held if t.is_closing()]:
        held.discard(transport)


class RateLimitedExceptionHandler:
    """The event loop's exception handler, writing each kind of report (its message and
    exception type) at most once per ``window_s`` seconds, with ``unlogged`` the count of those
    left out since. Install it with ``loop.set_exception_handler(handler)``."""

    def __init__(self, window_s: float = 10.0, clock: Callable[[], float] = time.monotonic) -> None:
        self._throttle = Throttle(window_s, clock)

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        error = context.get("exception")
        message = str(context.get("message", "unhandled exception in the event loop"))
        key = f"{message}|{type(error).__name__}"
        unlogged = self._throttle.allow(key)
        if unlogged is None:
            return
        _log.error(
            "event_loop_error",
            message=message,
            error=None if error is None else f"{type(error).__name__}: {error}",
            unlogged=unlogged,
        )


def guarded_protocol(guard: ConnectionGuard, request_timeout_s: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol with the per-address cap of ``guard`` and a deadline of
    ``request_timeout_s`` seconds for each whole request (pass it as ``uvicorn.run(http=...)``)."""

    class GuardedH11Protocol(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None
        _address = ""
        _counted = False

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._address = self.client[0] if self.client else ""
            if not guard.admit(self._address, transport):
                transport.abort()  # the descriptor is free again now, not after a timeout
                return
            self._counted = True
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            if self._counted:
                guard.release(self._address, self.transport)
            super().connection_lost(exc)

        def handle_events(self) -> None:
            super().handle_events()
            if self.conn.their_state is not h11.IDLE and self.conn.their_state is not h11.SEND_BODY:
                self._disarm()  # the whole request is in: the app answers it in its own time

        def handle_websocket_upgrade(self, event: h11.Request) -> None:
            self._disarm()  # the WebSocket has its own hello timeout and pings
            # the transport stays counted, now released by the WebSocket's protocol when it is lost
            # (this one hears no more of it): a closed socket must not wait for a sweep to leave
            counted, self._counted = self._counted, False
            super().handle_websocket_upgrade(event)
            protocol = self.transport.get_protocol()
            if counted and protocol is not self:
                address, transport, lost = self._address, self.transport, protocol.connection_lost

                def connection_lost(exc: Exception | None) -> None:
                    guard.release(address, transport)
                    lost(exc)

                protocol.connection_lost = connection_lost  # type: ignore[method-assign]

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()  # the next request (keep-alive) has the same deadline

        def _arm(self) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(request_timeout_s, self._expire)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expire(self) -> None:
            self._deadline = None
            if self.transport.is_closing():
                return
            if self.conn.their_state is h11.IDLE or self.conn.their_state is h11.SEND_BODY:
                self.transport.close()

    return GuardedH11Protocol
