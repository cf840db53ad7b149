"""The production shape without containers (issue 15, "Running it"): the database migrated once by
``domeng migrate``, two ``domeng serve`` processes that do not migrate (``DOMENG_MIGRATE=false``)
on one PostgreSQL database and one Redis, and Debian's nginx in front of them with
deploy/nginx.conf (tests/nginxkit.py). Everything goes through nginx: the lobby, a room, a player
on its WebSocket; ``kill -9`` of the room's owner, and the player reconnects through nginx with
its token and plays on. Skipped without nginx, DOMENG_TEST_REDIS_URL or DOMENG_TEST_POSTGRES_URL.
"""

from __future__ import annotations

import contextlib
import signal
import socket
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from websockets.exceptions import ConnectionClosed

from tests.adminkit import COOKIE, SECRET
from tests.clusterkit import (
    CLOSE_TRY_AGAIN,
    LEASE_S,
    ThreadedProxy,
    assert_log_whole,
    behind_nginx,
    can_play,
    closed_code,
    join,
    need_redis,
    new_table,
    play_turns,
    production_backends,
    stored_match,
)
from tests.nginxkit import NGINX, Nginx
from tests.serverkit import Client, ServerProcess, wait_gone


@dataclass
class Topology:
    servers: list[ServerProcess]
    nginx: Nginx
    front: ServerProcess
    """nginx seen as one server (its URL), for serverkit's helpers and `Client`."""
    database_url: str
    redis_url: str


@pytest.fixture
def topology(tmp_path: Path) -> Iterator[Topology]:
    with _topology(tmp_path) as running:
        yield running


@contextlib.contextmanager
def _topology(tmp_path: Path, redis_of_second: str | None = None) -> Iterator[Topology]:
    """Two processes behind nginx; ``redis_of_second``: the second one's Redis URL (a relay the
    test cuts), else the same as the first's."""
    if NGINX is None:
        pytest.skip("nginx is not installed (apt-get install -y nginx-light)")
    redis_url, postgres_url, env = production_backends(SECRET)
    second_env = {**env, "DOMENG_REDIS_URL": redis_of_second or redis_url}
    servers = [
        ServerProcess(tmp_path / "a", env=env, database_url=postgres_url),
        ServerProcess(tmp_path / "b", env=second_env, database_url=postgres_url),
    ]
    with behind_nginx(tmp_path, servers) as (nginx, front):
        yield Topology(servers, nginx, front, postgres_url, redis_url)


def _owner(topology: Topology, code: str) -> ServerProcess:
    """The server process holding the room's lease (its holder is host:pid:random)."""
    with redis.Redis.from_url(topology.redis_url) as client:
        value = client.get(f"domeng:{{{code}}}:lease")
    assert value is not None, "nobody holds the room's lease"
    pid = int(value.decode().split(":")[1])
    return next(server for server in topology.servers if server.proc is not None and server.proc.pid == pid)


def _join(
    front: ServerProcess, code: str, token: str | None, timeout: float, open_timeout: float = 10
) -> tuple[Client, dict[str, Any]]:
    """`join` ``code`` through nginx with ``token`` (or as a spectator), each handshake given
    ``open_timeout`` seconds."""
    return join(
        lambda: Client(front, code, token, open_timeout=open_timeout),
        timeout,
        "the room was not served through nginx in time",
    )


