"""The server's stack is a setting (issue 15): by default uvicorn runs on uvloop (libuv's event
loop) and the store's writer waits ``DOMENG_GROUP_COMMIT_S`` (20 ms, or until
``DOMENG_GROUP_COMMIT_WRITES``, 16, are at hand) for more writes under load;
``DOMENG_LOOP=asyncio`` and ``DOMENG_GROUP_COMMIT_S=0`` give the standard library's loop and a
writer that never waits. A table plays on either exactly alike: a move is stored, adopted and sent
back, bots answer, and a restart resumes the room where it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import engine
from tests.serverkit import Client, ServerProcess, my_turn_to_place

pytest.importorskip("uvloop", reason="uvloop is not installed")


def _libraries(pid: int) -> str:
    """The shared objects mapped into process ``pid``."""
    return Path(f"/proc/{pid}/maps").read_text()


@pytest.mark.parametrize(
    ("env", "uvloop"),
    [({}, True), ({"DOMENG_LOOP": "asyncio", "DOMENG_GROUP_COMMIT_S": "0"}, False)],
    ids=["default-uvloop", "asyncio-no-window"],
)
def test_a_table_plays_and_resumes_on_either_stack(tmp_path: Path, env: dict[str, str], uvloop: bool) -> None:
    env = {**env, "DOMENG_BOT_DELAY_S": "0.02"}
    server = ServerProcess(tmp_path, env=env).start()
    try:
        assert server.proc is not None
        assert ("uvloop" in _libraries(server.proc.pid)) is uvloop  # libuv's loop, or asyncio's
        # the operator reads which in the log
        ready = next(json.loads(line) for line in server.log().splitlines() if '"server_ready"' in line)
        assert ready["loop"] == ("uvloop" if uvloop else "asyncio")
        assert ready["group_commit_s"] == float(env.get("DOMENG_GROUP_COMMIT_S", "0.02"))
        assert ready["group_commit_writes"] == 16
        assert ready["engine"] == engine.BUILD  # the build this checkout runs, compiled or pure
        room = server.create_room(bots=[None, "medium", "easy", "medium", "easy"], turn_timer_s=0)
        token = server.claim(room["code"], 0, "Ana").json()["token"]
        assert server.start_match(room["code"], room["host_token"]).status_code == 200
        player = Client(server, room["code"], token)
        for _ in range(2):  # two of Ana's moves, each stored and sent back, the bots in between
            turn = player.wait_for(my_turn_to_place, timeout=60)
            assert player.answer(turn)
            moved = player.wait_for(lambda m, v=turn["version"]: m["type"] == "state" and m["version"] > v)
            assert moved["events"] and moved["events"][0]["seat"] == 0
        waiting = player.wait_for(my_turn_to_place, timeout=60)
        player.close()
    finally:
        server.stop()

    again = ServerProcess(tmp_path, env=env).start()
    try:
        back = Client(again, room["code"], token)
        resumed = back.wait_for(lambda m: m["type"] == "state")
        assert resumed["version"] == waiting["version"]  # every acknowledged move was stored
        assert resumed["view"]["hand"] == waiting["view"]["hand"]
        back.close()
    finally:
        again.stop()
