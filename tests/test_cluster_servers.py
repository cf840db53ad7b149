"""Two real ``domeng serve`` processes on one PostgreSQL database and one Redis (docs/cluster.md):
a room is hosted by one of them at a time, the other serves its sockets through it (the relay:
the same versions, in the same order, on both); when the owner is killed (``kill -9``) or paused
past its lease (``SIGSTOP``), relayed sockets close with 1013 (try again) and the other process
takes the room over from the stored log, at the stored version, nothing lost and nothing applied
twice.
Skipped without DOMENG_TEST_REDIS_URL and DOMENG_TEST_POSTGRES_URL."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed

from tests.clusterkit import (
    CLOSE_TRY_AGAIN,
    LEASE_S,
    assert_log_whole,
    closed_code,
    join,
    new_table,
    play_turns,
    stored_match,
    two_servers,
)
from tests.serverkit import Client, ServerProcess, wait_gone
from tests.test_server_silence import _seat0, _silent_seat


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[tuple[ServerProcess, ServerProcess, str]]:
    """Two server processes, started side by side once the database is migrated (by this process:
    two migrating at once would race), and the database URL. Rooms are never handed over here
    (``DOMENG_ROOM_HANDOFF=false``): these tests are about the relay, which serves a room's
    sockets on the other process whether or not the owner has sockets of its own
    (tests/test_cluster_handoff.py tests handoffs)."""
    yield from two_servers(tmp_path, {"DOMENG_ROOM_HANDOFF": "false"})


def _refused(server: ServerProcess, code: str, token: str | None) -> int:
    """The close code of a socket to ``code`` on ``server`` that is refused before any state."""
    try:  # the refusal may come before the hello is sent
        client = Client(server, code, token)
        message = client.recv()
    except ConnectionClosed as closed:
        assert closed.rcvd is not None
        return closed.rcvd.code
    client.ws.close()
    raise AssertionError(f"not refused: {message['type']}")


def _join(
    server: ServerProcess, code: str, token: str | None, timeout: float
) -> tuple[Client, dict[str, Any]]:
    """`join` ``code`` on ``server`` with ``token`` (or as a spectator)."""
    return join(lambda: Client(server, code, token), timeout)


def _versions(client: Client, since: int) -> list[int]:
    return [m["version"] for m in client.messages if m["type"] == "state" and m["version"] >= since]


def test_a_player_through_the_other_process_plays_and_moves_when_the_owner_is_killed(
    servers: tuple[ServerProcess, ServerProcess, str],
) -> None:
    first, second, database_url = servers
    code, token = new_table(first)
    watcher = Client(first, code)  # a spectator on the room's owner
    first_seen = watcher.wait_for(lambda m: m["type"] == "state")["version"]
    player = Client(second, code, token)  # Ana, through the other process (relayed)
    waiting = play_turns(player, 3)  # Ana's turn: the room waits on her
    joined = next(m["version"] for m in player.messages if m["type"] == "state")
    watcher.wait_for(lambda m: m["type"] == "state" and m["version"] == waiting["version"])
    # the same versions, in the same order, on both processes
    start = max(first_seen, joined)
    assert _versions(player, start) == _versions(watcher, start)
    assert _versions(player, start) == sorted(set(_versions(player, start)))
    assert len(_versions(player, start)) > 6
    # HTTP room calls are not relayed: the other process says to try again
    reply = httpx.get(f"{second.url}/api/rooms/{code}", timeout=10)
    assert reply.status_code == 503 and reply.headers["Retry-After"] == "1"
    assert reply.json()["detail"]["code"] == "room_elsewhere"
    # a client that resyncs through the relay from a version it kept gets what it missed
    behind = Client(second, code, hello=False)
    behind.send({"type": "hello", "protocol": 1, "token": None, "since": waiting["version"] - 1})
    while (resync := json.loads(behind.ws.recv(timeout=10)))["type"] != "state":
        pass  # the welcome, the chat log
    assert resync["version"] == waiting["version"]
    assert "log" not in resync["view"] and resync["events"], "a whole state, not a resync by version"
    behind.ws.close()
    workers = first.children()
    first.kill()
    assert not wait_gone(workers)
    assert closed_code(player) == CLOSE_TRY_AGAIN  # room_moved: reconnect
    back, resumed = _join(second, code, token, timeout=LEASE_S + 30)
    assert resumed["version"] == waiting["version"]
    for key in ("hand", "chain", "table", "stones", "to_act", "legal", "round"):
        assert resumed["view"][key] == waiting["view"][key], key
    action = {k: v for k, v in resumed["view"]["legal"][0].items() if k != "seat"}
    back.send({"type": "action", "version": resumed["version"], "action": action})
    later = play_turns(back, 1)  # the bots play on, on the new owner, up to Ana's next-but-one turn
    back.ws.close()
    stored = stored_match(database_url, code)
    assert_log_whole(stored)
    assert stored.version == later["version"]
    by_ana = [a for r in stored.rounds for a in r.actions if a.actor == "human"]
    assert len(by_ana) == 5  # 3 through the relay to the first process, 2 on the second: each once


def _presence(watcher: Client, connected: bool) -> dict[str, Any]:
    """The next presence (or state) in which seat 0 is ``connected`` (or not), as ``watcher`` sees it."""

    def seat_0(message: dict[str, Any]) -> bool:
        seats = message.get("seats") if message["type"] == "presence" else None
        return bool(seats) and seats[0]["connected"] is connected

    return watcher.wait_for(seat_0)


def test_the_owner_sees_a_relayed_player_come_and_go_even_when_the_relay_dies(
    servers: tuple[ServerProcess, ServerProcess, str],
) -> None:
    first, second, _ = servers
    code, token = new_table(first)
    watcher = Client(first, code)  # a spectator on the owner
    player = Client(second, code, token)
    _presence(watcher, True)
    player.ws.close()  # the relay says goodbye
    _presence(watcher, False)
    Client(second, code, token)
    _presence(watcher, True)
    workers = second.children()
    second.kill()  # the relay dies: no goodbye, its heartbeats stop
    assert not wait_gone(workers)
    _presence(watcher, False)


def test_a_relayed_player_moves_when_the_owner_stops_cleanly(
    servers: tuple[ServerProcess, ServerProcess, str],
) -> None:
    first, second, database_url = servers
    code, token = new_table(first)
    player = Client(second, code, token)
    waiting = play_turns(player, 2)
    first.stop()  # SIGTERM: the room is told it moved (not "restarting"), its lease released
    assert closed_code(player) == CLOSE_TRY_AGAIN
    back, resumed = _join(second, code, token, timeout=10)
    assert resumed["version"] == waiting["version"]
    back.ws.close()
    assert_log_whole(stored_match(database_url, code))


def test_a_reconnect_through_the_relay_does_not_take_the_seat_from_a_later_window(
    servers: tuple[ServerProcess, ServerProcess, str],
) -> None:
    """The relay passes ``hello.resume`` on and the owner decides, for its own sockets and relayed
    ones alike: Ana's relayed window drops, she opens the seat on the owner; the relayed window's
    reconnect is closed as replaced, and the owner's socket keeps the seat. A relayed reconnect of
    the seat's latest connection takes it."""
    first, second, _ = servers
    code, token = new_table(first)
    relayed = Client(second, code, token)  # through the other process
    connection = relayed.wait_for(lambda m: m["type"] == "welcome")["connection"]
    relayed.wait_for(lambda m: m["type"] == "state")
    relayed.close()  # its network drops
    window = Client(first, code, token)  # a window on the owner
    latest = window.wait_for(lambda m: m["type"] == "welcome")["connection"]
    window.wait_for(lambda m: m["type"] == "state")
    retry = Client(second, code, token, resume=connection)
    with pytest.raises(ConnectionClosed) as closed:
        retry.wait_for(lambda m: False, timeout=10)
    assert closed.value.rcvd is not None
    assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (
        4001,
        "this seat was opened in another window",
    )
    window.send({"type": "ping"})
    window.wait_for(lambda m: m["type"] == "pong")  # still the seat's
    window.close()
    back = Client(second, code, token, resume=latest)  # that window's reconnect, through the relay
    assert back.wait_for(lambda m: m["type"] == "welcome")["seat"] == 0
    back.wait_for(lambda m: m["type"] == "state")
    back.close()


