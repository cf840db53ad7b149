"""One WebSocket connection: a frame is written at once while the socket takes it, else queued in a
bounded send queue drained by its own task, so a slow or dead client can never delay the room or
anyone else."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Callable, Coroutine, Iterable
from typing import Any, Final

import structlog
from starlette.websockets import WebSocket, WebSocketState

from app.edge.closes import close_for
from app.edge.protocol import CLOSE_TOO_SLOW
from app.rooms.ports import CloseReason

__all__ = [
    "CLOSE_REASON_BYTES",
    "SERVER_SEND",
    "SERVER_SEND_TEXT",
    "Connection",
    "MessageBudget",
    "close_reason",
]

_log = structlog.get_logger("domeng.connection")
_ids = itertools.count(1)

CLOSE_REASON_BYTES: Final = 123
"""The most bytes of UTF-8 a close frame's reason holds (RFC 6455, 5.5: a control frame carries
125 bytes, two of them the close code)."""


SERVER_SEND: Final = "domeng.send"
"""The ASGI scope extension holding the server's own ``send`` of a socket, the one the application
is called with before any middleware wraps it (`app.edge.heard.heard_protocol` puts it there):
`Connection` writes its text frames through it. No layer of the application touches a
``websocket.send`` message; going through them (Starlette's `WebSocket.send_text`, its state
checks, the exception handlers' and the middlewares' wrappers of ``send``) cost a coroutine or a
call each per frame, and a room sends a frame to each of its sockets per move (issue 15)."""


SERVER_SEND_TEXT: Final = "domeng.send_text"
"""The ASGI scope extension holding ``(text: str) -> bool``, when the server's WebSocket protocol
offers it (`app.edge.heard.heard_protocol`, on ``websockets-sansio``): when the socket is open and
can take it at once (not paused by flow control), it has the websockets library's protocol frame
``text`` (``send_text``, with any extension such as permessage-deflate) and writes that to the
socket's transport, as uvicorn's ``send`` does, and returns True; else it writes nothing and
returns False, and the frame goes through `SERVER_SEND`. It skips what the ASGI ``send`` adds
around that: a message dict, a coroutine and its flow-control wait, about a third of the CPU a
1,700-byte frame took to send, the socket's write included (`benchmarks/frame_send.py`, uvloop),
and a room sends one frame to each of its sockets per move (issue 15)."""


def close_reason(text: str) -> str:
    """``text`` cut to `CLOSE_REASON_BYTES` bytes of UTF-8, never in the middle of a character.
    A reason may echo a client's frame (`app.edge.protocol.parse_client_message` cuts its text at
    120 characters, which are up to 480 bytes): a longer one made the close itself fail, and the
    client saw its socket drop (1006) instead of the protocol's close code, through a relay too.

    >>> close_reason("é" * 70) == "é" * 61, close_reason("too many messages")
    (True, 'too many messages')
    """
    return text.encode()[:CLOSE_REASON_BYTES].decode(errors="ignore")


class MessageBudget:
    """A token bucket for one connection's incoming messages: ``amount`` messages at once, refilled
    at ``amount / per_s`` messages per second (``DOMENG_RATE_LIMIT``, a `limits` expression such as
    "20 per 2 seconds", is parsed into these two numbers).

    Per connection rather than in `limits`' shared memory storage: that storage expires its keys
    from a thread that wakes every 10 ms and walks every key, which with thousands of sockets
    costs the event loop more than the game does (benchmarks/load.py). The budget lives and dies
    with its connection, so there is nothing to expire.
    """

    __slots__ = ("_capacity", "_rate", "_tokens", "_stamp")

    def __init__(self, amount: int, per_s: float) -> None:
        if amount < 1 or per_s <= 0:
            raise ValueError(
                f"a rate limit needs amount >= 1 and a positive period, got {amount} per {per_s}s"
            )
        self._capacity = float(amount)
        self._rate = amount / per_s
        self._tokens = float(amount)
        self._stamp = time.monotonic()

    def take(self) -> bool:
        """Spend one message; False when the budget is exhausted (the caller closes with 1008)."""
        if not self._refill():
            return False
        self._tokens -= 1.0
        return True

    def full(self) -> bool:
        """Whether the budget is whole again (as a new one would be)."""
        self._refill()
        return self._tokens >= self._capacity

    @staticmethod
    def take_all(budgets: Iterable[MessageBudget]) -> bool:
        """Spend one message of each of ``budgets`` when every one has it; else spend none and
        return False."""
        held = list(budgets)
        if not all([budget._refill() for budget in held]):
            return False
        for budget in held:
            budget._tokens -= 1.0
        return True

    def _refill(self) -> bool:
        """Add what refilled since the last look; whether one message is there to spend."""
        now = time.monotonic()
        self._tokens = min(self._capacity, self._tokens + (now - self._stamp) * self._rate)
        self._stamp = now
        return self._tokens >= 1.0


class Connection:
    """A client socket in a room, the room's `app.rooms.ports.Outbox`. ``seat`` is None for a
    spectator.

    `send` never blocks. While nothing is queued and the sender is idle, it writes the frame at
    once, as far as the socket takes it without waiting (the transport buffers it; uvicorn's
    WebSocket protocols only wait while the client does not read): a room's update to five
    sockets then costs no task switch per socket (benchmarks/load.py). A write that has to wait
    is finished by the sender before anything queued after it, so frames keep their order.
    Otherwise it queues the frame, and when ``queue_size`` frames are already waiting the
    connection is closed with 4002 (too slow) instead. `send_latest` queues a frame whose latest
    value alone matters (the host's ``spectators`` list): while one of its kind still waits, that
    one's text is replaced in its place instead, so a flood of them takes one place in the queue.
    Text frames go straight to the socket's transport when the scope offers it and the socket
    takes them at once (`SERVER_SEND_TEXT`), else through the server's own ``send`` when the scope
    carries it (`SERVER_SEND`), else through the WebSocket's ``send_text``; the close goes through
    the WebSocket.
    """

    def __init__(self, websocket: WebSocket, queue_size: int) -> None:
        self.id = next(_ids)
        self.websocket = websocket
        self._write: Callable[[str], Coroutine[Any, Any, None]] = websocket.send_text
        extensions = (getattr(websocket, "scope", None) or {}).get("extensions", {})
        server_send = extensions.get(SERVER_SEND)
        self._raw = server_send is not None
        if server_send is not None:
            self._write = lambda text: server_send({"type": "websocket.send", "text": text})
        self._write_frame: Callable[[str], bool] | None = extensions.get(SERVER_SEND_TEXT)
        self.seat: int | None = None
        self.watcher: str | None = None
        self.client: str | None = None
        self.name: str | None = None
        self.closed = False
        self._queue: asyncio.Queue[str | tuple[int, str] | _Unfinished | _Latest] = asyncio.Queue(queue_size)
        self._waiting: dict[str, _Latest] = {}  # send_latest's frames still queued, by kind
        self._sender: asyncio.Task[None] | None = None
        self._idle = False  # the sender waits for an empty queue, with nothing in hand (cleared by any put)

    def start(self) -> None:
        """Start draining the send queue."""
        self._sender = asyncio.create_task(self._drain(), name=f"conn-{self.id}-sender")

    def send(self, text: str) -> None:
        """Queue one frame; a full queue closes the connection (4002)."""
        if not self.closed:
            self._enqueue(text, text)

    def send_latest(self, kind: str, text: str) -> None:
        """Queue one frame of ``kind``, or replace the text of the one of that kind still waiting
        in the queue, in its place (`app.rooms.ports.Outbox.send_latest`)."""
        if self.closed:
            return
        waiting = self._waiting.get(kind)
        if waiting is not None:
            waiting.text = text
            return
        latest = _Latest(kind, text)
        if self._enqueue(latest, text):
            self._waiting[kind] = latest

    def _enqueue(self, item: str | _Latest, text: str) -> bool:
        """Write ``text`` at once while nothing is queued and the sender is idle, else queue
        ``item`` (its frame); a full queue closes the connection (4002). Whether it was queued."""
        if self._idle:  # so the queue is empty: whatever puts into it clears it
            self._write_now(text)
            return False
        try:
            self._queue.put_nowait(item)
        except asyncio.QueueFull:
            _log.warning("slow_client_closed", conn=self.id, seat=self.seat)
            self.close_with(CLOSE_TOO_SLOW, "too slow to read updates")
            return False
        return True

    def close(self, reason: CloseReason) -> None:
        """The room closes this connection for ``reason`` (`app.edge.closes` gives its code)."""
        self.close_with(*close_for(reason))

    def close_with(self, code: int, reason: str) -> None:
        """Send what is queued, then close with ``code`` and ``reason`` (cut by `close_reason`;
        idempotent, never blocks)."""
        if self.closed:
            return
        self.closed = True
        # Drop what is waiting if the queue is full: the close frame must get through. A write
        # already started (only ever first in the queue) is finished, not dropped: its frame may
        # be partly in the transport already.
        if self._queue.full():
            first = self._queue.get_nowait()
            while not self._queue.empty():
                self._queue.get_nowait()
            if isinstance(first, _Unfinished):
                self._queue.put_nowait(first)
        self._waiting.clear()
        self._queue.put_nowait((code, close_reason(reason)))
        self._idle = False
        if self._sender is None:
            self.start()

    def _write_now(self, text: str) -> None:
        """Write the frame straight to the socket when it takes it at once (`SERVER_SEND_TEXT`),
        else run the socket's send until it finishes or has to wait; a send that waits goes to the
        (empty) queue for the sender to finish."""
        try:
            if self._write_frame is not None and self._write_frame(text):
                return
            write = self._write(text)
            awaited = write.send(None)
        except StopIteration:
            return
        except Exception as error:
            self._failed(error)
            self.close_with(CLOSE_TOO_SLOW, "")
            return
        self._queue.put_nowait(_Unfinished(write, awaited))
        self._idle = False

    def _failed(self, error: Exception) -> None:
        """Log a write that raised ``error``. Through the server's ``send``, a socket error (the
        client gone) marks the WebSocket disconnected and is named as Starlette's ``send_text``
        raises it, as it does when frames go through it: the close that follows is then not
        written to a closed socket."""
        if self._raw and isinstance(error, OSError):
            self.websocket.application_state = WebSocketState.DISCONNECTED
            name = "WebSocketDisconnect"
        else:
            name = type(error).__name__
        _log.info("connection_send_failed", conn=self.id, error=name)

    async def _drain(self) -> None:
        ws = self.websocket
        try:
            while True:
                self._idle = True
                item = await self._queue.get()
                self._idle = False
                if isinstance(item, _Unfinished):
                    await item.finish()
                    continue
                if isinstance(item, _Latest):
                    if self._waiting.get(item.kind) is item:
                        del self._waiting[item.kind]  # a newer one of its kind queues anew
                    await self._send(item.text)
                    continue
                if isinstance(item, tuple):
                    code, reason = item
                    if ws.application_state is WebSocketState.CONNECTED:
                        await ws.close(code, reason)
                    return
                await self._send(item)
        except Exception as error:
            self._failed(error)
            self.closed = True
            with contextlib.suppress(Exception):
                await ws.close(CLOSE_TOO_SLOW)
        finally:
            self._idle = False

    async def _send(self, text: str) -> None:
        """The sender's write of one frame: straight to the transport when it takes it at once
        (`SERVER_SEND_TEXT`), else through the socket's send."""
        if self._write_frame is None or not self._write_frame(text):
            await self._write(text)

    async def flush(self, timeout_s: float) -> None:
        """Wait up to ``timeout_s`` seconds for a requested close (and what was queued before it)
        to be sent; returns at once if no close was requested."""
        if self.closed and self._sender is not None and not self._sender.done():
            with contextlib.suppress(TimeoutError, asyncio.CancelledError, Exception):
                async with asyncio.timeout(timeout_s):  # not wait_for: on 3.11 it can swallow a cancel
                    await asyncio.shield(self._sender)

    async def stop(self) -> None:
        """Stop the sender (after the socket is gone)."""
        self.closed = True
        if self._sender is not None and not self._sender.done():
            self._sender.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._sender


