"""The FastAPI application: room HTTP API, the room WebSocket, health, readiness and metrics."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated, Any

import structlog
from fastapi import APIRouter, Depends, FastAPI, Header, HTTPException, Query, Request, WebSocket
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from limits import parse as parse_limit
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, field_validator
from secure import (
    ContentSecurityPolicy,
    CrossOriginOpenerPolicy,
    PermissionsPolicy,
    ReferrerPolicy,
    Secure,
    XContentTypeOptions,
    XFrameOptions,
)
from secure.middleware import SecureASGIMiddleware
from starlette.requests import HTTPConnection
from starlette.websockets import WebSocketDisconnect

from app.admin.auth import AdminAuth
from app.admin.routes import install_admin
from app.connection import Connection, MessageBudget, retry_after_s
from app.hub import Hub
from app.logs import configure_logging
from app.metrics import Metrics
from app.names import shows_nothing
from app.protocol import (
    CLOSE_BAD_TOKEN,
    CLOSE_INVALID,
    CLOSE_POLICY,
    CLOSE_ROOM_CLOSED,
    CLOSE_UNSUPPORTED,
    ActionMessage,
    AnyClientMessage,
    BackMessage,
    HelloMessage,
    PingMessage,
    ProtocolError,
    SyncMessage,
    parse_client_message,
)
from app.rooms import Room, RoomError
from app.settings import Settings
from app.store import Store
from engine.variants import make_rules

__all__ = [
    "MAX_BODY_BYTES",
    "MIN_TURN_TIMER_S",
    "STATIC_DIR",
    "BodyLimit",
    "BotSet",
    "ClaimCreate",
    "HostToken",
    "HubDep",
    "RoomCreate",
    "RoomCreated",
    "RoomDep",
    "SeatClaimed",
    "claim_seat",
    "create_app",
    "create_room",
    "docs_page",
    "get_room",
    "healthz",
    "lobby_page",
    "metrics_endpoint",
    "operations",
    "pages",
    "readyz",
    "room_page",
    "room_socket",
    "rooms",
    "rules_page",
    "security_headers",
    "set_bot",
    "start_match",
    "verify_deal",
]

_log = structlog.get_logger("domeng.server")


class RoomCreate(BaseModel):
    """``POST /api/rooms``: the variant, its options (RULES.md), seats, turn timer and bots.

    ``bots`` lists a bot level (or null for a seat left to people) for every seat.
    """

    model_config = ConfigDict(extra="forbid")

    variant: str = Field("domeng", max_length=16)
    options: dict[str, StrictBool | StrictInt] = Field(default_factory=dict, max_length=8)
    seats: Annotated[int, Field(strict=True, ge=2, le=5)] | None = None
    turn_timer_s: Annotated[float, Field(strict=True, ge=0, le=600)] | None = None
    """Seconds per human turn: 0 (no timer) or 5 to 600."""
    bots: list[str | None] | None = Field(None, max_length=5)

    @field_validator("turn_timer_s")
    @classmethod
    def _playable_timer(cls, value: float | None) -> float | None:
        if value is not None and 0 < value < MIN_TURN_TIMER_S:
            raise ValueError(f"a turn timer is 0 (off) or {MIN_TURN_TIMER_S:g} to 600 seconds")
        return None if value is None else value + 0.0  # -0.0 is 0


MIN_TURN_TIMER_S = 5.0
"""The shortest turn timer a room may have (seconds): less leaves a person no time to play."""


class RoomCreated(BaseModel):
    """The new room: its code, the link to share, and the host's secret token."""

    code: str
    url: str
    host_token: str


