"""The relay between processes (docs/cluster.md, app/cluster/relay.py) on a real Redis: a
`RelayLink` reaches the owner hosting a room's inbox, the owner's `RelayOutbox` frames come back
in order, closes and heartbeats, and a room nobody hosts is refused. Skipped without
DOMENG_TEST_REDIS_URL."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from app.cluster import RedisRelay
from tests.clusterkit import key_prefix, need_redis, wait_until


@asynccontextmanager
async def relays(url: str) -> AsyncIterator[tuple[RedisRelay, RedisRelay]]:
    """An owner's relay and an edge's relay on Redis at ``url``, keys under a prefix of their own."""
    prefix = key_prefix()
    owner = RedisRelay(url, prefix=prefix, process="owner")
    edge = RedisRelay(url, prefix=prefix, process="edge")
    await owner.start()
    await edge.start()
    try:
        yield owner, edge
    finally:
        await edge.close()
        await owner.close()


async def _hosted(owner: RedisRelay, edge: RedisRelay, code: str) -> None:
    """Wait until ``owner``'s subscription to ``code``'s inbox is in place (it is made in the
    background): a heartbeat published there reaches one subscriber."""
    owner.host(code)
    probe = edge.link(code, lambda _: None)
    async with asyncio.timeout(10):
        while not await probe.beat():
            await asyncio.sleep(0.01)


def test_frames_reach_the_relay_in_order_then_the_close() -> None:
    url = need_redis()

    async def main() -> None:
        async with relays(url) as (owner, edge):
            await _frames_in_order(owner, edge)

    asyncio.run(main())


async def _frames_in_order(owner: RedisRelay, edge: RedisRelay) -> None:
    inbox: list[tuple[str, str, str, str]] = []
    owner.on_inbox = lambda *record: inbox.append(record)
    await _hosted(owner, edge, "ROOM")
    got: list[str] = []
    link = edge.link("ROOM", got.append)
    assert await link.open('{"type":"hello","protocol":1}')
    await wait_until(lambda: any(kind == "open" for _, kind, _, _ in inbox))
    code, _, conn_id, hello = next(r for r in inbox if r[1] == "open")
    assert (code, conn_id, hello) == ("ROOM", link.conn_id, '{"type":"hello","protocol":1}')
    closed: list[bool] = []
    outbox = owner.outbox(conn_id, lambda: closed.append(True))
    frames = [f'{{"type":"state","version":{v}}}' for v in range(1, 301)]
    for frame in frames:
        outbox.send(frame)
    outbox.close("room_moved")
    outbox.send('{"type":"state","version":999}')  # after the close: dropped
    await wait_until(lambda: len(got) == len(frames) + 1)
    assert got == [*frames, "!close room_moved"]
    assert outbox.closed and closed == [True]
    # the client's frames and the relay's heartbeat and goodbye reach the owner in order
    link.post('{"type":"sync"}')
    assert await link.beat(1.25)
    await link.close(7.5)
    await wait_until(lambda: inbox[-1][1] == "bye")
    assert [(k, t) for _, k, c, t in inbox if c == link.conn_id][1:] == [
        ("msg", '{"type":"sync"}'),
        ("beat", "1.250"),  # the client's silence (seconds), from which the owner counts its grace
        ("bye", "7.500"),
    ]


def test_a_room_nobody_hosts_is_not_answered() -> None:
    url = need_redis()

    async def main() -> None:
        async with relays(url) as (owner, edge):
            await _nobody_hosts(owner, edge)

    asyncio.run(main())


async def _nobody_hosts(owner: RedisRelay, edge: RedisRelay) -> None:
    link = edge.link("NOBODY", lambda _: None)
    assert not await link.open('{"type":"hello","protocol":1}')
    await link.close()
    # an owner that stops hosting the room: the relay's heartbeat finds no one listening
    await _hosted(owner, edge, "GONE")
    other = edge.link("GONE", lambda _: None)
    assert await other.open('{"type":"hello","protocol":1}')
    owner.unhost("GONE")
    async with asyncio.timeout(10):
        while await other.beat():
            await asyncio.sleep(0.01)
    await other.close()
