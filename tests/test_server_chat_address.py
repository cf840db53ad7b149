"""One client address's chat allowance across every room (``DOMENG_CHAT_LIMIT``,
`app.edge.endpoint.serve`) over a real server and real sockets: seats of one address in several
rooms share it, past it a line is refused with the room's own ``chat_too_fast``, and another address
chats on; the default lets a person chatting in two rooms through at each room's own limit. Across
processes: tests/test_cluster_shared.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from limits import parse_many

from app.edge.endpoint import CHAT_BURST, CHAT_PER_S
from app.web.settings import Settings
from tests.serverkit import Client, ServerProcess

ALLOWED = 6
"""The chat lines one address may send in a minute on this module's server."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    env = {"DOMENG_CHAT_LIMIT": f"{ALLOWED} per minute"}
    proc = ServerProcess(tmp_path_factory.mktemp("chat-address"), env=env).start()
    yield proc
    proc.stop()


def seated(server: ServerProcess, code: str, seat: int, name: str, address: str) -> Client:
    """A person of client ``address`` takes ``seat`` of room ``code`` and opens it, once it has
    the chat."""
    with server.http_from(address) as http:
        claim = http.post(f"/api/rooms/{code}/seats/{seat}", json={"name": name})
    assert claim.status_code == 201, claim.text
    client = Client(server, code, claim.json()["token"], source=address)
    client.wait_for(lambda m: m["type"] == "chat_log")
    return client


def say(client: Client, text: str) -> dict[str, Any]:
    """The answer to a line: its ``chat`` frame, or the ``error``."""
    client.send({"type": "chat", "text": text})
    return client.wait_for(
        lambda m: m["type"] == "error" or (m["type"] == "chat" and m["line"]["text"] == text)
    )


def test_one_address_seated_in_many_rooms_shares_one_chat_allowance(server: ServerProcess) -> None:
    """A security tester's 32 seat sockets over 16 rooms stored ~16 lines a second from one
    address (each room's allowance is its own): the address's lines across rooms now share one
    allowance, past which each room refuses the line with ``chat_too_fast`` (nothing stored, the
    socket open), while another address seated beside it chats on."""
    codes = [server.create_room()["code"] for _ in range(3)]
    flood = [seated(server, code, 0, "Ana", "127.0.0.2") for code in codes]
    for n in range(ALLOWED):  # two lines in each room: within each room's own 5 per 10 s
        line = say(flood[n % 3], f"line {n}")
        assert line["type"] == "chat", line
    for n, client in enumerate(flood):
        refused = say(client, f"one more {n}")
        assert refused["type"] == "error" and refused["code"] == "chat_too_fast", refused
    other = seated(server, codes[0], 1, "Budi", "127.0.0.3")
    assert say(other, "hello Ana")["type"] == "chat"
    assert not any(m["type"] == "chat" and m["line"]["text"].startswith("one more") for m in other.messages)
    for client in [*flood, other]:
        client.close()


def test_a_person_chatting_in_two_rooms_never_meets_the_default() -> None:
    """Each room lets a seat (or a spectator) send `CHAT_BURST` lines at once and as many per
    `CHAT_PER_S` seconds after: in a minute, two rooms at that pace send fewer lines than one
    address may; in an hour, two rooms at a line every 10 s each (a person talking without a
    break) do too."""
    minute, hour = parse_many(Settings.model_fields["chat_limit"].default)
    per_room = CHAT_BURST + CHAT_BURST / CHAT_PER_S * minute.get_expiry()
    assert 2 * per_room < minute.amount
    assert hour.get_expiry() == 3600 and hour.amount > 2 * (1 + 3600 / 10)


def test_an_addresss_hourly_allowance_holds_when_its_minutes_has_room(tmp_path: Path) -> None:
    """A minute's allowance alone let one address store 115,200 lines a day: past the hour's (here
    3 lines) a line is refused with ``chat_too_fast`` though the minute's still has room."""
    env = {"DOMENG_CHAT_LIMIT": "100 per minute; 3 per hour"}
    proc = ServerProcess(tmp_path, env=env).start()
    try:
        client = seated(proc, proc.create_room()["code"], 0, "Ana", "127.0.0.4")
        for n in range(3):
            assert say(client, f"line {n}")["type"] == "chat"
        refused = say(client, "one more")
        assert refused["type"] == "error" and refused["code"] == "chat_too_fast", refused
        client.close()
    finally:
        proc.stop()
