"""The chat's guard against one person flooding or escaping a mute, through a real server's
sockets from several client addresses (a trusted proxy's X-Forwarded-For): the spectators' chat
allowance is each spectator's and each client address's (an IPv6 client: its /64), and a host's
mute of a spectator holds the person on a new socket, a new tag and a claimed seat."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.serverkit import Client, ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    env = {"DOMENG_FORWARDED_ALLOW_IPS": "127.0.0.1"}  # a reverse proxy on this host says who the client is
    process = ServerProcess(tmp_path_factory.mktemp("chat-guard"), env=env).start()
    yield process
    process.stop()


def _open_chat(server: ServerProcess) -> dict[str, Any]:
    """A new room whose host lets spectators write."""
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"])
    reply = httpx.put(
        f"{server.url}/api/rooms/{room['code']}/chat",
        json={"spectators": True},
        headers={"Authorization": f"Bearer {room['host_token']}"},
        timeout=10,
    )
    assert reply.status_code == 200
    return room


def _spectator(server: ServerProcess, code: str, address: str, key: str | None = None) -> tuple[Client, str]:
    """A spectator's socket from client ``address`` (with the ``key`` an earlier welcome gave it),
    once it has the chat; and its key."""
    client = Client(server, code, hello=False, headers={"X-Forwarded-For": address})
    client.send({"type": "hello", "protocol": 1, **({"watcher": key} if key else {})})
    welcome = client.wait_for(lambda m: m["type"] == "welcome")
    client.wait_for(lambda m: m["type"] == "chat_log")
    return client, welcome["watcher"]


def _burst(clients: list[Client], lines: int) -> tuple[int, float]:
    """Each client sends ``lines`` lines at once: how many of them the room took (every one is
    answered: its line, or ``chat_too_fast``), and the seconds the burst took."""
    started = time.monotonic()
    for n, client in enumerate(clients):
        for k in range(lines):
            client.send({"type": "chat", "text": f"flood {n}.{k}"})
    taken = 0
    for n, client in enumerate(clients):
        for _ in range(lines):
            answer = client.wait_for(
                lambda m, n=n: (
                    m["type"] == "error"
                    or (m["type"] == "chat" and m["line"]["text"].startswith(f"flood {n}."))
                )
            )
            if answer["type"] == "chat":
                taken += 1
            else:
                assert answer["code"] == "chat_too_fast", answer
    return taken, time.monotonic() - started


def _say(client: Client, text: str) -> dict[str, Any]:
    """The answer to a line: its ``chat`` frame (another's lines may come before it), or the ``error``."""
    client.send({"type": "chat", "text": text})
    return client.wait_for(
        lambda m: m["type"] == "error" or (m["type"] == "chat" and m["line"]["text"] == text)
    )


def test_one_address_gets_one_chat_allowance_however_many_spectators_it_opens(server: ServerProcess) -> None:
    code = _open_chat(server)["code"]
    # six spectators (six tags) from one address, six lines each at once: before, every socket had
    # its own 5 lines (30 of 36 taken); now the address has 10, and one more a second
    flood = [_spectator(server, code, "198.51.100.7")[0] for _ in range(6)]
    taken, elapsed = _burst(flood, 6)
    assert 10 <= taken <= 10 + int(elapsed) + 1 and taken < 30, (taken, elapsed)
    # one spectator (one key) on three sockets: its own 5 lines, and one more per 2 s (before: 15)
    first, key = _spectator(server, code, "198.51.100.8")
    same = [first] + [_spectator(server, code, "198.51.100.8", key)[0] for _ in range(2)]
    taken, elapsed = _burst(same, 5)
    assert 5 <= taken <= 5 + int(elapsed / 2) + 1 and taken < 15, (taken, elapsed)
    # an IPv6 client is its /64: four of its addresses share one allowance (before: 20)
    v6 = [_spectator(server, code, f"2001:db8:5:5::{n}")[0] for n in range(1, 5)]
    taken, elapsed = _burst(v6, 5)
    assert 10 <= taken <= 10 + int(elapsed) + 1 and taken < 20, (taken, elapsed)
    # another address chats on; a refused line was answered with the clear refusal only
    other, _ = _spectator(server, code, "198.51.100.9")
    assert _say(other, "my turn")["type"] == "chat"
    refusal = next(m for m in flood[-1].messages if m["type"] == "error")
    assert refusal["code"] == "chat_too_fast" and "wait" in refusal["message"]
    for client in [*flood, *same, *v6, other]:
        client.close()


def test_a_muted_spectator_stays_muted_on_a_new_tag_and_a_claimed_seat(server: ServerProcess) -> None:
    room = _open_chat(server)
    code, host = room["code"], {"Authorization": f"Bearer {room['host_token']}"}
    housemate, _ = _spectator(server, code, "203.0.113.5")
    assert _say(housemate, "hello from the sofa")["type"] == "chat"  # heard before the mute
    rude, key = _spectator(server, code, "203.0.113.5")
    tag = _say(rude, "boo")["line"]["watcher"]
    reply = httpx.put(
        f"{server.url}/api/rooms/{code}/chat",
        json={"muted_spectators": {tag: True}},
        headers=host,
        timeout=10,
    )
    assert reply.status_code == 200 and reply.json() == {
        "spectators": True,
        "muted": [],
        "muted_spectators": [tag],
    }
    assert _say(rude, "boo again")["code"] == "chat_muted"
    rude.close()
    reloaded, new_key = _spectator(server, code, "203.0.113.5")  # its key thrown away: a new tag
    assert new_key != key
    assert _say(reloaded, "it's me again")["code"] == "chat_muted"  # before: taken
    assert _say(housemate, "I was heard before")["type"] == "chat"
    neighbour, _ = _spectator(server, code, "203.0.113.6")
    assert _say(neighbour, "hi")["type"] == "chat"

    claim = httpx.post(
        f"{server.url}/api/rooms/{code}/seats/0",
        json={"name": "Rude", "watcher": key},
        headers={"X-Forwarded-For": "203.0.113.5"},
        timeout=10,
    )
    assert claim.status_code == 201
    seated = Client(server, code, claim.json()["token"], headers={"X-Forwarded-For": "203.0.113.5"})
    seated.wait_for(lambda m: m["type"] == "chat_log")
    assert _say(seated, "now I play")["code"] == "chat_muted"  # before: taken, the seat unmuted
    rules = neighbour.wait_for(lambda m: m["type"] == "chat_rules" and m["rules"]["muted"] == [0])
    assert rules["rules"]["muted_spectators"] == [tag]
    reply = httpx.put(
        f"{server.url}/api/rooms/{code}/chat", json={"muted": {"0": False}}, headers=host, timeout=10
    )
    assert reply.status_code == 200
    assert _say(seated, "thank you")["type"] == "chat"  # the host lifted it
    for client in (housemate, reloaded, neighbour, seated):
        assert "203.0.113" not in json.dumps(client.messages)
        client.close()


def test_a_mute_names_a_seat_only_by_its_number_and_a_bad_one_is_no_such_seat(server: ServerProcess) -> None:
    """``PUT …/chat`` ``muted`` takes a seat by its canonical number, ``"0"`` to ``"4"`` within the
    table; any other key (one that only converts to a seat, or past the table) is answered as a
    seat's path answers a seat the table does not have: 404 ``no_such_seat``, nothing changed."""
    room = _open_chat(server)
    code, host = room["code"], {"Authorization": f"Bearer {room['host_token']}"}
    missing = httpx.post(f"{server.url}/api/rooms/{code}/seats/5", json={"name": "Eko"}, timeout=10)
    assert missing.status_code == 404 and missing.json()["detail"]["code"] == "no_such_seat"
    with httpx.Client(base_url=server.url, headers=host, timeout=10) as http:
        for key in (" 1", "01", "1 ", "+1", "1.0", "١", "5", "-1", "x", ""):
            reply = http.put(f"/api/rooms/{code}/chat", json={"muted": {key: True}})
            assert reply.status_code == 404, (key, reply.text)
            assert reply.json()["detail"]["code"] == "no_such_seat", key
        unchanged = http.put(f"/api/rooms/{code}/chat", json={"spectators": True})
        assert unchanged.status_code == 200 and unchanged.json()["muted"] == [], unchanged.text
        reply = http.put(f"/api/rooms/{code}/chat", json={"muted": {"4": True, "1": True}})
        assert reply.status_code == 200 and reply.json()["muted"] == [1, 4], reply.text


def test_a_seats_path_names_it_only_by_its_number(server: ServerProcess) -> None:
    """``…/seats/{seat}`` takes the seat's canonical number alone, as the chat's mutes do: a path
    that only converts to a seat (``01``, ``+1``, `` 1``, ``1_0``) names none, 404 ``no_such_seat``
    for each of the three seat endpoints, and nothing changes; ``1`` takes seat 1."""
    room = _open_chat(server)
    code, host = room["code"], {"Authorization": f"Bearer {room['host_token']}"}
    before = server.room(code)["seats"]
    with httpx.Client(base_url=server.url, timeout=10) as http:
        for path in ("01", "+1", "%201", "1%20", "1_0", "%D9%A1", "x", "-1"):
            replies = (
                http.post(f"/api/rooms/{code}/seats/{path}", json={"name": "Eko"}),
                http.delete(f"/api/rooms/{code}/seats/{path}", headers={"Authorization": "Bearer nope"}),
                http.put(f"/api/rooms/{code}/seats/{path}/bot", json={"level": "easy"}, headers=host),
            )
            for reply in replies:
                assert reply.status_code == 404, (path, reply.request.method, reply.text)
                assert reply.json()["detail"]["code"] == "no_such_seat", (path, reply.text)
        assert server.room(code)["seats"] == before
        taken = http.post(f"/api/rooms/{code}/seats/1", json={"name": "Eko"})
        assert taken.status_code == 201, taken.text
        assert server.room(code)["seats"][1]["name"] == "Eko"


def test_one_request_mutes_or_unmutes_at_most_16_spectators(server: ServerProcess) -> None:
    """docs/protocol.md: ``muted_spectators`` lists at most 16 tags per request (422 past that)."""
    room = _open_chat(server)
    host = {"Authorization": f"Bearer {room['host_token']}"}
    with httpx.Client(base_url=server.url, headers=host, timeout=10) as http:
        tags = [f"{n:08x}" for n in range(17)]
        reply = http.put(
            f"/api/rooms/{room['code']}/chat", json={"muted_spectators": dict.fromkeys(tags, True)}
        )
        assert reply.status_code == 422, reply.text
        reply = http.put(
            f"/api/rooms/{room['code']}/chat", json={"muted_spectators": dict.fromkeys(tags[:16], True)}
        )
        assert reply.status_code == 200 and reply.json()["muted_spectators"] == sorted(tags[:16]), reply.text
