"""Who created which room outlives a server restart (one process, no Redis): the rooms an address
created before it, opened again after it, count against that address's cap of open rooms
(``DOMENG_MAX_ROOMS_PER_ADDRESS``) and of tables listed in the lobby (3), as they did before.
Clients at different loopback addresses (127.0.0.0/8) count as different players."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from tests.serverkit import Client, ServerProcess

KOZEL = {"variant": "kozel", "seats": 2, "bots": [None, "greedy"]}
ENV = {"DOMENG_MAX_ROOMS_PER_ADDRESS": "4", "DOMENG_ROOM_CREATE_LIMIT": "1000 per minute"}


def _hosting(server: ServerProcess, code: str, host_token: str) -> Client:
    """The host's socket in room ``code``: it keeps a listed table in the lobby."""
    host = Client(server, code, host=host_token)
    host.wait_for(lambda m: m["type"] == "state")
    return host


def _until(check: Callable[[], Any], what: str) -> Any:
    deadline = time.monotonic() + 30
    while not (found := check()):
        assert time.monotonic() < deadline, what
        time.sleep(0.05)
    return found


def _listed(server: ServerProcess) -> set[str]:
    tables = httpx.get(f"{server.url}/api/open-tables", timeout=10).json()["tables"]
    return {t["code"] for t in tables}


def test_the_rooms_an_address_created_count_for_it_after_a_restart(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, ENV).start()
    made: list[dict[str, Any]] = []
    try:
        with server.http_from("127.0.0.2") as greedy:
            for _ in range(4):
                reply = greedy.post("/api/rooms", json=KOZEL)
                assert reply.status_code == 201, reply.text
                made.append(reply.json())
            for room in made:  # each listed in the lobby
                opened = greedy.put(
                    f"/api/rooms/{room['code']}/open",
                    json={"open": True},
                    headers={"Authorization": f"Bearer {room['host_token']}"},
                )
                assert opened.status_code == 200, opened.text
            refused = greedy.post("/api/rooms", json=KOZEL)
            assert refused.status_code == 429, refused.text
        hosts = [_hosting(server, room["code"], room["host_token"]) for room in made]
        assert len(_until(lambda: len(_listed(server)) == 3 and _listed(server), "3 listed")) == 3
        for host in hosts:
            host.close()
    finally:
        server.stop()

    again = ServerProcess(tmp_path, ENV, port=int(server.url.rsplit(":", 1)[1])).start()
    hosts = []
    try:
        # the hosts come back: every room loaded again, each listed by its stored flag
        hosts = [_hosting(again, room["code"], room["host_token"]) for room in made]
        listed = _until(lambda: _listed(again), "tables listed again")
        assert len(listed) == 3, listed  # at most 3 tables of one creator listed, as before
        with again.http_from("127.0.0.2") as greedy:
            reply = greedy.post("/api/rooms", json=KOZEL)
            assert reply.status_code == 429, reply.text  # its 4 rooms still count for it
            assert reply.json()["detail"]["code"] == "too_many_open_rooms"
        assert len(_listed(again)) == 3
        with again.http_from("127.0.0.3") as other:
            assert other.post("/api/rooms", json=KOZEL).status_code == 201  # another address may
    finally:
        for host in hosts:
            host.close()
        again.stop()

    third = ServerProcess(tmp_path, ENV).start()
    try:
        with third.http_from("127.0.0.2") as greedy:
            # none of its rooms in memory yet: it may create the cap's worth anew
            assert [greedy.post("/api/rooms", json=KOZEL).status_code for _ in range(4)] == [201] * 4
            # then its older rooms do not load past its cap, whoever opens them
            reply = httpx.get(f"{third.url}/api/rooms/{made[0]['code']}", timeout=10)
            assert reply.status_code == 429, reply.text
            assert reply.json()["detail"]["code"] == "too_many_open_rooms"
    finally:
        third.stop()
