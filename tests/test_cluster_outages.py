"""PostgreSQL gone for two real ``domeng serve`` processes sharing it and Redis (docs/cluster.md,
issue 15): their database connections go through a `tests.clusterkit.ThreadedProxy` the test cuts
(every connection closed, new ones refused) and mends; the machine's PostgreSQL is never touched.
While it is cut, a move is refused with ``not_saved`` (docs/protocol.md) to the player who made it,
whether connected to the room's owner or relayed through the other process, and nothing is sent
for it; neither process dies. Once mended, the same move is accepted and play goes on: every
client sees each version once, in order, and the stored actions are the moves they saw.
Skipped without DOMENG_TEST_REDIS_URL and DOMENG_TEST_POSTGRES_URL."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.store import MatchRow, upgrade_database
from tests.clusterkit import (
    ThreadedProxy,
    assert_log_whole,
    need_postgres,
    need_redis,
    stored_match,
)
from tests.serverkit import Client, ServerProcess, my_turn_to_place

LEASE_S = 15.0
"""Long: the room must stay on its owner throughout (a lease lost to a starved renewal on a loaded
machine would move it, which tests/test_cluster_servers.py covers), so it is renewed every 5 s
with 5 s to answer."""
DATABASE_TIMEOUT_S = 3.0
"""The servers' PostgreSQL timeout (``DOMENG_DATABASE_TIMEOUT_S``): a stalled statement fails
after this long."""
ANA, BUDI = 0, 1
"""The two people at the table; the other three seats are bots."""


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[tuple[ServerProcess, ServerProcess, ThreadedProxy, str]]:
    """Two server processes whose PostgreSQL is reached through one proxy, the proxy, and the
    database's own URL (not through the proxy)."""
    redis_url, postgres_url = need_redis(), need_postgres()
    upgrade_database(postgres_url)
    with ThreadedProxy(postgres_url) as proxy:
        env = {
            "DOMENG_REDIS_URL": redis_url,
            "DOMENG_LEASE_S": str(LEASE_S),
            "DOMENG_BOT_DELAY_S": "0.02",
            "DOMENG_BOT_WORKERS": "1",
            "DOMENG_MIGRATE": "false",
            # a partition (the proxy stalled) fails a statement after this long
            "DOMENG_DATABASE_TIMEOUT_S": str(DATABASE_TIMEOUT_S),
        }
        first = ServerProcess(tmp_path / "a", env=env, database_url=proxy.url)
        second = ServerProcess(tmp_path / "b", env=env, database_url=proxy.url)
        try:
            with ThreadPoolExecutor(2) as starting:
                list(starting.map(ServerProcess.start, (first, second)))
            yield first, second, proxy, postgres_url
        finally:
            first.stop()
            second.stop()


def _is_state(message: dict[str, Any]) -> bool:
    return message["type"] == "state" and bool(message["view"])


def _move(state: dict[str, Any]) -> dict[str, Any]:
    """The first legal action of the seat ``state`` was sent to, without its seat."""
    return {k: v for k, v in state["view"]["legal"][0].items() if k != "seat"}


def _waiting_on(seat: int, people: dict[int, Client], watcher: Client) -> dict[str, Any]:
    """Play the other person's turns (their first legal move) until the room waits on ``seat`` to
    place a tile (a forced pass is the server's); that seat's state then. Starts from the last
    state ``watcher`` received."""
    state = watcher.state
    while True:
        if state is not None and _is_state(state) and state["view"]["phase"] == "playing":
            version, mover = state["version"], people.get(state["view"]["to_act"])
            mine = None
            if mover is not None:  # else a bot's turn
                mine = mover.state
                if mine is None or mine["version"] < version:
                    mine = mover.wait_for(lambda m, v=version: _is_state(m) and m["version"] >= v, timeout=60)
            # a person's client may be past the watcher's version: it joined after moves the server
            # made for it (a forced pass) and the bots'; the watcher then catches up version by version
            if mover is not None and mine is not None and mine["version"] == version:
                if mover is people[seat] and my_turn_to_place(mine):
                    return mine
                if my_turn_to_place(mine):
                    mover.send({"type": "action", "version": version, "action": _move(mine)})
        state = watcher.wait_for(_is_state, timeout=60)


def _refused_while_cut(
    player: Client, turn: dict[str, Any], owner: ServerProcess, code: str, tries: int
) -> None:
    """``player`` makes its move ``tries`` times while PostgreSQL is cut: each is refused with
    ``not_saved`` at the turn's version, the room stays there, and the owner says it is not ready."""
    for _ in range(tries):
        player.send({"type": "action", "version": turn["version"], "action": _move(turn)})
        refused = player.wait_for(lambda m: m["type"] in ("error", "state"), timeout=120)
        assert refused["type"] == "error", f"a move was answered with {refused['type']} while cut"
        assert (refused["code"], refused["version"]) == ("not_saved", turn["version"])
    assert owner.room(code)["version"] == turn["version"]
    assert httpx.get(f"{owner.url}/readyz", timeout=30).status_code == 503


def _accepted(player: Client, turn: dict[str, Any]) -> dict[str, Any]:
    """``player`` makes its move again (PostgreSQL back): the next state is that move."""
    player.send({"type": "action", "version": turn["version"], "action": _move(turn)})
    moved = player.wait_for(lambda m: m["type"] in ("error", "state"), timeout=60)
    assert moved["type"] == "state", f"refused once PostgreSQL was back: {moved}"
    assert moved["version"] == turn["version"] + 1
    assert moved["events"][0]["seat"] == turn["view"]["to_act"]
    return moved