class ClaimCreate(BaseModel):
    """``POST /api/rooms/{code}/seats/{seat}``: take a seat under a display name."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=256)
    """1 to 32 characters once runs of white space are folded to one space."""

    @field_validator("name")
    @classmethod
    def _clean(cls, value: str) -> str:
        value = " ".join(value.split())
        if not value or len(value) > 32 or any(not ch.isprintable() for ch in value):
            raise ValueError("a name is 1-32 printable characters")
        if all(shows_nothing(ch) for ch in value):
            raise ValueError("a name needs a visible character")
        return value


class SeatClaimed(BaseModel):
    """The claimed seat and its secret token (keep it: it regains the seat after a reload)."""

    seat: int
    token: str


class BotSet(BaseModel):
    """``PUT /api/rooms/{code}/seats/{seat}/bot``: a bot level, or null to empty the seat."""

    model_config = ConfigDict(extra="forbid")

    level: str | None = Field(None, max_length=16)


def _bearer(authorization: Annotated[str | None, Header()] = None) -> str | None:
    if authorization and authorization.lower().startswith("bearer "):
        return authorization[7:].strip()
    return None


HostToken = Annotated[str | None, Depends(_bearer)]


def create_app(settings: Settings | None = None) -> FastAPI:
    """The application, with its store, hub and metrics created at start-up (lifespan)."""
    settings = settings or Settings()
    configure_logging(settings.log_level, settings.log_json)
    metrics = Metrics()
    store = Store(settings.resolved_database_url(), on_commit=metrics.observe_commit)
    hub = Hub(settings, store, metrics)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await store.start()
        recovered = await hub.recover()
        # Rooms hold many small long-lived objects: move what exists now out of the collector's
        # way and collect the young generation less often, so GC pauses stay short under load.
        gc.freeze()
        gc.set_threshold(20_000, 20, 20)
        _log.info("server_ready", rooms=recovered, database=store.dialect)
        yield
        for room in hub.rooms.values():
            room.close_all("the server is restarting")
        await hub.stop()
        await store.close()

    # /docs is served from static/ (docs_page), not from a CDN the site's CSP would block
    app = FastAPI(title="Domeng Online", version="0.1.0", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.hub = hub
    app.state.store = store
    app.state.settings = settings
    app.state.metrics = metrics
    app.state.limiter = MovingWindowRateLimiter(MemoryStorage())
    app.state.limit = parse_limit(settings.rate_limit)
    app.state.create_limit = parse_limit(settings.room_create_limit)
    app.add_exception_handler(RoomError, _room_error)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, _invalid_request)  # type: ignore[arg-type]
    app.include_router(rooms)
    app.include_router(operations)
    app.include_router(pages)
    install_admin(app, AdminAuth(settings))
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    app.add_middleware(BodyLimit, max_bytes=MAX_BODY_BYTES)
    app.add_middleware(SecureASGIMiddleware, secure=security_headers())  # outermost: every response
    return app


MAX_BODY_BYTES = 64 * 1024
"""The largest HTTP request body read (bytes): every request of the API is a few hundred bytes."""


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

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
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


async def _room_error(request: Request, error: RoomError) -> JSONResponse:
    body = {"detail": {"code": error.code, "message": error.message}}
    return JSONResponse(body, status_code=error.status, headers=error.headers)


async def _invalid_request(request: Request, error: RequestValidationError) -> JSONResponse:
    """422 with where and why each field failed, without echoing the input: a body may hold what
    JSON cannot carry back (a lone surrogate, NaN), and the client has it already."""
    details = [
        {"loc": list(e.get("loc", ())), "msg": str(e.get("msg", "")), "type": str(e.get("type", ""))}
        for e in error.errors()
    ]
    return JSONResponse({"detail": details}, status_code=422)


def _hub(request: HTTPConnection) -> Hub:
    hub: Hub = request.app.state.hub
    return hub


HubDep = Annotated[Hub, Depends(_hub)]


def _room(code: str, hub: HubDep) -> Room:
    room = hub.get(code)
    if room is None:
        raise HTTPException(404, detail={"code": "no_such_room", "message": "no room with this code"})
    return room


RoomDep = Annotated[Room, Depends(_room)]

rooms = APIRouter(prefix="/api")
operations = APIRouter()
pages = APIRouter(include_in_schema=False)

STATIC_DIR = Path(__file__).resolve().parents[1] / "static"
"""The browser client: ES modules served as they are, no build step."""


def _page() -> FileResponse:
    return FileResponse(STATIC_DIR / "index.html", headers={"Cache-Control": "no-cache"})


@pages.get("/")
async def lobby_page() -> FileResponse:
    """The lobby: create a room."""
    return _page()


@pages.get("/r/{code}")
async def room_page(code: str) -> FileResponse:
    """A room's share link: pick a seat or watch, then the table."""
    return _page()


