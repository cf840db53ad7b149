"""The HTTP routes: the room API (``/api``), health, readiness and metrics, and the pages."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from functools import cache
from pathlib import Path as FilePath
from typing import Annotated, Any, Final, Literal

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from limits import RateLimitItem
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.addresses import counted_address, counted_keys
from app.rooms import again, chat, ownership
from app.rooms import host as host_commands
from app.rooms.errors import RoomError
from app.rooms.frames import room_public
from app.rooms.hub import Hub
from app.rooms.reviewing import reviewable, reviewable_earlier
from app.rooms.room import Room
from app.rooms.seats import seat_named
from app.rooms.seeds import check_deal_proof
from app.web.deps import HostToken, HubDep, ReviewsDep, RoomDep, SeatPath, SeatToken
from app.web.documents import render_document
from app.web.models import (
    BotSet,
    ChatRulesSet,
    ClaimCreate,
    OpenSet,
    OptionsSet,
    RoomCreate,
    RoomCreated,
    RoundReview,
    SeatClaimed,
    StopSet,
)
from app.web.ratelimit import LimitsUnavailableError, RateLimits, counted_limits
from app.web.readiness import SharedCheck
from app.web.reviews import run_review
from app.web.shared import Board
from engine.deal_json import deal_to_json
from engine.hashing import commitment_of
from engine.variants import make_rules

__all__ = [
    "DOCS_DIR",
    "MY_TABLES_MAX",
    "READ",
    "STATIC_DIR",
    "WRITE",
    "Allowance",
    "claim_seat",
    "create_room",
    "docs_page",
    "get_room",
    "healthz",
    "leave_seat",
    "lobby_page",
    "metrics_endpoint",
    "open_tables",
    "operations",
    "page_not_found",
    "pages",
    "play_again",
    "readyz",
    "remove_spectator",
    "review_round",
    "room_defaults",
    "room_page",
    "room_statuses",
    "rooms",
    "rules_document",
    "rules_document_page",
    "rules_page",
    "set_bot",
    "set_chat_rules",
    "set_open",
    "set_options",
    "spend_allowance",
    "start_match",
    "stop_match",
    "verify_deal",
    "web_manifest",
]

rooms = APIRouter(prefix="/api")
operations = APIRouter()
pages = APIRouter(include_in_schema=False)

STATIC_DIR = FilePath(__file__).resolve().parents[2] / "static"
DOCS_DIR = FilePath(__file__).resolve().parents[2] / "docs"
"""The repository's documents; the rules page links to two of them (`rules_document`)."""
"""The browser client: ES modules served as they are, no build step."""


def _page(status_code: int = 200) -> FileResponse:
    """The client's page (static/index.html), never cached without asking again; ``status_code``
    404 for an address with no page (`page_not_found`)."""
    headers = {"Cache-Control": "no-cache"}
    return FileResponse(STATIC_DIR / "index.html", status_code=status_code, headers=headers)


_NOT_PAGES: Final = ("/api/", "/static/", "/admin", "/ws/")
"""Where an unknown address is the API's, a file's, the admin area's or a socket's: its 404 stays
the API's JSON (`page_not_found`)."""


async def page_not_found(request: Request, error: StarletteHTTPException) -> Response:
    """A 404 (any `StarletteHTTPException` with that status) for a browser's page request: a GET
    or HEAD that accepts ``text/html``, outside `_NOT_PAGES`, gets the client's page with status
    404, which says the page does not exist under the site's header (static/js/main.js), not the
    API's ``{"detail": "Not Found"}``: a friend's link mistyped or cut (``/r/``, ``/R/…``) reads
    as a page. Anything else gets FastAPI's JSON answer as before."""
    path = request.url.path
    wants_page = request.method in ("GET", "HEAD") and "text/html" in request.headers.get("accept", "")
    if error.status_code == 404 and wants_page and not path.startswith(_NOT_PAGES):
        return _page(404)
    return await http_exception_handler(request, error)