def _states(client: Client, since: int) -> dict[int, dict[str, Any]]:
    """The states ``client`` received from version ``since`` on, by version; AssertionError when a
    version came twice or one was skipped."""
    versions = [m["version"] for m in client.messages if _is_state(m) and m["version"] >= since]
    assert versions == list(range(since, since + len(versions))), versions
    return {m["version"]: m for m in client.messages if _is_state(m) and m["version"] >= since}


def _assert_stored_as_seen(row: MatchRow, seen: dict[int, dict[str, Any]]) -> None:
    """Each stored action of the versions in ``seen`` is the move its state showed: the same seat,
    the same tile; and each seen state that shows a move has it stored."""
    stored = {a.version: a for r in row.rounds for a in r.actions if a.version in seen}
    for version, state in seen.items():
        moves = [e for e in state["events"] if e["type"] in ("placed", "passed")]
        action = stored.get(version)
        if action is None:  # a deal: no move in it
            assert not moves or "log" in state["view"], (version, state["events"])
            continue
        assert moves and moves[0]["seat"] == action.seat, (version, action, state["events"])
        if "play" in action.action:
            assert sorted(moves[0]["tile"].split("-")) == sorted(action.action["play"].split("-"))


def _table(first: ServerProcess, second: ServerProcess) -> tuple[str, dict[int, Client], Client, int]:
    """A match of Ana, Budi and three bots owned by ``first``: the room's code, the two people's
    clients (Ana's relayed through ``second``), a spectator on the owner, and the version it
    watches from."""
    room = first.create_room(bots=[None, None, "greedy", "random", "greedy"], turn_timer_s=0)
    code = room["code"]
    tokens = {
        seat: first.claim(code, seat, name).json()["token"] for seat, name in ((ANA, "Ana"), (BUDI, "Budi"))
    }
    assert first.start_match(code, room["host_token"]).status_code == 200
    watcher = Client(first, code)  # a spectator on the room's owner
    since = watcher.wait_for(_is_state)["version"]
    people = {ANA: Client(second, code, tokens[ANA]), BUDI: Client(first, code, tokens[BUDI])}
    for person in people.values():  # Ana's socket is relayed through the second process
        person.wait_for(lambda m: _is_state(m) and m["version"] >= since)
    return code, people, watcher, since


def _played_on_as_seen(
    servers: tuple[ServerProcess, ServerProcess, ThreadedProxy, str],
    people: dict[int, Client],
    watcher: Client,
    since: int,
    code: str,
) -> None:
    """Play on to Ana's next turn; then both processes are alive and ready, every client saw each
    version once and in order, the same moves as the watcher, and the stored log is whole and
    holds the moves they saw."""
    first, second, _, database_url = servers
    last = _waiting_on(ANA, people, watcher)["version"]  # the bots played on: Ana's turn again
    for process in (first, second):
        assert process.proc is not None and process.proc.poll() is None
        assert httpx.get(f"{process.url}/readyz", timeout=30).status_code == 200
    seen = _states(watcher, since)
    for seat, person in people.items():
        if person.state is None or person.state["version"] != last:
            person.wait_for(lambda m: _is_state(m) and m["version"] == last)
        mine = _states(person, next(m["version"] for m in person.messages if _is_state(m)))
        assert set(mine) <= set(seen), seat
        for version, state in mine.items():  # the same moves as the watcher saw
            assert state["events"] == seen[version]["events"] or "log" in state["view"], (seat, version)
    row = stored_match(database_url, code)
    assert_log_whole(row)
    assert row.version == last
    _assert_stored_as_seen(row, {v: s for v, s in seen.items() if v > since})
    for person in (*people.values(), watcher):
        person.close()


def _outages_then_play_on(
    servers: tuple[ServerProcess, ServerProcess, ThreadedProxy, str],
    outage: Callable[[], None],
    end: Callable[[], None],
    tries: tuple[tuple[int, int], ...],
) -> None:
    """For each (seat, n) of ``tries``: once the room waits on that person, PostgreSQL goes
    (``outage``), their move is refused n times, it comes back (``end``) and the same move is
    accepted; then play goes on as every client saw it (`_played_on_as_seen`)."""
    first, second, _, _ = servers
    code, people, watcher, since = _table(first, second)
    for seat, n in tries:
        turn = _waiting_on(seat, people, watcher)
        outage()
        _refused_while_cut(people[seat], turn, first, code, n)
        end()
        moved = _accepted(people[seat], turn)
        watcher.wait_for(lambda m, v=moved["version"]: _is_state(m) and m["version"] == v)
    _played_on_as_seen(servers, people, watcher, since, code)


def test_postgres_gone_refuses_moves_on_both_processes_and_play_resumes_when_it_returns(
    servers: tuple[ServerProcess, ServerProcess, ThreadedProxy, str],
) -> None:
    proxy = servers[2]
    _outages_then_play_on(servers, proxy.cut, proxy.mend, ((ANA, 1), (BUDI, 3)))


def test_postgres_silent_past_the_timeout_refuses_moves_and_play_resumes_when_it_answers(
    servers: tuple[ServerProcess, ServerProcess, ThreadedProxy, str],
) -> None:
    """A network partition: PostgreSQL's connections stay open and nothing comes back (no reset,
    no refusal). Each move is refused with ``not_saved`` once the statement times out
    (``DOMENG_DATABASE_TIMEOUT_S``), never left waiting; when the bytes flow again, the same move
    is accepted and play goes on as the clients saw it."""
    proxy = servers[2]
    _outages_then_play_on(servers, proxy.stall, proxy.flow, ((ANA, 1), (BUDI, 2)))
