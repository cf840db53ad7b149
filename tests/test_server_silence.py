"""A player whose network drops without a word keeps the seat for the grace, not for the grace on
top of the time the server takes to notice (`app.edge.heard`): a real server, a seat held by a
raw socket that goes silent (it stops reading and never answers a ping again, as behind a dead
network: no FIN, no RST), and a spectator who sees the bot cover the seat. A client whose side
ends the connection (a reset) was there to do it: its grace counts from then."""

from __future__ import annotations

import base64
import json
import os
import socket
import struct
import time
from pathlib import Path
from typing import Any

from tests.serverkit import Client, ServerProcess

PING_INTERVAL_S = 5.0
PING_TIMEOUT_S = 25.0
GRACE_S = 30.0


def _masked_text(text: str) -> bytes:
    """One masked text frame, as a client sends it (RFC 6455 §5.2)."""
    payload = text.encode()
    mask = os.urandom(4)
    size = len(payload)
    length = bytes([0x80 | size]) if size < 126 else bytes([0x80 | 126]) + struct.pack("!H", size)
    head = bytes([0x81]) + length
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def _silent_seat(server: ServerProcess, code: str, token: str) -> socket.socket:
    """A socket that opens ``code``'s room with seat ``token``, waits for its welcome, and from then
    on says nothing: the caller never reads from it or writes to it again."""
    host, port = server.url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        (
            f"GET /ws/rooms/{code} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    received = b""
    while b"\r\n\r\n" not in received:
        received += sock.recv(4096)
    assert received.startswith(b"HTTP/1.1 101"), received[:200]
    sock.sendall(_masked_text(json.dumps({"type": "hello", "protocol": 1, "token": token})))
    while b'"welcome"' not in received:
        chunk = sock.recv(65536)
        assert chunk, "the server closed the socket before its welcome"
        received += chunk
    return sock


def _seat0(message: dict[str, Any]) -> dict[str, Any] | None:
    if message["type"] == "presence":
        seat: dict[str, Any] = message["seats"][0]
        return seat
    if message["type"] == "state" and message.get("room"):
        seat = message["room"]["seats"][0]
        return seat
    return None


def test_a_silent_network_costs_the_seat_the_grace_not_the_grace_after_the_ping_timeout(
    tmp_path: Path,
) -> None:
    env = {
        "DOMENG_PING_INTERVAL_S": str(PING_INTERVAL_S),
        "DOMENG_PING_TIMEOUT_S": str(PING_TIMEOUT_S),
        "DOMENG_DISCONNECT_GRACE_S": str(GRACE_S),
    }
    server = ServerProcess(tmp_path / "silence", env=env).start()
    sock: socket.socket | None = None
    try:
        room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
        code = room["code"]
        token = server.claim(code, 0, "Ana").json()["token"]
        sock = _silent_seat(server, code, token)
        assert server.start_match(code, room["host_token"]).status_code == 200
        watcher = Client(server, code)
        watcher.wait_for(lambda m: m["type"] == "state" and (s := _seat0(m)) is not None and s["connected"])
        silent_from = time.monotonic()  # Ana's socket says nothing from now on
        watcher.wait_for(lambda m: (s := _seat0(m)) is not None and s["covered"], timeout=120)
        covered_after = time.monotonic() - silent_from
        # Only a generous upper bound, and one far from both sides on a loaded machine: the
        # server hears nothing after silent_from, so the grace runs out at most GRACE_S (30 s)
        # after it; before the fix the grace began only once a ping went unanswered, at least
        # PING_TIMEOUT_S later, so the seat was covered no sooner than 55 s after it.
        assert covered_after < GRACE_S + 15, f"covered {covered_after:.0f} s after the network went silent"
        watcher.close()
    finally:
        if sock is not None:
            sock.close()
        server.stop()


def _wait_for_ping(sock: socket.socket) -> None:
    """Read the server's frames (unmasked, RFC 6455 §5.2) until a ping comes."""
    buffer = b""
    while True:
        while len(buffer) < 2 or len(buffer) < _frame_size(buffer):
            chunk = sock.recv(65536)
            assert chunk, "the server closed the socket before it pinged"
            buffer += chunk
        size = _frame_size(buffer)
        if buffer[0] & 0x0F == 0x9:
            return
        buffer = buffer[size:]


def _frame_size(buffer: bytes) -> int:
    """The whole size of the server frame that ``buffer`` starts with (2 when unknown yet)."""
    length = buffer[1] & 0x7F
    if length == 126:
        return 4 + struct.unpack("!H", buffer[2:4])[0] if len(buffer) >= 4 else 4
    if length == 127:
        return 10 + struct.unpack("!Q", buffer[2:10])[0] if len(buffer) >= 10 else 10
    return 2 + length


def test_a_client_that_resets_its_connection_gets_the_whole_grace(tmp_path: Path) -> None:
    """Silent for longer than the grace, and then resetting the connection (a phone switching
    networks): the reset is the client's word, so its grace starts then, and it is back in time."""
    grace_s = 15.0
    env = {"DOMENG_PING_INTERVAL_S": "20", "DOMENG_PING_TIMEOUT_S": "60", "DOMENG_DISCONNECT_GRACE_S": "15"}
    server = ServerProcess(tmp_path / "reset", env=env).start()
    try:
        room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
        code = room["code"]
        token = server.claim(code, 0, "Ana").json()["token"]
        sock = _silent_seat(server, code, token)
        assert server.start_match(code, room["host_token"]).status_code == 200
        watcher = Client(server, code)
        sock.settimeout(90)
        _wait_for_ping(sock)  # 20 s after Ana's last word: longer than her grace
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()  # a reset (RST), not a closing handshake
        gone = watcher.wait_for(lambda m: (s := _seat0(m)) is not None and not s["connected"], timeout=60)
        assert _seat0(gone)["covered"] is False  # type: ignore[index]
        back = Client(server, code, token)  # back well within the grace (15 s), even on a loaded machine
        back.wait_for(lambda m: m["type"] == "state")
        watcher.wait_for(lambda m: (s := _seat0(m)) is not None and s["connected"], timeout=60)
        seen = [s for m in watcher.messages + back.messages if (s := _seat0(m)) is not None]
        assert not any(s["covered"] for s in seen), f"covered though back within {grace_s:g} s"
        back.close()
        watcher.close()
    finally:
        server.stop()
