"""Kozel rooms on the real server: creation with 2-4 seats and its options, bots filling seats,
draws and two lempas over the protocol, no bazaar tile or other hand in any message, the export
replaying identically, and restart recovery in the middle of a Kozel round."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.edge.protocol import ActionMessage, parse_client_message, to_engine_action
from app.store import MatchRow, Store, sqlite_url
from engine.actions import Draw, PlayLempas
from engine.tiles import Tile
from engine.variants import make_rules
from tests.conftest import domeng_cli
from tests.serverkit import Client, ServerProcess, play_to_match_over, quoted

REPORT_KEYS = ("end", "winner", "points", "pending", "goat", "next_leader")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    proc = ServerProcess(
        tmp_path_factory.mktemp("kozel-server"),
        env={"DOMENG_TURN_TIMER_S": "0", "DOMENG_RATE_LIMIT": "1000 per 1 second"},
    ).start()
    yield proc
    proc.stop()


@pytest.mark.parametrize(
    ("seats", "options"), [(2, {}), (3, {"two_lempas": False}), (4, {}), (4, {"pairs": True})]
)
def test_create_a_kozel_room_with_2_to_4_seats(
    server: ServerProcess, seats: int, options: dict[str, Any]
) -> None:
    room = server.create_room(variant="kozel", seats=seats, options=options)
    public = server.room(room["code"])
    assert (public["variant"], len(public["seats"])) == ("kozel", seats)
    assert public["options"] == {"two_lempas": True, "pairs": False, **options}


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"variant": "kozel", "seats": 3, "options": {"pairs": True}}, "invalid_options"),
        ({"variant": "kozel", "seats": 5}, "invalid_seats"),
        ({"variant": "kozel", "seats": 2, "options": {"camat_target": 1}}, "invalid_options"),
        ({"variant": "kozel", "seats": 3, "bots": ["greedy", None]}, "invalid_seats"),
    ],
)
def test_bad_kozel_rooms_are_refused(server: ServerProcess, body: dict[str, Any], code: str) -> None:
    reply = httpx.post(f"{server.url}/api/rooms", json=body, timeout=10)
    assert reply.status_code == 422
    assert reply.json()["detail"]["code"] == code


def _deals(messages: list[dict[str, Any]], seats: int) -> dict[int, list[list[str]]]:
    """Each round's deal (hands then the bazaar, as strings), from the seeds revealed afterwards."""
    rules = make_rules("kozel", {}, seats)
    deals = {}
    for message in messages:
        room = message.get("room") or {}
        for key in ("round", "last_round"):
            info = room.get(key)
            if info and info.get("seed"):
                deal = rules.deal_from_seed(info["seed"])
                deals[info["index"]] = [[str(t) for t in h] for h in (*deal.hands, deal.rest)]
    return deals


def _check_no_leak(clients: list[tuple[int | None, Client]], seats: int) -> int:
    """Every message a seat (or the spectator) got while a round was played names only tiles of
    its own hand, the chain, or tiles it drew itself; never the bazaar or another hand."""
    deals = _deals([m for _, c in clients for m in c.messages], seats)
    checked = 0
    for seat, client in clients:
        for message in client.messages:
            view = message.get("view") if message["type"] == "state" else None
            if view is None or view["phase"] != "playing":
                continue
            assert view["bazaar"] == 28 - sum(view["hand_counts"]) - len(view["chain"])
            deal = deals[view["round"] - 1]
            visible = {str(Tile.parse(t)) for t in (view["hand"] or []) + view["chain"]}
            hidden = {t for s, hand in enumerate(deal) for t in hand if s != seat} - visible
            text = json.dumps(message)
            leaked = [t for t in hidden if any(q in text for q in quoted(t))]
            assert not leaked, f"seat {seat} saw {leaked} at version {message['version']}"
            for event in view["log"]:
                if event["type"] == "drew":
                    assert (event["tile"] is None) is (event["seat"] != seat)
            checked += 1
    return checked


def _export(data_dir: Path, code: str, path: Path) -> tuple[dict[str, Any], MatchRow]:
    """The stored match as a RECORD.md document (also written to ``path``) and as rows."""

    async def export() -> tuple[dict[str, Any], MatchRow]:
        async with Store(sqlite_url(data_dir)) as store:
            match = await store.load_match(code)
            assert match is not None
            return await store.export_record(code), match

    record, match = asyncio.run(export())
    path.write_text(json.dumps(record), encoding="utf-8")
    return record, match


