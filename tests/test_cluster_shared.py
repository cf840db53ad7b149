"""What two real ``domeng serve`` processes on one Redis share besides the rooms' leases
(docs/cluster.md, "What is shared"): an admin session made on one works on the other and logging out
ends it on both; a table listed on one is in the other's lobby; the admin of one lists and closes a
room hosted by the other; room creation limits, the cap of open rooms per address, public reads (a
socket's look-up of a room not in memory among them), an address's chat lines across rooms and failed
admin logins spent on one are spent on the other. The processes share PostgreSQL when
DOMENG_TEST_POSTGRES_URL is set (else each has its own SQLite database: what is tested here lives in
Redis). Then `app.cluster.RedisShared` on its own: boards, their staleness, asks and sessions. Skipped
without DOMENG_TEST_REDIS_URL."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest
import redis
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from app.cluster import RedisShared
from app.edge.endpoint import LOOKUPS_SPENT
from app.rooms import host
from app.rooms.lobby import OPEN_TABLES_PER_ADDRESS, OPEN_TABLES_SHOWN
from app.rooms.room import Room
from app.store import upgrade_database
from app.web.app import create_app
from app.web.settings import Settings
from app.web.shared import Board
from tests.adminkit import COOKIE, SECRET, login
from tests.clusterkit import POSTGRES_URL, TcpProxy, key_prefix, need_redis
from tests.roomkit import Table, run_table
from tests.serverkit import Client, ServerProcess

ROOM_CLOSED = 4003
POLICY = 1008


@contextlib.contextmanager
def two_servers(path: Path, **env: str) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    """Two server processes on one Redis (a key prefix of their own, its keys deleted after) with
    the admin secret."""
    prefix = key_prefix()
    settings = {
        "DOMENG_REDIS_URL": need_redis(),
        "DOMENG_REDIS_PREFIX": prefix,
        "DOMENG_ADMIN_TOKEN": SECRET,
        "DOMENG_BOT_WORKERS": "1",
        **env,
    }
    if POSTGRES_URL:
        upgrade_database(POSTGRES_URL)  # once, here: two processes migrating at once would race
    first = ServerProcess(path / "a", env=settings, database_url=POSTGRES_URL)
    second = ServerProcess(path / "b", env=settings, database_url=POSTGRES_URL)
    try:
        with ThreadPoolExecutor(2) as starting:
            list(starting.map(ServerProcess.start, (first, second)))
        yield first, second
    finally:
        first.stop()
        second.stop()
        with redis.Redis.from_url(need_redis()) as client:
            for key in client.scan_iter(f"{prefix}:*"):
                client.delete(key)


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    """Two processes with the default limits, and long leases."""
    # a lease longer than a test's pause of its holder (SIGSTOP): the room stays the paused one's
    with two_servers(tmp_path_factory.mktemp("shared"), DOMENG_LEASE_S="60") as pair:
        yield pair


def wait_for(attempt: Any, timeout: float = 15.0, step: float = 0.05) -> Any:
    """Call ``attempt`` until it returns something truthy (bounded by ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while not (found := attempt()):
        if time.monotonic() > deadline:
            raise TimeoutError("not seen in time")
        time.sleep(step)
    return found


def cookie_of(server: ServerProcess) -> dict[str, str]:
    reply = login(server)
    assert reply.status_code == 200, reply.text
    return {"Cookie": f"{COOKIE}={reply.cookies[COOKIE]}"}


def test_an_admin_session_made_on_one_process_works_on_the_other_and_logout_ends_it_on_both(
    servers: tuple[ServerProcess, ServerProcess],
) -> None:
    first, second = servers
    cookie = cookie_of(first)
    for server in (first, second):
        reply = httpx.get(f"{server.url}/api/admin/session", headers=cookie, timeout=10)
        assert reply.status_code == 200 and reply.json()["via"] == "cookie", reply.text
    assert httpx.post(f"{second.url}/api/admin/logout", headers=cookie, timeout=10).status_code == 204
    for server in (first, second):
        reply = httpx.get(f"{server.url}/api/admin/session", headers=cookie, timeout=10)
        assert reply.status_code == 401 and reply.json()["detail"]["code"] == "not_authenticated"


def test_a_table_listed_on_one_process_is_in_the_other_lobby_and_its_admin_closes_it(
    servers: tuple[ServerProcess, ServerProcess],
) -> None:
    first, second = servers
    room = first.create_room(bots=[None, None, "greedy", "greedy", "greedy"])
    code = room["code"]
    listed = httpx.put(
        f"{first.url}/api/rooms/{code}/open",
        json={"open": True},
        headers={"Authorization": f"Bearer {room['host_token']}"},
        timeout=10,
    )
    assert listed.status_code == 200, listed.text
    host = Client(first, code, host=room["host_token"])  # listed while its host is there
    try:
        host.wait_for(lambda m: m["type"] == "state")

        def in_lobby() -> dict[str, Any] | None:
            tables = httpx.get(f"{second.url}/api/open-tables", timeout=10).json()["tables"]
            return next((t for t in tables if t["code"] == code), None)

        table = wait_for(in_lobby)
        assert table["free"] == 2 and table["bots"] == ["greedy"] * 3 and table["waiting_s"] >= 0
        assert "process" not in table

        with httpx.Client(base_url=second.url, headers=cookie_of(second), timeout=20) as admin:
            live = admin.get("/api/admin/rooms").json()
            hosted = [r for r in live["rooms"] if r["code"] == code]
            assert len(hosted) == 1 and hosted[0]["connections"] == 1 and live["unanswered"] == []
            first_id = hosted[0]["process"]
            assert first_id is not None and f":{first.proc.pid}:" in first_id  # type: ignore[union-attr]
            if POSTGRES_URL:  # one store: the other process's match list says a room holds it
                [match] = admin.get("/api/admin/matches", params={"code": code}).json()["items"]
                assert (match["status"], match["live"], match["hosted"]) == ("waiting", False, True)
            closed = admin.post(f"/api/admin/rooms/{code}/close", headers={"Origin": second.url})
            assert closed.status_code == 200, closed.text
            assert closed.json()["status"] == "abandoned" and closed.json()["disconnected"] == 1
        with pytest.raises(ConnectionClosed) as ended:
            while True:
                host.recv()
        assert ended.value.rcvd is not None and ended.value.rcvd.code == ROOM_CLOSED
        wait_for(lambda: in_lobby() is None)  # closed: off every lobby
    finally:
        host.close()


def test_a_table_listed_again_keeps_its_first_listing_time_in_the_other_lobby(
    servers: tuple[ServerProcess, ServerProcess],
) -> None:
    """Taking a table off and listing it again on its process does not make it new in the other
    process's lobby either: its ``waiting_s`` goes on from the match's first listing."""
    first, second = servers
    room = first.create_room(bots=[None, None, "greedy", "greedy", "greedy"])
    code, auth = room["code"], {"Authorization": f"Bearer {room['host_token']}"}

    def set_open(open_table: bool) -> None:  # on its process, which publishes before it answers
        reply = httpx.put(
            f"{first.url}/api/rooms/{code}/open", json={"open": open_table}, headers=auth, timeout=10
        )
        assert reply.status_code == 200, reply.text

    def in_lobby() -> dict[str, Any] | None:
        tables = httpx.get(f"{second.url}/api/open-tables", timeout=10).json()["tables"]
        return next((t for t in tables if t["code"] == code), None)

    set_open(True)
    host = Client(first, code, host=room["host_token"])  # listed while its host is there
    try:
        host.wait_for(lambda m: m["type"] == "state")
        wait_for(lambda: (table := in_lobby()) is not None and table["waiting_s"] >= 0.5)
        set_open(False)
        assert in_lobby() is None
        set_open(True)
        table = in_lobby()
        assert table is not None and table["waiting_s"] >= 0.5, table
    finally:
        host.close()


def _listed_from(server: ServerProcess, address: str, bots: list[str | None]) -> dict[str, Any]:
    """A room created and listed on ``server`` from ``address`` (127.0.0.0/8): the create reply."""
    with server.http_from(address) as http:
        created = http.post("/api/rooms", json={"bots": bots, "turn_timer_s": 0})
        assert created.status_code == 201, created.text
        room: dict[str, Any] = created.json()
        auth = {"Authorization": f"Bearer {room['host_token']}"}
        listed = http.put(f"/api/rooms/{room['code']}/open", json={"open": True}, headers=auth)
        assert listed.status_code == 200, listed.text
    return room


def _seated(server: ServerProcess, code: str, seat: int, address: str) -> Client:
    """A person at ``address`` who claimed ``seat`` of room ``code`` and is connected to it."""
    with server.http_from(address) as http:
        claim = http.post(f"/api/rooms/{code}/seats/{seat}", json={"name": f"P{seat}"})
    assert claim.status_code == 201, claim.text
    client = Client(server, code, claim.json()["token"], source=address)
    client.wait_for(lambda m: m["type"] == "state")
    return client


def test_the_lobby_counts_an_address_once_across_processes(
    servers: tuple[ServerProcess, ServerProcess],
) -> None:
    """One address's tables hosted by both processes are listed `OPEN_TABLES_PER_ADDRESS` at
    most in either lobby; a table of two people at two addresses comes before one of three
    sockets at one address hosted by the other process; no address is told."""
    first, second = servers
    bots: list[str | None] = [None, None, None, "greedy", "greedy"]
    sockets: list[Client] = []
    try:
        spread = [_listed_from(s, "127.0.2.1", bots) for s in (first, first, first, second, second)]
        for server, room in zip((first, first, first, second, second), spread, strict=True):
            sockets.append(Client(server, room["code"], host=room["host_token"]))
        trio = _listed_from(first, "127.0.2.4", [None, None, None, None, "greedy"])
        sockets += [_seated(first, trio["code"], seat, "127.0.2.4") for seat in range(3)]
        pair = _listed_from(second, "127.0.2.5", bots)
        sockets += [_seated(second, pair["code"], seat, f"127.0.2.{2 + seat}") for seat in range(2)]
        ours = {r["code"] for r in [*spread, trio, pair]}
        for server in (first, second):

            def lobby(server: ServerProcess = server) -> list[dict[str, Any]] | None:
                tables = httpx.get(f"{server.url}/api/open-tables", timeout=10).json()["tables"]
                mine = [t for t in tables if t["code"] in ours]
                here = {t["code"]: t["here"] for t in mine}
                return mine if here.get(trio["code"]) == 3 and here.get(pair["code"]) == 2 else None

            tables = wait_for(lobby)
            assert [t["code"] for t in tables[:2]] == [pair["code"], trio["code"]], tables
            assert len(tables) == 2 + OPEN_TABLES_PER_ADDRESS, tables
            assert all("owner" not in t and "distinct" not in t and "process" not in t for t in tables)
    finally:
        for client in sockets:
            client.close()


def test_a_room_whose_host_does_not_answer_is_named_with_its_process(
    servers: tuple[ServerProcess, ServerProcess],
) -> None:
    first, second = servers
    code = first.create_room(bots=["greedy"] * 5)["code"]
    assert first.proc is not None
    with httpx.Client(base_url=second.url, headers=cookie_of(second), timeout=20) as admin:
        first.proc.send_signal(signal.SIGSTOP)  # alive, holding the room's lease, deaf
        try:
            live = admin.get("/api/admin/rooms").json()
            assert all(r["code"] != code for r in live["rooms"])
            assert len(live["unanswered"]) == 1 and f":{first.proc.pid}:" in live["unanswered"][0]
            closed = admin.post(f"/api/admin/rooms/{code}/close", headers={"Origin": second.url})
            assert closed.status_code == 503 and closed.json()["detail"]["code"] == "room_elsewhere"
            assert live["unanswered"][0] in closed.json()["detail"]["message"]
        finally:
            first.proc.send_signal(signal.SIGCONT)
        closed = admin.post(f"/api/admin/rooms/{code}/close", headers={"Origin": second.url})
        assert closed.status_code == 200 and closed.json()["status"] == "abandoned", closed.text


def test_limits_spent_on_one_process_are_spent_on_the_other(tmp_path: Path) -> None:
    tight = {
        "DOMENG_ROOM_CREATE_LIMIT": "4 per minute",
        "DOMENG_MAX_ROOMS_PER_ADDRESS": "2",
        "DOMENG_ADMIN_LOGIN_LIMIT": "2 per minute",
        "DOMENG_READ_LIMIT": "6 per minute",
        "DOMENG_CHAT_LIMIT": "4 per minute",
    }
    with two_servers(tmp_path, **tight) as (first, second):

        def create(server: ServerProcess) -> httpx.Response:
            return httpx.post(f"{server.url}/api/rooms", json={"variant": "domeng"}, timeout=10)

        created = [create(server) for server in (first, second)]
        assert [reply.status_code for reply in created] == [201, 201]
        capped = create(first)  # 2 open rooms from this address, one on each process
        assert capped.status_code == 429 and capped.json()["detail"]["code"] == "too_many_open_rooms"
        capped = create(second)
        assert capped.status_code == 429 and capped.json()["detail"]["code"] == "too_many_open_rooms"
        spent = create(first)  # 4 creations counted, across both processes
        assert spent.status_code == 429 and spent.json()["detail"]["code"] == "too_many_rooms"
        assert int(spent.headers["Retry-After"]) >= 1

        assert login(first, "not the secret at all").status_code == 401
        assert login(second, "not the secret at all").status_code == 401
        refused = login(first)  # the right secret, but this address spent its failed attempts
        assert refused.status_code == 429 and refused.json()["detail"]["code"] == "too_many_attempts"

        for server in (first, second):  # public reads: 6, across both processes
            for path in ("/api/open-tables", "/api/room-defaults"):
                assert httpx.get(f"{server.url}{path}", timeout=10).status_code == 200
        for server in (second, first):  # a socket's look-up of a room not in memory is one too
            assert socket_closed(server, "made-up") == (ROOM_CLOSED, "no room with this code")
        for server in (first, second):
            read = httpx.get(f"{server.url}/api/open-tables", timeout=10)
            assert read.status_code == 429 and read.json()["detail"]["code"] == "too_many_reads"
            assert int(read.headers["Retry-After"]) >= 1
            assert socket_closed(server, "made-up-too") == (POLICY, LOOKUPS_SPENT)

        seats = []  # chat lines: 4 from this address across its rooms on both processes
        for server, reply in zip((first, second), created, strict=True):
            code = reply.json()["code"]
            claim = httpx.post(f"{server.url}/api/rooms/{code}/seats/0", json={"name": "Ana"}, timeout=10)
            assert claim.status_code == 201, claim.text
            seats.append(Client(server, code, claim.json()["token"]))
        for n in range(4):
            assert chat_answer(seats[n % 2], f"line {n}")["type"] == "chat"
        for seat in seats:
            refused = chat_answer(seat, "one more")
            assert refused["type"] == "error" and refused["code"] == "chat_too_fast", refused
            seat.close()


def chat_answer(client: Client, text: str) -> dict[str, Any]:
    """The answer to a chat line: its ``chat`` frame, or the ``error``."""
    client.send({"type": "chat", "text": text})
    return client.wait_for(
        lambda m: m["type"] == "error" or (m["type"] == "chat" and m["line"]["text"] == text)
    )


def socket_closed(server: ServerProcess, code: str) -> tuple[int | None, str | None]:
    """Open a socket of room ``code`` and wait for the server to close it: its code and reason."""
    with connect(f"{server.ws_base}/ws/rooms/{code}", open_timeout=10) as ws:
        with pytest.raises(ConnectionClosed):
            ws.recv(timeout=10)
        return ws.close_code, ws.close_reason


# -- app.cluster.RedisShared on its own ----------------------------------------------------------


def shared_pair(stale_s: float = 6.0) -> tuple[RedisShared, RedisShared]:
    """Two processes' shared state ("a" and "b") on one Redis, under a prefix of their own."""
    url, prefix = need_redis(), key_prefix()
    return (
        RedisShared(url, "a", prefix=prefix, stale_s=stale_s),
        RedisShared(url, "b", prefix=prefix, stale_s=stale_s),
    )


TABLE = {"code": "X1", "variant": "domeng", "seats": 5, "free": 2, "waiting_s": 3.0}


def test_a_board_is_read_by_the_others_and_leaves_with_its_process() -> None:
    async def main() -> None:
        a, b = shared_pair()
        try:
            await a.publish([TABLE], {"10.0.0.1": 2, "10.0.0.2": 0})
            await b.publish([], {"10.0.0.1": 1})
            assert await a.processes() == ["a", "b"]
            listed = await b.tables()
            assert [(t["code"], t["process"]) for t in listed] == [("X1", "a")]
            assert listed[0]["waiting_s"] >= 3.0
            assert await a.tables() == []  # its own tables are not "the others'"
            assert (await b.rooms_of("10.0.0.1"), await a.rooms_of("10.0.0.1")) == (2, 1)
            assert await b.rooms_of("10.0.0.2") == 0
            await a.publish([], {})  # a publication replaces the last
            assert (await b.tables(), await b.rooms_of("10.0.0.1")) == ([], 0)
            await a.publish([TABLE], {"10.0.0.1": 2})
        finally:
            await a.close()  # a clean stop takes the process off the board at once
        try:
            assert (await b.processes(), await b.tables(), await b.rooms_of("10.0.0.1")) == (["b"], [], 0)
        finally:
            await b.close()

    asyncio.run(main())


def test_the_lobby_of_every_process_is_ranked_and_cut_as_one_process_lists_it(tmp_path: Path) -> None:
    """`Board.open_tables`: another process's many tables that waited long (made up, say, and
    published without ``here`` as an older release does) come after this process's new table with
    a person there, newest first, and the lobby shows `OPEN_TABLES_SHOWN` of them."""

    async def body(table: Table) -> None:
        other, mine = shared_pair()
        try:
            olds = [{**TABLE, "code": f"X{i:02}", "people": [], "waiting_s": 100.0 + i} for i in range(40)]
            await other.publish(olds, {})
            await table.room.call(lambda r: _listed(r, table.host_token))
            await table.sit(0, "Ana")
            tables = await Board(table.hub, mine).open_tables()
            assert len(tables) == OPEN_TABLES_SHOWN
            assert tables[0]["code"] == table.room.code and tables[0]["here"] == 1
            assert [t["code"] for t in tables[1:]] == [f"X{i:02}" for i in range(OPEN_TABLES_SHOWN - 1)]
        finally:
            await other.close()
            await mine.close()

    run_table(tmp_path, body, bots=[None, None, None, "greedy", "greedy"])


async def _listed(room: Room, host_token: str) -> None:
    host.check_host(room, host_token)
    await host.set_open(room, True)


def test_a_process_that_stops_publishing_drops_off_the_board() -> None:
    async def main() -> None:
        a, b = shared_pair(stale_s=0.3)
        try:
            await a.publish([TABLE], {"10.0.0.1": 1})
            assert await b.rooms_of("10.0.0.1") == 1
            await wait_for_async(b.processes, lambda found: "a" not in found)
            assert (await b.tables(), await b.rooms_of("10.0.0.1")) == ([], 0)
        finally:
            await b.close()
            await a.close()

    asyncio.run(main())


async def wait_for_async(read: Any, done: Any, timeout: float = 10.0) -> Any:
    """Await ``read()`` until ``done(result)`` (bounded by ``timeout`` seconds)."""
    async with asyncio.timeout(timeout):
        while not done(found := await read()):
            await asyncio.sleep(0.02)
        return found


def test_an_ask_gets_every_other_process_answer_and_leaves_out_one_that_does_not_answer() -> None:
    async def main() -> None:
        a, b = shared_pair()
        c = RedisShared(need_redis(), "c", prefix=a.prefix)
        stuck = asyncio.Event()

        async def answer(kind: str, body: dict[str, Any]) -> Any:
            return {"kind": kind, "body": body}

        async def never(kind: str, body: dict[str, Any]) -> Any:
            await stuck.wait()

        try:
            a.serve(answer)
            b.serve(answer)
            c.serve(never)
            await wait_for_async(lambda: asyncio.sleep(0, (a.serving, b.serving, c.serving)), all)
            await a._redis.publish(a.ask_channel, b"not json")  # ignored by all
            answers = await a.ask("live", {"n": 1}, timeout_s=0.5)
            assert answers == {"b": {"kind": "live", "body": {"n": 1}}}  # c never answered
            stuck.set()
        finally:
            for shared in (a, b, c):
                await shared.close()

    asyncio.run(main())


def test_an_ask_is_not_heard_on_another_database_of_the_same_redis() -> None:
    """Redis's channels are shared by all its databases: a deployment on another database with the
    default prefix heard every ask, and each ask waited its whole timeout for answers that went to
    that other database (an operator saw every handoff take 2 s)."""

    async def main() -> None:
        url = need_redis()
        database = int(urlsplit(url).path.strip("/") or 0)
        elsewhere = urlunsplit(urlsplit(url)._replace(path=f"/{database ^ 1}"))
        a, b = shared_pair()
        foreign = RedisShared(elsewhere, "foreign", prefix=a.prefix)
        heard: list[str] = []

        async def answer(kind: str, body: dict[str, Any]) -> Any:
            return kind

        async def overheard(kind: str, body: dict[str, Any]) -> Any:
            heard.append(kind)
            return kind

        try:
            a.serve(answer)
            b.serve(answer)
            foreign.serve(overheard)
            await wait_for_async(lambda: asyncio.sleep(0, (a.serving, b.serving, foreign.serving)), all)
            assert await a.ask("live", {}, timeout_s=10) == {"b": "live"}
            assert heard == []  # (before, it also waited 10 s for the other database's answer)
        finally:
            for shared in (a, b, foreign):
                await shared.close()

    asyncio.run(main())


def test_a_session_is_kept_by_its_digest_until_it_expires_or_ends() -> None:
    async def main() -> None:
        a, b = shared_pair()
        try:
            later = time.time() + 60
            await a.put_session("d1", later)
            assert await b.session("d1") == pytest.approx(later)
            await b.end_session("d1")
            assert await a.session("d1") is None
            await a.put_session("d2", time.time() - 1)  # already over: gone at once
            assert await b.session("d2") is None
            assert await b.holder_of("no-such-room") is None
        finally:
            await a.close()
            await b.close()

    asyncio.run(main())


# -- Redis gone for a moment ---------------------------------------------------------------------


def test_without_redis_for_a_moment_creation_and_admin_say_so_and_the_lobby_lists_its_own(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        proxy = await TcpProxy(need_redis()).start()
        settings = Settings(
            redis_url=proxy.url,
            redis_prefix=key_prefix(),
            data_dir=tmp_path,
            bot_workers=1,
            admin_token=SECRET,
            log_json=False,
            log_level="warning",
        )
        app = create_app(settings)
        transport = httpx.ASGITransport(app=app, client=("10.9.8.7", 40000))
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http,
        ):
            assert (await http.post("/api/rooms", json={"variant": "domeng"})).status_code == 201
            await proxy.cut()
            refused = await http.post("/api/rooms", json={"variant": "domeng"})
            assert refused.status_code == 503 and refused.json()["detail"]["code"] == "room_unavailable"
            assert refused.headers["Retry-After"] == "1"
            signing = await http.post("/api/admin/login", json={"secret": SECRET})
            assert signing.status_code == 503 and signing.json()["detail"]["code"] == "admin_unavailable"
            lobby = await http.get("/api/open-tables")
            assert lobby.status_code == 200 and lobby.json() == {"tables": []}
            await proxy.mend()
            peers = app.state.peers
            await wait_for_async(lambda: asyncio.sleep(0, peers.serving), bool)  # subscribed again

            async def create() -> int:
                return (await http.post("/api/rooms", json={"variant": "domeng"})).status_code

            assert await wait_for_async(create, lambda status: status != 503) == 201
        await proxy.cut()

    asyncio.run(main())