@pages.api_route("/", methods=["GET", "HEAD"])
async def lobby_page() -> FileResponse:
    """The lobby: create a room."""
    return _page()


@pages.api_route("/r/{code}", methods=["GET", "HEAD"])
async def room_page(code: str) -> FileResponse:
    """A room's share link: pick a seat or watch, then the table."""
    return _page()


@pages.api_route("/docs", methods=["GET", "HEAD"])
async def docs_page() -> FileResponse:
    """The API reference: Swagger UI (vendored in static/vendor/swagger-ui) over /openapi.json."""
    return FileResponse(STATIC_DIR / "docs.html", headers={"Cache-Control": "no-cache"})


@pages.api_route("/manifest.webmanifest", methods=["GET", "HEAD"])
async def web_manifest() -> FileResponse:
    """The web app manifest (name, icons, start URL): a phone can put the site on its home screen
    and open it without the browser's bars."""
    return FileResponse(
        STATIC_DIR / "manifest.webmanifest",
        media_type="application/manifest+json",
        headers={"Cache-Control": "no-cache"},
    )


@pages.api_route("/rules", methods=["GET", "HEAD"])
async def rules_page() -> FileResponse:
    """The rules of Domeng and Kozel, with every term."""
    return _page()


_DOCUMENTS: Final = {"rules": "The rules of Domeng and Kozel", "record": "The match record format"}


def _document(document: str) -> FilePath:
    if document not in _DOCUMENTS:
        raise HTTPException(404, detail={"code": "not_found", "message": "no such document"})
    return DOCS_DIR / f"{document}.md"


@pages.get("/rules/{document}.md")
async def rules_document(document: str) -> FileResponse:
    """The rulebook (docs/rules.md, tagged D2…, K1…) and the match record format (docs/record.md)
    as Markdown, for tools and their authors; any other name is 404."""
    return FileResponse(
        _document(document),
        media_type="text/markdown; charset=utf-8",
        headers={"Cache-Control": "no-cache"},
    )


@pages.get("/rules/{document}")
async def rules_document_page(document: str) -> HTMLResponse:
    """The same documents as a page to read (linked from the rules page): the Markdown rendered
    by markdown-it-py (CommonMark with tables; raw HTML in the source is shown as text, never
    run), in the site's style; any other name is 404."""
    return HTMLResponse(_document_page(_document(document)))


@cache
def _document_page(path: FilePath) -> str:
    """A document's page, rendered once per process (about 5 ms for docs/rules.md, on the event
    loop): the documents are the repository's own and do not change while it runs."""
    return render_document(path.read_text(encoding="utf-8"), _DOCUMENTS[path.stem], served=_DOCUMENTS)


async def _count_read(request: Request) -> None:
    """Count one public read (`READ`) of the request's client address (an IPv6 client: its /64)
    against ``DOMENG_READ_LIMIT`` (with several processes, in Redis: spent through one, spent on
    all). Raises `RoomError` ``too_many_reads`` (429, ``Retry-After``) when it is spent. When the
    shared counters do not answer the read goes on: a lobby does not go down with Redis."""
    state = request.app.state
    message = "too many requests from this address; wait a little, then reload the page"
    with contextlib.suppress(LimitsUnavailableError):
        await _spend(
            state.limiter, state.read_limit, "read", _client_address(request), "too_many_reads", message
        )


Allowance = Literal["read", "write", "chat", "socket"]
"""What a client address's allowances count: public reads, room changes over HTTP, chat lines,
room sockets opened."""