@pages.get("/docs")
async def docs_page() -> FileResponse:
    """The API reference: Swagger UI (vendored in static/vendor/swagger-ui) over /openapi.json."""
    return FileResponse(STATIC_DIR / "docs.html", headers={"Cache-Control": "no-cache"})


@pages.get("/rules")
async def rules_page() -> FileResponse:
    """The rules of Domeng and Kozel, with every term."""
    return _page()


@rooms.post("/rooms", status_code=201)
async def create_room(body: RoomCreate, request: Request, hub: HubDep) -> RoomCreated:
    """Create a room; share ``url``, keep ``host_token`` for the host's commands."""
    state = request.app.state
    client = request.client.host if request.client else "unknown"
    if not state.limiter.hit(state.create_limit, f"create-{client}"):
        retry = {"Retry-After": str(retry_after_s(state.limiter, state.create_limit, f"create-{client}"))}
        message = "too many rooms created from this address; try again soon"
        raise RoomError("too_many_rooms", message, 429, retry)
    if len(hub.rooms) >= hub.settings.max_rooms:
        raise RoomError("server_full", "this server hosts as many rooms as it can; try again later", 503)
    room, host_token = await hub.create_room(
        body.variant, body.options, body.seats, body.turn_timer_s, body.bots
    )
    # The share link is absolute only with a configured public URL: never built from the Host header.
    base = (hub.settings.public_url or "").rstrip("/")
    return RoomCreated(code=room.code, url=f"{base}/r/{room.code}", host_token=host_token)


@rooms.get("/rooms/{code}")
async def get_room(room: RoomDep) -> dict[str, Any]:
    """The room as everyone may see it (RoomPublic)."""
    result: dict[str, Any] = await room.call(lambda r: r.public())
    return result


@rooms.post("/rooms/{code}/seats/{seat}", status_code=201)
async def claim_seat(room: RoomDep, seat: int, body: ClaimCreate) -> SeatClaimed:
    """Take a free seat (race-free: of two claims, exactly one wins; the other gets 409)."""
    token: str = await room.call(lambda r: r.claim(seat, body.name))
    return SeatClaimed(seat=seat, token=token)


@rooms.put("/rooms/{code}/seats/{seat}/bot")
async def set_bot(room: RoomDep, seat: int, body: BotSet, host: HostToken) -> dict[str, Any]:
    """Host only: put a bot of ``level`` in the seat (or empty it before the start); during the
    match this replaces an absent player with a bot."""

    async def run(r: Room) -> dict[str, Any]:
        r.check_host(host)
        await r.set_bot(seat, body.level)
        return r.public()

    result: dict[str, Any] = await room.call(run)
    return result


@rooms.post("/rooms/{code}/start")
async def start_match(room: RoomDep, host: HostToken) -> dict[str, Any]:
    """Host only: fill empty seats with bots and deal the first round."""

    async def run(r: Room) -> dict[str, Any]:
        r.check_host(host)
        await r.begin_match()
        return r.public()

    result: dict[str, Any] = await room.call(run)
    return result


@rooms.get("/deals/verify")
async def verify_deal(
    seed: Annotated[str, Query(max_length=256)],
    commitment: Annotated[str, Query(max_length=128)],
    variant: str = "domeng",
    seats: int | None = None,
) -> dict[str, Any]:
    """Re-derive a round's deal from its revealed seed and check it against the commitment."""
    try:
        rules = make_rules(variant, {}, seats)
    except ValueError as error:
        raise HTTPException(422, detail={"code": "invalid_variant", "message": str(error)}) from None
    deal = rules.deal_from_seed(seed)
    return {
        "matches": hashlib.sha256(seed.encode()).hexdigest() == commitment.lower(),
        "hands": [[str(t) for t in hand] for hand in deal.hands],
        "rest": [str(t) for t in deal.rest],
    }