def _seat0_connected(connected: bool) -> Any:
    """A predicate: a ``presence`` frame telling that seat 0 is (or is not) connected."""
    return lambda m: m["type"] == "presence" and m["seats"][0]["connected"] is connected


def test_a_reconnect_takes_the_seat_back_once_the_relayed_later_window_closed(
    servers: tuple[ServerProcess, ServerProcess, str],
) -> None:
    """Ana's window on the owner drops; she opens the seat through the relay, then closes that
    window: once the owner knows the relayed socket ended, the first window's automatic
    reconnect takes the seat back."""
    first, second, _ = servers
    code, token = new_table(first)
    watcher = Client(first, code)  # sees the seat's connections come and go
    watcher.wait_for(lambda m: m["type"] == "state")
    own = Client(first, code, token)
    connection = own.wait_for(lambda m: m["type"] == "welcome")["connection"]
    own.wait_for(lambda m: m["type"] == "state")
    watcher.wait_for(_seat0_connected(True))
    own.close()  # its network drops
    watcher.wait_for(_seat0_connected(False))
    relayed, _ = _join(second, code, token, timeout=30)  # a window through the other process
    assert relayed.messages[0]["type"] == "welcome" and relayed.messages[0]["seat"] == 0
    watcher.wait_for(_seat0_connected(True))
    relayed.close()  # the player closes it
    watcher.wait_for(_seat0_connected(False))  # the owner knows it ended
    back = Client(first, code, token, resume=connection)
    assert back.wait_for(lambda m: m["type"] == "welcome")["seat"] == 0
    back.wait_for(lambda m: m["type"] == "state")
    back.close()
    watcher.close()


