"""Restart recovery: after ``kill -9`` mid-round, a restarted server resumes every room at its
last stored action with the same hands, stones and turn, and players reconnect with their tokens.
Runs on SQLite, and on PostgreSQL when DOMENG_TEST_POSTGRES_URL is set."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.adminkit import POSTGRES_URL, scratch_postgres
from tests.serverkit import Client, ServerProcess, wait_gone

DATABASES = ["sqlite"] + (["postgresql"] if POSTGRES_URL else [])


@pytest.fixture
def database_url(database: str) -> Iterator[str | None]:
    """None (SQLite in the server's data directory), or a scratch PostgreSQL database: the servers
    run without Redis, so each holds its database alone (`app.store.pghold`)."""
    if database != "postgresql":
        yield None
        return
    with scratch_postgres("server") as url:
        yield url


def _can_play(message: dict[str, Any]) -> bool:
    """A state where the seat may place a tile (a forced pass is the server's to apply)."""
    view = message.get("view") if message["type"] == "state" else None
    return bool(view) and view["phase"] == "playing" and any("play" in a for a in view["legal"])


def _latest_state(client: Client, window: float = 0.5) -> dict[str, Any]:
    """The newest state received within ``window`` seconds (play goes on meanwhile)."""
    latest = client.wait_for(lambda m: m["type"] == "state")
    deadline = time.monotonic() + window
    while (left := deadline - time.monotonic()) > 0:
        try:
            message = client.recv(timeout=left)
        except TimeoutError:
            break
        if message["type"] == "state":
            latest = message
    return latest


@pytest.mark.parametrize("database", DATABASES)
def test_kill_9_mid_round_loses_no_acknowledged_action(tmp_path: Path, database_url: str | None) -> None:
    env = {"DOMENG_BOT_DELAY_S": "0.02"}
    first = ServerProcess(tmp_path, env=env, database_url=database_url).start()
    try:
        # room A waits on a human's turn; room B has bots playing as the server dies
        room_a = first.create_room(bots=[None, "greedy", "greedy", "random", "greedy"], turn_timer_s=0)
        token = first.claim(room_a["code"], 0, "Ana").json()["token"]
        first.start_match(room_a["code"], room_a["host_token"])
        room_b = first.create_room(
            bots=["greedy", "random", "greedy", "random", "greedy"],
            turn_timer_s=0,
            options={"camat_target": 0},
        )
        first.start_match(room_b["code"], room_b["host_token"])
        player = Client(first, room_a["code"], token)
        for _ in range(3):  # play a few of Ana's turns
            turn = player.wait_for(_can_play)
            action = {k: v for k, v in turn["view"]["legal"][0].items() if k != "seat"}
            player.send({"type": "action", "version": turn["version"], "action": action})
        waiting = player.wait_for(_can_play)
        watcher = Client(first, room_b["code"])
        seen_b = _latest_state(watcher)
        time.sleep(0.2)
        workers = first.children()
        assert workers, "the bots think in worker processes"
        first.kill()
    finally:
        first.stop()
    # a server killed with SIGKILL cannot stop its bot workers: they see it gone and end themselves
    left = wait_gone(workers)
    assert not left, f"workers outlived their server: {left}"

    second = ServerProcess(tmp_path, env=env, database_url=database_url).start()
    try:
        back = Client(second, room_a["code"], token)
        resumed = back.wait_for(lambda m: m["type"] == "state")
        assert resumed["version"] == waiting["version"]
        for key in ("hand", "chain", "table", "stones", "to_act", "legal", "hand_counts", "round"):
            assert resumed["view"][key] == waiting["view"][key], key
        action = {k: v for k, v in resumed["view"]["legal"][0].items() if k != "seat"}
        back.send({"type": "action", "version": resumed["version"], "action": action})
        moved = back.wait_for(lambda m: m["type"] == "state" and m["version"] > resumed["version"])
        assert moved["events"] and moved["events"][0]["seat"] == 0

        watcher_b = Client(second, room_b["code"])
        state_b = watcher_b.wait_for(lambda m: m["type"] == "state")
        assert state_b["version"] >= seen_b["version"], "an acknowledged action was lost"
        later = watcher_b.wait_for(
            lambda m: m["type"] == "state" and m["version"] > state_b["version"], timeout=20
        )
        assert later["version"] > state_b["version"], "the bots play on after the restart"
        back.close()
        watcher_b.close()
    finally:
        second.stop()
