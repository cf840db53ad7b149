"""Rooms in-process (tests/roomkit.py): a fake outbox per connection, a real temporary SQLite
store and a fake clock. Timers, grace, covering, stale versions, forced passes, swaps, claims,
``hello.since`` and recovery, each checked against what the store holds: nothing is sent before
it is stored (docs/architecture.md)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from app.metrics import Metrics
from app.rooms import host
from app.rooms.again import play_again
from app.rooms.errors import RoomError
from app.rooms.frames import room_public
from app.rooms.hub import Hub
from app.rooms.local import LocalBots
from app.rooms.making import share_of
from app.store import Store, StoreError, sqlite_url
from engine.actions import Action, parse_action
from engine.events import Drew
from engine.views import PlayerView
from tests.roomkit import (
    CONFIG,
    FakeClock,
    FakeOutbox,
    RawOutbox,
    SlowBots,
    Table,
    my_move,
    reopen,
    run_table,
)

BOTS4 = ["greedy", "greedy", "greedy", "greedy"]


async def _stored_version(table: Table) -> int:
    return (await table.stored()).version


async def _play_until(table: Table, done: object, limit: int = 400) -> None:
    """Advance the fake clock a bot's delay at a time until ``done()`` holds."""
    for _ in range(limit):
        if done():  # type: ignore[operator]
            return
        await table.clock.advance(table.room, table.hub.config.bot_delay_s)
    raise AssertionError("never happened")


async def _ana_to_move(table: Table, ana: FakeOutbox) -> dict[str, Any]:
    """Play on until it is Ana's turn with a move to make; her first legal move."""
    await _play_until(table, lambda: my_move(ana.last_state) is not None)
    move = my_move(ana.last_state)
    assert move is not None
    return move


