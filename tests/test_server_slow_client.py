"""A client that stops reading is dropped, and everyone else at the table keeps getting their
updates on time. On loopback the kernel's socket buffers hold megabytes, so here the heartbeat (a
ping with no pong) drops it first; with less buffering its bounded send queue (4 frames here)
fills and closes it with 4002. Either way the room never waits for it."""

from __future__ import annotations

import re
import time
from pathlib import Path

import httpx
from websockets.sync.client import connect

from tests.serverkit import Client, ServerProcess


def _connections(server: ServerProcess) -> float:
    metrics = httpx.get(f"{server.url}/metrics", timeout=5).text
    found = re.search(r"^domeng_connections (\S+)$", metrics, re.M)
    assert found is not None
    return float(found.group(1))


def test_a_stalled_reader_is_dropped_without_slowing_the_table(tmp_path: Path) -> None:
    env = {
        "DOMENG_SEND_QUEUE_SIZE": "4",
        "DOMENG_BOT_DELAY_S": "0.005",
        "DOMENG_PING_INTERVAL_S": "2",
        "DOMENG_PING_TIMEOUT_S": "3",
    }
    server = ServerProcess(tmp_path, env=env).start()
    try:
        room = server.create_room(
            bots=["greedy", "random", "greedy", "random", "greedy"],
            turn_timer_s=0,
            options={"camat_target": 0},
        )
        # a spectator that stops reading after one buffered frame and never answers pings
        stalled = connect(
            f"{server.ws_base}/ws/rooms/{room['code']}", max_queue=1, ping_interval=None, open_timeout=10
        ).__enter__()
        stalled.send('{"type": "hello", "protocol": 1}')
        watcher = Client(server, room["code"])
        watcher.wait_for(lambda m: m["type"] == "welcome")
        assert _connections(server) == 2
        server.start_match(room["code"], room["host_token"])
        # while the stalled spectator is still connected (its heartbeat drops it after about 5 s),
        # the watcher keeps getting every update: a room that waited for the stalled socket would
        # let through one or two at most before the drop
        deadline = time.monotonic() + 60
        versions: list[int] = []
        while time.monotonic() < deadline and _connections(server) > 1:
            versions.append(watcher.wait_for(lambda m: m["type"] == "state", timeout=10)["version"])
        assert _connections(server) == 1, "the stalled client was never dropped"
        assert len(versions) >= 10, versions
        assert versions == sorted(set(versions)), versions  # in order, none twice
        version = watcher.wait_for(lambda m: m["type"] == "state", timeout=5)["version"]
        assert watcher.wait_for(lambda m: m["type"] == "state", timeout=5)["version"] > version
        watcher.close()
        stalled.close()
    finally:
        server.stop()
