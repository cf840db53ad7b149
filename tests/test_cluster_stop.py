"""The host's stop of a no-limit match (docs/protocol.md, ``PUT …/stop``) across a failover, with two
real ``domeng serve`` processes on one PostgreSQL database and one Redis (docs/cluster.md): the
host plays seat 0 through the process that does not own the room (their socket relayed; a
spectator on the owner keeps the room there), and their HTTP asks reach the owner as behind nginx
(the relay answers 503 ``room_elsewhere``, the next process is tried). The owner is then killed
(``kill -9``) before or after the round in play ends, and the other process takes the room over
from the stored log: the ask (or its taking back) is neither lost nor applied twice, the match
ends as asked, and every client sees the same final state.
Skipped without DOMENG_TEST_REDIS_URL and DOMENG_TEST_POSTGRES_URL."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed

from app.store import MatchRow, Store, upgrade_database
from tests.clusterkit import (
    CLOSE_TRY_AGAIN,
    LEASE_S,
    ThreadedProxy,
    assert_log_whole,
    closed_code,
    join,
    need_postgres,
    need_redis,
    play_turns,
    two_servers,
    wait_for,
)
from tests.serverkit import Client, ServerProcess, wait_gone

NO_LIMIT = {"camat_target": 0}
TAKEOVER_S = LEASE_S + 30  # the lease runs out, then a loaded machine takes the room


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[tuple[ServerProcess, ServerProcess, str]]:
    """Two processes with handoffs on (as deployed), and the database URL."""
    yield from two_servers(tmp_path, {})


@pytest.fixture
def paused_servers(tmp_path: Path) -> Iterator[tuple[ServerProcess, ServerProcess, str]]:
    """The processes of `servers` with a round pause no test waits out: a room stays between
    rounds until the test is done with it."""
    yield from two_servers(tmp_path, {"DOMENG_ROUND_PAUSE_S": "600"})


class Table:
    """A started no-limit Domeng room on ``owner``, Ana (seat 0, and the host) and four bots (or,
    with ``bots_only``, five bots and Ana the host watching): a spectator on the owner (its own
    socket: the owner keeps the room rather than hand it over) and Ana's browser through
    ``relay`` (her socket relayed to the owner)."""

    def __init__(self, owner: ServerProcess, relay: ServerProcess, bots_only: bool = False) -> None:
        bots = ["greedy", "random", "greedy", "random", "greedy"]
        room = owner.create_room(
            bots=[None, *bots[1:]] if not bots_only else bots, turn_timer_s=0, options=NO_LIMIT
        )
        self.code, self.host = room["code"], room["host_token"]
        self.token = None if bots_only else owner.claim(self.code, 0, "Ana").json()["token"]
        assert owner.start_match(self.code, self.host).status_code == 200
        self.owner, self.relay = owner, relay
        self.watcher = Client(owner, self.code)
        self.watcher.wait_for(lambda m: m["type"] == "state")
        self.ana = self.connect(relay)

    def connect(self, server: ServerProcess) -> Client:
        """Ana's browser on ``server``: her seat's token and the host's (`hello.host`)."""
        client = Client(server, self.code, hello=False)
        client.send({"type": "hello", "protocol": 1, "token": self.token, "host": self.host})
        return client

    def rejoin(self, server: ServerProcess) -> tuple[Client, dict[str, Any]]:
        """Ana's browser reconnecting to ``server`` after each 1013 (no process hosts the room
        yet) until it serves the room's state: the client and that state."""
        return join(lambda: self.connect(server), TAKEOVER_S)

    def failover(self, killed: ServerProcess, to: ServerProcess) -> tuple[Client, dict[str, Any]]:
        """``killed`` dies (``kill -9``): Ana's socket is closed 1013 (the room moved, reconnect),
        and her browser gets the room's state from ``to`` once it has taken the room over. Her
        client and that state."""
        _kill(killed)
        assert closed_code(self.ana) == CLOSE_TRY_AGAIN
        return self.rejoin(to)

    def stop(self, stop: bool) -> dict[str, Any]:
        """The host's ``PUT …/stop`` from Ana's browser, as nginx passes it: to the relay first,
        which does not host the room (503 ``room_elsewhere``), then to the owner. Its reply."""
        refused = _put_stop(self.relay, self.code, self.host, stop)
        assert refused.status_code == 503 and refused.json()["detail"]["code"] == "room_elsewhere"
        reply = _put_stop(self.owner, self.code, self.host, stop)
        assert reply.status_code == 200, reply.text
        result: dict[str, Any] = reply.json()
        assert result["host_stop"] is stop
        return result


