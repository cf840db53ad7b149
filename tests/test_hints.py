"""Hints in a room (issue 16), in-process: only when the host allows them, only on one's own turn,
computed from the asker's view; the action goes to the asker's sockets only, everyone is told that
a hint was used, each hint is stored once, the version never moves, and a restart keeps the round's
hints with the log index of the hinted move (where the feed marks it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.rooms import frames, hints
from app.rooms.errors import RoomError
from engine.actions import parse_action
from tests.roomkit import FakeOutbox, Table, reopen, run_table


async def _my_turn(table: Table, conn: FakeOutbox) -> dict[str, object]:
    """Let the bots play (fake clock) until it is ``conn``'s seat's turn with a choice; the view."""
    for _ in range(40):
        view = conn.last_state["view"]
        if view["phase"] == "playing" and view["to_act"] == conn.seat and view["legal"]:
            return dict(view)
        await table.clock.advance(table.room, 1.0)
    raise AssertionError("never our turn")


async def _refused(table: Table, conn: FakeOutbox, code: str) -> None:
    with pytest.raises(RoomError) as refused:
        await hints.ask(table.room, conn)
    assert refused.value.code == code


def test_no_hint_unless_the_host_allows_them(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        _, ana = await table.sit(0, "Ana")
        await table.start()
        await _my_turn(table, ana)
        await _refused(table, ana, "hints_off")
        assert frames.room_public(table.room)["hints"] is False

    run_table(tmp_path, body, variant="kozel", bots=[None, "medium"])


def test_a_hint_is_the_askers_alone_and_every_one_is_told_and_stored_once(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        _, ana = await table.sit(0, "Ana")
        watcher = await table.watch()
        await table.start()
        assert frames.room_public(table.room)["hints"] is True
        await _refused(table, watcher, "not_seated")
        view = await _my_turn(table, ana)
        version = table.room.version
        assert table.room.state is not None
        at = len(table.room.state.log)  # where the hinted move's events will begin
        await hints.ask(table.room, ana)
        (hint,) = ana.of_type("hint")
        assert hint["version"] == version
        assert hint["action"] in view["legal"]  # one of the asker's legal actions
        assert watcher.of_type("hint") == []  # the action is the asker's alone
        (told,) = watcher.of_type("hint_used")
        assert table.room.state is not None
        assert told == {"type": "hint_used", "seat": 0, "round": 0, "seq": len(table.room.state.actions)}
        assert json.dumps(told).count("play") == 0  # what was hinted is not told to the table
        await hints.ask(table.room, ana)  # again on the same turn: the same hint, counted once
        assert [h["action"] for h in ana.of_type("hint")] == [hint["action"]] * 2
        stored = await table.store.load_hints(table.room.match_id)
        assert [(h.round_index, h.seat, h.action) for h in stored] == [(0, 0, hint["action"])]
        assert table.room.version == version  # a hint is not game state
        given = [{"seat": 0, "seq": stored[0].seq, "at": at}]
        assert frames.room_public(table.room)["round"]["hints"] == given

        await table.act(ana, {k: v for k, v in hint["action"].items() if k != "seat"})
        assert table.room.version > version
        if table.room.state is not None and table.room.state.round_index == 1:  # still round 0's log
            assert table.room.state.log[at].seat == 0  # the hinted move's first event (the feed marks it)
        await _refused(table, watcher, "not_seated")
        if table.room.state is not None and table.room.state.to_act != 0:
            await _refused(table, ana, "not_your_turn")

        again = await reopen(table)  # a restart keeps the round's hints
        assert frames.room_public(again.room)["hints"] is True
        assert frames.room_public(again.room)["round"]["hints"] == given

    run_table(tmp_path, body, variant="kozel", bots=[None, "medium"], hints=True)


def test_a_hint_for_a_turn_that_moved_on_is_not_given(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        _, ana = await table.sit(0, "Ana")
        await table.start()
        view = await _my_turn(table, ana)
        version = table.room.version
        legal = view["legal"]
        assert isinstance(legal, list)
        await table.act(ana, {k: v for k, v in legal[0].items() if k != "seat"})
        with pytest.raises(RoomError) as stale:

            async def give(room: object) -> object:
                return await hints._give(table.room, version, 0, parse_action(legal[0]))

            await table.room.call(give)
        assert stale.value.code == "hint_stale"
        assert await table.store.load_hints(table.room.match_id) == []

    run_table(tmp_path, body, variant="kozel", bots=[None, "medium"], hints=True)
