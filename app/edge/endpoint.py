"""The room WebSocket endpoint: ``hello`` first, then actions (docs/protocol.md). Each frame is
parsed once here, into a protocol message and an action into an engine action; the room gets only
those, and closes connections by reason (`app.edge.closes` maps reasons to close codes)."""

from __future__ import annotations

import asyncio
import weakref
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine
from functools import partial
from typing import Any
from urllib.parse import urlsplit

from fastapi import APIRouter, WebSocket
from fastapi.responses import JSONResponse
from starlette.websockets import WebSocketDisconnect

from app.addresses import count_within, counted_address, counted_keys
from app.edge.closes import close_for
from app.edge.connection import Connection, MessageBudget
from app.edge.handoff import Handoff
from app.edge.heard import silent_s
from app.edge.protocol import (
    CLOSE_BAD_TOKEN,
    CLOSE_FULL,
    CLOSE_INVALID,
    CLOSE_POLICY,
    CLOSE_ROOM_CLOSED,
    CLOSE_TRY_AGAIN,
    CLOSE_UNSUPPORTED,
    ActionMessage,
    AnyClientMessage,
    BackMessage,
    ChatMessage,
    HelloMessage,
    HintMessage,
    KeepWatchingMessage,
    NameMessage,
    PingMessage,
    ProtocolError,
    SyncMessage,
    parse_client_message,
    to_engine_action,
)
from app.edge.remote import RelayPort, relay_socket
from app.rooms import chat, hints, unattended
from app.rooms.errors import RoomError
from app.rooms.hub import Hub
from app.rooms.ports import Outbox
from app.rooms.room import Room
from app.store import StoreError
from engine.actions import Action
from engine.errors import EngineError

__all__ = [
    "CHAT_ADDRESS_BURST",
    "CHAT_BURST",
    "CHAT_PER_S",
    "HINT_BURST",
    "HINT_PER_S",
    "KEEP_WATCHING_ADDRESS_BURST",
    "KEEP_WATCHING_BURST",
    "KEEP_WATCHING_PER_S",
    "LOOKUPS_SPENT",
    "NAME_ADDRESS_BURST",
    "NAME_BURST",
    "NAME_PER_S",
    "ChatLines",
    "Lookups",
    "SocketCounter",
    "SocketOpens",
    "is_foreign_origin",
    "join_room",
    "room_socket",
    "serve",
    "sockets",
]

sockets = APIRouter()


