"""Play again in-process (tests/roomkit.py: fake outboxes and clock, a real SQLite store): at a
match's end the room's next match keeps the seats, tokens and bot levels, is stored before anyone
sees it (with the version after the last match's), shows who is ready, starts when the host wants,
keeps its own history, and a client's ``since`` never mixes the two matches (issue 14)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest

from app.bots.reviews import ReviewWorkers
from app.rooms import again, chat, frames, host
from app.rooms.chat import say, set_rules
from app.rooms.errors import RoomError
from app.rooms.reviewing import reviewable_earlier
from app.rooms.room import Room
from app.store import StoreError
from app.web.reviews import run_review
from engine.views import player_view
from tests.roomkit import FakeOutbox, Table, my_move, reopen, run_table

LEVELS = ["greedy", "random", "easy"]
SEATS = [None, None, *LEVELS]


async def _play(table: Table, people: list[FakeOutbox], done: Any, limit: int = 6000) -> int:
    """The people play their first legal tile whenever it is their turn, the bots theirs as the
    fake clock moves on, until ``done()``; the people's moves made."""
    moves = 0
    for _ in range(limit):
        if done():
            return moves
        for conn in people:
            move = my_move(conn.last_state)
            if move is not None and not done():
                await table.act(conn, move)
                moves += 1
        await table.clock.advance(table.room, table.hub.config.bot_delay_s)
    raise AssertionError("never happened")


async def _again(room: Room, token: str) -> None:
    await room.call(lambda r: again.play_again(r, token))


async def _finished_match(table: Table) -> tuple[list[str], list[FakeOutbox], FakeOutbox]:
    """Ana (seat 0) and Budi (seat 1) play a whole match with three bots, a spectator watching."""
    (ana_token, ana), (budi_token, budi) = await table.sit(0, "Ana"), await table.sit(1, "Budi")
    spectator = await table.watch()
    await table.start()
    with pytest.raises(RoomError) as early:
        await _again(table.room, ana_token)
    assert early.value.code == "not_finished"
    await table.room.call(lambda r: say(r, ana, "good luck", None))
    await table.room.call(lambda r: set_rules(r, True, {4: True}))  # the host's chat rules
    moves = await _play(table, [ana, budi], lambda: table.room.status == "finished")
    assert moves > 0
    return [ana_token, budi_token], [ana, budi], spectator


