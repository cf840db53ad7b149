"""A socket for a room another process hosts, served through that process (docs/cluster.md, "The
relay"): this process keeps the socket, checks each frame as for a room of its own (message
budget, JSON, the protocol's shapes), and forwards it to the room's owner, which checks it again
and answers with the room's frames and closes. The transport (Redis pub/sub, `app.cluster.relay`)
is seen through the `RelayPort`: the edge imports no Redis."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Protocol
from urllib.parse import quote, unquote

import structlog

from app.edge.closes import CLOSES
from app.edge.connection import Connection
from app.edge.protocol import CLOSE_POLICY, CLOSE_TRY_AGAIN, HelloMessage, ProtocolError, parse_client_message

__all__ = ["RelayLinkPort", "RelayOutboxPort", "RelayPort", "open_text", "parse_open", "relay_socket"]

_log = structlog.get_logger("domeng.relay")


def open_text(hello: str, address: str | None) -> str:
    """What a relayed socket's ``open`` record carries (docs/cluster.md, "The relay"): the client's
    ``address`` percent-encoded (``-``: not known), a space, the client's ``hello``.

    >>> open_text('{"type":"hello"}', "2001:db8:1:2::/64")
    '2001%3Adb8%3A1%3A2%3A%3A%2F64 {"type":"hello"}'
    """
    return f"{quote(address, safe='') if address else '-'} {hello}"


def parse_open(text: str) -> tuple[str | None, str]:
    """The client's address (None: not known) and hello of an ``open`` record (`open_text`; a
    relay of an older version sends the hello alone, which starts with ``{``).

    >>> parse_open(open_text('{"type":"hello"}', "198.51.100.7")), parse_open('{"type":"hello"}')
    (('198.51.100.7', '{"type":"hello"}'), (None, '{"type":"hello"}'))
    """
    if text.startswith("{"):
        return None, text
    address, _, hello = text.partition(" ")
    return (None if address == "-" else unquote(address)), hello


class RelayOutboxPort(Protocol):
    """A relayed connection on the room's owner: the rooms' `app.rooms.ports.Outbox`, plus a
    heartbeat answer and a close with a protocol close code."""

    seat: int | None
    watcher: str | None
    client: str | None
    name: str | None
    closed: bool

    def send(self, text: str) -> None: ...

    def send_latest(self, kind: str, text: str) -> None: ...

    def close(self, reason: str) -> None: ...

    def close_with(self, code: int, text: str) -> None: ...

    def beat(self) -> None: ...


class RelayLinkPort(Protocol):
    """One relayed socket, the relay's side (`app.cluster.relay.RelayLink`)."""

    conn_id: str

    async def open(self, hello: str) -> bool: ...

    def post(self, text: str) -> None: ...

    async def beat(self, silent_s: float = 0.0) -> bool: ...

    async def close(self, silent_s: float = 0.0) -> None: ...


class RelayPort(Protocol):
    """The relay between processes (`app.cluster.relay.RedisRelay`). ``beat_s``: seconds between
    a relayed socket's heartbeats; one side that hears nothing from the other for three of them
    counts it gone."""

    beat_s: float
    on_inbox: Callable[[str, str, str, str], None] | None

    def outbox(self, conn_id: str, on_close: Callable[[], None]) -> RelayOutboxPort: ...

    def link(self, code: str, on_record: Callable[[str], None]) -> RelayLinkPort: ...


_SPECTATORS = '{"type":"spectators",'
"""How the owner's host-only ``spectators`` frame begins (`app.rooms.frames.dumps`): the owner's
`app.cluster.relay.RelayOutbox` publishes every list, so the socket's `Connection` here is the one
that keeps only the latest while the host reads slowly."""