async def spend_allowance(
    limiter: RateLimits,
    limit: RateLimitItem | Sequence[RateLimitItem],
    kind: Allowance,
    address: str | None,
) -> bool:
    """Count one ``kind`` of use of client ``address`` (`app.addresses.counted_address`; None: not
    known; an IPv6 client's /48 too, `_hit_all`) against ``limit`` (or against each of several,
    e.g. a minute's and an hour's, in order, stopping at the first without room; those before it
    keep the use counted), in this process's
    memory or, with several processes, in Redis (across every process): whether it had room. True,
    uncounted, when the shared counters (Redis) do not answer: the use goes on without them. The
    kinds counted this way:

    - ``"read"``: a public read, against ``DOMENG_READ_LIMIT`` (the allowance `READ` spends); a
      room socket's look-up of a room not in memory spends it too (`app.edge.endpoint.room_socket`);
    - ``"chat"``: a chat line, against ``DOMENG_CHAT_LIMIT``, across every room
      (`app.edge.endpoint.serve` refuses the line with ``chat_too_fast`` when it had no room);
    - ``"socket"``: a room socket opened, every room's, in memory or not, against
      ``DOMENG_SOCKET_LIMIT`` (`app.edge.endpoint.room_socket` closes it with 1008 when it had
      no room)."""
    try:
        for each in (limit,) if isinstance(limit, RateLimitItem) else limit:
            if await _hit_all(limiter, each, kind, address) is not None:
                return False
    except LimitsUnavailableError:
        return True
    return True


_Counted = Literal["read", "write", "chat", "socket", "create"]
"""What a client address's limits count: its allowances, and rooms created."""


def _key(kind: _Counted, address: str | None) -> str:
    """The identifier the ``kind`` of use of client ``address`` (an IPv4 address, an IPv6 /64 or
    /48) is counted under: ``"read-1.2.3.4"``."""
    return f"{kind}-{address or 'unknown'}"


async def _hit_all(
    limiter: RateLimits, limit: RateLimitItem, kind: _Counted, address: str | None
) -> tuple[RateLimitItem, str] | None:
    """Count one ``kind`` of use of client ``address`` against ``limit``, and for an IPv6 client
    against its /48's `app.addresses.SITE_SHARE` times ``limit`` too (`app.web.ratelimit.counted_limits`):
    None when each had room, else the first limit spent and the key it counts (the ones before it
    stay counted). Raises `LimitsUnavailableError` when the shared counters do not answer."""
    for each, key in counted_limits(limit, address or "unknown"):
        if not await limiter.hit(each, _key(kind, key)):
            return each, _key(kind, key)
    return None


async def _spend(
    limiter: RateLimits, limit: RateLimitItem, kind: _Counted, address: str | None, code: str, message: str
) -> None:
    """Count one ``kind`` of use of client ``address`` against ``limit`` (`_hit_all`: an IPv6
    client's /48 too). Raises `RoomError` ``code`` with ``message`` (429, with ``Retry-After``)
    when it is spent, and `LimitsUnavailableError` when the shared counters do not answer (the
    caller decides what that means)."""
    spent = await _hit_all(limiter, limit, kind, address)
    if spent is not None:
        retry = str(await limiter.retry_after_s(*spent))
        raise RoomError(code, message, 429, {"Retry-After": retry})


READ: Final = [Depends(_count_read)]
"""The dependencies of a public read that costs the server work (`_count_read`): counted before
anything else of the request is done, a room loaded or the store read."""


async def _count_write(request: Request) -> None:
    """Count one room change asked for over HTTP (`WRITE`) of the request's client address (an IPv6
    client: its /64) against ``DOMENG_WRITE_LIMIT`` (with several processes, in Redis). Raises
    `RoomError` ``too_many_writes`` (429, ``Retry-After``) when it is spent. When the shared
    counters do not answer the change goes on, as a read does."""
    state = request.app.state
    message = "too many changes asked from this address; wait a little, then try again"
    address = _client_address(request)
    with contextlib.suppress(LimitsUnavailableError):
        await _spend(state.limiter, state.write_limit, "write", address, "too_many_writes", message)


WRITE: Final = [Depends(_count_write)]
"""The dependencies of a room change over HTTP (a seat claimed or left, a host's command, Play
again): each is stored and sent to every socket of the room, so each is counted (`_count_write`)
before anything else of the request is done, a room loaded or a token checked."""


