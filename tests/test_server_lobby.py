"""The lobby's open tables over real sockets: who keeps a table listed (`app.rooms.lobby.open_tables`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.serverkit import Client, ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    # more sockets than one address may hold: here they stand for several addresses' (the guard's own tests)
    env = {"DOMENG_TURN_TIMER_S": "0", "DOMENG_MAX_SOCKETS_PER_ADDRESS": "0"}
    proc = ServerProcess(tmp_path_factory.mktemp("server"), env=env).start()
    yield proc
    proc.stop()


def _open_table(server: ServerProcess) -> dict[str, Any]:
    """A new room (two free seats, three bots) its host listed in the lobby: the create reply."""
    room = server.create_room(bots=[None, None, "greedy", "greedy", "greedy"], turn_timer_s=0)
    listed = httpx.put(
        f"{server.url}/api/rooms/{room['code']}/open",
        json={"open": True},
        headers={"Authorization": f"Bearer {room['host_token']}"},
        timeout=10,
    )
    assert listed.status_code == 200, listed.text
    return room


def _connect(server: ServerProcess, code: str, token: str | None = None, host: str | None = None) -> Client:
    """A socket in room ``code`` (a seat's with ``token``, the host's with ``host``, else a
    spectator's), once the room has sent it the state."""
    client = Client(server, code, token, host=host)
    client.wait_for(lambda m: m["type"] == "state")
    return client


def _tables(server: ServerProcess) -> list[dict[str, Any]]:
    reply = httpx.get(f"{server.url}/api/open-tables", timeout=10)
    assert reply.status_code == 200, reply.text
    tables: list[dict[str, Any]] = reply.json()["tables"]
    return tables


def _until(server: ServerProcess, ok: Callable[[list[dict[str, Any]]], bool]) -> list[dict[str, Any]]:
    """The open tables once ``ok`` holds for them (bounded in time)."""
    deadline = time.monotonic() + 30
    while not ok(tables := _tables(server)):
        assert time.monotonic() < deadline, tables
        time.sleep(0.05)
    return tables


def _codes(tables: list[dict[str, Any]]) -> list[str]:
    return [t["code"] for t in tables]


def test_a_table_is_listed_while_a_seated_person_or_the_host_is_there_not_for_spectators(
    server: ServerProcess,
) -> None:
    room = _open_table(server)
    code = room["code"]
    spectator = _connect(server, code)
    assert code not in _codes(_tables(server))  # a spectator's socket alone lists nothing
    host = _connect(server, code, host=room["host_token"])
    (table,) = [t for t in _tables(server) if t["code"] == code]
    assert table["people"] == []
    host.close()
    _until(server, lambda tables: code not in _codes(tables))  # the spectator still watches
    claim = server.claim(code, 0, "Ana")
    assert claim.status_code == 201, claim.text
    assert code not in _codes(_tables(server))  # a seat claimed, nobody on it
    ana = _connect(server, code, token=claim.json()["token"])
    (table,) = [t for t in _tables(server) if t["code"] == code]
    assert table["people"] == ["Ana"]
    ana.close()
    _until(server, lambda tables: code not in _codes(tables))
    spectator.close()
