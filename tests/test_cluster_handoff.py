"""Handoffs between two real ``domeng serve`` processes on one PostgreSQL database and one Redis
(docs/cluster.md, "Handoff"): a room whose clients all reach the other process moves there (its
lease given up and taken, the room loaded from the stored log), so nothing of it is relayed; an
owner with a socket of its own keeps the room and relays. Skipped without DOMENG_TEST_REDIS_URL
and DOMENG_TEST_POSTGRES_URL."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.clusterkit import (
    CLOSE_TRY_AGAIN,
    assert_log_whole,
    can_play,
    closed_code,
    new_table,
    play_turns,
    stored_match,
    two_servers,
)
from tests.serverkit import Client, ServerProcess


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[tuple[ServerProcess, ServerProcess, str]]:
    """Two server processes with handoffs on (the default), and the database URL."""
    yield from two_servers(tmp_path, {})


def _events(server: ServerProcess, event: str, code: str) -> list[dict[str, object]]:
    """The JSON log lines of ``server`` with this ``event`` for room ``code``."""
    found = []
    for line in server.log().splitlines():
        if f'"{event}"' in line and code in line:
            record = json.loads(line)
            if record.get("event") == event and record.get("room") == code:
                found.append(record)
    return found


def test_a_room_moves_to_the_process_its_only_client_reaches_and_plays_on_there(
    servers: tuple[ServerProcess, ServerProcess, str],
) -> None:
    first, second, database_url = servers
    code, token = new_table(first)  # created, claimed and started on the first process
    player = Client(second, code, token)  # its one client reaches the second
    waiting = play_turns(player, 2)
    assert len(_events(first, "room_handed_over", code)) == 1
    assert len(_events(second, "room_taken_over", code)) == 1
    # the room lives on the second process now: the first stopping does not touch its client
    first.stop()
    action = {k: v for k, v in waiting["view"]["legal"][0].items() if k != "seat"}
    player.send({"type": "action", "version": waiting["version"], "action": action})
    after = player.wait_for(can_play)  # the move stored, the bots played on, the next turn
    assert after["version"] > waiting["version"]
    assert not any(m["type"] == "error" for m in player.messages), player.messages
    versions = [m["version"] for m in player.messages if m["type"] == "state"]
    assert versions == sorted(versions), "a version was seen out of order"
    player.close()
    assert_log_whole(stored_match(database_url, code))


def test_an_http_call_on_the_other_process_takes_a_room_nobody_is_connected_to(
    servers: tuple[ServerProcess, ServerProcess, str],
) -> None:
    first, second, _ = servers
    room = first.create_room(bots=[None, "greedy", "greedy", "random", "greedy"], turn_timer_s=0)
    claimed = second.claim(room["code"], 0, "Ana")  # no 503 room_elsewhere: the room came here
    assert claimed.status_code == 201, claimed.text
    assert second.start_match(room["code"], room["host_token"]).status_code == 200
    assert len(_events(second, "room_taken_over", room["code"])) == 1
    player = Client(second, room["code"], claimed.json()["token"])
    play_turns(player, 1)
    player.close()


def test_an_owner_with_a_client_of_its_own_keeps_the_room_and_relays(
    servers: tuple[ServerProcess, ServerProcess, str],
) -> None:
    first, second, _ = servers
    code, token = new_table(first)
    watcher = Client(first, code)  # a spectator on the owner
    watcher.wait_for(lambda m: m["type"] == "state")
    player = Client(second, code, token)
    waiting = play_turns(player, 2)
    assert watcher.wait_for(lambda m: m["type"] == "state" and m["version"] >= waiting["version"])
    assert not _events(first, "room_handed_over", code)
    # relayed: the owner stopping moves the player (1013), where it finds the room again
    first.stop()
    assert closed_code(player) == CLOSE_TRY_AGAIN


def test_an_open_table_handed_over_is_listed_once_by_every_process(
    servers: tuple[ServerProcess, ServerProcess, str],
) -> None:
    """The lobby after a handoff: every process lists the open table, and only once (the former
    host's board is published at the handoff, so it does not list it beside the new host's)."""
    first, second, _ = servers
    room = first.create_room(bots=[None, None, "greedy", "random", "greedy"], turn_timer_s=0)
    code, host = room["code"], {"Authorization": f"Bearer {room['host_token']}"}
    opened = httpx.put(f"{first.url}/api/rooms/{code}/open", json={"open": True}, headers=host, timeout=10)
    assert opened.status_code == 200, opened.text
    watcher = Client(second, code, host=room["host_token"])  # the host there lists it, through the second
    watcher.wait_for(lambda m: m["type"] == "state")
    assert len(_events(second, "room_taken_over", code)) == 1
    for process in (first, second):  # the first sees the second's board at its next publication
        deadline = time.monotonic() + 30
        while True:
            tables = httpx.get(f"{process.url}/api/open-tables", timeout=10).json()["tables"]
            listed = [t["code"] for t in tables].count(code)
            assert listed <= 1, (process.url, tables)
            if listed == 1:
                break
            assert time.monotonic() < deadline, (process.url, tables)
            time.sleep(0.2)
    watcher.close()


def test_an_open_table_handed_over_keeps_its_first_listing_time(
    servers: tuple[ServerProcess, ServerProcess, str],
) -> None:
    """A host who reconnects through another process does not make their table new in the lobby:
    the room loaded there keeps the match's first listing time (stored on the database's clock,
    ``matches.listed_at``), so its ``waiting_s`` goes on."""
    first, second, _ = servers
    room = first.create_room(bots=[None, None, "greedy", "random", "greedy"], turn_timer_s=0)
    code, host = room["code"], {"Authorization": f"Bearer {room['host_token']}"}
    opened = httpx.put(f"{first.url}/api/rooms/{code}/open", json={"open": True}, headers=host, timeout=10)
    assert opened.status_code == 200, opened.text

    def listed(process: ServerProcess) -> dict[str, Any] | None:
        tables = httpx.get(f"{process.url}/api/open-tables", timeout=10).json()["tables"]
        return next((t for t in tables if t["code"] == code and t.get("here") is not None), None)

    def until(ok: Callable[[], bool]) -> None:
        deadline = time.monotonic() + 30
        while not ok():
            assert time.monotonic() < deadline
            time.sleep(0.1)

    there = Client(first, code, host=room["host_token"])  # listed while its host is there
    there.wait_for(lambda m: m["type"] == "state")
    until(lambda: (table := listed(first)) is not None and table["waiting_s"] >= 2.0)
    there.close()
    again = Client(second, code, host=room["host_token"])  # the host again, through the second
    again.wait_for(lambda m: m["type"] == "state")
    until(lambda: len(_events(second, "room_taken_over", code)) == 1)
    until(lambda: listed(second) is not None)
    table = listed(second)
    assert table is not None and table["waiting_s"] >= 2.0, table
    again.close()
