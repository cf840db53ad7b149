"""Admin sign-in: the secret from configuration, session cookies, rate-limited failures.

The secret (``DOMENG_ADMIN_TOKEN``) is never stored in a cookie. Logging in with it creates a
session: 32 random bytes (``secrets``), sent once as the cookie ``__Host-domeng_admin`` (Secure,
HttpOnly, SameSite=Strict, Path=/, Max-Age the session's lifetime, ``DOMENG_ADMIN_SESSION_TTL_S``).
The server keeps only the session's digest, an HMAC-SHA256 of the cookie value under the admin
secret (`AdminAuth.digest`), with its expiry: in the database with one process (`StoreSessions`,
the table ``admin_sessions``), so a signed-in admin stays signed in across a restart until the
session expires, or, with several processes (``DOMENG_REDIS_URL``), in Redis with the same expiry,
so a session made through one process works on all (`SessionStore`, docs/cluster.md). Logging out
deletes the session everywhere; changing the admin secret ends every session (no stored digest
matches under the new secret). Neither the cookie value nor the secret is ever logged. Scripts
may instead send the secret itself as ``Authorization: Bearer <secret>``; every comparison is
constant-time (`hmac.compare_digest`).

Failed attempts (a wrong secret at login or as a bearer) are throttled, never turned into a lockout
that strangers can set off: OWASP's "device cookies" (Authentication Cheat Sheet; "Slow Down Online
Guessing Attacks with Device Cookies"). A successful login also sets ``__Host-domeng_admin_device``:
a random nonce, its issue time and an HMAC-SHA256 of both under the admin secret (`DEVICE_TTL_S`;
stateless, so every process checks it, and changing the secret voids them all). It grants nothing by
itself; it only says "this browser has known the secret". Failures are counted in moving windows
(`app.web.ratelimit.RateLimits.attempt`, shared in Redis with several processes):

- a **known device** (a valid device cookie) has its own count, by its nonce
  (``DOMENG_ADMIN_LOGIN_LIMIT``, default 5 per minute); no other client's failures touch it;
- **any other client** is counted per address (``DOMENG_ADMIN_LOGIN_LIMIT``) and with all other
  unknown clients together (``DOMENG_ADMIN_LOGIN_LIMIT_ALL``, default 30 per minute), as is a known
  device over its own limit. An IPv6 client counts by its /64 network (whoever has one address of
  it may use all 2^64) and, besides, by its /48 at `app.addresses.SITE_SHARE` (4) times the limit
  for all its /64s together (whoever holds a /48 holds 65,536 /64s), an IPv4-mapped IPv6 address
  as its IPv4 address, an IPv4 client by its address (`app.web.ratelimit.counted_limits`, as every
  per-address limit). A spent /48 refuses only the unknown clients inside it: the admin signs in
  from any other address, and from inside it with the device cookie.

Each attempt is judged against its counts and, when it fails, counted in one atomic step (in
memory without yielding to the event loop; in Redis one Lua script): a burst of guesses fired at
once, through any process, is never judged more often than the limits allow; the rest answer 429.

Over a limit every attempt it covers answers 429 until the window has passed, the right secret
included, so a guess over the limit learns nothing. Why not simply one count for everybody: a
limit that refuses the right secret is a lockout, and one shared by all addresses lets anyone keep
the admin out by failing from a few addresses. Dropping it would leave guessing from many addresses
unslowed; the device cookie keeps it for strangers while the admin's own browser, and a script that
keeps the cookie of its login, sign in whatever others do. The secret's required strength
(`app.web.settings.check_admin_secret`: 16 characters or more) makes the limits a second line.

Errors, all ``{"detail": {"code": "...", "message": "..."}}`` (`AdminError`):

    AdminError
    ├── admin_disabled       503  no secret is configured
    ├── not_authenticated    401  no valid session cookie and no right bearer secret
    ├── wrong_secret         401  a login with the wrong secret
    ├── too_many_attempts    429  too many failed attempts from this device, this address, its
    │                             IPv6 /48 or all unknown clients together
    ├── admin_unavailable    503  the shared sessions or counts (Redis) do not answer now
    └── cross_origin         403  a state-changing request from another origin's page (its
                                  Origin or its Sec-Fetch-Site says so)
"""