@rooms.post("/rooms", status_code=201)
async def create_room(body: RoomCreate, request: Request, hub: HubDep) -> RoomCreated:
    """Create a room; share ``url``, keep ``host_token`` for the host's commands."""
    state = request.app.state
    client = _client_address(request) or "unknown"
    limiter: RateLimits = state.limiter
    board: Board | None = state.board
    try:
        message = "too many rooms created from this address; try again soon"
        await _spend(limiter, state.create_limit, "create", client, "too_many_rooms", message)
        await _check_open_rooms(hub, board, client, state.settings.max_rooms_per_address)
    except ConnectionError:  # several processes, and their Redis does not answer
        raise ownership.unavailable("rooms cannot be created for a moment; try again") from None
    if not await hub.make_room():  # every room in memory is in use
        raise RoomError("server_full", "this server hosts as many rooms as it can; try again later", 503)
    room, host_token = await hub.create_room(
        body.variant, body.options, body.seats, body.turn_timer_s, body.bots, owner=client, hints=body.hints
    )
    if board is not None:
        await board.publish_now()  # the other processes count it against this address at once
    # The share link is absolute only with a configured public URL: never built from the Host header.
    base = (state.settings.public_url or "").rstrip("/")
    return RoomCreated(code=room.code, url=f"{base}/r/{room.code}", host_token=host_token)


async def _check_open_rooms(hub: Hub, board: Board | None, client: str, cap: int) -> None:
    """Raises `RoomError` ``too_many_open_rooms`` (429, ``Retry-After``) when ``client`` already
    has ``cap`` unfinished rooms (0: no cap), or its IPv6 /48 ``cap`` times
    `app.addresses.SITE_SHARE` (`app.addresses.counted_keys`), on every process; ConnectionError
    when the other processes' counts (Redis) do not answer."""
    if not cap:
        return
    for key, share in counted_keys(client):
        if (hub.open_rooms_of(key) if board is None else await board.rooms_of(key)) >= cap * share:
            whose = "this address" if share == 1 else "this address's network"
            message = f"{whose} already has {cap * share} open rooms; finish or leave one first"
            raise RoomError("too_many_open_rooms", message, 429, {"Retry-After": "60"})


@rooms.get("/room-defaults", dependencies=READ)
async def room_defaults(hub: HubDep) -> dict[str, Any]:
    """What a room created without them gets: ``{"turn_timer_s": 30.0}`` (seconds; 0: no timer),
    the server's ``DOMENG_TURN_TIMER_S``; the lobby's form starts from it."""
    return {"turn_timer_s": hub.config.turn_timer_s}


MY_TABLES_MAX: Final = 8
"""How many rooms one status read (`room_statuses`) asks about: the lobby lists this many."""

_CODES: Final = rf"^[A-Za-z0-9_-]{{1,64}}(?:,[A-Za-z0-9_-]{{1,64}}){{0,{MY_TABLES_MAX - 1}}}$"
"""1 to `MY_TABLES_MAX` room codes (token_urlsafe: letters, digits, ``-`` and ``_``), by commas."""


@rooms.get("/rooms/status", dependencies=READ)
async def room_statuses(
    hub: HubDep, codes: Annotated[str, Query(max_length=MY_TABLES_MAX * 65, pattern=_CODES)]
) -> dict[str, Any]:
    """The lobby's "Your tables": ``?codes=CODE,CODE`` (1 to 8 room codes) answered with
    ``{"rooms": {"CODE": {"code": "CODE", "match": 1, "variant": "domeng", "status": "playing",
    "seats": [{"seat": 0, "kind": "human", "name": "Ana", "bot_level": null}, …]}, "GONE":
    null}}``: each room's status (``waiting``, ``playing`` or ``finished``), game and seats, a part
    of what `get_room` tells anyone with the code, or null where `get_room` answers 404. A room
    not in memory is read from the store, not loaded (`app.rooms.hub.Hub.statuses`). 422 for more
    than 8 codes or one that is not a room code; 503 ``room_unavailable`` when the store cannot be
    read."""
    return {"rooms": await hub.statuses(list(dict.fromkeys(codes.split(","))))}


