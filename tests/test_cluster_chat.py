"""A room's chat when the room moves between two real ``domeng serve`` processes (docs/cluster.md):
the conversation of its matches (Play again) and the host's mute of one spectator come from the
store, not from the memory of the process that hosted it. Skipped without DOMENG_TEST_REDIS_URL and
DOMENG_TEST_POSTGRES_URL."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.clusterkit import two_servers
from tests.serverkit import Client, ServerProcess


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[tuple[ServerProcess, ServerProcess, str]]:
    """Two server processes with handoffs on (the default), and the database URL."""
    yield from two_servers(tmp_path, {"DOMENG_ROUND_PAUSE_S": "0.2"})


def _spectator(server: ServerProcess, code: str, key: str | None = None) -> tuple[Client, dict[str, Any]]:
    """A spectator's socket (with the key an earlier welcome gave it) and its welcome, once it has
    the chat."""
    client = Client(server, code, hello=False)
    client.send({"type": "hello", "protocol": 1, **({"watcher": key} if key else {})})
    welcome = client.wait_for(lambda m: m["type"] == "welcome")
    client.wait_for(lambda m: m["type"] == "chat_log")
    return client, welcome


def _say(client: Client, text: str) -> dict[str, Any]:
    """The answer to a line: its ``chat`` frame (another's lines may come before it), or the ``error``."""
    client.send({"type": "chat", "text": text})
    return client.wait_for(
        lambda m: m["type"] == "error" or (m["type"] == "chat" and m["line"]["text"] == text)
    )


def test_the_rooms_conversation_and_a_muted_spectator_follow_the_room_to_another_process(
    servers: tuple[ServerProcess, ServerProcess, str],
) -> None:
    first, second, _ = servers
    room = first.create_room(bots=["easy"] * 5, turn_timer_s=0, options={"camat_target": 1})
    code, chat_api = room["code"], f"{first.url}/api/rooms/{room['code']}/chat"
    host = {"Authorization": f"Bearer {room['host_token']}"}
    assert httpx.put(chat_api, json={"spectators": True}, headers=host, timeout=10).status_code == 200
    rude, welcome = _spectator(first, code)
    key, tag = welcome["watcher"], welcome["tag"]
    kind, _ = _spectator(first, code)
    assert _say(rude, "boo")["line"]["watcher"] == tag
    assert _say(kind, "go bots")["type"] == "chat"
    assert first.start_match(code, room["host_token"]).status_code == 200
    kind.wait_for(lambda m: m["type"] == "state" and bool(m["view"]) and m["view"]["match_over"], timeout=120)
    again = httpx.post(f"{first.url}/api/rooms/{code}/again", headers=host, timeout=10)
    assert again.status_code == 200 and again.json()["match"] == 2
    log = kind.wait_for(lambda m: m["type"] == "chat_log")  # the conversation carries on
    assert [(x["text"], x["match"]) for x in log["lines"]] == [("boo", 1), ("go bots", 1)]
    reply = httpx.put(chat_api, json={"muted_spectators": {tag: True}}, headers=host, timeout=10)
    assert reply.status_code == 200
    assert _say(rude, "boo again")["code"] == "chat_muted"
    assert _say(kind, "one more")["line"]["match"] == 2
    rude.close()
    kind.close()

    # its only client now reaches the second process: the room moves there, loaded from the store
    back, welcome = _spectator(second, code, key)
    assert welcome["tag"] == tag  # the same spectator on any process
    log = next(m for m in back.messages if m["type"] == "chat_log")
    assert [(x["text"], x["match"], x["watcher"]) for x in log["lines"]] == [
        ("boo", 1, tag),
        ("go bots", 1, log["lines"][1]["watcher"]),
        ("one more", 2, log["lines"][1]["watcher"]),
    ]
    assert log["rules"]["muted_spectators"] == [tag]
    assert _say(back, "on another process")["code"] == "chat_muted"
    assert "room_taken_over" in second.log() and code in second.log()
    assert key not in json.dumps(log)
    back.close()


@pytest.fixture
def relaying(tmp_path: Path) -> Iterator[tuple[ServerProcess, ServerProcess, str]]:
    """Two server processes that never hand a room over (its sockets on the other process are
    relayed), behind a trusted proxy on this host that says who each client is."""
    yield from two_servers(
        tmp_path, {"DOMENG_ROOM_HANDOFF": "false", "DOMENG_FORWARDED_ALLOW_IPS": "127.0.0.1"}
    )


def _from(server: ServerProcess, code: str, address: str) -> Client:
    """A new spectator's socket from client ``address``, on ``server``, once it has the chat."""
    client = Client(server, code, hello=False, headers={"X-Forwarded-For": address})
    client.send({"type": "hello", "protocol": 1})
    client.wait_for(lambda m: m["type"] == "chat_log")
    return client


def test_a_relayed_spectator_is_counted_and_muted_by_its_client_address_on_the_rooms_owner(
    relaying: tuple[ServerProcess, ServerProcess, str],
) -> None:
    first, second, _ = relaying
    room = first.create_room(bots=["easy"] * 5)
    code, host = room["code"], {"Authorization": f"Bearer {room['host_token']}"}
    chat_api = f"{first.url}/api/rooms/{code}/chat"
    assert httpx.put(chat_api, json={"spectators": True}, headers=host, timeout=10).status_code == 200

    # through the relay, the spectators of one address share its allowance on the owner (10 at once)
    flood = [_from(second, code, "198.51.100.7") for _ in range(4)]
    for n, client in enumerate(flood):
        for k in range(5):
            client.send({"type": "chat", "text": f"flood {n}.{k}"})
    answers = [
        client.wait_for(
            lambda m, n=n: (
                m["type"] == "error" or (m["type"] == "chat" and m["line"]["text"].startswith(f"flood {n}."))
            )
        )["type"]
        for n, client in enumerate(flood)
        for _ in range(5)
    ]
    assert 10 <= answers.count("chat") < 20, answers  # each socket had its own 5 before

    rude = _from(second, code, "203.0.113.5")
    tag = _say(rude, "boo")["line"]["watcher"]
    reply = httpx.put(chat_api, json={"muted_spectators": {tag: True}}, headers=host, timeout=10)
    assert reply.status_code == 200
    reloaded = _from(second, code, "203.0.113.5")  # a new tag, relayed from the same address
    assert _say(reloaded, "me again")["code"] == "chat_muted"
    local = _from(first, code, "203.0.113.5")  # on the owner itself: the same client
    assert _say(local, "and here")["code"] == "chat_muted"
    other = _from(second, code, "203.0.113.6")
    assert _say(other, "hi")["type"] == "chat"
    for client in [*flood, rude, reloaded, local, other]:
        assert "203.0.113" not in json.dumps(client.messages)
        client.close()


def test_a_muted_seats_person_stays_muted_through_the_relay_when_another_takes_the_seat(
    relaying: tuple[ServerProcess, ServerProcess, str],
) -> None:
    first, second, _ = relaying
    room = first.create_room(bots=[None, None, "easy", "easy", "easy"])
    code, host = room["code"], {"Authorization": f"Bearer {room['host_token']}"}
    seats, chat_api = f"{first.url}/api/rooms/{code}/seats/1", f"{first.url}/api/rooms/{code}/chat"

    def claim(name: str, address: str) -> str:
        reply = httpx.post(seats, json={"name": name}, headers={"X-Forwarded-For": address}, timeout=10)
        assert reply.status_code == 201
        token: str = reply.json()["token"]
        return token

    ana_token = claim("Ana", "203.0.113.5")
    muted = httpx.put(chat_api, json={"spectators": True, "muted": {"1": True}}, headers=host, timeout=10)
    assert muted.status_code == 200
    left = httpx.delete(seats, headers={"Authorization": f"Bearer {ana_token}"}, timeout=10)
    assert left.status_code == 200
    ana = _from(second, code, "203.0.113.5")  # she watches on, relayed to the room's owner
    boss = Client(second, code, host=room["host_token"])  # the host, relayed too
    boss.wait_for(lambda m: m["type"] == "chat_log")
    claim("Budi", "203.0.113.6")  # another person takes her seat
    rules = ana.wait_for(lambda m: m["type"] == "chat_rules")
    assert rules["rules"]["muted"] == [] and rules["you_muted"] is True and "left" not in rules["rules"]
    assert _say(ana, "free?")["code"] == "chat_muted"
    (tag,) = rules["rules"]["muted_spectators"]
    assert boss.wait_for(lambda m: m["type"] == "chat_rules")["rules"]["left"] == {tag: "Ana"}
    lifted = httpx.put(chat_api, json={"muted_spectators": {tag: False}}, headers=host, timeout=10)
    assert lifted.status_code == 200
    assert _say(ana, "thanks")["type"] == "chat"
    for client in (ana, boss):
        assert "203.0.113" not in json.dumps(client.messages)
        client.close()