from __future__ import annotations

import contextlib
import hmac
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated, Final, Protocol

from fastapi import Depends, Request
from limits import RateLimitItem
from limits import parse as parse_limit
from starlette.requests import HTTPConnection

from app.store.errors import StoreError
from app.web.ratelimit import (
    Count,
    LimitSpentError,
    LimitsUnavailableError,
    RateLimits,
    counted_limits,
)
from app.web.settings import Settings

__all__ = [
    "COOKIE_NAME",
    "DEVICE_COOKIE",
    "DEVICE_TTL_S",
    "DISABLED_MESSAGE",
    "FOREIGN_FETCH_SITES",
    "MAX_SESSIONS",
    "AdminAuth",
    "AdminDep",
    "AdminError",
    "AdminLogin",
    "AdminSession",
    "AdminSessionRows",
    "MemorySessions",
    "SessionStore",
    "StoreSessions",
    "admin_auth",
    "check_origin",
    "client_address",
    "require_admin",
]

COOKIE_NAME: Final = "__Host-domeng_admin"
"""The session cookie. The ``__Host-`` prefix makes browsers insist on Secure, Path=/ and no Domain."""

DEVICE_COOKIE: Final = "__Host-domeng_admin_device"
"""The device cookie: ``NONCE.ISSUED.MAC`` (see the module), set by a successful login."""

DEVICE_TTL_S: Final = 90 * 24 * 3600
"""How long a device cookie counts as a known device after its login, seconds (90 days)."""

DISABLED_MESSAGE: Final = "admin disabled: set DOMENG_ADMIN_TOKEN"

MAX_SESSIONS: Final = 256
"""Sessions kept at once; logging in beyond this ends the oldest."""