def _put_stop(server: ServerProcess, code: str, host: str, stop: bool, timeout: float = 10) -> httpx.Response:
    return httpx.put(
        f"{server.url}/api/rooms/{code}/stop",
        json={"stop": stop},
        headers={"Authorization": f"Bearer {host}"},
        timeout=timeout,
    )


def _over(message: dict[str, Any]) -> bool:
    return message["type"] == "state" and bool(message["view"]) and message["view"]["match_over"]


def _shown(version: int, host_stop: bool) -> Any:
    """A state at ``version`` or later whose room shows ``host_stop``."""
    return lambda m: m["type"] == "state" and m["version"] >= version and m["room"]["host_stop"] is host_stop


def _play_on(client: Client, state: dict[str, Any], done: Any, timeout: float = 120.0) -> dict[str, Any]:
    """Answer each turn of the client's seat, from ``state`` (already received) on, with its first
    legal move until ``done(message)``; that message."""
    if done(state):
        return state
    client.answer(state)
    return client.wait_for(lambda m: done(m) or (client.answer(m) and False), timeout=timeout)


def _public(state: dict[str, Any]) -> dict[str, Any]:
    """What every client of a finished match sees alike: the version, the room (but who is
    connected at the moment) and the view (but the receiver's own seat, hand and moves)."""
    private = ("seat", "hand", "legal")
    view = {k: v for k, v in state["view"].items() if k not in private}
    seats = [{k: v for k, v in seat.items() if k != "connected"} for seat in state["room"]["seats"]]
    room = {k: v for k, v in state["room"].items() if k != "host"} | {"seats": seats}
    return {"version": state["version"], "room": room, "view": view}


def _stored(database_url: str, code: str) -> tuple[MatchRow, dict[str, Any] | None]:
    """The room's latest match as stored, and its exported record."""

    async def load() -> tuple[MatchRow, dict[str, Any] | None]:
        async with Store(database_url, migrate=False) as store:
            row = await store.load_match(code)
            assert row is not None
            return row, await store.export_record(row.id)

    return asyncio.run(load())


def _watch(server: ServerProcess, code: str) -> tuple[Client, dict[str, Any]]:
    """A spectator's browser on ``server``, and the first state it is sent."""
    watcher = Client(server, code)
    return watcher, watcher.wait_for(lambda m: m["type"] == "state")


def _kill(server: ServerProcess) -> None:
    workers = server.children()
    server.kill()
    assert not wait_gone(workers)


def _ended_by_host(database_url: str, code: str, final: dict[str, Any], rounds: int) -> None:
    """The match is stored finished by the host after ``rounds`` rounds, at ``final``'s version,
    each action once."""
    stored, record = _stored(database_url, code)
    assert (stored.status, stored.host_stop, stored.version) == ("finished", True, final["version"])
    assert len(stored.rounds) == rounds and all(r.is_finished for r in stored.rounds)
    assert_log_whole(stored)
    assert record is not None and record["ended_by"] == "host"


def test_a_stop_asked_through_the_relay_ends_the_match_on_the_next_owner(
    servers: tuple[ServerProcess, ServerProcess, str],
) -> None:
    """Killed before the round in play ends: the next owner finishes that round and ends the
    match with it."""
    first, second, database_url = servers
    table = Table(first, second)
    waiting = play_turns(table.ana, 2)  # a round is played, and waits on Ana
    asked = table.stop(True)
    assert asked["version"] == waiting["version"] + 1 and asked["status"] == "playing"
    for client in (table.ana, table.watcher):
        client.wait_for(_shown(asked["version"], True))

    ana, resumed = table.failover(first, to=second)
    assert resumed["version"] == asked["version"] and resumed["room"]["host_stop"] is True
    assert resumed["view"]["round"] == waiting["view"]["round"] and resumed["view"]["phase"] == "playing"
    watcher, _ = _watch(second, table.code)  # the spectator's browser, back on the new owner

    final = _play_on(ana, resumed, _over)  # the round ends by the rules, and the match with it
    assert final["room"]["status"] == "finished" and final["room"]["host_stop"] is True
    assert final["view"]["round"] == waiting["view"]["round"]  # no round dealt after it
    seen = watcher.wait_for(lambda m: m["type"] == "state" and m["version"] == final["version"])
    assert _public(seen) == _public(final)
    assert httpx.get(f"{second.url}/api/rooms/{table.code}", timeout=10).json()["host_stop"] is True
    _ended_by_host(database_url, table.code, final, rounds=waiting["view"]["round"])
    ana.close()
    watcher.close()


