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
from engine.core import Phase
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
