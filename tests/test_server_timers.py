"""Turn timer and disconnect grace: a bot covers a missing player, visibly, until they return."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import httpx

from tests.serverkit import Client, ServerProcess, my_turn_to_place


def _covered(message: dict[str, Any], seat: int) -> bool | None:
    seats = message.get("seats") or (message.get("room") or {}).get("seats")
    return None if seats is None else bool(seats[seat]["covered"])


def test_turn_timer_hands_the_turn_to_a_bot_until_the_player_acts(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path).start()
    try:
        room = server.create_room(bots=[None, "greedy", "greedy", "greedy", "greedy"], turn_timer_s=5)
        token = server.claim(room["code"], 0, "Ana").json()["token"]
        server.start_match(room["code"], room["host_token"])
        client = Client(server, room["code"], token)
        turn = client.wait_for(my_turn_to_place)
        assert turn["room"]["turn"]["seat"] == 0 and turn["room"]["turn"]["deadline_ms"] is not None
        # do nothing: the timer runs out and a bot plays seat 0, which is marked covered
        played = client.wait_for(
            lambda m: m["type"] == "state" and any(e.get("seat") == 0 for e in m["events"]), timeout=10
        )
        assert _covered(played, 0) is True
        # the player comes back: the seat is theirs again, and they play their next turn
        client.send({"type": "back"})
        back = client.wait_for(lambda m: m["type"] == "presence" and _covered(m, 0) is False, timeout=10)
        assert back["seats"][0]["connected"] is True
        mine = client.wait_for(my_turn_to_place, timeout=30)
        action = {k: v for k, v in mine["view"]["legal"][0].items() if k != "seat"}
        client.send({"type": "action", "version": mine["version"], "action": action})
        after = client.wait_for(lambda m: m["type"] == "state" and m["version"] > mine["version"], timeout=10)
        assert _covered(after, 0) is False
        client.close()
    finally:
        server.stop()


def test_disconnect_grace_then_a_bot_covers_until_the_player_reconnects(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, env={"DOMENG_DISCONNECT_GRACE_S": "0.5"}).start()
    try:
        room = server.create_room(bots=[None, "greedy", "greedy", "greedy", "greedy"], turn_timer_s=0)
        token = server.claim(room["code"], 0, "Ana").json()["token"]
        server.start_match(room["code"], room["host_token"])
        client = Client(server, room["code"], token)
        client.wait_for(lambda m: m["type"] == "state")
        client.close()
        watcher = Client(server, room["code"])
        covered = watcher.wait_for(lambda m: _covered(m, 0) is True, timeout=10)
        assert covered["type"] in {"presence", "state"}
        # with seat 0 covered the bots play on without waiting for anyone
        watcher.wait_for(
            lambda m: m["type"] == "state" and any(e.get("seat") == 0 for e in m["events"]), timeout=20
        )
        back = Client(server, room["code"], token)
        back.wait_for(lambda m: m["type"] == "state")
        uncovered = watcher.wait_for(
            lambda m: m["type"] == "presence" and _covered(m, 0) is False, timeout=10
        )
        assert uncovered["seats"][0]["connected"] is True
        back.close()
        watcher.close()
    finally:
        server.stop()


def test_covering_another_seat_leaves_the_turn_deadline_alone(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, env={"DOMENG_DISCONNECT_GRACE_S": "0.5"}).start()
    try:
        room = server.create_room(bots=[None, None, "greedy", "greedy", "greedy"], turn_timer_s=30)
        ana = server.claim(room["code"], 0, "Ana").json()["token"]
        budi = server.claim(room["code"], 1, "Budi").json()["token"]
        first, second = Client(server, room["code"], ana), Client(server, room["code"], budi)
        server.start_match(room["code"], room["host_token"])
        turn = None
        end = time.monotonic() + 60
        while turn is None and time.monotonic() < end:  # Budi plays his turns until it is Ana's
            for client in (first, second):
                try:
                    message = client.recv(timeout=0.2)
                except TimeoutError:
                    continue
                if not my_turn_to_place(message):
                    continue
                if client is first:
                    turn = message
                    break
                action = {k: v for k, v in message["view"]["legal"][0].items() if k != "seat"}
                second.send({"type": "action", "version": message["version"], "action": action})
        assert turn is not None, "Ana's turn never came"
        deadline = turn["room"]["turn"]["deadline_ms"]
        second.close()  # Budi leaves while it is Ana's turn: after the grace a bot covers seat 1
        covered = first.wait_for(lambda m: m["type"] == "presence" and _covered(m, 1) is True, timeout=10)
        assert covered["seats"][1]["connected"] is False
        now = server.room(room["code"])
        assert now["version"] == turn["version"] and now["turn"] == {"seat": 0, "deadline_ms": deadline}
        first.close()
    finally:
        server.stop()


def test_a_player_gone_before_the_start_is_covered_after_the_grace(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, env={"DOMENG_DISCONNECT_GRACE_S": "0.5"}).start()
    try:
        room = server.create_room(bots=[None, None, "greedy", "greedy", "greedy"], turn_timer_s=30)
        ana = server.claim(room["code"], 0, "Ana").json()["token"]
        budi = server.claim(room["code"], 1, "Budi").json()["token"]
        first = Client(server, room["code"], ana)
        first.wait_for(lambda m: m["type"] == "state")
        gone = Client(server, room["code"], budi)
        gone.wait_for(lambda m: m["type"] == "state")
        gone.close()
        first.wait_for(lambda m: m["type"] == "presence" and not m["seats"][1]["connected"], timeout=10)
        server.start_match(room["code"], room["host_token"])
        first.wait_for(lambda m: _covered(m, 1) is True, timeout=10)
        first.close()
    finally:
        server.stop()


def test_the_connection_gauge_counts_replaced_and_closed_sockets_out(tmp_path: Path) -> None:
    def gauge() -> float:
        text = httpx.get(f"{server.url}/metrics", timeout=5).text
        return float(re.search(r"^domeng_connections (\S+)$", text, re.M).group(1))  # type: ignore[union-attr]

    server = ServerProcess(tmp_path).start()
    try:
        room = server.create_room(bots=[None, "greedy", "greedy", "greedy", "greedy"], turn_timer_s=0)
        token = server.claim(room["code"], 0, "Ana").json()["token"]
        first = Client(server, room["code"], token)
        first.wait_for(lambda m: m["type"] == "state")
        second = Client(server, room["code"], token)  # replaces the first (4001)
        second.wait_for(lambda m: m["type"] == "state")
        watcher = Client(server, room["code"])
        watcher.wait_for(lambda m: m["type"] == "state")
        assert gauge() == 2
        for client in (first, second, watcher):
            client.close()
        deadline = time.monotonic() + 10
        while gauge() != 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert gauge() == 0
    finally:
        server.stop()


def test_a_table_nobody_watches_finishes_its_round_and_deals_no_more(tmp_path: Path) -> None:
    """Bots do not play on alone: with nobody connected the round in play ends, the next one is
    dealt only when someone connects (docs/protocol.md, "Turns, timers and bots")."""
    fast = {"DOMENG_BOT_DELAY_S": "0.02", "DOMENG_ROUND_PAUSE_S": "0.05"}
    server = ServerProcess(tmp_path, env=fast).start()
    try:
        room = server.create_room(bots=["greedy"] * 5, options={"camat_target": 0}, turn_timer_s=0)
        server.start_match(room["code"], room["host_token"])
        watcher = Client(server, room["code"])
        watcher.wait_for(lambda m: m["type"] == "state" and m["view"]["round"] >= 2, timeout=30)
        watcher.close()
        # the round that was in play ends; then nothing moves
        deadline = time.monotonic() + 30
        while (public := server.room(room["code"]))["turn"] is not None:
            assert time.monotonic() < deadline, "the round in play never ended"
            time.sleep(0.05)
        time.sleep(1.0)  # twenty round pauses
        assert server.room(room["code"]) == public
        # someone looks in: the next round is dealt, and play goes on
        again = Client(server, room["code"])
        dealt = again.wait_for(
            lambda m: m["type"] == "state" and m["view"]["round"] > public["round"]["index"] + 1, timeout=10
        )
        assert dealt["view"]["phase"] == "playing"
        again.close()
    finally:
        server.stop()
