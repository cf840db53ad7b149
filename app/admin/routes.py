"""The admin area's HTTP routes: JSON under ``/api/admin/...`` and the pages under ``/admin``.

Every route but logging in and out requires an admin (`app.admin.auth.require_admin`): the
protected API router declares it once for all its routes, and each page checks it before it
serves anything. Without ``DOMENG_ADMIN_TOKEN`` every route answers 503 (pages: a short HTML page
saying so). Errors are ``{"detail": {"code": "...", "message": "..."}}``.
"""

from __future__ import annotations

import asyncio
import io
import json
import re
import zipfile
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from html import escape
from pathlib import Path as FilePath
from typing import Annotated, Final
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Path, Query, Request, Response
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse

from app.admin.auth import (
    COOKIE_NAME,
    DEVICE_COOKIE,
    DEVICE_TTL_S,
    AdminAuth,
    AdminDep,
    AdminError,
    admin_auth,
    check_origin,
    client_address,
    require_admin,
)
from app.admin.history import match_detail, round_replay
from app.admin.live import Peers, close_anywhere, live_everywhere
from app.admin.queries import MatchFilter, list_matches, list_players
from app.admin.schemas import (
    ChatLog,
    ChatLogLine,
    ChatRules,
    EffectiveStatus,
    HintUsed,
    LoginBody,
    LoginDone,
    MatchDetail,
    MatchPage,
    MatchSummary,
    PlayerPage,
    RoomClosed,
    RoomList,
    RoomMatchLink,
    RoundReplay,
    SessionInfo,
)
from app.bots.reviews import ReviewWorkers
from app.rooms.hub import Hub
from app.store import MatchRow, Store, record_of
from app.web.models import RoundReview
from app.web.reviews import run_review
from engine.errors import EngineError
from engine.variants import VARIANTS

__all__ = [
    "ADMIN_PAGE",
    "MAX_ROW_ID",
    "PAGE_HEADERS",
    "PageNumber",
    "admin_api",
    "admin_page",
    "admin_pages",
    "admin_public",
    "close_live_room",
    "export_match",
    "export_matches",
    "get_chat",
    "get_match",
    "get_replay",
    "get_review",
    "get_session",
    "install_admin",
    "list_live_rooms",
    "login",
    "login_page",
    "logout",
    "match_list",
    "player_list",
    "record_name",
]

PAGE_HEADERS = {"Cache-Control": "no-store"}
"""Headers of every admin page on top of the site's security headers (app.web.middleware.security_headers:
same-origin scripts and styles only, never framed): never cached."""


def _no_store(response: Response) -> None:
    response.headers["Cache-Control"] = "no-store"


admin_public = APIRouter(prefix="/api/admin", tags=["admin"], dependencies=[Depends(_no_store)])
"""Logging in and out: the only admin routes open without a session."""
admin_api = APIRouter(
    prefix="/api/admin",
    tags=["admin"],
    dependencies=[Depends(require_admin), Depends(_no_store)],
    responses={
        401: {"description": "not signed in (`not_authenticated`)"},
        429: {"description": "too many failed attempts from this address or its /48 (`too_many_attempts`)"},
        503: {"description": "admin disabled: DOMENG_ADMIN_TOKEN is not set (`admin_disabled`)"},
    },
)
admin_pages = APIRouter(include_in_schema=False)


def install_admin(app: FastAPI, auth: AdminAuth) -> None:
    """Add the admin area to ``app``: its routers, its error handler and ``app.state.admin``."""
    app.state.admin = auth
    app.add_exception_handler(AdminError, _admin_error)  # type: ignore[arg-type]
    app.include_router(admin_public)
    app.include_router(admin_api)
    app.include_router(admin_pages)


async def _admin_error(request: Request, error: AdminError) -> JSONResponse:
    return JSONResponse(
        {"detail": {"code": error.code, "message": error.message}},
        status_code=error.status,
        headers={"Cache-Control": "no-store", **error.headers},
    )


def _store(request: Request) -> Store:
    store: Store = request.app.state.store
    return store


def _hub(request: Request) -> Hub:
    hub: Hub = request.app.state.hub
    return hub


def _peers(request: Request) -> Peers | None:
    """The other server processes (several processes: docs/cluster.md), or None (one process)."""
    peers: Peers | None = getattr(request.app.state, "peers", None)
    return peers


def _cutoff(request: Request) -> datetime:
    return datetime.now(UTC) - timedelta(seconds=request.app.state.settings.abandoned_after_s)


