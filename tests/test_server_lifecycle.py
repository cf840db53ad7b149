"""Rooms in memory on a real server (issue 13): one address cannot fill the server, idle rooms
leave memory and come back when opened, a server that has hosted many matches still creates
rooms, and a full server refuses a socket's handshake with the security headers of every answer.
Clients at different loopback addresses (127.0.0.0/8) count as different players."""

from __future__ import annotations

import base64
import errno
import fcntl
import json
import os
import re
import subprocess
import sys
import time
from importlib.util import find_spec
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus

from app.store.db import hold_sqlite
from app.web.middleware import security_headers
from tests.conftest import domeng_cli
from tests.serverkit import ROOT, Client, ServerProcess

KOZEL = {"variant": "kozel", "seats": 2, "bots": [None, "greedy"]}


def _rooms_in_memory(server: ServerProcess) -> int:
    metrics = httpx.get(f"{server.url}/metrics", timeout=10).text
    found = re.search(r"^domeng_rooms (\d+(?:\.\d+)?)$", metrics, re.MULTILINE)
    assert found, metrics[:500]
    return int(float(found.group(1)))


def test_one_address_cannot_fill_the_server_even_across_a_restart(tmp_path: Path) -> None:
    env = {
        "DOMENG_MAX_ROOMS_PER_ADDRESS": "5",
        "DOMENG_MAX_ROOMS": "8",
        "DOMENG_ROOM_CREATE_LIMIT": "1000 per minute",
    }
    server = ServerProcess(tmp_path, env, fresh=True).start()  # as the README's command starts it
    try:
        with server.http_from("127.0.0.2") as greedy:
            made = 0
            while made < 50:
                reply = greedy.post("/api/rooms", json=KOZEL)
                if reply.status_code != 201:
                    break
                made += 1
            print(f"\nrooms one address created before it was refused: {made}")
            assert made == 5
            assert reply.status_code == 429 and reply.json()["detail"]["code"] == "too_many_open_rooms"
            assert reply.headers["Retry-After"]
        with server.http_from("127.0.0.3") as other:
            assert other.post("/api/rooms", json=KOZEL).status_code == 201
    finally:
        server.stop()
    again = ServerProcess(tmp_path, env).start()
    try:
        assert _rooms_in_memory(again) == 0  # nothing loads at start: rooms come back when opened
        with again.http_from("127.0.0.4") as newcomer:
            assert newcomer.post("/api/rooms", json=KOZEL).status_code == 201
    finally:
        again.stop()


def _until_in_memory(server: ServerProcess, rooms: int) -> None:
    deadline = time.monotonic() + 60
    while _rooms_in_memory(server) != rooms:
        assert time.monotonic() < deadline, f"never {rooms} rooms in memory"
        time.sleep(0.1)  # waiting for the sweeper


def _watch(server: ServerProcess, code: str) -> Client:
    """A spectator: the room is in use while it stays (idle rooms leave memory)."""
    watcher = Client(server, code)
    watcher.wait_for(lambda m: m["type"] == "state")
    return watcher


def test_rooms_opened_again_count_against_both_caps(tmp_path: Path) -> None:
    """Letting rooms leave memory and opening their links again does not get around the caps:
    a room loaded again counts for the address that created it, and no room is loaded past the
    server's cap (one address could otherwise hold every room in memory)."""
    env = {
        "DOMENG_MAX_ROOMS_PER_ADDRESS": "2",
        "DOMENG_MAX_ROOMS": "3",
        "DOMENG_ROOM_UNLOAD_AFTER_S": "0.5",
        "DOMENG_ROOM_CREATE_LIMIT": "1000 per minute",
    }
    server = ServerProcess(tmp_path, env).start()
    watchers: list[Client] = []
    try:
        with server.http_from("127.0.0.2") as greedy, server.http_from("127.0.0.3") as other:
            first = [greedy.post("/api/rooms", json=KOZEL).json()["code"] for _ in range(2)]
            _until_in_memory(server, 0)  # nobody came: both left memory
            later = [greedy.post("/api/rooms", json=KOZEL).json()["code"] for _ in range(2)]
            watchers += [_watch(server, code) for code in later]
            # its creator has 2 rooms in memory: an old link does not load a third, whoever opens it
            for client in (greedy, other):
                reply = client.get(f"/api/rooms/{first[0]}")
                assert reply.status_code == 429, reply.text
                assert reply.json()["detail"]["code"] == "too_many_open_rooms"
                assert reply.headers["Retry-After"]
            watchers.pop().close()
            _until_in_memory(server, 1)
            assert other.get(f"/api/rooms/{first[0]}").status_code == 200  # one of its 2 again
            watchers.append(_watch(server, first[0]))
            made = other.post("/api/rooms", json=KOZEL)
            assert made.status_code == 201, made.text
            watchers.append(_watch(server, made.json()["code"]))
            # 3 rooms in memory: no other is loaded, not even one whose creator has room to spare
            reply = other.get(f"/api/rooms/{first[1]}")
            assert reply.status_code == 503 and reply.json()["detail"]["code"] == "server_full", reply.text
            assert _rooms_in_memory(server) == 3
            # a code that names no room is told so, full or not: no room is loaded for it, nor
            # one that is idle unloaded to make room (a stranger's made-up links never do that)
            unknown = other.get("/api/rooms/AAAAAAAAAAAAAAAAAAAAAA")
            assert unknown.status_code == 404, unknown.text
            assert unknown.json()["detail"]["code"] == "no_such_room"
            with pytest.raises(ConnectionClosed) as closed:
                Client(server, "AAAAAAAAAAAAAAAAAAAAAA").recv(timeout=10)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 4003
    finally:
        for watcher in watchers:
            watcher.close()
        server.stop()


