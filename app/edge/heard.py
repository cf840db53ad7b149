"""When the server last heard from a WebSocket's client, whichever implementation uvicorn runs.

A network that drops without a word (a phone losing its signal, a laptop lid shut) is noticed only
when a ping goes unanswered for ``DOMENG_PING_TIMEOUT_S``: up to ``DOMENG_PING_INTERVAL_S`` plus that
after the last byte came in. The player's grace must not wait for that on top of its own length,
so `heard_protocol` subclasses uvicorn's WebSocket protocol to stamp every arrival of bytes (a
frame of the client's, a pong the browser sends by itself even from a hidden tab, a close; its
side ending the TCP connection, with a FIN or a reset, counts too: it was there to do it) and
gives the application a way to read the stamp: the socket's ASGI scope carries, under
``extensions`` → `HEARD`, a callable returning the `time.monotonic` seconds of the last arrival.
`silent_s` reads it (0.0 for a server without it, as in-process test apps). The scope also
carries, under `app.edge.connection.SERVER_SEND`, the server's own ASGI ``send``: the room's
`app.edge.connection.Connection` writes its text frames through it rather than through the
application's layers, none of which touches a ``websocket.send`` message.

The same subclass bounds the frames a client sends that are not a whole message in one frame
(`FRAME_BURST` per `FRAME_PER_S`: pings, pongs and the fragments of a fragmented message together).
uvicorn answers every ping with a pong written without flow control, and parses pings, pongs and
a message's fragments without pausing its reads (it pauses only once a whole message is queued),
so neither the room socket's message budget (whole messages only) nor the transport's backpressure
ever held them: one address's 30 sockets flooding pings (or unsolicited pongs) made another
client's ``/healthz`` wait 3 to 10 s and grew the server's memory by the pongs it never read, and
the same sockets sending messages of 4,000 one-byte fragments each held it 1.5 to 2.7 s. A client
past the allowance is cut off (the transport aborted: a close handshake would wait on a client
that does not read) and nothing more of it is parsed. The legacy ``websockets`` implementation
reads frames in a coroutine of its own (`read_frame`, counted the same way): one address's tiny
pings held another client 6 to 11 s there, its fragments 1.6 to 3.4 s.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from typing import Any, Final

import structlog
from uvicorn.config import WS_PROTOCOLS
from uvicorn.importer import import_from_string
from websockets.exceptions import InvalidState
from websockets.frames import Opcode

from app.edge.connection import SERVER_SEND, SERVER_SEND_TEXT, MessageBudget
from app.throttle import Throttle

__all__ = ["FRAME_BURST", "FRAME_PER_S", "HEARD", "heard_protocol", "silent_s"]

_log = structlog.get_logger("domeng.edge")

_COUNTED_OPCODES: Final = frozenset({Opcode.PING, Opcode.PONG, Opcode.CONT})
"""The frames `FRAME_BURST` counts as the legacy ``websockets`` implementation reads them."""

_SLICE_BYTES: Final = 4096
"""What of one read the WebSocket parser is given at a time (`heard_protocol`): a read holds up to
256 KiB, some 37,000 one-byte fragments that the parser would turn into frames before the first
of them could be counted; given in slices, a client cut off mid-read is parsed no further."""

HEARD: Final = "domeng.heard"
"""The ASGI scope extension holding ``() -> float``: `time.monotonic` at the client's last bytes."""

FRAME_BURST: Final = 20
"""Frames that are not a whole message a WebSocket client may send at once (pings, pongs, the
fragments of a fragmented message, together)…"""
FRAME_PER_S: Final = 10.0
"""…and over how many seconds that allowance refills (2 a second). A browser sends only the pongs
that answer the server's pings, one per ``DOMENG_PING_INTERVAL_S``, and each message (4 KiB at
most) in one frame; a script's library pings every 20 s or so."""


