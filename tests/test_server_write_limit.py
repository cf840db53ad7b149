"""The per-address allowance of room changes over HTTP (`app.web.routes`, ``WRITE``;
``DOMENG_WRITE_LIMIT``): a host's flood of stored changes is refused with 429 before the room is
looked up, while another address's table plays on and its host sets it up."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from limits import parse

from app.web.settings import Settings
from tests.serverkit import ServerProcess

WRITE_LIMIT = "40 per minute"
"""Small, to reach in a test: the server's own (`Settings.write_limit`) is checked below."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    proc = ServerProcess(tmp_path_factory.mktemp("writes"), env={"DOMENG_WRITE_LIMIT": WRITE_LIMIT}).start()
    yield proc
    proc.stop()


def test_a_flood_of_room_changes_from_one_address_is_refused_and_another_address_plays_on(
    server: ServerProcess,
) -> None:
    """A security tester's 16 connections toggling their rooms' open table as fast as they could
    (645 stored changes a second, each sent to every socket of the room) made another table's moves
    20 to 40 times slower: past its allowance an address gets 429 ``too_many_writes`` with
    ``Retry-After`` on every room change, before the room is looked up; other addresses none."""
    allowed = parse(WRITE_LIMIT).amount
    with server.http_from("127.0.0.2") as flood:
        room = flood.post("/api/rooms", json={"variant": "domeng"}).json()
        code, host = room["code"], {"Authorization": f"Bearer {room['host_token']}"}
        for n in range(allowed):
            reply = flood.put(f"/api/rooms/{code}/open", json={"open": n % 2 == 0}, headers=host)
            assert reply.status_code == 200, (n, reply.text)
        version = flood.get(f"/api/rooms/{code}").json()["version"]
        refused = [
            flood.put(f"/api/rooms/{code}/open", json={"open": True}, headers=host),
            flood.put(f"/api/rooms/{code}/options", json={"options": {"camat_target": 2}}, headers=host),
            flood.put(f"/api/rooms/{code}/seats/1/bot", json={"level": "hard"}, headers=host),
            flood.put(f"/api/rooms/{code}/chat", json={"spectators": True}, headers=host),
            flood.post(f"/api/rooms/{code}/seats/0", json={"name": "Ana"}),
            flood.delete(f"/api/rooms/{code}/seats/0", headers=host),
            flood.post(f"/api/rooms/{code}/start", headers=host),
            flood.post(f"/api/rooms/{code}/again", headers=host),
            flood.put(f"/api/rooms/{code}/stop", json={"stop": True}, headers=host),
            flood.put("/api/rooms/no-such-room/open", json={"open": True}, headers=host),  # not looked up
        ]
        for reply in refused:
            assert reply.status_code == 429, reply.text
            assert reply.json()["detail"]["code"] == "too_many_writes"
            assert 1 <= int(reply.headers["Retry-After"]) <= 60
        assert flood.get(f"/api/rooms/{code}").json()["version"] == version  # nothing stored
    with server.http_from("127.0.0.3") as other:
        room = other.post("/api/rooms", json={"variant": "kozel", "seats": 2, "bots": [None, "easy"]}).json()
        code, host = room["code"], {"Authorization": f"Bearer {room['host_token']}"}
        assert other.post(f"/api/rooms/{code}/seats/0", json={"name": "Budi"}).status_code == 201
        assert other.put(f"/api/rooms/{code}/open", json={"open": True}, headers=host).status_code == 200
        assert other.post(f"/api/rooms/{code}/start", headers=host).status_code == 200


def test_the_servers_allowance_lets_a_hosts_set_up_through_many_times_over() -> None:
    """Setting a five-seat table up takes about a dozen changes (bots in four seats, options, the
    open table, the chat's rules, a claim, the start, Play again): the default lets a dozen tables
    behind one address do that in the same minute, and stops a flood at 10 a second."""
    limit = parse(Settings.model_fields["write_limit"].default)
    assert limit.get_expiry() == 60
    assert 12 * 12 <= limit.amount <= 10 * limit.get_expiry()
