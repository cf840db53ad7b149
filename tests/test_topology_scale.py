"""A process added, then one removed, behind nginx while rooms are played (docs/deploy.md, "Adding
and removing a process"): two ``domeng serve`` processes on one PostgreSQL database and one Redis
behind Debian's nginx on deploy/nginx.conf (tests/nginxkit.py, ``hash $room consistent``), rooms in
play with a player and a spectator each through nginx; a third process started and nginx reloaded
with it, so about a third of the rooms' codes now hash to it while their sockets are still on the
process they reached before; players play on, some reload their page, some sockets reconnect; then
one of the first two processes stopped cleanly (SIGTERM), and nginx reloaded without it.

Every room stays playable, every client sees each room's versions in order with no event missed or
repeated (across its reconnects too), every client of a room sees the same table at each version,
every page's ``GET /api/rooms/CODE`` is answered (asked again after a 503, as the page does), and
each room's stored log holds every acknowledged move once. And with four processes, a page reads
its room through nginx whichever process keeps it (nginx used to try 3 of them). Skipped without
nginx, DOMENG_TEST_REDIS_URL or DOMENG_TEST_POSTGRES_URL.
"""

from __future__ import annotations

import contextlib
import json
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.adminkit import SECRET
from tests.clusterkit import (
    LEASE_S,
    assert_log_whole,
    behind_nginx,
    can_play,
    new_table,
    production_backends,
    stored_match,
)
from tests.nginxkit import NGINX, Nginx, free_port
from tests.serverkit import Client, ServerProcess

NOT_RETRIED = {4001, 4003, 4004, 4005, 4006, 4007}
"""The close codes after which static/js/connection.js does not reconnect by itself."""

BACK_WITHIN_S = LEASE_S + 30
"""How long a client may take to be back in its room after its socket closed."""


def _tile(tile: str) -> frozenset[str]:
    """A tile either way round (``"3-6"`` = ``"6-3"``)."""
    return frozenset(tile.split("-"))