def _is_stopped(server: ServerProcess) -> bool:
    """Whether the server process is stopped (SIGSTOP: state T in /proc)."""
    assert server.proc is not None
    stat = Path(f"/proc/{server.proc.pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0] == "T"


def _play_from(client: Client, state: dict[str, Any], turns: int) -> dict[str, Any]:
    """`play_turns` from a state already received (the one `_join` returned)."""
    if not can_play(state):
        state = client.wait_for(can_play)
    action = {k: v for k, v in state["view"]["legal"][0].items() if k != "seat"}
    client.send({"type": "action", "version": state["version"], "action": action})
    return play_turns(client, turns - 1)


@pytest.mark.parametrize("room_hashing", [False, True])
def test_the_rendered_config_is_valid_for_nginx(tmp_path: Path, room_hashing: bool) -> None:
    if NGINX is None:
        pytest.skip("nginx is not installed")
    nginx = Nginx(tmp_path, ["127.0.0.1:1", "127.0.0.1:2"], room_hashing=room_hashing)
    checked = nginx.test_config()
    assert checked.returncode == 0, checked.stderr
    assert ("\n        hash $room consistent;" in nginx.config.read_text()) is room_hashing


def test_the_lobby_and_a_room_through_nginx_and_the_game_goes_on_after_its_owner_is_killed(
    topology: Topology,
) -> None:
    front = topology.front
    lobby = httpx.get(f"{front.url}/", timeout=10)
    assert lobby.status_code == 200 and "text/html" in lobby.headers["content-type"]
    assert httpx.get(f"{front.url}/metrics", timeout=10).status_code == 404  # per process, not here
    # an HTTP/1.0 request without a Host (old health checkers) still reaches a server
    with socket.create_connection(("127.0.0.1", topology.nginx.port), timeout=10) as raw:
        raw.sendall(b"GET /healthz HTTP/1.0\r\n\r\n")
        answer = b"".join(iter(lambda: raw.recv(4096), b""))
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
    # the admin signs in through nginx as a browser does, Origin with the port: the Host nginx
    # passes on keeps it, so the same-origin check holds (with $host it was refused, 403)
    browser_origin = {"Origin": front.url}
    signed = httpx.post(
        f"{front.url}/api/admin/login", json={"secret": SECRET}, headers=browser_origin, timeout=10
    )
    assert signed.status_code == 200, signed.text
    session = {**browser_origin, "Cookie": f"{COOKIE}={signed.cookies[COOKIE]}"}
    assert httpx.get(f"{front.url}/api/admin/rooms", headers=session, timeout=10).status_code == 200
    assert httpx.post(f"{front.url}/api/admin/logout", headers=session, timeout=10).status_code == 204
    code, token = new_table(front)  # create, claim and start: 503s from non-owners retried by nginx
    assert httpx.get(f"{front.url}/r/{code}", timeout=10).status_code == 200
    # the lobby's status read has no room to hash: any process answers it, from the store
    for _ in range(4):
        mine = httpx.get(f"{front.url}/api/rooms/status", params={"codes": code}, timeout=10)
        assert mine.status_code == 200 and mine.json()["rooms"][code]["status"] == "playing", mine.text
    player, first = _join(front, code, token, timeout=20)
    # a review has a location of its own (a longer wait): it reaches the server, which answers
    bearer = {"Authorization": f"Bearer {token}"}
    review = httpx.get(f"{front.url}/api/rooms/{code}/rounds/0/review", headers=bearer, timeout=30)
    assert review.status_code == 409 and review.json()["detail"]["code"] == "round_not_over", review.text
    waiting = _play_from(player, first, 3)  # Ana's turn: the room waits on her
    owner = _owner(topology, code)
    workers = owner.children()
    owner.kill()
    assert not wait_gone(workers)
    with pytest.raises(ConnectionClosed):  # nginx closes the socket of the process that died
        while True:
            player.recv()
    back, resumed = _join(front, code, token, timeout=LEASE_S + 30)
    assert resumed["version"] == waiting["version"]
    for key in ("hand", "chain", "table", "stones", "to_act", "legal", "round"):
        assert resumed["view"][key] == waiting["view"][key], key
    assert can_play(resumed)
    action = {k: v for k, v in resumed["view"]["legal"][0].items() if k != "seat"}
    back.send({"type": "action", "version": resumed["version"], "action": action})
    later = play_turns(back, 1)
    back.close()
    assert _owner(topology, code) is not owner
    stored = stored_match(topology.database_url, code)
    assert_log_whole(stored)
    assert stored.version == later["version"]
    assert len([a for r in stored.rounds for a in r.actions if a.actor == "human"]) == 5


def test_a_process_cut_off_from_redis_refuses_its_sockets_so_nginx_takes_them_to_the_other(
    tmp_path: Path,
) -> None:
    """A process that cannot reach Redis loses its rooms' leases, but nginx still hashes their
    sockets to it: it used to accept each one and close it with 1013 ("try again"), so the players
    came back only once its Redis did. It now refuses the handshake with 503, and nginx takes the
    socket to the other process, which takes the room over while the first is still cut off."""
    with ThreadedProxy(need_redis()) as relay, _topology(tmp_path, redis_of_second=relay.url) as topology:
        front, (healthy, cut_off) = topology.front, topology.servers
        for _ in range(20):  # nginx hashes each room to one process: a room of the second one
            code, token = new_table(front)
            player, state = _join(front, code, token, timeout=20)
            if _owner(topology, code) is cut_off:
                break
            player.close()
        else:
            pytest.fail("nginx took none of 20 rooms to the second process")
        waiting = _play_from(player, state, 2)
        relay.cut()  # the second process's Redis gone: it loses the room's lease
        assert closed_code(player) == CLOSE_TRY_AGAIN  # room_moved
        back, resumed = _join(front, code, token, timeout=LEASE_S + 30)  # the second still cut off
        assert _owner(topology, code) is healthy
        assert resumed["version"] == waiting["version"]
        assert can_play(resumed) or back.wait_for(can_play)
        back.close()


def test_a_page_reload_gets_past_a_stopped_process_before_its_socket_does(topology: Topology) -> None:
    """A page reload while the process its room hashes to is stopped (SIGSTOP). The room's page and
    the static files are files a live process answers at once: nginx gives up on the stopped one
    sooner (deploy/nginx.conf, ``location /``) and the other process answers them while the
    socket's handshake still waits on the stopped one. Before, each of them waited 30 s there (the
    page, every file sent there round robin, the room's read), twice the handshake's 15 s. The
    room's read (``location /api/``) is answered by the other process too, the owner still stopped,
    and so is the socket's handshake."""
    front = topology.front
    code, token = new_table(front)
    player, _ = _join(front, code, token, timeout=20)  # the room on the process its code hashes to
    player.close()
    owner = _owner(topology, code)
    assert owner.proc is not None
    owner.proc.send_signal(signal.SIGSTOP)
    files = [
        f"/r/{code}",
        "/static/js/main.js",
        "/static/js/room.js",
        "/static/js/connection.js",
        "/static/css/app.css",
    ]
    with ThreadPoolExecutor(len(files) + 2) as pool:
        handshake = pool.submit(_join, front, code, token, 60, 45)
        read = pool.submit(httpx.get, f"{front.url}/api/rooms/{code}", timeout=60)
        loads = [pool.submit(httpx.get, f"{front.url}{path}", timeout=60) for path in files]
        for path, load in zip(files, loads, strict=True):
            assert load.result().status_code == 200, path
        assert not handshake.done()  # the page's files came while its socket still waits
        assert _is_stopped(owner)
        room = read.result()
        assert room.status_code == 200 and room.json()["code"] == code, room.text
        back, state = handshake.result()
        assert _is_stopped(owner)  # every answer came from the other process
    assert state["type"] == "state"
    back.close()
    owner.proc.send_signal(signal.SIGCONT)


def test_a_stopped_owner_is_routed_around_within_the_pause_and_writes_nothing_when_it_resumes(
    topology: Topology,
) -> None:
    """A process stopped (SIGSTOP) still accepts connections, and its rooms' codes still hash to
    it: nginx used to wait 60 s on a socket's handshake there and answer 504, never passing it on,
    so its players reached their room only once it resumed. Now the handshake times out sooner
    and goes to the other process, which takes the room once the lease has expired: the player
    plays there while the owner is still stopped. When the owner resumes, the move that waited in
    its socket is stored nowhere (the fence), its own client is told to reconnect and finds the
    room on the new owner, and the stored log has every move once."""
    front = topology.front
    code, token = new_table(front)
    player, state = _join(front, code, token, timeout=20)
    waiting = _play_from(player, state, 2)  # Ana's turn: the room waits on her
    owner = _owner(topology, code)
    other = next(server for server in topology.servers if server is not owner)
    # a spectator of the owner itself, not through nginx, that keeps quiet: its socket outlives the pause
    stale = Client(owner, code, keepalive=False)
    stale.wait_for(lambda m: m["type"] == "state")
    assert owner.proc is not None
    owner.proc.send_signal(signal.SIGSTOP)
    action = {k: v for k, v in waiting["view"]["legal"][0].items() if k != "seat"}
    player.send({"type": "action", "version": waiting["version"], "action": action})  # never answered
    # the browser gives its silent socket up and reconnects with the seat's token; it sets no
    # time limit on a handshake, and nginx must answer it while the owner is still stopped
    back, resumed = _join(front, code, token, timeout=60, open_timeout=45)
    assert _owner(topology, code) is other and _is_stopped(owner)
    assert resumed["version"] == waiting["version"]  # the move sent to the stopped owner is not in
    assert can_play(resumed)
    back.send({"type": "action", "version": resumed["version"], "action": action})
    moved = back.wait_for(lambda m: m["type"] == "state" and m["version"] > resumed["version"])
    assert stored_match(topology.database_url, code).version >= moved["version"]
    assert _is_stopped(owner)
    owner.proc.send_signal(signal.SIGCONT)
    assert closed_code(stale) == CLOSE_TRY_AGAIN  # room_moved: the owner lost the room as it woke
    watcher, seen = _join(front, code, None, timeout=20)  # through nginx, to the process it hashes to
    assert seen["version"] >= moved["version"]
    later = play_turns(back, 1)
    watcher.wait_for(lambda m: m["type"] == "state" and m["version"] >= later["version"])
    for client in (back, watcher, player):
        client.close()
    assert _owner(topology, code) is other
    assert '"room_lease_lost"' in owner.log()
    stored = stored_match(topology.database_url, code)
    assert_log_whole(stored)
    assert stored.version == later["version"]
    assert len([a for r in stored.rounds for a in r.actions if a.actor == "human"]) == 4