class SocketCounter:
    """Open room sockets per client address, at most ``limit`` each (0: no limit), and per IPv6
    /48, at most `app.addresses.SITE_SHARE` times ``limit`` for all its /64s together."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._open: Counter[str] = Counter()

    def admit(self, address: str) -> bool:
        """Count one more open socket from client ``address`` (`app.addresses.counted_address`);
        False (and not counted) when the address, or its IPv6 /48, already holds its cap of them
        (`app.addresses.counted_keys`). Pair with `release`."""
        return count_within(self._open, address, self.limit)

    def release(self, address: str) -> None:
        """A socket counted by `admit` has closed."""
        for key, _share in counted_keys(address):
            self._open[key] -= 1
            if self._open[key] <= 0:
                del self._open[key]


def is_foreign_origin(origin: str | None, host: str | None, public_url: str | None) -> bool:
    """Whether a handshake's ``Origin`` header names a page of another site than this server: its
    host and port are neither the request's ``Host`` nor ``DOMENG_PUBLIC_URL``'s. A client that
    sends no ``Origin`` (not a browser) is not foreign; the scheme is not compared (a TLS proxy
    that does not say so leaves the server seeing http).

    >>> is_foreign_origin("http://evil.example", "127.0.0.1:8000", None)
    True
    >>> is_foreign_origin("https://Play.example", "play.example", None)
    False
    """
    if origin is None:
        return False
    ours = {(host or "").lower()}
    if public_url:
        ours.add(urlsplit(public_url).netloc.lower())
    return urlsplit(origin).netloc.lower() not in ours


@sockets.websocket("/ws/rooms/{code}")
async def room_socket(websocket: WebSocket, code: str) -> None:
    """The room's WebSocket (docs/protocol.md): ``hello`` first, then actions. One client address
    (an IPv6 client: its /64, `app.addresses`) holds at most ``max_sockets_per_address`` of them at
    once, an IPv6 /48 `app.addresses.SITE_SHARE` times that (1008 past that, checked before the room
    is looked up: a refused socket brings no room into memory from the store). A room another server
    process hosts (docs/cluster.md) is first asked of it (`app.edge.handoff`), and served through
    that process (`app.edge.remote`, the relay) if it keeps it; when it does not answer, the socket
    closes with 1013 and the client tries again. When this process cannot serve the room at all now
    (``room_unavailable``: its leases or its database cannot be reached), the handshake itself is
    refused with HTTP 503 and ``Retry-After``, so that a proxy in front (deploy/nginx.conf,
    ``proxy_next_upstream http_503``) tries another process. A browser's handshake from another
    site's page (`is_foreign_origin`) is refused with HTTP 403 before it counts: no page elsewhere
    spends its visitors' sockets here. A socket for a room not in this process's memory (each is
    looked up in the store) spends one of its address's public reads (``DOMENG_READ_LIMIT``,
    `_may_look_up`): past them it closes with 1008 and `LOOKUPS_SPENT` before anything is looked up;
    a room in memory is opened without spending a read. Every socket, whatever its room, spends one
    of its address's socket opens (``DOMENG_SOCKET_LIMIT``, ``socket_opens``), before its room is
    looked up: past them it closes the same way, so no client reopens a seat's socket (each hello
    tells every socket of the room who came) hundreds of times a second."""
    state = websocket.app.state
    headers = websocket.headers
    if is_foreign_origin(headers.get("origin"), headers.get("host"), state.settings.public_url):
        await websocket.close(CLOSE_POLICY)  # before accept: the handshake is answered 403
        return
    counter: SocketCounter = state.sockets
    address = counted_address(websocket.client.host) if websocket.client else ""  # an IPv6 /64 is one
    if not counter.admit(address):  # before the room is looked up: a refused socket loads nothing
        await _refuse_policy(websocket, "too many connections from this address")
        return
    try:
        opens: SocketOpens = state.socket_opens
        if not await opens(address) or not await _may_look_up(websocket, code, address):
            await _refuse_policy(websocket, LOOKUPS_SPENT)
            return
        await _open_room(websocket, code, address)
    finally:
        counter.release(address)


Lookups = Callable[[str], Awaitable[bool]]
"""Spends one look-up of a room not in memory of a client address: whether it had room (the app's
``lookups``: `app.web.routes.spend_allowance` of ``"read"``, the public reads' allowance,
``DOMENG_READ_LIMIT``)."""

SocketOpens = Callable[[str], Awaitable[bool]]
"""Spends one room socket opened by a client address, any room's: whether it had room (the app's
``socket_opens``: `app.web.routes.spend_allowance`, ``DOMENG_SOCKET_LIMIT``)."""

ChatLines = Callable[[str], Awaitable[bool]]
"""Spends one chat line of a client address across every room: whether it had room (the app's
``chat_lines``: `app.web.routes.spend_allowance` of ``"chat"``, ``DOMENG_CHAT_LIMIT``)."""

LOOKUPS_SPENT = "too many requests from this address; wait a little"
"""The reason of a socket closed (1008) because its address spent its look-ups or its socket
opens (`room_socket`)."""


async def _may_look_up(websocket: WebSocket, code: str, address: str) -> bool:
    """Whether a socket of client ``address`` may open room ``code``: always when the room is in
    this process's memory (play, reconnects: nothing is looked up, nothing counted); else it
    spends one of the address's public reads (``lookups``), as the room's HTTP read does: each
    such open costs a database look-up (with several processes, a lease's too), and ~170 made-up
    codes a second from one address slowed another table's moves 3.5 times."""
    state = websocket.app.state
    if state.hub.get(code) is not None:
        return True
    lookups: Lookups = state.lookups
    return await lookups(address)


async def _refuse_policy(websocket: WebSocket, reason: str) -> None:
    """Accept the socket and close it at once with 1008 and ``reason`` (counted as rejected); the
    client tries again after its backoff."""
    websocket.app.state.hub.metrics.rejected.labels(str(CLOSE_POLICY)).inc()
    await websocket.accept()
    await websocket.close(CLOSE_POLICY, reason)


async def _open_room(websocket: WebSocket, code: str, address: str) -> None:
    """`room_socket` once the socket counts against its client ``address``'s cap: the room
    loaded (or handed over, or relayed), then the connection served until it closes."""
    state = websocket.app.state
    hub: Hub = state.hub
    handoff: Handoff = state.handoff
    relay: RelayPort | None = state.relay
    relayed = False
    try:
        found = await handoff.open(code)  # from the store when it is not in memory, or handed over
    except RoomError as error:  # hosted by another process, or its ownership unknown now
        if relay is None or error.code != "room_elsewhere":
            await _refuse(websocket, error)
            return
        found, relayed = None, True
    await websocket.accept()
    if found is None and not relayed:
        await websocket.close(CLOSE_ROOM_CLOSED, "no room with this code")
        return
    if found is not None:  # from now on the room stays here (no handoff) while this socket is open
        handoff.arrived(code)
    settings = state.settings
    conn = Connection(websocket, settings.send_queue_size)
    limit = state.limit
    budget = MessageBudget(limit.amount, limit.get_expiry())
    room: Room | None = None

    async def join(hello: HelloMessage) -> Room:
        nonlocal room
        room = await join_room(hub, code, conn, hello, address)
        return room

    async def talk() -> None:
        if relayed and relay is not None:
            await relay_socket(
                relay,
                code,
                conn,
                lambda: _next_text(websocket, budget),
                settings.hello_timeout_s,
                lambda: silent_s(websocket.scope),  # the owner counts its grace from the client's last word
                address,  # the owner's chat limits and mutes count the client by it, as here
            )
        else:
            chat_lines: ChatLines = state.chat_lines
            await serve(
                lambda: _next_message(websocket, budget),
                join,
                conn,
                conn.start,
                settings.hello_timeout_s,
                partial(chat_lines, address),
            )

    try:
        # The client's messages are read in a task of their own (`_reader`): each one it waits
        # for resumes that task alone, not the 30-odd frames of the ASGI stack above this one.
        await _reader(talk(), conn.id)
    except ProtocolError as violation:
        hub.metrics.rejected.labels(str(violation.close_code)).inc()
        conn.close_with(violation.close_code, violation.reason)
    except (WebSocketDisconnect, TimeoutError):
        pass
    finally:
        if found is not None:
            handoff.left(code)
        if room is not None:  # its grace counts from the client's last word (`app.edge.heard`)
            room.disconnect(conn, silent_s(websocket.scope))
        await conn.flush(timeout_s=0.5)  # a queued close frame goes out before the handler returns
        await conn.stop()


def _reader(talk: Coroutine[Any, Any, None], conn_id: int) -> asyncio.Task[None]:
    """``talk`` (a connection's reading of its messages, `serve` or `relay_socket`) run in a task
    of its own, to be awaited by the socket's handler: each message the client sends resumes only
    that task's few frames, where the handler's own task would go through every ASGI middleware,
    FastAPI's and Starlette's routing and exception layers (about 30 frames) at each message.
    Awaiting it gives the same result: its exception is raised in the handler, and cancelling
    the handler cancels it."""
    return asyncio.create_task(talk, name=f"conn-{conn_id}-reader")


async def _refuse(websocket: WebSocket, error: RoomError) -> None:
    """Refuse a socket whose room this process cannot serve now; the client tries again. A 503
    (``room_unavailable``, ``server_full``) refuses the handshake itself with HTTP 503 and
    ``Retry-After`` where the server can answer a handshake so (ASGI's ``websocket.http.response``):
    a proxy then tries another process. Otherwise the socket is accepted and closed with 1013."""
    if error.status == 503 and "websocket.http.response" in websocket.scope.get("extensions", {}):
        headers = {"Retry-After": "1", **(error.headers or {})}
        body = {"detail": {"code": error.code, "message": error.message}}
        await websocket.send_denial_response(JSONResponse(body, status_code=error.status, headers=headers))
        return
    await websocket.accept()
    await websocket.close(CLOSE_TRY_AGAIN, error.message)


async def join_room(
    hub: Hub, code: str, conn: Outbox, hello: HelloMessage, address: str | None = None
) -> Room:
    """Admit ``conn`` to room ``code`` on this process with its ``hello``, from client ``address``
    (`app.addresses.counted_address`; None: not known): `app.rooms.room.Room.connect`; the room.
    Raises `ProtocolError`: 1013 when the room is (now) hosted by another process or cannot be
    reached, 4003 when there is no such room, 4004 for a bad token, 4007 for the token of a seat
    the host gave to a bot (its person away then), 4001 for a ``resume`` of a
    seat another connection said hello for since and still holds, 4006 for a spectator the host
    removed (`app.rooms.chat.refuse_removed`), 4008 for a spectator past the room's
    ``DOMENG_MAX_SPECTATORS`` (``spectators_full``), 1008 for the room's other refusals."""
    for _ in range(3):  # the room may have been unloaded while the hello was awaited
        try:
            room = await hub.open(code)
        except RoomError as error:  # it moved to another process meanwhile
            raise ProtocolError(CLOSE_TRY_AGAIN, error.message) from None
        if room is None:
            raise ProtocolError(CLOSE_ROOM_CLOSED, "no room with this code")
        try:
            await room.connect(
                conn, hello.token, hello.since, hello.host, hello.watcher, address, hello.resume
            )
            return room
        except RoomError as error:
            if error.code == "replaced":  # an automatic reconnect, after another window took the seat
                raise ProtocolError(*close_for("replaced")) from None
            if error.code == "spectator_removed":  # the host removed this spectator from the room
                raise ProtocolError(*close_for("spectator_removed")) from None
            if error.code == "seat_to_bot":  # a token whose seat the host gave to a bot meanwhile
                raise ProtocolError(*close_for("seat_to_bot")) from None
            if error.code == "spectators_full":  # its own code: the page says why it waits
                raise ProtocolError(CLOSE_FULL, error.message) from None
            if error.code != "room_reloading":
                close_code = CLOSE_BAD_TOKEN if error.code == "bad_token" else CLOSE_POLICY
                raise ProtocolError(close_code, error.message) from None
    raise ProtocolError(CLOSE_POLICY, "the room could not be opened; try again")


async def serve(
    next_message: Callable[[], Awaitable[AnyClientMessage]],
    join: Callable[[HelloMessage], Awaitable[Room]],
    conn: Outbox,
    start: Callable[[], None],
    wait_s: float,
    chat_lines: Callable[[], Awaitable[bool]] | None = None,
) -> None:
    """Serve one client connection of a room, a local socket's or a relayed one's
    (`app.edge.remote`): its ``hello`` (within ``wait_s`` seconds; ``start`` is then called),
    ``join`` (the room admits ``conn``), then every message ``next_message`` parses, until it
    raises (`ProtocolError`, `WebSocketDisconnect`, ...). ``chat_lines`` spends one chat line of
    the client's address across every room (`ChatLines`; None: no such allowance): a line the
    room's own allowances let through is refused (``chat_too_fast``) when it says no."""
    try:
        async with asyncio.timeout(wait_s):  # not wait_for: on 3.11 it can swallow a cancel
            hello = await next_message()
    except TimeoutError:
        raise ProtocolError(CLOSE_POLICY, f"no hello within {wait_s:g} s") from None
    if not isinstance(hello, HelloMessage):
        raise ProtocolError(CLOSE_POLICY, "the first message must be hello")
    start()
    room = await join(hello)
    try:
        await room.call(lambda r: chat.send_log(r, conn))
    except RoomError as error:  # unloaded, closed or moved just after it admitted the connection
        raise ProtocolError(CLOSE_TRY_AGAIN, error.message) from None
    chat_budgets = _chat_budgets(room, conn)
    name_budgets = _name_budgets(room, conn)
    watching_budgets = _shared_budgets(
        _WATCHING_BUDGETS, room, conn, KEEP_WATCHING_BURST, KEEP_WATCHING_ADDRESS_BURST, KEEP_WATCHING_PER_S
    )
    hint_budget = _seat_budget(_HINT_BUDGETS, room, conn.seat, HINT_BURST, HINT_PER_S)
    while True:
        message = await next_message()
        if isinstance(message, ActionMessage):
            room.act(conn, message.version, _action_of(conn, message))
        elif isinstance(message, SyncMessage):
            room.sync(conn)
        elif isinstance(message, BackMessage):
            room.back(conn)
        elif isinstance(message, PingMessage):
            conn.send('{"type":"pong"}')
        elif isinstance(message, ChatMessage):
            await _chat(room, conn, message, chat_budgets, chat_lines)
        elif isinstance(message, HintMessage):
            await _hint(room, conn, hint_budget)
        elif isinstance(message, NameMessage):
            await _name(room, conn, message.name, name_budgets)
        elif isinstance(message, KeepWatchingMessage):
            await _keep_watching(room, conn, watching_budgets)
        else:
            raise ProtocolError(CLOSE_INVALID, "hello was already received")


_Budgets = weakref.WeakKeyDictionary[Room, dict[int | str, MessageBudget]]

_CHAT_BUDGETS: _Budgets = weakref.WeakKeyDictionary()
_HINT_BUDGETS: _Budgets = weakref.WeakKeyDictionary()
_NAME_BUDGETS: _Budgets = weakref.WeakKeyDictionary()
_WATCHING_BUDGETS: _Budgets = weakref.WeakKeyDictionary()
"""A room's chat, hint, name and keep-watching allowances by seat (an int), spectator
(``"tag:3fa9c1d2"``) and client address (``"client:…"``, the room's hash of it), kept while the
room is in memory."""

_KEPT_BUDGETS = 256
"""Allowances of spectators and addresses a room keeps before it forgets those refilled (a full
allowance is what a new one would be)."""


def _budget(budgets: _Budgets, room: Room, key: int | str, amount: int, per_s: float) -> MessageBudget:
    """The allowance of ``amount`` messages per ``per_s`` seconds of ``key`` in ``room``."""
    held = budgets.setdefault(room, {})
    budget = held.get(key)
    if budget is None:
        if len(held) >= _KEPT_BUDGETS:
            for old in [k for k, b in held.items() if isinstance(k, str) and b.full()]:
                del held[old]
        budget = held[key] = MessageBudget(amount, per_s)
    return budget


def _seat_budget(budgets: _Budgets, room: Room, seat: int | None, amount: int, per_s: float) -> MessageBudget:
    """The allowance of ``amount`` messages per ``per_s`` seconds of ``seat`` in ``room``: one
    for all of the seat's connections, so closing a socket and opening another does not refill
    it; a spectator's (None) is its connection's own (spectators ask for no hints)."""
    if seat is None:
        return MessageBudget(amount, per_s)
    return _budget(budgets, room, seat, amount, per_s)


def _shared_budgets(
    budgets: _Budgets, room: Room, conn: Outbox, burst: int, address_burst: int, per_s: float
) -> tuple[MessageBudget, ...]:
    """The allowances one kind of message of ``conn`` spends from, each a share of ``room``'s in
    ``budgets``: a seat's (all its connections together, ``burst`` per ``per_s`` seconds); a
    spectator's own, by its tag (all its sockets together), and its client address's (every
    spectator socket of one address, or of one IPv6 /64, together: ``address_burst``), so that
    neither opening more sockets nor coming back as a new spectator gives a person more."""
    if conn.seat is not None:
        return (_budget(budgets, room, conn.seat, burst, per_s),)
    own = _budget(budgets, room, f"tag:{conn.watcher}", burst, per_s)
    if conn.client is None:
        return (own,)
    return own, _budget(budgets, room, f"client:{conn.client}", address_burst, per_s)


def _chat_budgets(room: Room, conn: Outbox) -> tuple[MessageBudget, ...]:
    """The chat allowances a line of ``conn`` spends from (`_shared_budgets`): `CHAT_BURST` per
    `CHAT_PER_S` for a seat or a spectator, `CHAT_ADDRESS_BURST` for an address."""
    return _shared_budgets(_CHAT_BUDGETS, room, conn, CHAT_BURST, CHAT_ADDRESS_BURST, CHAT_PER_S)


def _name_budgets(room: Room, conn: Outbox) -> tuple[MessageBudget, ...]:
    """The allowances a ``name`` message of ``conn`` spends from, apart from the chat's and kept
    as they are (`_shared_budgets`): `NAME_BURST` per `NAME_PER_S` for a spectator (a seat's
    is only refused), `NAME_ADDRESS_BURST` for an address."""
    return _shared_budgets(_NAME_BUDGETS, room, conn, NAME_BURST, NAME_ADDRESS_BURST, NAME_PER_S)


def _action_of(conn: Outbox, message: ActionMessage) -> Action | EngineError:
    """The engine action of a seated connection's message, or the error it parses to (the room
    answers it in turn); a spectator's is parsed for seat 0 only to be refused as not seated."""
    try:
        return to_engine_action(0 if conn.seat is None else conn.seat, message.action)
    except EngineError as error:
        return error


CHAT_BURST = 5
"""Chat lines a seat (all its connections together) or a spectator (all its sockets together) may
send at once…"""
CHAT_ADDRESS_BURST = 10
"""…the spectators of one client address together (two people behind one home router chat on)…"""
CHAT_PER_S = 10.0
"""…and over how many seconds each allowance refills (5 lines per 10 s, 10 for an address)."""


async def _chat(
    room: Room,
    conn: Outbox,
    message: ChatMessage,
    budgets: tuple[MessageBudget, ...],
    address_lines: Callable[[], Awaitable[bool]] | None = None,
) -> None:
    """A chat line, within each of the connection's chat allowances in its room (``chat_too_fast``
    past one, spending from none), then within its client address's across every room
    (``address_lines``, `ChatLines`: ``chat_too_fast`` too); the room's refusals come back as
    ``error`` messages, like a refused action's (the client keeps the text), and so does a line
    the database failed to store (``chat_not_saved``: nobody got it; the socket stays open)."""
    allowed = MessageBudget.take_all(budgets) and (address_lines is None or await address_lines())
    await _in_room(
        room,
        conn,
        allowed,
        ("chat_too_fast", "too many chat messages; wait a moment"),
        lambda r: chat.say(r, conn, message.text, message.reaction),
        ("chat_not_saved", "the server could not save your line; send it again"),
    )


async def _in_room(
    room: Room,
    conn: Outbox,
    allowed: bool,
    too_fast: tuple[str, str],
    run: Callable[[Room], object],
    not_saved: tuple[str, str] | None = None,
) -> None:
    """A spectator's or seat's message that the room answers (a chat line, a name, "keep
    watching"): refused with ``too_fast`` (code, text) unless ``allowed`` by its allowances, else
    ``run`` in the room's task (`Room.call`); a `RoomError` comes back to ``conn`` as an ``error``
    message, and so does a database failure as ``not_saved`` (logged by the room,
    ``room_intent_failed``) when given; without it the `StoreError` is raised."""
    if not allowed:
        room.refuse(conn, *too_fast)
        return
    try:
        await room.call(run)
    except RoomError as error:
        room.refuse(conn, error.code, error.message)
    except StoreError:
        if not_saved is None:
            raise
        room.refuse(conn, *not_saved)


async def _name(room: Room, conn: Outbox, name: str | None, budgets: tuple[MessageBudget, ...]) -> None:
    """A spectator's name in the chat (`app.rooms.chat.name_spectator`), within the connection's
    name allowances (``name_too_fast`` past one: each name is checked in the room's task, look-alike
    skeletons and all, so a flood of them from many sockets would hold up its moves); a refusal
    comes back as an ``error`` message and leaves the name it had."""
    too_fast = ("name_too_fast", "too many names; wait a moment")
    allowed = MessageBudget.take_all(budgets)
    await _in_room(room, conn, allowed, too_fast, lambda r: chat.name_spectator(r, conn, name))


NAME_BURST = 10
"""Names a spectator (all its sockets together) may send at once (a person correcting a refused
one sends a few; each is checked in the room's task, look-alike skeletons and all)…"""
NAME_ADDRESS_BURST = 20
"""…the spectators of one client address together…"""
NAME_PER_S = 10.0
"""…and over how many seconds each allowance refills (10 names per 10 s, 20 for an address)."""


KEEP_WATCHING_BURST = 3
"""``keep_watching`` answers a spectator (all its sockets together) or a seat may send at once (one
deals a round; a double click or a second tab sends another, which finds nothing to answer)…"""
KEEP_WATCHING_ADDRESS_BURST = 6
"""…the spectators of one client address together…"""
KEEP_WATCHING_PER_S = 60.0
"""…and over how many seconds each allowance refills (3 a minute, 6 for an address): the question
comes after `app.rooms.config.RoomConfig.unattended_rounds` rounds, minutes apart, so a person
never needs more, and a script answering it for ever deals at most a few rounds a minute."""


async def _keep_watching(room: Room, conn: Outbox, budgets: tuple[MessageBudget, ...]) -> None:
    """A spectator's answer to "keep watching?" (`app.rooms.unattended.keep_watching`), within
    the connection's allowances (``keep_watching_too_fast`` past one, spending from none); the
    room's refusals come back as ``error`` messages, and so does a deal the database failed to
    store (``not_saved``: nothing changed, the room still asks)."""
    await _in_room(
        room,
        conn,
        MessageBudget.take_all(budgets),
        ("keep_watching_too_fast", "too many answers; wait a moment"),
        lambda r: unattended.keep_watching(r, conn),
        ("not_saved", "the server could not deal the next round; try again"),
    )


HINT_BURST = 3
"""Hint requests a seat (all its connections together) may send at once…"""
HINT_PER_S = 10.0
"""…and over how many seconds that allowance refills (each asks a worker for a search)."""


async def _hint(room: Room, conn: Outbox, budget: MessageBudget) -> None:
    """A hint request, within the connection's allowance (``hint_too_fast`` past it); refusals come
    back as ``error`` messages."""
    if not budget.take():
        room.refuse(conn, "hint_too_fast", "too many hint requests; wait a moment")
        return
    try:
        await hints.ask(room, conn)
    except RoomError as error:
        room.refuse(conn, error.code, error.message)


async def _next_message(websocket: WebSocket, budget: MessageBudget) -> AnyClientMessage:
    return parse_client_message(await _next_text(websocket, budget))


async def _next_text(websocket: WebSocket, budget: MessageBudget) -> str:
    """The next text frame, within the connection's message budget."""
    frame = await websocket.receive()
    if frame["type"] == "websocket.disconnect":
        raise WebSocketDisconnect(frame.get("code", 1000))
    if not budget.take():
        raise ProtocolError(CLOSE_POLICY, "too many messages")
    text = frame.get("text")
    if text is None:
        raise ProtocolError(CLOSE_UNSUPPORTED, "frames are JSON text")
    return str(text)
