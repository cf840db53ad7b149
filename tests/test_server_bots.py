"""Bots in worker processes, end to end through a real server: a hard bot thinking for seconds does
not hold up another room, and stopping the server leaves no worker behind."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.serverkit import Client, ServerProcess, my_turn_to_place, wait_gone

THINK_MS = 4000
"""The hard bots' budget here: long enough that a room's three round trips fit many times over."""


def _command(pid: int) -> str:
    with contextlib.suppress(OSError):
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    return "?"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path,
        env={
            "DOMENG_HARD_BOT_BUDGET_MS": str(THINK_MS),
            "DOMENG_BOT_WORKERS": "1",
            "DOMENG_BOT_DELAY_S": "0",
        },
    ).start()
    yield process
    process.stop()


def _playing(message: dict[str, Any]) -> bool:
    return message["type"] == "state" and bool(message["view"]) and message["view"]["phase"] == "playing"


class Players:
    """Room B: a two-seat Kozel table of two socket players, moved one action at a time."""

    def __init__(self, server: ServerProcess) -> None:
        room = server.create_room(variant="kozel", seats=2, bots=[None, None], turn_timer_s=0)
        tokens = [server.claim(room["code"], seat, f"P{seat}").json()["token"] for seat in range(2)]
        self.clients = [Client(server, room["code"], token) for token in tokens]
        assert server.start_match(room["code"], room["host_token"]).status_code == 200
        for client in self.clients:
            client.wait_for(_playing)

    def step(self) -> None:
        """The seat to act sends a move; returns once both players have the state it made."""
        for _ in range(200):
            mover = next((c for c in self.clients if c.state and my_turn_to_place(c.state)), None)
            if mover is not None:
                break
            # A forced pass or the next deal is on its way, to both: each reads up to it, so that
            # whichever seat is to act next knows it (the other seat, after clients[0]'s forced
            # pass or a deal it leads, used to be left a version behind while clients[0] waited).
            state = self.clients[0].wait_for(lambda m: m["type"] == "state")
            for client in self.clients[1:]:
                client.wait_for(lambda m, v=state["version"]: m["type"] == "state" and m["version"] >= v)
        assert mover is not None and mover.state is not None
        version = mover.state["version"]
        assert mover.answer(mover.state)
        for client in self.clients:
            client.wait_for(lambda m, v=version: m["type"] == "state" and m["version"] > v)

    def close(self) -> None:
        for client in self.clients:
            client.close()


def test_another_rooms_moves_are_applied_and_sent_while_a_hard_bot_thinks(server: ServerProcess) -> None:
    """Room A: five hard bots, watched by a spectator. At each of its versions, room B's players make
    three moves one after another, each applied, stored and sent to both before the next is sent.
    Soon a bot of A has a real choice and thinks for THINK_MS: B's three round trips all complete
    before A's next version reaches its spectator. (Were the bot thinking on the event loop, B's
    first move would wait for its decision, and the next two would come after A's update.)"""
    bots = server.create_room(bots=["hard"] * 5, turn_timer_s=0, options={"camat_target": 0})
    spectator = Client(server, bots["code"])
    assert server.start_match(bots["code"], bots["host_token"]).status_code == 200
    players = Players(server)
    try:
        message = spectator.wait_for(_playing)
        for _ in range(30):
            version = message["version"]
            for _ in range(3):
                players.step()
            try:
                message = spectator.recv(timeout=0)  # only what has already arrived
            except TimeoutError:
                break  # B moved three times while A's bot was still thinking
            while message["type"] != "state":
                message = spectator.recv()
        else:
            pytest.fail("room A's bots never thought longer than room B's three round trips")
        decided = spectator.wait_for(lambda m: m["type"] == "state" and m["version"] > version, timeout=60)
        assert decided["view"]["log"], "the thinking bot's move arrived"
    finally:
        players.close()
        spectator.close()


def test_stopping_the_server_leaves_no_bot_worker(server: ServerProcess) -> None:
    room = server.create_room(bots=["medium"] * 5, turn_timer_s=0)
    spectator = Client(server, room["code"])
    assert server.start_match(room["code"], room["host_token"]).status_code == 200
    first = spectator.wait_for(_playing)
    spectator.wait_for(lambda m: m["type"] == "state" and m["version"] > first["version"] + 3)
    metrics = httpx.get(f"{server.url}/metrics", timeout=10).text
    counted = re.search(r'^domeng_bot_decision_seconds_count\{level="medium"\} (\S+)$', metrics, re.M)
    assert counted and float(counted.group(1)) >= 1, metrics
    assert re.search(r"^domeng_bot_fallbacks_total 0\.0$", metrics, re.M)
    assert server.proc is not None
    workers = server.children()
    assert any("spawn_main" in _command(pid) for pid in workers), "the bots decide in a worker process"
    spectator.close()
    server.stop()
    assert "Application shutdown complete" in server.log()  # a clean stop (uvicorn re-raises SIGTERM)
    # the workers are gone with the server; multiprocessing's resource tracker (a child too) ends
    # when it reads the end of its pipe from the server that exited: wait for that, bounded
    left = wait_gone(workers, timeout=20)
    assert not left, [_command(pid) for pid in left]
    assert "Traceback" not in server.log()