def test_a_claim_is_stored_before_anyone_sees_it(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        watcher = await table.watch()
        before = table.room.version
        _, ana = await table.sit(0, "Ana")
        row = await table.stored()
        seen = watcher.last_state
        assert seen["version"] == before + 1 == row.version == table.room.version
        assert (
            seen["room"]["seats"][0]
            == {
                "seat": 0,
                "kind": "human",
                "name": "Ana",
                "bot_level": None,
                "connected": True,
                "covered": False,
                "stand_in": False,
                "ready": True,
            }
            or seen["room"]["seats"][0]["name"] == "Ana"
        )
        assert (row.seats[0].kind, row.seats[0].name) == ("human", "Ana")
        assert ana.of_type("welcome")[0]["seat"] == 0 and ana.seat == 0
        with pytest.raises(RoomError) as taken:
            await table.room.call(lambda r: host.claim(r, 0, "Budi"))
        assert taken.value.code == "seat_taken"
        with pytest.raises(RoomError) as same:
            await table.room.call(lambda r: host.claim(r, 1, "ana"))
        assert same.value.code == "name_taken"
        assert await _stored_version(table) == before + 1  # refusals store nothing

    run_table(tmp_path, body, bots=[None, None, *BOTS4[:3]])


def test_a_name_ending_with_the_own_name_mark_is_refused_in_every_language(tmp_path: Path) -> None:
    """Beside a seated "Ana", "Ana (you)" would read as Ana's own plate on every screen (and the
    host's "Mute Ana (you)" would name either): the client's "(you)" mark, in any of the six
    languages or a look-alike, may not end a name; a name merely holding the word may."""

    async def body(table: Table) -> None:
        await table.sit(0, "Ana")
        before = table.room.version
        for name in ("Ana (you)", "Ana(YOU)", "Ana （you）", "Ana (вы)", "Ана (ви)", "Ana (kamu)"):
            with pytest.raises(RoomError) as marked:
                await table.room.call(lambda r, name=name: host.claim(r, 1, name))
            assert marked.value.code == "name_marked", name
            assert marked.value.status == 422
        with pytest.raises(RoomError) as alone:
            await table.room.call(lambda r: host.claim(r, 1, "Budi (sina)"))  # Estonian: "(sina)"
        assert alone.value.code == "name_marked"
        assert await _stored_version(table) == before  # refusals store nothing
        await table.sit(1, "You and me")
        await table.sit(2, "Youri")

    run_table(tmp_path, body, bots=[None, None, None, *BOTS4[:2]])


def test_a_name_ending_with_the_chats_spectator_mark_is_refused_in_every_language(tmp_path: Path) -> None:
    """A seated "Budi (spectator)" would read as a spectator's line in the chat (which shows a named
    spectator as "Budi (spectator)", one without a name as "Spectator 3fa9c1d2"): the chat's
    spectator mark, in any of the six languages or a look-alike, may not end a name, nor may an
    unnamed spectator's label be one; a name merely holding the word may."""

    async def body(table: Table) -> None:
        await table.sit(0, "Ana")
        before = table.room.version
        marked = (
            "Budi (spectator)",
            "Budi（SPECTATOR）",
            "Budi (spectator 3fa9c1d2)",
            "Spectator 3fa9c1d2",
            "Sp\u0435ctator 3FA9C1D2",
            "Budi (pealtvaataja)",
            "Budi (néző)",
            "Budi (penonton)",
            "Budi (зритель)",
            "Budi (Глядач)",
            "Budi (sp\u0435ctator)",  # a Cyrillic е
        )
        for name in marked:
            with pytest.raises(RoomError) as refused:
                await table.room.call(lambda r, name=name: host.claim(r, 1, name))
            assert (refused.value.code, refused.value.status) == ("name_marked", 422), name
        assert await _stored_version(table) == before  # refusals store nothing
        await table.sit(1, "Spectator")
        await table.sit(2, "Penonton (Budi)")

    run_table(tmp_path, body, bots=[None, None, None, *BOTS4[:2]])


def test_the_start_fills_seats_stores_them_with_the_deal_in_one_version(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        watcher = await table.watch()
        await table.sit(0, "Ana")
        version = table.room.version
        await table.start()
        row = await table.stored()
        assert row.status == "playing" and row.version == version + 1 == table.room.version
        assert [s.kind for s in row.seats] == ["human", "bot", "bot", "bot", "bot"]
        assert [r.index for r in row.rounds] == [0]
        last = watcher.last_state
        assert (
            last["version"] == row.version and last["room"]["round"]["commitment"] == row.rounds[0].commitment
        )
        with pytest.raises(RoomError) as again:
            await table.start()
        assert again.value.code == "already_started"

    run_table(tmp_path, body, bots=[None, None, None, "greedy", None])


def test_only_the_host_starts(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        async def run(room: object) -> None:
            host.check_host(table.room, "not the token")

        with pytest.raises(RoomError) as refused:
            await table.room.call(run)
        assert refused.value.code == "not_host" and refused.value.status == 403

    run_table(tmp_path, body, bots=[None, *BOTS4])


def test_a_stale_version_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        _, ana = await table.sit(0, "Ana")
        await table.start()
        move = await _ana_to_move(table, ana)
        version = table.room.version
        await table.act(ana, move, version=version - 1)
        error = ana.of_type("error")[-1]
        assert error["code"] == "stale_version" and error["version"] == version
        assert table.room.version == version == await _stored_version(table)
        await table.act(ana, move)
        assert table.room.version == version + 1 == await _stored_version(table)
        assert (await table.stored()).rounds[-1].actions[-1].actor == "human"

    run_table(tmp_path, body, bots=[None, *BOTS4])


def test_a_spectator_cannot_act(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        await table.start()
        watcher = await table.watch()
        watcher.seat = 0  # the edge parsed it for some seat; the room knows it is a spectator
        conn = FakeOutbox()
        await table.room.connect(conn, None)
        table.room.act(conn, table.room.version, _any_action())
        await table.room.settled()
        assert conn.of_type("error")[-1]["code"] == "not_seated"

    run_table(tmp_path, body, bots=[None, *BOTS4])


def _any_action() -> Action:
    return parse_action({"seat": 0, "pass": True})


def test_grace_then_a_bot_covers_until_the_player_reconnects(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        token, ana = await table.sit(0, "Ana")
        watcher = await table.watch()
        await table.start()
        table.room.disconnect(ana)
        await table.room.settled()
        assert not table.room.seats[0].covered
        await table.clock.advance(table.room, 19.9)
        assert not table.room.seats[0].covered
        await table.clock.advance(table.room, 0.2)
        assert table.room.seats[0].covered
        assert watcher.of_type("presence")[-1]["seats"][0]["covered"] is True
        # the bot plays Ana's turns now: the match goes on without her
        before = table.room.version
        await table.clock.advance(table.room, 10 * table.hub.config.bot_delay_s)
        assert table.room.version > before
        back = await table.watch(token)
        assert not table.room.seats[0].covered and back.seat == 0
        assert back.of_type("state")[-1]["view"]["seat"] == 0

    run_table(tmp_path, body, bots=[None, *BOTS4])


def test_the_grace_counts_from_when_the_player_was_last_heard(tmp_path: Path) -> None:
    """A socket noticed dead only at the ping timeout, 15 s after its client's last bytes, leaves
    the player the rest of the grace (5 s of 20); one silent longer than the grace is covered at
    once (app.edge.heard, tests/test_server_silence.py end to end)."""

    async def body(table: Table) -> None:
        _, ana = await table.sit(0, "Ana")
        _, budi = await table.sit(1, "Budi")
        await table.start()
        table.room.disconnect(ana, silent_s=15.0)
        table.room.disconnect(budi, silent_s=45.0)
        await table.clock.advance(table.room, 0.0)  # Budi's grace has no time left
        assert table.room.seats[1].covered
        assert not table.room.seats[0].covered
        await table.clock.advance(table.room, 4.9)
        assert not table.room.seats[0].covered
        await table.clock.advance(table.room, 0.2)
        assert table.room.seats[0].covered

    run_table(tmp_path, body, bots=[None, None, *BOTS4[:3]])


def test_a_player_gone_before_the_start_is_covered_after_the_grace(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        _, ana = await table.sit(0, "Ana")
        table.room.disconnect(ana)
        await table.watch()
        await table.start()
        await table.clock.advance(table.room, 20.0)
        assert table.room.seats[0].covered

    run_table(tmp_path, body, bots=[None, *BOTS4])


def test_forced_passes_are_the_servers_and_bots_play_on(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        await table.watch()  # someone watches: the next deal comes
        await table.start()

        async def actors() -> set[str]:
            row = await table.stored()
            return {a.actor for r in row.rounds for a in r.actions}

        for _ in range(40):
            await table.clock.advance(table.room, 10.0)
            if "server" in await actors():
                break
        assert {"server", "bot"} <= await actors()
        row = await table.stored()
        assert row.version == table.room.version
        forced = [a for r in row.rounds for a in r.actions if a.actor == "server"]
        assert all(a.action.get("pass") for a in forced)

    run_table(tmp_path, body, bots=["greedy", *BOTS4])


def test_a_table_nobody_watches_deals_no_next_round(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        watcher = await table.watch()
        await table.start()
        table.room.disconnect(watcher)
        await table.room.settled()
        await _play_until(
            table, lambda: table.room.state is not None and table.room.state.phase.value != "playing"
        )
        await table.clock.advance(table.room, 600.0)
        assert len((await table.stored()).rounds) == 1
        await table.watch()
        await table.clock.advance(table.room, table.hub.config.round_pause_s)
        assert len((await table.stored()).rounds) == 2

    run_table(tmp_path, body, bots=[*BOTS4, "greedy"])


def test_a_stale_bot_decision_is_dropped(tmp_path: Path) -> None:
    bots = SlowBots()

    async def body(table: Table) -> None:
        _, ana = await table.sit(0, "Ana")
        await table.start()
        while my_move(ana.last_state) is None:
            bots.release()
            await table.clock.advance(table.room, table.hub.config.bot_delay_s)
        bots.gate.clear()
        version = table.room.version
        asked = bots.asked
        await table.clock.advance(table.room, 30.0, bots=False)  # the timer: a bot is asked
        assert bots.asked == asked + 1 and table.room.version == version
        move = my_move(ana.last_state)
        assert move is not None
        table.room.act(ana, version, _parsed(0, move))  # Ana is quicker than the bot
        await table.room.settled(bots=False)
        assert table.room.version == version + 1
        bots.release()
        await table.room.settled()
        row = await table.stored()
        at_version = [a for r in row.rounds for a in r.actions if a.version == version + 1]
        assert [a.actor for a in at_version] == ["human"]
        assert all(a.seat != 0 or a.actor == "human" for a in row.rounds[-1].actions[-1:])

    run_table(tmp_path, body, bots=[None, *BOTS4], turn_timer_s=30.0, bot_port=bots)


def _parsed(seat: int, move: dict[str, object]) -> Action:
    return parse_action({**move, "seat": seat})


def test_the_host_swaps_a_player_for_a_bot_stored_first(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        token, ana = await table.sit(0, "Ana")
        watcher = await table.watch()
        await table.start()
        version = table.room.version

        async def swap(room: object) -> None:
            host.check_host(table.room, table.host_token)
            await host.set_bot(table.room, 0, "random")

        await table.room.call(swap)
        row = await table.stored()
        assert (row.seats[0].kind, row.seats[0].bot_level, row.seats[0].token_hash) == ("bot", "random", None)
        assert row.version == table.room.version >= version + 1
        assert ana.closed and ana.closed_for == "seat_to_bot"
        assert any(f["room"]["seats"][0]["kind"] == "bot" for f in watcher.of_type("state"))
        with pytest.raises(RoomError) as gone:
            await table.watch(token)
        assert gone.value.code == "seat_to_bot"  # her token is known as the seat's before (4007)

    run_table(tmp_path, body, bots=[None, *BOTS4])


def test_a_new_connection_replaces_the_old_one_of_its_seat(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        token, first = await table.sit(0, "Ana")
        second = await table.watch(token)
        assert first.closed_for == "replaced" and not second.closed
        assert table.room.seats[0].connections == 1

    run_table(tmp_path, body, bots=[None, *BOTS4])


def test_a_resumed_connection_takes_the_seat_once_the_later_one_ended(tmp_path: Path) -> None:
    """``hello.resume`` is refused only while a later connection holds the seat: the window the
    player opened meanwhile has closed, so the reconnect takes the seat back."""

    async def body(table: Table) -> None:
        token, first = await table.sit(0, "Ana")
        resumed = first.of_type("welcome")[0]["connection"]
        table.room.disconnect(first)  # its network drops
        second = await table.watch(token)  # another window...
        table.room.disconnect(second)  # ...closed again
        back = FakeOutbox()
        await table.room.connect(back, token, resume=resumed)
        assert back.of_type("welcome")[0]["seat"] == 0 and table.room.seats[0].connections == 1

    run_table(tmp_path, body, bots=[None, *BOTS4])


def test_a_resumed_connection_takes_the_seat_only_if_it_was_the_latest(tmp_path: Path) -> None:
    """``hello.resume`` (an automatic reconnect): the seat is taken only when no connection said
    hello for it after the one resumed; refused, nothing changes (the later one keeps the seat)."""

    async def body(table: Table) -> None:
        token, first = await table.sit(0, "Ana")
        resumed = first.of_type("welcome")[0]["connection"]
        table.room.disconnect(first)  # its network drops
        second = await table.watch(token)  # another window: a fresh hello takes the seat
        latest = second.of_type("welcome")[0]["connection"]
        with pytest.raises(RoomError) as refused:
            await table.room.connect(FakeOutbox(), token, resume=resumed)
        assert refused.value.code == "replaced"
        assert not second.closed and table.room.seats[0].connections == 1
        back = FakeOutbox()
        await table.room.connect(back, token, resume=latest)  # the latest one's reconnect
        assert second.closed_for == "replaced" and back.of_type("welcome")[0]["seat"] == 0
        assert table.room.seats[0].connections == 1
        with pytest.raises(RoomError):  # the connection it resumed is not the latest any more
            await table.room.connect(FakeOutbox(), token, resume=latest)
        spectator = FakeOutbox()
        await table.room.connect(spectator, None, resume=latest)  # no seat: nothing to resume
        assert "connection" not in spectator.of_type("welcome")[0]

    run_table(tmp_path, body, bots=[None, *BOTS4])


def test_hello_since_sends_only_what_was_missed(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        token, ana = await table.sit(0, "Ana")
        await table.watch()
        await table.start()
        seen = ana.last_state
        table.room.disconnect(ana)
        await table.room.settled()
        await table.clock.advance(table.room, 21.0)  # the grace, then a bot plays for Ana too
        assert table.room.state is not None and table.room.version > seen["version"]
        assert table.room.state.round_index == 1
        back = await table.watch(token, since=seen["version"])
        update = back.last_state
        assert "log" not in update["view"] and update["from"] == seen["from"] + len(seen["events"])
        assert update["version"] == table.room.version
        whole = await table.watch(token, since=table.room.version + 5)  # a version never reached
        assert "log" in whole.last_state["view"]
        old = await table.watch(token, since=0)  # before this round: the whole state
        assert "log" in old.last_state["view"]
        assert len(update["events"]) + update["from"] == len(old.last_state["view"]["log"])

    run_table(tmp_path, body, bots=[None, *BOTS4])


def test_recovery_rebuilds_the_room_at_its_last_stored_action(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        token, ana = await table.sit(0, "Ana")
        await table.watch()
        await table.start()
        await _play_until(table, lambda: my_move(ana.last_state) is not None)
        state, version = table.room.state, table.room.version
        assert state is not None
        again = await reopen(table)
        try:
            room = again.room
            assert room.version == version and room.status == "playing"
            assert room.state is not None and room.state.log == state.log
            assert room.state.hand(0) == state.hand(0) and room.state.to_act == 0
            assert room.seed == table.room.seed and room.commitment == table.room.commitment
            back = await again.watch(token, since=version)
            assert back.last_state["version"] == version and back.last_state["events"] == []
            move = my_move(back.last_state)
            assert move is not None
            await again.act(back, move)
            assert (await again.stored()).version == version + 1
        finally:
            await again.hub.stop()

    run_table(tmp_path, body, bots=[None, *BOTS4])


class RefusingStore:
    """The room's `MatchStore`: the real store, except that while ``refusing`` every write fails
    as a database that is down would (a fake at a port the room owns)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.refusing = False
        self.refused = 0

    def _check(self) -> None:
        if self.refusing:
            self.refused += 1
            raise StoreError("database failure: disk I/O error")

    async def append_action(self, *args: Any, **kwargs: Any) -> None:
        self._check()
        await self.store.append_action(*args, **kwargs)

    async def save_room(self, *args: Any, **kwargs: Any) -> None:
        self._check()
        await self.store.save_room(*args, **kwargs)

    async def end_round(self, *args: Any, **kwargs: Any) -> None:
        self._check()
        await self.store.end_round(*args, **kwargs)

    async def stamp_turn(self, *args: Any, **kwargs: Any) -> None:
        self._check()
        await self.store.stamp_turn(*args, **kwargs)

    async def cover_seats(self, *args: Any, **kwargs: Any) -> None:
        self._check()
        await self.store.cover_seats(*args, **kwargs)

    async def add_chat(self, *args: Any, **kwargs: Any) -> Any:
        self._check()
        return await self.store.add_chat(*args, **kwargs)


def test_a_failed_write_changes_nothing_and_the_move_can_be_made_again(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        _, ana = await table.sit(0, "Ana")
        await table.start()
        move = await _ana_to_move(table, ana)
        version, frames = table.room.version, len(ana.frames)
        refusing = table.room.store = RefusingStore(table.store)
        refusing.refusing = True
        await table.act(ana, move)
        assert table.room.version == version == await _stored_version(table)
        assert [f["type"] for f in ana.frames[frames:]] == ["error"]
        assert ana.frames[-1]["code"] == "not_saved"
        refusing.refusing = False
        await table.act(ana, move)
        assert table.room.version == version + 1 == await _stored_version(table)

    run_table(tmp_path, body, bots=[None, *BOTS4])


def test_a_bot_turn_the_database_refused_is_tried_again(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        watcher = await table.watch()
        await table.start()
        await table.clock.advance(table.room, 5 * table.hub.config.bot_delay_s)
        refusing = table.room.store = RefusingStore(table.store)
        refusing.refusing = True
        version, frames = table.room.version, len(watcher.frames)
        for _ in range(20):  # tried, failed, armed again, tried again (each after a drawn pause)
            if refusing.refused >= 2:
                break
            await table.clock.advance(table.room, table.hub.config.bot_delay_s)
        assert refusing.refused >= 2
        assert table.room.version == version == await _stored_version(table)
        assert watcher.frames[frames:] == []  # nothing was sent: nothing was stored
        refusing.refusing = False
        for _ in range(100):  # each bot pause is drawn (0.5× to 1.6× the delay): play on until 5 moves
            if table.room.version >= version + 5:
                break
            await table.clock.advance(table.room, table.hub.config.bot_delay_s)
        row = await table.stored()
        assert row.version == table.room.version >= version + 5
        for stored in row.rounds:
            assert [a.seq for a in stored.actions] == list(range(len(stored.actions)))

    run_table(tmp_path, body, bots=[*BOTS4, "greedy"])


class AnswerLostStore(RefusingStore):
    """The room's `MatchStore`: the real store, except that the next action after ``lose()`` is
    stored and its answer then lost, as when the database's connection drops after it received
    the COMMIT: the room is told the write failed, yet it is in the database."""

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self.losing = False
        self.lost = 0

    async def append_action(self, *args: Any, **kwargs: Any) -> None:
        await self.store.append_action(*args, **kwargs)
        if self.losing:
            self.losing = False
            self.lost += 1
            raise StoreError("connection was closed in the middle of operation")


def test_a_move_stored_whose_answer_was_lost_does_not_wedge_the_room(tmp_path: Path) -> None:
    """Seen behind nginx with PostgreSQL cut off for a moment (docs/cluster.md, "PostgreSQL briefly
    gone"): a forced pass was committed as the connection dropped; the room, told it failed,
    tried it again every pause with the same round and seq, each refused as a duplicate
    (ConflictError), for good: nobody could play in the room until its process was restarted.
    Now the refusal takes the room out of memory and closes its sockets (``room_reloading``); it
    is loaded again from the store, the lost answer's move included, and play goes on."""

    async def body(table: Table) -> None:
        watcher = await table.watch()
        await table.start()
        await table.clock.advance(table.room, 5 * table.hub.config.bot_delay_s)
        stale = table.room
        lossy = stale.store = AnswerLostStore(table.store)
        lossy.losing = True
        for _ in range(40):  # each bot pause is drawn (0.5× to 1.6× the delay)
            try:
                await table.clock.advance(stale, table.hub.config.bot_delay_s)
            except RoomError as error:  # retired: it takes no more asks
                assert error.code == "room_reloading"
                break
        assert lossy.lost == 1 and stale.retired
        assert watcher.closed and watcher.closed_for == "room_reloading"
        await asyncio.gather(*table.hub._stopping)  # the stale room's task ends
        room = await table.hub.open(stale.code)
        assert room is not None and room is not stale
        assert room.version == (await table.stored()).version == stale.version + 1  # the lost answer's
        again = FakeOutbox()
        await room.connect(again, None, None, None)
        version = room.version
        for _ in range(40):
            if room.version >= version + 5:
                break
            await table.clock.advance(room, table.hub.config.bot_delay_s)
        assert (await table.stored()).version == room.version >= version + 5
        seen = [f["version"] for f in [*watcher.of_type("state"), *again.of_type("state")]]
        assert seen == sorted(set(seen)), "every client sees each stored version once"

    run_table(tmp_path, body, bots=[*BOTS4, "greedy"])


def test_covering_another_seat_leaves_the_turn_deadline_alone(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        _, ana = await table.sit(0, "Ana")
        _, budi = await table.sit(1, "Budi")
        await table.start()
        for _ in range(200):  # Budi plays his turns until it is Ana's
            if my_move(ana.last_state) is not None:
                break
            move = my_move(budi.last_state)
            if move is not None:
                await table.act(budi, move)
            else:
                await table.clock.advance(table.room, table.hub.config.bot_delay_s)
        turn = ana.last_state
        assert my_move(turn) is not None and turn["room"]["turn"]["seat"] == 0
        table.room.disconnect(budi)  # Budi leaves during Ana's turn: after the grace a bot covers him
        await table.clock.advance(table.room, 20.0)
        covered = ana.of_type("presence")[-1]
        assert covered["seats"][1]["covered"] is True and covered["seats"][1]["connected"] is False
        now = await table.room.call(room_public)
        assert now["version"] == turn["version"] and now["turn"] == turn["room"]["turn"]

    run_table(tmp_path, body, bots=[None, None, *BOTS4[:3]], turn_timer_s=30.0)


def test_the_connection_gauge_counts_replaced_and_closed_connections_out(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        gauge = table.hub.metrics.connections
        token, first = await table.sit(0, "Ana")
        second = await table.watch(token)  # replaces the first
        watcher = await table.watch()
        assert gauge._value.get() == 2  # type: ignore[attr-defined]
        for conn in (first, second, watcher):
            table.room.disconnect(conn)
        await table.room.settled()
        assert gauge._value.get() == 0  # type: ignore[attr-defined]

    run_table(tmp_path, body, bots=[None, *BOTS4])


def test_hello_since_in_kozel_shows_each_reader_only_its_own_drawn_tiles(tmp_path: Path) -> None:
    """K3: a drawn tile is its drawer's; what a returning reader missed keeps it so."""

    async def body(table: Table) -> None:
        token, ana = await table.sit(0, "Ana")
        await table.watch()  # someone watches: round after round is dealt
        await table.start()
        table.room.disconnect(ana)
        await table.clock.advance(table.room, 20.0)  # the grace: a bot covers Ana

        def ana_drew() -> bool:
            state = table.room.state
            return state is not None and any(type(e) is Drew and e.seat == 0 for e in state.log)

        for _ in range(2000):
            if ana_drew():
                break
            await table.clock.advance(table.room, table.hub.config.bot_delay_s)
        assert ana_drew()
        seen = min(table.room.marks)  # the version of this round's deal
        mine = (await table.watch(token, since=seen)).last_state
        theirs = (await table.watch(None, since=seen)).last_state
        assert "log" not in mine["view"] and mine["from"] == 0 == theirs["from"]
        own = [e for e in mine["events"] if e["type"] == "drew" and e["seat"] == 0]
        public = [e for e in theirs["events"] if e["type"] == "drew" and e["seat"] == 0]
        assert own and all(e["tile"] is not None for e in own)
        assert len(public) == len(own) and all(e["tile"] is None for e in public)

    run_table(tmp_path, body, bots=[None, "greedy"], variant="kozel")


def test_a_player_leaves_their_seat_before_the_start_only(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        token, ana = await table.sit(0, "Ana")
        other, budi = await table.sit(1, "Budi")
        with pytest.raises(RoomError) as refused:
            await table.room.call(lambda r: host.leave(r, 0, other))  # Budi's token is not seat 0's
        assert refused.value.code == "not_your_seat"
        version = table.room.version
        await table.room.call(lambda r: host.leave(r, 0, token))
        row = await table.stored()
        assert row.version == version + 1 and row.seats[0].kind == "empty"
        assert ana.closed_for == "seat_left" and not budi.closed
        assert budi.last_state["room"]["seats"][0]["kind"] == "empty"
        assert budi.last_state["version"] == version + 1
        with pytest.raises(RoomError):
            await table.watch(token)  # the token opens nothing now
        await table.sit(0, "Cita")  # the seat is free again
        await table.start()
        with pytest.raises(RoomError) as started:
            await table.room.call(lambda r: host.leave(r, 1, other))
        assert started.value.code == "already_started" and table.room.seats[1].kind == "human"

    run_table(tmp_path, body, bots=[None, None, *BOTS4[:3]])


def test_leaving_a_seat_taken_from_a_bot_puts_the_bot_back(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        token, _ = await table.sit(1, "Ana")  # seat 1 was the host's easy bot
        assert table.room.seats[1].kind == "human"
        await table.room.call(lambda r: host.leave(r, 1, token))
        row = await table.stored()
        assert (row.seats[1].kind, row.seats[1].bot_level) == ("bot", "easy")
        assert (table.room.seats[1].kind, table.room.seats[1].bot_level) == ("bot", "easy")
        other, _ = await table.sit(2, "Budi")  # an empty seat stays empty when left
        await table.room.call(lambda r: host.leave(r, 2, other))
        assert table.room.seats[2].kind == "empty" and (await table.stored()).seats[2].kind == "empty"

    run_table(tmp_path, body, bots=[None, "easy", None, "greedy", "greedy"])


def test_spectators_share_one_frame_per_update_and_are_capped(tmp_path: Path) -> None:
    config = replace(CONFIG, max_spectators=3)

    async def body(table: Table) -> None:
        watchers = [RawOutbox() for _ in range(3)]
        for watcher in watchers:
            await table.room.connect(watcher, None)
        with pytest.raises(RoomError) as full:
            await table.room.connect(FakeOutbox(), None)
        assert full.value.code == "spectators_full"
        _, ana = await table.sit(0, "Ana")  # a seat is never refused
        assert ana.seat == 0
        await table.start()
        await table.room.settled()
        sent = [w.texts[-1] for w in watchers]
        assert all(text is sent[0] for text in sent)  # one frame object, built once, for all
        assert all(w.texts[1:] == watchers[0].texts[1:] for w in watchers)

    run_table(tmp_path, body, bots=[None, "greedy"], variant="kozel", config=config)


def test_spectators_filling_the_room_never_lock_the_host_out(tmp_path: Path) -> None:
    """The host watching without a seat is admitted past the spectators' cap and not counted in
    it, so spectators who fill a room cannot keep its host from seeing them and removing them
    (before: refused ``spectators_full`` like any spectator, with no list to remove them from)."""
    config = replace(CONFIG, max_spectators=2)

    async def body(table: Table) -> None:
        crowd = [RawOutbox() for _ in range(2)]
        for watcher in crowd:
            await table.room.connect(watcher, None)
        host_tabs = [RawOutbox() for _ in range(2)]
        for tab in host_tabs:
            await table.room.connect(tab, None, host=table.host_token)
        listed = host_tabs[-1].of_type("spectators")[-1]["spectators"]
        assert len(listed) == 2  # the crowd, whom the host may now remove
        with pytest.raises(RoomError) as full:  # a wrong host token is a spectator's hello
            await table.room.connect(FakeOutbox(), None, host="not-the-host-token")
        assert full.value.code == "spectators_full"
        table.room.disconnect(crowd[0])
        await table.room.settled()
        await table.room.connect(RawOutbox(), None)  # the host's tabs take no spectator's place

    run_table(tmp_path, body, bots=[None, "greedy"], variant="kozel", config=config)


def test_a_move_made_before_a_change_that_is_not_a_move_still_stands(tmp_path: Path) -> None:
    """Ana's move was made at the version she saw; the host's stop (a new version, not a move)
    came in first. The game she moved in is the same, so her move stands (it was refused
    ``stale_version``, and she had to make it again). A move made before a move she did not see is
    still refused."""

    async def body(table: Table) -> None:
        _, ana = await table.sit(0, "Ana")
        await table.start()
        move = await _ana_to_move(table, ana)
        seen = table.room.version

        async def stop(room: Any) -> None:
            host.check_host(room, table.host_token)
            await host.stop_match(room, True)

        await table.room.call(stop)
        await table.room.settled()
        assert table.room.version == seen + 1
        await table.act(ana, move, version=seen)
        assert not [e for e in ana.of_type("error") if e["code"] == "stale_version"], ana.of_type("error")
        assert table.room.version == seen + 2 == await _stored_version(table)
        assert (await table.stored()).rounds[-1].actions[-1].actor == "human"
        await _play_until(table, lambda: my_move(ana.last_state) is not None)
        move = my_move(ana.last_state)
        assert move is not None and table.room.state is not None
        assert table.room.marks[seen] != len(table.room.state.log)
        await table.act(ana, move, version=seen)  # the table moved on since
        assert ana.of_type("error")[-1]["code"] == "stale_version"

    run_table(tmp_path, body, bots=[None, *BOTS4], options={"camat_target": 0})


class _SharesBots(LocalBots):
    """The in-process bots, noting whom each decision counts for."""

    def __init__(self) -> None:
        self.shares: list[str] = []

    async def decide(self, level: str, view: PlayerView, seed: int, share: str = "") -> Action:
        self.shares.append(share)
        return await super().decide(level, view, seed)


def test_a_rooms_bot_decisions_count_for_its_creator(tmp_path: Path) -> None:
    """The workers are shared out by client (app.bots.fair): a room's bots ask for its creator's
    address, or for the room itself when the hub does not know who created it."""

    async def main() -> None:
        bots, clock = _SharesBots(), FakeClock()
        async with Store(sqlite_url(tmp_path)) as store:
            hub = Hub(CONFIG, store, Metrics(), clock=clock, bots=bots)
            try:
                owned, token = await hub.create_room(
                    "domeng", {}, 5, 0.0, ["greedy", *BOTS4], owner="203.0.113.7"
                )
                unknown, _ = await hub.create_room("domeng", {}, 5, 0.0, ["greedy", *BOTS4])
                key = await store.deployment_key("bot_share")
                assert (owned.bot_share, unknown.bot_share) == (share_of("203.0.113.7", key), unknown.code)
                table = Table(hub, owned, token, clock)
                await table.start()
                await _play_until(table, lambda: len(bots.shares) >= 3)
                assert set(bots.shares) == {share_of("203.0.113.7", key)}
            finally:
                await hub.stop()

    asyncio.run(main())


def test_a_rooms_bot_decisions_count_for_its_creator_once_loaded_again(tmp_path: Path) -> None:
    """A room's share of the bot workers (`Room.bot_share`) is stored with its match: loaded
    again after its server restarted (one process: nothing of its creator is kept but the store),
    after it left memory, and in the match Play again stores after its room was loaded again
    finished, its bots' decisions still count for the client that created it, with that client's
    other rooms, never for the room alone."""

    async def main() -> None:
        bots, clock = _SharesBots(), FakeClock()
        async with Store(sqlite_url(tmp_path)) as store:
            hub = Hub(CONFIG, store, Metrics(), clock=clock, bots=bots)
            room, token = await hub.create_room("domeng", {}, 5, 0.0, ["greedy", *BOTS4], owner="203.0.113.7")
            share = room.bot_share
            table = Table(hub, room, token, clock)
            await table.start()
            await _play_until(table, lambda: len(bots.shares) >= 2)
            table = await reopen(table)  # the server restarts: a new hub, the same store
            assert table.room.bot_share == share != table.room.code
            bots.shares.clear()
            await _play_until(table, lambda: len(bots.shares) >= 2)
            assert set(bots.shares) == {share}
            other, _ = await table.hub.create_room(
                "domeng", {}, 5, 0.0, [*BOTS4, "greedy"], owner="203.0.113.7"
            )
            assert other.bot_share == share  # the same client's rooms: one share
            await store.set_status(table.room.match_id, "finished", table.room.version)
            table = await reopen(table)  # loaded again finished, then played again
            assert table.room.status == "finished" and table.room.bot_share == share
            await table.room.call(lambda r: play_again(r, token))
            table = await reopen(table)  # the next match, loaded again
            assert table.room.room_match == 2 and table.room.bot_share == share
            await table.hub.stop()

    asyncio.run(main())


class ChatUnreadableStore(RefusingStore):
    """The room's `MatchStore`: the real store, except that the chat cannot be read (a database that
    answers writes but fails this read)."""

    async def load_room_chat(self, *args: Any, **kwargs: Any) -> Any:
        raise StoreError("database failure: disk I/O error")


def test_a_table_whose_chat_cannot_be_read_is_not_resized_at_all(tmp_path: Path) -> None:
    """The host's new seat count ends the mutes of the seats it sheds, which needs the room's chat:
    read before anything is stored, so a read that fails refuses the change whole (before: the
    resize was stored and adopted, then the read failed and the host was answered an error)."""

    async def body(table: Table) -> None:
        table.room.chat = None  # not read yet, as in a room just loaded from the store
        version = table.room.version
        table.room.store = ChatUnreadableStore(table.store)
        with pytest.raises(StoreError):
            await table.room.call(lambda r: host.set_options(r, None, None, None, seats=3))
        assert (len(table.room.seats), table.room.version) == (4, version)
        row = await table.stored()
        assert (len(row.seats), row.version) == (4, version)

    run_table(tmp_path, body, bots=[None, "greedy", "greedy", "greedy"], variant="kozel")
