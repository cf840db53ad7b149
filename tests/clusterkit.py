"""Several processes sharing rooms (docs/cluster.md), for the tests: the real Redis named by
DOMENG_TEST_REDIS_URL (e.g. ``redis://127.0.0.1:6379/9``) and the real PostgreSQL named by
DOMENG_TEST_POSTGRES_URL; the tests skip cleanly without them. `TcpProxy` stands between a
process and Redis or PostgreSQL, so a test can make either unreachable for it (and reachable again)
without touching the servers that others share; `ThreadedProxy` is the same for blocking tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus

from app.store import MatchRow, Store, upgrade_database
from tests.nginxkit import Nginx
from tests.serverkit import ROOT, Client, ServerProcess

REDIS_URL = os.environ.get("DOMENG_TEST_REDIS_URL")
POSTGRES_URL = os.environ.get("DOMENG_TEST_POSTGRES_URL")
LEASE_S = 3.0  # long enough that a loaded machine (two CPU hogs beside) renews in time
CLOSE_TRY_AGAIN = 1013


def need_redis() -> str:
    """DOMENG_TEST_REDIS_URL, or skip the test."""
    if not REDIS_URL:
        pytest.skip("DOMENG_TEST_REDIS_URL is not set")
    return REDIS_URL


def need_postgres() -> str:
    """DOMENG_TEST_POSTGRES_URL, or skip the test."""
    if not POSTGRES_URL:
        pytest.skip("DOMENG_TEST_POSTGRES_URL is not set")
    return POSTGRES_URL


def key_prefix() -> str:
    """A key prefix no other test (or test run) uses, for `app.cluster.RedisLeases`."""
    return f"test-{uuid.uuid4().hex[:10]}"


async def wait_until(condition: Callable[[], bool], timeout: float = 10.0, what: str = "condition") -> None:
    """Wait (bounded by ``timeout`` seconds) until ``condition()`` holds; TimeoutError if not."""
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


async def wait_for(attempt: Callable[[], Awaitable[object]], timeout: float = 10.0) -> object:
    """Call ``attempt`` until it returns something other than None (bounded by ``timeout``)."""
    async with asyncio.timeout(timeout):
        while (found := await attempt()) is None:
            await asyncio.sleep(0.02)
        return found


def stored_match(database_url: str, code: str) -> MatchRow:
    """The latest match of room ``code`` as stored in ``database_url`` (read by a store of its own)."""

    async def load() -> MatchRow:
        async with Store(database_url, migrate=False) as store:
            row = await store.load_match(code)
            assert row is not None
            return row

    return asyncio.run(load())


def assert_log_whole(row: MatchRow) -> None:
    """Every round's actions numbered 0, 1, … with strictly increasing versions: none lost in
    the middle, none applied twice."""
    versions = []
    for round_ in row.rounds:
        assert [a.seq for a in round_.actions] == list(range(len(round_.actions)))
        versions += [a.version for a in round_.actions]
    assert versions == sorted(set(versions))
    assert row.version >= versions[-1]


class TcpProxy:
    """A TCP relay on 127.0.0.1 to the server of ``url`` (Redis, PostgreSQL: any URL with a host and
    port); `url` is the same URL through it. `cut` closes the relay and every connection through it
    (the server unreachable: connection refused), `mend` listens again on the same port. The server
    itself, which others share, is never touched. `stall` stops every byte both ways while the
    connections stay open and new ones are taken (a network partition: no reset, no answer);
    `flow` lets the held bytes go on. `strand` closes the clients' side of every connection and
    keeps the server's open (a reset by the network that never reached the server: it keeps the
    session). `forget` lets new connections through again while every connection held by `stall`
    stays held until `cut` (the network back, the paths those connections took gone with it: a
    phone's new address, a NAT that forgot them)."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self._target = (parts.hostname or "127.0.0.1", parts.port or _PORTS[parts.scheme.split("+")[0]])
        self._parts = parts
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._upstream: set[asyncio.StreamWriter] = set()  # the server's side of each connection
        self._kept: set[asyncio.StreamWriter] = set()  # the server's side of a stranded connection
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._gates: set[asyncio.Event] = set()  # each connection's own: set while its bytes pass
        self.port = 0

    @property
    def url(self) -> str:
        """The same URL (user and password kept), through the relay."""
        user, at, _ = self._parts.netloc.rpartition("@")
        return urlunsplit(self._parts._replace(netloc=f"{user}{at}127.0.0.1:{self.port}"))

    async def start(self) -> TcpProxy:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def cut(self) -> None:
        """The server unreachable through the relay from now on."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        for writer in list(self._writers):
            writer.close()
        self._writers.clear()
        self._kept.clear()
        for gate in self._gates:  # what was held goes with its connection
            gate.set()
        if server is not None:
            await server.wait_closed()

    async def mend(self) -> None:
        """The server reachable through the relay again (same port)."""
        await self.start()

    async def stall(self) -> None:
        """From now on nothing passes either way, and nothing is closed."""
        self._flowing.clear()
        for gate in self._gates:
            gate.clear()

    async def flow(self) -> None:
        """What was held, and everything after it, passes again."""
        self._flowing.set()
        for gate in self._gates:
            gate.set()

    async def forget(self) -> None:
        """New connections pass again; those opened before stay held, until `cut`."""
        self._flowing.set()

    async def strand(self) -> None:
        """Close the clients' side of every connection now, keeping the server's side open (until
        `cut`)."""
        for writer in list(self._writers):
            if writer in self._upstream:
                self._kept.add(writer)
            else:
                writer.close()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self._target)
        except OSError:
            writer.close()
            return
        self._writers |= {writer, up_writer}
        self._upstream.add(up_writer)
        gate = asyncio.Event()
        if self._flowing.is_set():
            gate.set()
        self._gates.add(gate)

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError, asyncio.CancelledError):
                while data := await source.read(65536):
                    await gate.wait()
                    sink.write(data)
                    await sink.drain()
            with contextlib.suppress(asyncio.CancelledError):
                await gate.wait()  # a close is held like any byte (and lost with them, `forget`)
            if sink not in self._kept:
                sink.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        self._writers -= {writer, up_writer}
        self._upstream.discard(up_writer)
        self._kept.discard(up_writer)
        self._gates.discard(gate)


_PORTS = {"redis": 6379, "postgresql": 5432}
"""The default port of each scheme `TcpProxy` knows."""


class ThreadedProxy:
    """A `TcpProxy` for blocking tests: its event loop runs in a thread of its own, and `cut` and
    `mend` return once done (each bounded by ``timeout`` seconds). Use as a context manager: the
    relay is cut and its thread ended on the way out."""

    def __init__(self, url: str, timeout: float = 30.0) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="tcp-proxy", daemon=True)
        self._timeout = timeout
        self._proxy = TcpProxy(url)
        self._thread.start()
        self._call(self._proxy.start())

    @property
    def url(self) -> str:
        """The URL through the relay."""
        return self._proxy.url

    def _call(self, step: Coroutine[Any, Any, object]) -> None:
        asyncio.run_coroutine_threadsafe(step, self._loop).result(self._timeout)

    def cut(self) -> None:
        """`TcpProxy.cut`."""
        self._call(self._proxy.cut())

    def mend(self) -> None:
        """`TcpProxy.mend`."""
        self._call(self._proxy.mend())

    def stall(self) -> None:
        """`TcpProxy.stall`."""
        self._call(self._proxy.stall())

    def flow(self) -> None:
        """`TcpProxy.flow`."""
        self._call(self._proxy.flow())

    def forget(self) -> None:
        """`TcpProxy.forget`."""
        self._call(self._proxy.forget())

    def strand(self) -> None:
        """`TcpProxy.strand`."""
        self._call(self._proxy.strand())

    def __enter__(self) -> ThreadedProxy:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.cut()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(self._timeout)
        self._loop.close()


def migrate_once(database_url: str) -> subprocess.CompletedProcess[str]:
    """``domeng migrate --database-url URL`` in a process of its own, with none of this process's
    ``DOMENG_`` settings: the production shape's one migration before its servers start (they run
    with ``DOMENG_MIGRATE=false``). Its completed process (120 s at most)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOMENG_")}
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "migrate", "--database-url", database_url],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def production_backends(admin_secret: str) -> tuple[str, str, dict[str, str]]:
    """The production shape's shared backends for processes behind nginx (the skips of `need_redis`
    and `need_postgres`): the PostgreSQL database migrated once by `migrate_once` (its URL never
    printed), and the settings every process gets: that Redis, short leases (`LEASE_S` seconds),
    no migration, nginx's forwarded addresses trusted, quick bots, ``admin_secret``. Returns
    (Redis URL, database URL, settings)."""
    redis_url, postgres_url = need_redis(), need_postgres()
    migrated = migrate_once(postgres_url)
    assert migrated.returncode == 0, migrated.stderr
    assert "up to date" in migrated.stdout and postgres_url not in migrated.stdout + migrated.stderr
    env = {
        "DOMENG_REDIS_URL": redis_url,
        "DOMENG_LEASE_S": str(LEASE_S),
        "DOMENG_MIGRATE": "false",
        "DOMENG_FORWARDED_ALLOW_IPS": "127.0.0.1",
        "DOMENG_BOT_DELAY_S": "0.02",
        "DOMENG_BOT_WORKERS": "1",
        "DOMENG_ADMIN_TOKEN": admin_secret,
    }
    return redis_url, postgres_url, env