def _cookie(response: Response, token: str, max_age: int, name: str = COOKIE_NAME) -> None:
    response.set_cookie(name, token, max_age=max_age, path="/", secure=True, httponly=True, samesite="strict")


# -- signing in and out -------------------------------------------------------------------------


@admin_public.post("/login")
async def login(body: LoginBody, request: Request, response: Response) -> LoginDone:
    """Sign in with the admin secret: sets the session cookie and a fresh device cookie (both
    Secure, HttpOnly, SameSite=Strict; the device cookie keeps this browser out of the limits on
    unknown clients, `app.admin.auth`).

    ``{"secret": "..."}`` → ``{"expires_at": "2026-12-01T18:00:00Z"}``. Errors: 401
    ``wrong_secret``, 429 ``too_many_attempts`` (failed logins of this device, or of this address
    or of all unknown clients), 403 ``cross_origin``, 503 ``admin_disabled``.
    """
    auth = admin_auth(request)
    auth.check_enabled()
    check_origin(request)
    done = await auth.login(body.secret, client_address(request), request.cookies.get(DEVICE_COOKIE))
    _cookie(response, done.token, int(auth.settings.admin_session_ttl_s))
    _cookie(response, done.device, DEVICE_TTL_S, DEVICE_COOKIE)
    return LoginDone(expires_at=datetime.fromtimestamp(done.expires_at, UTC))


@admin_public.post("/logout", status_code=204)
async def logout(request: Request) -> Response:
    """End this browser's session and clear its cookie (204, also when there was none)."""
    auth = admin_auth(request)
    auth.check_enabled()
    check_origin(request)
    await auth.logout(request.cookies.get(COOKIE_NAME))
    response = Response(status_code=204, headers={"Cache-Control": "no-store"})
    _cookie(response, "", 0)
    return response


@admin_api.get("/session")
async def get_session(session: AdminDep) -> SessionInfo:
    """Who is signed in, and until when (cookie sessions)."""
    expires = None if session.expires_at is None else datetime.fromtimestamp(session.expires_at, UTC)
    return SessionInfo(via="cookie" if session.via == "cookie" else "bearer", expires_at=expires)


# -- matches ------------------------------------------------------------------------------------


MAX_ROW_ID = 2**63 - 1
"""The largest id a stored row can have (SQLite's INTEGER, PostgreSQL's BIGINT): a larger one names
no match, and would not fit in the query."""
PageNumber = Annotated[int, Query(ge=1, le=1_000_000)]
"""A list's page, from 1 (a page past the last has no rows; past a million, 422)."""


def _filters(
    variant: Annotated[str | None, Query(max_length=16)] = None,
    status: EffectiveStatus | None = None,
    player: Annotated[str | None, Query(max_length=64)] = None,
    since: date | None = None,
    until: date | None = None,
    code: Annotated[str | None, Query(max_length=64)] = None,
) -> MatchFilter:
    """The match list's and the export's filters, from the query (`MatchFilter`, first page):
    ``variant``, effective ``status`` (waiting, playing, finished, abandoned: docs/admin.md),
    ``player`` (part of a name, of a person a bot replaced, or a bot level), creation dates
    ``since``/``until`` (UTC, inclusive) and the room's ``code`` (exact: each of its matches, Play
    again's too). HTTPException 422 ``unknown_variant`` for a variant this server does not know;
    an unknown ``status`` is a 422 listing the statuses."""
    if variant is not None and variant not in VARIANTS:
        known = ", ".join(sorted(VARIANTS))
        raise HTTPException(
            422, detail={"code": "unknown_variant", "message": f"unknown variant: the variants are {known}"}
        )
    return MatchFilter(variant, status, player, since, until, code=code)


_Filters = Annotated[MatchFilter, Depends(_filters)]


@admin_api.get("/matches")
async def match_list(
    request: Request,
    filters: _Filters,
    page: PageNumber = 1,
    per_page: Annotated[int, Query(ge=1, le=200)] = 50,
) -> MatchPage:
    """Stored matches that pass the ``filters`` (`_filters`), newest first; ``page`` from 1 (past
    the last page: no items, with ``total`` to find it). 422 as `_filters` says."""
    f = replace(filters, page=page, per_page=per_page)
    live = {room.match_id for room in _hub(request).rooms.values()}
    listed = await list_matches(_store(request), f, _cutoff(request), live)
    await _fill_hosted(request, listed.items)
    listed.export_limit = request.app.state.settings.admin_export_limit
    return listed