def test_a_relay_with_no_owner_answering_says_try_again(
    servers: tuple[ServerProcess, ServerProcess, str],
) -> None:
    first, second, _ = servers
    code, token = new_table(first)
    assert first.proc is not None
    first.proc.send_signal(signal.SIGSTOP)  # holds the lease and its subscription, answers nothing
    try:
        assert _refused(second, code, token) == CLOSE_TRY_AGAIN
    finally:
        first.proc.send_signal(signal.SIGCONT)


def test_an_owner_paused_past_its_lease_writes_nothing_and_its_clients_move(
    servers: tuple[ServerProcess, ServerProcess, str],
) -> None:
    first, second, database_url = servers
    # a bots-only room keeps writing on its owner: it is mid-move when the owner is paused
    room = first.create_room(bots=["greedy", "random", "greedy", "random", "greedy"], turn_timer_s=0)
    assert first.start_match(room["code"], room["host_token"]).status_code == 200
    code = room["code"]
    watcher = Client(first, code)
    watcher.wait_for(lambda m: m["type"] == "state" and m["version"] > 3)
    assert first.proc is not None
    first.proc.send_signal(signal.SIGSTOP)
    taken, state = _join(second, code, None, timeout=LEASE_S + 30)  # a spectator takes it over
    first.proc.send_signal(signal.SIGCONT)
    # the paused owner wakes: it must not write; its watcher is told to reconnect
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            watcher.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == CLOSE_TRY_AGAIN
    assert '"room_lease_lost"' in first.log()
    later = taken.wait_for(lambda m: m["type"] == "state" and m["version"] > state["version"] + 5)
    taken.ws.close()
    stored = stored_match(database_url, code)
    assert_log_whole(stored)
    assert stored.version >= later["version"]