class _Latest:
    """A `Connection.send_latest` frame in the queue: while it waits, a newer frame of its
    ``kind`` replaces its ``text``."""

    __slots__ = ("kind", "text")

    def __init__(self, kind: str, text: str) -> None:
        self.kind, self.text = kind, text


class _Unfinished:
    """A socket send `Connection.send` started that has to wait (``awaited`` is the future it
    yielded, or None for a bare yield): the sender finishes it, as a task would have."""

    __slots__ = ("write", "awaited")

    def __init__(self, write: Coroutine[Any, Any, None], awaited: Any) -> None:
        self.write, self.awaited = write, awaited

    async def finish(self) -> None:
        """Wait for what the send waits for, resume it, and so on until it returns (a suspended
        coroutine cannot simply be awaited); raises what it raises. Cancelled, it closes the send."""
        write, awaited = self.write, self.awaited
        try:
            while True:
                if awaited is None:  # a bare yield: give the loop one turn
                    await asyncio.sleep(0)
                else:
                    # What a task does with a future its coroutine yields (asyncio's Future
                    # protocol), so that this task can wait for it in turn.
                    awaited._asyncio_future_blocking = False
                    with contextlib.suppress(Exception):  # resumed, the send reads the outcome
                        await awaited
                try:
                    awaited = write.send(None)
                except StopIteration:
                    return
        except asyncio.CancelledError:
            write.close()
            raise