@rooms.get("/rooms/{code}", dependencies=READ)
async def get_room(room: RoomDep) -> dict[str, Any]:
    """The room as everyone may see it (RoomPublic)."""
    result: dict[str, Any] = await room.call(room_public)
    return result


def _client_address(request: Request) -> str | None:
    """The request's client as the per-address limits count it (`app.addresses.counted_address`:
    an IPv6 client by its /64); None when the server does not know it."""
    return counted_address(request.client.host) if request.client else None


@rooms.post("/rooms/{code}/seats/{seat}", status_code=201, dependencies=WRITE)
async def claim_seat(room: RoomDep, seat: SeatPath, body: ClaimCreate, request: Request) -> SeatClaimed:
    """Take a free seat (race-free: of two claims, exactly one wins; the other gets 409). A chat
    mute that holds the claimer (their spectator ``watcher`` key's, or their address's) comes
    with them to the seat."""
    address = _client_address(request)
    token: str = await room.call(lambda r: host_commands.claim(r, seat, body.name, address, body.watcher))
    return SeatClaimed(seat=seat, token=token)


@rooms.delete("/rooms/{code}/seats/{seat}", dependencies=WRITE)
async def leave_seat(room: RoomDep, seat: SeatPath, token: SeatToken) -> dict[str, Any]:
    """The seat's player (``Authorization: Bearer <seat token>``) leaves it before the start: it
    is empty again. 403 ``not_your_seat``, 409 ``already_started``."""

    async def run(r: Room) -> dict[str, Any]:
        await host_commands.leave(r, seat, token)
        return room_public(r)

    result: dict[str, Any] = await room.call(run)
    return result


@rooms.put("/rooms/{code}/seats/{seat}/bot", dependencies=WRITE)
async def set_bot(room: RoomDep, seat: SeatPath, body: BotSet, host: HostToken) -> dict[str, Any]:
    """Host only: put a bot of ``level`` in the seat (or empty it before the start); during the
    match this replaces an absent player with a bot."""

    async def run(r: Room) -> dict[str, Any]:
        host_commands.check_host(r, host)
        await host_commands.set_bot(r, seat, body.level)
        return room_public(r)

    result: dict[str, Any] = await room.call(run)
    return result


@rooms.put("/rooms/{code}/open", dependencies=WRITE)
async def set_open(request: Request, room: RoomDep, body: OpenSet, host: HostToken) -> dict[str, Any]:
    """Host only, before the start: list the room in the lobby's open tables (or take it off)."""

    async def run(r: Room) -> dict[str, Any]:
        host_commands.check_host(r, host)
        await host_commands.set_open(r, body.open)
        return room_public(r)

    result: dict[str, Any] = await room.call(run)
    board: Board | None = request.app.state.board
    if board is not None:
        await board.publish_now()  # the other processes' lobbies list it (or drop it) at once
    return result


@rooms.put("/rooms/{code}/options", dependencies=WRITE)
async def set_options(request: Request, room: RoomDep, body: OptionsSet, host: HostToken) -> dict[str, Any]:
    """The host (or the deputy while the host is away), before the start (a new room, or the next
    match after Play again): the match's options (the variant's, as at creation), its turn
    timer, hints and the table's number of seats (Kozel's 2 to 4). 409 ``already_started``,
    422 ``invalid_options`` or ``invalid_seats``, 409 ``seat_taken`` (a person sits past the new
    number of seats)."""

    async def run(r: Room) -> dict[str, Any]:
        host_commands.check_starter(r, host)
        await host_commands.set_options(r, body.options, body.turn_timer_s, body.hints, body.seats)
        return room_public(r)

    result: dict[str, Any] = await room.call(run)
    board: Board | None = request.app.state.board
    if board is not None and body.seats is not None:
        await board.publish_now()  # the other processes' lobbies count its free seats at once
    return result


