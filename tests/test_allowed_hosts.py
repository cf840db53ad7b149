"""The server answers only to the Host names it is reached by (DOMENG_ALLOWED_HOSTS; Starlette's
TrustedHostMiddleware judges them, app.web.middleware.AllowedHosts): a page on another domain
that resolves to 127.0.0.1 (DNS rebinding) gets 400 for its requests and its WebSocket
handshakes. Unset, a server listening on a loopback address (the quick start) answers to the
loopback names only; one listening on every address answers to any name and says once at start
how to set it."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
from pathlib import Path

import httpx
import pytest
from pydantic import ValidationError

from app.web.app import create_app
from app.web.middleware import HOST_REFUSED
from app.web.settings import LOOPBACK_HOSTS, Settings
from tests.serverkit import ServerProcess

REBOUND = "rebind.example"
"""A domain whose DNS an attacker pointed at 127.0.0.1: a browser sends its name as the Host."""


def test_unset_the_loopback_names_only_when_listening_on_a_loopback_address() -> None:
    assert Settings(host="127.0.0.1").resolved_allowed_hosts() == list(LOOPBACK_HOSTS)
    assert Settings(host="::1").resolved_allowed_hosts() == list(LOOPBACK_HOSTS)
    assert Settings(host="localhost").resolved_allowed_hosts() == list(LOOPBACK_HOSTS)
    assert Settings(host="0.0.0.0").resolved_allowed_hosts() is None  # any, and a warning
    assert Settings(host="192.0.2.7").resolved_allowed_hosts() is None
    public = Settings(host="127.0.0.1", public_url="https://Play.example:8443/")
    assert public.resolved_allowed_hosts() == [*LOOPBACK_HOSTS, "play.example"]
    named = Settings(host="0.0.0.0", allowed_hosts=" play.example, *.domeng.example ,192.0.2.7")
    assert named.resolved_allowed_hosts() == [
        *LOOPBACK_HOSTS,
        "play.example",
        "*.domeng.example",
        "192.0.2.7",
    ]
    assert Settings(host="127.0.0.1", allowed_hosts="*").resolved_allowed_hosts() == ["*"]


def test_the_setting_is_read_from_domeng_allowed_hosts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOMENG_ALLOWED_HOSTS", "play.example,[2001:db8::7]")
    assert Settings(host="0.0.0.0").resolved_allowed_hosts() == [
        *LOOPBACK_HOSTS,
        "play.example",
        "[2001:db8::7]",
    ]


@pytest.mark.parametrize(
    "wrong", ["play.example:8443", "https://play.example", "play.example/x", "a*b", "::1"]
)
def test_a_name_that_could_never_match_is_refused_at_start(wrong: str) -> None:
    with pytest.raises(ValidationError, match="DOMENG_ALLOWED_HOSTS"):
        Settings(allowed_hosts=f"localhost,{wrong}")


def test_a_request_naming_another_host_is_refused_with_a_clear_400(tmp_path: Path) -> None:
    async def main() -> None:
        app = create_app(Settings(data_dir=tmp_path, bot_workers=1, log_json=False, log_level="warning"))
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 40000))
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http,
        ):
            for host in ("127.0.0.1:8000", "localhost:8000", "LOCALHOST", "[::1]:8000", "127.0.0.1"):
                assert (await http.get("/healthz", headers={"Host": host})).status_code == 200, host
            for host in (f"{REBOUND}:8000", REBOUND, "127.0.0.1.rebind.example", "[::2]:8000", "", "a b"):
                refused = await http.get("/api/room-defaults", headers={"Host": host})
                assert refused.status_code == 400, host
                assert refused.text == HOST_REFUSED and "DOMENG_ALLOWED_HOSTS" in refused.text
                assert REBOUND not in refused.text
                assert refused.headers["x-frame-options"] == "DENY"  # the security headers too
            created = await http.post("/api/rooms", json={}, headers={"Host": REBOUND})
            assert created.status_code == 400 and not app.state.hub.rooms  # nothing was done

    asyncio.run(main())


def _handshake(url: str, host: str, path: str = "/ws/rooms/nope") -> bytes:
    """A WebSocket handshake sent to the server at ``url`` naming ``host``: its answer's head."""
    address, port = url.removeprefix("http://").split(":")
    with socket.create_connection((address, int(port)), timeout=10) as sock:
        key = base64.b64encode(os.urandom(16)).decode()
        sock.sendall(
            (
                f"GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        received = b""
        while b"\r\n\r\n" not in received and (chunk := sock.recv(4096)):
            received += chunk
    return received


@pytest.mark.parametrize("ws_impl", ["websockets-sansio", "websockets", "wsproto"])
def test_a_rebound_page_reaches_neither_the_api_nor_a_room_socket(tmp_path: Path, ws_impl: str) -> None:
    server = ServerProcess(tmp_path, {"DOMENG_WS_IMPL": ws_impl}).start()  # the quick start: 127.0.0.1
    try:
        port = server.url.rsplit(":", 1)[1]
        room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"])
        path = f"/ws/rooms/{room['code']}"
        refused = httpx.get(f"{server.url}/", headers={"Host": f"{REBOUND}:{port}"}, timeout=10)
        assert refused.status_code == 400 and refused.text == HOST_REFUSED
        made = httpx.post(
            f"{server.url}/api/rooms", json={}, headers={"Host": f"{REBOUND}:{port}"}, timeout=10
        )
        assert made.status_code == 400
        head = _handshake(server.url, f"{REBOUND}:{port}", path)
        assert head.startswith(b"HTTP/1.1 400"), head[:200]
        assert _handshake(server.url, f"127.0.0.1:{port}", path).startswith(b"HTTP/1.1 101")
        assert _handshake(server.url, f"localhost:{port}", path).startswith(b"HTTP/1.1 101")
        assert httpx.get(f"{server.url}/", timeout=10).status_code == 200  # the quick start's page
        assert not [line for line in server.log().splitlines() if "allowed_hosts_unset" in line]
    finally:
        server.stop()


def test_listening_on_every_address_unset_answers_any_host_and_says_once_how_to_set_it(
    tmp_path: Path,
) -> None:
    server = ServerProcess(tmp_path, host="0.0.0.0").start()
    try:
        reply = httpx.get(f"{server.url}/healthz", headers={"Host": "192.0.2.7:8000"}, timeout=10)
        assert reply.status_code == 200
        warned = [json.loads(line) for line in server.log().splitlines() if '"allowed_hosts_unset"' in line]
        assert len(warned) == 1 and warned[0]["level"] == "warning", warned
        assert "DOMENG_ALLOWED_HOSTS=" in str(warned[0]["message"])
    finally:
        server.stop()
    # named: play.example, and 0.0.0.0, which the tests' client names as it reaches the server by it
    named = ServerProcess(tmp_path, {"DOMENG_ALLOWED_HOSTS": "play.example,0.0.0.0"}, host="0.0.0.0").start()
    try:
        assert (
            httpx.get(f"{named.url}/healthz", headers={"Host": "play.example"}, timeout=10).status_code == 200
        )
        assert httpx.get(f"{named.url}/healthz", headers={"Host": REBOUND}, timeout=10).status_code == 400
        assert "allowed_hosts_unset" not in named.log()
    finally:
        named.stop()
