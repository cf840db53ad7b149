"""nginx's per-address request rates (deploy/nginx.conf, ``limit_req``) through Debian's nginx in
front of two real ``domeng serve`` processes on PostgreSQL and Redis: a table of friends behind one
address (five players and ten spectators, every socket dropped and opened again twice, and a few
rooms created) is never refused, while a flood of socket handshakes or room creations from one
address is answered 429 by nginx itself, before any process is asked, and another address is not
touched by it. The servers' own allowances are lifted (tests/serverkit.py ``FAST``), so every 429
here is nginx's. Skipped without nginx, DOMENG_TEST_REDIS_URL or DOMENG_TEST_POSTGRES_URL."""

from __future__ import annotations

import base64
import os
import socket
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.adminkit import SECRET
from tests.clusterkit import behind_nginx, production_backends
from tests.nginxkit import NGINX, Nginx
from tests.serverkit import Client, ServerProcess

FLOOD = 400
"""Handshakes (and room creations) a flood sends from one address: four times the burst nginx
lets through at once, whatever the pace of the machine."""


@pytest.fixture
def front(tmp_path: Path) -> Iterator[tuple[Nginx, ServerProcess]]:
    """nginx (access log on) in front of two processes, and nginx seen as one server."""
    if NGINX is None:
        pytest.skip("nginx is not installed (apt-get install -y nginx-light)")
    _redis_url, postgres_url, env = production_backends(SECRET)
    servers = [ServerProcess(tmp_path / name, env=env, database_url=postgres_url) for name in ("a", "b")]
    with behind_nginx(tmp_path, servers, access_log=True) as running:
        yield running


def _handshake(port: int, code: str) -> int:
    """The HTTP status nginx answers one WebSocket handshake for room ``code`` with (101: passed on
    and accepted); the socket is closed at once."""
    key = base64.b64encode(os.urandom(16)).decode()
    request = (
        f"GET /ws/rooms/{code} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
        raw.sendall(request.encode())
        answer = b""
        while b"\r\n" not in answer:
            chunk = raw.recv(1024)
            assert chunk, f"nginx closed the handshake without an answer: {answer!r}"
            answer += chunk
    return int(answer.split(b" ", 2)[1])


def test_a_table_behind_one_address_reconnecting_is_never_refused_by_nginxs_rates(
    front: tuple[Nginx, ServerProcess],
) -> None:
    nginx, server = front
    room = server.create_room(bots=[None] * 5, turn_timer_s=0)
    code = room["code"]
    tokens = []
    for seat in range(5):
        claimed = server.claim(code, seat, f"P{seat}")
        assert claimed.status_code == 201, claimed.text
        tokens.append(claimed.json()["token"])
    for _ in range(3):  # every socket opened, then all dropped at once and opened again, twice
        clients = [Client(server, code, token) for token in tokens]
        clients += [Client(server, code) for _ in range(10)]
        for client in clients:
            client.wait_for(lambda m: m["type"] == "state")
        for client in clients:
            client.close()
    for _ in range(5):  # the friends' next tables
        server.create_room(bots=[None, "greedy", "greedy", "greedy", "greedy"])
    assert not [r for r in nginx.requests() if r.status == 429]


def test_a_flood_of_socket_handshakes_from_one_address_is_refused_by_nginx(
    front: tuple[Nginx, ServerProcess],
) -> None:
    nginx, server = front
    code = server.create_room(bots=[None, "greedy", "greedy", "greedy", "greedy"])["code"]
    with ThreadPoolExecutor(8) as flooding:
        answers = list(flooding.map(lambda _: _handshake(nginx.port, code), range(FLOOD)))
    assert set(answers) <= {101, 429}, answers
    assert answers.count(429) > 0
    refused = nginx.requests_once(lambda r: r.uri.startswith("/ws/") and r.status == 429, answers.count(429))
    assert len(refused) == answers.count(429)
    assert all(r.tried == () for r in refused)  # no process was asked
    spectator = Client(server, code, source="127.0.0.2")  # another address is not held back
    spectator.wait_for(lambda m: m["type"] == "state")
    spectator.close()


def test_a_flood_of_room_creations_from_one_address_is_refused_by_nginx_in_the_apis_words(
    front: tuple[Nginx, ServerProcess],
) -> None:
    nginx, server = front
    body = {"bots": [None, "greedy", "greedy", "greedy", "greedy"]}
    with httpx.Client(base_url=server.url, timeout=30) as http, ThreadPoolExecutor(8) as flooding:
        replies = list(flooding.map(lambda _: http.post("/api/rooms", json=body), range(FLOOD // 4)))
    statuses = [reply.status_code for reply in replies]
    assert set(statuses) <= {201, 429}, statuses
    refused = [reply for reply in replies if reply.status_code == 429]
    assert refused
    for reply in refused:  # the page's own words for it (static/js/api.js reads the code)
        assert reply.json()["detail"]["code"] == "too_many_rooms"
        assert reply.headers["Retry-After"] == "1"
    logged = nginx.requests_once(lambda r: r.method == "POST" and r.status == 429, len(refused))
    assert len(logged) == len(refused) and all(r.tried == () for r in logged)
    # the room's own calls are not creations, and another address creates as before
    created = next(reply.json()["code"] for reply in replies if reply.status_code == 201)
    assert httpx.get(f"{server.url}/api/rooms/{created}", timeout=10).status_code == 200
    with server.http_from("127.0.0.2") as elsewhere:
        assert elsewhere.post("/api/rooms", json=body).status_code == 201