async def _fill_hosted(request: Request, items: Sequence[MatchSummary]) -> None:
    """Set ``hosted`` of each waiting or playing match of ``items``: a room of this process holds
    it, or (several processes) some process holds its room's lease; None for the rest, and when
    Redis does not answer."""
    hub, peers = _hub(request), _peers(request)
    asked: dict[str, bool | None] = {}
    for item in items:
        if item.status not in ("waiting", "playing"):
            continue
        room = hub.rooms.get(item.code)
        if room is not None:
            item.hosted = room.match_id == item.id
        elif peers is None:
            item.hosted = False
        else:
            if item.code not in asked:
                try:
                    asked[item.code] = await peers.holder_of(item.code) is not None
                except ConnectionError:
                    asked[item.code] = None
            item.hosted = asked[item.code]


async def _match(request: Request, match_id: int) -> MatchRow:
    """The stored match ``match_id``; 404 ``no_such_match`` when there is none (any id out of the
    range a row id can have included)."""
    row = await _store(request).load_match_by_id(match_id) if 1 <= match_id <= MAX_ROW_ID else None
    if row is None:
        raise HTTPException(404, detail={"code": "no_such_match", "message": f"no match {match_id}"})
    return row


@admin_api.get("/matches/{match_id}")
async def get_match(request: Request, match_id: int) -> MatchDetail:
    """A match in full: seats and options, every round's deal, outcome and stone (or point)
    transfers, and the chart of each seat's stones (points) after each round, and every match of
    its room in order (``room_matches``: Play again). 404 ``no_such_match``."""
    row = await _match(request, match_id)
    room = _hub(request).rooms.get(row.code)
    siblings = await _store(request).room_matches(row.code)
    detail = match_detail(row, _cutoff(request), room is not None and room.match_id == row.id)
    detail.room_matches = [RoomMatchLink(id=m.id, number=m.number, status=m.status) for m in siblings]
    detail.hints = row.hints
    detail.hints_used = [HintUsed(**h.to_json()) for h in await _store(request).load_hints(row.id)]
    await _fill_hosted(request, [detail])
    return detail


@admin_api.get("/matches/{match_id}/chat")
async def get_chat(request: Request, match_id: int) -> ChatLog:
    """The match's chat, every line in order (``{"rules": {...}, "lines": [...]}``, each line as
    docs/protocol.md's ``chat`` message has it: seat, name, text or reaction, round and ``seq``,
    the actions stored in that round before it): what people said, beside the play, for reports
    of abuse. 404 ``no_such_match``."""
    await _match(request, match_id)
    rules, lines = await _store(request).load_chat(match_id)
    return ChatLog(
        rules=ChatRules(**(rules or {"spectators": False, "muted": []})),
        lines=[ChatLogLine(**line.to_json()) for line in lines],
    )


@admin_api.get("/matches/{match_id}/rounds/{index}/replay")
async def get_replay(request: Request, match_id: int, index: int) -> RoundReplay:
    """Round ``index`` (from 0) step by step, every hand visible, rebuilt by the engine from the
    stored deal and actions. 404 ``no_such_match`` or ``no_such_round``; 409 ``replay_failed``
    when the engine cannot replay it (a variant this server does not know, a damaged store)."""
    row = await _match(request, match_id)
    try:
        return round_replay(row, index)
    except LookupError as error:
        raise HTTPException(404, detail={"code": "no_such_round", "message": str(error)}) from None
    except (EngineError, ValueError) as error:  # a variant this server lacks, or a damaged store
        raise HTTPException(409, detail={"code": "replay_failed", "message": str(error)}) from None


@admin_api.get("/matches/{match_id}/rounds/{index}/review")
async def get_review(
    request: Request,
    match_id: int,
    index: Annotated[int, Path(ge=0, le=100_000)],
    seat: Annotated[int, Query(ge=0, le=4)],
) -> RoundReview:
    """The review of ``seat``'s decisions in round ``index`` (from 0) of a stored match, the same
    one the player sees (engine/review.py: every option costed from what the seat could see then).
    404 ``no_such_match``; 409 ``unfinished_round``, ``invalid_round``, ``invalid_seat``; 503
    ``reviews_busy`` (Retry-After), ``review_timeout``."""
    row = await _match(request, match_id)
    reviews: ReviewWorkers = request.app.state.reviews
    return RoundReview.model_validate(await run_review(reviews, row.id, index, seat))


