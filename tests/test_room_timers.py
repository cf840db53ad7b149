"""Turn timers and absence, in-process (tests/roomkit.py: fake outboxes, a fake clock, a real
SQLite store). A timeout costs one turn: a bot plays it (stored as ``timer``) and the next turn is
the player's again, with its own timer; two in a row, or away past the grace, and a bot covers
the seat (its moves stored as ``cover``) until the player is back. Whenever the room arms a turn
timer, every connection learns its deadline: on a move, a forced pass, a deal, and when a covered
player comes back on their own turn ("I'm back" or reconnecting)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update

from app.rooms import host, making
from app.rooms.frames import room_public, turn_public
from app.rooms.local import LocalBots, LoopClock
from app.rooms.recovery import resume
from app.rooms.room import Room
from app.rooms.timing import RESUMED_TURN_MIN_S
from app.store import StoreError, repository
from app.store.models import MatchTurn
from app.store.records import record_of
from app.store.writer import now_utc
from engine.actions import Action, parse_action
from engine.core import Phase
from engine.record import read_record
from engine.review import review_record
from engine.views import PlayerView
from tests.roomkit import CONFIG, FakeOutbox, Table, age_store, my_move, of_room, reopen, run_table
from tests.test_rooms import RefusingStore
from tests.test_store import database_url  # noqa: F401  (a fixture: SQLite, and PostgreSQL when set)

BOTS4 = ["greedy", "greedy", "greedy", "greedy"]
TIMER_S = 30.0


class HeldSeat:
    """A `BotPort` that decides at once, except for ``seat`` while ``held``: a bot playing for
    that seat waits until `release` (so a test can catch the covered player's own turn)."""

    def __init__(self, seat: int) -> None:
        self.seat, self.held, self.asked = seat, False, 0
        self.gate = asyncio.Event()
        self._local = LocalBots()

    async def decide(self, level: str, view: PlayerView, seed: int, share: str = "") -> Action:
        if self.held and view.seat == self.seat:
            self.asked += 1
            await self.gate.wait()
        return await self._local.decide(level, view, seed)

    def release(self) -> None:
        self.held = False
        self.gate.set()


def known_turn(conn: FakeOutbox) -> dict[str, Any] | None:
    """The turn (with its deadline) as ``conn`` last heard it, from a state or a presence frame."""
    for frame in reversed(conn.frames):
        if frame["type"] == "state":
            turn: dict[str, Any] | None = frame["room"]["turn"]
            return turn
        if frame["type"] == "presence":
            return frame["turn"]  # type: ignore[no-any-return]
    return None


async def actors_of(table: Table, seat: int) -> list[str]:
    """Who made ``seat``'s stored moves, in order (forced passes, the server's, left out)."""
    row = await table.stored()
    return [a.actor for r in row.rounds for a in r.actions if a.seat == seat and a.actor != "server"]


async def until_turn(table: Table, conn: FakeOutbox, limit: int = 400) -> None:
    """Let the bots play until ``conn``'s seat has a move of its own to choose, its timer armed."""
    for _ in range(limit):
        if my_move(conn.last_state) is not None and table.room.turn_deadline is not None:
            return
        await table.clock.advance(table.room, table.hub.config.bot_delay_s)
    raise AssertionError("the seat's turn never came")


async def time_out(table: Table) -> None:
    """Let the turn timer run out and the bot's pause pass (the bot plays that turn)."""
    await table.clock.advance(table.room, TIMER_S + 2 * table.hub.config.bot_delay_s)


async def time_out_held(table: Table, ana: FakeOutbox, bots: HeldSeat, timeouts: int) -> None:
    """Let Ana's (seat 0's) turn timer run out ``timeouts`` times in a row, the bot asked for the
    last of those turns held (`HeldSeat`): after one a bot stands in for her, after two it covers
    her seat; either way that turn is still hers in the state, and nobody plays it until
    `HeldSeat.release`."""
    for _ in range(timeouts - 1):
        await until_turn(table, ana)
        await time_out(table)
    await until_turn(table, ana)
    bots.held = True
    await table.clock.advance(table.room, TIMER_S, bots=False)


def test_one_timeout_costs_one_turn_and_the_next_is_the_players_again(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        _, ana = await table.sit(0, "Ana")
        watcher = await table.watch()
        await table.start()
        await until_turn(table, ana)
        version = table.room.version
        await table.clock.advance(table.room, TIMER_S)  # the timer runs out: a bot stands in
        told = ana.of_type("presence")[-1]
        assert told["seats"][0]["stand_in"] is True and told["seats"][0]["covered"] is False
        assert told["turn"] == {"seat": 0, "deadline_ms": None}  # a bot's turn now: no timer
        assert watcher.of_type("presence")[-1] == told
        await table.clock.advance(table.room, 2 * table.hub.config.bot_delay_s)
        row = await table.stored()
        made = [a for r in row.rounds for a in r.actions if a.version == version + 1]
        assert [(a.seat, a.actor) for a in made] == [(0, "timer")]
        seat = table.room.seats[0]
        assert not seat.covered and not seat.stand_in and seat.timeouts == 1
        # the bot's move is marked for everyone: its events' indexes in the round's log
        marked = watcher.last_state["room"]["round"]["by_bot"]
        assert marked and all(ana.last_state["room"]["round"]["by_bot"] == marked for _ in [0])
        # the next turn is Ana's own again, with its timer, and everyone knows its end
        await until_turn(table, ana)
        assert not table.room.seats[0].covered
        deadline_ms = int(table.room.turn_deadline * 1000)  # type: ignore[operator]
        assert known_turn(ana) == known_turn(watcher) == {"seat": 0, "deadline_ms": deadline_ms}
        move = my_move(ana.last_state)
        assert move is not None
        await table.act(ana, move)  # her own move: the count of timeouts starts again
        assert table.room.seats[0].timeouts == 0
        await until_turn(table, ana)
        await time_out(table)
        assert not table.room.seats[0].covered  # one timeout again, not two in a row
        assert (await actors_of(table, 0)).count("timer") == 2

    run_table(tmp_path, body, bots=[None, *BOTS4], turn_timer_s=TIMER_S)


def test_two_timeouts_in_a_row_and_a_bot_covers_until_the_player_is_back(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        _, ana = await table.sit(0, "Ana")
        watcher = await table.watch()
        await table.start()
        await until_turn(table, ana)
        await time_out(table)
        assert not table.room.seats[0].covered
        await until_turn(table, ana)
        await table.clock.advance(table.room, TIMER_S)  # the second in a row: a bot covers her
        seat = table.room.seats[0]
        assert seat.covered and not seat.stand_in
        assert watcher.of_type("presence")[-1]["seats"][0]["covered"] is True
        # the bot plays her turns now, each stored as the covering bot's
        for _ in range(200):
            if (await actors_of(table, 0)).count("cover") >= 2:
                break
            await table.clock.advance(table.room, table.hub.config.bot_delay_s)
        assert (await actors_of(table, 0))[:2] == ["timer", "cover"]
        assert (await actors_of(table, 0)).count("cover") >= 2
        table.room.back(ana)
        await table.room.settled()
        assert not table.room.seats[0].covered and table.room.seats[0].timeouts == 0
        assert ana.of_type("presence")[-1]["seats"][0]["covered"] is False
        await until_turn(table, ana)  # her turns are hers again, with the timer
        assert known_turn(watcher) == {"seat": 0, "deadline_ms": int(table.room.turn_deadline * 1000)}  # type: ignore[operator]

    run_table(tmp_path, body, bots=[None, *BOTS4], turn_timer_s=TIMER_S)


def _covered_on_own_turn(tmp_path: Path, come_back: str) -> None:
    """Ana is covered (two timeouts); on her turn, while the covering bot thinks, she comes back
    (``back`` or ``reconnect``): the timer starts for her and every connection learns its end; when
    it runs out, that is one timeout (a bot plays that turn), not the bot covering again."""
    bots = HeldSeat(0)

    async def body(table: Table) -> None:
        token, ana = await table.sit(0, "Ana")
        watcher = await table.watch()
        await table.start()
        for _ in range(2):
            await until_turn(table, ana)
            await time_out(table)
        assert table.room.seats[0].covered
        bots.held = True  # the covering bot's next decision for Ana waits
        for _ in range(400):  # (not waiting for bots: the held one would never come)
            if bots.asked:
                break
            await table.clock.advance(table.room, table.hub.config.bot_delay_s, bots=False)
        assert bots.asked and table.room.state is not None and table.room.state.to_act == 0
        assert table.room.turn_deadline is None
        before = table.room.version
        if come_back == "back":
            table.room.back(ana)
            await table.room.settled(bots=False)
            seated = ana
        else:
            table.room.disconnect(ana)
            await table.room.settled(bots=False)
            seated = await table.watch(token)
        assert not table.room.seats[0].covered
        deadline = table.room.turn_deadline
        assert deadline is not None and deadline == table.clock.now + TIMER_S
        expected = {"seat": 0, "deadline_ms": int(deadline * 1000)}
        assert known_turn(seated) == known_turn(watcher) == expected
        assert await table.room.call(turn_public) == expected
        bots.release()  # the covering bot's decision comes back stale: dropped
        await table.room.settled()
        assert table.room.version == before and table.room.turn_deadline == deadline
        await table.clock.advance(table.room, TIMER_S - 0.1, bots=False)
        assert table.room.version == before  # not before her deadline
        await time_out(table)
        assert table.room.version > before
        assert (await actors_of(table, 0))[-1] == "timer" and not table.room.seats[0].covered

    run_table(tmp_path, body, bots=[None, *BOTS4], turn_timer_s=TIMER_S, bot_port=bots)


def test_a_covered_player_back_on_their_own_turn_gets_a_deadline_everyone_knows(tmp_path: Path) -> None:
    _covered_on_own_turn(tmp_path, "back")


def test_a_covered_player_reconnecting_on_their_own_turn_gets_a_deadline_everyone_knows(
    tmp_path: Path,
) -> None:
    _covered_on_own_turn(tmp_path, "reconnect")


def test_every_connection_always_knows_the_turn_deadline_the_room_has_armed(tmp_path: Path) -> None:
    """Two people and three bots play on: moves, forced passes, timeouts, covering, returns and
    deals. After every step of the clock, every connection's last word on the turn is the room's.
    The match never ends (``camat_target`` 0): with the default of one camat a match can end after
    two rounds, and the third round this test waits for would never come."""

    async def body(table: Table) -> None:
        token_a, ana = await table.sit(0, "Ana")
        _, budi = await table.sit(1, "Budi")
        watcher = await table.watch()
        await table.start()
        rng = random.Random(7)
        conns = {"ana": ana, "budi": budi, "watcher": watcher}
        deadlines_after_forced = 0
        for step in range(600):
            for name, conn in conns.items():
                assert known_turn(conn) == await table.room.call(turn_public), (step, name)
            row = await table.stored()
            if len(row.rounds) >= 3 and deadlines_after_forced:
                break
            last = row.rounds[-1].actions[-1:] if row.rounds else []
            if last and last[0].actor == "server" and table.room.turn_deadline is not None:
                deadlines_after_forced += 1
            mover = (
                conns["ana"]
                if my_move(ana.last_state)
                else conns["budi"]
                if my_move(budi.last_state)
                else None
            )
            roll = rng.random()
            if mover is not None and roll < 0.6:
                await table.act(mover, my_move(mover.last_state))  # type: ignore[arg-type]
            elif roll < 0.65 and table.room.seats[0].covered:
                table.room.back(ana)
                await table.room.settled()
            elif roll < 0.68 and ana in table.room.conns:
                table.room.disconnect(ana)
                await table.room.settled()
                conns["ana"] = ana = await table.watch(token_a)
            else:
                await table.clock.advance(table.room, rng.choice([0.5, 0.5, 5.0, TIMER_S]))
        assert deadlines_after_forced, "no forced pass before a person's turn came up"
        assert len((await table.stored()).rounds) >= 3

    run_table(
        tmp_path, body, bots=[None, None, *BOTS4[:3]], turn_timer_s=TIMER_S, options={"camat_target": 0}
    )


def test_moves_a_bot_made_for_a_person_are_marked_in_views_records_and_after_a_restart(
    tmp_path: Path,
) -> None:
    async def body(table: Table) -> None:
        _, ana = await table.sit(0, "Ana")
        await table.watch()
        await table.start()
        await until_turn(table, ana)
        await time_out(table)
        marked = table.room.by_bot
        state = table.room.state
        assert state is not None and marked
        assert all(state.log[i].seat == 0 for i in marked)  # type: ignore[union-attr]
        # the stored match as a record: the bot's move carries by_bot; RECORD.md readers load it
        doc = record_of(await table.stored())
        flagged = [a for r in doc["rounds"] for a in r["actions"] if "by_bot" in a]
        assert flagged and {a["by_bot"] for a in flagged} == {"timeout"} and flagged[0]["seat"] == 0
        assert read_record(doc).rounds  # the optional field changes nothing for a reader
        again = await reopen(table)  # a restart rebuilds the marks from the stored actors
        assert again.room.by_bot == marked
        frame = await again.room.call(room_public)
        assert frame["round"]["by_bot"] == marked

    run_table(tmp_path, body, bots=[None, *BOTS4], turn_timer_s=TIMER_S)


def test_a_stop_and_its_taking_back_leave_the_players_deadline_where_it_was(tmp_path: Path) -> None:
    """The host's stop (and taking it back) gives the room a new version without a move. The turn
    in play keeps its deadline: the room's and the one every connection was told. (The turn's old
    timer came stale at the deadline and armed a full new one, so the player had up to twice the
    time while the page showed the first deadline run out.)"""

    async def body(table: Table) -> None:
        _, ana = await table.sit(0, "Ana")
        watcher = await table.watch()
        await table.start()
        await until_turn(table, ana)
        deadline = table.room.turn_deadline
        assert deadline is not None
        told = {"seat": 0, "deadline_ms": int(deadline * 1000)}
        before = table.room.version
        for stop in (True, False):
            await table.clock.advance(table.room, TIMER_S / 3, bots=False)

            async def ask(room: Room, stop: bool = stop) -> None:
                host.check_host(room, table.host_token)
                await host.stop_match(room, stop)

            await table.room.call(ask)
            await table.room.settled()
            assert table.room.version > before and table.room.turn_deadline == deadline
            assert known_turn(ana) == known_turn(watcher) == told
            before = table.room.version
        # the deadline comes when it was due: a bot stands in for that turn
        await table.clock.advance(table.room, deadline - table.clock.now - 0.1, bots=False)
        assert table.room.version == before
        await table.clock.advance(table.room, 0.1 + 2 * table.hub.config.bot_delay_s)
        assert table.room.version > before
        assert (await actors_of(table, 0))[-1] == "timer"

    run_table(tmp_path, body, bots=[None, *BOTS4], turn_timer_s=TIMER_S, options={"camat_target": 0})


def test_a_turn_kept_across_a_stop_runs_out_when_due_though_the_wall_clock_was_set(tmp_path: Path) -> None:
    """What is left of a turn kept across a new version (the host's stop) is measured on the
    timers' clock, not the wall clock: set an hour forward meanwhile (a server's clock corrected,
    a machine woken up), the player's turn is not taken at once; an hour back, it does not wait an
    hour more. (Measured on the wall clock, the rest of the turn came out as 0 or an hour more.)"""

    async def body(table: Table) -> None:
        _, ana = await table.sit(0, "Ana")
        await table.start()
        for step in (3600.0, -7200.0):
            await until_turn(table, ana)
            await table.clock.advance(table.room, TIMER_S / 3, bots=False)
            table.clock.set_wall(step)
            for stop in (True, False):

                async def ask(room: Room, stop: bool = stop) -> None:
                    host.check_host(room, table.host_token)
                    await host.stop_match(room, stop)

                await table.room.call(ask)
                await table.room.settled()
            before = table.room.version
            await table.clock.advance(table.room, TIMER_S / 2, bots=False)
            assert table.room.version == before  # still hers: a sixth of her time is left
            await table.clock.advance(table.room, TIMER_S / 6 + 2 * table.hub.config.bot_delay_s)
            assert table.room.version > before  # and then it ran out: a bot stood in
            # (her second timeout in a row: the bot covers her seat from then on)
            assert (await actors_of(table, 0))[-1] == ("timer" if step > 0 else "cover")

    run_table(tmp_path, body, bots=[None, *BOTS4], turn_timer_s=TIMER_S, options={"camat_target": 0})


def test_a_turn_loaded_again_from_the_store_keeps_what_was_left_of_its_time(tmp_path: Path) -> None:
    """A restart mid-turn (the room loaded again from the store, as after a restart or by another
    process) does not give the player a whole new turn: the turn began with the move before it
    (its stored time), so loaded 12 s later on the store's clock it has 18 s left of 30, and its
    deadline is told to the player who comes back; loaded past its end, it still has
    `RESUMED_TURN_MIN_S` to reconnect and play (the outage was not hers). (The loaded room armed a
    full timer.)"""

    async def body(table: Table) -> None:
        token, ana = await table.sit(0, "Ana")
        await table.start()
        for loaded_after_s, left_s in ((12.0, TIMER_S - 12.0), (TIMER_S + 60.0, RESUMED_TURN_MIN_S)):
            await until_turn(table, ana)
            await table.room.settled()
            await age_store(table, loaded_after_s)
            table = await reopen(table)
            ana = await table.watch(token)  # her page, back
            deadline = table.room.turn_deadline
            assert deadline is not None
            # the move was stored a moment before the room was loaded: at most that much less left
            assert table.clock.time() + left_s - 5.0 < deadline <= table.clock.time() + left_s
            assert known_turn(ana) == {"seat": 0, "deadline_ms": int(deadline * 1000)}
            before = table.room.version
            await table.clock.advance(table.room, left_s - 5.0, bots=False)
            assert table.room.version == before  # still hers
            await table.clock.advance(table.room, 5.0 + 2 * table.hub.config.bot_delay_s)
            assert table.room.version > before  # ran out when it was due: a bot stood in
            assert (await actors_of(table, 0))[-1] in ("timer", "cover")

    run_table(tmp_path, body, bots=[None, *BOTS4], turn_timer_s=TIMER_S, options={"camat_target": 0})


def test_a_turn_loaded_again_is_timed_on_the_databases_clock_not_the_writers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process that stored the move before Ana's turn had its clock 20 s behind (another
    machine, across a handoff): the room loaded again a moment later still gives her the whole
    turn, both ends of its age being the database's own time. (The age mixed the writer's clock
    with the reader's: 20 s of her turn were gone.)"""

    async def body(table: Table) -> None:
        token, ana = await table.sit(0, "Ana")
        await table.start()
        behind = lambda: now_utc() - timedelta(seconds=20.0)  # noqa: E731
        monkeypatch.setattr(repository, "now_utc", behind)  # the writing process's clock
        await until_turn(table, ana)
        await table.room.settled()
        monkeypatch.undo()
        table = await reopen(table)  # read by a process whose clock is right
        await table.watch(token)
        deadline = table.room.turn_deadline
        assert deadline is not None
        assert table.clock.time() + TIMER_S - 5.0 < deadline <= table.clock.time() + TIMER_S

    run_table(tmp_path, body, bots=[None, *BOTS4], turn_timer_s=TIMER_S, options={"camat_target": 0})


def test_a_covered_players_turn_loaded_again_counts_from_their_return_not_the_move(tmp_path: Path) -> None:
    """Ana's second timeout in a row (30 s after the move before her turn) lets a bot cover her;
    she comes back while it thinks, and her turn's timer starts then, a whole one. Loaded again
    right after, the turn still has nearly all of it: it began with her return, which the store
    learnt, not with the move 30 s before. (It was counted from the move: 10 s were left.)"""
    bots = HeldSeat(0)

    async def body(table: Table) -> None:
        token, ana = await table.sit(0, "Ana")
        await table.start()
        await time_out_held(table, ana, bots, 2)  # the second: a bot covers her, and waits
        assert table.room.seats[0].covered and bots.asked
        assert table.room.state is not None and table.room.state.to_act == 0
        await age_store(table, TIMER_S)  # those 30 s on the store's clock
        table.room.back(ana)
        await table.room.settled(bots=False)
        assert not table.room.seats[0].covered and table.room.turn_deadline is not None
        bots.release()
        table = await reopen(table)
        await table.watch(token)
        deadline = table.room.turn_deadline
        assert deadline is not None
        assert table.clock.time() + TIMER_S - 5.0 < deadline <= table.clock.time() + TIMER_S

    run_table(tmp_path, body, bots=[None, *BOTS4], turn_timer_s=TIMER_S, bot_port=bots)


def test_the_time_between_reading_a_room_and_arming_it_counts_in_its_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rebuilding the room loaded again took 5 s on a busy machine (its replay, between reading
    its row and starting its timers): those 5 s count in Ana's turn too, as they would have on
    the process that hosted it. (They were lost: counted from the read, armed from the rebuild.)"""

    async def body(table: Table) -> None:
        token, ana = await table.sit(0, "Ana")
        await table.start()
        await until_turn(table, ana)
        await table.room.settled()
        clock = table.clock

        def slow(*args: Any, **kwargs: Any) -> Any:
            rebuilt = resume(*args, **kwargs)
            clock.now += 5.0
            return rebuilt

        monkeypatch.setattr(making, "resume", slow)
        table = await reopen(table)
        monkeypatch.undo()
        await table.watch(token)
        deadline = table.room.turn_deadline
        assert deadline is not None
        assert clock.time() + TIMER_S - 5.0 - 3.0 < deadline <= clock.time() + TIMER_S - 5.0

    run_table(tmp_path, body, bots=[None, *BOTS4], turn_timer_s=TIMER_S, options={"camat_target": 0})


async def _reload_on_covered_turn(table: Table, bots: HeldSeat) -> Table:
    """Hold the bot asked for Ana's (seat 0's) turn, then load the room again (a restart): the
    reloaded room, with a spectator watching, her turn in play. A spectator watches from the start:
    with nobody connected, a round that ends before her turn is not followed by a deal (`schedule`),
    and her turn would never come."""
    await table.watch()
    bots.held = True
    for _ in range(400):  # (not waiting for bots: the held one would never come)
        if bots.asked:
            break
        await table.clock.advance(table.room, table.hub.config.bot_delay_s, bots=False)
    assert bots.asked and table.room.state is not None and table.room.state.to_act == 0
    await table.room.settled(bots=False)
    bots.held = False  # the reloaded room's bot decides at once (the held decision is cancelled)
    await age_store(table, 60.0)  # the restart took a minute
    table = await reopen(table)
    await table.watch()
    assert table.room.state is not None and table.room.state.to_act == 0
    return table


def _run_covered_table(
    tmp_path: Path, body: Callable[[Table], Awaitable[None]], bots: HeldSeat, url: str
) -> None:
    """Run ``body`` on a match that never ends, Ana's seat 0 against four bots held by ``bots``,
    turns timed at `TIMER_S`, on the store at ``url``."""
    run_table(
        tmp_path,
        body,
        bots=[None, *BOTS4],
        turn_timer_s=TIMER_S,
        bot_port=bots,
        options={"camat_target": 0},
        database_url=url,
    )


def test_a_seat_a_bot_covers_stays_covered_when_the_room_is_loaded_again(
    tmp_path: Path,
    database_url: str,  # noqa: F811
) -> None:
    """Ana's seat is covered (two timeouts in a row) and her page is gone; the room is loaded
    again (a restart, a handoff, an idle room opened again) on her turn: the bot goes on covering
    her seat, playing her turn after its usual pause, with no deadline for her, and on until she
    is back (``hello``), when her turns are hers again, and stay so through the next reload. (The
    reloaded room forgot the cover: her turn was a person's again, timed with the floor of
    `RESUMED_TURN_MIN_S`, and the bot came back only past her grace.)"""
    bots = HeldSeat(0)

    async def body(table: Table) -> None:
        token, ana = await table.sit(0, "Ana")
        await table.start()
        for _ in range(2):
            await until_turn(table, ana)
            await time_out(table)
        assert table.room.seats[0].covered
        table.room.disconnect(ana)
        await table.room.settled(bots=False)
        table = await _reload_on_covered_turn(table, bots)
        seat = table.room.seats[0]
        assert seat.covered and not seat.stand_in and table.room.turn_deadline is None
        watcher = await table.watch()
        assert watcher.last_state["room"]["seats"][0]["covered"] is True
        before = table.room.version
        await table.clock.advance(table.room, 2 * table.hub.config.bot_delay_s)
        assert table.room.version > before  # the bot played her turn after its pause
        assert (await actors_of(table, 0))[-1] == "cover"
        # she is back: her turns are hers again, and the store knows it
        ana = await table.watch(token)
        await table.room.settled()  # (the room stores covers once it has handled her hello)
        assert not table.room.seats[0].covered
        assert [s.cover for s in (await table.stored()).seats] == [None] * 5
        await until_turn(table, ana)
        table = await reopen(table)
        ana = await table.watch(token)
        assert not table.room.seats[0].covered and table.room.turn_deadline is not None

    _run_covered_table(tmp_path, body, bots, database_url)


def test_a_stand_in_and_a_timeout_in_a_row_outlast_a_reload(
    tmp_path: Path,
    database_url: str,  # noqa: F811
) -> None:
    """Ana's turn timer ran out once: a bot stands in for that turn, and the room is loaded again
    while it thinks. The reloaded room lets the bot play that turn after its pause (stored as the
    timer's), and her next turn is hers, timed; it running out too is her second in a row, so a
    bot covers her seat, as if the room had never been reloaded. (The reloaded room gave her the
    turn the bot was playing, timed, and forgot her first timeout.)"""
    bots = HeldSeat(0)

    async def body(table: Table) -> None:
        token, ana = await table.sit(0, "Ana")
        await table.start()
        await time_out_held(table, ana, bots, 1)  # a bot stands in, and waits
        assert table.room.seats[0].stand_in
        table = await _reload_on_covered_turn(table, bots)
        seat = table.room.seats[0]
        assert seat.stand_in and not seat.covered and table.room.turn_deadline is None
        before = table.room.version
        await table.clock.advance(table.room, 2 * table.hub.config.bot_delay_s)
        assert table.room.version > before and (await actors_of(table, 0))[-1] == "timer"
        ana = await table.watch(token)
        await until_turn(table, ana)
        assert not table.room.seats[0].stand_in and table.room.seats[0].timeouts == 1
        await table.clock.advance(table.room, TIMER_S, bots=False)  # the second in a row
        assert table.room.seats[0].covered

    _run_covered_table(tmp_path, body, bots, database_url)


def test_a_turn_unloaded_when_idle_keeps_what_was_left_of_it(
    tmp_path: Path,
    database_url: str,  # noqa: F811
) -> None:
    """Ana's page is gone on her turn of 600 s (her grace longer still); the room, idle, leaves
    memory after 300 s, and is opened again an hour later: her turn has the 300 s left it had
    when it was unloaded, as after an orderly handoff (the hour out of memory is nobody's turn).
    That handoff is spent once the room is loaded: 200 s later its server restarts (no handoff),
    and the turn has the 99 s left of it, not the 299 s again. (An idle unload stored nothing:
    the turn, an hour old, got `RESUMED_TURN_MIN_S`.)"""
    timer_s, idle_s = 600.0, 301.0
    config = replace(CONFIG, unload_after_s=300.0, disconnect_grace_s=3600.0)

    async def body(table: Table) -> None:
        token, ana = await table.sit(0, "Ana")
        await table.start()
        await until_turn(table, ana)
        table.room.disconnect(ana)
        await table.room.settled()
        await table.clock.advance(table.room, idle_s, bots=False)
        await age_store(table, idle_s)  # those seconds on the store's clock too
        version, code = table.room.version, table.room.code
        assert await table.hub.sweep() == (1, 0)
        async with table.store.engine.begin() as connection:  # an hour passes on the database's clock
            ago: dict[Any, Any] = {
                "turn_at": MatchTurn.turn_at - 3600.0,
                "handed_at": MatchTurn.handed_at - 3600.0,
            }
            await connection.execute(update(MatchTurn).where(of_room(code)).values(ago))
        room = await table.hub.open(code)  # her page, back, opens it
        assert room is not None and room.version == version
        table = Table(table.hub, room, table.host_token, table.clock)
        ana = await table.watch(token)
        deadline = room.turn_deadline
        assert deadline is not None
        left_s = timer_s - idle_s
        assert table.clock.time() + left_s - 5.0 < deadline <= table.clock.time() + left_s
        assert known_turn(ana) == {"seat": 0, "deadline_ms": int(deadline * 1000)}
        await table.clock.advance(table.room, 200.0, bots=False)
        async with table.store.engine.begin() as connection:  # those 200 s on the database's clock
            ago = {"turn_at": MatchTurn.turn_at - 200.0, "handed_at": MatchTurn.handed_at - 200.0}
            await connection.execute(update(MatchTurn).where(of_room(code)).values(ago))
        table = await reopen(table)  # a restart: no handoff
        await table.watch(token)
        deadline = table.room.turn_deadline
        assert deadline is not None
        left_s = timer_s - idle_s - 200.0
        assert table.clock.time() + left_s - 5.0 < deadline <= table.clock.time() + left_s

    run_table(
        tmp_path,
        body,
        bots=[None, *BOTS4],
        turn_timer_s=timer_s,
        config=config,
        options={"camat_target": 0},
        database_url=database_url,
    )


class CoversLost:
    """The room's `MatchStore`: the real store, except that once ``lost`` a cover stored on its
    own (`cover_seats`) never lands, as when the process dies right after the write before it."""

    def __init__(self, store: Any) -> None:
        self.store, self.lost = store, False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    async def cover_seats(self, *args: Any, **kwargs: Any) -> None:
        if self.lost:
            raise StoreError("the process died before this write")
        await self.store.cover_seats(*args, **kwargs)


def test_a_move_stores_the_covers_it_changes_with_it(
    tmp_path: Path,
    database_url: str,  # noqa: F811
) -> None:
    """Ana's timer runs out (a bot stands in: stored as her seat's cover); the bot's move for her
    ends the stand-in, and her seat's cover, ``timed_out`` now (the next timeout in a row covers
    her), is stored in the move's own transaction: a crash after the move cannot lose it, and
    a room loaded again covers her seat at her next timeout. Then her own move, which clears it."""
    bots = HeldSeat(0)

    async def body(table: Table) -> None:
        _, ana = await table.sit(0, "Ana")
        lossy = table.room.store = CoversLost(table.store)
        await table.start()
        await time_out_held(table, ana, bots, 1)  # the timer runs out: the bot standing in waits
        await table.room.settled(bots=False)
        assert (await table.stored()).seats[0].cover == "stand_in"
        lossy.lost = True  # from here on, only what is stored with a move lands
        version = table.room.version
        bots.release()
        await table.clock.advance(table.room, 2 * table.hub.config.bot_delay_s)  # the bot's move for her
        assert (await actors_of(table, 0))[-1] == "timer" and table.room.version > version
        assert table.room.seats[0].cover == "timed_out"
        assert (await table.stored()).seats[0].cover == "timed_out"
        await until_turn(table, ana)
        move = my_move(ana.last_state)
        assert move is not None
        await table.act(ana, move)  # her own move: no timeouts counted any more
        assert [s.cover for s in (await table.stored()).seats] == [None] * 5

    _run_covered_table(tmp_path, body, bots, database_url)


def test_a_move_the_store_refused_leaves_the_cover_as_it_was(
    tmp_path: Path,
    database_url: str,  # noqa: F811
) -> None:
    """Ana's seat is covered (two timeouts in a row) and the bot playing her turn waits; she makes
    her move herself, which would end the cover, but the store refuses the write: the move is not
    made, and her seat is still covered, in memory as in the store (the room released it before the
    write, so it said her seat was hers while the store said covered, and stored that after the next
    intent, the move never made). Once the store is back, the same move ends the cover with it."""
    bots = HeldSeat(0)

    async def body(table: Table) -> None:
        _, ana = await table.sit(0, "Ana")
        await table.start()
        await time_out_held(table, ana, bots, 2)  # the second in a row: covered, the bot waits
        await table.room.settled(bots=False)
        assert table.room.seats[0].covered and (await table.stored()).seats[0].cover == "covered"
        move = my_move(ana.last_state)
        assert move is not None
        version = table.room.version
        refusing = table.room.store = RefusingStore(table.store)
        refusing.refusing = True
        heard = len(ana.frames)
        table.room.act(ana, version, parse_action({**move, "seat": 0}))
        await table.room.settled(bots=False)
        assert [f["code"] for f in ana.frames[heard:] if f["type"] == "error"] == ["not_saved"]
        assert table.room.version == version
        assert table.room.seats[0].cover == "covered"
        refusing.refusing = False
        await table.room.settled(bots=False)  # the next intent stores what changed in memory
        assert (await table.stored()).seats[0].cover == "covered"
        table.room.act(ana, version, parse_action({**move, "seat": 0}))
        await table.room.settled(bots=False)
        assert table.room.version == version + 1 and table.room.seats[0].cover is None
        assert (await table.stored()).seats[0].cover is None
        assert (await actors_of(table, 0))[-1] == "human"
        bots.release()

    _run_covered_table(tmp_path, body, bots, database_url)


def test_the_hosts_stop_between_rounds_ends_the_covers_in_its_own_transaction(
    tmp_path: Path,
    database_url: str,  # noqa: F811
) -> None:
    """Ana's seat is covered when a round of a no-limit match ends; the host ends the match before
    the next deal. No bot plays for anyone after the match: her seat's cover ends with the stop,
    stored in the stop's own transaction, so a crash right after it cannot leave the finished match
    stored with her seat covered (the room stored that cover on its own after the stop, a write
    this test makes never land)."""
    bots = HeldSeat(0)

    async def body(table: Table) -> None:
        _, ana = await table.sit(0, "Ana")
        lossy = table.room.store = CoversLost(table.store)
        await table.start()
        await until_turn(table, ana)
        await time_out(table)
        await until_turn(table, ana)
        await table.clock.advance(table.room, TIMER_S)  # the second in a row: a bot covers her
        assert table.room.seats[0].covered
        for _ in range(400):  # the round plays out; its end's pause is longer than a bot's
            state = table.room.state
            if state is not None and state.phase is Phase.READY:
                break
            await table.clock.advance(table.room, table.hub.config.bot_delay_s)
        else:
            raise AssertionError("the round never ended")
        assert table.room.seats[0].covered and (await table.stored()).seats[0].cover == "covered"
        lossy.lost = True  # from here on, a cover stored on its own never lands

        async def stop(room: Room) -> None:
            host.check_host(room, table.host_token)
            await host.stop_match(room, True)

        await table.room.call(stop)
        assert table.room.status == "finished" and table.room.seats[0].cover is None
        stored = await table.stored()
        assert stored.status == "finished" and [s.cover for s in stored.seats] == [None] * 5

    _run_covered_table(tmp_path, body, bots, database_url)


def test_a_review_never_judges_the_moves_a_bot_made_for_the_player(tmp_path: Path) -> None:
    """A Kozel round where Ana plays her first turn, then her timer runs out twice and a bot covers
    her seat to the round's end: her review (from the stored match, as the server's review workers
    read it) judges only her own moves, and lists the bot's (the record's ``by_bot``) apart."""

    async def body(table: Table) -> None:
        _, ana = await table.sit(0, "Ana")
        await table.watch()
        await table.start()
        await until_turn(table, ana)
        await table.act(ana, my_move(ana.last_state))  # type: ignore[arg-type]
        await until_turn(table, ana)
        await time_out(table)  # a bot stands in for this turn
        await until_turn(table, ana)
        await table.clock.advance(table.room, TIMER_S)  # the second in a row: a bot covers her
        assert table.room.seats[0].covered
        for _ in range(400):  # the covering bot plays her turns to the round's end
            state = table.room.state
            if state is not None and (state.round_index > 1 or state.phase is not Phase.PLAYING):
                break
            await table.clock.advance(table.room, table.hub.config.bot_delay_s)
        else:
            raise AssertionError("the round never ended")
        doc = await table.store.export_record(table.room.code)
        actions = doc["rounds"][0]["actions"]
        by_bot = [at for at, a in enumerate(actions) if a["seat"] == 0 and "by_bot" in a]
        assert {actions[at]["by_bot"] for at in by_bot} == {"timeout", "covering"}
        review = review_record(doc, 0, 0, samples=8)
        assert list(review.by_bot) == by_bot
        # the timer's one turn (its draws too) told from the covering bot's turns
        assert {actions[at]["by_bot"] for at in review.by_timer} == {"timeout"}
        assert {actions[at]["by_bot"] for at in review.by_cover} == {"covering"}
        assert all(d.at not in by_bot for d in review.decisions)
        # the same round as if Ana had made every move: the bot's choices (nearly always some; all
        # of its turns may have been forced) were decisions there
        mine = {d.at for d in review.decisions}
        for action in actions:
            action.pop("by_bot", None)
        every = {d.at for d in review_record(doc, 0, 0, samples=8).decisions}
        assert mine == every - set(by_bot)

    run_table(tmp_path, body, variant="kozel", bots=[None, "medium"], turn_timer_s=TIMER_S)


def test_the_loop_clock_follows_a_new_event_loop_once_its_first_one_closed() -> None:
    """`LoopClock` keeps the loop it first ran in (no getpid call per read, issue 15); a hub's
    clock used again under a new loop (a server started twice in one process) arms its timers
    there: on the closed first loop they would raise."""
    clock = LoopClock()

    async def fire() -> bool:
        fired = asyncio.get_running_loop().create_future()
        clock.call_later(0.0, lambda: fired.set_result(True))
        clock.monotonic()
        return await asyncio.wait_for(fired, 30)

    assert asyncio.run(fire())
    assert asyncio.run(fire())