def test_idle_rooms_leave_memory_so_a_busy_server_still_creates_rooms(tmp_path: Path) -> None:
    """A server holding at most 10 rooms hosts 60 matches one after another: each is created,
    started, played a move and left; it leaves memory, and its link brings it back."""
    env = {
        "DOMENG_MAX_ROOMS": "10",
        "DOMENG_ROOM_UNLOAD_AFTER_S": "0.5",
        "DOMENG_ROOM_CREATE_LIMIT": "1000 per minute",
    }
    server = ServerProcess(tmp_path, env).start()
    codes: list[tuple[str, str]] = []
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            for _ in range(60):
                deadline = time.monotonic() + 60
                while (reply := http.post("/api/rooms", json=KOZEL)).status_code == 503:
                    assert reply.json()["detail"]["code"] == "server_full"
                    assert time.monotonic() < deadline, "idle rooms never left memory"
                    time.sleep(0.1)  # waiting for the sweeper to unload a room
                assert reply.status_code == 201, reply.text
                code, host = reply.json()["code"], reply.json()["host_token"]
                token = http.post(f"/api/rooms/{code}/seats/0", json={"name": "Ana"}).json()["token"]
                assert http.post(
                    f"/api/rooms/{code}/start", headers={"Authorization": f"Bearer {host}"}
                ).is_success
                player = Client(server, code, token)
                turn = player.wait_for(lambda m: m["type"] == "state" and m["view"] is not None)
                player.close()
                assert turn["view"]["seat"] == 0
                codes.append((code, token))
            assert _rooms_in_memory(server) <= 10
            # an old room's link brings it back from the store, as it was left
            code, token = codes[0]
            back = Client(server, code, token)
            state = back.wait_for(lambda m: m["type"] == "state")
            assert state["room"]["status"] == "playing" and state["view"]["seat"] == 0
            back.close()
            assert http.get(f"/api/rooms/{codes[1][0]}").json()["status"] == "playing"
    finally:
        server.stop()
    assert '"room_unloaded"' in server.log() and '"room_loaded"' in server.log()


_WS_IMPLS = [
    "websockets-sansio",
    "websockets",
    pytest.param("wsproto", marks=pytest.mark.skipif(find_spec("wsproto") is None, reason="no wsproto")),
]
"""The WebSocket implementations uvicorn runs here (``DOMENG_WS_IMPL``); wsproto where installed."""