@admin_api.get(
    "/matches/{match_id}/record",
    response_class=JSONResponse,
    responses={200: {"description": "RECORD.md's `domeng-record/1` document, as a download"}},
)
async def export_match(request: Request, match_id: int) -> Response:
    """The match as a RECORD.md document (``Content-Disposition: attachment``): ``domeng replay
    FILE --json`` on it reproduces every stored round result. 404 ``no_such_match``."""
    row = await _match(request, match_id)
    body = json.dumps(record_of(row), indent=1, ensure_ascii=False)
    return Response(
        body,
        media_type="application/json",
        headers={
            "Content-Disposition": f'attachment; filename="{record_name(row)}"',
            "Cache-Control": "no-store",
        },
    )


def _write_record(archive: zipfile.ZipFile, name: str, row: MatchRow) -> None:
    """Write match ``row``'s RECORD.md document into ``archive`` as ``name`` (in a thread)."""
    archive.writestr(name, json.dumps(record_of(row), indent=1, ensure_ascii=False))


def record_name(row: MatchRow) -> str:
    """The file name of match ``row``'s record: its creation day (UTC), room code, number in
    the room and id, ``domeng-2026-12-05-ABC123-match2-id417.json``: unique (the id), and sorted
    by day, then room, then match. A code's characters other than letters, digits, ``-`` and
    ``_`` become ``_``."""
    code = re.sub(r"[^A-Za-z0-9_-]", "_", row.code)[:64] or "_"
    return f"domeng-{row.created_at:%Y-%m-%d}-{code}-match{row.room_match}-id{row.id}.json"


@admin_api.get(
    "/export",
    response_class=Response,
    responses={
        200: {
            "description": "a zip of RECORD.md `domeng-record/1` documents, one file per match",
            "content": {"application/zip": {}},
        },
        422: {"description": "more than DOMENG_ADMIN_EXPORT_LIMIT match the filters (`too_many_matches`)"},
    },
)
async def export_matches(request: Request, filters: _Filters) -> Response:
    """Every match that passes the match list's filters (same parameters, no page), as a zip
    download (``domeng-matches-<UTC time>.zip``): one RECORD.md document per match, named as the
    single export names it (`record_name`), each replayable by ``domeng replay FILE``, and
    ``index.jsonl``: one line per match, newest first (``file``, ``id``, ``code``,
    ``room_match``, ``variant``, ``status``, ``stored_status``, ``hosted``, ``created_at``,
    ``last_active_at``, ``rounds``; ``hosted`` as the match list's: true, false, or null for a
    match neither waiting nor playing, or when Redis does not answer). 422 ``unknown_variant``,
    or ``too_many_matches`` when more than ``DOMENG_ADMIN_EXPORT_LIMIT`` (1000) pass (narrow the
    filters)."""
    limit = request.app.state.settings.admin_export_limit
    f = replace(filters, per_page=limit)
    listed = await list_matches(_store(request), f, _cutoff(request), set())
    if listed.total > limit:
        message = f"{listed.total} matches pass these filters, at most {limit} export at once: narrow them"
        raise HTTPException(422, detail={"code": "too_many_matches", "message": message})
    await _fill_hosted(request, listed.items)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        index = []
        for item in listed.items:
            row = await _store(request).load_match_by_id(item.id)
            if row is None:  # deleted meanwhile (an unplayed match past DOMENG_UNPLAYED_KEPT_S)
                continue
            name = record_name(row)
            # building, dumping and compressing a record takes CPU: in a thread, so that the
            # rooms' event loop goes on between (and, by the interpreter's switch interval, during)
            await asyncio.to_thread(_write_record, archive, name, row)
            entry = {"file": name, "id": row.id, "code": row.code, "room_match": row.room_match}
            entry |= {"variant": row.variant, "status": item.status, "stored_status": row.status}
            entry |= {"hosted": item.hosted}
            entry |= {
                "created_at": item.created_at.isoformat(),
                "last_active_at": item.last_active_at.isoformat(),
            }
            index.append(json.dumps({**entry, "rounds": len(row.rounds)}, ensure_ascii=False))
        archive.writestr("index.jsonl", "".join(f"{line}\n" for line in index))
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H%M%SZ")
    return Response(
        buffer.getvalue(),
        media_type="application/zip",
        headers={
            "Content-Disposition": f'attachment; filename="domeng-matches-{stamp}.zip"',
            "Cache-Control": "no-store",
        },
    )


# -- players and rooms --------------------------------------------------------------------------