@contextlib.contextmanager
def behind_nginx(
    tmp_path: Path, servers: list[ServerProcess], started: int | None = None, *, access_log: bool = False
) -> Iterator[tuple[Nginx, ServerProcess]]:
    """The first ``started`` of ``servers`` (all: None) started side by side, then Debian's nginx
    in front of them on deploy/nginx.conf (`tests.nginxkit.Nginx`, with its ``access_log``).
    Yields nginx and nginx seen as one server (its URL), for serverkit's helpers and `Client`;
    then stops nginx and every one of ``servers``, resuming one stopped by a test that failed
    while it was (SIGSTOP)."""
    running = servers if started is None else servers[:started]
    nginx: Nginx | None = None
    try:
        with ThreadPoolExecutor(2) as starting:
            list(starting.map(ServerProcess.start, running))
        upstreams = [server.url.removeprefix("http://") for server in running]
        nginx = Nginx(tmp_path / "nginx", upstreams, access_log=access_log).start()
        front = ServerProcess(tmp_path / "front")
        front.url = nginx.url
        yield nginx, front
    finally:
        if nginx is not None:
            nginx.stop()
        for server in servers:
            if server.proc is not None and server.proc.poll() is None:
                server.proc.send_signal(signal.SIGCONT)
            server.stop()