@dataclass
class Browser:
    """One page of a room through nginx: the seat of ``token``, or a spectator. It reconnects as
    static/js/connection.js does after every close it retries (``hello.since`` and, for a seat,
    ``resume``), and checks that every ``state`` continues what it holds, whichever socket brought
    it: versions only grow, an update's events start where its log ends (none missed, none twice),
    and a whole state's log begins with it."""

    front: ServerProcess
    code: str
    token: str | None = None
    client: Client | None = None
    connection: str | None = None
    """The seat's last ``welcome``'s connection (``hello.resume``)."""
    watcher: str | None = None
    """A spectator's key (``hello.watcher``)."""
    version: int = -1
    round: int | None = None
    log: list[dict[str, Any]] = field(default_factory=list)
    fresh: bool = True
    """No state yet on this socket (its first may jump: a resync by version)."""
    seen: dict[int, tuple[int, tuple[frozenset[str], ...]]] = field(default_factory=dict)
    """Every version this page got, with its round and chain."""
    closes: list[int] = field(default_factory=list)
    """The close codes its sockets got from the other end (each then reconnected)."""
    refusals: list[int] = field(default_factory=list)
    """The statuses of its refused handshakes (502, 503 or 504: tried again)."""
    retried_reads: int = 0
    """The page's reads of the room answered 503 and asked again."""
    sent: set[tuple[int, str]] = field(default_factory=set)
    """The moves it made: (the version it acted at, the tile)."""
    acked: set[tuple[int, str]] = field(default_factory=set)
    """Those it then saw on the table."""
    state: dict[str, Any] | None = None
    """The last state it took."""
    pending: tuple[tuple[int, str], int] | None = None
    """The move `act` made and its round, until `settle` has seen it through."""
    last: list[dict[str, Any]] = field(default_factory=list)
    """The last messages it took (for a failure's message)."""

    def open(self, reload: bool = False) -> dict[str, Any]:
        """Connect until a state comes, and return it (a page load with ``reload``: a new page
        with no ``since`` nor ``resume``, which first reads the room over HTTP as
        static/js/room.js does)."""
        if reload:
            self.close()
            self._read_room()
        hello: dict[str, Any] = {"type": "hello", "protocol": 1, "token": self.token}
        if not reload and self.version >= 0:
            hello["since"] = self.version
        if not reload and self.token is not None and self.connection is not None:
            hello["resume"] = self.connection
        if self.watcher is not None:
            hello["watcher"] = self.watcher
        deadline = time.monotonic() + BACK_WITHIN_S
        while True:
            try:
                self.client = Client(self.front, self.code, hello=False)
                self.fresh = True
                self.client.send(hello)
                while (message := self._take(self._recv(5)))["type"] != "state":
                    pass
                return message
            except ConnectionClosed as closed:
                self._closed(closed)
            except InvalidStatus as refused:
                self.refusals.append(refused.response.status_code)
                assert refused.response.status_code in (502, 503, 504), refused
            except TimeoutError:
                pass
            self.close()
            assert time.monotonic() < deadline, f"{self.code}: not back in its room in time"
            time.sleep(0.25)  # the browser's first backoff

    def _read_room(self) -> None:
        """The page's first read of the room (static/js/room.js ``firstRead``): a 503 is asked
        again after its Retry-After, for up to 30 s; it must then be answered."""
        deadline = time.monotonic() + 30
        while (page := httpx.get(f"{self.front.url}/api/rooms/{self.code}", timeout=30)).status_code == 503:
            assert "Retry-After" in page.headers and time.monotonic() < deadline, page.text
            self.retried_reads += 1
            time.sleep(float(page.headers["Retry-After"]))  # the page's wait, not a synchronisation
        assert page.status_code == 200, (page.status_code, page.text)

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None

    def next(self, timeout: float = 30.0) -> dict[str, Any]:
        """The next message, reconnecting (with ``since``) after a close the browser retries."""
        while True:
            if self.client is None:
                return self.open()
            try:
                return self._take(self._recv(timeout))
            except TimeoutError:
                raise AssertionError(f"{self.code}: nothing came; last: {self.last[-3:]}") from None
            except ConnectionClosed as closed:
                self._closed(closed)
                self.close()

    def until(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 60.0) -> dict[str, Any]:
        """Messages until one satisfies ``predicate``; bounded by ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not predicate(message := self.next(max(0.1, deadline - time.monotonic()))):
            assert time.monotonic() < deadline, f"{self.code}: nothing awaited came"
        return message

    def play_turn(self) -> None:
        """`act`, then `settle`."""
        self.act()
        self.settle()

    def act(self) -> None:
        """Wait for this seat's turn and place its first legal tile (`settle` sees it through)."""
        state = self.state if self.state is not None and can_play(self.state) else self.until(can_play)
        self._send(state)

    def settle(self) -> None:
        """Take messages until the move `act` made is seen on the table. A move whose answer a
        close cut off is made again when the state after the reconnect still waits on it; one
        whose round ended meanwhile counts as sent only."""
        assert self.pending is not None
        while True:
            message = self.next()
            move, round_ = self.pending
            if message["type"] == "error":
                assert message["code"] == "not_saved", message
            elif message["type"] != "state":
                continue
            elif message["version"] > move[0] and message["view"]["round"] != round_:
                break  # its round ended meanwhile: sent, not seen
            elif message["version"] > move[0] and _tile(move[1]) in self.seen[message["version"]][1]:
                self.acked.add(move)
                break
            if can_play(self.state):  # the same turn again: the move was not stored
                self._send(self.state)
        self.pending = None

    def _send(self, state: dict[str, Any]) -> None:
        action = {k: v for k, v in state["view"]["legal"][0].items() if k != "seat"}
        self.pending = ((state["version"], action["play"]), state["view"]["round"])
        self.sent.add(self.pending[0])
        assert self.client is not None
        with contextlib.suppress(ConnectionClosed):  # the next message reconnects
            self.client.send({"type": "action", "version": state["version"], "action": action})

    def follow(self, version: int) -> None:
        """Take messages until this page holds ``version`` (or a later one)."""
        if self.version < version:
            self.until(lambda m: m["type"] == "state" and m["version"] >= version)

    def _recv(self, timeout: float) -> dict[str, Any]:
        assert self.client is not None
        message: dict[str, Any] = json.loads(self.client.ws.recv(timeout=timeout))
        return message

    def _closed(self, closed: ConnectionClosed) -> None:
        code = closed.rcvd.code if closed.rcvd is not None else 1006
        self.closes.append(code)
        assert code not in NOT_RETRIED, f"{self.code}: closed with {code} {closed.rcvd}"

    def _take(self, message: dict[str, Any]) -> dict[str, Any]:
        self.last = [*self.last[-9:], message]
        kind = message["type"]
        if kind == "welcome":
            self.connection = message.get("connection") or self.connection
            self.watcher = message.get("watcher") or self.watcher
        elif kind == "state":
            self._continue(message)
        return message

    def _continue(self, message: dict[str, Any]) -> None:
        """Check ``message`` continues the log this page holds, and take it."""
        view, version = message["view"], message["version"]
        assert view is not None, message
        where = f"{self.code} at {version} after {self.version}"
        if "log" in view:  # a whole state: the round's log, beginning with what was held
            assert version >= self.version, where
            if view["round"] == self.round:
                assert view["log"][: len(self.log)] == self.log, where
            self.log = list(view["log"])
        else:
            # a socket's first state resyncs from `since` (nothing new: the same version, no
            # events); then each update is the next version
            if self.fresh:
                assert version > self.version or (version == self.version and not message["events"]), where
            else:
                assert version == self.version + 1, f"{where}: not the next version"
            held = self.log if view["round"] == self.round else []
            assert message["from"] == len(held), f"{where}: events from {message['from']}, {len(held)} held"
            self.log = held + message["events"]
        self.fresh = False
        self.state = message
        self.version, self.round = version, view["round"]
        self.seen[version] = (view["round"], tuple(_tile(t) for t in view["chain"]))