def test_a_match_the_stop_ended_stays_ended_on_the_next_owner(
    servers: tuple[ServerProcess, ServerProcess, str],
) -> None:
    """Killed after the round ended with the match: the next owner serves the same end."""
    first, second, database_url = servers
    table = Table(first, second)
    waiting = play_turns(table.ana, 1)
    asked = table.stop(True)
    shown = table.ana.wait_for(_shown(asked["version"], True))  # her turn still, at the new version
    final = _play_on(table.ana, shown, _over)
    assert final["room"]["status"] == "finished" and final["version"] > asked["version"]
    table.watcher.wait_for(lambda m: m["type"] == "state" and m["version"] == final["version"])

    ana, resumed = table.failover(first, to=second)
    watcher, seen = _watch(second, table.code)
    assert _public(resumed) == _public(final) == _public(seen)
    again = _put_stop(second, table.code, table.host, True)  # the host asks again: it is over
    assert again.status_code == 409 and again.json()["detail"]["code"] == "not_playing"
    _ended_by_host(database_url, table.code, final, rounds=waiting["view"]["round"])
    ana.close()
    watcher.close()


def test_a_stop_asked_between_rounds_ends_the_match_at_once_and_stays_ended(
    paused_servers: tuple[ServerProcess, ServerProcess, str],
) -> None:
    """Asked while the next round is not dealt: the match ends at once, and the next owner does
    not deal another round."""
    first, second, database_url = paused_servers
    table = Table(first, second)
    between = _play_on(
        table.ana,
        table.ana.wait_for(lambda m: m["type"] == "state"),
        lambda m: m["type"] == "state" and m["view"]["phase"] == "ready",
    )
    asked = table.stop(True)
    assert asked["status"] == "finished" and asked["version"] == between["version"] + 1
    final = table.ana.wait_for(lambda m: m["type"] == "state" and m["version"] == asked["version"])
    assert final["view"]["match_over"] is True

    ana, resumed = table.failover(first, to=second)
    watcher, seen = _watch(second, table.code)
    assert _public(resumed) == _public(final) == _public(seen)
    _ended_by_host(database_url, table.code, final, rounds=between["view"]["round"])
    ana.close()
    watcher.close()


def test_a_stop_taken_back_through_the_relay_stays_taken_back_on_the_next_owner(
    servers: tuple[ServerProcess, ServerProcess, str],
) -> None:
    first, second, database_url = servers
    table = Table(first, second)
    waiting = play_turns(table.ana, 2)
    asked = table.stop(True)
    back = table.stop(False)
    assert back["version"] == asked["version"] + 1 and back["status"] == "playing"
    for client in (table.ana, table.watcher):
        client.wait_for(_shown(back["version"], False))

    ana, resumed = table.failover(first, to=second)
    assert resumed["version"] == back["version"] and resumed["room"]["host_stop"] is False
    watcher, _ = _watch(second, table.code)
    round_ = waiting["view"]["round"]
    dealt = _play_on(ana, resumed, lambda m: m["type"] == "state" and m["view"]["round"] > round_)
    assert dealt["room"]["status"] == "playing" and not dealt["view"]["match_over"]  # it plays on
    seen = watcher.wait_for(lambda m: m["type"] == "state" and m["version"] == dealt["version"])
    assert seen["room"]["host_stop"] is False and seen["view"]["round"] == dealt["view"]["round"]
    stored, _ = _stored(database_url, table.code)
    assert (stored.status, stored.host_stop) == ("playing", False) and len(stored.rounds) > round_
    assert stored.rounds[round_ - 1].is_finished and stored.version >= dealt["version"]
    assert_log_whole(stored)
    ana.close()
    watcher.close()