def two_servers(tmp_path: Path, extra: dict[str, str]) -> Iterator[tuple[ServerProcess, ServerProcess, str]]:
    """Two server processes on one PostgreSQL database and one Redis (the skips of `need_redis` and
    `need_postgres`), started side by side once the database is migrated by this process (two
    migrating at once would race), with the settings ``extra`` added; yields both and the
    database URL, and stops both (resuming a paused first one)."""
    redis_url, postgres_url = need_redis(), need_postgres()
    env = {
        "DOMENG_REDIS_URL": redis_url,
        "DOMENG_LEASE_S": str(LEASE_S),
        "DOMENG_BOT_DELAY_S": "0.02",
        "DOMENG_BOT_WORKERS": "1",
        **extra,
    }
    first = ServerProcess(tmp_path / "a", env=env, database_url=postgres_url)
    second = ServerProcess(tmp_path / "b", env=env, database_url=postgres_url)
    upgrade_database(postgres_url)
    try:
        with ThreadPoolExecutor(2) as starting:
            list(starting.map(ServerProcess.start, (first, second)))
        yield first, second, postgres_url
    finally:
        if first.proc is not None and first.proc.poll() is None:
            first.proc.send_signal(signal.SIGCONT)
        first.stop()
        second.stop()


def can_play(message: dict[str, Any]) -> bool:
    """Whether ``message`` is a state in which its receiver may place a tile."""
    view = message.get("view") if message["type"] == "state" else None
    return bool(view) and view["phase"] == "playing" and any("play" in a for a in view["legal"])


def play_turns(client: Client, turns: int) -> dict[str, Any]:
    """Play ``turns`` of the client's turns; the state of its next turn (the room waits on it)."""
    for _ in range(turns):
        turn = client.wait_for(can_play)
        action = {k: v for k, v in turn["view"]["legal"][0].items() if k != "seat"}
        client.send({"type": "action", "version": turn["version"], "action": action})
    return client.wait_for(can_play)


def new_table(owner: ServerProcess) -> tuple[str, str]:
    """A Domeng room on ``owner`` with Ana in seat 0 and four bots, started: its code and Ana's token."""
    room = owner.create_room(bots=[None, "greedy", "greedy", "random", "greedy"], turn_timer_s=0)
    token = owner.claim(room["code"], 0, "Ana").json()["token"]
    assert owner.start_match(room["code"], room["host_token"]).status_code == 200
    return room["code"], token


def join(
    connect: Callable[[], Client], timeout: float, what: str = "the room was not taken over in time"
) -> tuple[Client, dict[str, Any]]:
    """Connect (``connect()``) as a browser does, trying again after each close 1013 (a process
    that does not host the room yet), each handshake refused 502, 503 or 504 (nginx found no
    process to answer) or 429 (nginx's rate of handshakes per address, deploy/nginx.conf: several
    such loops at once from 127.0.0.1 go faster than a browser's backoff) and each socket that
    sends nothing within 5 s (a loaded machine: the browser gives up on it too), until one sends
    the room's state; the client and that state. Fails with ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        client = None
        try:  # the refusal may come before the hello is sent
            client = connect()
            return client, client.wait_for(lambda m: m["type"] == "state", timeout=5)
        except ConnectionClosed as closed:
            assert closed.rcvd is not None and closed.rcvd.code == CLOSE_TRY_AGAIN, closed
        except InvalidStatus as refused:
            assert refused.response.status_code in (429, 502, 503, 504), refused
        except TimeoutError:
            if client is not None:
                client.close()
        assert time.monotonic() < deadline, what
        time.sleep(0.1)  # the browser's first backoff is 0.4 s


def closed_code(client: Client) -> int:
    """Receive until ``client``'s socket is closed; its close code."""
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            client.recv()
    assert closed.value.rcvd is not None
    return closed.value.rcvd.code
