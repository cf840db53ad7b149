"""What two real ``domeng serve`` processes on one Redis share besides the rooms' leases
(docs/cluster.md, "What is shared"): an admin session made on one works on the other and logging
out ends it on both; a table listed on one is in the other's lobby; the admin of one lists and
closes a room hosted by the other; room creation limits, the cap of open rooms per address and
failed admin logins spent on one are spent on the other. The processes share PostgreSQL when
DOMENG_TEST_POSTGRES_URL is set (else each has its own SQLite database: what is tested here lives
in Redis). Skipped without DOMENG_TEST_REDIS_URL."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed

from app.store import upgrade_database
from tests.adminkit import COOKIE, SECRET, login
from tests.clusterkit import POSTGRES_URL, key_prefix, need_redis
from tests.serverkit import Client, ServerProcess

ROOM_CLOSED = 4003


@contextlib.contextmanager
def two_servers(path: Path, **env: str) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    """Two server processes on one Redis (a key prefix of their own) with the admin secret."""
    settings = {
        "DOMENG_REDIS_URL": need_redis(),
        "DOMENG_REDIS_PREFIX": key_prefix(),
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


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    """Two processes with the default limits."""
    with two_servers(tmp_path_factory.mktemp("shared")) as pair:
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
    spectator = Client(first, code)  # a table is listed while someone is there
    try:
        spectator.wait_for(lambda m: m["type"] == "state")

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
            closed = admin.post(f"/api/admin/rooms/{code}/close", headers={"Origin": second.url})
            assert closed.status_code == 200, closed.text
            assert closed.json()["status"] == "abandoned" and closed.json()["disconnected"] == 1
        with pytest.raises(ConnectionClosed) as ended:
            while True:
                spectator.recv()
        assert ended.value.rcvd is not None and ended.value.rcvd.code == ROOM_CLOSED
        wait_for(lambda: in_lobby() is None)  # closed: off every lobby
    finally:
        spectator.close()


def test_limits_spent_on_one_process_are_spent_on_the_other(tmp_path: Path) -> None:
    tight = {
        "DOMENG_ROOM_CREATE_LIMIT": "4 per minute",
        "DOMENG_MAX_ROOMS_PER_ADDRESS": "2",
        "DOMENG_ADMIN_LOGIN_LIMIT": "2 per minute",
    }
    with two_servers(tmp_path, **tight) as (first, second):

        def create(server: ServerProcess) -> httpx.Response:
            return httpx.post(f"{server.url}/api/rooms", json={"variant": "domeng"}, timeout=10)

        assert create(first).status_code == 201
        assert create(second).status_code == 201
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