@pytest.mark.parametrize(
    ("seats", "options", "humans"),
    [(3, {}, 3), (4, {"pairs": True}, 2), (2, {}, 1)],
    ids=["3-seats-all-human", "4-seats-pairs-with-bots", "2-seats-one-human"],
)
def test_a_kozel_match_plays_to_the_goat_without_leaks_and_exports_identically(
    tmp_path: Path, seats: int, options: dict[str, Any], humans: int
) -> None:
    server = ServerProcess(
        tmp_path, env={"DOMENG_TURN_TIMER_S": "0", "DOMENG_RATE_LIMIT": "1000 per 1 second"}
    ).start()
    try:
        bots: list[str | None] = [None] * humans + ["greedy", "random"][: seats - humans]
        bots += [None] * (seats - len(bots))  # left empty: the start fills them with bots
        room = server.create_room(variant="kozel", seats=seats, options=options, turn_timer_s=0, bots=bots)
        code = room["code"]
        tokens = [server.claim(code, s, f"P{s}").json()["token"] for s in range(humans)]
        spectator = Client(server, code)
        clients = [Client(server, code, t) for t in tokens]
        assert server.start_match(code, room["host_token"]).status_code == 200
        assert [s["kind"] for s in server.room(code)["seats"]] == ["human"] * humans + ["bot"] * (
            seats - humans
        )
        play_to_match_over(clients, spectator, pick=lambda seat: -1 - seat)
    finally:
        server.stop()

    everyone: list[tuple[int | None, Client]] = [*enumerate(clients), (None, spectator)]
    assert _check_no_leak(everyone, seats) > 50
    events = [e for m in spectator.messages if m["type"] == "state" for e in m["events"]]
    assert any(e["type"] == "drew" and e["tile"] is None for e in events)

    record, match = _export(tmp_path, code, tmp_path / "export.json")
    assert record["variant"] == "kozel" and record["options"]["pairs"] is bool(options.get("pairs"))
    done_replay = domeng_cli("replay", tmp_path / "export.json", "--json")
    assert done_replay.returncode == 0, done_replay.stdout
    report = json.loads(done_replay.stdout)
    played = {}
    for message in spectator.messages:
        view = message.get("view") if message["type"] == "state" else None
        if view and view["outcome"] and view["phase"] != "playing":
            played[view["round"] - 1] = view["outcome"]
    assert report["match_over"] is True and len(report["rounds"]) == len(played)
    for index, result in enumerate(report["rounds"]):
        assert list(result) == list(REPORT_KEYS)
        assert {k: played[index][k] for k in REPORT_KEYS} == result, index
    assert report["rounds"][-1]["goat"]
    # the store keeps each round's bazaar as its rest, and every seat's points and pending after it
    assert match.variant == "kozel" and match.status == "finished"
    for stored, result in zip(match.rounds, report["rounds"], strict=True):
        assert len(stored.deal["rest"]) == 28 - sum(len(h) for h in stored.deal["hands"])
        assert [t.points for t in stored.tallies] == result["points"]
        assert [t.pending for t in stored.tallies] == result["pending"]
        assert all(t.stones is None for t in stored.tallies)


def _my_move(message: dict[str, Any]) -> bool:
    """A state where the seat must act itself: a draw or a placement (a forced pass is the server's)."""
    view = message.get("view") if message["type"] == "state" else None
    return bool(view) and bool(view["legal"]) and not any("pass" in a for a in view["legal"])


def test_a_kozel_room_resumes_after_kill_9(tmp_path: Path) -> None:
    env = {"DOMENG_BOT_DELAY_S": "0.02", "DOMENG_TURN_TIMER_S": "0"}
    first = ServerProcess(tmp_path, env=env).start()
    try:
        room = first.create_room(variant="kozel", seats=3, bots=[None, "greedy", "random"], turn_timer_s=0)
        token = first.claim(room["code"], 0, "Anna").json()["token"]
        first.start_match(room["code"], room["host_token"])
        player = Client(first, room["code"], token)
        for _ in range(3):
            turn = player.wait_for(_my_move)
            action = {k: v for k, v in turn["view"]["legal"][0].items() if k != "seat"}
            player.send({"type": "action", "version": turn["version"], "action": action})
        waiting = player.wait_for(_my_move)
        time.sleep(0.2)
        first.kill()
    finally:
        first.stop()

    second = ServerProcess(tmp_path, env=env).start()
    try:
        back = Client(second, room["code"], token)
        resumed = back.wait_for(lambda m: m["type"] == "state")
        assert resumed["version"] == waiting["version"]
        for key in (
            "hand",
            "chain",
            "bazaar",
            "points",
            "pending",
            "to_act",
            "legal",
            "hand_counts",
            "round",
            "log",
        ):
            assert resumed["view"][key] == waiting["view"][key], key
        back.close()
    finally:
        second.stop()


def test_draw_and_two_lempas_go_through_the_protocol() -> None:
    draw = parse_client_message('{"type": "action", "version": 3, "action": {"draw": true}}')
    lempas = parse_client_message('{"type": "action", "version": 4, "action": {"play": ["5-5", "3-3"]}}')
    assert isinstance(draw, ActionMessage) and isinstance(lempas, ActionMessage)
    assert to_engine_action(2, draw.action) == Draw(2)
    assert to_engine_action(1, lempas.action) == PlayLempas(1, (Tile.parse("5-5"), Tile.parse("3-3")))
