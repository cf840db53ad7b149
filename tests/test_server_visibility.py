"""No hidden tile ever reaches a seat that may not see it (D20), checked on every message of a
full match that five socket clients play through the real server, with a spectator watching."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from app.store import Store, sqlite_url
from engine.record import replay
from engine.tiles import TILES, Tile
from engine.variants import make_rules
from tests.serverkit import Client, ServerProcess, play_to_match_over, quoted


def _seeds(messages: list[dict[str, Any]]) -> dict[int, str]:
    seeds: dict[int, str] = {}
    for message in messages:
        room = message.get("room") or {}
        for key in ("round", "last_round"):
            info = room.get(key)
            if info and info.get("seed"):
                seeds[info["index"]] = info["seed"]
    return seeds


def test_full_match_leaks_no_hidden_tile_to_any_seat_or_spectator(tmp_path: Path) -> None:
    # machine players act at once, far above a person's pace: lift the per-connection rate limit
    server = ServerProcess(
        tmp_path, env={"DOMENG_TURN_TIMER_S": "0", "DOMENG_RATE_LIMIT": "1000 per 1 second"}
    ).start()
    try:
        room = server.create_room(turn_timer_s=0, options={"camat_target": 1})
        tokens = [server.claim(room["code"], seat, f"P{seat}").json()["token"] for seat in range(5)]
        spectator = Client(server, room["code"])
        clients = [Client(server, room["code"], token) for token in tokens]
        assert server.start_match(room["code"], room["host_token"]).status_code == 200
        play_to_match_over(clients, spectator)
    finally:
        server.stop()

    rules = make_rules("domeng")
    everyone = [*clients, spectator]
    seeds = _seeds([m for c in everyone for m in c.messages])
    checked = 0
    for seat, client in [*enumerate(clients), (None, spectator)]:
        for message in client.messages:
            view = message.get("view") if message["type"] == "state" else None
            if view is None or view["phase"] != "playing":
                continue
            deal = rules.deal_from_seed(seeds[view["round"] - 1])
            on_chain = {Tile.parse(t) for t in view["chain"]}
            hidden = set(deal.rest) | {t for s, hand in enumerate(deal.hands) if s != seat for t in hand}
            text = json.dumps(message)
            leaked = [str(t) for t in hidden - on_chain if any(q in text for q in quoted(str(t)))]
            assert not leaked, f"seat {seat} saw hidden tiles {leaked} at version {message['version']}"
            if seat is not None:
                assert sorted(view["hand"]) == sorted(
                    str(t) for t in deal.hands[seat] if t not in on_chain
                ), "a seat's own hand is exactly its dealt tiles not yet placed"
            checked += 1
    assert checked > 100
    assert len(seeds) >= 1 and all(len(s) == 64 for s in seeds.values())
    assert len(TILES) == 28
    _export_replays_identically(tmp_path, room["code"], spectator.messages)


def _export_replays_identically(data_dir: Path, code: str, messages: list[dict[str, Any]]) -> None:
    """The stored match exports as a RECORD.md document that replays to the outcomes played."""

    async def export() -> dict[str, Any]:
        async with Store(sqlite_url(data_dir)) as store:
            return await store.export_record(code)

    record = asyncio.run(export())
    report = replay(json.loads(json.dumps(record)))
    played = {}
    for message in messages:
        view = message.get("view") if message["type"] == "state" else None
        if view and view["outcome"] and view["phase"] != "playing":
            played[view["round"] - 1] = view["outcome"]
    assert report["match_over"] is True
    assert len(report["rounds"]) == len(played)
    for index, result in enumerate(report["rounds"]):
        for key in ("end", "winner", "cucuq", "manguno", "mattikkeng", "table", "stones", "next_leader"):
            assert result[key] == played[index][key], (index, key)
