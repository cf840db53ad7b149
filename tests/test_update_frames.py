"""An update frame is, byte for byte, the JSON of what docs/protocol.md says it holds (issue 15).

`app.rooms.frames.send_updates` joins pieces serialised once per update (the head with the room,
the shared part of the view, the events) to each recipient's private part, as text; every frame
must be exactly ``orjson.dumps`` of the whole message, key order included: each seat's and a
spectator's, in Domeng and in Kozel (whose draws are private events), over random play.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from app.rooms.frames import room_public, send_updates
from app.rooms.seats import SeatInfo
from app.store.rows import SeatSpec
from engine.core import Phase
from engine.variants import make_rules
from engine.views import events_json, private_view_json, shared_view_json
from tests.roomkit import RawOutbox, Table, run_table


@pytest.mark.parametrize(("variant", "seats"), [("domeng", 5), ("kozel", 4), ("kozel", 3)])
def test_each_recipients_update_is_the_json_of_its_message(tmp_path: Path, variant: str, seats: int) -> None:
    async def body(table: Table) -> None:
        room = table.room
        rng = random.Random(variant + str(seats))
        rules = room.rules
        conns = [RawOutbox(seat) for seat in range(seats)] + [RawOutbox(None)]
        state = rules.new_match()
        drew = 0
        for _ in range(600):
            if state.phase is Phase.OVER:
                state = rules.new_match()
            if state.phase is not Phase.PLAYING:
                state.start_round(rules.deal(rng))
            before = len(state.log)
            state.apply(rng.choice(state.legal_actions()))
            drew += any(type(e).__name__ == "Drew" for e in state.log[before:])
            room.state = state
            send_updates(room, conns, before)
            for conn in conns:
                message: dict[str, Any] = {
                    "type": "state",
                    "version": room.version,
                    "from": before,
                    "room": room_public(room),
                    "view": {**private_view_json(state, conn.seat), **shared_view_json(state)},
                    "events": events_json(state, conn.seat, before),
                }
                assert conn.texts.pop() == orjson.dumps(message).decode()
        assert variant == "domeng" or drew  # Kozel's private events were among them

    run_table(tmp_path, body, bots=[None] * seats, variant=variant)


def test_a_seats_kept_private_part_follows_its_hand(tmp_path: Path) -> None:
    """A seat not to act sends the private part kept from its last update while its hand is the
    same (`Room.private_parts`), and its new hand as soon as it changes (a new deal), even when
    nothing else of its part changes: it is never to act here."""

    async def body(table: Table) -> None:
        room = table.room
        rules = room.rules
        rng = random.Random(3)
        watcher = RawOutbox(4)
        for _ in range(4):
            state = rules.new_match()
            while True:
                state.start_round(rules.deal(rng))
                if state.to_act != 4:
                    break
                state = rules.new_match()
            room.state = state
            send_updates(room, [watcher], len(state.log))
            view = orjson.loads(watcher.texts.pop())["view"]
            assert view["hand"] == private_view_json(state, 4)["hand"]
            assert view["legal"] == []
            hand = state.hands[4]
            state.apply(state.legal_actions()[0])  # another seat moves: seat 4's hand is the same
            send_updates(room, [watcher], len(state.log) - 1)
            assert state.hands[4] == hand
            assert orjson.loads(watcher.texts.pop())["view"]["hand"] == view["hand"]

    run_table(tmp_path, body, bots=[None] * 5)


def test_an_update_tells_every_change_of_the_room_since_the_last(tmp_path: Path) -> None:
    """The room's part of an update is made of parts kept from update to update
    (`app.rooms.frames.room_public_json`: the rules' options and sides, the seats'): each change
    of what everyone may see of the room, a seat's presence, cover, readiness or person, the rules
    themselves, the table's size, shows in the very next update, as `room_public` says it."""

    async def body(table: Table) -> None:
        room = table.room
        state = room.rules.new_match()
        state.start_round(room.rules.deal(random.Random(5)))
        room.state = state
        conn = RawOutbox(None)
        seat = room.seats[2]

        def swap_rules() -> None:
            room.rules = make_rules("domeng", {"camat_target": 3}, 5)

        changes: list[tuple[str, Any]] = [
            ("a person", lambda: seat.become(SeatSpec(kind="human", name="Dewi", seat=2, ready=True))),
            ("connected", lambda: setattr(seat, "connections", 1)),
            ("gone", lambda: setattr(seat, "connections", 0)),
            ("covered", lambda: setattr(seat, "covered", True)),
            ("stand_in", lambda: setattr(seat, "stand_in", True)),
            ("released", seat.release),
            ("not ready", lambda: setattr(seat, "ready", False)),
            ("renamed", lambda: setattr(seat, "name", "Ayu")),
            ("a bot", lambda: seat.become(SeatSpec(kind="bot", bot_level="easy", seat=2))),
            ("bot level", lambda: setattr(seat, "bot_level", "hard")),
            ("rules", swap_rules),
            ("a seat more", lambda: room.seats.append(SeatInfo(5))),
            ("a seat less", room.seats.pop),
            ("status", lambda: setattr(room, "status", "finished")),
        ]
        before = None
        for what, change in [("first", lambda: None), *changes]:
            change()
            send_updates(room, [conn], len(state.log))
            sent = orjson.loads(conn.texts.pop())["room"]
            assert sent == orjson.loads(orjson.dumps(room_public(room))), what
            assert sent != before, f"{what}: the room as in the update before"
            before = sent

    run_table(tmp_path, body, bots=[None] * 5)
