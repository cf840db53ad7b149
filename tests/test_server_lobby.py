"""The lobby's open tables over real sockets: who keeps a table listed, how many are shown and in
which order (`app.rooms.lobby.open_tables`, `rank_tables`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from app.rooms.lobby import OPEN_TABLES_PER_ADDRESS, OPEN_TABLES_SHOWN
from tests.serverkit import Client, ServerProcess

LISTED = {"code", "variant", "seats", "pairs", "free", "people", "here", "bots", "turn_timer_s", "waiting_s"}
"""What the lobby tells anyone of an open table (docs/protocol.md, ``GET /api/open-tables``)."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    # more sockets than one address may hold: here they stand for several addresses' (the guard's own tests)
    env = {"DOMENG_TURN_TIMER_S": "0", "DOMENG_MAX_SOCKETS_PER_ADDRESS": "0"}
    proc = ServerProcess(tmp_path_factory.mktemp("server"), env=env).start()
    yield proc
    proc.stop()


def _open_table(server: ServerProcess, address: str = "127.0.0.1") -> dict[str, Any]:
    """A new room (two free seats, three bots) its host created from ``address`` (127.0.0.0/8)
    and listed in the lobby: the create reply."""
    body = {"bots": [None, None, "greedy", "greedy", "greedy"], "turn_timer_s": 0}
    with server.http_from(address) as http:
        created = http.post("/api/rooms", json=body)
    assert created.status_code == 201, created.text
    room: dict[str, Any] = created.json()
    _set_open(server, room, True)
    return room


def _set_open(server: ServerProcess, room: dict[str, Any], open_table: bool) -> None:
    """The host of ``room`` (the create reply) lists it in the lobby or takes it off."""
    listed = httpx.put(
        f"{server.url}/api/rooms/{room['code']}/open",
        json={"open": open_table},
        headers={"Authorization": f"Bearer {room['host_token']}"},
        timeout=10,
    )
    assert listed.status_code == 200, listed.text


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
    assert table["people"] == [] and table["here"] == 0
    host.close()
    _until(server, lambda tables: code not in _codes(tables))  # the spectator still watches
    claim = server.claim(code, 0, "Ana")
    assert claim.status_code == 201, claim.text
    assert code not in _codes(_tables(server))  # a seat claimed, nobody on it
    ana = _connect(server, code, token=claim.json()["token"])
    (table,) = [t for t in _tables(server) if t["code"] == code]
    assert table["people"] == ["Ana"] and table["here"] == 1
    assert set(table) == LISTED  # what anyone reads: no token, address or seat of a person
    ana.close()
    _until(server, lambda tables: code not in _codes(tables))
    spectator.close()


def test_the_lobby_shows_a_bounded_list_with_people_there_then_newest_first(server: ServerProcess) -> None:
    """Older tables than the lobby shows (made up, say, each held by its host's socket alone) do
    not push a new table out: the new one comes first, the oldest are the ones left off."""
    hosts: list[Client] = []
    try:
        # from as many addresses: one address's tables are listed `OPEN_TABLES_PER_ADDRESS` at most
        old = [_open_table(server, f"127.0.1.{n + 1}") for n in range(OPEN_TABLES_SHOWN + 1)]
        hosts += [_connect(server, r["code"], host=r["host_token"]) for r in old]
        old_codes = {r["code"] for r in old}
        # the old tables have waited a while (so the new ones are strictly newer, to the tenth)
        _until(server, lambda ts: min(t["waiting_s"] for t in ts if t["code"] in old_codes) >= 0.3)
        new = _open_table(server)
        hosts.append(_connect(server, new["code"], host=new["host_token"]))
        full = _open_table(server)  # a person seated and there ranks above them all
        claim = server.claim(full["code"], 0, "Ana")
        assert claim.status_code == 201, claim.text
        hosts.append(_connect(server, full["code"], token=claim.json()["token"]))
        tables = _tables(server)
        assert len(tables) == OPEN_TABLES_SHOWN
        assert _codes(tables)[:2] == [full["code"], new["code"]]
        assert set(_codes(tables[2:])) <= old_codes
        waits = [t["waiting_s"] for t in tables[1:]]
        assert waits == sorted(waits)  # among tables with nobody seated there: newest first
    finally:
        for client in hosts:
            client.close()


def test_listing_a_table_again_keeps_its_first_listing_time(server: ServerProcess) -> None:
    """A host who takes their table off and lists it again does not make it the newest: it keeps
    the match's first listing time, and a table listed since stays above it."""
    hosts: list[Client] = []
    try:
        old = _open_table(server)
        hosts.append(_connect(server, old["code"], host=old["host_token"]))
        _until(server, lambda ts: any(t["code"] == old["code"] and t["waiting_s"] >= 0.3 for t in ts))
        new = _open_table(server)
        hosts.append(_connect(server, new["code"], host=new["host_token"]))
        _set_open(server, old, False)
        assert old["code"] not in _codes(_tables(server))
        _set_open(server, old, True)
        tables = [t for t in _tables(server) if t["code"] in (old["code"], new["code"])]
        assert _codes(tables) == [new["code"], old["code"]], tables
        assert tables[1]["waiting_s"] >= 0.3
    finally:
        for client in hosts:
            client.close()