@dataclass
class Table:
    """A room in play: Ana at seat 0 (four bots), and a spectator, both through nginx."""

    code: str
    ana: Browser
    watcher: Browser

    def play(self, turns: int) -> None:
        for _ in range(turns):
            self.ana.play_turn()
        self.watcher.follow(self.ana.version)


@dataclass
class Scene:
    servers: list[ServerProcess]
    nginx: Nginx
    front: ServerProcess
    database_url: str
    redis_url: str

    def owner(self, code: str) -> ServerProcess | None:
        """The process holding the room's lease (its holder is host:pid:random), or None."""
        with redis.Redis.from_url(self.redis_url) as client:
            value = client.get(f"domeng:{{{code}}}:lease")
        pid = None if value is None else int(value.decode().split(":")[1])
        return next((s for s in self.servers if s.proc is not None and s.proc.pid == pid), None)

    def wait_owner(self, code: str, wanted: Callable[[ServerProcess | None], bool]) -> ServerProcess | None:
        deadline = time.monotonic() + BACK_WITHIN_S
        while not wanted(found := self.owner(code)):
            assert time.monotonic() < deadline, f"{code}: owner {found and found.url}"
            time.sleep(0.05)
        return found


def _address(server: ServerProcess) -> str:
    """``127.0.0.1:PORT``, as nginx's upstream names it."""
    return f"127.0.0.1:{server.port}"


def _hashed_to(nginx: Nginx, codes: list[str]) -> dict[str, str]:
    """The upstream each room's code hashes to in ``nginx`` (``access_log``): the first process
    it tries for the room's page (``HEAD /r/CODE``, which opens no room)."""
    before = len(nginx.requests())
    for code in codes:
        assert httpx.head(f"{nginx.url}/r/{code}", timeout=10).status_code == 200
    deadline = time.monotonic() + 10
    while True:
        heads = [r for r in nginx.requests()[before:] if r.method == "HEAD"]
        found = {r.uri.removeprefix("/r/"): r.tried[0] for r in heads}
        if found.keys() >= set(codes):
            return {code: found[code] for code in codes}
        assert time.monotonic() < deadline, "nginx did not log the HEADs"
        time.sleep(0.05)


@contextlib.contextmanager
def _scene(tmp_path: Path, started: int, waiting: int = 0) -> Iterator[Scene]:
    """``started`` processes behind nginx (access log on), and ``waiting`` more not started yet,
    each with a port of its own already (so that a probe can ask nginx where codes will hash once
    they are listed)."""
    if NGINX is None:
        pytest.skip("nginx is not installed (apt-get install -y nginx-light)")
    redis_url, postgres_url, env = production_backends(SECRET)
    env["DOMENG_DISCONNECT_GRACE_S"] = "300"  # no bot covers Ana while she reconnects
    servers = [
        ServerProcess(tmp_path / f"p{n}", env=env, database_url=postgres_url, port=free_port())
        for n in range(started + waiting)
    ]
    with behind_nginx(tmp_path, servers, started, access_log=True) as (nginx, front):
        yield Scene(servers, nginx, front, postgres_url, redis_url)


@pytest.fixture
def scene(tmp_path: Path) -> Iterator[Scene]:
    """Two processes behind nginx, and a third to add."""
    with _scene(tmp_path, 2, 1) as running:
        yield running


