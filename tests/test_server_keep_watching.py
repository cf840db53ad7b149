""" "Keep watching?" through a real server's sockets (docs/protocol.md, `keep_watching`): a no-limit
table of bots stops dealing after ``DOMENG_UNATTENDED_ROUNDS`` rounds with no person at it and
says so in ``room.keep_watching``; a spectator's ``{"type": "keep_watching"}`` deals the next
round; the message takes no field (1007 otherwise) and is limited per spectator and per client
address (``keep_watching_too_fast``, the socket stays open)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed

from app.edge.endpoint import KEEP_WATCHING_ADDRESS_BURST, KEEP_WATCHING_BURST
from tests.serverkit import Client, ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path_factory.mktemp("keep-watching"),
        env={"DOMENG_BOT_DELAY_S": "0.02", "DOMENG_ROUND_PAUSE_S": "0.2", "DOMENG_UNATTENDED_ROUNDS": "1"},
    ).start()
    yield process
    process.stop()


def _asking(message: dict[str, Any]) -> bool:
    """A ``state`` or ``presence`` saying the room holds its next deal for an answer."""
    return (
        message["type"] in ("state", "presence") and message.get("room", message).get("keep_watching") is True
    )


def _bots_table(server: ServerProcess) -> tuple[str, Client]:
    """A started no-limit table of five bots and a spectator who has seen it ask (after its
    first round: one round with no person at the table is the server's setting)."""
    room = server.create_room(bots=["easy"] * 5, turn_timer_s=0, options={"camat_target": 0})
    code = room["code"]
    watcher = Client(server, code)
    watcher.wait_for(lambda m: m["type"] == "chat_log")
    assert server.start_match(code, room["host_token"]).status_code == 200
    watcher.wait_for(_asking, timeout=60)
    return code, watcher


def test_a_spectators_answer_deals_the_next_round(server: ServerProcess) -> None:
    code, watcher = _bots_table(server)
    try:
        assert watcher.state is not None
        asked = watcher.state["view"]["round"]
        assert server.room(code)["keep_watching"] is True  # the HTTP RoomPublic says it too
        watcher.send({"type": "keep_watching"})
        dealt = watcher.wait_for(lambda m: m["type"] == "state" and m["view"]["round"] == asked + 1)
        assert dealt["room"]["keep_watching"] is False
        assert dealt["view"]["phase"] == "playing"
    finally:
        watcher.close()


@pytest.mark.parametrize(
    "frame",
    [
        {"type": "keep_watching", "round": 3},
        {"type": "keep_watching", "watching": True},
        {"type": "keep_watching", "version": 7},
    ],
)
def test_a_keep_watching_with_a_field_breaks_the_protocol(
    server: ServerProcess, frame: dict[str, Any]
) -> None:
    """It takes no field: another closes the socket with 1007, and deals nothing."""
    code, watcher = _bots_table(server)
    try:
        version = server.room(code)["version"]
        watcher.send(frame)
        with pytest.raises(ConnectionClosed) as closed:
            watcher.wait_for(lambda m: False, timeout=10)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1007
        assert server.room(code)["version"] == version and server.room(code)["keep_watching"] is True
    finally:
        watcher.close()


def test_answers_are_limited_per_spectator_and_per_address(server: ServerProcess) -> None:
    """A spectator sends `KEEP_WATCHING_BURST` answers (one deals, the others find nothing to
    answer or deal again), and its next is refused; so is a new spectator's from the same address
    once the address's `KEEP_WATCHING_ADDRESS_BURST` are spent. The socket stays open."""
    code, first = _bots_table(server)
    others: list[Client] = []
    try:
        for _ in range(KEEP_WATCHING_BURST):
            first.send({"type": "keep_watching"})
        first.send({"type": "keep_watching"})
        refused = first.wait_for(lambda m: m["type"] == "error")
        assert refused["code"] == "keep_watching_too_fast"
        first.send({"type": "ping"})
        first.wait_for(lambda m: m["type"] == "pong")  # still open
        spent = KEEP_WATCHING_BURST
        while spent < KEEP_WATCHING_ADDRESS_BURST:
            other = Client(server, code)
            others.append(other)
            other.wait_for(lambda m: m["type"] == "chat_log")
            for _ in range(min(KEEP_WATCHING_BURST, KEEP_WATCHING_ADDRESS_BURST - spent)):
                other.send({"type": "keep_watching"})
                spent += 1
            other.send({"type": "ping"})
            assert other.wait_for(lambda m: m["type"] in ("error", "pong"))["type"] == "pong"
        last = Client(server, code)
        others.append(last)
        last.wait_for(lambda m: m["type"] == "chat_log")
        last.send({"type": "keep_watching"})
        assert last.wait_for(lambda m: m["type"] == "error")["code"] == "keep_watching_too_fast"
    finally:
        first.close()
        for other in others:
            other.close()
