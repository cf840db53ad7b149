"""The host ends a no-limit match (docs/rules.md, "Match end (room option)": "play to N elections
or until the host stops it"), in-process (tests/roomkit.py: fake outboxes and clock, a real SQLite
store). The ask is stored and shown to everyone; the round in play is finished by the rules, then
the match ends with its standings, the final panel's view and Play again; asked between rounds it
ends at once. The host may take it back; only the host may ask (not a player, not the deputy), an
ask stands while the host is away and across a restart, and a match with a target is not the host's
to end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.rooms import again, host
from app.rooms.errors import RoomError
from app.rooms.room import Room
from engine.core import Phase
from engine.record import replay
from tests.roomkit import FakeOutbox, Table, reopen, run_table

BOTS = ["greedy", "random", "easy", "greedy", "random"]
NO_LIMIT = {"camat_target": 0}
GRACE = 20.0  # tests/roomkit.py CONFIG.disconnect_grace_s


async def _stop(table: Table, token: str | None, stop: bool = True) -> None:
    """``token`` asks (or, with ``stop`` false, takes back the ask) to end the match, as the
    HTTP route does: the host's token only."""

    async def run(room: Room) -> None:
        host.check_host(room, token)
        await host.stop_match(room, stop)

    await table.room.call(run)


async def _refused(call: Any) -> str:
    with pytest.raises(RoomError) as refused:
        await call
    return refused.value.code


async def _until(table: Table, done: Any, limit: int = 4000, step_s: float | None = None) -> None:
    """Move the fake clock on, ``step_s`` seconds (default: a bot's pause) at a time, until
    ``done()``."""
    for _ in range(limit):
        if done():
            return
        await table.clock.advance(table.room, table.hub.config.bot_delay_s if step_s is None else step_s)
    room, state = table.room, table.room.state
    seen = None if state is None else (state.phase, state.round_index, len(state.actions), state.to_act)
    timers = [(t.due, t.cancelled) for t in table.clock.timers]
    raise AssertionError(
        f"never happened: status {room.status}, host_stop {room.host_stop}, version {room.version}, "
        f"(phase, round, actions, to act) {seen}, clock {table.clock.now} s, timers {timers}"
    )


def _in_round(room: Room) -> bool:
    return room.state is not None and room.state.phase is Phase.PLAYING and len(room.state.actions) >= 2


async def _host_tab(table: Table) -> FakeOutbox:
    conn = FakeOutbox()
    await table.room.connect(conn, None, None, table.host_token)
    return conn


