"""HTTP middleware: the allowed Host names, the request body limit and the security headers of
every response."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

from fastapi import HTTPException
from fastapi.responses import JSONResponse, PlainTextResponse
from secure import (
    ContentSecurityPolicy,
    CrossOriginOpenerPolicy,
    PermissionsPolicy,
    ReferrerPolicy,
    Secure,
    XContentTypeOptions,
    XFrameOptions,
)
from starlette.middleware.trustedhost import TrustedHostMiddleware

__all__ = [
    "HOST_REFUSED",
    "MAX_BODY_BYTES",
    "AllowedHosts",
    "BodyLimit",
    "RelativeRedirects",
    "SecureDenials",
    "security_headers",
]

MAX_BODY_BYTES = 64 * 1024
"""The largest HTTP request body read (bytes): every request of the API is a few hundred bytes."""


HOST_REFUSED: Final = (
    "Invalid host header: this server does not answer to that name. Its operator lists the names"
    " it answers to in DOMENG_ALLOWED_HOSTS (docs/deploy.md)."
)
"""The body of the 400 that answers a request or a WebSocket handshake naming a ``Host`` the
server does not answer to (`AllowedHosts`); it never repeats the name."""

_PASSED: Final = "domeng.host_allowed"


class AllowedHosts:
    """ASGI middleware: an HTTP request or a WebSocket handshake whose ``Host`` is none of
    ``allowed_hosts`` (patterns as Starlette's TrustedHostMiddleware matches them, which judges
    it here: ``play.example``, ``*.example``, ``[::1]``, any port; ``*`` lets everyone in) is
    answered 400 with `HOST_REFUSED` in plain text, and a handshake never reaches its socket:
    the defence against DNS rebinding, a page on another domain resolving to this server's
    address. Starlette's own answer ("Invalid host header", and a redirect to ``www.`` built from
    the Host) is not used: the middleware only judges."""

    def __init__(self, app: Any, allowed_hosts: list[str]) -> None:
        self.app = app
        self.judge = TrustedHostMiddleware(_mark_passed, allowed_hosts, www_redirect=False)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if self.judge.allow_any or scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        probe = {**scope}
        await self.judge(probe, receive, _swallow)  # sends nothing when it lets it through
        if probe.get(_PASSED):
            await self.app(scope, receive, send)
            return
        await PlainTextResponse(HOST_REFUSED, status_code=400)(scope, receive, send)


async def _mark_passed(scope: Any, receive: Any, send: Any) -> None:
    """The judge's inner app: what it calls only for an allowed Host."""
    scope[_PASSED] = True


async def _swallow(message: Any) -> None:
    """The judge's own refusal goes nowhere (`AllowedHosts` answers instead)."""


