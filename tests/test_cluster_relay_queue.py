"""The relay's queue of publications (app/cluster/relay.py) with Redis stalled: a flood of frames
for relayed connections holds at most `app.cluster.relay.QUEUE_BYTES` of text, the connections
whose records do not fit are dropped (the owner's outboxes closed, the relay's client socket told
1013, so the clients reconnect and resume), the episode is logged once with no frame's text, and
the relay serves again once Redis flows. Before, the queue took 100,000 records whatever their size
(400 MB of 4 KiB states in one process) and dropped single frames after that. A real Redis (through
a `tests.clusterkit.TcpProxy` per process, made to stall); skipped without DOMENG_TEST_REDIS_URL."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
import structlog

from app.cluster import RedisRelay, relay
from tests.clusterkit import TcpProxy, key_prefix, need_redis, wait_until

HELLO = '{"type":"hello","protocol":1}'
FRAME = '{"type":"state","pad":"' + "x" * 4096 + '"}'
"""A state's size, and text no log line may hold."""


def _held(publisher: RedisRelay) -> int:
    """The text waiting in ``publisher``'s queue, counted from the queue itself (channel and
    record, as the bound counts them)."""
    items: Any = publisher._queue._queue  # type: ignore[attr-defined]
    return sum(len(item[0]) + len(item[1]) for item in items if item is not None)


def test_a_stalled_redis_bounds_the_queue_and_drops_the_connections_it_cannot_serve(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = need_redis()
    # a logger of its own: a cached one (an app made in this process before) escapes capture_logs,
    # and one that filters as an app made before set (app.web.logs: at "warning", say) drops the info
    unfiltered = structlog.make_filtering_bound_logger(logging.DEBUG)
    monkeypatch.setattr(relay, "_log", structlog.wrap_logger(None, wrapper_class=unfiltered))

    async def main() -> list[dict[str, Any]]:
        prefix = key_prefix()
        owner_path, edge_path = await TcpProxy(url).start(), await TcpProxy(url).start()
        owner = RedisRelay(owner_path.url, prefix=prefix, process="owner", timeout_s=1.0)
        edge = RedisRelay(edge_path.url, prefix=prefix, process="edge", timeout_s=1.0)
        await owner.start()
        await edge.start()
        try:
            with structlog.testing.capture_logs() as logged:
                await _flood(owner_path, edge_path, owner, edge)
            return logged
        finally:
            await owner_path.flow()
            await edge_path.flow()
            await edge.close()
            await owner.close()
            await owner_path.cut()
            await edge_path.cut()

    logged = asyncio.run(main())
    full = [e for e in logged if e["event"] == "relay_queue_full"]
    assert len(full) == 2, logged  # once per process and episode, not once per refused record
    assert all(e["log_level"] == "warning" for e in full)
    drained = [e for e in logged if e["event"] == "relay_queue_drained"]
    assert drained and all(e["refused"] > 0 for e in drained)
    assert not any("x" * 64 in str(e) or "hello" in str(e) for e in logged)  # no frame's text


async def _flood(owner_path: TcpProxy, edge_path: TcpProxy, owner: RedisRelay, edge: RedisRelay) -> None:
    inbox: list[tuple[str, str, str, str]] = []
    owner.on_inbox = lambda *record: inbox.append(record)
    owner.host("ROOM")
    probe = edge.link("ROOM", lambda _: None)
    async with asyncio.timeout(10):  # the owner's subscription is made in the background
        while not await probe.beat():
            await asyncio.sleep(0.01)
    got: list[str] = []
    link = edge.link("ROOM", got.append)
    assert await link.open(HELLO)
    await wait_until(lambda: any(kind == "open" for _, kind, _, _ in inbox))
    closed: list[str] = []
    served = owner.outbox(link.conn_id, lambda: closed.append(link.conn_id))
    served.send('{"v":0}')
    await wait_until(lambda: '{"v":0}' in got)  # the path works

    await owner_path.stall()
    await edge_path.stall()
    # the owner: a room's frames to its relayed connections, twice what the queue may hold
    others = [f"elsewhere:{n}" for n in range(3)]
    outboxes = [served, *(owner.outbox(conn, lambda conn=conn: closed.append(conn)) for conn in others)]
    for _ in range(2 * relay.QUEUE_BYTES // (len(outboxes) * len(FRAME)) + 1):
        for outbox in outboxes:
            outbox.send(FRAME)
    assert _held(owner) <= relay.QUEUE_BYTES, "the queue grew past its bound"
    assert owner.queued_bytes == _held(owner)  # its count is the queue's (the publisher has not run)
    assert all(outbox.closed for outbox in outboxes)
    assert sorted(closed) == sorted([link.conn_id, *others]), "each dropped once"
    # the relay: its client's frames to the owner, twice what the queue may hold
    for _ in range(2 * relay.QUEUE_BYTES // len(FRAME) + 1):
        link.post(FRAME)
    assert _held(edge) <= relay.QUEUE_BYTES, "the queue grew past its bound"
    told = [record for record in got if record.startswith("!")]
    assert told == ["!code 1013 the relay to the room's server is overloaded; try again"]
    assert not await link.beat()  # refused too: the queue is full

    await owner_path.flow()
    await edge_path.flow()
    async with asyncio.timeout(60):  # what was held goes out, or is lost with its batch
        while owner.queued or edge.queued:
            await asyncio.sleep(0.05)
    # served again: a new connection's frame reaches its relay
    again: list[str] = []
    fresh = edge.link("ROOM", again.append)
    assert await fresh.open(HELLO)
    owner.outbox(fresh.conn_id, lambda: None).send('{"v":1}')
    await wait_until(lambda: again == ['{"v":1}'], timeout=30)
    await fresh.close()
    await link.close()
