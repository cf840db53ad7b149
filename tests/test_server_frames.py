"""A room socket's client may send only so many frames that are not a whole message (pings, pongs,
a fragmented message's fragments: `app.edge.heard.FRAME_BURST` per `app.edge.heard.FRAME_PER_S`),
whichever WebSocket library uvicorn runs: past that the server cuts it off. uvicorn answered every
ping and parsed every fragment outside the room socket's message budget; one address flooding them
held every other client's requests for seconds."""

from __future__ import annotations

import os
import socket
import struct
from collections.abc import Iterator

import pytest

from app.edge.heard import FRAME_BURST
from tests.serverkit import Client, ServerProcess, closed_with

FLOOD = 10 * FRAME_BURST
"""Frames of one kind a flood sends at once: far past the allowance."""


def _frame(opcode: int, payload: bytes, fin: bool = True) -> bytes:
    """One masked client frame (RFC 6455) of at most 125 bytes of ``payload``."""
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return struct.pack("!BB", (0x80 if fin else 0) | opcode, 0x80 | len(payload)) + mask + masked


def _spectator(server: ServerProcess, code: str) -> socket.socket:
    """A raw room socket, upgraded and past its ``hello`` (a spectator's)."""
    port = int(server.url.rsplit(":", 1)[1])
    sock = socket.create_connection(("127.0.0.1", port), timeout=20)
    sock.sendall(
        (
            f"GET /ws/rooms/{code} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
        ).encode()
    )
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 101"), answer
    sock.sendall(_frame(1, b'{"type": "hello", "protocol": 1, "token": null}'))
    return sock


def _cut_off(sock: socket.socket) -> bool:
    """Whether the server ends the connection (EOF or reset) while answering what it got; False
    when it still holds it open after 20 s."""
    try:
        while sock.recv(65536):
            pass
    except TimeoutError:
        return False
    except OSError:
        pass  # reset: cut off
    return True


@pytest.fixture(scope="module", params=["websockets-sansio", "wsproto", "websockets"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    # the server's own pings come late: an unanswered one never closes a socket during a test
    env = {"DOMENG_WS_IMPL": request.param, "DOMENG_PING_INTERVAL_S": "60", "DOMENG_PING_TIMEOUT_S": "60"}
    process = ServerProcess(tmp_path_factory.mktemp("frames"), env).start()
    yield process
    process.stop()


@pytest.mark.parametrize(
    "flood",
    [
        _frame(9, b"x" * 125) * FLOOD,  # pings: each answered with a pong
        _frame(10, b"x" * 125) * FLOOD,  # pongs nobody asked for
        # one message in one-byte fragments: a text frame, then continuations
        _frame(1, b"{", fin=False) + _frame(0, b" ", fin=False) * FLOOD + _frame(0, b'"type": "ping"}'),
    ],
    ids=["pings", "pongs", "fragments"],
)
def test_a_client_flooding_frames_that_are_no_whole_message_is_cut_off(
    server: ServerProcess, flood: bytes
) -> None:
    code = server.create_room(bots=["easy"] * 5)["code"]
    attacker = _spectator(server, code)
    attacker.sendall(flood)
    assert _cut_off(attacker), "the server still holds the flooding socket open"
    attacker.close()
    player = Client(server, code)  # everyone else is served on
    player.wait_for(lambda m: m["type"] == "chat_log")
    player.close()


def test_a_client_within_the_allowance_is_answered(server: ServerProcess) -> None:
    """A few pings, a pong and a message in two fragments (a script's library may split one) are
    answered as before."""
    code = server.create_room(bots=["easy"] * 5)["code"]
    sock = _spectator(server, code)
    frames = [_frame(9, b"are you there") for _ in range(FRAME_BURST // 4)] + [_frame(10, b"here")]
    sock.sendall(b"".join(frames) + _frame(1, b'{"type": ', fin=False) + _frame(0, b'"ping"}'))
    seen = b""
    while b'{"type":"pong"}' not in seen:  # the answer to the message, after the welcome and state
        chunk = sock.recv(65536)
        assert chunk, "the server closed a socket within its allowance"
        seen += chunk
    assert seen.count(b"are you there") == FRAME_BURST // 4  # each ping answered with its pong
    sock.close()


def test_a_message_whose_refusal_echoes_more_than_a_close_frame_holds_closes_with_its_code(
    server: ServerProcess,
) -> None:
    """The refusal of an unknown type names it, cut at 120 characters: of 4 bytes each, more than
    the 123 bytes a close frame's reason holds. The close itself failed, and the client saw its
    socket drop (no close frame) instead of 1007; the reason is now cut to fit."""
    code = server.create_room(bots=["easy"] * 5)["code"]
    client = Client(server, code)
    client.wait_for(lambda m: m["type"] == "state")
    client.ws.send('{"type":"' + "\U0001f600" * 100 + '"}')
    closed, reason = closed_with(client)
    assert closed == 1007 and reason.startswith("invalid message") and len(reason.encode()) <= 123
