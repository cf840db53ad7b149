"""The owner's side of the relay (docs/cluster.md): the sockets of this process's rooms that
other processes hold. Each relayed connection is served by the same code as a local socket
(`app.edge.endpoint.serve`) with a `RelayOutboxPort` as its outbox: the room does not know the
difference. Its messages are parsed again here (nothing trusts the client, nor its relay)."""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from functools import partial
from typing import Final

import structlog

from app.edge.endpoint import ChatLines, join_room, serve
from app.edge.protocol import (
    CLOSE_INTERNAL,
    CLOSE_POLICY,
    CLOSE_TRY_AGAIN,
    AnyClientMessage,
    HelloMessage,
    ProtocolError,
    parse_client_message,
)
from app.edge.remote import RelayOutboxPort, RelayPort, parse_open
from app.rooms.hub import Hub
from app.rooms.room import Room

__all__ = ["RELAYED_BACKLOG", "RemoteClients", "RemoteGoneError"]

_log = structlog.get_logger("domeng.relay")

_BEAT = ""
"""A heartbeat in a relayed connection's queue."""

RELAYED_BACKLOG: Final = 64
"""Client frames a relayed connection may have waiting here, unread by its loop (busy, say, with
a chat line the database is slow to store); one more closes it (1008, ``too many messages``). A
local socket's reader stops reading instead (uvicorn holds 32 messages, then TCP holds the rest in
the client), but the relay reads on within the message budget (``DOMENG_RATE_LIMIT``) and forwards
each frame: without a bound the owner's queue grew by the budget's rate, 4 KiB a frame, for as long
as the loop was held. A browser sends a ping every 10 s and a click now and then: never near it."""


class RemoteGoneError(Exception):
    """A relayed connection's socket is gone: its relay said so, or stopped beating."""


class _Remote:
    def __init__(self, relay: RelayPort, conn_id: str, address: str | None = None) -> None:
        self.address = address
        """The client's address as its relay told it (`app.addresses.counted_address`)."""
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()
        self.outbox: RelayOutboxPort = relay.outbox(conn_id, lambda: self.queue.put_nowait(None))
        self.task: asyncio.Task[None] | None = None
        self.backlog = 0
        """The client's frames in ``queue`` (heartbeats not counted), at most `RELAYED_BACKLOG`."""
        self.heard = time.monotonic()
        """When the client was last heard, as far as its relay told (`time.monotonic` here): a
        record of it, or a heartbeat or goodbye less the silence it reports."""

    def heard_from(self, silence: str | None = None) -> None:
        """A record of the relay: the client spoke now (``silence`` None: one of its frames), or
        had been silent for ``silence`` seconds (the TEXT of a ``beat`` or ``bye``; a relay of an
        older version sends none: counted from now)."""
        self.heard = max(self.heard, time.monotonic() - _seconds(silence))

    def silent_s(self) -> float:
        """Seconds since the client was last heard (`app.rooms.room.Room.disconnect`)."""
        return max(0.0, time.monotonic() - self.heard)


def _seconds(text: str | None) -> float:
    """A silence as a relay reports it, in seconds (0.0 for none, or for what is not one)."""
    try:
        seconds = float(text) if text else 0.0
    except ValueError:
        return 0.0
    return seconds if math.isfinite(seconds) and seconds > 0.0 else 0.0


class RemoteClients:
    """The relayed connections this process serves as its rooms' owner, by connection id. Wires
    itself to ``relay.on_inbox``. ``wait_s``: the hello timeout of a socket; ``chat_lines``: each
    client address's chat allowance across rooms (`app.edge.endpoint.serve`; None: none)."""

    def __init__(
        self, hub: Hub, relay: RelayPort, wait_s: float, chat_lines: ChatLines | None = None
    ) -> None:
        self.hub = hub
        self.relay = relay
        self.wait_s = wait_s
        self.chat_lines = chat_lines
        self.conns: dict[str, _Remote] = {}
        self.stopping = False
        """Set at shutdown: a new relayed connection is told to try again (1013)."""
        relay.on_inbox = self.on_inbox

    def on_inbox(self, code: str, kind: str, conn_id: str, text: str) -> None:
        """One record of room ``code``'s inbox: ``open`` (``text`` is the client's address and
        hello, `app.edge.remote.open_text`), ``msg``,
        ``beat`` or ``bye`` of connection ``conn_id``."""
        remote = self.conns.get(conn_id)
        if kind == "open":
            if self.stopping:
                self.relay.outbox(conn_id, lambda: None).close_with(CLOSE_TRY_AGAIN, "the server is stopping")
            elif remote is None:
                address, hello = parse_open(text)
                remote = self.conns[conn_id] = _Remote(self.relay, conn_id, address)
                remote.queue.put_nowait(hello)
                remote.task = asyncio.create_task(
                    self._serve(code, conn_id, remote), name=f"remote-{conn_id}"
                )
            return
        if remote is None:  # not (or no longer) served here: the room moved, or the socket closed
            if kind != "bye":
                self.relay.outbox(conn_id, lambda: None).close("room_moved")
            return
        if kind == "msg":
            remote.heard_from()
            if remote.backlog >= RELAYED_BACKLOG:  # the loop is held: close, as the relay would
                if not remote.outbox.closed:
                    self.hub.metrics.rejected.labels(str(CLOSE_POLICY)).inc()
                    remote.outbox.close_with(CLOSE_POLICY, "too many messages")
                return
            remote.backlog += 1
            remote.queue.put_nowait(text)
        elif kind == "beat":
            remote.heard_from(text)
            remote.outbox.beat()
            remote.queue.put_nowait(_BEAT)
        elif kind == "bye":
            remote.heard_from(text)
            remote.outbox.closed = True  # nothing more is published: nobody listens
            remote.queue.put_nowait(None)

    async def _serve(self, code: str, conn_id: str, remote: _Remote) -> None:
        outbox = remote.outbox
        room: Room | None = None
        gone_s = 3 * self.relay.beat_s

        async def next_message() -> AnyClientMessage:
            while True:
                try:
                    async with asyncio.timeout(gone_s):  # not wait_for (3.11: a lost cancel)
                        text = await remote.queue.get()
                except TimeoutError:
                    raise RemoteGoneError("no heartbeat") from None
                if text is None or outbox.closed:  # what still waits is for nobody
                    raise RemoteGoneError("closed")
                if text != _BEAT:
                    remote.backlog -= 1
                    return parse_client_message(text)

        async def join(hello: HelloMessage) -> Room:
            nonlocal room
            room = await join_room(self.hub, code, outbox, hello, remote.address)
            return room

        try:
            lines = None if self.chat_lines is None else partial(self.chat_lines, remote.address or "")
            await serve(next_message, join, outbox, lambda: None, self.wait_s, lines)
        except ProtocolError as violation:
            self.hub.metrics.rejected.labels(str(violation.close_code)).inc()
            outbox.close_with(violation.close_code, violation.reason)
        except RemoteGoneError:
            pass
        except Exception:
            _log.exception("relayed_connection_failed", room=code)
            outbox.close_with(CLOSE_INTERNAL, "internal error")
        finally:
            if room is not None:  # its grace counts from the client's last word, as on its relay
                room.disconnect(outbox, remote.silent_s())
            outbox.closed = True
            self.conns.pop(conn_id, None)

    async def stop(self) -> None:
        """Stop serving every relayed connection (at shutdown)."""
        tasks = [remote.task for remote in self.conns.values() if remote.task is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