@operations.get("/healthz")
async def healthz() -> dict[str, str]:
    """Liveness: the process answers."""
    return {"status": "ok"}


@operations.get("/readyz")
async def readyz(hub: HubDep) -> Response:
    """Readiness: the database answers and the store's writer is running."""
    ok = await hub.store.ping()
    body = {"status": "ready" if ok else "not ready", "rooms": len(hub.rooms)}
    return JSONResponse(body, status_code=200 if ok else 503)


@operations.get("/metrics")
async def metrics_endpoint(hub: HubDep) -> Response:
    """Prometheus metrics."""
    return Response(generate_latest(hub.metrics.registry), media_type=CONTENT_TYPE_LATEST)


@operations.websocket("/ws/rooms/{code}")
async def room_socket(websocket: WebSocket, code: str, hub: HubDep) -> None:
    """The room's WebSocket (docs/protocol.md): ``hello`` first, then actions. One client address
    holds at most ``max_sockets_per_address`` of them at once (1008 past that)."""
    await websocket.accept()
    room = hub.get(code)
    if room is None:
        await websocket.close(CLOSE_ROOM_CLOSED, "no room with this code")
        return
    address = websocket.client.host if websocket.client else ""
    if not hub.admit_socket(address):
        hub.metrics.rejected.labels(str(CLOSE_POLICY)).inc()
        await websocket.close(CLOSE_POLICY, "too many connections from this address")
        return
    state = websocket.app.state
    conn = Connection(websocket, hub.settings.send_queue_size)
    limit = state.limit
    budget = MessageBudget(limit.amount, limit.get_expiry())
    try:
        await _serve_socket(websocket, room, conn, budget)
    except ProtocolError as violation:
        hub.metrics.rejected.labels(str(violation.close_code)).inc()
        conn.close(violation.close_code, violation.reason)
    except (WebSocketDisconnect, TimeoutError):
        pass
    finally:
        hub.release_socket(address)
        room.disconnect(conn)
        await _finish(conn)


async def _serve_socket(websocket: WebSocket, room: Room, conn: Connection, budget: MessageBudget) -> None:
    wait_s = room.settings.hello_timeout_s
    try:
        hello = await asyncio.wait_for(_next_message(websocket, budget), wait_s)
    except TimeoutError:
        raise ProtocolError(CLOSE_POLICY, f"no hello within {wait_s:g} s") from None
    if not isinstance(hello, HelloMessage):
        raise ProtocolError(CLOSE_POLICY, "the first message must be hello")
    conn.start()
    try:
        await room.connect(conn, hello)
    except RoomError as error:
        close_code = CLOSE_BAD_TOKEN if error.code == "bad_token" else CLOSE_POLICY
        raise ProtocolError(close_code, error.message) from None
    while True:
        message = await _next_message(websocket, budget)
        if isinstance(message, ActionMessage):
            room.action(conn, message)
        elif isinstance(message, SyncMessage):
            room.sync(conn)
        elif isinstance(message, BackMessage):
            room.back(conn)
        elif isinstance(message, PingMessage):
            conn.send('{"type":"pong"}')
        else:
            raise ProtocolError(CLOSE_INVALID, "hello was already received")


async def _next_message(websocket: WebSocket, budget: MessageBudget) -> AnyClientMessage:
    frame = await websocket.receive()
    if frame["type"] == "websocket.disconnect":
        raise WebSocketDisconnect(frame.get("code", 1000))
    if not budget.take():
        raise ProtocolError(CLOSE_POLICY, "too many messages")
    text = frame.get("text")
    if text is None:
        raise ProtocolError(CLOSE_UNSUPPORTED, "frames are JSON text")
    return parse_client_message(text)


async def _finish(conn: Connection) -> None:
    await conn.flush(timeout_s=0.5)  # a queued close frame goes out before the handler returns
    await conn.stop()
