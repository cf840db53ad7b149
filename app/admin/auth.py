"""Admin sign-in: the secret from configuration, session cookies, rate-limited failures.

The secret (``DOMENG_ADMIN_TOKEN``) is never stored in a cookie. Logging in with it creates a
session: 32 random bytes (``secrets``), sent once as the cookie ``__Host-domeng_admin`` (Secure,
HttpOnly, SameSite=Strict, Path=/, Max-Age the session's lifetime) and kept in memory as its
SHA-256 with an expiry. A restart ends every session. Scripts may instead send the secret itself
as ``Authorization: Bearer <secret>``; every comparison is constant-time (`hmac.compare_digest`).

Failed attempts (a wrong secret at login or as a bearer) are counted per client address with the
`limits` package (``DOMENG_ADMIN_LOGIN_LIMIT``, default 5 per minute), and for all addresses
together (``DOMENG_ADMIN_LOGIN_LIMIT_ALL``, default 30 per minute); over either limit every attempt
it covers answers 429 until the window has passed, the right secret included.

Errors, all ``{"detail": {"code": "...", "message": "..."}}`` (`AdminError`):

    AdminError
    ├── admin_disabled       503  no secret is configured
    ├── not_authenticated    401  no valid session cookie and no right bearer secret
    ├── wrong_secret         401  a login with the wrong secret
    ├── too_many_attempts    429  too many failed attempts from this address
    └── cross_origin         403  a state-changing request whose Origin is another site
"""

from __future__ import annotations

import hmac
import secrets
import time
from dataclasses import dataclass, field
from typing import Annotated, Final

from fastapi import Depends, Request
from limits import RateLimitItem
from limits import parse as parse_limit
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter
from starlette.requests import HTTPConnection

from app.web.ratelimit import retry_after_s
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


@dataclass
class AdminAuth:
    """The secret, the live sessions and the failed-attempt limiter of one server process."""

    settings: Settings
    sessions: dict[str, float] = field(default_factory=dict)
    """SHA-256 of each session token → its expiry (epoch seconds)."""
    limiter: MovingWindowRateLimiter = field(default_factory=lambda: MovingWindowRateLimiter(MemoryStorage()))

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

    def _check_attempts(self, client: str) -> None:
        if not self.limiter.test(self.limit_all, "admin-login-all"):
            retry = retry_after_s(self.limiter, self.limit_all, "admin-login-all")
            raise AdminError(
                "too_many_attempts",
                "too many failed admin logins; try again later",
                429,
                {"Retry-After": str(retry)},
            )
        if not self.limiter.test(self.limit, "admin-login", client):
            retry = retry_after_s(self.limiter, self.limit, "admin-login", client)
            raise AdminError(
                "too_many_attempts",
                "too many failed admin logins from this address; try again later",
                429,
                {"Retry-After": str(retry)},
            )

    def _failed(self, client: str) -> None:
        self.limiter.hit(self.limit, "admin-login", client)
        self.limiter.hit(self.limit_all, "admin-login-all")

    def login(self, secret: str, client: str) -> tuple[str, float]:
        """Check ``secret`` for a login from address ``client``; returns a new session token and
        its expiry (epoch seconds). Raises `AdminError`: ``admin_disabled``,
        ``too_many_attempts`` (checked first, so a guess over the limit learns nothing),
        ``wrong_secret``."""
        self.check_enabled()
        self._check_attempts(client)
        if not self._is_secret(secret):
            self._failed(client)
            raise AdminError("wrong_secret", "that is not the admin secret", 401)
        now = time.time()
        self.sessions = {h: exp for h, exp in self.sessions.items() if exp > now}
        while len(self.sessions) >= MAX_SESSIONS:
            self.sessions.pop(min(self.sessions, key=self.sessions.__getitem__))
        token = secrets.token_urlsafe(32)
        expires_at = now + self.settings.admin_session_ttl_s
        self.sessions[sha256_hex(token)] = expires_at
        return token, expires_at

    def logout(self, token: str | None) -> None:
        """End the session of ``token`` (nothing happens for an unknown one)."""
        if token:
            self.sessions.pop(sha256_hex(token), None)

    def session_of(self, token: str | None) -> AdminSession | None:
        """The live session of a cookie's ``token``, or None (unknown or expired)."""
        if not token:
            return None
        key = sha256_hex(token)
        expires_at = self.sessions.get(key)
        if expires_at is None:
            return None
        if expires_at <= time.time():
            self.sessions.pop(key, None)
            return None
        return AdminSession("cookie", expires_at)

    def authenticate(self, request: HTTPConnection) -> AdminSession:
        """Who is asking: a live session cookie, or the secret as a bearer token.

        Raises `AdminError`: ``admin_disabled``, ``too_many_attempts``, ``not_authenticated``,
        ``cross_origin`` (a state-changing request from another site's page).
        """
        self.check_enabled()
        session = self.session_of(request.cookies.get(COOKIE_NAME))
        if session is None:
            session = self._bearer(request)
        if request.scope.get("method") in _UNSAFE_METHODS:
            check_origin(request)
        return session

    def _bearer(self, request: HTTPConnection) -> AdminSession:
        header = request.headers.get("authorization", "")
        scheme, _, given = header.partition(" ")
        if scheme.lower() != "bearer" or not given.strip():
            raise AdminError("not_authenticated", "log in to the admin area first", 401)
        client = client_address(request)
        self._check_attempts(client)
        if not self._is_secret(given.strip()):
            self._failed(client)
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


def require_admin(request: Request) -> AdminSession:
    """The dependency of every protected admin route; raises `AdminError` (see the module)."""
    return admin_auth(request).authenticate(request)


AdminDep = Annotated[AdminSession, Depends(require_admin)]
