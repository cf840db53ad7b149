"""The FastAPI application: its parts put together, started and stopped (lifespan)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import AsyncIterator, Callable
from functools import partial
from typing import TYPE_CHECKING

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from limits import parse as parse_limit
from limits import parse_many
from secure.middleware import SecureASGIMiddleware
from starlette.exceptions import HTTPException as StarletteHTTPException

import engine
from app.admin.auth import AdminAuth, StoreSessions
from app.admin.live import answer
from app.admin.routes import install_admin
from app.bots import WorkerBots
from app.bots.reviews import ReviewWorkers
from app.edge.endpoint import SocketCounter, sockets
from app.edge.handoff import HANDOFF, Handoff
from app.edge.hosting import RemoteClients
from app.metrics import Metrics
from app.rooms.config import RoomConfig
from app.rooms.errors import RoomError
from app.rooms.hub import Hub
from app.rooms.ports import CloseReason
from app.store import DatabaseLockedError, Store, StoreError
from app.web.guard import RateLimitedExceptionHandler
from app.web.logs import configure_logging
from app.web.middleware import (
    MAX_BODY_BYTES,
    AllowedHosts,
    BodyLimit,
    RelativeRedirects,
    SecureDenials,
    security_headers,
)
from app.web.ratelimit import RateLimits
from app.web.readiness import SharedCheck
from app.web.routes import STATIC_DIR, operations, page_not_found, pages, rooms, spend_allowance
from app.web.settings import Settings
from app.web.shared import Board

if TYPE_CHECKING:
    from app.cluster import RedisLeases, RedisRelay

__all__ = ["ECHO_CHARS", "MESSAGE_CHARS", "clipped", "create_app", "room_config"]

_log = structlog.get_logger("domeng.server")


def create_app(  # noqa: PLR0915 (every part, put together)
    settings: Settings | None = None, holding: Callable[[], bool] | None = None
) -> FastAPI:
    """The application, with its store, hub and metrics created at start-up (lifespan).
    ``holding``: whether this process still holds its PostgreSQL database alone
    (`app.store.pghold`, a server without Redis); while it does not, the store commits nothing."""
    settings = settings or Settings()
    secret = settings.admin_token.get_secret_value() if settings.admin_token else ""
    configure_logging(settings.log_level, settings.log_json, secrets=[secret])
    metrics = Metrics()
    store = Store(
        settings.resolved_database_url(),
        batch_window_s=settings.group_commit_s,
        batch_target=settings.group_commit_writes,
        database_timeout_s=settings.database_timeout_s,
        on_commit=metrics.observe_commit,
        migrate=settings.migrate,
        holding=holding,
    )
    # bots think in worker processes, never on the event loop (app.bots.workers)
    bots = WorkerBots(
        settings.resolved_bot_workers(),
        hard_budget_ms=settings.hard_bot_budget_ms,
        on_decision=metrics.observe_bot,
    )
    leases, relay = _cluster(settings)
    hub = Hub(room_config(settings), store, metrics, bots=bots, leases=leases)
    # with several processes: sessions, the board (lobby, open rooms per address) and asks in Redis
    board = _board(settings, hub, None if leases is None else leases.holder)
    limiter = RateLimits(settings.redis_url, prefix=settings.redis_prefix)
    # an address's chat lines across every room (and, with Redis, every process)
    chat_lines = partial(spend_allowance, limiter, parse_many(settings.chat_limit), "chat")
    # the owner's side of the relay: other processes' sockets for this process's rooms
    remote = None if relay is None else RemoteClients(hub, relay, settings.hello_timeout_s, chat_lines)
    # a room moves to the process its clients reach, when its owner has no socket of its own in it
    handoff = Handoff(
        hub,
        board.shared if board is not None and settings.room_handoff else None,
        moved=None if board is None else board.publish_now,
    )
    # round reviews (issue 16): a worker process of their own, started on the first request
    reviews = ReviewWorkers(
        store.export_record, samples=settings.review_samples, timeout_s=settings.review_timeout_s
    )
    allowed_hosts = settings.resolved_allowed_hosts()  # None: any, and a warning at start

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # the accept loop out of file descriptors reports once a second: log it at a bounded rate
        asyncio.get_running_loop().set_exception_handler(
            RateLimitedExceptionHandler(settings.loop_error_window_s)
        )
        # the bot workers start beside the rest (a process importing the engine): not awaited, so
        # readiness does not wait for them; a first decision before they are up waits for them
        warming = asyncio.create_task(bots.start(), name="bot-workers-start")
        await store.start()
        if relay is not None:
            await relay.start()
        recovered = await hub.recover()  # counts them: rooms load when opened
        if board is not None:  # publish this process's tables, answer the others' asks
            board.start(
                lambda kind, body: handoff.answer(body) if kind == HANDOFF else answer(hub, kind, body)
            )
        hub.start_sweeper(min(60.0, settings.room_unload_after_s / 2))
        # Rooms hold many small long-lived objects: move what exists now out of the collector's
        # way and collect the young generation less often, so GC pauses stay short under load.
        gc.freeze()
        gc.set_threshold(20_000, 20, 20)
        if allowed_hosts is None:
            _warn_any_host(settings.host)
        cluster = {} if leases is None else {"cluster": leases.holder, "redis_prefix": settings.redis_prefix}
        _log.info(
            "server_ready",
            rooms=recovered,
            database=store.dialect,
            bot_workers=bots.workers,
            # the stack an operator chose (or the defaults): uvloop's loop or asyncio's, group commit
            loop=type(asyncio.get_running_loop()).__module__.split(".")[0],
            group_commit_s=settings.group_commit_s,
            group_commit_writes=settings.group_commit_writes,
            engine=engine.BUILD,  # the rules compiled with mypyc, or pure Python (docs/engine.md)
            **cluster,
        )
        yield
        # several processes: the rooms' leases are released below and another process takes them,
        # so their clients (local or relayed) reconnect (room_moved); one process: it restarts
        closing: CloseReason = "room_moved" if relay is not None else "server_restart"
        if remote is not None:
            remote.stopping = True
        for room in hub.rooms.values():
            room.close_all(closing)
        if board is not None:
            await board.close()  # off the board: the others stop listing this process's tables
        await hub.stop()  # and its leases
        if remote is not None and relay is not None:
            await remote.stop()
            await relay.close()
        with contextlib.suppress(Exception):
            await warming
        await bots.close()
        await reviews.close()
        await store.close()
        await limiter.close()

    # /docs is served from static/ (docs_page), not from a CDN the site's CSP would block
    app = FastAPI(title="Domeng Online", version="0.1.0", lifespan=lifespan, docs_url=None, redoc_url=None)
    shared = None if board is None else board.shared
    parts = {
        "hub": hub,
        "relay": relay,
        "handoff": handoff,
        "store": store,
        "settings": settings,
        "metrics": metrics,
        "reviews": reviews,
        "sockets": SocketCounter(settings.max_sockets_per_address),
        "readiness": SharedCheck(store.ping),  # /readyz: one database check at a time
        "limiter": limiter,
        "board": board,  # several processes: the lobby and open rooms per address (app.web.shared)
        "peers": shared,  # several processes: the admin's live rooms (app.admin.live.Peers)
        "limit": parse_limit(settings.rate_limit),
        "create_limit": parse_limit(settings.room_create_limit),
        "read_limit": parse_limit(settings.read_limit),
        "write_limit": parse_limit(settings.write_limit),
        # a room socket's look-up of a room not in memory spends the public reads' allowance
        "lookups": partial(spend_allowance, limiter, parse_limit(settings.read_limit), "read"),
        "chat_lines": chat_lines,
        "socket_opens": partial(spend_allowance, limiter, parse_limit(settings.socket_limit), "socket"),
    }
    for name, part in parts.items():
        setattr(app.state, name, part)
    app.add_exception_handler(RoomError, _room_error)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, _invalid_request)  # type: ignore[arg-type]
    app.add_exception_handler(StoreError, _store_failed)  # type: ignore[arg-type]
    app.add_exception_handler(StarletteHTTPException, page_not_found)  # type: ignore[arg-type]
    app.include_router(rooms)
    app.include_router(operations)
    app.include_router(pages)
    app.include_router(sockets)
    install_admin(app, AdminAuth(settings, shared or StoreSessions(store), limiter))
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    app.add_middleware(BodyLimit, max_bytes=MAX_BODY_BYTES)
    app.add_middleware(RelativeRedirects)  # a Location never names the request's Host
    # a Host the server does not answer to is refused (400) before anything, sockets too: no page
    # on a domain that resolves to this machine (DNS rebinding) drives it
    app.add_middleware(AllowedHosts, allowed_hosts=allowed_hosts or ["*"])
    app.add_middleware(SecureDenials, secure=security_headers())  # a refused WebSocket handshake's answer
    app.add_middleware(SecureASGIMiddleware, secure=security_headers())  # outermost: every response
    return app


def _warn_any_host(host: str) -> None:
    """Log ``allowed_hosts_unset`` (a warning): the server listens on ``host``, not a loopback
    address, without ``DOMENG_ALLOWED_HOSTS``, so it answers whatever Host a request names."""
    _log.warning(
        "allowed_hosts_unset",
        host=host,
        message=(
            f"listening on {host} with DOMENG_ALLOWED_HOSTS unset: every Host name is answered, so a"
            " page on another domain that resolves to this server (DNS rebinding) can use it; set"
            " DOMENG_ALLOWED_HOSTS to the names players reach it by, comma-separated, e.g."
            " DOMENG_ALLOWED_HOSTS=play.example,192.168.1.20 (docs/deploy.md)"
        ),
    )


ECHO_CHARS = 40
"""The most of a client's own words (a body's key, a query's name) an error answer repeats: past
it, the start and "…", so no request makes the server send back more than it needs to say where."""
MESSAGE_CHARS = 300
"""The most an error answer's message says (messages quote bounded input only: a safety bound)."""