def test_play_again_keeps_the_seats_and_stores_the_next_match_before_anyone_sees_it(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        room = table.room
        tokens, (ana, budi), spectator = await _finished_match(table)
        first = await table.stored()
        first_rounds, last_version = len(first.rounds), room.version
        assert first.room_match == 1 and first.status == "finished"

        await _again(room, tokens[1])  # Budi asks first
        second = await table.stored()  # the room's code now loads its latest match
        assert (second.room_match, second.status, second.version) == (2, "waiting", last_version + 1)
        assert second.id != first.id and room.match_id == second.id and room.room_match == 2
        assert [(s.kind, s.name, s.bot_level, s.token_hash) for s in second.seats] == [
            (s.kind, s.name, s.bot_level, s.token_hash) for s in first.seats
        ]
        assert [s.ready for s in second.seats] == [False, True, False, False, False]
        for conn in (ana, budi, spectator):  # everyone sees the stored next match, whole, and the room's chat
            state = conn.last_state
            assert (state["version"], state["view"], state["from"]) == (second.version, None, 0)
            shown = state["room"]
            assert (shown["match"], shown["status"], shown["round"]) == (2, "waiting", None)
            assert [s["ready"] for s in state["room"]["seats"]] == [False, True, True, True, True]
            assert [s["bot_level"] for s in state["room"]["seats"][2:]] == LEVELS
            chat_log = conn.of_type("chat_log")[-1]  # the conversation carries on, the rules too
            assert [(x["text"], x["match"]) for x in chat_log["lines"]] == [("good luck", 1)]
            assert chat_log["rules"] == {"spectators": True, "muted": [4], "muted_spectators": []}
        assert [line.text for line in (await table.store.load_chat(first.id))[1]] == ["good luck"]
        assert (await table.store.load_chat(second.id))[1] == []  # each match's record keeps its own
        assert second.chat_rules == {"spectators": True, "muted": [4], "muted_spectators": []}

        await _again(room, tokens[0])  # Ana is in too: stored, then shown
        await _again(room, table.host_token)  # the host's own ask changes nothing
        row = await table.stored()
        assert [s.ready for s in row.seats][:2] == [True, True] and row.version == second.version + 1
        assert budi.last_state["room"]["seats"][0]["ready"] is True and room.version == row.version
        with pytest.raises(RoomError) as stranger:
            await _again(room, "not-a-token")
        assert stranger.value.code == "again_refused"

        ana_again = await table.watch(tokens[0])  # the same token holds the same seat
        assert ana_again.of_type("welcome")[0]["seat"] == 0 and ana.closed_for == "replaced"
        await table.start()
        second_round = lambda: room.state is not None and room.state.round_index == 2  # noqa: E731
        moves = await _play(table, [ana_again, budi], second_round)
        assert moves > 0
        played = await table.stored()
        kept = await table.store.load_match_by_id(first.id)
        assert kept is not None and (len(kept.rounds), kept.version, kept.status) == (
            first_rounds,
            last_version,
            "finished",
        )
        assert played.id == second.id and played.status == "playing" and played.rounds
        assert min(a.version for r in played.rounds for a in r.actions) > last_version
        listed = await table.store.room_matches(room.code)
        assert [(m.id, m.number) for m in listed] == [(first.id, 1), (second.id, 2)]

    run_table(tmp_path, body, bots=SEATS)


def test_the_rooms_chat_carries_on_into_the_next_match_from_memory_and_from_the_store(tmp_path: Path) -> None:
    """Play again keeps the table's conversation: everyone, spectators too, gets the room's recent
    lines, each saying its match; a line of the next match says so; a room opened again from the
    store (a restart, or another process taking it over) shows the same; the admin still reads each
    match's own lines; the host's rules carry over and still hold."""

    async def body(table: Table) -> None:
        tokens, (ana, budi), spectator = await _finished_match(table)
        first_id = table.room.match_id
        await table.room.call(lambda r: say(r, budi, "gg, one more?", None))
        await table.room.call(lambda r: say(r, spectator, None, "well_played"))
        await _again(table.room, tokens[0])
        said = [("good luck", 1), ("gg, one more?", 1), ("well_played", 1)]
        for conn in (ana, budi, spectator):
            lines = conn.of_type("chat_log")[-1]["lines"]
            assert [(x["text"] or x["reaction"], x["match"]) for x in lines] == said
        await table.room.call(lambda r: say(r, ana, "yes!", None))
        assert [(f["line"]["text"], f["line"]["match"]) for f in spectator.of_type("chat")][-1] == ("yes!", 2)
        with pytest.raises(RoomError) as muted:  # seat 4's mute carried over (a bot there now)
            await table.room.call(lambda r: say(r, FakeOutbox(seat=4), "hi", None))
        assert muted.value.code == "chat_muted"

        again_table = await reopen(table)  # from the store: the lines of both matches, in order
        late = await again_table.watch()
        await again_table.room.call(lambda r: chat.send_log(r, late))
        log = late.of_type("chat_log")[-1]
        assert [(x["text"] or x["reaction"], x["match"]) for x in log["lines"]] == [*said, ("yes!", 2)]
        assert log["rules"] == {"spectators": True, "muted": [4], "muted_spectators": []}
        store = again_table.store
        assert [x.text for x in (await store.load_chat(first_id))[1]] == ["good luck", "gg, one more?", None]
        assert [x.text for x in (await store.load_chat(again_table.room.match_id))[1]] == ["yes!"]

    run_table(tmp_path, body, bots=SEATS)


def test_a_joining_connection_gets_the_rooms_last_lines_across_its_matches(tmp_path: Path) -> None:
    """At most `chat.RECENT` lines, the newest, whichever match they were said in."""

    async def body(table: Table) -> None:
        tokens, (ana, budi), _ = await _finished_match(table)
        for n in range(chat.RECENT):
            await table.room.call(lambda r, n=n: say(r, budi, f"old {n}", None))
        await _again(table.room, tokens[0])
        await table.room.call(lambda r: say(r, ana, "new", None))
        late = await table.watch()
        await table.room.call(lambda r: chat.send_log(r, late))
        lines = late.of_type("chat_log")[-1]["lines"]
        assert len(lines) == chat.RECENT and lines[-1]["text"] == "new" and lines[-1]["match"] == 2
        assert [x["text"] for x in lines[:-1]] == [f"old {n}" for n in range(1, chat.RECENT)]

    run_table(tmp_path, body, bots=SEATS)


def test_a_reconnect_never_mixes_the_two_matches_versions(tmp_path: Path) -> None:
    """A client whose last state was the last match's (any of its versions) gets the new match
    whole; within the new match, ``since`` sends only what was missed again."""

    async def body(table: Table) -> None:
        room = table.room
        tokens, (ana, budi), _ = await _finished_match(table)
        old_versions = [f["version"] for f in ana.of_type("state")]
        await _again(room, tokens[0])
        for since in (old_versions[-1], old_versions[len(old_versions) // 2]):
            back = await table.watch(tokens[0], since=since)
            state = back.last_state
            assert state["room"]["match"] == 2 and state["view"] is None and state["version"] == room.version
        await table.start()
        ana = await table.watch(tokens[0])
        started = room.version
        await _play(table, [ana, budi], lambda: room.version >= started + 3)
        back = await table.watch(tokens[1], since=started)
        update = back.last_state
        assert "log" not in update["view"] and update["from"] == 0 and update["version"] == room.version
        assert update["room"]["match"] == 2 and update["events"]

    run_table(tmp_path, body, bots=SEATS)


def test_the_next_match_comes_back_from_the_store_and_a_left_seat_is_free(tmp_path: Path) -> None:
    """A finished match reloaded from the store plays again; a restart while the next match waits
    brings it back (who is ready included); a person who leaves before its start frees the seat,
    which the open-tables list offers and a newcomer takes; at the start the absent person is
    covered after their grace, as at any start."""

    async def body(table: Table) -> None:
        tokens, _, _ = await _finished_match(table)
        table = await reopen(table)  # a finished match comes back as it ended, and plays again
        assert (table.room.status, table.room.room_match) == ("finished", 1)
        await _again(table.room, tokens[0])
        await table.room.call(lambda r: host.set_open(r, True))
        table = await reopen(table)  # a restart: the room is its latest match
        room = table.room
        assert (room.room_match, room.status) == (2, "waiting")
        assert [s.ready for s in room.seats][:2] == [True, False]
        assert room.open_table and [s.bot_level for s in room.seats[2:]] == LEVELS
        await room.call(lambda r: host.leave(r, 1, tokens[1]))
        watcher = await table.watch(host=True)  # the host there lists it
        assert [t["code"] for t in table.hub.open_tables()] == [room.code]
        assert table.hub.open_tables()[0]["free"] == 1
        _, cici = await table.sit(1, "Cici")
        assert cici.last_state["room"]["seats"][1] == {**cici.last_state["room"]["seats"][1], "ready": True}
        assert table.hub.open_tables() == []  # no free seat any more
        await table.start()  # Ana is not connected: her grace runs, then a bot covers her seat
        await table.clock.advance(room, table.hub.config.disconnect_grace_s + 1)
        assert room.seats[0].covered and room.status == "playing"
        assert watcher.of_type("presence")[-1]["seats"][0]["covered"] is True

    run_table(tmp_path, body, bots=SEATS)


def test_the_host_changes_the_next_matchs_options_before_its_start(tmp_path: Path) -> None:
    """Before the next match starts the host may change its options and turn timer: stored with a
    version, then shown; the last match keeps its own; a bad option changes nothing; after the
    start, no more."""

    async def body(table: Table) -> None:
        room = table.room
        tokens, (ana, _), _ = await _finished_match(table)
        first = await table.stored()
        await _again(room, tokens[0])
        version = room.version
        await room.call(lambda r: host.set_options(r, {"camat_target": 2}, 20.0))
        row = await table.stored()
        assert (row.options, row.turn_timer_s, row.version) == ({"camat_target": 2}, 20.0, version + 1)
        shown = ana.last_state["room"]
        assert (shown["options"], shown["turn_timer_s"], shown["version"]) == (
            {"camat_target": 2},
            20.0,
            row.version,
        )
        with pytest.raises(RoomError) as bad:
            await room.call(lambda r: host.set_options(r, {"camat_target": -1}, None))
        assert (bad.value.code, bad.value.status) == ("invalid_options", 422)
        assert (await table.stored()).version == row.version
        kept = await table.store.load_match_by_id(first.id)
        assert kept is not None and (kept.options, kept.turn_timer_s) == (first.options, first.turn_timer_s)
        await table.start()
        assert room.rules.options() == {"camat_target": 2} and room.turn_timer_s == 20.0
        with pytest.raises(RoomError) as late:
            await room.call(lambda r: host.set_options(r, {"camat_target": 1}, None))
        assert late.value.code == "already_started"

    run_table(tmp_path, body, bots=SEATS)


def test_an_earlier_matchs_review_checks_the_token_before_reading_the_match_and_survives_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After Play again, a review of match 1 (`reviewable_earlier`, the route's ``?match=1``): each
    token gets its own seat of that match; a token of no seat is refused before anything of the
    match but its seats is read (any Bearer string must not make the server load a whole match,
    every round and action, again and again); a round it did not play is not reviewable; the
    store failing answers 503 ``room_unavailable`` (try again), here and while the review's record
    is read (`run_review`), never a server error."""

    async def body(table: Table) -> None:
        room = table.room
        tokens, _, _ = await _finished_match(table)
        first = await table.stored()
        await _again(room, tokens[0])
        store = table.store
        assert await reviewable_earlier(store, room.code, 1, 0, tokens[0]) == (first.id, 0)
        assert await reviewable_earlier(store, room.code, 1, 0, tokens[1]) == (first.id, 1)
        whole = 0
        load = store._load

        async def counted(where: Any) -> Any:
            nonlocal whole
            whole += 1
            return await load(where)

        monkeypatch.setattr(store, "_load", counted)
        for token in ("not-a-token", table.host_token):
            with pytest.raises(RoomError) as stranger:
                await reviewable_earlier(store, room.code, 1, 0, token)
            assert stranger.value.code == "bad_token"
        assert whole == 0
        with pytest.raises(RoomError) as later:
            await reviewable_earlier(store, room.code, 1, len(first.rounds), tokens[0])
        assert later.value.code == "round_not_over"
        with pytest.raises(RoomError) as unknown:
            await reviewable_earlier(store, room.code, 3, 0, tokens[0])
        assert unknown.value.code == "no_such_match"

        database = sqlite3.connect(tmp_path / "domeng.sqlite3")
        try:
            database.execute("ALTER TABLE seats RENAME TO seats_away")  # the database fails the read
            database.commit()
            with pytest.raises(RoomError) as failed:
                await reviewable_earlier(store, room.code, 1, 0, tokens[0])
            assert (failed.value.code, failed.value.status) == ("room_unavailable", 503)
            workers = ReviewWorkers(store.export_record)
            try:
                with pytest.raises(RoomError) as unread:
                    await run_review(workers, first.id, 0, 0)
                assert (unread.value.code, unread.value.status) == ("room_unavailable", 503)
            finally:
                await workers.close()
        finally:
            database.execute("ALTER TABLE seats_away RENAME TO seats")
            database.commit()
            database.close()

    run_table(tmp_path, body, bots=SEATS)


def test_a_person_who_took_a_bots_seat_gives_it_back_at_its_level_after_play_again_and_a_restart(
    tmp_path: Path,
) -> None:
    """The host created the table with a greedy bot at seat 2; Budi took that seat, played, asked
    to play again, and left before the next start: the seat goes back to the greedy bot, also when
    the room was loaded again in between (a restart, a handoff, an idle unload). Before, the level
    was kept only in memory: the seat came back empty, and the start filled it with the covering
    (medium) bot."""

    async def body(table: Table) -> None:
        _, ana = await table.sit(0, "Ana")
        budi_token, budi = await table.sit(2, "Budi")  # the host's greedy bot's seat
        await table.start()
        await _play(table, [ana, budi], lambda: table.room.status == "finished")
        table = await reopen(table)  # the finished match comes back from the store
        await _again(table.room, budi_token)
        table = await reopen(table)  # and the next match, waiting for its start
        room = table.room
        await room.call(lambda r: host.leave(r, 2, budi_token))
        seat = room.seats[2]
        assert (seat.kind, seat.bot_level) == ("bot", "greedy")
        table = await reopen(table)
        assert (table.room.seats[2].kind, table.room.seats[2].bot_level) == ("bot", "greedy")
        await table.start()
        levels = [(s.kind, s.bot_level) for s in table.room.seats[2:]]
        assert levels == [("bot", "greedy"), ("bot", "random"), ("bot", "easy")]

    run_table(tmp_path, body, bots=[None, None, "greedy", "random", "easy"])


class _CountedDumps:
    """``orjson`` as `app.rooms.frames` uses it, counting how often each last match
    (`app.rooms.frames.previous_public`: ``{"room", "view"}``) is serialised, alone or as the
    ``previous`` of a whole state: `seen`, the matches in order, and how often each."""

    def __init__(self) -> None:
        self.seen: list[tuple[object, int]] = []

    def dumps(self, obj: Any) -> bytes:
        previous = obj.get("previous", obj) if isinstance(obj, dict) else None
        if isinstance(previous, dict) and previous.keys() == {"room", "view"}:
            if not self.seen or self.seen[-1][0] is not previous:
                self.seen.append((previous, 0))
            self.seen[-1] = (previous, self.seen[-1][1] + 1)
        return orjson.dumps(obj)

    def __getattr__(self, name: str) -> Any:
        return getattr(orjson, name)


def test_the_last_match_is_serialised_once_for_all_the_whole_states_of_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last match (``previous``: its room and every hand revealed, its whole log) is the
    largest part of a whole state, and fixed once it ended: it is serialised once per match, not
    again for every whole state (each connect, sync and reload of the next match); the frames are
    byte for byte what they were when it was serialised with each, for a seat and a spectator.
    After a restart, read back from the store, once again."""
    counted = _CountedDumps()
    monkeypatch.setattr(frames, "orjson", counted)

    def before(room: Room, seat: int | None) -> str:  # a whole state as it was built before
        state = room.state
        view = None if state is None else player_view(state, seat).to_json()
        frame = {"type": "state", "version": room.version, "from": 0 if state is None else len(state.log)}
        return frames.dumps(
            {
                **frame,
                "room": frames.room_public(room),
                "view": view,
                "events": [],
                "previous": room.previous_match,
                "round_before": None,  # the next match waits: no round of it was played
            }
        )

    async def body(table: Table) -> None:
        tokens, (ana, budi), _ = await _finished_match(table)
        counted.seen.clear()  # each round's end, serialised once for `round_before`, is no match
        await _again(table.room, tokens[0])  # sent at once to everyone
        for token in [tokens[0], tokens[1], None, None]:  # reloads and new spectators
            await table.watch(token)
        await table.room.call(lambda r: again.play_again(r, tokens[1]))
        await table.room.call(lambda r: [frames.send_whole(r, r.conns) for _ in range(3)])
        room = table.room
        assert counted.seen == [(room.previous_match, 1)]
        for seat in (0, 1, None):
            assert frames.full_frame(room, seat) == before(room, seat)
        assert (
            ana.last_state["previous"]
            == budi.last_state["previous"]
            == orjson.loads(frames.previous_json(room))
        )
        counted.seen.clear()
        table = await reopen(table)  # a restart: the last match read back, serialised once more
        for token in [tokens[0], tokens[1], None]:
            await table.watch(token)
        assert table.room.previous_match is not None
        assert counted.seen == [(table.room.previous_match, 1)]

    run_table(tmp_path, body, bots=SEATS)


def test_the_next_matchs_whole_states_carry_the_last_match_as_it_ended(tmp_path: Path) -> None:
    """A new user's report: after Play again, a page reloaded in the next match lost "Previous
    match". Every whole state of the next match (a new socket's, a spectator's too) carries the
    last match as it ended, as every seat may see it (``previous``: its room and the spectator's
    view, every hand revealed, no seat's own hand); the same after a restart, read back from the
    store; updates carry none, and the room's first match has none."""

    async def body(table: Table) -> None:
        tokens, (ana, _), _ = await _finished_match(table)
        assert (await table.watch()).last_state["previous"] is None  # the room's first match
        ended = (await table.watch()).last_state["view"]
        assert ended["match_over"] and ended["reveal"] is not None
        await _again(table.room, tokens[0])

        def check(state: dict[str, Any]) -> None:
            previous = state["previous"]
            assert previous is not None and previous["room"]["match"] == 1
            assert previous["room"]["status"] == "finished"
            view = previous["view"]
            assert view["seat"] is None and not view["hand"]
            assert view["match_over"] and view["round"] == ended["round"]
            assert view["outcome"] == ended["outcome"] and view["reveal"] == ended["reveal"]
            assert view["standings"] == ended["standings"] and view["log"] == ended["log"]

        check(ana.last_state)
        check((await table.watch(tokens[1])).last_state)  # a reload: a new socket
        check((await table.watch()).last_state)
        await table.room.call(lambda r: again.play_again(r, tokens[1]))  # Budi ready: still there
        check(ana.last_state)
        table = await reopen(table)  # a restart: read back from the store
        assert table.room.room_match == 2
        check((await table.watch(tokens[0])).last_state)

        # the last match cannot be read back now: the room still opens, without it
        latest = table.store.load_room

        async def failing(code: str, number: int | None = None) -> Any:
            if number is not None:
                raise StoreError("the database is away")
            return await latest(code)

        table.store.load_room = failing  # type: ignore[method-assign]
        table = await reopen(table)
        assert table.room.room_match == 2
        assert (await table.watch(tokens[0])).last_state["previous"] is None

    run_table(tmp_path, body, bots=SEATS)
