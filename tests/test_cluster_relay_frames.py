"""A hostile client of a room whose socket lands on the process that does not host it (the relay,
docs/cluster.md): two real ``domeng serve`` processes on one PostgreSQL database and one Redis.
Every bad frame closes the relayed socket with the close code it gets on the room's owner (bad
JSON, an unknown type, a reason that echoes a long frame, an oversized or binary frame, a flood, a
second hello, a first frame that is not hello, a forged token); the room's spectator cap counts
the relayed ones; and sockets dropped in every way on the relay leave no subscription in Redis
and no connection on the owner; frames a relayed client keeps sending while the owner's loop for
it is held (a chat line the stalled database is slow to store) close it past
`app.edge.hosting.RELAYED_BACKLOG`, rather than pile up on the owner. Skipped without
DOMENG_TEST_REDIS_URL and DOMENG_TEST_POSTGRES_URL."""

from __future__ import annotations

import base64
import json
import os
import re
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
import redis
from websockets.exceptions import ConnectionClosed

from app.edge.hosting import RELAYED_BACKLOG
from app.store import upgrade_database
from tests.clusterkit import (
    LEASE_S,
    ThreadedProxy,
    key_prefix,
    need_postgres,
    need_redis,
    new_table,
    two_servers,
)
from tests.serverkit import Client, ServerProcess

PREFIX = key_prefix()


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[tuple[ServerProcess, ServerProcess, str]]:
    """Two processes, no handoffs (a relayed socket stays relayed), three spectators a room, pings
    every 3 s, Redis keys and channels under a prefix of this module's own."""
    extra = {
        "DOMENG_ROOM_HANDOFF": "false",
        "DOMENG_MAX_SPECTATORS": "3",
        "DOMENG_REDIS_PREFIX": PREFIX,
        "DOMENG_PING_INTERVAL_S": "3",  # a client that answers no ping is dropped within seconds
        "DOMENG_PING_TIMEOUT_S": "3",
    }
    yield from two_servers(tmp_path, extra)


def _closed(client: Client, frames: list[str | bytes]) -> tuple[int | None, str]:
    """Once ``client`` has the room's state, send ``frames``; the close code and reason it then
    gets (None: the connection dropped without a close frame). The close may come while the
    frames are still being sent (a flood is closed once it passes the allowance, which a busy
    machine's scheduling can make happen before the client has sent the rest): a send then raises
    it as the wait for it does."""
    client.wait_for(lambda m: m["type"] == "state")
    with pytest.raises(ConnectionClosed) as closed:
        for frame in frames:
            client.ws.send(frame)
        client.wait_for(lambda m: False, timeout=20)
    received = closed.value.rcvd
    return (None, "") if received is None else (received.code, received.reason)


BAD = {
    "not JSON": (["{not json"], 1007),
    "an unknown type": ([json.dumps({"type": "frob"})], 1007),
    # the reason echoes the type: 120 characters of 4 bytes each, more than a close frame holds
    "a reason longer than a close frame": (['{"type":"' + "\U0001f600" * 100 + '"}'], 1007),
    "an oversized frame": (["x" * 5000], 1009),
    "a binary frame": ([b"\x00\x01"], 1003),
    "a flood": ([json.dumps({"type": "ping"})] * 40, 1008),
    "a second hello": ([json.dumps({"type": "hello", "protocol": 1, "token": "forged"})], 1007),
    "an action for another seat": (
        [json.dumps({"type": "action", "version": 1, "action": {"seat": 2}})],
        1007,
    ),
}


def test_every_bad_frame_closes_a_relayed_socket_as_it_closes_one_on_the_rooms_owner(
    servers: tuple[ServerProcess, ServerProcess, str],
) -> None:
    owner, relay, _ = servers
    code, token = new_table(owner)
    for what, (frames, expected) in BAD.items():
        for server in (owner, relay):
            where = "relayed" if server is relay else "on the owner"
            closed, reason = _closed(Client(server, code, token), frames)
            assert closed == expected, f"{what} {where}: {closed} {reason!r}"
            assert len(reason.encode()) <= 123
    for server in (owner, relay):
        client = Client(server, code, hello=False)
        client.send({"type": "ping"})
        with pytest.raises(ConnectionClosed) as first:
            client.recv()
        assert first.value.rcvd is not None and first.value.rcvd.code == 1008  # hello first
        with pytest.raises(ConnectionClosed) as forged:
            Client(server, code, "forged-token").recv()
        assert forged.value.rcvd is not None and forged.value.rcvd.code == 4004


def _connections(server: ServerProcess) -> float:
    """The room connections ``server`` serves (its ``domeng_connections`` gauge)."""
    found = re.search(
        r"^domeng_connections (\S+)$", httpx.get(f"{server.url}/metrics", timeout=10).text, re.M
    )
    assert found is not None
    return float(found.group(1))


