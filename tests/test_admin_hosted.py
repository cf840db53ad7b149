"""A match whose server died still says ``playing`` in the store; the admin list says whether a
room actually hosts it (``hosted``), so a stale "playing" is told from a live one, without
changing what is stored."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.adminkit import SECRET, admin_client
from tests.serverkit import Client, ServerProcess, wait_gone


def test_a_match_whose_server_died_is_not_hosted_until_its_room_is_opened(tmp_path: Path) -> None:
    first = ServerProcess(tmp_path, {"DOMENG_ADMIN_TOKEN": SECRET}).start()
    server = first
    try:
        room = server.create_room(bots=[None, "greedy", "greedy", "greedy", "greedy"], turn_timer_s=0)
        token = server.claim(room["code"], 0, "Ana").json()["token"]
        assert server.start_match(room["code"], room["host_token"]).status_code == 200
        ana = Client(server, room["code"], token)
        ana.wait_for(lambda m: m["type"] == "state" and m["view"] is not None)
        with admin_client(server) as admin:
            [before] = admin.get("/api/admin/matches").json()["items"]
        assert (before["status"], before["live"], before["hosted"]) == ("playing", True, True)
        ana.close()
        workers = first.children()
        first.kill()  # the server dies: nothing is stored about it
        assert not wait_gone(workers)
        server = ServerProcess(tmp_path, {"DOMENG_ADMIN_TOKEN": SECRET}).start()
        with admin_client(server) as admin:
            [after] = admin.get("/api/admin/matches").json()["items"]
            detail = admin.get(f"/api/admin/matches/{after['id']}").json()
            # the stored status is unchanged, and the list says no room holds the match
            assert (after["status"], after["stored_status"], after["live"], after["hosted"]) == (
                "playing",
                "playing",
                False,
                False,
            )
            assert after["last_active_at"] >= before["last_active_at"]
            assert detail["hosted"] is False
            assert admin.get("/api/admin/matches", params={"status": "playing"}).json()["total"] == 1
            # opening its link loads the room again: hosted once more
            assert httpx.get(f"{server.url}/api/rooms/{room['code']}", timeout=10).status_code == 200
            [reopened] = admin.get("/api/admin/matches").json()["items"]
            assert reopened["hosted"] is True
    finally:
        first.stop()
        server.stop()
