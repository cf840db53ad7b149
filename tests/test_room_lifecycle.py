"""Only rooms in use live in memory (issue 13, "Rooms in memory"; issue 12, abandoned rooms).

In-process (tests/roomkit.py: a real SQLite store, a fake clock): an idle room leaves memory and
comes back from the store when opened, exactly where it was; a room nobody used for long is
closed as abandoned with its history kept; a room resumed from its last round's start equals the
room replayed from the first round; a match without an end keeps one round in memory.
"""

from __future__ import annotations

import asyncio
import gc
import sqlite3
import weakref
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from app.metrics import Metrics
from app.rooms.errors import RoomError
from app.rooms.hub import Hub
from app.rooms.local import LocalBots
from app.rooms.recovery import rebuild, resume
from app.rooms.room import Room
from app.store import Store, sqlite_url
from engine.core import Phase
from engine.variants import make_rules
from engine.views import player_view
from tests.roomkit import (
    CONFIG,
    FakeClock,
    FakeOutbox,
    Table,
    left_unplayed,
    my_move,
    run_table,
    sweep_until,
    swept_hub,
)

LIFECYCLE = replace(CONFIG, unload_after_s=300.0, abandon_after_s=3600.0, unattended_rounds=0)
"""Bots play on while watched for as many rounds as a test needs (no "keep watching?")."""


def _snapshot(room: Room) -> dict[str, Any]:
    """Everything a room shows or decides with: each seat's view and the spectators', its score,
    standings, version, seed, last reveal and the round's marks."""
    state = room.state
    assert state is not None
    seats = range(room.rules.seats)
    return {
        "views": [player_view(state, seat).to_json() for seat in (None, *seats)],
        "score": state.score().fields(),
        "standings": state.standings(),
        "phase": state.phase,
        "round_index": state.round_index,
        "version": room.version,
        "seed": room.seed,
        "commitment": room.commitment,
        "last_round": room.last_round,
    }


def _marks_agree(resumed: Room, live: dict[int, int]) -> bool:
    """The resumed room knows the round's versions by its stored actions: each one as the live
    room had it (the live room also marks the deal and seat changes: a ``since`` at one of those
    gets a whole state after a reload instead of an update)."""
    return bool(resumed.marks) and all(live.get(v) == n for v, n in resumed.marks.items())


