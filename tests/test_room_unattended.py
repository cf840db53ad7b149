"""A table nobody attends (tests/roomkit.py: in-process, fake clock): after
``unattended_rounds`` rounds dealt in a row with no person at the table, a no-limit match of bots
that a spectator watches deals no more and asks "keep watching?" (`app.rooms.unattended`); the
spectator's answer deals the next round and the count starts again, a person back at their seat
deals as ever, and a room loaded again from the store still waits."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from app.rooms import unattended
from tests.roomkit import CONFIG, FakeOutbox, Table, reopen, run_table

BOTS5 = ["easy"] * 5
NO_LIMIT = {"camat_target": 0}
ROUNDS = 2
"""Rounds dealt in a row with no person at the table before the room asks (the tests' setting)."""
ASKING = replace(CONFIG, unattended_rounds=ROUNDS)


def _dealt(table: Table) -> int:
    """Rounds dealt so far in the room's match."""
    state = table.room.state
    return 0 if state is None else state.round_index


def _between_rounds(table: Table) -> bool:
    state = table.room.state
    return state is not None and state.phase.value == "ready"


async def _play_until_asked(table: Table, limit_s: float = 3600.0) -> None:
    """Advance the fake clock 5 s at a time until the room asks who still watches."""
    for _ in range(int(limit_s / 5)):
        if table.room.asks_watching():
            return
        await table.clock.advance(table.room, 5.0)
    raise AssertionError(f"never asked: {_dealt(table)} rounds dealt")


async def _answer(table: Table, conn: FakeOutbox) -> bool:
    """``conn`` answers "keep watching?" in the room's task, as the socket's message does."""
    dealt: bool = await table.room.call(lambda room: unattended.keep_watching(room, conn))
    return dealt


def test_bots_alone_stop_after_the_rounds_set_and_deal_again_when_a_spectator_answers(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        dewi = await table.watch()
        await table.start()
        await _play_until_asked(table)
        assert _dealt(table) == ROUNDS and _between_rounds(table)
        assert dewi.last_state["room"]["keep_watching"] is True
        assert (await table.stored()).unattended_rounds == ROUNDS
        version = table.room.version
        await table.clock.advance(table.room, 600.0)  # nothing is dealt, nothing is stored
        assert _dealt(table) == ROUNDS and table.room.version == version
        assert table.clock.armed() == []

        assert await _answer(table, dewi) is True
        assert _dealt(table) == ROUNDS + 1 and not _between_rounds(table)
        assert dewi.last_state["room"]["keep_watching"] is False
        assert (await table.stored()).unattended_rounds == 1  # the count starts again with it
        assert await _answer(table, dewi) is False  # a second answer finds nothing to answer

        await _play_until_asked(table)  # the count started again: ROUNDS more, then it asks again
        assert _dealt(table) == 2 * ROUNDS

    run_table(tmp_path, body, bots=BOTS5, options=NO_LIMIT, config=ASKING)


def test_a_room_loaded_again_while_it_asks_still_waits_for_an_answer(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        await table.watch()
        await table.start()
        await _play_until_asked(table)
        again = await reopen(table)
        dewi = await again.watch()
        assert again.room.asks_watching()
        assert dewi.last_state["room"]["keep_watching"] is True
        await again.clock.advance(again.room, 600.0)
        assert _dealt(again) == ROUNDS
        assert len((await again.stored()).rounds) == ROUNDS

        assert await _answer(again, dewi) is True
        assert len((await again.stored()).rounds) == ROUNDS + 1

    run_table(tmp_path, body, bots=BOTS5, options=NO_LIMIT, config=ASKING)


def test_a_person_back_at_their_seat_deals_and_the_count_starts_again(tmp_path: Path) -> None:
    """Ana starts, then leaves her seat to the bot covering it: her rounds count as unattended,
    and the room asks the spectator. Ana coming back deals the next round, after the round's pause
    as ever, and while she is at the table nothing counts."""

    async def body(table: Table) -> None:
        token, ana = await table.sit(0, "Ana")
        dewi = await table.watch()
        await table.start()
        assert (await table.stored()).unattended_rounds == 0  # Ana was at the table
        table.room.disconnect(ana)
        await _play_until_asked(table)
        asked_at = _dealt(table)
        assert dewi.last_state["room"]["keep_watching"] is True
        await table.clock.advance(table.room, 600.0)
        assert _dealt(table) == asked_at

        ana = await table.watch(token)
        assert not table.room.asks_watching()
        assert dewi.of_type("presence")[-1]["keep_watching"] is False
        await table.clock.advance(table.room, table.hub.config.round_pause_s)
        assert _dealt(table) == asked_at + 1
        assert (await table.stored()).unattended_rounds == 0

    run_table(tmp_path, body, bots=[None, *BOTS5[:4]], options=NO_LIMIT, config=ASKING)


def test_without_a_limit_bots_play_on_while_watched(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        await table.watch()
        await table.start()
        for _ in range(200):
            if _dealt(table) > ROUNDS + 1:
                break
            await table.clock.advance(table.room, 5.0)
        assert _dealt(table) > ROUNDS + 1 and not table.room.asks_watching()

    run_table(tmp_path, body, bots=BOTS5, options=NO_LIMIT, config=replace(ASKING, unattended_rounds=0))


def test_a_match_that_ends_by_itself_is_watched_to_its_end_without_asking(tmp_path: Path) -> None:
    """Only a "No limit" match asks: one that ends by itself (here at its third camat election)
    is bounded already, and a spectator watching bots play it out is never interrupted (tests
    watching such a match to its end hung at the question)."""

    async def body(table: Table) -> None:
        await table.watch()
        await table.start()
        for _ in range(400):
            assert not table.room.asks_watching(), f"asked after {_dealt(table)} rounds"
            if _dealt(table) > ROUNDS + 2 or table.room.status == "finished":
                break
            await table.clock.advance(table.room, 5.0)
        assert _dealt(table) > ROUNDS + 2

    run_table(tmp_path, body, bots=BOTS5, options={"camat_target": 3}, config=ASKING)