def test_a_stop_asked_of_the_relay_moves_the_room_there_and_survives_its_death(
    servers: tuple[ServerProcess, ServerProcess, str],
) -> None:
    """Once the owner has no socket of its own, the host's ask reaching the relay moves the room
    there (a handoff) and is served there; that process is killed before the round ends, and the
    first one takes the room back with the ask."""
    first, second, database_url = servers
    table = Table(first, second)
    waiting = play_turns(table.ana, 2)
    table.watcher.close()  # the owner keeps no socket of its own: it hands the room over when asked

    async def asked_of_the_relay() -> object:
        reply = await asyncio.to_thread(_put_stop, second, table.code, table.host, True)
        if reply.status_code == 503:  # the owner has not yet seen its spectator leave
            assert reply.json()["detail"]["code"] == "room_elsewhere"
            return None
        assert reply.status_code == 200, reply.text
        return reply.json()

    asked: Any = asyncio.run(wait_for(asked_of_the_relay))
    assert asked["host_stop"] is True and asked["version"] == waiting["version"] + 1
    assert closed_code(table.ana) == CLOSE_TRY_AGAIN  # the room moved to the relay
    ana, moved = table.rejoin(second)  # now on the room's new owner
    assert moved["version"] == asked["version"] and moved["room"]["host_stop"] is True

    _kill(second)
    with pytest.raises(ConnectionClosed):
        ana.wait_for(lambda m: False, timeout=30)
    ana, resumed = table.rejoin(first)
    assert resumed["version"] == asked["version"] and resumed["room"]["host_stop"] is True
    final = _play_on(ana, resumed, _over)
    assert final["view"]["round"] == waiting["view"]["round"] and final["room"]["status"] == "finished"
    _ended_by_host(database_url, table.code, final, rounds=waiting["view"]["round"])
    ana.close()


def test_bots_playing_on_through_the_kill_end_the_match_with_the_round_asked(
    servers: tuple[ServerProcess, ServerProcess, str],
) -> None:
    """A table of bots, the host watching through the relay: the owner is killed as soon as the
    ask is seen, the bots' moves still being written (the round may end before the kill or after
    it). Either way the match ends with the round in play when the host asked, once."""
    first, second, database_url = servers
    table = Table(first, second, bots_only=True)
    host = table.ana
    host.wait_for(lambda m: m["type"] == "state" and m["view"] and m["view"]["round"] >= 3, timeout=120)
    asked = table.stop(True)
    seen = host.wait_for(_shown(asked["version"], True))  # between rounds it ended the match at once
    asked_in = seen["view"]["round"]  # the round in play (or just ended) when the host asked

    host, resumed = table.failover(first, to=second)
    assert resumed["version"] >= asked["version"] and resumed["room"]["host_stop"] is True
    final = resumed if _over(resumed) else host.wait_for(_over, timeout=120)
    assert final["view"]["round"] == asked_in and final["room"]["status"] == "finished"
    again, seen = _watch(second, table.code)
    assert _public(seen) == _public(final)
    _ended_by_host(database_url, table.code, final, rounds=asked_in)
    host.close()
    again.close()


def test_a_match_ended_after_several_rounds_is_the_same_on_the_next_owner(
    servers: tuple[ServerProcess, ServerProcess, str],
) -> None:
    """The next owner resumes a long match from the earlier rounds' stored outcomes
    (`app.rooms.recovery.resume`): the end it serves is the one every client saw."""
    first, second, database_url = servers
    table = Table(first, second, bots_only=True)
    table.ana.wait_for(lambda m: m["type"] == "state" and m["view"] and m["view"]["round"] >= 4, timeout=180)
    table.stop(True)
    final = table.ana.wait_for(_over, timeout=120)
    seen = table.watcher.wait_for(lambda m: m["type"] == "state" and m["version"] == final["version"])
    assert _public(seen) == _public(final)

    host, resumed = table.failover(first, to=second)
    assert _public(resumed) == _public(final)
    _ended_by_host(database_url, table.code, final, rounds=final["view"]["round"])
    host.close()