def heard_protocol(ws_impl: str) -> type[asyncio.Protocol]:
    """uvicorn's WebSocket protocol class named ``ws_impl`` (``websockets-sansio``, ``wsproto``,
    ``websockets``), subclassed to stamp each arrival of bytes and to put `HEARD` in the scope.
    Raises ImportError when that implementation's package is not installed."""
    base: type[Any] = import_from_string(WS_PROTOCOLS[ws_impl])
    sansio = ws_impl == "websockets-sansio"  # its protocol object (``conn``) is the library's own

    class Heard(base):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.domeng_heard = time.monotonic()
            self.domeng_frames = MessageBudget(FRAME_BURST, FRAME_PER_S)
            self.domeng_cut = False

        def data_received(self, data: bytes) -> None:
            if self.domeng_cut:  # cut off (`domeng_control`): nothing more of it is parsed
                return
            self.domeng_heard = time.monotonic()
            if len(data) <= _SLICE_BYTES:
                super().data_received(data)
                return
            for start in range(0, len(data), _SLICE_BYTES):  # a cut stops the parsing within a read
                super().data_received(data[start : start + _SLICE_BYTES])
                if self.domeng_cut:
                    return

        def domeng_control(self) -> bool:
            """Count one frame of the client's that is not a whole message (a ping, a pong, a
            fragment); past `FRAME_BURST` per `FRAME_PER_S` cut the client off (whether it may
            go on)."""
            if self.domeng_cut:
                return False
            if self.domeng_frames.take():
                return True
            self.domeng_cut = True
            unlogged = _CUTS.allow("cut")
            if unlogged is not None:
                _log.warning("frames_refused", burst=FRAME_BURST, per_s=FRAME_PER_S, unlogged=unlogged)
            self.transport.abort()
            return False

        if hasattr(base, "handle_ping"):  # websockets-sansio, wsproto: answered without flow control

            def handle_ping(self, *args: Any) -> None:
                if self.domeng_control():
                    super().handle_ping(*args)

            def handle_pong(self, *args: Any) -> None:
                if self.domeng_control():
                    super().handle_pong(*args)

        if hasattr(base, "handle_cont"):  # websockets-sansio: a fragment after a message's first

            def handle_cont(self, *args: Any) -> None:
                if self.domeng_control():
                    super().handle_cont(*args)

        if hasattr(base, "handle_message"):  # wsproto: a message's every frame but its last

            def handle_message(self, event: Any) -> None:
                # a frame's bytes may come in several events (frame_finished: its last)
                fragment = event.frame_finished and not event.message_finished
                if not fragment or self.domeng_control():
                    super().handle_message(event)

        if hasattr(base, "read_frame"):  # legacy websockets: its reader coroutine answers pings

            async def read_frame(self, max_size: int | None) -> Any:
                frame = await super().read_frame(max_size)
                if frame.opcode in _COUNTED_OPCODES and not self.domeng_control():
                    raise ConnectionAbortedError("too many frames that are not a whole message")
                return frame

        def eof_received(self) -> bool | None:
            self.domeng_heard = time.monotonic()  # the client's side closed: it was there to say so
            result: bool | None = super().eof_received()
            return result

        def connection_lost(self, exc: Exception | None) -> None:
            if isinstance(exc, ConnectionResetError | BrokenPipeError):  # the client's side reset it
                self.domeng_heard = time.monotonic()
            super().connection_lost(exc)

        async def run_asgi(self) -> None:
            # the scope is built from the upgrade request just before the application runs
            extensions = self.scope.setdefault("extensions", {})
            extensions[HEARD] = self.last_heard
            # the send the application is called with (the legacy implementation's is asgi_send)
            extensions[SERVER_SEND] = getattr(self, "asgi_send", None) or self.send
            if sansio:
                extensions[SERVER_SEND_TEXT] = self.domeng_send_text
            await super().run_asgi()

        def domeng_send_text(self, text: str) -> bool:
            """`SERVER_SEND_TEXT` on websockets-sansio: what its ``send`` does with a
            ``websocket.send`` of ``text`` that need not wait (the socket open, the handshake
            done, not paused by flow control): the library's protocol frames it (``send_text``,
            ``data_to_send``) and it goes to the transport in one write, without the ASGI
            message and its coroutine. False, having written nothing, otherwise."""
            if (
                self.close_sent
                or self.disconnected
                or not self.handshake_complete
                or self.initial_response is not None
                or not self.writable.is_set()
            ):
                return False
            conn = self.conn
            try:
                conn.send_text(text.encode())
            except InvalidState:
                return False  # the ASGI send says so (ClientDisconnected)
            self.transport.write(b"".join(conn.data_to_send()))
            return True

        def last_heard(self) -> float:
            return float(self.domeng_heard)

    Heard.__name__ = Heard.__qualname__ = f"Heard{base.__name__}"
    return Heard


_CUTS = Throttle(10.0)
"""The clients cut off for their control frames: ``frames_refused`` is logged at most once per
10 s, with how many were cut since the last line (a flood writes a line every few seconds, not
one per socket)."""


def silent_s(scope: Mapping[str, Any]) -> float:
    """Seconds since the client of the socket with ASGI ``scope`` was last heard (at least 0.0);
    0.0 when the server does not know (no `HEARD` extension)."""
    heard: Callable[[], float] | None = (scope.get("extensions") or {}).get(HEARD)
    if heard is None:
        return 0.0
    return max(0.0, time.monotonic() - heard())