@admin_api.get("/players")
async def player_list(
    request: Request,
    name: Annotated[str | None, Query(max_length=64)] = None,
    page: PageNumber = 1,
    per_page: Annotated[int, Query(ge=1, le=200)] = 50,
) -> PlayerPage:
    """Every display name (and bot level) with its totals: matches, rounds, stones received and
    paid, camat elections, Kozel points and goats; most matches first."""
    return await list_players(_store(request), name, page, per_page)


@admin_api.get("/rooms")
async def list_live_rooms(request: Request) -> RoomList:
    """The rooms open now: match, status, phase, turn and connections; with several processes,
    those of every process that answered (each room names its ``process``; ``unanswered``
    lists the processes that did not answer in time)."""
    return await live_everywhere(_hub(request), _peers(request))


@admin_api.post("/rooms/{code}/close")
async def close_live_room(request: Request, code: str) -> RoomClosed:
    """Close a room: its sockets close with 4003, its task stops, the match is stored as
    ``abandoned`` (unless finished); everything stored stays exportable. 404 ``no_such_room``.
    With several processes the room is closed by the process hosting it; 503 ``room_elsewhere``
    (naming that process) when it did not answer."""
    closed = await close_anywhere(_hub(request), _peers(request), code)
    if closed is None:
        raise HTTPException(404, detail={"code": "no_such_room", "message": "no open room with this code"})
    return closed


# -- pages ----------------------------------------------------------------------------------------

ADMIN_PAGE = "admin.html"
"""The admin client's page in static/: one page, its script picks the view from the address."""
_STATIC_DIR = FilePath(__file__).resolve().parents[2] / "static"


def _message_page(title: str, text: str, status: int) -> HTMLResponse:
    body = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title></head><body><main><h1>{escape(title)}</h1>"
        f'<p class="admin-message">{escape(text)}</p></main></body></html>'
    )
    return HTMLResponse(body, status_code=status, headers=PAGE_HEADERS)


def _page_file(request: Request) -> Response:
    return FileResponse(_STATIC_DIR / ADMIN_PAGE, headers=PAGE_HEADERS)


_ASKED_PAGE: Final = re.compile(r"/admin(/(matches(/\d{1,18})?|players|rooms))?", re.ASCII)
"""The admin pages a sign-in may lead back to (`_asked_page`): the area's own paths, nothing else
(never a query: one may carry a token or a secret, which the form's address must not repeat)."""


def _asked_page(target: str | None) -> str | None:
    """``target`` (the sign-in form's ``?next=``, already URL-decoded) when it names an admin page
    (`_ASKED_PAGE`: a path of this site, never another site's address or ``//host``), else None."""
    if target is None or _ASKED_PAGE.fullmatch(target) is None:
        return None
    return target


def _login_for(request: Request) -> str:
    """The sign-in form's address for a visitor who asked for ``request``'s admin page: with
    ``?next=`` naming that page's path (never its query) so signing in leads back to it; plain for
    ``/admin`` itself, which leads to the matches anyway."""
    asked = request.url.path
    if asked == "/admin" or _asked_page(asked) is None:
        return "/admin/login"
    return f"/admin/login?{urlencode({'next': asked})}"


@admin_pages.get("/admin/login")
async def login_page(request: Request) -> Response:
    """The sign-in form (or the "admin disabled" page); an admin already signed in (a live session
    cookie) goes to the admin area instead (303 to /admin/matches, where signing in leads). When
    the shared sessions do not answer, the form (signing in then says why)."""
    auth = admin_auth(request)
    if not auth.enabled:
        return _message_page("Domeng Online admin", "admin disabled: set DOMENG_ADMIN_TOKEN", 503)
    try:
        signed_in = await auth.session_of(request.cookies.get(COOKIE_NAME)) is not None
    except AdminError:
        signed_in = False
    if signed_in:
        target = _asked_page(request.query_params.get("next")) or "/admin/matches"
        return RedirectResponse(target, status_code=303, headers=PAGE_HEADERS)
    return _page_file(request)


@admin_pages.get("/admin")
@admin_pages.get("/admin/matches")
@admin_pages.get("/admin/matches/{match_id}")
@admin_pages.get("/admin/players")
@admin_pages.get("/admin/rooms")
async def admin_page(request: Request) -> Response:
    """An admin page: served to a signed-in admin; others go to the sign-in form (303)."""
    try:
        await admin_auth(request).authenticate(request)
    except AdminError as error:
        if error.code == "not_authenticated":
            return RedirectResponse(_login_for(request), status_code=303, headers=PAGE_HEADERS)
        return _message_page("Domeng Online admin", error.message, error.status)
    return _page_file(request)
