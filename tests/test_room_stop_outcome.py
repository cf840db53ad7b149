"""The round the host ended a no-limit match with is the match's last everywhere (docs/rules.md,
"Match end"): its outcome, and the round's end among its events, say ``match_over`` as the view
does, for the seat at the live table, after a reload (the room rebuilt from the store) and in the
admin's replay, and nobody is named the next leader. Matches stopped by an older release, whose
stored last outcome says ``match_over`` false, read the same. In-process rooms (tests/roomkit.py)
on a real store: SQLite, and PostgreSQL when DOMENG_TEST_POSTGRES_URL is set; the real engine
throughout."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update

from app.admin.history import match_detail, round_replay
from app.rooms import host
from app.rooms.room import Room
from app.store import MatchRow, sqlite_url
from app.store.models import Round
from engine.core import Phase
from tests.adminkit import POSTGRES_URL, scratch_postgres
from tests.roomkit import FakeOutbox, Table, reopen, run_table

BOTS = [None, "greedy", "random", "easy", "greedy"]  # Ana sits in seat 0
NO_LIMIT = {"camat_target": 0}


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield sqlite_url(tmp_path / "data")
        return
    if not POSTGRES_URL:
        pytest.skip("DOMENG_TEST_POSTGRES_URL is not set")
    with scratch_postgres() as url:
        yield url


async def _stop(table: Table) -> None:
    """The host ends the match (as ``PUT /api/rooms/{code}/stop`` does)."""

    async def run(room: Room) -> None:
        host.check_host(room, table.host_token)
        await host.stop_match(room, True)

    await table.room.call(run)


async def _play_until(table: Table, ana: FakeOutbox, done: Any, limit: int = 4000) -> None:
    """Ana plays her first legal tile when it is her turn (a forced pass the room makes for her),
    the bots theirs, the fake clock moving a bot's pause at a time, until ``done()``."""
    room = table.room
    for _ in range(limit):
        if done():
            return
        view = ana.last_state["view"]
        if view and view["phase"] == "playing" and view["legal"]:
            legal = view["legal"][0]
            if "pass" not in legal:
                await table.act(ana, {k: v for k, v in legal.items() if k != "seat"})
        await table.clock.advance(room, table.hub.config.bot_delay_s)
    state = room.state
    seen = None if state is None else (state.phase, state.round_index, len(state.actions), state.to_act)
    raise AssertionError(f"never happened: status {room.status}, (phase, round, actions, to act) {seen}")


def _in_round_two(room: Room) -> bool:
    state = room.state
    return state is not None and state.round_index == 2 and state.phase is Phase.PLAYING


def _between_rounds(room: Room) -> bool:
    return room.state is not None and room.state.phase is Phase.READY


def _kept_log(conn: FakeOutbox) -> list[dict[str, Any]]:
    """The round's log as a client keeps it from the frames it was sent: a whole state's ``log``,
    then ``log[:from] + events`` for each update of the same round (docs/protocol.md, "state")."""
    log: list[dict[str, Any]] = []
    round_index = None
    for frame in conn.of_type("state"):
        view = frame["view"]
        if view is None:
            continue
        if "log" in view:
            log = list(view["log"])
        else:
            before = log if view["round"] == round_index else []
            assert len(before) >= frame["from"]
            log = before[: frame["from"]] + frame["events"]
        round_index = view["round"]
    return log


def _assert_the_last(view: dict[str, Any]) -> None:
    """A view of the stopped match: over, and its last outcome says so."""
    assert view["match_over"] is True and view["phase"] == "over"
    assert view["outcome"]["match_over"] is True


async def _stopped_match(table: Table, ana: FakeOutbox, mid_round: bool) -> None:
    """Play, and the host stops the match: ``mid_round`` in round 2 (it ends when that round
    ends), else between rounds 1 and 2 (at once)."""
    room = table.room
    await table.start()
    await _play_until(table, ana, lambda: _in_round_two(room) if mid_round else _between_rounds(room))
    await _stop(table)
    await _play_until(table, ana, lambda: room.status == "finished")


def _assert_the_admin_replay_ends_it(row: MatchRow) -> None:
    """The admin's match page and its last round's replay: the last outcome says the match ended,
    the stored outcomes agree with the replay, and no next leader is named after the stop."""
    detail = match_detail(row, datetime.now(UTC), live=False)
    assert detail.replay_error is None
    assert [r.replay_agrees for r in detail.rounds] == [True] * len(row.rounds)
    last = detail.rounds[-1]
    assert last.outcome is not None and last.outcome["match_over"] is True
    assert not any(line.startswith("next leader") for line in last.summary)
    if len(detail.rounds) > 1:  # a round the match went on after names who leads the next
        assert detail.rounds[0].summary[-1].startswith("next leader")
    assert detail.result is not None and detail.result.match_over is True
    frames = round_replay(row, len(row.rounds) - 1).frames
    end = frames[-1]
    assert end.outcome is not None and end.outcome["match_over"] is True
    assert end.events[-1]["type"] == "round_ended" and end.events[-1]["outcome"]["match_over"] is True
    assert "next leader" not in end.text


@pytest.mark.parametrize("mid_round", [True, False], ids=["mid-round", "between-rounds"])
def test_the_seat_sees_the_last_outcome_end_the_match_live_reloaded_and_replayed(
    tmp_path: Path, database_url: str, mid_round: bool
) -> None:
    async def body(table: Table) -> None:
        token, ana = await table.sit(0, "Ana")
        await _stopped_match(table, ana, mid_round)
        live = ana.last_state
        _assert_the_last(live["view"])  # the live table
        kept = _kept_log(ana)
        stored = await table.stored()
        assert stored.rounds[-1].outcome == live["view"]["outcome"]

        table = await reopen(table)  # a reload: the room rebuilt from the store
        again = await table.watch(token)
        reloaded = again.last_state["view"]
        _assert_the_last(reloaded)
        assert reloaded["outcome"] == live["view"]["outcome"]
        # the round's end among its events says so too, live as after the reload
        assert reloaded["log"][-1] == {"type": "round_ended", "outcome": reloaded["outcome"]}
        assert kept == reloaded["log"]

        _assert_the_admin_replay_ends_it(await table.stored())

    run_table(tmp_path, body, bots=BOTS, options=NO_LIMIT, database_url=database_url)


def test_a_match_stopped_by_an_older_release_reads_as_over(tmp_path: Path, database_url: str) -> None:
    """An older release stored the stopped match's last outcome with ``match_over`` false: the
    store reads it over (from the match's status), and so does every view of it."""

    async def body(table: Table) -> None:
        token, ana = await table.sit(0, "Ana")
        await _stopped_match(table, ana, mid_round=True)
        shown = ana.last_state["view"]["outcome"]
        stored = await table.stored()
        last = stored.rounds[-1]
        assert last.outcome is not None
        as_old = {**last.outcome, "match_over": False}  # what a release before the fix stored
        async with table.store.engine.begin() as connection:
            where = (Round.match_id == stored.id, Round.index == last.index)
            await connection.execute(update(Round).where(*where).values(outcome=as_old))

        row = await table.stored()
        assert row.rounds[-1].outcome == {**as_old, "match_over": True}
        assert [r.outcome["match_over"] for r in row.rounds if r.outcome] == [False, True]
        _assert_the_admin_replay_ends_it(row)

        table = await reopen(table)
        reloaded = (await table.watch(token)).last_state["view"]
        _assert_the_last(reloaded)
        assert reloaded["outcome"] == shown

    run_table(tmp_path, body, bots=BOTS, options=NO_LIMIT, database_url=database_url)