def test_a_process_added_then_one_removed_while_rooms_are_played(scene: Scene, tmp_path: Path) -> None:
    first, second, third = scene.servers
    coming = _address(third)
    probe = Nginx(tmp_path / "probe", [_address(first), _address(second), coming], access_log=True).start()
    try:  # at least 6 rooms, and 2 of them whose code will hash to the third process
        tables: list[Table] = []
        to_third: list[Table] = []
        while len(tables) < 6 or len(to_third) < 2:
            assert len(tables) < 40, "nginx hashed none of 40 rooms to the third process"
            code, token = new_table(scene.front)
            table = Table(code, Browser(scene.front, code, token), Browser(scene.front, code))
            tables.append(table)
            if _hashed_to(probe, [code])[code] == coming:
                to_third.append(table)
    finally:
        probe.stop()
    for table in tables:
        table.ana.open()
        table.watcher.open()
        table.play(2)

    # a third process, and nginx reloaded with it: the sockets open stay where they are
    third.start()
    scene.nginx.reload([_address(first), _address(second), coming])
    assert {c for c, up in _hashed_to(scene.nginx, [t.code for t in tables]).items() if up == coming} == {
        t.code for t in to_third
    }
    for table in tables:
        table.play(1)
    moved, relayed = to_third[0], to_third[1]
    kept_by = scene.owner(relayed.code)
    assert kept_by in (first, second)
    for index, table in enumerate(tables):  # every other page reloaded, every third socket dropped
        if index % 2 == 0 or table in to_third:
            table.ana.open(reload=True)
        if table is moved or (index % 3 == 0 and table is not relayed):
            table.watcher.close()  # a dropped socket: the next message reconnects, with since
    for table in tables:
        table.play(2)
    # the room whose every client came back through the third process moved there; the one
    # whose spectator stayed on its owner's socket is relayed by the third
    scene.wait_owner(moved.code, lambda found: found is third)
    assert scene.owner(relayed.code) is kept_by

    # the owner of the relayed room stopped cleanly, still listed in nginx, then nginx reloaded
    # without it
    leaving = kept_by
    staying = second if leaving is first else first
    assert leaving is not None and leaving.proc is not None
    in_flight = tables[::2]  # a move on its way as the process stops; the others reload the page
    for table in in_flight:
        table.ana.act()
    leaving.proc.terminate()
    for table in tables:
        if table in in_flight:
            table.ana.settle()
        else:
            table.ana.open(reload=True)
    # a clean exit (uvicorn raises the signal again once it has shut down), not a kill
    assert leaving.proc.wait(30) in (0, -signal.SIGTERM)
    assert "Application shutdown complete" in leaving.log()
    for table in tables:
        table.play(2)
    scene.nginx.reload([_address(staying), coming])
    for table in tables:
        table.play(1)
        table.ana.close()
        table.watcher.close()

    for table in tables:
        _check_room(scene, table)
    # a 503 the page asks again (a room's read while its owner stops: every process may answer
    # 503 for an instant) is not a failure; any other 5xx is
    failed = [r for r in scene.nginx.requests() if r.status >= 500 and r.status != 503]
    assert not failed, failed


def _check_room(scene: Scene, table: Table) -> None:
    """The room's clients saw the same table at every version both saw; its stored log is whole
    and holds each of Ana's acknowledged moves once, and nothing she did not send."""
    ana, watcher = table.ana, table.watcher
    shared = ana.seen.keys() & watcher.seen.keys()
    assert len(shared) > 10, table.code
    for version in shared:
        assert ana.seen[version] == watcher.seen[version], (table.code, version)
    stored = stored_match(scene.database_url, table.code)
    assert_log_whole(stored)
    assert stored.version >= ana.version
    by_ana = [
        (a.version - 1, a.action["play"]) for r in stored.rounds for a in r.actions if a.actor == "human"
    ]
    assert len(by_ana) == len(set(by_ana)), table.code
    assert ana.acked <= set(by_ana) <= ana.sent, (table.code, ana.acked, by_ana, ana.sent)
    assert len(ana.acked) >= 5, table.code


def test_a_page_reaches_its_room_through_nginx_whichever_process_keeps_it(tmp_path: Path) -> None:
    """After ``--scale app=4`` a room's code hashes to another process than the one that holds
    it, and the sockets its players opened before nginx's reload stay there (an old nginx
    worker keeps them): the owner keeps the room (a socket of its own is in it) and the new
    process relays the room's new sockets. A page loaded meanwhile first reads the room over
    HTTP, which the new process refuses with 503 ``room_elsewhere`` for nginx to pass it on: it
    used to try 3 processes only, so with 4 the room's page did not load when its owner was the
    fourth it tried (static/js/room.js does not retry that first read: the page stops). nginx now
    tries every process.
    A socket straight to each process in turn stands for the socket an old worker keeps."""
    with _scene(tmp_path, 4) as scene:
        code, token = new_table(scene.front)
        for server in scene.servers:
            kept = Client(server, code)  # a socket of the owner's own
            kept.wait_for(lambda m: m["type"] == "state")
            scene.wait_owner(code, lambda found, server=server: found is server)
            page = httpx.get(f"{scene.front.url}/api/rooms/{code}", timeout=30)
            assert page.status_code == 200, (server.url, page.status_code, page.text)
            ana = Browser(scene.front, code, token)
            ana.open()
            ana.play_turn()
            assert ana.acked and scene.owner(code) is server  # Ana relayed, unless hashed there
            ana.close()
            kept.close()
        failed = [r for r in scene.nginx.requests() if r.status >= 500]
        assert not failed, failed
