"""Any process serves any room link (docs/cluster.md, "The relay"): Redis pub/sub between the
process holding a client's socket (the *relay*) and the process holding the room's lease (the
*owner*). It imports nothing of the server: the edge gives it callbacks and gets back objects
shaped as the rooms' ports.

Channels (``{CODE}`` is the room's code; ``ID`` a connection id, ``PROCESS:N``):

| channel | who subscribes | carries |
|---|---|---|
| ``domeng:{CODE}:inbox`` | the room's owner, while it holds its lease | ``KIND ID TEXT`` records |
| ``domeng:conn:ID:outbox`` | the relay holding connection ``ID`` | the owner's frames, controls |

Inbox kinds: ``open`` (TEXT is the client's address and hello: ``app.edge.remote.open_text``),
``msg`` (one client frame, already parsed once by the relay and parsed again by the owner),
``beat`` (the relay's heartbeat; the owner answers ``!beat``), ``bye`` (the client's socket is
gone); the TEXT of a ``beat`` and of a ``bye`` is how long the client had been silent then, in
seconds (``app.edge.heard``: its grace counts from its last word, on the owner as on a local
socket). Outbox records: a JSON frame as is (they start with ``{``), or a control: ``!beat``,
``!close REASON`` (a `app.rooms.ports.CloseReason`), ``!code CODE TEXT`` (a close code of the
protocol, e.g. 4003 for a bad token).

Every publication of a process goes through one task and one connection, in order, so the frames
of one connection arrive in the order the room sent them. Pub/sub is at-most-once: a frame lost on
the way is caught by the client's version check, which asks for a resync (docs/protocol.md).

The publications waiting for that task are bounded (`QUEUE_BYTES` of text, `QUEUE_LIMIT` records,
the batch being sent included): Redis stalled, a process whose rooms have relayed clients would
otherwise hold every frame they are sent (100,000 states of 4 KiB: 400 MB). A record that does not
fit is not queued, and the relayed connection it was for is dropped, since it can no longer be
served in order: on the owner, its `RelayOutbox` closes (the room sees its socket gone, and the
seat's grace starts); on the relay, the client's socket is closed with 1013 (try again) by a
``!code`` record given to the link's own ``on_record``. The clients reconnect and resume with
their tokens (``since``). Each such episode is logged once (``relay_queue_full``, then
``relay_queue_drained`` with how many records were refused once the queue has drained to half),
with no frame's text nor token. Nothing ever blocks the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import secrets
import socket
from collections.abc import Callable, Coroutine
from typing import Any, Final

import structlog
from redis.asyncio import Redis
from redis.exceptions import RedisError

from app.cluster.calls import bounded

__all__ = ["QUEUE_BYTES", "QUEUE_LIMIT", "TRY_AGAIN", "RedisRelay", "RelayLink", "RelayOutbox"]

_log = structlog.get_logger("domeng.relay")

QUEUE_LIMIT: Final = 20_000
"""Publications waiting at most (the batch being sent included); past that a new one is refused and
its connection dropped (module docstring). Healthy, the queue holds what one turn of the event loop
published: a move sent to a few hundred relayed sockets."""

QUEUE_BYTES: Final = 16 * 1024 * 1024
"""Characters of text (channel and record) waiting at most, the batch being sent included: about
16 MiB of JSON (4,000 states of 4 KiB); past that a new publication is refused and its connection
dropped (module docstring)."""

TRY_AGAIN: Final = 1013
"""The close code of a relayed client socket whose frame the queue refused
(`app.edge.protocol.CLOSE_TRY_AGAIN`: this module imports nothing of the server)."""


class RelayOutbox:
    """A relayed connection as the room on its owner sees it (`app.rooms.ports.Outbox`): `send`
    publishes a frame to the connection's outbox channel, `close` the reason, and neither blocks.
    ``on_close`` is called once when it closes (the owner stops serving it)."""

    def __init__(self, relay: RedisRelay, conn_id: str, on_close: Callable[[], None]) -> None:
        self.conn_id = conn_id
        self.seat: int | None = None
        self.watcher: str | None = None
        self.client: str | None = None
        self.name: str | None = None
        self.closed = False
        self._relay = relay
        self._channel = relay.outbox_channel(conn_id)
        self._on_close = on_close

    def send(self, text: str) -> None:
        """Publish one JSON text frame (dropped once closed). When the relay's queue is full the
        connection is dropped instead (closed, ``on_close`` called: module docstring)."""
        if not self.closed and not self._relay.publish(self._channel, text):
            self._dropped()

    def send_latest(self, kind: str, text: str) -> None:
        """Publish it like any frame: the relay queues nothing here; the socket's own
        `app.edge.connection.Connection` on the relaying process sends what it publishes."""
        self.send(text)

    def beat(self) -> None:
        """Answer a heartbeat of the relay (the connection dropped when the queue is full)."""
        if not self.closed and not self._relay.publish(self._channel, "!beat"):
            self._dropped()

    def close(self, reason: str) -> None:
        """Publish ``!close REASON`` after what was sent (idempotent)."""
        self._finish(f"!close {reason}")

    def close_with(self, code: int, text: str) -> None:
        """Publish ``!code CODE TEXT``: the relay closes the socket with that code (idempotent)."""
        self._finish(f"!code {code} {text}")

    def _finish(self, record: str) -> None:
        if self.closed:
            return
        self.closed = True
        self._relay.publish(self._channel, record)  # refused, the relay finds the owner silent
        self._on_close()

    def _dropped(self) -> None:
        """The queue refused a record for it: the connection cannot be served in order any more.
        Closed without a word (none would fit): its relay finds the owner silent within three
        beats and closes the client's socket with ``room_moved``, or is told ``room_moved`` at its
        next heartbeat; the client reconnects."""
        self.closed = True
        self._on_close()


class RelayLink:
    """One client socket of this process relayed to its room's owner (the relay's side).
    ``on_record(text)`` gets every outbox record, in order. `open` first, then `post`, `beat`,
    and `close` at the end."""

    def __init__(self, relay: RedisRelay, code: str, on_record: Callable[[str], None]) -> None:
        self.code = code
        self.conn_id = f"{relay.process}:{next(relay.ids)}"
        self._relay = relay
        self._inbox = relay.inbox_channel(code)
        self._outbox = relay.outbox_channel(self.conn_id)
        self._on_record = on_record
        self._open = False
        self._refused = False

    async def open(self, hello: str) -> bool:
        """Subscribe to this connection's outbox, then send the client's ``hello`` to the owner.
        False when no process listens on the room's inbox (no owner now). Raises ConnectionError
        when Redis cannot be reached."""
        await self._relay.subscribe(self._outbox, self._on_record)
        self._open = True
        return await self._relay.publish_now(self._inbox, f"open {self.conn_id} {hello}") > 0

    def post(self, text: str) -> None:
        """Forward one client frame (already parsed by the edge) to the owner. When the relay's
        queue is full the frame is not sent, and ``on_record`` gets ``!code 1013 …``: the socket
        closes and its client reconnects (module docstring); nothing more is forwarded."""
        if self._refused:
            return
        if not self._relay.publish(self._inbox, f"msg {self.conn_id} {text}"):
            self._refused = True
            self._on_record(f"!code {TRY_AGAIN} the relay to the room's server is overloaded; try again")

    async def beat(self, silent_s: float = 0.0) -> bool:
        """A heartbeat to the owner, with the seconds since the client was last heard; False when
        no process listens on the room's inbox any more (the owner died) or Redis cannot be
        reached."""
        try:
            return await self._relay.publish_now(self._inbox, f"beat {self.conn_id} {silent_s:.3f}") > 0
        except ConnectionError:
            return False

    async def close(self, silent_s: float = 0.0) -> None:
        """The client's socket is gone, its client last heard ``silent_s`` seconds ago: tell the
        owner, stop listening (never raises)."""
        if not self._open:
            return
        self._open = False
        self._relay.publish(self._inbox, f"bye {self.conn_id} {silent_s:.3f}")
        await self._relay.unsubscribe(self._outbox)


class RedisRelay:
    """The relay of one process over Redis at ``url``: one subscriber connection (every inbox it
    owns and every outbox of its relayed sockets) and one publisher task. ``on_inbox(code, kind,
    conn_id, text)`` gets the records of the inboxes of the rooms this process owns (`host`).
    `start` it before use, `close` it after."""

    def __init__(
        self,
        url: str,
        *,
        beat_s: float = 1.0,
        timeout_s: float = 2.0,
        prefix: str = "domeng",
        process: str | None = None,
        queue_bytes: int = QUEUE_BYTES,
        queue_limit: int = QUEUE_LIMIT,
    ) -> None:
        self.prefix = prefix
        self.process = process or f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(4)}"
        """This process's name in connection ids (no spaces, no secret)."""
        self.ids = itertools.count(1)
        self.beat_s = beat_s
        """Seconds between a relayed socket's heartbeats (either side counts the other gone after
        three without a word)."""
        self.timeout_s = timeout_s
        self.queue_bytes = queue_bytes
        """Characters of publications waiting at most (`QUEUE_BYTES`)."""
        self.queue_limit = queue_limit
        """Publications waiting at most (`QUEUE_LIMIT`)."""
        self.queued_bytes = 0
        """Characters of the publications waiting now, the batch being sent included."""
        self.queued = 0
        """Publications waiting now, the batch being sent included."""
        self.refused = 0
        """Publications refused (queue full) since the process started."""
        self._full = False
        """In an episode of a full queue: logged once, until the queue drains to half."""
        self.on_inbox: Callable[[str, str, str, str], None] | None = None
        self._redis: Redis = Redis.from_url(url, socket_connect_timeout=timeout_s)
        self._pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
        self._handlers: dict[str, Callable[[str], None]] = {}
        self._queue: asyncio.Queue[tuple[str, str, asyncio.Future[int] | None] | None] = asyncio.Queue()
        self._tasks: list[asyncio.Task[None]] = []
        self._pending: set[asyncio.Task[None]] = set()
        self._episode = 0
        """Publications refused in the current episode of a full queue."""

    def inbox_channel(self, code: str) -> str:
        """Room ``code``'s inbox channel."""
        return f"{self.prefix}:{{{code}}}:inbox"

    def outbox_channel(self, conn_id: str) -> str:
        """Connection ``conn_id``'s outbox channel."""
        return f"{self.prefix}:conn:{conn_id}:outbox"

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Subscribe to this process's own channel (the subscriber always has one) and start the
        listener and publisher tasks; Redis not answering yet is logged, not raised."""
        try:
            await self.subscribe(f"{self.prefix}:process:{self.process}", lambda _: None)
        except ConnectionError:
            _log.error("redis_unreachable", at="relay_start")
        self._tasks = [
            asyncio.create_task(self._listen(), name="relay-listener"),
            asyncio.create_task(self._publish_loop(), name="relay-publisher"),
        ]

    async def close(self) -> None:
        """Stop both tasks (what is queued is sent first, within ``timeout_s``) and close the
        connections."""
        self._queue.put_nowait(None)  # the publisher stops there (a stop sentinel: never full)
        tasks = [*self._tasks, *self._pending]
        publisher = self._tasks[1:]
        if publisher:
            await asyncio.wait(publisher, timeout=self.timeout_s)
        for task in tasks:
            task.cancel()
        if tasks:  # a cancellation swallowed inside the client must not hang the shutdown
            await asyncio.wait(tasks, timeout=self.timeout_s)
        with contextlib.suppress(Exception):
            await self._pubsub.aclose()
        await self._redis.aclose()

    # -- owning rooms: their inboxes -----------------------------------------------------------

    def host(self, code: str) -> None:
        """Listen on room ``code``'s inbox (this process now holds its lease)."""
        channel = self.inbox_channel(code)
        self._handlers[channel] = lambda record: self._inbox(code, record)
        self._in_background(self._resubscribe(channel, True))

    def unhost(self, code: str) -> None:
        """Stop listening on room ``code``'s inbox (the lease is released or lost)."""
        channel = self.inbox_channel(code)
        if self._handlers.pop(channel, None) is not None:
            self._in_background(self._resubscribe(channel, False))

    def outbox(self, conn_id: str, on_close: Callable[[], None]) -> RelayOutbox:
        """The `RelayOutbox` of relayed connection ``conn_id`` (owner side)."""
        return RelayOutbox(self, conn_id, on_close)

    def link(self, code: str, on_record: Callable[[str], None]) -> RelayLink:
        """A new relayed connection to room ``code`` (relay side)."""
        return RelayLink(self, code, on_record)

    def _inbox(self, code: str, record: str) -> None:
        kind, conn_id, text = [*record.split(" ", 2), "", ""][:3]
        if self.on_inbox is not None:
            self.on_inbox(code, kind, conn_id, text)

    async def _resubscribe(self, channel: str, on: bool) -> None:
        try:
            if on and channel in self._handlers:
                await self._pubsub.subscribe(channel)
            elif not on and channel not in self._handlers:
                await self._pubsub.unsubscribe(channel)
        except (RedisError, OSError) as error:
            _log.warning("relay_subscribe_failed", error=type(error).__name__)

    def _in_background(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    # -- subscriptions ------------------------------------------------------------------------

    async def subscribe(self, channel: str, handler: Callable[[str], None]) -> None:
        """Deliver ``channel``'s messages to ``handler`` from now on. Raises ConnectionError
        when Redis cannot be reached."""
        self._handlers[channel] = handler
        try:
            await bounded(self._pubsub.subscribe(channel), self.timeout_s)
        except ConnectionError:
            self._handlers.pop(channel, None)
            raise

    async def unsubscribe(self, channel: str) -> None:
        """Stop delivering ``channel`` (never raises)."""
        if self._handlers.pop(channel, None) is None:
            return
        with contextlib.suppress(RedisError, OSError, TimeoutError):
            async with asyncio.timeout(self.timeout_s):
                await self._pubsub.unsubscribe(channel)

    async def _listen(self) -> None:
        failing = False  # logged once per outage, not on every retry
        while True:
            try:
                if not self._pubsub.subscribed:
                    await asyncio.sleep(0.05)
                    continue
                message = await self._pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
            except asyncio.CancelledError:
                raise
            except Exception as error:  # Redis gone: the client reconnects and resubscribes
                if not failing:
                    _log.warning("relay_listen_failed", error=type(error).__name__)
                failing = True
                await asyncio.sleep(0.5)
                continue
            if failing:
                _log.info("relay_listening", at="relay")
                failing = False
            if message is None or message.get("type") != "message":
                continue
            channel = message["channel"].decode()
            handler = self._handlers.get(channel)
            if handler is not None:
                try:
                    handler(message["data"].decode())
                except Exception:
                    _log.exception("relay_handler_failed")

    # -- publishing ----------------------------------------------------------------------------

    def publish(self, channel: str, text: str) -> bool:
        """Queue one publication (never blocks; sent in order by the publisher task). False when
        the queue is full and it was not queued (module docstring)."""
        return self._put((channel, text, None))

    async def publish_now(self, channel: str, text: str) -> int:
        """Publish after what is queued; how many subscribers got it. Raises ConnectionError
        when Redis cannot be reached."""
        done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._put((channel, text, done))
        try:
            async with asyncio.timeout(self.timeout_s):
                return await asyncio.shield(done)
        except TimeoutError:
            raise ConnectionError("Redis did not answer") from None

    def _put(self, item: tuple[str, str, asyncio.Future[int] | None]) -> bool:
        size = len(item[0]) + len(item[1])
        if self.queued < self.queue_limit and self.queued_bytes + size <= self.queue_bytes:
            self.queued += 1
            self.queued_bytes += size
            self._queue.put_nowait(item)
            return True
        self.refused += 1
        self._episode += 1
        if not self._full:  # once per episode: no channel, text or token
            self._full = True
            _log.warning(
                "relay_queue_full",
                queued=self.queued,
                queued_bytes=self.queued_bytes,
                limit=self.queue_limit,
                limit_bytes=self.queue_bytes,
                message="Redis does not take the relay's publications fast enough: the relayed "
                "connections that cannot be served are dropped, and their clients reconnect",
            )
        if item[2] is not None:
            item[2].set_exception(ConnectionError("the relay's queue is full"))
        return False

    def _sent(self, batch: list[tuple[str, str, asyncio.Future[int] | None]]) -> None:
        """``batch`` has left the queue (sent or lost): its room is free again."""
        self.queued -= len(batch)
        self.queued_bytes -= sum(len(channel) + len(text) for channel, text, _ in batch)
        if self._full and self.queued_bytes <= self.queue_bytes // 2 and self.queued <= self.queue_limit // 2:
            self._full = False
            _log.info("relay_queue_drained", refused=self._episode, queued=self.queued)
            self._episode = 0

    async def _publish_loop(self) -> None:
        stopping = False
        while not stopping:
            batch: list[tuple[str, str, asyncio.Future[int] | None]] = []
            item = await self._queue.get()
            while True:
                if item is None:
                    stopping = True
                    break
                batch.append(item)
                if self._queue.empty() or len(batch) >= 512:
                    break
                item = self._queue.get_nowait()
            if not batch:
                continue
            try:
                async with asyncio.timeout(self.timeout_s):
                    async with self._redis.pipeline(transaction=False) as pipe:
                        for channel, text, _ in batch:
                            pipe.publish(channel, text)
                        counts = await pipe.execute()
            except (RedisError, OSError, TimeoutError) as error:
                _log.warning("relay_publish_failed", error=type(error).__name__, lost=len(batch))
                for _, _, waiter in batch:
                    if waiter is not None and not waiter.done():
                        waiter.set_exception(ConnectionError("Redis did not answer"))
                continue
            finally:
                self._sent(batch)
            for (_, _, waiter), count in zip(batch, counts, strict=True):
                if waiter is not None and not waiter.done():
                    waiter.set_result(int(count))