def _silent_socket(server: ServerProcess, code: str) -> socket.socket:
    """A raw socket that says hello as a spectator of ``code`` and then never reads, nor answers
    a ping (a client gone without a word)."""
    port = server.url.rsplit(":", 1)[1]
    raw = socket.create_connection(("127.0.0.1", int(port)), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    raw.sendall(
        f"GET /ws/rooms/{code} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += raw.recv(1)
    assert answer.startswith(b"HTTP/1.1 101"), answer
    hello = b'{"type":"hello","protocol":1,"token":null}'
    mask = os.urandom(4)
    raw.sendall(bytes([0x81, 0x80 | len(hello)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(hello)))
    return raw


def _settles(read: Callable[[], object], expected: object, timeout: float = 60.0) -> None:
    """Wait (at most ``timeout`` seconds) until ``read()`` equals ``expected``."""
    deadline = time.monotonic() + timeout
    while (value := read()) != expected:
        assert time.monotonic() < deadline, f"still {value}, not {expected}"
        time.sleep(0.1)


def test_a_spectator_past_the_rooms_cap_is_refused_through_the_relay_too(
    servers: tuple[ServerProcess, ServerProcess, str],
) -> None:
    owner, relay, _ = servers
    code, _token = new_table(owner)
    watching = [Client(server, code) for server in (owner, relay, relay)]
    for client in watching:
        client.wait_for(lambda m: m["type"] == "state")
    with pytest.raises(ConnectionClosed) as refused:
        Client(relay, code).wait_for(lambda m: False)
    assert refused.value.rcvd is not None and refused.value.rcvd.code == 4008
    for client in watching:
        client.close()


def test_sockets_dropped_on_the_relay_leave_nothing_behind_there_nor_on_the_owner(
    servers: tuple[ServerProcess, ServerProcess, str],
) -> None:
    owner, relay, _ = servers
    code, token = new_table(owner)
    outboxes = redis.Redis.from_url(os.environ["DOMENG_TEST_REDIS_URL"])

    def relayed() -> int:
        return len(outboxes.pubsub_channels(f"{PREFIX}:conn:*"))

    try:
        for _ in range(10):  # the seat's socket, relayed, cut off (no close frame) once it has the state
            player = Client(relay, code, token)
            player.wait_for(lambda m: m["type"] == "state")
            player.ws.socket.close()
        _settles(lambda: _connections(owner), 0.0)
        _settles(relayed, 0)
        silent = [_silent_socket(relay, code) for _ in range(3)]  # never read, never answer a ping
        _settles(lambda: _connections(owner), 3.0)
        _settles(lambda: _connections(owner), 0.0)  # the relay's pings time out
        _settles(relayed, 0)
        for raw in silent:
            raw.close()
        for _ in range(20):  # a hello, and the socket gone before the owner answers it
            _silent_socket(relay, code).close()
        _settles(lambda: _connections(owner), 0.0)
        _settles(relayed, 0)
    finally:
        outboxes.close()


def test_frames_piling_up_on_the_owner_for_a_relayed_client_close_it(tmp_path: Path) -> None:
    """The owner's loop for a relayed seat is held by a chat line its stalled database does not
    store (for ``DOMENG_DATABASE_TIMEOUT_S``); the client sends more frames than
    `RELAYED_BACKLOG`, well within its message budget on the relay (raised here, so that the
    relay forwards every one). They used to pile up on the owner for as long as the loop was held;
    now the connection closes with 1008 at once, and the room is served on."""
    redis_url, postgres_url = need_redis(), need_postgres()
    upgrade_database(postgres_url)
    env = {
        "DOMENG_REDIS_URL": redis_url,
        "DOMENG_REDIS_PREFIX": key_prefix(),
        "DOMENG_LEASE_S": str(LEASE_S),
        "DOMENG_BOT_DELAY_S": "0.02",
        "DOMENG_BOT_WORKERS": "1",
        "DOMENG_MIGRATE": "false",
        "DOMENG_ROOM_HANDOFF": "false",
        "DOMENG_RATE_LIMIT": "1000 per 1 second",
        "DOMENG_DATABASE_TIMEOUT_S": "60",  # the chat line holds the loop for the whole test
    }
    with ThreadedProxy(postgres_url) as database:
        owner = ServerProcess(tmp_path / "a", env=env, database_url=database.url)
        relay = ServerProcess(tmp_path / "b", env=env, database_url=postgres_url)
        try:
            owner.start()
            relay.start()
            code, token = new_table(owner)
            player = Client(relay, code, token)
            player.wait_for(lambda m: m["type"] == "chat_log")
            database.stall()  # every statement of the owner's waits from now on
            player.send({"type": "chat", "text": "hello"})
            for _ in range(2 * RELAYED_BACKLOG):
                player.send({"type": "ping"})
            with pytest.raises(ConnectionClosed) as closed:
                player.wait_for(lambda m: False, timeout=30)
            assert closed.value.rcvd is not None
            assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (1008, "too many messages")
            database.flow()
            watcher = Client(relay, code)  # the room is served on, through the relay too
            watcher.wait_for(lambda m: m["type"] == "state")
            watcher.close()
        finally:
            database.flow()
            owner.stop()
            relay.stop()
