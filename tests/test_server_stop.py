"""The host ends a no-limit match through the real server (docs/protocol.md, ``PUT …/stop``):
refusals over HTTP, the ask seen on every socket while the round in play is finished by the rules,
the match's end with its standings, Play again, the admin's history and export (replayed by the
real ``domeng replay``), and the ask kept across a crash of the server."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.adminkit import SECRET, admin_client, replay_export
from tests.serverkit import Client, ServerProcess, my_turn_to_place

NO_LIMIT = {"camat_target": 0}
BOTS = [None, "greedy", "random", "greedy", "random"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    env = {"DOMENG_TURN_TIMER_S": "0", "DOMENG_ADMIN_TOKEN": SECRET}
    proc = ServerProcess(tmp_path_factory.mktemp("stop"), env=env).start()
    yield proc
    proc.stop()


def put_stop(server: ServerProcess, code: str, token: str | None, body: Any) -> httpx.Response:
    """``PUT /api/rooms/{code}/stop`` with ``token`` as the bearer (none without it)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.put(f"{server.url}/api/rooms/{code}/stop", json=body, headers=headers, timeout=10)


def no_limit_room(server: ServerProcess, options: dict[str, object] | None = None) -> tuple[str, str, str]:
    """A started room, Ana (seat 0) and four bots, no camat target: its code, the host's token, Ana's."""
    room = server.create_room(bots=BOTS, turn_timer_s=0, options=NO_LIMIT if options is None else options)
    claim = server.claim(room["code"], 0, "Ana")
    assert claim.status_code == 201, claim.text
    assert server.start_match(room["code"], room["host_token"]).status_code == 200
    return room["code"], room["host_token"], claim.json()["token"]


def play_until(
    client: Client, done: Callable[[dict[str, Any]], bool], timeout: float = 120.0
) -> dict[str, Any]:
    """Ana answers each turn of hers with her first legal move until ``done(message)``; that message."""
    return client.wait_for(lambda m: done(m) or (client.answer(m) and False), timeout=timeout)


def round_in_play(least: int) -> Callable[[dict[str, Any]], bool]:
    """A state in which Ana has a tile to place in round ``least`` or later (the room waits for her)."""
    return lambda m: my_turn_to_place(m) and m["view"]["round"] >= least


def over(message: dict[str, Any]) -> bool:
    return message["type"] == "state" and bool(message["view"]) and message["view"]["match_over"]


def test_the_host_ends_the_match_after_the_round_in_play(server: ServerProcess, tmp_path: Path) -> None:
    code, host, ana_token = no_limit_room(server)
    ana, spectator = Client(server, code, ana_token), Client(server, code)
    asked = play_until(ana, round_in_play(2))
    at_round = asked["view"]["round"]
    assert asked["room"]["host_stop"] is False

    refused = {
        "Ana's seat token": put_stop(server, code, ana_token, {"stop": True}),
        "no token": put_stop(server, code, None, {"stop": True}),
    }
    assert {k: (r.status_code, r.json()["detail"]["code"]) for k, r in refused.items()} == {
        "Ana's seat token": (403, "not_host"),
        "no token": (403, "not_host"),
    }
    for body in ({"stop": "yes"}, {"stop": 1}, {}, {"stop": True, "now": True}, [True]):
        assert put_stop(server, code, host, body).status_code == 422, body
    assert server.room(code)["host_stop"] is False  # nothing of that changed the room

    reply = put_stop(server, code, host, {"stop": True})
    assert reply.status_code == 200, reply.text
    assert (reply.json()["host_stop"], reply.json()["status"]) == (True, "playing")
    seen = ana.wait_for(lambda m: m["type"] == "state" and m["room"]["host_stop"] is True)
    assert seen["view"]["round"] == at_round and seen["view"]["phase"] == "playing"  # not cut
    spectator.wait_for(lambda m: m["type"] == "state" and m["room"]["host_stop"] is True)

    ana.answer(seen)
    final = play_until(ana, over)
    view = final["view"]
    assert (final["room"]["status"], view["round"], view["phase"]) == ("finished", at_round, "over")
    assert view["outcome"]["end"] in ("out", "ceki", "pollo", "block") and len(view["standings"]) == 5
    seen_final = spectator.wait_for(over)
    assert seen_final["room"]["host_stop"] is True and seen_final["view"]["standings"] == view["standings"]
    again = put_stop(server, code, host, {"stop": False})
    assert (again.status_code, again.json()["detail"]["code"]) == (409, "not_playing")

    with admin_client(server) as admin:
        listed = admin.get("/api/admin/matches", params={"status": "finished", "per_page": 200}).json()[
            "items"
        ]
        item = next(m for m in listed if m["code"] == code)
        assert (item["status"], item["host_stop"], item["round_count"]) == ("finished", True, at_round)
        assert item["result"]["match_over"] is True
        record = admin.get(f"/api/admin/matches/{item['id']}/record")
        assert record.status_code == 200
    document = record.json()
    assert document["ended_by"] == "host" and len(document["rounds"]) == at_round
    path = tmp_path / "stopped.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    report = replay_export(path)  # the real `domeng replay FILE --json`
    assert report["match_over"] is True and report["ended_by"] == "host"
    assert all(r["end"] for r in report["rounds"]) and len(report["rounds"]) == at_round

    played = httpx.post(
        f"{server.url}/api/rooms/{code}/again", headers={"Authorization": f"Bearer {ana_token}"}, timeout=10
    )
    assert played.status_code == 200, played.text
    assert (played.json()["status"], played.json()["match"], played.json()["host_stop"]) == (
        "waiting",
        2,
        False,
    )
    for client in (ana, spectator):
        client.close()


