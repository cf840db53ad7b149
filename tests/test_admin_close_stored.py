"""The admin closes a room that is not in memory (it left memory, or nobody opened it since a
restart): the close loads it from the store, as its link would, and closes it (docs/admin.md,
"Closing a room")."""

from __future__ import annotations

import time
from pathlib import Path

from tests.adminkit import SECRET, admin_client
from tests.serverkit import Client, ServerProcess


def test_a_room_out_of_memory_is_closed_from_its_code(tmp_path: Path) -> None:
    env = {"DOMENG_ADMIN_TOKEN": SECRET, "DOMENG_ROOM_UNLOAD_AFTER_S": "0.5"}
    server = ServerProcess(tmp_path, env).start()
    try:
        room = server.create_room(bots=[None, "greedy", "greedy", "random", "random"], turn_timer_s=0)
        code = room["code"]
        token = server.claim(code, 0, "Ana").json()["token"]
        assert server.start_match(code, room["host_token"]).status_code == 200
        player = Client(server, code, token)
        player.wait_for(lambda m: m["type"] == "state" and m["view"] is not None)
        player.close()
        with admin_client(server) as admin:
            deadline = time.monotonic() + 30
            while code in {r["code"] for r in admin.get("/api/admin/rooms").json()["rooms"]}:
                assert time.monotonic() < deadline, "the room never left memory"
                time.sleep(0.1)  # waiting for the sweeper to unload it
            match_id = admin.get("/api/admin/matches").json()["items"][0]["id"]
            assert admin.get(f"/api/admin/matches/{match_id}").json()["status"] == "playing"

            closed = admin.post(f"/api/admin/rooms/{code}/close")
            assert closed.status_code == 200, closed.text
            assert closed.json() == {
                "code": code,
                "match_id": match_id,
                "disconnected": 0,
                "task": "stopped",
                "status": "abandoned",
            }
            detail = admin.get(f"/api/admin/matches/{match_id}").json()
            assert detail["status"] == "abandoned" and detail["abandoned_reason"] == "closed"
            assert code not in {r["code"] for r in admin.get("/api/admin/rooms").json()["rooms"]}
            assert admin.get(f"/api/rooms/{code}").status_code == 404  # its link opens nothing now
            # a code that opens no room (closed already, or unknown) is still 404
            assert admin.post(f"/api/admin/rooms/{code}/close").status_code == 404
            assert admin.post("/api/admin/rooms/AAAAAAAAAAAAAAAAAAAAAA/close").status_code == 404
    finally:
        server.stop()
