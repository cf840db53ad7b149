"""Admin sign-in: the secret from configuration, session cookies, rate-limited failures.

The secret (``DOMENG_ADMIN_TOKEN``) is never stored in a cookie. Logging in with it creates a
session: 32 random bytes (``secrets``), sent once as the cookie ``__Host-domeng_admin`` (Secure,
HttpOnly, SameSite=Strict, Path=/, Max-Age the session's lifetime) and kept in memory as its
SHA-256 with an expiry (`MemorySessions`; a restart ends every session), or, with several
processes (``DOMENG_REDIS_URL``), in Redis with the same expiry, so a session made through one
process works on all and logging out ends it on all (`SessionStore`, docs/cluster.md). Scripts
may instead send the secret itself as ``Authorization: Bearer <secret>``; every comparison is
constant-time (`hmac.compare_digest`).

Failed attempts (a wrong secret at login or as a bearer) are counted per client address with the
`limits` package (``DOMENG_ADMIN_LOGIN_LIMIT``, default 5 per minute), and for all addresses
together (``DOMENG_ADMIN_LOGIN_LIMIT_ALL``, default 30 per minute); over either limit every attempt
it covers answers 429 until the window has passed, the right secret included. With several
processes these counts are shared in Redis (`app.web.ratelimit.RateLimits`).

Errors, all ``{"detail": {"code": "...", "message": "..."}}`` (`AdminError`):

    AdminError
    ├── admin_disabled       503  no secret is configured
    ├── not_authenticated    401  no valid session cookie and no right bearer secret
    ├── wrong_secret         401  a login with the wrong secret
    ├── too_many_attempts    429  too many failed attempts from this address
    ├── admin_unavailable    503  the shared sessions or counts (Redis) do not answer now
    └── cross_origin         403  a state-changing request whose Origin is another site
"""

from __future__ import annotations

import hmac
import secrets
import time
from dataclasses import dataclass, field
from typing import Annotated, Final, Protocol

from fastapi import Depends, Request
from limits import RateLimitItem
from limits import parse as parse_limit
from starlette.requests import HTTPConnection

from app.web.ratelimit import LimitsUnavailableError, RateLimits
from app.web.settings import Settings
from engine.hashing import sha256_hex

__all__ = [
    "COOKIE_NAME",
    "DISABLED_MESSAGE",
    "MAX_SESSIONS",
    "AdminAuth",
    "AdminDep",
    "AdminError",
    "AdminSession",
    "MemorySessions",
    "SessionStore",
    "admin_auth",
    "check_origin",
    "client_address",
    "require_admin",
]

COOKIE_NAME: Final = "__Host-domeng_admin"
"""The session cookie. The ``__Host-`` prefix makes browsers insist on Secure, Path=/ and no Domain."""

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


class SessionStore(Protocol):
    """Where admin sessions live, by the SHA-256 of their token (hex): `MemorySessions` (one
    process) or `app.cluster.RedisShared` (several). Each method may raise ConnectionError."""

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

    async def _check_attempts(self, client: str) -> None:
        try:
            await self._check_limits(client)
        except LimitsUnavailableError:
            raise _unavailable() from None

    async def _check_limits(self, client: str) -> None:
        if not await self.limiter.test(self.limit_all, "admin-login-all"):
            retry = await self.limiter.retry_after_s(self.limit_all, "admin-login-all")
            raise AdminError(
                "too_many_attempts",
                "too many failed admin logins; try again later",
                429,
                {"Retry-After": str(retry)},
            )
        if not await self.limiter.test(self.limit, "admin-login", client):
            retry = await self.limiter.retry_after_s(self.limit, "admin-login", client)
            raise AdminError(
                "too_many_attempts",
                "too many failed admin logins from this address; try again later",
                429,
                {"Retry-After": str(retry)},
            )

    async def _failed(self, client: str) -> None:
        try:
            await self.limiter.hit(self.limit, "admin-login", client)
            await self.limiter.hit(self.limit_all, "admin-login-all")
        except LimitsUnavailableError:
            raise _unavailable() from None

    async def login(self, secret: str, client: str) -> tuple[str, float]:
        """Check ``secret`` for a login from address ``client``; returns a new session token and
        its expiry (epoch seconds). Raises `AdminError`: ``admin_disabled``,
        ``too_many_attempts`` (checked first, so a guess over the limit learns nothing),
        ``wrong_secret``, ``admin_unavailable``."""
        self.check_enabled()
        await self._check_attempts(client)
        if not self._is_secret(secret):
            await self._failed(client)
            raise AdminError("wrong_secret", "that is not the admin secret", 401)
        token = secrets.token_urlsafe(32)
        expires_at = time.time() + self.settings.admin_session_ttl_s
        try:
            await self.sessions.put_session(sha256_hex(token), expires_at)
        except ConnectionError:
            raise _unavailable() from None
        return token, expires_at

    async def logout(self, token: str | None) -> None:
        """End the session of ``token`` (nothing happens for an unknown one); raises
        `AdminError` ``admin_unavailable`` when the shared sessions do not answer."""
        if token:
            try:
                await self.sessions.end_session(sha256_hex(token))
            except ConnectionError:
                raise _unavailable() from None

    async def session_of(self, token: str | None) -> AdminSession | None:
        """The live session of a cookie's ``token``, or None (unknown or expired); raises
        `AdminError` ``admin_unavailable`` when the shared sessions do not answer."""
        if not token:
            return None
        try:
            expires_at = await self.sessions.session(sha256_hex(token))
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
        client = client_address(request)
        await self._check_attempts(client)
        if not self._is_secret(given.strip()):
            await self._failed(client)
            raise AdminError("not_authenticated", "log in to the admin area first", 401)
        return AdminSession("bearer")


def check_origin(request: HTTPConnection) -> None:
    """Refuse (``cross_origin``, 403) a request whose ``Origin`` names another scheme or host than
    the one it was sent to (the scheme as the server sees it: ``https`` behind a trusted proxy that
    says so): defence in depth beside the SameSite=Strict cookie."""
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