def test_the_match_ends_after_the_round_in_play_with_its_standings(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        room = table.room
        spectator = await table.watch()
        await table.start()
        await _until(
            table, lambda: room.state is not None and room.state.round_index == 2 and _in_round(room)
        )
        played = len(room.state.actions) if room.state else 0
        await _stop(table, table.host_token)

        shown = spectator.last_state
        assert shown["room"]["host_stop"] is True and shown["room"]["status"] == "playing"
        assert shown["view"]["phase"] == "playing"  # the round is not cut
        assert len(room.state.actions) == played if room.state else False
        stored = await table.stored()
        assert (stored.status, stored.host_stop) == ("playing", True)

        await _until(table, lambda: room.status == "finished")
        state = room.state
        assert state is not None and state.phase is Phase.OVER and state.round_index == 2
        final = spectator.last_state
        assert final["room"]["status"] == "finished"
        view = final["view"]
        assert view["match_over"] is True and view["phase"] == "over"
        assert view["outcome"]["end"] in ("out", "ceki", "pollo", "block")  # the round ended by the rules
        assert view["standings"] == [list(side) for side in state.standings()] and view["places"]
        assert not any(s.covered or s.stand_in for s in room.seats)

        await table.clock.advance(room, 60)  # no round is dealt after it
        assert room.state is state and state.round_index == 2

        stored = await table.stored()
        assert (stored.status, stored.host_stop) == ("finished", True) and stored.finished_at is not None
        assert [r.is_finished for r in stored.rounds] == [True, True]
        # the last round's stored outcome says the match ended with it (as its status does)
        assert [r.outcome["match_over"] for r in stored.rounds if r.outcome] == [False, True]
        record = await table.store.export_record(stored.id)
        assert record is not None and record["ended_by"] == "host"
        report = replay(json.loads(json.dumps(record)))  # RECORD.md's contract: it replays
        assert report["match_over"] is True and report["ended_by"] == "host"
        assert len(report["rounds"]) == 2 and all(r["end"] for r in report["rounds"])

        await room.call(lambda r: again.play_again(r, table.host_token))  # Play again, as after any match
        assert room.status == "waiting" and room.room_match == 2 and room.host_stop is False
        assert spectator.last_state["room"]["host_stop"] is False

    run_table(tmp_path, body, bots=BOTS, options=NO_LIMIT)


def test_asked_between_rounds_the_match_ends_at_once(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        room = table.room
        spectator = await table.watch()
        await table.start()
        await _until(table, lambda: room.state is not None and room.state.phase is Phase.READY)
        ended = (await table.stored()).rounds[-1].outcome
        assert ended is not None and ended["match_over"] is False  # the match played on, then
        await _stop(table, table.host_token)
        assert room.status == "finished" and room.state is not None and room.state.phase is Phase.OVER
        assert spectator.last_state["view"]["match_over"] is True
        await table.clock.advance(room, 60)
        assert room.state.round_index == 1  # the next deal never came
        stored = await table.stored()
        assert (stored.status, stored.host_stop, len(stored.rounds)) == ("finished", True, 1)
        # its last round's stored outcome now says the match ended with it, and nothing else changed
        assert stored.rounds[-1].outcome == {**ended, "match_over": True}
        assert stored.version == room.version

    run_table(tmp_path, body, bots=BOTS, options=NO_LIMIT)


def test_the_host_may_take_the_ask_back_before_the_round_ends(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        room = table.room
        spectator = await table.watch()
        await table.start()
        await _until(table, lambda: _in_round(room))
        await _stop(table, table.host_token)
        await _stop(table, table.host_token)  # asking twice changes nothing
        version = room.version
        await _stop(table, table.host_token, stop=False)
        assert room.version == version + 1 and spectator.last_state["room"]["host_stop"] is False
        assert (await table.stored()).host_stop is False
        await _until(table, lambda: room.state is not None and room.state.round_index == 2)
        assert room.status == "playing"  # it plays on

    run_table(tmp_path, body, bots=BOTS, options=NO_LIMIT)


def test_only_the_host_may_end_it_and_an_ask_stands_while_they_are_away(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        room = table.room
        hosts_tab = await _host_tab(table)
        ana_token, ana = await table.sit(0, "Ana")
        await table.start()
        assert await _refused(_stop(table, ana_token)) == "not_host"
        assert await _refused(_stop(table, None)) == "not_host"
        room.disconnect(hosts_tab)
        await table.clock.advance(room, GRACE)
        assert await _refused(_stop(table, ana_token)) == "not_host"  # nor the deputy
        assert room.host_stop is False

        await _host_tab(table)
        await _stop(table, table.host_token)
        room.disconnect(next(c for c in room.host_conns))  # the host leaves: nothing changes
        ana_moves = 0
        for _ in range(4000):
            if room.status == "finished":
                break
            view = ana.last_state["view"]
            if (
                view
                and view["phase"] == "playing"
                and view["legal"]
                and not any("pass" in a for a in view["legal"])
            ):
                await table.act(ana, {k: v for k, v in view["legal"][0].items() if k != "seat"})
                ana_moves += 1
            await table.clock.advance(room, table.hub.config.bot_delay_s)
        assert room.status == "finished" and ana.last_state["view"]["match_over"] is True

    run_table(tmp_path, body, bots=[None, *BOTS[1:]], options=NO_LIMIT)


@pytest.mark.parametrize(
    ("variant", "options", "seats"), [("domeng", {}, 5), ("domeng", {"camat_target": 3}, 5), ("kozel", {}, 3)]
)
def test_a_match_that_ends_by_its_options_is_not_the_hosts_to_end(
    tmp_path: Path, variant: str, options: dict[str, object], seats: int
) -> None:
    async def body(table: Table) -> None:
        spectator = await table.watch()
        await table.start()
        assert await _refused(_stop(table, table.host_token)) == "not_stoppable"
        assert table.room.host_stop is False and (await table.stored()).host_stop is False
        assert spectator.last_state["room"]["host_stop"] is None  # the client offers no End match

    run_table(tmp_path, body, bots=BOTS[:seats], variant=variant, options=options)


def test_nothing_to_end_before_the_start_or_after_the_end(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        assert await _refused(_stop(table, table.host_token)) == "not_playing"
        await table.watch()
        await table.start()
        await _until(table, lambda: _in_round(table.room))
        await _stop(table, table.host_token)
        await _until(table, lambda: table.room.status == "finished")
        assert await _refused(_stop(table, table.host_token)) == "not_playing"
        assert await _refused(_stop(table, table.host_token, stop=False)) == "not_playing"

    run_table(tmp_path, body, bots=BOTS, options=NO_LIMIT)


def test_the_ask_and_the_end_survive_a_restart(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        await table.start()
        await _until(table, lambda: _in_round(table.room))
        await _stop(table, table.host_token)
        table = await reopen(table)  # the server restarts mid-round
        room = table.room
        assert room.host_stop is True and room.status == "playing"
        spectator = await table.watch()
        assert spectator.last_state["room"]["host_stop"] is True
        await _until(table, lambda: room.status == "finished")
        assert room.state is not None and room.state.round_index == 1
        outcome = (await table.stored()).rounds[-1].outcome
        assert outcome is not None and outcome["match_over"] is True

        table = await reopen(table)  # and again once it is over: the final panel's view comes back
        watcher = await table.watch()
        shown = watcher.last_state
        assert shown["room"]["status"] == "finished" and shown["room"]["host_stop"] is True
        assert shown["view"]["match_over"] is True and shown["view"]["phase"] == "over"
        assert shown["view"]["standings"]

    run_table(tmp_path, body, bots=BOTS, options=NO_LIMIT)


def _a_forced_pass_waits(table: Table) -> bool:
    """Whether the room waits out a forced pass's pause (its timer armed, not yet due): the moment
    a stored change that is not a move can stale it."""
    wait = table.room.current_wait()
    return wait is not None and wait.reason == "forced" and bool(table.clock.timers)


@pytest.mark.parametrize("take_back", [False, True], ids=["stop", "stop-then-take-back"])
def test_a_stop_asked_while_a_forced_pass_waits_does_not_freeze_the_table(
    tmp_path: Path, take_back: bool
) -> None:
    """The host's stop (or its taking back) is stored with the room's next version. Asked while a
    forced pass waited out its pause, the pause's timer still carried the old version: when it
    came, the room dropped it as stale and armed nothing, so nobody ever played again (CI saw
    "never happened" in this file). A stale timer now arms what the room waits for now."""

    async def body(table: Table) -> None:
        room = table.room
        await table.watch()
        await table.start()
        await _until(table, lambda: _a_forced_pass_waits(table), limit=20_000, step_s=0.01)
        actions = len(room.state.actions) if room.state is not None else 0
        await _stop(table, table.host_token)
        if take_back:
            await _stop(table, table.host_token, stop=False)
            await _until(table, lambda: room.state is not None and len(room.state.actions) > actions)
            assert room.status == "playing"
        else:
            await _until(table, lambda: room.status == "finished")

    run_table(tmp_path, body, bots=BOTS, options=NO_LIMIT)