def test_an_idle_room_leaves_memory_and_comes_back_where_it_was(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        hub, code = table.hub, table.room.code
        token, ana = await table.sit(0, "Ana")
        await table.start()
        for _ in range(50):
            move = my_move(ana.last_state)
            if move is not None:
                await table.act(ana, move)
                break
            await table.clock.advance(table.room, hub.config.bot_delay_s)
        await table.clock.advance(table.room, 2.0)
        assert await hub.sweep() == (0, 0)  # Ana is connected: in use
        table.room.disconnect(ana)
        await table.room.settled()
        # Ana's grace runs out, a bot covers her seat and finishes the round; nobody watches, so
        # no next round is dealt and the room has nothing more to do
        await table.clock.advance(table.room, 200.0)
        before, marks = _snapshot(table.room), dict(table.room.marks)
        idle = table.room.idle_s()
        assert 0 < idle < 200
        await table.clock.advance(table.room, 299.0 - idle)
        assert await hub.sweep() == (0, 0)  # not idle long enough
        await table.clock.advance(table.room, 2.0)
        assert await hub.sweep() == (1, 0)
        assert hub.get(code) is None and code not in hub.rooms
        assert table.room.task is not None and table.room.task.done()
        assert (await table.stored()).status == "playing"  # nothing stored changed
        back = await hub.open(code)  # someone opens the link
        assert back is not None and back is not table.room and hub.get(code) is back
        assert _snapshot(back) == before and _marks_agree(back, marks)
        again = FakeOutbox()
        await back.connect(again, token)
        assert again.last_state["version"] == before["version"]
        assert again.last_state["view"] == before["views"][1]  # seat 0's view, as it was

    run_table(tmp_path, body, bots=[None, "greedy", "greedy", "greedy", "greedy"], config=LIFECYCLE)


def test_never_joined_and_finished_rooms_leave_memory_and_the_cap_counts_memory(tmp_path: Path) -> None:
    async def main() -> None:
        async with swept_hub(tmp_path, replace(LIFECYCLE, max_rooms=3)) as (hub, _, clock):
            made = [await hub.create_room("kozel", {}, 2, 0.0, [None, None], owner="a") for _ in range(3)]
            assert hub.open_rooms_of("a") == 3 and len(hub.rooms) == 3
            clock.now += 301.0
            assert await hub.sweep() == (3, 0)
            assert hub.rooms == {} and hub.open_rooms_of("a") == 0
            # never joined: still playable, so its link brings it back as it was
            room = await hub.open(made[0][0].code)
            assert room is not None and room.status == "waiting" and room.version == 0
            # a finished match leaves memory too, and shows how it ended when opened
            finished = await _finished_match(hub, clock)
            clock.now += 301.0
            await hub.sweep()
            assert finished.code not in hub.rooms
            shown = await hub.open(finished.code)
            assert shown is not None and shown.status == "finished"
            assert shown.state is not None and shown.state.phase is Phase.OVER
            assert _snapshot(shown) == _snapshot(finished)

    asyncio.run(main())


def test_a_room_the_store_cannot_load_now_is_unavailable_not_an_error_and_loads_later(tmp_path: Path) -> None:
    """The store fails while a room is loaded from it (the database unreachable, or the claim of a
    room waiting on a paused owner's lock: docs/cluster.md): the caller gets `RoomError`
    ``room_unavailable`` (503, try again; sockets close with 1013), and a later open loads it."""

    async def main() -> None:
        clock = FakeClock()
        store = Store(sqlite_url(tmp_path))
        await store.start()
        hub = Hub(LIFECYCLE, store, Metrics(), clock=clock, bots=LocalBots())
        try:
            room, _ = await hub.create_room("kozel", {}, 2, 0.0, [None, None])
            clock.now += 301.0
            assert await hub.sweep() == (1, 0) and hub.rooms == {}
            await store.close()
            with pytest.raises(RoomError) as unavailable:
                await hub.open(room.code)
            assert (unavailable.value.code, unavailable.value.status) == ("room_unavailable", 503)
            assert unavailable.value.headers == {"Retry-After": "1"}
            await store.start()  # the database is back
            back = await hub.open(room.code)
            assert back is not None and back.status == "waiting"
            # a read that fails in the database itself (its table gone for a moment)
            clock.now += 301.0
            assert await hub.sweep() == (1, 0)
            database = sqlite3.connect(tmp_path / "domeng.sqlite3")
            database.execute("ALTER TABLE matches RENAME TO matches_away")
            database.commit()
            with pytest.raises(RoomError) as failed:
                await hub.open(room.code)
            assert failed.value.code == "room_unavailable"
            database.execute("ALTER TABLE matches_away RENAME TO matches")
            database.commit()
            database.close()
            assert (await hub.open(room.code)) is not None
        finally:
            await hub.stop()
            await store.close()

    asyncio.run(main())


async def _finished_match(hub: Hub, clock: FakeClock) -> Room:
    room, host_token = await hub.create_room("kozel", {}, 2, 0.0, ["greedy", "greedy"])
    watcher = FakeOutbox()
    await room.connect(watcher, None)
    table = Table(hub, room, host_token, clock)
    await table.start()
    for _ in range(20_000):
        if room.status == "finished":
            break
        await clock.advance(room, hub.config.bot_delay_s * 4)
    assert room.status == "finished"
    room.disconnect(watcher)
    await room.settled()
    return room


def test_a_room_nobody_used_for_long_is_closed_as_abandoned_with_its_history(tmp_path: Path) -> None:
    config = replace(LIFECYCLE, unload_after_s=7200.0, abandon_after_s=3600.0)

    async def body(table: Table) -> None:
        hub, code = table.hub, table.room.code
        _, ana = await table.sit(0, "Ana")
        await table.start()
        table.room.disconnect(ana)
        await table.room.settled()
        await table.clock.advance(table.room, 60.0)  # the bots cover Ana and play on, then wait
        played = (await table.stored()).rounds
        await table.clock.advance(table.room, 3601.0)
        assert await hub.sweep() == (0, 1)
        assert code not in hub.rooms
        row = await table.stored()
        assert (row.status, row.closed_reason) == ("abandoned", "idle")
        assert row.finished_at is not None and row.rounds[0].actions == played[0].actions  # kept
        assert await hub.open(code) is None  # closed: its link no longer opens it

    run_table(tmp_path, body, bots=[None, "greedy", "greedy", "greedy", "greedy"], config=config)


def test_rooms_out_of_memory_are_abandoned_by_their_last_stored_change(tmp_path: Path) -> None:
    async def main() -> None:
        async with swept_hub(tmp_path, replace(LIFECYCLE, abandon_after_s=0.2)) as (hub, store, clock):
            room = await left_unplayed(hub, clock)  # out of memory (as after a restart, too)

            async def abandoned(swept: tuple[int, int]) -> bool:  # the store's own clock must pass the cutoff
                return swept[1] > 0

            assert (await sweep_until(hub, clock, abandoned, scans=200))[1] == 1
            row = await store.load_match(room.code)
            assert row is not None and (row.status, row.closed_reason) == ("abandoned", "idle")

    asyncio.run(main())


def test_resuming_from_the_last_round_equals_replaying_the_whole_match(tmp_path: Path) -> None:
    """A match without an end (camat_target 0) played by bots for many rounds: at every round's
    end and in the middle of rounds, the room resumed from the last round's start is the room
    replayed from the first deal, and the room in memory holds one finished round at most."""

    async def main() -> None:
        async with swept_hub(tmp_path, LIFECYCLE) as (hub, store, clock):
            room, host_token = await hub.create_room("domeng", {"camat_target": 0}, 5, 0.0, ["greedy"] * 5)
            watcher = FakeOutbox()
            await room.connect(watcher, None)
            await Table(hub, room, host_token, clock).start()
            rules = make_rules("domeng", {"camat_target": 0}, 5)
            checked = 0
            while room.state is not None and room.state.round_index < 12:
                await clock.advance(room, hub.config.bot_delay_s * 3)
                assert room.state is not None and len(room.state.history) <= 1
                full = await store.load_match(room.code)
                light = await store.load_room(room.code)
                assert full is not None and light is not None
                assert [r.index for r in light.match.rounds] == [r.index for r in full.rounds][-2:]
                replayed, resumed = rebuild(full, rules), resume(light, rules)
                assert resumed.state is not None and replayed.state is not None
                for key in ("seed", "commitment", "last_round", "marks"):
                    assert getattr(resumed, key) == getattr(replayed, key), key
                a, b = resumed.state, replayed.state
                assert (a.round_index, a.phase, a.to_act, a.leader) == (
                    b.round_index,
                    b.phase,
                    b.to_act,
                    b.leader,
                )
                assert [player_view(a, s).to_json() for s in range(5)] == [
                    player_view(b, s).to_json() for s in range(5)
                ]
                assert (a.score().fields(), a.standings()) == (b.score().fields(), b.standings())
                checked += 1
            assert checked >= 12

    asyncio.run(main())


def test_unloaded_rooms_leave_nothing_behind(tmp_path: Path) -> None:
    """What a hub keeps does not grow with the matches it hosted (issue 13, "10,000 matches"):
    once finished rooms are unloaded, no `Room` is alive, the hub's tables are empty and the
    event loop runs no more tasks than before the first."""

    async def main() -> None:
        async with swept_hub(tmp_path, LIFECYCLE) as (hub, _, clock):
            tasks = len(asyncio.all_tasks())
            rooms = [weakref.ref(await _finished_match(hub, clock)) for _ in range(2)]
            clock.now += 301.0
            assert await hub.sweep() == (2, 0)
            gc.collect()
            assert [room() for room in rooms] == [None, None]
            assert (hub.rooms, hub.owners) == ({}, {})
            # a task the rooms cancelled (a bot's decision) ends at a later turn of the loop,
            # not at once: let it (bounded in turns, not in time), then nothing may be left
            for _ in range(1000):
                if len(asyncio.all_tasks()) <= tasks:
                    break
                await asyncio.sleep(0)
            left = [repr(task.get_coro()) for task in asyncio.all_tasks()]
            assert len(left) == tasks, left

    asyncio.run(main())