def _party_table(server: ServerProcess, address: str) -> tuple[str, list[Client]]:
    """A Kozel table one party made from ``address`` (127.0.0.0/8): created and listed from it,
    three of its four seats claimed and held by a socket each from it. Its code and sockets."""
    with server.http_from(address) as http:
        created = http.post("/api/rooms", json={"variant": "kozel", "seats": 4, "turn_timer_s": 0})
        assert created.status_code == 201, created.text
        room = created.json()
        listed = http.put(
            f"/api/rooms/{room['code']}/open",
            json={"open": True},
            headers={"Authorization": f"Bearer {room['host_token']}"},
        )
        assert listed.status_code == 200, listed.text
        tokens = []
        for seat in range(3):
            claim = http.post(f"/api/rooms/{room['code']}/seats/{seat}", json={"name": f"P{seat}"})
            assert claim.status_code == 201, claim.text
            tokens.append(claim.json()["token"])
    sockets = [Client(server, room["code"], token, source=address) for token in tokens]
    for client in sockets:
        client.wait_for(lambda m: m["type"] == "state")
    return room["code"], sockets


def test_one_party_from_a_few_addresses_cannot_push_the_other_tables_off_the_lobby(
    server: ServerProcess,
) -> None:
    """A security tester's lobby spam: from 4 addresses, more tables than the lobby shows, three
    sockets seated at each. Each address lists `OPEN_TABLES_PER_ADDRESS` of its tables at most,
    and their sockets count once per address: a table of two people at two addresses, listed
    later, comes first, and a table of one person is still listed."""
    sockets: list[Client] = []
    try:
        party = [f"127.0.0.{2 + n % 4}" for n in range(OPEN_TABLES_SHOWN + 2)]
        made = [_party_table(server, address) for address in party]
        sockets += [client for _, clients in made for client in clients]
        spam = {code for code, _ in made}
        alone = _open_table(server)  # the host's socket alone at it: nobody seated yet
        sockets.append(_connect(server, alone["code"], host=alone["host_token"]))
        pair = server.create_room(bots=[None, None, None, "greedy", "greedy"], turn_timer_s=0)
        _set_open(server, pair, True)
        for seat, (name, address) in enumerate([("Ana", "127.0.0.8"), ("Ben", "127.0.0.9")]):
            with server.http_from(address) as http:
                claim = http.post(f"/api/rooms/{pair['code']}/seats/{seat}", json={"name": name})
            assert claim.status_code == 201, claim.text
            sockets.append(Client(server, pair["code"], claim.json()["token"], source=address))
        tables = _until(server, lambda ts: any(t["code"] == pair["code"] and t["here"] == 2 for t in ts))
        codes = _codes(tables)
        assert codes[0] == pair["code"], tables
        assert alone["code"] in codes
        assert len(spam & set(codes)) == 4 * OPEN_TABLES_PER_ADDRESS
        assert all(set(t) == LISTED for t in tables)  # the ranking's addresses are not told
        assert [t["here"] for t in tables if t["code"] in spam] == [3] * 4 * OPEN_TABLES_PER_ADDRESS
    finally:
        for client in sockets:
            client.close()


def _seated_everywhere(server: ServerProcess, codes: list[str], addresses: list[str]) -> list[Client]:
    """Seat one person from each of ``addresses`` at each table of ``codes`` (seat ``n`` from
    ``addresses[n]``), each held by a socket from that address: the sockets."""
    sockets: list[Client] = []
    for code in codes:
        for seat, address in enumerate(addresses):
            with server.http_from(address) as http:
                claim = http.post(f"/api/rooms/{code}/seats/{seat}", json={"name": f"P{seat}"})
            assert claim.status_code == 201, claim.text
            sockets.append(Client(server, code, claim.json()["token"], source=address))
    for client in sockets:
        client.wait_for(lambda m: m["type"] == "state")
    return sockets


def test_a_party_seating_its_few_addresses_at_every_one_of_its_tables_counts_each_address_once(
    server: ServerProcess,
) -> None:
    """A security tester's lobby spam, third round: 4 addresses create 3 tables each and seat a
    person from every one of the 4 at each of the 12 (4 distinct addresses at every table, more
    than real tables hold). An address is one person across the tables it sits at, so each of
    those tables counts 4 × 1/12 people: a real table of two people, and one of a single person,
    both listed later, come before every one of them (before the fix: after all 12)."""
    sockets: list[Client] = []
    party = [f"127.0.2.{n + 1}" for n in range(4)]
    try:
        spam: list[str] = []
        for address in party:
            for _ in range(OPEN_TABLES_PER_ADDRESS):
                with server.http_from(address) as http:
                    created = http.post("/api/rooms", json={"bots": [None] * 5, "turn_timer_s": 0})
                assert created.status_code == 201, created.text
                _set_open(server, created.json(), True)
                spam.append(created.json()["code"])
        sockets += _seated_everywhere(server, spam, party)
        pair = server.create_room(bots=[None, None, None, "greedy", "greedy"], turn_timer_s=0)
        _set_open(server, pair, True)
        sockets += _seated_everywhere(server, [pair["code"]], ["127.0.2.10", "127.0.2.11"])
        alone = _open_table(server, "127.0.2.12")
        sockets += _seated_everywhere(server, [alone["code"]], ["127.0.2.12"])
        tables = _until(server, lambda ts: any(t["code"] == alone["code"] and t["here"] == 1 for t in ts))
        codes = _codes(tables)
        assert codes[:2] == [pair["code"], alone["code"]], tables
        assert set(codes[2:]) >= set(spam)  # still listed, after the real tables
        assert [t["here"] for t in tables if t["code"] in spam] == [4] * len(spam)
        assert all(set(t) == LISTED for t in tables)  # the ranking's addresses are not told
    finally:
        for client in sockets:
            client.close()