PING_INTERVAL_S, PING_TIMEOUT_S, GRACE_S = 5.0, 25.0, 30.0


@pytest.fixture
def silence_servers(tmp_path: Path) -> Iterator[tuple[ServerProcess, ServerProcess, str]]:
    """The two processes of `servers`, their sockets pinged every 5 s and dropped after 25 s
    without a pong, and a seat's grace of 30 s."""
    yield from two_servers(
        tmp_path,
        {
            "DOMENG_ROOM_HANDOFF": "false",
            "DOMENG_PING_INTERVAL_S": str(PING_INTERVAL_S),
            "DOMENG_PING_TIMEOUT_S": str(PING_TIMEOUT_S),
            "DOMENG_DISCONNECT_GRACE_S": str(GRACE_S),
        },
    )


def test_a_relayed_player_whose_network_goes_silent_gets_the_grace_from_its_last_word(
    silence_servers: tuple[ServerProcess, ServerProcess, str],
) -> None:
    """A seat held through the relay by a socket that goes silent (no FIN, no RST, no pong) is
    covered the grace after its client's last word, as on the owner
    (tests/test_server_silence.py): the relay notices the silence only at its ping timeout, and
    tells the owner how long the client had been silent then, so the owner does not start the
    grace only when the goodbye reaches it."""
    first, second, _ = silence_servers
    room = first.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
    code = room["code"]
    token = first.claim(code, 0, "Ana").json()["token"]
    sock = _silent_seat(second, code, token)  # through the other process: relayed
    try:
        assert first.start_match(code, room["host_token"]).status_code == 200
        watcher = Client(first, code)  # a spectator on the owner
        watcher.wait_for(lambda m: m["type"] == "state" and (s := _seat0(m)) is not None and s["connected"])
        silent_from = time.monotonic()  # Ana's socket says nothing from now on
        watcher.wait_for(lambda m: (s := _seat0(m)) is not None and s["covered"], timeout=150)
        covered_after = time.monotonic() - silent_from
        # a generous upper bound, far from both sides on a loaded machine: nothing is heard from
        # Ana after silent_from, so her grace ends GRACE_S (30 s) after it; counted from when her
        # goodbye reached the owner, it ended no sooner than the ping timeout later (55 s)
        assert covered_after < GRACE_S + 15, f"covered {covered_after:.0f} s after the network went silent"
        watcher.close()
    finally:
        sock.close()


def test_a_spectator_relayed_through_the_other_process_is_removed_with_the_reason(
    servers: tuple[ServerProcess, ServerProcess, str],
) -> None:
    """The host's removal of a spectator closes its sockets on the owner and through the relay
    alike, with the same code and reason (the relay passes the close's reason on, and the other
    process knows it)."""
    first, second, _ = servers
    room = first.create_room(bots=[None, "greedy", "greedy", "random", "greedy"], turn_timer_s=0)
    code = room["code"]
    here = Client(first, code)  # a spectator's tab on the owner
    welcome = here.wait_for(lambda m: m["type"] == "welcome")
    there = Client(second, code, hello=False)  # the same spectator's other tab, relayed
    there.send({"type": "hello", "protocol": 1, "token": None, "watcher": welcome["watcher"]})
    assert there.wait_for(lambda m: m["type"] == "welcome")["tag"] == welcome["tag"]
    there.wait_for(lambda m: m["type"] == "state")
    reply = httpx.delete(
        f"{first.url}/api/rooms/{code}/spectators/{welcome['tag']}",
        headers={"Authorization": f"Bearer {room['host_token']}"},
        timeout=10,
    )
    assert reply.status_code == 200 and reply.json() == {"removed": 2}, reply.text
    for client in (here, there):
        with pytest.raises(ConnectionClosed) as closed:
            client.wait_for(lambda m: False, timeout=10)
        assert closed.value.rcvd is not None
        assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (
            4006,
            "the host removed you from this room",
        )