def _handshake(server: ServerProcess, path: str, key: bool = True) -> httpx.Response:
    """The answer to a WebSocket handshake for ``path`` sent as raw HTTP (``key``: with its
    ``Sec-WebSocket-Key``, without which it is malformed); only a refusal is expected."""
    headers = {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13"}
    if key:
        headers["Sec-WebSocket-Key"] = base64.b64encode(os.urandom(16)).decode()
    return httpx.get(f"{server.url}{path}", headers=headers, timeout=30)


@pytest.mark.parametrize("ws_impl", _WS_IMPLS)
def test_every_refused_socket_handshake_has_the_security_headers_of_every_response(
    tmp_path: Path, ws_impl: str
) -> None:
    """Every refusal of a socket's handshake carries the same security headers as a page,
    whichever WebSocket implementation runs and whoever writes the refusal: a full server's 503
    for a room it would have to load (the application's answer, so a proxy tries another
    process), and uvicorn's own 403 (a path with no socket) and 400 (a malformed handshake)."""
    env = {"DOMENG_MAX_ROOMS": "1", "DOMENG_ROOM_UNLOAD_AFTER_S": "0.5", "DOMENG_WS_IMPL": ws_impl}
    server = ServerProcess(tmp_path, env).start()
    watchers: list[Client] = []
    try:
        with server.http_from("127.0.0.2") as http:
            unloaded = http.post("/api/rooms", json=KOZEL).json()["code"]
            _until_in_memory(server, 0)
            watchers.append(_watch(server, http.post("/api/rooms", json=KOZEL).json()["code"]))
            page = http.get("/")
        with pytest.raises(InvalidStatus) as refused:
            Client(server, unloaded)
        full = refused.value.response
        assert full.status_code == 503 and int(full.headers["Retry-After"]) >= 1
        assert json.loads(full.body)["detail"]["code"] == "server_full"
        nowhere = _handshake(server, "/ws/no-such-socket")
        malformed = _handshake(server, f"/ws/rooms/{unloaded}", key=False)
        assert (nowhere.status_code, malformed.status_code) == (403, 400)
        expected = {name.lower() for name in security_headers().headers}
        assert expected <= {name.lower() for name in page.headers}  # what every response has
        answers = {
            503: {name: full.headers.get_all(name) for name in expected},
            403: {name: nowhere.headers.get_list(name) for name in expected},
            400: {name: malformed.headers.get_list(name) for name in expected},
        }
        for status, answer in answers.items():
            for name in expected:  # each once, as on the page
                assert answer[name] == [page.headers[name]], (status, name)
    finally:
        for watcher in watchers:
            watcher.close()
        server.stop()


def _rooms_loaded(server: ServerProcess) -> int:
    """How many rooms the server has loaded from the store since it started (the metric)."""
    metrics = httpx.get(f"{server.url}/metrics", timeout=10).text
    found = re.search(r"^domeng_rooms_loaded_total (\d+(?:\.\d+)?)$", metrics, re.MULTILINE)
    assert found, metrics[:500]
    return int(float(found.group(1)))


def test_the_lobbys_status_read_answers_without_loading_a_room(tmp_path: Path) -> None:
    """The lobby's "Your tables" asks about up to 8 rooms on every visit: one read answers each
    room's status, game and seats from the store, and the rooms that had left memory stay out of
    it (opening a room's link loads it: the public read of one room does). A room in memory is
    answered from memory, the same as the public read tells anyone; an unknown code is null."""
    server = ServerProcess(tmp_path, {"DOMENG_ROOM_UNLOAD_AFTER_S": "0.5"}).start()
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            waiting = server.create_room(**KOZEL)["code"]
            assert server.claim(waiting, 0, "Ana").status_code == 201
            made = server.create_room(**KOZEL)
            playing = made["code"]
            assert server.claim(playing, 0, "Budi").status_code == 201
            assert server.start_match(playing, made["host_token"]).status_code == 200
            _until_in_memory(server, 0)
            loaded = _rooms_loaded(server)
            gone = "NoSuchRoomAnyMore0000a"
            reply = http.get("/api/rooms/status", params={"codes": f"{waiting},{playing},{gone},{waiting}"})
            assert reply.status_code == 200, reply.text
            rooms = reply.json()["rooms"]
            assert list(rooms) == [waiting, playing, gone] and rooms[gone] is None
            assert [rooms[c]["status"] for c in (waiting, playing)] == ["waiting", "playing"]
            assert rooms[waiting]["seats"][0] == {
                "seat": 0,
                "kind": "human",
                "name": "Ana",
                "bot_level": None,
            }
            assert rooms[playing]["seats"][1]["kind"] == "bot" and rooms[playing]["variant"] == "kozel"
            assert _rooms_in_memory(server) == 0 and _rooms_loaded(server) == loaded  # nothing loaded
            assert '"room_loaded"' not in server.log()

            public = http.get(f"/api/rooms/{playing}").json()  # a link opened: loaded
            assert _rooms_in_memory(server) == 1 and _rooms_loaded(server) == loaded + 1
            for stored in (
                rooms[playing],
                http.get(f"/api/rooms/status?codes={playing}").json()["rooms"][playing],
            ):
                assert {k: public[k] for k in ("code", "match", "variant", "status")} == {
                    k: stored[k] for k in ("code", "match", "variant", "status")
                }
                assert stored["seats"] == [{k: s[k] for k in stored["seats"][0]} for s in public["seats"]]
            assert _rooms_loaded(server) == loaded + 1
    finally:
        server.stop()


def test_a_socket_refused_at_its_addresss_cap_loads_no_room(tmp_path: Path) -> None:
    """A socket past ``DOMENG_MAX_SOCKETS_PER_ADDRESS`` is refused (1008) before its room is looked
    up: a room that had left memory stays out of it (nor is it loaded and unloaded again)."""
    env = {"DOMENG_MAX_SOCKETS_PER_ADDRESS": "1", "DOMENG_ROOM_UNLOAD_AFTER_S": "0.5"}
    server = ServerProcess(tmp_path, env).start()
    try:
        held, left = (server.create_room(**KOZEL)["code"] for _ in range(2))
        _until_in_memory(server, 0)
        watcher = _watch(server, held)  # the address's one socket
        loaded = _rooms_loaded(server)
        with pytest.raises(ConnectionClosed) as closed:
            Client(server, left).recv(timeout=10)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
        assert "too many connections" in closed.value.rcvd.reason
        assert _rooms_loaded(server) == loaded and _rooms_in_memory(server) == 1  # only the watched one
        watcher.close()
    finally:
        server.stop()


def test_a_second_server_on_the_same_sqlite_database_refuses_to_start(tmp_path: Path) -> None:
    """A new user's report: the README's "port 8000 taken? `scripts/run --port 8080`" started a
    second server from the same checkout while the first (the one holding port 8000) still ran,
    both on data/domeng.sqlite3 and with no lease between them: a room opened on each was played
    apart on each, both writing its match. The second now says which server holds the database and
    exits with status 1 before it touches it; the first plays on, and once it stops the database
    is free for the next."""
    server = ServerProcess(tmp_path, fresh=True).start()
    try:
        code = server.create_room(**KOZEL)["code"]
        second = subprocess.run(
            [sys.executable, "-m", "app.cli", "serve", "--port", "0", "--data-dir", str(tmp_path)],
            check=False,
            cwd=ROOT,
            env=server.env,
            capture_output=True,
            text=True,
            timeout=90,
        )
        holder = int((tmp_path / "domeng.sqlite3.lock").read_text())
        assert second.returncode == 1, second.stderr[-2000:]
        assert second.stderr.startswith(
            f"domeng serve: another Domeng server (process {holder}) is serving "
        ), second.stderr[-2000:]
        assert "--data-dir" in second.stderr
        assert "server_ready" not in second.stderr + second.stdout  # it never served
        assert server.room(code)["code"] == code  # the first plays on
    finally:
        server.stop()
    again = ServerProcess(tmp_path).start()  # the first one gone, its database is free
    try:
        assert again.room(code)["code"] == code
    finally:
        again.stop()


def test_a_file_url_with_escapes_locks_the_database_it_opens(tmp_path: Path) -> None:
    """A ``file:`` SQLite URI whose path has ``%20`` for SQLite (``%2520`` in the URL, which
    SQLAlchemy decodes once): the server's lock sits beside the file SQLite opens, so a second
    server given that file's plain path is refused. Before, the lock went into a directory
    literally named ``my%20data``, and the second server started beside the first on one file."""
    folder = tmp_path / "my data"
    uri = f"sqlite+aiosqlite:///file:{quote(quote(str(folder)), safe='/')}/domeng.sqlite3?uri=true"
    server = ServerProcess(tmp_path / "a", database_url=uri).start()
    try:
        assert (folder / "domeng.sqlite3").is_file()
        assert int((folder / "domeng.sqlite3.lock").read_text()) > 0
        assert not list(tmp_path.glob("my%*"))  # no directory named as the URI's escapes
        second = domeng_cli(
            "serve", "--port", "0", "--database-url", f"sqlite+aiosqlite:///{folder}/domeng.sqlite3"
        )
        assert second.returncode == 1, second.stderr[-2000:]
        assert "domeng serve: another Domeng server (process " in second.stderr, second.stderr[-2000:]
    finally:
        server.stop()


def test_serve_on_a_data_dir_it_cannot_write_says_so(tmp_path: Path) -> None:
    """A data directory `domeng serve` cannot write (here: one under a regular file; likewise a
    read-only one) stops it with one line saying where, not a traceback from the lock file beside
    the database."""
    blocked = tmp_path / "a-file"
    blocked.write_text("", encoding="utf-8")
    done = domeng_cli("serve", "--port", "0", "--data-dir", str(blocked / "data"))
    assert done.returncode == 1, done.stderr[-2000:]
    assert done.stderr.startswith("domeng serve: cannot write beside the database "), done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "--data-dir" in done.stderr


def test_a_file_system_without_flock_serves_without_the_hold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Some mounts (network, FUSE) answer ``flock`` with ENOLCK or EOPNOTSUPP, which says nothing
    of another server: the hold is skipped (None, its file closed) rather than the server refused,
    as it ran before the hold existed (another process holding it is still refused:
    test_a_second_server_on_the_same_sqlite_database_refuses_to_start)."""
    opened: list[int] = []
    real_open = os.open

    def tracked_open(*args: Any, **kwargs: Any) -> int:
        opened.append(real_open(*args, **kwargs))
        return opened[-1]

    def no_flock(fd: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))

    monkeypatch.setattr(os, "open", tracked_open)
    monkeypatch.setattr(fcntl, "flock", no_flock)
    assert hold_sqlite(tmp_path / "domeng.sqlite3") is None
    with pytest.raises(OSError, match="Bad file descriptor"):
        os.fstat(opened[0])  # closed
