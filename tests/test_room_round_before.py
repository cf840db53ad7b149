"""A room read back from the store in the middle of a round (a restart, a handoff to another
process) still sends the round before it as it ended in its whole states (``round_before``,
docs/protocol.md): a page opened then offers that round's results in its top bar, not nothing (and
never the last match's). It is what the room sent before the restart, its version and the hints used
in that round included, but for who is connected (a restart drops every connection)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from app.rooms import frames, hints
from tests.roomkit import Table, my_move, reopen, run_table
from tests.test_room_again import _play

SEATS = [None, "greedy", "random", "easy", "greedy"]


def _as_ended(sent: dict[str, Any]) -> dict[str, Any]:
    """``round_before`` without who is connected (a restart drops every connection): the host's
    presence, and each seat's."""
    room = {k: v for k, v in sent["room"].items() if k not in ("seats", "host")}
    seats = [{k: v for k, v in s.items() if k != "connected"} for s in sent["room"]["seats"]]
    return {"room": room, "seats": seats, "view": sent["view"]}


def test_a_room_read_back_mid_round_sends_the_round_before_as_it_ended(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        _, ana = await table.sit(0, "Ana")
        await table.start()
        room = table.room
        await _play(table, [ana], lambda: room.state is not None and room.state.round_index == 3)
        await _play(table, [ana], lambda: len(room.state.log) > 3)  # type: ignore[union-attr]
        sent = orjson.loads(frames.full_frame(room, None))["round_before"]
        assert sent["view"]["round"] == 2 and sent["room"]["match"] == 1, sent["room"]
        assert sent["view"]["outcome"] and sent["view"]["reveal"] and sent["room"]["round"]["seed"]

        table = await reopen(table)  # a restart: the room read back from the store
        whole = orjson.loads(frames.full_frame(table.room, 0))
        assert whole["view"]["phase"] == "playing" and whole["view"]["round"] == 3
        assert _as_ended(whole["round_before"]) == _as_ended(sent)

    run_table(tmp_path, body, bots=SEATS, options={"camat_target": 0})


def test_the_round_before_read_back_has_the_hints_used_in_it(tmp_path: Path) -> None:
    """Ana asks for a hint before each of her moves in round 2; mid-round 3 the room is read back
    (a restart): the round before it, as whole states send it, is the one the room sent before,
    its hints (who used one, at which move) and version too. Before, the room read back sent it
    with no hints (the store read back the round in play's only) and the room's version now."""

    async def body(table: Table) -> None:
        _, ana = await table.sit(0, "Ana")
        await table.start()
        room = table.room
        await _play(table, [ana], lambda: room.state is not None and room.state.round_index == 2)
        asked = 0
        while room.state is not None and room.state.round_index == 2:
            move = my_move(ana.last_state)
            if move is None:
                await table.clock.advance(room, table.hub.config.bot_delay_s)
                continue
            await hints.ask(room, ana)
            asked += 1
            await table.act(ana, move)
        assert asked
        await _play(table, [ana], lambda: len(room.state.log) > 3)  # type: ignore[union-attr]
        sent = orjson.loads(frames.full_frame(room, None))["round_before"]
        assert sent["view"]["round"] == 2 and len(sent["room"]["round"]["hints"]) == asked
        assert room.version > sent["room"]["version"]

        table = await reopen(table)  # a restart: the room read back from the store
        whole = orjson.loads(frames.full_frame(table.room, 0))
        assert whole["view"]["round"] == 3
        assert _as_ended(whole["round_before"]) == _as_ended(sent)

    run_table(tmp_path, body, bots=SEATS, options={"camat_target": 0}, hints=True)


def test_a_rounds_end_is_serialised_only_when_a_whole_state_asks_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rounds that end while nobody opens or syncs a page are never serialised for
    ``round_before`` (issue 15: it cost about 1.5% of a busy server's CPU at every round's end);
    the first whole state that needs it serialises it once, as the round ended (its version, its
    outcome and reveal, its seed), and the next whole states send the same bytes."""
    made: list[int] = []
    real = frames.round_end_json

    def counted(room: Any, ended: Any = None) -> tuple[int, bytes]:
        made.append(ended.round if ended is not None else -1)
        return real(room, ended)

    monkeypatch.setattr(frames, "round_end_json", counted)

    async def body(table: Table) -> None:
        _, ana = await table.sit(0, "Ana")
        await table.start()
        room = table.room
        await _play(table, [ana], lambda: room.state is not None and room.state.round_index == 2)
        ended_at = room.version  # the deal of round 2 follows round 1's last move
        await _play(table, [ana], lambda: room.state is not None and room.state.round_index == 3)
        await _play(table, [ana], lambda: len(room.state.log) > 3)  # type: ignore[union-attr]
        assert made == []  # two rounds ended, neither serialised
        first = frames.full_frame(room, None)
        second = frames.full_frame(room, 1)
        assert made == [2]  # round 2 (the one before round 3), once
        sent = orjson.loads(first)["round_before"]
        assert orjson.loads(second)["round_before"] == sent
        assert sent["view"]["round"] == 2 and sent["view"]["outcome"] and sent["view"]["reveal"]
        assert sent["room"]["round"]["seed"] and sent["room"]["turn"] is None
        assert ended_at < sent["room"]["version"] < room.version

    run_table(tmp_path, body, bots=SEATS, options={"camat_target": 0})
