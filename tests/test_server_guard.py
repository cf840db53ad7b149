"""A server one client cannot take down (issue 13, "Connections"), on real processes and sockets.

An attacker at 127.0.0.2 holds half-sent and idle connections; the player at 127.0.0.1 (Linux
routes all of 127.0.0.0/8 to the loopback) still loads the lobby, creates a room and plays a
round. Half-sent requests and idle keep-alive connections are closed by the request deadline, the
server's open-files limit is never reached by one address, and when it is reached (many
addresses), the accept loop's reports are logged at a bounded rate.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import structlog.testing
import uvicorn
import websockets
from fastapi import FastAPI, WebSocket, WebSocketDisconnect

from app.web import guard
from app.web.guard import ConnectionGuard, guarded_protocol
from tests.serverkit import Client, ServerProcess

ATTACKER = "127.0.0.2"
PARTIAL = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "


def _port(server: ServerProcess) -> int:
    return int(server.url.rsplit(":", 1)[1])


def _open(server: ServerProcess, source: str, payload: bytes | None = PARTIAL) -> socket.socket:
    """A connection from ``source`` that sends ``payload`` (a request's first bytes) and waits."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((source, 0))
    sock.settimeout(10)
    sock.connect(("127.0.0.1", _port(server)))
    if payload:
        with contextlib.suppress(OSError):  # refused at once: a reset
            sock.sendall(payload)
    return sock


def _is_open(sock: socket.socket) -> bool:
    """Whether the server still holds ``sock`` open (no EOF, no reset)."""
    sock.settimeout(0)  # non-blocking: a peek that would wait means open
    try:
        return sock.recv(1, socket.MSG_DONTWAIT | socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False


def _wait_closed(socks: list[socket.socket], timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    for sock in socks:
        sock.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            while sock.recv(4096):  # whatever the server answers, then its EOF
                pass
        except TimeoutError:
            raise AssertionError("the server still holds a connection open") from None
        except OSError:
            pass  # reset: closed


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[ServerProcess]:
    server = ServerProcess(
        tmp_path,
        {
            "DOMENG_REQUEST_TIMEOUT_S": "2",
            "DOMENG_KEEP_ALIVE_S": "2",
            "DOMENG_MAX_CONNECTIONS_PER_ADDRESS": "40",
        },
    ).start()
    try:
        yield server
    finally:
        server.stop()


def test_half_sent_silent_and_idle_keep_alive_connections_are_closed(guarded: ServerProcess) -> None:
    half_sent = [_open(guarded, ATTACKER) for _ in range(10)]
    silent = [_open(guarded, ATTACKER, None) for _ in range(5)]
    idle = [_open(guarded, ATTACKER, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") for _ in range(5)]
    # a keep-alive connection that answered one request, then starts another and stops halfway
    trickle = _open(guarded, ATTACKER, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert trickle.recv(4096).startswith(b"HTTP/1.1 200")
    trickle.sendall(b"GET /healthz HTTP/1.1\r\n")
    _wait_closed([*half_sent, *silent, *idle, trickle])
    assert httpx.get(f"{guarded.url}/healthz", timeout=10).status_code == 200


def test_one_address_holds_at_most_its_cap_of_connections(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, {"DOMENG_MAX_CONNECTIONS_PER_ADDRESS": "40"}).start()
    socks = [_open(server, ATTACKER) for _ in range(60)]
    try:
        deadline = time.monotonic() + 60
        while sum(not _is_open(s) for s in socks) < 20 and time.monotonic() < deadline:
            time.sleep(0.05)  # the server accepts, then refuses, in its own time
        held = sum(_is_open(s) for s in socks)
        assert 0 < held <= 40, held
        # another address is not counted with it
        assert httpx.get(f"{server.url}/healthz", timeout=10).status_code == 200
    finally:
        for sock in socks:
            sock.close()
        server.stop()


def _play_one_round(server: ServerProcess) -> dict[str, float]:
    """The other player, at 127.0.0.1: the lobby, a new Domeng room against four bots, one round."""
    started = time.monotonic()
    with httpx.Client(base_url=server.url, timeout=30) as http:
        assert http.get("/").status_code == 200
        bots = [None, "greedy", "greedy", "greedy", "greedy"]
        room = http.post("/api/rooms", json={"variant": "domeng", "bots": bots})
        assert room.status_code == 201, room.text
        created = time.monotonic()
        code, host = room.json()["code"], room.json()["host_token"]
        token = http.post(f"/api/rooms/{code}/seats/0", json={"name": "Ana"}).json()["token"]
        assert http.post(f"/api/rooms/{code}/start", headers={"Authorization": f"Bearer {host}"}).is_success
    player = Client(server, code, token)
    first_move, answered = None, -1
    try:
        while True:
            message = player.recv(timeout=60)
            assert message["type"] != "error", message
            if message["type"] == "state" and message["room"]["last_round"] is not None:
                break  # the first round is over, its seed revealed
            if message["type"] != "state" or message["version"] <= answered:
                continue  # one answer per version
            if player.answer(message):
                answered = message["version"]
                first_move = first_move or time.monotonic()
    finally:
        player.close()
    assert first_move is not None
    return {
        "create_s": created - started,
        "first_move_s": first_move - started,
        "round_s": time.monotonic() - started,
    }


def test_a_slowloris_from_one_address_leaves_the_server_to_everyone(tmp_path: Path) -> None:
    """1,100 half-sent connections from one address against a server limited to 1,024 open files;
    the attacker opens them again as fast as the server closes them, while another client plays."""
    server = ServerProcess(tmp_path, nofile=1024).start()
    stop = threading.Event()
    held: list[socket.socket] = []

    def attack() -> None:
        while not stop.is_set():
            for sock in [s for s in held if not _is_open(s)]:
                held.remove(sock)
                sock.close()
            while len(held) < 1100 and not stop.is_set():
                try:
                    held.append(_open(server, ATTACKER))
                except OSError:
                    break
            stop.wait(0.2)  # the attacker's pace between rounds of reconnecting

    attacker = threading.Thread(target=attack, daemon=True)
    try:
        attacker.start()
        deadline = time.monotonic() + 120
        while len(held) < 1100 and time.monotonic() < deadline and attacker.is_alive():
            stop.wait(0.05)
        assert len(held) >= 1100, "the attacker never had its 1,100 connections"
        figures = _play_one_round(server)
        print(f"\nslowloris (1,100 connections from one address, RLIMIT_NOFILE 1,024): {json.dumps(figures)}")
        stop.set()
        attacker.join(30)
        # what the server still holds of the attacker's connections: at most its cap (64)
        deadline = time.monotonic() + 60
        while sum(_is_open(s) for s in held) > 64 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sum(_is_open(s) for s in held) <= 64
        assert '"connections_refused"' in server.log()
    finally:
        stop.set()
        attacker.join(30)
        for sock in held:
            sock.close()
        server.stop()
    assert "Traceback" not in server.log()


def test_running_out_of_file_descriptors_is_logged_at_a_bounded_rate(tmp_path: Path) -> None:
    """Many addresses together exhaust a small open-files limit: asyncio reports the failed
    accept once a second; the server writes the first report and then one line per window with
    the count it left out, and serves again once the connections are gone. (asyncio's loop: uvloop,
    the default, says nothing there, which the process cap covers.)"""
    window = 3.0
    server = ServerProcess(
        tmp_path,
        {
            "DOMENG_MAX_CONNECTIONS_PER_ADDRESS": "0",
            "DOMENG_MAX_CONNECTIONS": "0",  # no cap below the limit: the accept loop meets it
            "DOMENG_LOOP": "asyncio",  # whose accept loop reports it
            "DOMENG_LOOP_ERROR_WINDOW_S": str(window),
        },
        nofile=160,
    ).start()
    socks: list[socket.socket] = []
    try:
        started = time.monotonic()
        for i in range(300):
            socks.append(_open(server, f"127.0.1.{1 + i % 200}"))
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            lines = _loop_errors(server)
            if any(line["unlogged"] > 0 for line in lines):
                break
            time.sleep(0.2)
        elapsed = time.monotonic() - started
        lines = _loop_errors(server)
        assert any(line["unlogged"] > 0 for line in lines), server.log()[-2000:]
        assert all("out of system resource" in line["message"] for line in lines)
        assert len(lines) <= 2 + elapsed / window, (len(lines), elapsed)
    finally:
        for sock in socks:
            sock.close()
    try:
        _answers_again(server)  # the descriptors are back
    finally:
        server.stop()
    assert len(server.log()) < 200_000


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_a_full_process_refuses_more_connections_with_a_log_line_on_either_loop(
    tmp_path: Path, loop: str
) -> None:
    """Many addresses together reach the process's cap, a little below its open-files limit (160:
    128 connections, `app.web.guard.open_files_cap`): each one more is closed at once and the
    refusals are logged at a bounded rate, on asyncio's loop and on uvloop's (libuv meeting the
    limit itself accepts and closes a connection without a word, so without the cap an operator
    heard nothing). The server answers again once the connections are gone."""
    if loop == "uvloop":
        pytest.importorskip("uvloop", reason="uvloop is not installed")
    server = ServerProcess(
        tmp_path, {"DOMENG_MAX_CONNECTIONS_PER_ADDRESS": "0", "DOMENG_LOOP": loop}, nofile=160
    ).start()
    socks: list[socket.socket] = []
    try:
        for i in range(300):
            socks.append(_open(server, f"127.0.1.{1 + i % 200}"))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and '"connections_refused_process_full"' not in server.log():
            time.sleep(0.2)
        refusals = _logged(server, "connections_refused_process_full")
        assert refusals and refusals[0]["total"] == 128, server.log()[-2000:]
    finally:
        for sock in socks:
            sock.close()
    try:
        _answers_again(server)
    finally:
        server.stop()


def test_a_low_open_files_limit_is_named_at_start_with_how_to_raise_it(tmp_path: Path) -> None:
    """An open-files limit of 40 leaves 8 connections beside the server's reserve of 32 (it holds
    about 30 files of its own): the cap is 8, and at start a warning names the limit and how to
    raise it. (The server refused all but a few connections without a word.) The cap stays what
    the descriptors allow: one more connection would meet the limit in the accept loop, which
    uvloop closes silently."""
    server = ServerProcess(tmp_path, {"DOMENG_MAX_CONNECTIONS_PER_ADDRESS": "0"}, nofile=40).start()
    try:
        warnings = _logged(server, "open_files_limit_low")
        assert len(warnings) == 1, server.log()[-2000:]
        assert warnings[0]["level"] == "warning"
        assert warnings[0]["open_files_limit"] == 40 and warnings[0]["max_connections"] == 8
        assert "ulimit -n" in str(warnings[0]["message"])
        assert _logged(server, "open_files_limit_raised") == []  # its hard limit is 40 too
        assert httpx.get(f"{server.url}/healthz", timeout=10).status_code == 200
    finally:
        server.stop()


def test_the_soft_open_files_limit_is_raised_to_the_hard_one_at_start(tmp_path: Path) -> None:
    """A shell's ``ulimit -n`` often leaves the soft limit (here 256) far below the hard one (here
    4,096): the server raises it to the hard limit at start, as Go's runtime and the JVM do, and
    says so; its cap of connections follows the raised limit, and no warning is needed."""
    server = ServerProcess(tmp_path, {"DOMENG_MAX_CONNECTIONS_PER_ADDRESS": "0"}, nofile=(256, 4096)).start()
    try:
        assert server.proc is not None
        assert _open_files_limits(server.proc.pid) == (4096, 4096)
        raised = _logged(server, "open_files_limit_raised")
        assert len(raised) == 1, server.log()[-2000:]
        assert (raised[0]["raised_from"], raised[0]["raised_to"]) == (256, 4096)
        assert _logged(server, "open_files_limit_low") == []
    finally:
        server.stop()


def test_a_hard_limit_too_low_is_still_named_once_the_soft_one_is_raised(tmp_path: Path) -> None:
    """Soft 40, hard 80: raised to 80, which leaves 48 connections beside the reserve, too few for
    a few players: the warning names the raised limit."""
    server = ServerProcess(tmp_path, {"DOMENG_MAX_CONNECTIONS_PER_ADDRESS": "0"}, nofile=(40, 80)).start()
    try:
        assert server.proc is not None and _open_files_limits(server.proc.pid) == (80, 80)
        raised = _logged(server, "open_files_limit_raised")
        assert [(e["raised_from"], e["raised_to"]) for e in raised] == [(40, 80)], server.log()[-2000:]
        warnings = _logged(server, "open_files_limit_low")
        assert len(warnings) == 1 and warnings[0]["level"] == "warning"
        assert (warnings[0]["open_files_limit"], warnings[0]["hard_limit"]) == (80, 80)
        assert warnings[0]["max_connections"] == 48
    finally:
        server.stop()


def _open_files_limits(pid: int) -> tuple[int, int]:
    """Process ``pid``'s open-files limits, soft and hard, as the kernel shows them
    (/proc/PID/limits, "Max open files")."""
    for line in (Path("/proc") / str(pid) / "limits").read_text().splitlines():
        if line.startswith("Max open files"):
            soft, hard = line.split()[3:5]
            return int(soft), int(hard)
    raise AssertionError(f"no open-files limit for process {pid}")


def test_a_low_open_files_limit_is_warned_of_and_a_large_one_is_not(monkeypatch: pytest.MonkeyPatch) -> None:
    limits = {"soft": 33, "hard": 33}
    monkeypatch.setattr(guard.resource, "getrlimit", lambda _: (limits["soft"], limits["hard"]))
    # a logger of its own: an app made in this process before (create_app) caches the module's
    # logger on its first use, and capture_logs cannot reach a cached one
    monkeypatch.setattr(guard, "_log", structlog.get_logger("domeng.guard"))
    with structlog.testing.capture_logs() as logged:
        assert guard.connections_cap(None) == 1  # said: a limit of 33 leaves one connection
        limits["soft"] = 95  # 63 beside the reserve: too few, said, whatever the cap set
        assert guard.connections_cap(None) == 63 and guard.connections_cap(0) == 0
        limits.update(soft=96, hard=4096)  # 64: enough; the usual 1,024 too
        assert guard.connections_cap(None) == 64
        limits["soft"] = 1024
        assert guard.connections_cap(None) == 1024 - 51 and guard.connections_cap(500) == 500
    warned = [e for e in logged if e["event"] == "open_files_limit_low"]
    said = [(e["open_files_limit"], e["max_connections"]) for e in warned]
    assert said == [(33, 1), (95, 63), (95, 0)]
    assert all(e["log_level"] == "warning" for e in logged)


def _answers_again(server: ServerProcess, timeout: float = 60.0) -> None:
    """Wait until ``server`` answers ``/healthz`` with 200 (its descriptors free again); raises
    the last HTTP error after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            assert httpx.get(f"{server.url}/healthz", timeout=10).status_code == 200
            return
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def _logged(server: ServerProcess, event: str) -> list[dict[str, object]]:
    """The JSON log lines of ``server`` with ``event``, in order."""
    return [json.loads(line) for line in server.log().splitlines() if f'"{event}"' in line]


def _loop_errors(server: ServerProcess) -> list[dict[str, object]]:
    return _logged(server, "event_loop_error")


def test_a_full_room_refuses_one_more_spectator_with_a_clear_reason(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, {"DOMENG_MAX_SPECTATORS": "2"}).start()
    try:
        room = server.create_room(variant="kozel", seats=2, bots=[None, "greedy"])
        token = server.claim(room["code"], 0, "Ana").json()["token"]
        watchers = [Client(server, room["code"]) for _ in range(2)]
        for watcher in watchers:
            watcher.wait_for(lambda m: m["type"] == "state")
        one_more = Client(server, room["code"])
        with pytest.raises(websockets.ConnectionClosed) as closed:
            one_more.wait_for(lambda m: False)
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 4008  # its own code: the page says why (before: 1008)
        assert "spectators" in closed.value.rcvd.reason
        # a seated player is never refused, and a spectator's place frees when one leaves
        player = Client(server, room["code"], token)
        assert player.wait_for(lambda m: m["type"] == "welcome")["seat"] == 0
        watchers[0].close()
        deadline = time.monotonic() + 30
        while True:
            again = Client(server, room["code"])
            try:
                assert again.wait_for(lambda m: m["type"] == "welcome", timeout=10)["seat"] is None
                break
            except websockets.ConnectionClosed:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)  # the room has not yet seen the first one go
    finally:
        server.stop()


@pytest.mark.parametrize("ws_impl", ["websockets-sansio", "websockets"])
def test_a_socket_that_never_finishes_opening_is_dropped_whatever_the_websocket_library(
    tmp_path: Path, ws_impl: str
) -> None:
    """Every stage of opening a room's socket is bounded, with the legacy ``websockets`` too (its
    own 10 s handshake limit only starts once uvicorn's HTTP protocol has the whole upgrade
    request): a connection that sends nothing, half an upgrade request, or a whole one and then no
    ``hello`` is closed by the server (request deadline, then hello timeout)."""
    env = {"DOMENG_REQUEST_TIMEOUT_S": "2", "DOMENG_HELLO_TIMEOUT_S": "2", "DOMENG_WS_IMPL": ws_impl}
    server = ServerProcess(tmp_path, env).start()
    try:
        code = server.create_room(bots=["greedy"] * 5)["code"]
        upgrade = (
            f"GET /ws/rooms/{code} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
        ).encode()
        silent = _open(server, ATTACKER, None)
        half = _open(server, ATTACKER, upgrade[: len(upgrade) // 2])
        no_hello = _open(server, ATTACKER, upgrade)
        no_hello.settimeout(30)
        assert no_hello.recv(4096).startswith(b"HTTP/1.1 101")  # opened: now the hello is awaited
        _wait_closed([silent, half, no_hello])
        player = Client(server, code)  # the server still serves the room
        player.wait_for(lambda m: m["type"] == "state")
        player.close()
    finally:
        server.stop()


class _Open(asyncio.BaseTransport):
    """A transport that stays open until a test says it is ``closing`` (the guard only asks
    whether one is closing)."""

    closing = False

    def is_closing(self) -> bool:
        return self.closing


def test_the_guard_counts_an_ipv6_peer_by_its_64_and_exempts_a_proxy_by_its_address() -> None:
    guard = ConnectionGuard(2, exempt=["2001:db8:ff::1"])
    same = [_Open() for _ in range(3)]
    assert guard.admit("2001:db8:1:2::1", same[0]) and guard.admit("2001:db8:1:2::2", same[1])
    assert not guard.admit("2001:db8:1:2:ffff::3", same[2])  # a third address of the same /64
    assert guard.admit("2001:db8:1:3::1", _Open())  # the next /64
    assert guard.open_count("2001:db8:1:2::77") == 2
    guard.release("2001:db8:1:2::1", same[0])  # released under the address it came from
    assert guard.admit("2001:db8:1:2:ffff::3", same[2])
    assert all(guard.admit("2001:db8:ff::1", _Open()) for _ in range(5))  # the proxy: never capped
    assert guard.admit("203.0.113.1", _Open()) and guard.admit("203.0.113.2", _Open())  # IPv4: each alone


def test_the_last_connection_of_an_ipv6_peer_is_released_under_its_64() -> None:
    """Released, the last connection of a /64 leaves no count behind. (release looked the /64 up,
    then deleted the emptied entry under the peer's own address: a KeyError in the protocol's
    connection_lost, and the empty entry stayed until a sweep.)"""
    guard = ConnectionGuard(1)
    first, second = _Open(), _Open()
    assert guard.admit("2001:db8:1:2::1", first)
    guard.release("2001:db8:1:2::1", first)
    assert guard.open_count("2001:db8:1:2::1") == 0
    assert guard.admit("2001:db8:1:2::2", second)  # the /64's one place is free again
    guard.release("2001:db8:1:2::2", second)
    assert guard.open_count("2001:db8:1:2::2") == 0


def test_the_process_cap_counts_every_address_the_exempt_proxy_too() -> None:
    now = [0.0]
    guard = ConnectionGuard(2, exempt=["10.0.0.1"], total=3, clock=lambda: now[0])
    held = [_Open(), _Open(), _Open()]
    assert guard.admit("10.0.0.1", held[0]) and guard.admit("10.0.0.1", held[1])  # the proxy
    assert guard.admit("203.0.113.1", held[2])
    late = _Open()
    assert not guard.admit("203.0.113.2", late)  # an address under its own cap: the process is full
    assert guard.refused == 1 and guard.open_total() == 3
    guard.release("10.0.0.1", held[0])  # a connection seen closing by its protocol
    assert guard.admit("203.0.113.2", late)
    held[1].closing = True  # an upgraded WebSocket that closed: forgotten when the cap is next met
    now[0] += 1.0
    assert guard.admit("203.0.113.3", _Open()) and guard.open_total() == 3
    # a connection its address's cap refuses is not counted against the process either
    single = ConnectionGuard(1, total=5)
    assert single.admit("203.0.113.1", _Open()) and not single.admit("203.0.113.1", _Open())
    assert single.open_total() == 1 and single.refused == 1


class _CountingGuard(ConnectionGuard):
    released = 0

    def release(self, address: str, transport: asyncio.BaseTransport) -> None:
        self.released += 1
        super().release(address, transport)


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_a_closed_websocket_leaves_the_process_cap_at_once_on_either_loop(loop: str) -> None:
    """A WebSocket that closes is released by the guard when its connection is lost, as an HTTP
    connection is: a process that has had more WebSockets than its cap, one at a time, still takes
    the next. (A closed WebSocket stayed counted until the cap was met and a sweep, at most every
    0.1 s, found it closing: a process holding one connection refused another as full. The
    guard's clock stands still here, so no such sweep comes.)"""
    if loop == "uvloop":
        pytest.importorskip("uvloop", reason="uvloop is not installed")
    app = FastAPI()

    @app.websocket("/ws")
    async def echo(sock: WebSocket) -> None:
        await sock.accept()
        with contextlib.suppress(WebSocketDisconnect):
            while True:
                await sock.send_text(await sock.receive_text())

    guard = _CountingGuard(0, total=2, clock=lambda: 0.0)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, loop=loop, http=guarded_protocol(guard, 10.0), log_level="warning"
    )
    server = uvicorn.Server(config)

    async def main() -> None:
        serving = asyncio.ensure_future(server.serve())
        try:
            while not server.started:
                assert not serving.done()
                await asyncio.sleep(0.01)
            for count in range(1, 7):
                async with websockets.connect(f"ws://127.0.0.1:{port}/ws", open_timeout=30) as ws:
                    await ws.send("hi")
                    assert await asyncio.wait_for(ws.recv(), 30) == "hi"
                async with asyncio.timeout(30):  # the server sees it gone
                    while guard.released < count:
                        await asyncio.sleep(0.01)
            assert guard.refused == 0
        finally:
            server.should_exit = True
            await serving

    if loop == "uvloop":
        import uvloop  # noqa: PLC0415

        uvloop.run(main())
    else:
        asyncio.run(main())