@rooms.put("/rooms/{code}/stop", dependencies=WRITE)
async def stop_match(room: RoomDep, body: StopSet, host: HostToken) -> dict[str, Any]:
    """Host only (never the deputy): end a no-limit match (Domeng ``camat_target`` 0) when the round
    in play ends, at once between rounds (``{"stop": true}``), or take that back (``false``) while
    the round is played; ``RoomPublic.host_stop`` shows it. 403 ``not_host``, 409 ``not_stoppable``
    (the options end the match), 409 ``not_playing``."""

    async def run(r: Room) -> dict[str, Any]:
        host_commands.check_host(r, host)
        await host_commands.stop_match(r, body.stop)
        return room_public(r)

    result: dict[str, Any] = await room.call(run)
    return result


@rooms.get("/open-tables", dependencies=READ)
async def open_tables(request: Request, hub: HubDep) -> dict[str, Any]:
    """The rooms waiting for players that their hosts listed: ``{"tables": [...]}`` (see
    `app.rooms.hub.Hub.open_tables`), with several processes those of every process
    (`app.web.shared.Board`). Closed rooms (the default) are reachable only by link."""
    board: Board | None = request.app.state.board
    return {"tables": hub.open_tables() if board is None else await board.open_tables()}


@rooms.put("/rooms/{code}/chat", dependencies=WRITE)
async def set_chat_rules(room: RoomDep, body: ChatRulesSet, host: HostToken) -> dict[str, Any]:
    """Host only: let spectators write in the chat or not, mute or unmute seats (by their numbers,
    ``"0"`` to ``"4"``: anything else is 404 ``no_such_seat``, as a seat's path answers) and
    spectators (by their tags); returns the chat rules (``{"spectators": bool, "muted": [seat, …],
    "muted_spectators": [tag, …]}``, with ``"left": {tag: name}`` when a muted spectator is a
    muted seat's person who left it to another: `app.rooms.chat.ChatRoom.rules`)."""

    async def run(r: Room) -> dict[str, Any]:
        host_commands.check_host(r, host)
        muted = {seat_named(r.seats, key): on for key, on in body.muted.items()}
        return await chat.set_rules(r, body.spectators, muted, body.muted_spectators)

    result: dict[str, Any] = await room.call(run)
    return result


@rooms.delete("/rooms/{code}/spectators/{tag}", dependencies=WRITE)
async def remove_spectator(room: RoomDep, tag: str, host: HostToken) -> dict[str, int]:
    """Host only (never the deputy): remove the spectator whose chat lines carry ``tag``: its
    sockets close with 4006 and the reason, ``{"removed": 1}`` (how many closed). 403
    ``not_host``, 404 ``no_such_spectator`` (none of its sockets is open), 422 ``bad_spectator``."""

    async def run(r: Room) -> int:
        host_commands.check_host(r, host)
        return await host_commands.remove_spectator(r, tag)

    removed: int = await room.call(run)
    return {"removed": removed}


@rooms.post("/rooms/{code}/again", dependencies=WRITE)
async def play_again(room: RoomDep, token: SeatToken) -> dict[str, Any]:
    """Play again (``Authorization: Bearer <seat token or host token>``): at the match's end,
    start the room's next match with the same seats, waiting for the host's start, the asker
    ready; while it waits, mark the asker's seat ready. 403 ``again_refused``, 409 ``not_started``
    (the room's first match has not started: nothing to play again), 409 ``not_finished``."""

    async def run(r: Room) -> dict[str, Any]:
        await again.play_again(r, token)
        return room_public(r)

    result: dict[str, Any] = await room.call(run)
    return result


