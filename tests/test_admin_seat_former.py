"""A person's seat the host gives to a bot during the match keeps who they were (``seats.former``,
migration 0022): the admin's match names them beside the bot, the match list finds the match
from their name, or from its room's code, and the players' totals count the match for them, on
SQLite and PostgreSQL."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import httpx
import pytest

from tests.adminkit import POSTGRES_URL, SECRET, admin_client, replay_export, scratch_postgres
from tests.serverkit import Client, ServerProcess


def found_other(admin: httpx.Client, code: str) -> int:
    """The id of room ``code``'s match."""
    match_id: int = admin.get("/api/admin/matches", params={"code": code}).json()["items"][0]["id"]
    return match_id


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
def test_a_person_replaced_by_a_bot_stays_named_in_the_history(tmp_path: Path, database: str) -> None:
    if database == "postgresql" and not POSTGRES_URL:
        pytest.skip("DOMENG_TEST_POSTGRES_URL is not set")
    with contextlib.ExitStack() as stack:
        url = stack.enter_context(scratch_postgres()) if database == "postgresql" else None
        server = ServerProcess(tmp_path, {"DOMENG_ADMIN_TOKEN": SECRET}, database_url=url).start()
        stack.callback(server.stop)
        room = server.create_room(bots=[None, None, "greedy", "greedy", "greedy"], turn_timer_s=0)
        code, host = room["code"], {"Authorization": f"Bearer {room['host_token']}"}
        bot = f"{server.url}/api/rooms/{code}/seats/1/bot"
        ana = server.claim(code, 0, "Ana").json()["token"]
        assert server.claim(code, 1, "Dewi").status_code == 201
        # before the start a bot in a person's seat replaces nobody who played
        assert httpx.put(
            f"{server.url}/api/rooms/{code}/seats/1/bot", json={"level": "easy"}, headers=host
        ).is_success
        assert server.claim(code, 1, "Dewi").status_code == 201
        assert server.start_match(code, room["host_token"]).status_code == 200
        player = Client(server, code, ana)
        stack.callback(player.close)
        player.wait_for(lambda m: m["type"] == "state" and m["view"] is not None)
        swap = httpx.put(bot, json={"level": "medium"}, headers=host)
        assert swap.status_code == 200, swap.text
        # the bot's level changed again: it still plays for Dewi
        assert httpx.put(
            f"{server.url}/api/rooms/{code}/seats/1/bot", json={"level": "hard"}, headers=host
        ).is_success
        other = server.create_room(bots=[None, "greedy", "greedy", "greedy", "greedy"])["code"]
        with admin_client(server) as admin:
            listed = admin.get("/api/admin/matches").json()["items"][1]
            detail = admin.get(f"/api/admin/matches/{listed['id']}").json()
            # the list finds the match from the replaced person's name, and from its room's code
            for params in ({"player": "dEWI"}, {"code": code}):
                found = admin.get("/api/admin/matches", params=params).json()
                assert [m["id"] for m in found["items"]] == [listed["id"]], params
            assert [
                m["code"] for m in admin.get("/api/admin/matches", params={"code": other}).json()["items"]
            ] == [other]
            assert admin.get("/api/admin/matches", params={"code": "nope"}).json()["total"] == 0
            # the players' totals count the match for the person replaced too (found by name),
            # while the seat's rounds stay with the bot holding it
            dewi = admin.get("/api/admin/players", params={"name": "dew"}).json()["items"]
            assert [(p["display_name"], p["kind"], p["matches"], p["replaced"]) for p in dewi] == [
                ("Dewi", "human", 1, 1)
            ]
            by_name = {p["display_name"]: p for p in admin.get("/api/admin/players").json()["items"]}
            assert by_name["Bot (hard)"]["matches"] == 1 and by_name["Bot (hard)"]["replaced"] == 0
            assert by_name["Ana"]["replaced"] == 0
            # the export says it too, and stays a record that replays
            record = admin.get(f"/api/admin/matches/{listed['id']}/record").json()
            assert record["former"] == [None, "Dewi", None, None, None]
            assert "former" not in admin.get(f"/api/admin/matches/{found_other(admin, other)}/record").json()
        path = tmp_path / "record.json"
        path.write_text(json.dumps(record))
        assert replay_export(path)["rounds"] is not None
        for seats in (listed["seats"], detail["seats"]):
            assert [(s["kind"], s["display_name"], s["former"]) for s in seats[:3]] == [
                ("human", "Ana", None),
                ("bot", "Bot 2 (hard)", "Dewi"),
                ("bot", "Bot 3 (greedy)", None),
            ]