def clipped(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, the cut marked with "…".

    >>> clipped("camat_target", 40), clipped("k" * 3000, 5)
    ('camat_target', 'kkkk…')
    """
    return text if len(text) <= limit else text[: limit - 1] + "…"


async def _room_error(request: Request, error: RoomError) -> JSONResponse:
    body = {"detail": {"code": error.code, "message": clipped(error.message, MESSAGE_CHARS)}}
    return JSONResponse(body, status_code=error.status, headers=error.headers)


async def _store_failed(request: Request, error: StoreError) -> JSONResponse:
    """500 ``store_unavailable`` in the API's shape when the database failed a request's write or
    read (down, timing out, its disk full): the client gets plain words and a code it can show,
    not a bare "Internal Server Error". Logged as ``request_store_failed`` with the method, the
    path and the error's class only (its text may quote the statement and its values); not when
    the server is stopping with its SQLite database locked (the store logs those in one line)."""
    if not (isinstance(error, DatabaseLockedError) and error.at_stop):
        _log.warning(
            "request_store_failed", method=request.method, path=request.url.path, error=type(error).__name__
        )
    message = "the server could not save or read that just now; nothing changed; try again in a moment"
    return JSONResponse({"detail": {"code": "store_unavailable", "message": message}}, status_code=500)


async def _invalid_request(request: Request, error: RequestValidationError) -> JSONResponse:
    """422 with where and why each field failed, without echoing the input: a body may hold what
    JSON cannot carry back (a lone surrogate, NaN), and the client has it already. Where a place
    is named by the client (a body's key), at most `ECHO_CHARS` of it come back."""
    details = [
        {
            "loc": [p if isinstance(p, int) else clipped(str(p), ECHO_CHARS) for p in e.get("loc", ())],
            "msg": clipped(str(e.get("msg", "")), MESSAGE_CHARS),
            "type": str(e.get("type", "")),
        }
        for e in error.errors()
    ]
    return JSONResponse({"detail": details}, status_code=422)


def _cluster(settings: Settings) -> tuple[RedisLeases | None, RedisRelay | None]:
    """The rooms' leases in Redis and the relay of sockets to a room's owner when ``redis_url``
    is set (docs/cluster.md), else (None, None): one process, and the Redis client is not even
    imported. The relay listens on the inbox of every room whose lease is held here."""
    if not settings.redis_url:
        return None, None
    from app.cluster import RedisLeases, RedisRelay  # noqa: PLC0415 (only with a Redis URL)

    leases = RedisLeases(settings.redis_url, settings.lease_s, prefix=settings.redis_prefix)
    relay = RedisRelay(settings.redis_url, beat_s=settings.relay_beat_s, prefix=settings.redis_prefix)
    leases.on_change = lambda code, held: relay.host(code) if held else relay.unhost(code)
    return leases, relay


def _board(settings: Settings, hub: Hub, holder: str | None) -> Board | None:
    """This process's board in what the processes share besides leases (docs/cluster.md), in the
    Redis of ``redis_url``; ``holder`` is this process's id (its leases'). None with one process."""
    if settings.redis_url is None or holder is None:
        return None
    from app.cluster import RedisShared  # noqa: PLC0415 (only with a Redis URL)

    return Board(hub, RedisShared(settings.redis_url, holder, prefix=settings.redis_prefix))


def room_config(settings: Settings) -> RoomConfig:
    """The rooms' timings and limits from the server's settings."""
    return RoomConfig(
        disconnect_grace_s=settings.disconnect_grace_s,
        bot_delay_s=settings.bot_delay_s,
        round_pause_s=settings.round_pause_s,
        turn_timer_s=settings.turn_timer_s,
        max_rooms=settings.max_rooms,
        max_rooms_per_address=settings.max_rooms_per_address,
        max_spectators=settings.max_spectators,
        unload_after_s=settings.room_unload_after_s,
        abandon_after_s=settings.abandoned_after_s,
        unplayed_kept_s=settings.unplayed_kept_s,
        unattended_rounds=settings.unattended_rounds,
    )