@rooms.post("/rooms/{code}/start", dependencies=WRITE)
async def start_match(room: RoomDep, host: HostToken) -> dict[str, Any]:
    """The host (or, while the host is away, the deputy seat's token: docs/protocol.md): fill empty
    seats with bots and deal the first round."""

    async def run(r: Room) -> dict[str, Any]:
        host_commands.check_starter(r, host)
        await host_commands.begin_match(r)
        return room_public(r)

    result: dict[str, Any] = await room.call(run)
    return result


@rooms.get("/rooms/{code}/rounds/{round_index}/review", dependencies=READ)
async def review_round(
    request: Request,
    room: RoomDep,
    round_index: Annotated[int, Path(ge=0, le=100_000)],
    token: SeatToken,
    reviews: ReviewsDep,
    hub: HubDep,
    match: Annotated[int | None, Query(ge=1, le=100_000)] = None,
) -> RoundReview:
    """The asker's review of an ended round of a match in this room (``Authorization: Bearer
    <seat token>``; ``round_index`` from 0, as in the record; ``match`` the match's number in the
    room, from 1, by default the one in the room now: an earlier one after Play again): every
    option of each of their decisions with a choice, costed from what their seat could see then
    (engine/review.py). Computed on demand in a worker process and cached; the same figures as
    ``domeng review``. 403 ``bad_token``; 404 ``no_such_match``; 409 ``not_started``,
    ``round_not_over``; 503 ``reviews_busy`` (Retry-After: many reviews in the works, or two of
    this client address's), ``review_timeout`` or
    ``room_unavailable`` (the store cannot be read now; Retry-After)."""
    found = await room.call(lambda r: reviewable(r, round_index, token, match))
    if found is None:  # an earlier match of the room: from the store (token and match are given)
        assert token is not None and match is not None
        found = await reviewable_earlier(hub.store, room.code, match, round_index, token)
    match_id, seat = found
    asker = _client_address(request) or "unknown"
    return RoundReview.model_validate(await run_review(reviews, match_id, round_index, seat, asker))


@rooms.get("/deals/verify", dependencies=READ)
async def verify_deal(
    seed: Annotated[str, Query(max_length=256)],
    commitment: Annotated[str, Query(max_length=256)],
    variant: Annotated[str, Query(max_length=16)] = "domeng",
    seats: int | None = None,
) -> dict[str, Any]:
    """Re-derive a round's deal from its revealed seed and check it against the commitment.
    422 ``invalid_seed`` for a seed the server cannot have made (64 lowercase hex digits,
    `app.rooms.seeds.check_deal_proof`), ``invalid_commitment`` for one that is not a SHA-256 (64 hex
    digits), ``invalid_variant``."""
    check_deal_proof(seed, commitment)
    try:
        rules = make_rules(variant, {}, seats)
    except ValueError as error:
        raise HTTPException(422, detail={"code": "invalid_variant", "message": str(error)}) from None
    deal = rules.deal_from_seed(seed)
    return {
        "matches": commitment_of(seed) == commitment.lower(),
        **deal_to_json(deal),
    }


@operations.get("/healthz")
async def healthz() -> dict[str, str]:
    """Liveness: the process answers."""
    return {"status": "ok"}


@operations.get("/readyz")
async def readyz(request: Request, hub: HubDep) -> Response:
    """Readiness: the database answers and the store's writer is running (one check at a time
    however many ask, `app.web.readiness.SharedCheck`)."""
    readiness: SharedCheck = request.app.state.readiness
    ok = await readiness()
    body = {"status": "ready" if ok else "not ready", "rooms": len(hub.rooms)}  # in memory
    return JSONResponse(body, status_code=200 if ok else 503)


@operations.get("/metrics")
async def metrics_endpoint(hub: HubDep) -> Response:
    """Prometheus metrics."""
    return Response(generate_latest(hub.metrics.registry), media_type=CONTENT_TYPE_LATEST)