def test_the_host_takes_it_back_and_the_match_plays_on(server: ServerProcess) -> None:
    code, host, ana_token = no_limit_room(server)
    ana = Client(server, code, ana_token)
    play_until(ana, round_in_play(1))
    assert put_stop(server, code, host, {"stop": True}).json()["host_stop"] is True
    assert put_stop(server, code, host, {"stop": True}).status_code == 200  # asked twice: the same
    back = put_stop(server, code, host, {"stop": False})
    assert back.status_code == 200 and back.json()["host_stop"] is False
    kept = ana.wait_for(lambda m: m["type"] == "state" and m["version"] == back.json()["version"])
    assert kept["room"]["host_stop"] is False
    ana.answer(kept)  # still Ana's turn: the round plays on, and the next one is dealt
    later = play_until(ana, round_in_play(2))
    assert later["room"]["status"] == "playing"
    ana.close()
    assert (
        put_stop(server, code, host, {"stop": True}).status_code == 200
    )  # ends it, not to play on unwatched


@pytest.mark.parametrize(
    ("options", "seats"),
    [({}, 5), ({"camat_target": 4}, 5), (None, 3)],
    ids=["one election", "four", "kozel"],
)
def test_a_match_that_ends_by_its_options_is_refused(
    server: ServerProcess, options: dict[str, object] | None, seats: int
) -> None:
    if options is None:
        room = server.create_room(variant="kozel", seats=seats, bots=["greedy"] * seats, turn_timer_s=0)
    else:
        room = server.create_room(bots=["greedy"] * seats, turn_timer_s=0, options=options)
    code, host = room["code"], room["host_token"]
    waiting = put_stop(server, code, host, {"stop": True})
    assert (waiting.status_code, waiting.json()["detail"]["code"]) == (409, "not_stoppable")
    assert server.room(code)["host_stop"] is None  # the client offers no End match


def test_nothing_to_end_before_the_start(server: ServerProcess) -> None:
    room = server.create_room(bots=BOTS, turn_timer_s=0, options=NO_LIMIT)
    early = put_stop(server, room["code"], room["host_token"], {"stop": True})
    assert (early.status_code, early.json()["detail"]["code"]) == (409, "not_playing")


def test_the_ask_survives_a_crash_of_the_server(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = ServerProcess(data, env={"DOMENG_TURN_TIMER_S": "0"}).start()
    try:
        code, host, ana_token = no_limit_room(first)
        ana = Client(first, code, ana_token)
        asked = play_until(ana, round_in_play(1))
        assert put_stop(first, code, host, {"stop": True}).status_code == 200
        ana.wait_for(lambda m: m["type"] == "state" and m["room"]["host_stop"] is True)
    finally:
        first.kill()  # SIGKILL: only what was stored survives
    second = ServerProcess(data, env={"DOMENG_TURN_TIMER_S": "0"}).start()
    try:
        ana = Client(second, code, ana_token)
        ana.wait_for(lambda m: m["type"] == "welcome")
        back = ana.wait_for(lambda m: m["type"] == "state")
        assert (back["room"]["status"], back["room"]["host_stop"]) == ("playing", True)
        assert back["view"]["round"] == asked["view"]["round"]
        ana.answer(back)
        final = play_until(ana, over)
        assert final["room"]["status"] == "finished" and final["view"]["round"] == asked["view"]["round"]
        ana.close()
    finally:
        second.stop()
