"""An HTTP call or a chat line whose write the database fails (down, timing out, its disk full) is
answered in plain words (HTTP: the API's shape, 500 ``store_unavailable``), changes nothing, and
works again once the database does. In process (the app's own lifespan, or the room kit; real
SQLite); the room's store is wrapped by `tests.test_rooms.RefusingStore`, a fake at a port the room
owns."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from app.edge import endpoint
from app.edge.protocol import ChatMessage
from app.web.app import create_app
from app.web.settings import Settings
from tests.roomkit import Table, run_table
from tests.test_rooms import RefusingStore


def test_a_stop_the_database_refuses_answers_store_unavailable_and_changes_nothing(tmp_path: Path) -> None:
    async def main() -> None:
        app = create_app(Settings(data_dir=tmp_path, bot_workers=1, bot_delay_s=0.2, log_json=False))
        transport = httpx.ASGITransport(app=app, client=("10.9.8.7", 40000))
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http,
        ):
            bots = ["easy"] * 5
            made = await http.post("/api/rooms", json={"bots": bots, "options": {"camat_target": 0}})
            code, token = made.json()["code"], made.json()["host_token"]
            auth = {"Authorization": f"Bearer {token}"}
            assert (await http.post(f"/api/rooms/{code}/start", headers=auth)).status_code == 200
            room = app.state.hub.get(code)
            assert room is not None
            refusing = RefusingStore(room.store)
            room.store, refusing.refusing = refusing, True
            version = room.version
            refused = await http.put(f"/api/rooms/{code}/stop", json={"stop": True}, headers=auth)
            assert refused.status_code == 500, refused.text
            detail = refused.json()["detail"]
            assert detail["code"] == "store_unavailable" and "try again" in detail["message"], detail
            assert token not in refused.text
            shown = (await http.get(f"/api/rooms/{code}")).json()
            assert not shown["host_stop"] and refusing.refused >= 1, shown
            refusing.refusing = False
            stopped = await http.put(f"/api/rooms/{code}/stop", json={"stop": True}, headers=auth)
            assert stopped.status_code == 200, stopped.text
            assert (await http.get(f"/api/rooms/{code}")).json()["host_stop"] is True
            assert room.version > version

    asyncio.run(main())


def test_a_chat_line_the_database_refuses_is_answered_and_the_socket_stays(tmp_path: Path) -> None:
    """A chat line whose write failed ended the sender's socket (the store's error went up through
    the socket's handler). It is answered ``chat_not_saved``, nobody gets the line, and the same
    connection sends it again once the database answers."""

    async def body(table: Table) -> None:
        _, ana = await table.sit(0, "Ana")
        watcher = await table.watch()
        await table.start()
        refusing = RefusingStore(table.store)
        table.room.store, refusing.refusing = refusing, True
        line = ChatMessage(type="chat", text="salam")
        await endpoint._chat(table.room, ana, line, ())
        await table.room.settled()
        assert ana.of_type("error")[-1]["code"] == "chat_not_saved", ana.of_type("error")
        assert not ana.closed and not watcher.of_type("chat") and refusing.refused == 1
        refusing.refusing = False
        await endpoint._chat(table.room, ana, line, ())
        await table.room.settled()
        assert [m["line"]["text"] for m in watcher.of_type("chat")] == ["salam"]

    run_table(tmp_path, body, bots=[None, "greedy", "greedy", "greedy", "greedy"])