class BodyLimit:
    """ASGI middleware: an HTTP request whose body is over ``max_bytes`` gets 413
    (``body_too_large``) before it is read, by its Content-Length, or as soon as a body sent
    without one passes the limit while a POST, PUT, PATCH or DELETE reads it (raised as an
    HTTPException, which FastAPI's body reading passes through). A GET, HEAD or OPTIONS body is
    never read (its page only listens for a disconnect while it answers): it goes by uncounted.
    WebSockets are left alone (their frames have their own limit)."""

    def __init__(self, app: Any, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    def __call__(self, scope: Any, receive: Any, send: Any) -> Awaitable[None]:
        if scope["type"] != "http":  # a WebSocket's messages do not go through a frame of this
            return self.app(scope, receive, send)  # type: ignore[no-any-return]
        return self._limited(scope, receive, send)

    async def _limited(self, scope: Any, receive: Any, send: Any) -> None:
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            await self._refuse()(scope, receive, send)
            return
        if scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        seen = 0

        async def counted() -> Any:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise HTTPException(413, detail=self._detail())
            return message

        await self.app(scope, counted, send)

    def _detail(self) -> dict[str, str]:
        return {"code": "body_too_large", "message": f"a request body is at most {self.max_bytes} bytes"}

    def _refuse(self) -> JSONResponse:
        return JSONResponse({"detail": self._detail()}, status_code=413, headers={"Connection": "close"})


def security_headers() -> Secure:
    """The security headers of every HTTP response (the ``secure`` package's ASGI middleware).

    The client is same-origin ES modules and stylesheets with no inline script or style attribute
    (styles are set through the CSSOM), so the Content-Security-Policy allows only ``'self'``, plus
    ``data:`` images (the felt's noise texture in app.css); WebSockets go to the page's own host.
    Pages may not be framed (clickjacking), types are not sniffed, and a room link (whose code lets
    anyone watch) never leaves the site in a Referer header. HSTS is left to the TLS proxy, which
    knows whether the site is served over HTTPS.
    """
    csp = (
        ContentSecurityPolicy()
        .default_src("'self'")
        .script_src("'self'")
        .style_src("'self'")
        .img_src("'self'", "data:")
        .connect_src("'self'")
        .object_src("'none'")
        .base_uri("'none'")
        .form_action("'self'")
        .frame_ancestors("'none'")
    )
    return Secure(
        csp=csp,
        coop=CrossOriginOpenerPolicy().same_origin(),
        permissions=PermissionsPolicy().geolocation().microphone().camera(),
        referrer=ReferrerPolicy().same_origin(),
        xcto=XContentTypeOptions().nosniff(),
        xfo=XFrameOptions().deny(),
    )


class SecureDenials:
    """ASGI middleware: a WebSocket handshake refused with an HTTP answer (ASGI's
    ``websocket.http.response``: `app.edge.endpoint`'s 503 ``room_unavailable``/``server_full``)
    carries the same security headers (``secure``'s headers, replacing any of the same name) as
    every HTTP response, which ``secure``'s own middleware sets only on ``http`` scopes. The
    refusals uvicorn writes itself (403, 400, 500…) get them from `app.edge.refusals`."""

    def __init__(self, app: Any, secure: Secure) -> None:
        self.app = app
        self.headers = [
            (name.lower().encode(), value.encode("latin-1")) for name, value in secure.headers.items()
        ]
        self.names = {name for name, _ in self.headers}

    def __call__(self, scope: Any, receive: Any, send: Any) -> Awaitable[None]:
        # a plain function handing back the app's awaitable, and a plain ``send`` handing back
        # the server's: every frame a socket sends passes here, and adds no coroutine of its own
        if scope["type"] != "websocket":
            return self.app(scope, receive, send)  # type: ignore[no-any-return]

        def send_secured(message: Any) -> Awaitable[None]:
            if message["type"] == "websocket.http.response.start":
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in self.names]
                message = {**message, "headers": kept + self.headers}
            return send(message)  # type: ignore[no-any-return]

        return self.app(scope, receive, send_secured)  # type: ignore[no-any-return]


class RelativeRedirects:
    """ASGI middleware: a redirect's ``Location`` is made relative (path, query, fragment), so
    an answer never names the host the request's ``Host`` header claimed (Starlette's
    trailing-slash redirect builds an absolute URL from it). The server never redirects to
    another site."""

    def __init__(self, app: Any) -> None:
        self.app = app

    def __call__(self, scope: Any, receive: Any, send: Any) -> Awaitable[None]:
        if scope["type"] != "http":  # a WebSocket's messages do not go through a frame of this
            return self.app(scope, receive, send)  # type: ignore[no-any-return]
        return self._relative(scope, receive, send)

    async def _relative(self, scope: Any, receive: Any, send: Any) -> None:
        async def send_relative(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = [
                    (key, _relative(value) if key.lower() == b"location" else value)
                    for key, value in message.get("headers", [])
                ]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_relative)


def _relative(location: bytes) -> bytes:
    url = urlsplit(location.decode("latin-1"))
    path = "/" + url.path.lstrip("/")  # never "//host": a browser reads that as another site
    return urlunsplit(("", "", path, url.query, url.fragment)).encode("latin-1")