def test_a_stop_that_survived_a_failover_is_taken_back_through_a_relay_and_survives_another(
    servers: tuple[ServerProcess, ServerProcess, str], tmp_path: Path
) -> None:
    """Asked on the first owner, which is killed; taken back through a process started anew (a
    relay again: the spectator keeps the room on the second owner), which is killed too; the
    third owner plays on past the round's end."""
    first, second, database_url = servers
    table = Table(first, second)
    waiting = play_turns(table.ana, 2)
    asked = table.stop(True)
    table.ana.wait_for(_shown(asked["version"], True))
    table.ana, _ = table.failover(first, to=second)  # Ana on the second owner for now

    third = ServerProcess(tmp_path / "c", env=first.env).start()  # the first process started again
    try:
        table.watcher, _ = _watch(second, table.code)  # the owner's own socket: it keeps the room
        table.ana.close()
        table.owner, table.relay = second, third
        table.ana = table.connect(third)  # Ana's browser now reaches the new process: relayed
        table.ana.wait_for(lambda m: m["type"] == "state")
        back = table.stop(False)
        assert back["version"] == asked["version"] + 1
        table.ana.wait_for(_shown(back["version"], False))

        ana, resumed = table.failover(second, to=third)
        assert resumed["version"] == back["version"] and resumed["room"]["host_stop"] is False
        round_ = waiting["view"]["round"]
        dealt = _play_on(ana, resumed, lambda m: m["type"] == "state" and m["view"]["round"] > round_)
        assert dealt["room"]["status"] == "playing" and dealt["room"]["host_stop"] is False
        stored, _ = _stored(database_url, table.code)
        assert (stored.status, stored.host_stop) == ("playing", False) and len(stored.rounds) > round_
        assert_log_whole(stored)
        ana.close()
    finally:
        third.stop()


def test_a_stop_whose_write_the_fence_refuses_is_sent_on_to_the_new_owner(tmp_path: Path) -> None:
    """The owner's write of the ask is held on its way to PostgreSQL while the owner loses the room
    (its Redis cut: the lease runs out) and the other process takes it; let through, the write is
    refused by the fence. The ask must then be answered as the room having moved (503
    ``room_elsewhere``, which nginx passes on to the next process), not as a server error (500,
    which nginx returns to the browser: the host's stop lost); sent on, the new owner stores it once."""
    redis_url, postgres_url = need_redis(), need_postgres()
    upgrade_database(postgres_url)
    env = {"DOMENG_LEASE_S": str(LEASE_S), "DOMENG_BOT_DELAY_S": "0.02", "DOMENG_BOT_WORKERS": "1"}
    with ThreadedProxy(redis_url) as redis_of_first, ThreadedProxy(postgres_url) as postgres_of_first:
        first = ServerProcess(
            tmp_path / "a",
            env={**env, "DOMENG_REDIS_URL": redis_of_first.url, "DOMENG_DATABASE_TIMEOUT_S": "60"},
            database_url=postgres_of_first.url,
        )
        second = ServerProcess(
            tmp_path / "b", env={**env, "DOMENG_REDIS_URL": redis_url}, database_url=postgres_url
        )
        try:
            with ThreadPoolExecutor(2) as starting:
                list(starting.map(ServerProcess.start, (first, second)))
            table = Table(first, second)
            play_turns(table.ana, 2)  # the room waits on Ana: nothing else is being written
            postgres_of_first.stall()
            with ThreadPoolExecutor(1) as asking:
                pending = asking.submit(_put_stop, first, table.code, table.host, True, 120)
                redis_of_first.cut()  # the first process's lease runs out
                assert closed_code(table.ana) == CLOSE_TRY_AGAIN  # the room left the first process
                ana, taken = table.rejoin(second)  # the second takes it over: its claim raises the fence
                postgres_of_first.flow()
                refused = pending.result(timeout=120)
            assert refused.status_code == 503, refused.text
            assert (
                refused.json()["detail"]["code"] == "room_elsewhere" and refused.headers["Retry-After"] == "1"
            )
            assert taken["room"]["host_stop"] is False  # nothing of the refused write was stored

            asked = _put_stop(second, table.code, table.host, True)  # nginx's next process
            assert asked.status_code == 200 and asked.json()["version"] == taken["version"] + 1
            final = _play_on(ana, ana.wait_for(_shown(taken["version"] + 1, True)), _over)
            _ended_by_host(postgres_url, table.code, final, rounds=final["view"]["round"])
            ana.close()
        finally:
            first.stop()
            second.stop()
