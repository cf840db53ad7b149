"""The database refuses writes for a while: another process holds SQLite's write lock longer than
the store's busy timeout (5 s, app.store.db), a real fault. Nothing is lost or half-stored, the player
whose move could not be saved hears ``not_saved`` and makes it again (app.rooms.room.Room._run).
A bot's turn that could not be stored is retried: tests/test_rooms.py, in-process."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.serverkit import Client, ServerProcess, my_turn_to_place

LOCK_S = 7.0
"""How long the write lock is held: past the store's 5 s busy timeout, so a write fails once."""


@contextmanager
def write_lock(server: ServerProcess) -> Iterator[None]:
    """Hold the server's SQLite database's write lock (``BEGIN IMMEDIATE`` from another
    connection) while the block runs; readers go on (WAL), writers wait and time out."""
    database = sqlite3.connect(server.data_dir / "domeng.sqlite3", timeout=10, isolation_level=None)
    try:
        database.execute("BEGIN IMMEDIATE")
        yield
        database.execute("ROLLBACK")
    finally:
        database.close()


def _stored_rounds(server: ServerProcess, code: str) -> list[tuple[int, int, int]]:
    """(round, actions stored, highest seq + 1) of each stored round of room ``code``."""
    database = sqlite3.connect(server.data_dir / "domeng.sqlite3", timeout=10)
    try:
        rows = database.execute(
            "select a.round_index, count(*), max(a.seq) + 1 from actions a join matches m "
            "on m.id = a.match_id where m.code = ? group by a.round_index order by a.round_index",
            (code,),
        ).fetchall()
    finally:
        database.close()
    return [tuple(row) for row in rows]


def test_a_move_the_database_refused_is_reported_and_can_be_made_again(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "data", env={"DOMENG_BOT_DELAY_S": "0.05"}).start()
    try:
        room = server.create_room(bots=[None, "greedy", "greedy", "greedy", "greedy"], turn_timer_s=0)
        token = server.claim(room["code"], 0, "Ana").json()["token"]
        assert server.start_match(room["code"], room["host_token"]).status_code == 200
        ana = Client(server, room["code"], token)
        turn = ana.wait_for(my_turn_to_place)
        move = {k: v for k, v in turn["view"]["legal"][0].items() if k != "seat"}
        with write_lock(server):
            ana.send({"type": "action", "version": turn["version"], "action": move})
            refused = ana.wait_for(lambda m: m["type"] == "error", timeout=LOCK_S)
            assert refused["code"] == "not_saved"
            assert refused["version"] == turn["version"] == server.room(room["code"])["version"]
        ana.send({"type": "action", "version": turn["version"], "action": move})
        moved = ana.wait_for(lambda m: m["type"] == "state" and m["version"] > turn["version"])
        assert moved["view"]["log"][len(turn["view"]["log"])]["seat"] == 0  # our move, once
        for _round, stored, seqs in _stored_rounds(server, room["code"]):
            assert stored == seqs  # no gap, no duplicate
        assert "room_write_failed" in server.log()
        ana.close()
    finally:
        server.stop()
