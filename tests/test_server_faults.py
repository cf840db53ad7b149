"""The database refuses writes for a while: another process holds SQLite's write lock longer than
the store's busy timeout (5 s, app.store.db), a real fault. Nothing is lost or half-stored, the player
whose move could not be saved hears ``not_saved`` and makes it again (app.rooms.room.Room._run).
A bot's turn that could not be stored is retried: tests/test_rooms.py, in-process."""

from __future__ import annotations

import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

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


def _logged(server: ServerProcess, text: str, bound_s: float = 60.0) -> str:
    """Wait until the server's log holds ``text`` (bounded); the log then."""
    deadline = time.monotonic() + bound_s
    while text not in (log := server.log()):
        assert time.monotonic() < deadline, f"never logged {text!r}:\n{log[-3000:]}"
        time.sleep(0.05)
    return log


def test_stopping_while_another_process_locks_the_database_stops_without_waiting(tmp_path: Path) -> None:
    """SIGTERM while another process holds the SQLite write lock, with writes pending (the bots'
    moves of two rooms, rooms being created): the server stops without waiting for the lock. The
    pending writes fail at once (the requests are answered, none is cancelled with a traceback
    when the shutdown's grace runs out), it says so in one line (``store_locked_at_stop``), and
    nothing was acknowledged that was not stored. Before, each pending write waited out the 5 s
    busy timeout in turn (a failed batch again for each of its writes): the requests' tasks were
    cancelled with a traceback each and the shutdown took as long as the lock's waits."""
    server = ServerProcess(tmp_path / "data").start()
    try:
        watching = []
        for _ in range(2):
            room = server.create_room(bots=["easy"] * 5, turn_timer_s=0)
            spectator = Client(server, room["code"])
            assert server.start_match(room["code"], room["host_token"]).status_code == 200
            spectator.wait_for(lambda m: m["type"] == "state" and m["version"] > 3)
            watching.append((room["code"], spectator))
        answers: list[httpx.Response | Exception] = []

        def create() -> None:
            try:
                answers.append(
                    httpx.post(f"{server.url}/api/rooms", json={"bots": ["easy"] * 5}, timeout=120)
                )
            except httpx.HTTPError as error:  # the server closed before reading it
                answers.append(error)

        with write_lock(server):
            _logged(server, "room_write_failed")  # a bot's move waited out the lock: writes pend
            creating = [threading.Thread(target=create) for _ in range(3)]
            for thread in creating:
                thread.start()
            assert server.proc is not None
            server.proc.terminate()
            try:
                server.proc.wait(120)
            except subprocess.TimeoutExpired:
                server.kill()
            for thread in creating:
                thread.join(120)
        log = server.log()
        stopping = log[log.index("Shutting down") :]
        assert stopping.count('"event": "store_locked_at_stop"') == 1, stopping[-3000:]
        assert "Traceback" not in log and "graceful shutdown exceeded" not in log, stopping[-3000:]
        assert "Application shutdown complete" in stopping
        created = [a for a in answers if isinstance(a, httpx.Response) and a.status_code == 201]
        refused = [a for a in answers if isinstance(a, httpx.Response) and a.status_code != 201]
        assert all(a.json()["detail"]["code"] == "store_unavailable" for a in refused), refused
        database = sqlite3.connect(server.data_dir / "domeng.sqlite3")
        try:
            stored = {
                code: version
                for code, version in database.execute(
                    "SELECT code, version FROM matches JOIN match_turns ON match_id = id"
                )
            }
        finally:
            database.close()
        assert len(stored) == 2 + len(created)  # the refused ones stored nothing
        for code, spectator in watching:  # every move the table was shown was stored
            seen = max(m["version"] for m in spectator.messages if m["type"] == "state")
            assert seen <= stored[code], (code, seen, stored[code])
            spectator.close()
    finally:
        server.stop()