class _Relayed:
    """What the relay's side hears from the owner of one socket."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.answered = asyncio.Event()
        self.heard = time.monotonic()
        self.gone = False
        """The client's socket is gone: its goodbye goes to the owner, and no heartbeat after it."""

    def on_record(self, text: str) -> None:
        self.answered.set()
        self.heard = time.monotonic()
        conn = self.conn
        if text.startswith(_SPECTATORS):  # only the latest list matters (`Outbox.send_latest`)
            conn.send_latest("spectators", text)
            return
        if not text.startswith("!"):
            conn.send(text)
            return
        kind, _, rest = text.partition(" ")
        if kind == "!close":
            reason = rest if rest in CLOSES else "room_moved"
            conn.close(reason)
        elif kind == "!code":
            number, _, why = rest.partition(" ")
            with contextlib.suppress(ValueError):
                conn.close_with(int(number), why)


async def relay_socket(
    relay: RelayPort,
    code: str,
    conn: Connection,
    next_text: Callable[[], Awaitable[str]],
    wait_s: float,
    silent: Callable[[], float] = lambda: 0.0,
    address: str | None = None,
) -> None:
    """Serve ``conn`` (a local socket) for room ``code`` hosted by another process: its ``hello``
    (within ``wait_s`` seconds), then every frame ``next_text`` reads, each parsed here and
    forwarded; the owner's frames and closes are written to ``conn``. Each heartbeat and the
    goodbye tell the owner ``silent()``: the seconds since the client was last heard
    (`app.edge.heard.silent_s`), from which the owner counts the seat's grace, as for a local
    socket. The owner is told the client's ``address`` (`app.addresses.counted_address`) with the
    hello (`open_text`): its chat allowances and mutes count the client by it, as a local socket's.
    Returns or raises (`ProtocolError`, `WebSocketDisconnect`) when the socket is done;
    1013 (try again) when no process answers for the room, ``room_moved`` when its owner stops
    answering."""
    try:
        async with asyncio.timeout(wait_s):  # not wait_for: on 3.11 it can swallow a cancel
            first = await next_text()
    except TimeoutError:
        raise ProtocolError(CLOSE_POLICY, f"no hello within {wait_s:g} s") from None
    if not isinstance(parse_client_message(first), HelloMessage):
        raise ProtocolError(CLOSE_POLICY, "the first message must be hello")
    conn.start()
    relayed = _Relayed(conn)
    link = relay.link(code, relayed.on_record)
    watch: asyncio.Task[None] | None = None
    try:
        try:
            listening = await link.open(open_text(first, address))
        except ConnectionError:
            listening = False
        if not listening:
            raise ProtocolError(CLOSE_TRY_AGAIN, "the room's server did not answer; try again")
        watch = asyncio.create_task(_watch(relay.beat_s, link, relayed, silent), name=f"relay-{link.conn_id}")
        while True:
            text = await next_text()
            parse_client_message(text)  # nothing trusts the client: a bad frame closes here
            link.post(text)
    finally:
        relayed.gone = True  # the heartbeats end even if the cancel below is lost (see `_watch`)
        if watch is not None:
            watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watch
        await link.close(silent())


async def _watch(beat_s: float, link: RelayLinkPort, relayed: _Relayed, silent: Callable[[], float]) -> None:
    """Close the socket with 1013 when the owner does not answer its hello, and with
    ``room_moved`` when it stops answering the heartbeats (it died, or lost the room); beat until
    the socket is closed or gone. A heartbeat after the socket is gone would keep its seat held on
    the owner, so the client's automatic reconnect would be refused as replaced (4001)."""
    conn = relayed.conn
    try:
        # not asyncio.wait_for: on Python 3.11 it swallows a cancel that comes as the answer does
        # (a window closed just after the owner's welcome), and the heartbeats went on for ever
        async with asyncio.timeout(3 * beat_s):
            await relayed.answered.wait()
    except TimeoutError:
        conn.close_with(CLOSE_TRY_AGAIN, "the room's server did not answer; try again")
        return
    while not (conn.closed or relayed.gone):
        await asyncio.sleep(beat_s)  # the heartbeat's period
        if conn.closed or relayed.gone:
            return
        alive = await link.beat(silent())
        if not alive or time.monotonic() - relayed.heard > 3 * beat_s:
            _log.info("relay_owner_gone", conn=link.conn_id, listening=alive)
            conn.close("room_moved")
            return