_UNSAFE_METHODS: Final = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class AdminError(Exception):
    """A refused admin request: ``code`` is stable, ``status`` the HTTP status."""

    def __init__(self, code: str, message: str, status: int, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.headers = headers or {}


@dataclass(frozen=True, slots=True)
class AdminSession:
    """A signed-in admin: how they proved it (``cookie`` or ``bearer``) and, for a cookie session,
    when it expires (epoch seconds)."""

    via: str
    expires_at: float | None = None


@dataclass(frozen=True, slots=True)
class AdminLogin:
    """A successful login: the new session's ``token`` and expiry (epoch seconds), and the
    browser's new device cookie (``device``, valid `DEVICE_TTL_S` seconds)."""

    token: str
    expires_at: float
    device: str


class SessionStore(Protocol):
    """Where admin sessions live, by their digest (`AdminAuth.digest`, hex): `StoreSessions` (one
    process, in the database), `MemorySessions` (tests and tools) or `app.cluster.RedisShared`
    (several processes). Each method may raise ConnectionError."""

    async def put_session(self, digest: str, expires_at: float) -> None:
        """Keep the session ``digest`` until ``expires_at`` (epoch seconds)."""

    async def session(self, digest: str) -> float | None:
        """The session's expiry (epoch seconds), or None (unknown or expired)."""

    async def end_session(self, digest: str) -> None:
        """End the session (nothing happens for an unknown one)."""


@dataclass
class MemorySessions:
    """Sessions in this process's memory, at most `MAX_SESSIONS` (a new one beyond ends the
    oldest); a restart ends them all."""

    expiries: dict[str, float] = field(default_factory=dict)
    """SHA-256 of each session token → its expiry (epoch seconds)."""

    async def put_session(self, digest: str, expires_at: float) -> None:
        """Keep a session (`SessionStore.put_session`), dropping expired ones first."""
        now = time.time()
        self.expiries = {h: exp for h, exp in self.expiries.items() if exp > now}
        while len(self.expiries) >= MAX_SESSIONS:
            self.expiries.pop(min(self.expiries, key=self.expiries.__getitem__))
        self.expiries[digest] = expires_at

    async def session(self, digest: str) -> float | None:
        """The session's expiry, or None (`SessionStore.session`)."""
        expires_at = self.expiries.get(digest)
        if expires_at is not None and expires_at <= time.time():
            self.expiries.pop(digest, None)
            return None
        return expires_at

    async def end_session(self, digest: str) -> None:
        """End the session (`SessionStore.end_session`)."""
        self.expiries.pop(digest, None)


class AdminSessionRows(Protocol):
    """The admin-session methods of `app.store.Store` (`app.store.admin_sessions`)."""

    async def put_admin_session(self, digest: str, expires_at: float) -> None: ...

    async def admin_session(self, digest: str) -> float | None: ...

    async def end_admin_session(self, digest: str) -> None: ...


@dataclass
class StoreSessions:
    """Sessions in the database (the table ``admin_sessions``): they outlive a restart of the
    server. A database failure (`app.store.StoreError`) is raised as ConnectionError, which the
    admin answers with ``admin_unavailable`` (503)."""

    store: AdminSessionRows

    async def put_session(self, digest: str, expires_at: float) -> None:
        """Keep a session (`SessionStore.put_session`)."""
        with _store_failures():
            await self.store.put_admin_session(digest, expires_at)

    async def session(self, digest: str) -> float | None:
        """The session's expiry, or None (`SessionStore.session`)."""
        with _store_failures():
            return await self.store.admin_session(digest)

    async def end_session(self, digest: str) -> None:
        """End the session (`SessionStore.end_session`)."""
        with _store_failures():
            await self.store.end_admin_session(digest)


@contextlib.contextmanager
def _store_failures() -> Iterator[None]:
    """A store's failure as ConnectionError (its message names no session: digests only)."""
    try:
        yield
    except StoreError as error:
        raise ConnectionError("the admin sessions' database does not answer") from error


_SPENT_WHERE: Final = ("", " from this address", " from this address's network")
"""What a spent count of an unknown client's attempt is said to be of (`AdminAuth._judged`): all
unknown clients, the client's address, its IPv6 /48."""


def _too_many(retry_after_s: int, where: str) -> AdminError:
    return AdminError(
        "too_many_attempts",
        f"too many failed admin logins{where}; try again in {_wait_words(retry_after_s)}",
        429,
        {"Retry-After": str(retry_after_s)},
    )


def _wait_words(seconds: int) -> str:
    """A wait in words for the sign-in form: "45 s", "1 min", "2 min 5 s"."""
    minutes, rest = divmod(max(seconds, 1), 60)
    if not minutes:
        return f"{rest} s"
    return f"{minutes} min {rest} s" if rest else f"{minutes} min"


def _unavailable() -> AdminError:
    return AdminError("admin_unavailable", "admin sign-in is unavailable for a moment; try again", 503)


@dataclass
class AdminAuth:
    """The secret, the sessions and the failed-attempt limits (of this process, or shared by
    every process with Redis)."""

    settings: Settings
    sessions: SessionStore = field(default_factory=MemorySessions)
    limiter: RateLimits = field(default_factory=RateLimits)

    def __post_init__(self) -> None:
        self.limit: RateLimitItem = parse_limit(self.settings.admin_login_limit)
        self.limit_all: RateLimitItem = parse_limit(self.settings.admin_login_limit_all)

    @property
    def enabled(self) -> bool:
        """Whether a secret is configured."""
        return self.settings.admin_token is not None

    def check_enabled(self) -> None:
        """Raises `AdminError` ``admin_disabled`` (503) when no secret is configured."""
        if not self.enabled:
            raise AdminError("admin_disabled", DISABLED_MESSAGE, 503)

    def _is_secret(self, given: str) -> bool:
        secret = self.settings.admin_token
        assert secret is not None
        return hmac.compare_digest(given.encode(), secret.get_secret_value().encode())

    def digest(self, token: str) -> str:
        """What the sessions keep of a session cookie's ``token``: its HMAC-SHA256 (hex, 64
        characters) under the admin secret, so the stores never hold the token, and a new secret
        matches none of the sessions made under the old one."""
        secret = self.settings.admin_token
        assert secret is not None
        message = f"domeng-admin-session/1|{token}".encode()
        return hmac.new(secret.get_secret_value().encode(), message, "sha256").hexdigest()

    def new_device(self, now: float | None = None) -> str:
        """A fresh device cookie (``NONCE.ISSUED.MAC``) signed with the secret."""
        nonce, issued = secrets.token_urlsafe(16), int(time.time() if now is None else now)
        return f"{nonce}.{issued}.{self._device_mac(nonce, issued)}"

    def known_device(self, cookie: str | None) -> str | None:
        """The nonce of a valid, unexpired device cookie (signed with the current secret), or None."""
        nonce, _, rest = (cookie or "").partition(".")
        issued, _, mac = rest.partition(".")
        if not nonce or not (issued.isascii() and issued.isdigit() and len(issued) <= 12):
            return None
        if not mac.isascii():  # compare_digest takes ASCII strings only
            return None
        age = time.time() - int(issued)
        if not -60 <= age < DEVICE_TTL_S:
            return None
        return nonce if hmac.compare_digest(mac, self._device_mac(nonce, int(issued))) else None

    def _device_mac(self, nonce: str, issued: int) -> str:
        secret = self.settings.admin_token
        assert secret is not None
        message = f"domeng-admin-device/1|{nonce}|{issued}".encode()
        return hmac.new(secret.get_secret_value().encode(), message, "sha256").hexdigest()

    async def _judged(self, right: bool, client: str, device: str | None) -> None:
        """Judge an attempt from address ``client`` with the device cookie ``device`` against the
        counts it falls under (see the module), counting it there if it is not ``right``, in one
        atomic step: attempts made at once (through any process) never fail more often than the
        limits allow. Raises `AdminError` ``too_many_attempts`` (nothing counted) when a count is
        spent, the right secret included; ``admin_unavailable`` when Redis does not answer."""
        try:
            nonce = self.known_device(device)
            if nonce is not None:
                with contextlib.suppress(LimitSpentError):
                    await self.limiter.attempt((self.limit, ("admin-login-device", nonce)), failed=not right)
                    return
            counts: tuple[Count, ...] = (
                (self.limit_all, ("admin-login-all",)),
                *((limit, ("admin-login", key)) for limit, key in counted_limits(self.limit, client)),
            )
            try:
                await self.limiter.attempt(*counts, failed=not right)
            except LimitSpentError as spent:
                raise _too_many(spent.retry_after_s, _SPENT_WHERE[spent.index]) from None
        except LimitsUnavailableError:
            raise _unavailable() from None

    async def login(self, secret: str, client: str, device: str | None = None) -> AdminLogin:
        """Check ``secret`` for a login from address ``client`` holding the device cookie
        ``device`` (or None); returns the new session and device cookie. Raises `AdminError`:
        ``admin_disabled``, ``too_many_attempts`` (whatever the secret, so a guess over the limit
        learns nothing), ``wrong_secret``, ``admin_unavailable``."""
        self.check_enabled()
        right = self._is_secret(secret)
        await self._judged(right, client, device)
        if not right:
            raise AdminError("wrong_secret", "that is not the admin secret", 401)
        token = secrets.token_urlsafe(32)
        expires_at = time.time() + self.settings.admin_session_ttl_s
        try:
            await self.sessions.put_session(self.digest(token), expires_at)
        except ConnectionError:
            raise _unavailable() from None
        return AdminLogin(token, expires_at, self.new_device())

    async def logout(self, token: str | None) -> None:
        """End the session of ``token`` (nothing happens for an unknown one); raises
        `AdminError` ``admin_unavailable`` when the shared sessions do not answer."""
        if token and self.enabled:
            try:
                await self.sessions.end_session(self.digest(token))
            except ConnectionError:
                raise _unavailable() from None

    async def session_of(self, token: str | None) -> AdminSession | None:
        """The live session of a cookie's ``token``, or None (unknown or expired); raises
        `AdminError` ``admin_unavailable`` when the shared sessions do not answer."""
        if not token:
            return None
        try:
            expires_at = await self.sessions.session(self.digest(token))
        except ConnectionError:
            raise _unavailable() from None
        if expires_at is None or expires_at <= time.time():
            return None
        return AdminSession("cookie", expires_at)

    async def authenticate(self, request: HTTPConnection) -> AdminSession:
        """Who is asking: a live session cookie, or the secret as a bearer token.

        Raises `AdminError`: ``admin_disabled``, ``too_many_attempts``, ``not_authenticated``,
        ``cross_origin`` (a state-changing request from another site's page),
        ``admin_unavailable``.
        """
        self.check_enabled()
        session = await self.session_of(request.cookies.get(COOKIE_NAME))
        if session is None:
            session = await self._bearer(request)
        if request.scope.get("method") in _UNSAFE_METHODS:
            check_origin(request)
        return session

    async def _bearer(self, request: HTTPConnection) -> AdminSession:
        header = request.headers.get("authorization", "")
        scheme, _, given = header.partition(" ")
        if scheme.lower() != "bearer" or not given.strip():
            raise AdminError("not_authenticated", "log in to the admin area first", 401)
        right = self._is_secret(given.strip())
        await self._judged(right, client_address(request), request.cookies.get(DEVICE_COOKIE))
        if not right:
            raise AdminError("not_authenticated", "log in to the admin area first", 401)
        return AdminSession("bearer")


FOREIGN_FETCH_SITES: Final = frozenset({"cross-site", "same-site"})
"""The ``Sec-Fetch-Site`` values of a request another origin's page made (Fetch Metadata): the
admin area is same-origin only, so a page on a sibling host of the same site is refused too."""


def check_origin(request: HTTPConnection) -> None:
    """Refuse (``cross_origin``, 403) a request that a browser says another origin's page sent:
    its ``Origin`` names another scheme or host than the one it was sent to (the scheme as the
    server sees it: ``https`` behind a trusted proxy that says so), or its ``Sec-Fetch-Site`` is
    ``cross-site`` or ``same-site`` (`FOREIGN_FETCH_SITES`; a browser may leave ``Origin`` out, and
    does on some form posts and redirects). A request with neither header (a script, ``curl``
    with the secret) passes: defence in depth beside the SameSite=Strict cookie, which a script
    does not carry."""
    if request.headers.get("sec-fetch-site", "").strip().lower() in FOREIGN_FETCH_SITES:
        raise AdminError("cross_origin", "admin requests must come from the admin pages", 403)
    origin = request.headers.get("origin")
    if origin is None:
        return
    host = request.headers.get("host", "")
    scheme = {"ws": "http", "wss": "https"}.get(request.url.scheme, request.url.scheme)
    if origin.rstrip("/") != f"{scheme}://{host}":
        raise AdminError("cross_origin", "admin requests must come from the admin pages", 403)


def client_address(request: HTTPConnection) -> str:
    """The client's address as the server sees it (``unknown`` without one)."""
    return request.client.host if request.client else "unknown"


def admin_auth(request: HTTPConnection) -> AdminAuth:
    """The application's `AdminAuth` (``app.state.admin``)."""
    auth: AdminAuth = request.app.state.admin
    return auth


async def require_admin(request: Request) -> AdminSession:
    """The dependency of every protected admin route; raises `AdminError` (see the module)."""
    return await admin_auth(request).authenticate(request)


AdminDep = Annotated[AdminSession, Depends(require_admin)]
