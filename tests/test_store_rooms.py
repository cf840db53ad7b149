"""A room's matches in the store (Play again, issue 14): every match played in a room is its own
row with the room's code and its number, the room is its latest match, and a database written
before migration 0005 reads each old match as match 1 of its room. SQLite always, PostgreSQL when
DOMENG_TEST_POSTGRES_URL is set (as in tests/test_store.py, whose fixtures these are). A person's
name is stored whole, however long the table lets it be."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import update

from app.metrics import Metrics
from app.rooms import host
from app.rooms.again import carried_seat
from app.rooms.errors import RoomError
from app.rooms.hub import Hub
from app.rooms.local import LocalBots
from app.rooms.names import MAX_CLUSTER_CODE_POINTS, MAX_NAME_GRAPHEMES, check_name
from app.rooms.room import Room
from app.rooms.seats import SeatInfo
from app.store import MIGRATIONS_DIR, ConflictError, MatchRow, NotFoundError, SeatSpec, Store, sqlite_url
from app.store.models import NAME_LENGTH, Match
from app.store.reads import RoomMatch, RoomStatus
from app.store.rows import RoomRow, SeatChange
from engine.hashing import commitment_of
from engine.variants import make_rules
from tests.roomkit import CONFIG, FakeClock
from tests.test_store import (  # noqa: F401  (fixtures)
    _delete_postgres_matches,
    database_url,
    deal_json,
    new_code,
    new_match,
    with_store,
)

PEOPLE = [
    SeatSpec("human", name="Ana", token_hash="a", seat=0, ready=True),
    SeatSpec("human", name="Budi", token_hash="b", seat=1, ready=True),
    SeatSpec("bot", bot_level="hard", seat=2),
    SeatSpec("bot", bot_level="easy", seat=3),
    SeatSpec("bot", bot_level="medium", seat=4),
]


def test_a_room_keeps_each_match_and_opens_at_its_latest(database_url: str) -> None:  # noqa: F811
    """Match 2 of a room is a row of its own: the room's code, number 2, its own version, seats
    (who is ready), open-table choice and chat rules; loading the room by its code gives it,
    match 1 stays as it was by its id, and the room lists both in order."""

    async def body(store: Store) -> tuple[MatchRow | None, MatchRow | None, MatchRow | None, list[RoomMatch]]:
        first, code = await new_match(store, seats=PEOPLE)
        await store.save_room(first, 7, status="finished")
        seats = [
            SeatSpec(s.kind, s.name, s.bot_level, s.token_hash, s.seat, ready=s.seat == 1) for s in PEOPLE
        ]
        second = await store.create_match(
            code, "domeng", {"camat_target": 1}, 5, 30.0, "host-hash", seats,
            room_match=2, version=8, open_table=True, chat_rules={"spectators": True, "muted": [3]},
        )  # fmt: skip
        await store.save_room(second, 9, seats=[SeatChange(0, PEOPLE[0])])  # Ana is ready too
        room = await store.load_room(code)
        return (
            await store.load_match(code),
            None if room is None else room.match,
            await store.load_match_by_id(first),
            await store.room_matches(code),
        )

    latest, room, first, listed = with_store(database_url, body)
    assert latest is not None and room is not None and first is not None
    assert [(m.number, m.status) for m in listed] == [(1, "finished"), (2, "waiting")]
    assert [m.id for m in listed] == [first.id, latest.id] and first.id != latest.id
    assert (latest.room_match, latest.version, latest.status, latest.open_table) == (2, 9, "waiting", True)
    assert latest.chat_rules == {"spectators": True, "muted": [3]}
    assert [s.ready for s in latest.seats] == [True, True, False, False, False]
    assert [(s.kind, s.name, s.bot_level, s.token_hash) for s in latest.seats] == [
        (s.kind, s.name, s.bot_level, s.token_hash) for s in first.seats
    ]
    assert (room.id, room.room_match, room.version) == (latest.id, 2, 9)
    assert (first.room_match, first.version, first.status, first.code) == (1, 7, "finished", latest.code)


def test_a_seat_given_to_a_bot_keeps_its_persons_token_into_the_next_match(database_url: str) -> None:  # noqa: F811
    """The host gives Budi's seat to a bot during match 1: the seat keeps his token hash as its
    ``former_token_hash`` (his token, opened later, is told so: close 4007), through a bot level
    changed since, and into the room's next match (Play again carries the seat, `carried_seat`)."""

    async def body(store: Store) -> tuple[list[str | None], list[str | None]]:
        first, code = await new_match(store, seats=PEOPLE)
        await store.save_room(first, 2, status="playing")
        gift = SeatSpec("bot", bot_level="medium", seat=1, former_token_hash="b")
        await store.save_room(first, 3, seats=[SeatChange(1, gift)])
        await store.save_room(first, 4, seats=[SeatChange(1, SeatSpec("bot", bot_level="hard", seat=1))])
        await store.save_room(first, 5, status="finished")
        stored = await store.load_match_by_id(first)
        assert stored is not None
        seats = [
            SeatInfo(s.seat, s.kind, s.name, s.bot_level, s.token_hash, former_token_hash=s.former_token_hash)  # type: ignore[arg-type]
            for s in stored.seats
        ]
        specs = [carried_seat(info, ready=False) for info in seats]
        await store.create_match(code, "domeng", {}, 5, 30.0, "host-hash", specs, room_match=2, version=6)
        latest = await store.load_match(code)
        assert latest is not None
        return [s.former_token_hash for s in stored.seats], [s.former_token_hash for s in latest.seats]

    first, second = with_store(database_url, body)
    assert first == second == [None, "b", None, None, None]


def test_the_status_of_several_rooms_is_each_ones_latest_match(database_url: str) -> None:  # noqa: F811
    """`Store.room_statuses` ("Your tables"): per room code its latest match's number, game,
    status and seats, in one read; an unknown code is left out."""

    async def body(store: Store) -> tuple[str, str, dict[str, RoomStatus]]:
        first, code = await new_match(store, seats=PEOPLE)
        await store.save_room(first, 7, status="finished")
        await store.create_match(code, "domeng", {}, 5, 30.0, "host-hash", PEOPLE, room_match=2, version=8)
        other, other_code = await new_match(
            store, variant="kozel", options={}, seat_count=3, seats=PEOPLE[:3]
        )
        await store.save_room(other, 3, status="abandoned")
        return code, other_code, await store.room_statuses([code, other_code, new_code()])

    code, other_code, found = with_store(database_url, body)
    assert sorted(found) == sorted([code, other_code])
    room, other = found[code], found[other_code]
    assert (room.code, room.number, room.variant, room.status) == (code, 2, "domeng", "waiting")
    assert (other.code, other.number, other.variant, other.status) == (other_code, 1, "kozel", "abandoned")
    assert [(s.seat, s.kind, s.name, s.bot_level) for s in room.seats] == [
        (p.seat, p.kind, p.name, p.bot_level) for p in PEOPLE
    ]
    assert [s.seat for s in other.seats] == [0, 1, 2]


def test_a_room_number_is_taken_once_and_a_new_room_needs_a_free_code(database_url: str) -> None:  # noqa: F811
    """(code, number) is unique: the same next match stored twice conflicts, and a new room (its
    match 1) cannot take the code of a room that exists; chat lines and records stay per match."""

    async def body(store: Store) -> tuple[list[int], list[int], dict[str, str], list[RoomMatch]]:
        first, code = await new_match(store)
        second, _ = await new_match(store, code=code, room_match=2, version=3)
        with pytest.raises(ConflictError):
            await new_match(store, code=code, room_match=2)
        with pytest.raises(ConflictError):
            await new_match(store, code=code)
        await store.add_chat(first, 0, "Ana", text="good game")
        await store.add_chat(second, 0, "Ana", text="again!")
        lines = [[line.text or "" for line in (await store.load_chat(m))[1]] for m in (first, second)]
        records = [await store.export_record(m) for m in (first, second)]
        by_code = await store.export_record(code)
        return (
            [len(x) for x in lines],
            [first, second],
            {"first": lines[0][0], "second": lines[1][0], "by_code": str(by_code == records[1])},
            await store.room_matches(code),
        )

    counts, ids, texts, listed = with_store(database_url, body)
    assert counts == [1, 1] and texts == {"first": "good game", "second": "again!", "by_code": "True"}
    assert [m.id for m in listed] == ids and [m.number for m in listed] == [1, 2]
    assert with_store(database_url, lambda store: store.room_matches(new_code())) == []


def test_migration_0005_makes_every_stored_match_match_1_of_its_room(tmp_path: Path) -> None:
    """A database at 0004 (codes unique) upgraded to the head: each match is match 1 of its room,
    its seats not ready, and a room's next match can then be stored under the same code."""
    url = sqlite_url(tmp_path)
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("path_separator", "os")
    config.attributes["database_url"] = url
    config.attributes["configure_logger"] = False
    command.upgrade(config, "0004")
    with sqlite3.connect(tmp_path / "domeng.sqlite3") as db:
        db.execute(
            "INSERT INTO matches (id, code, variant, options, seat_count, status, turn_timer_s, version,"
            " created_at, host_token_hash, open_table) VALUES (1, 'old-room', 'domeng', '{}', 2, 'finished',"
            " 30.0, 12, '2026-11-30 10:00:00', 'h', 0)"
        )
        db.executemany(
            "INSERT INTO seats (match_id, seat, name, kind, bot_level, token_hash, updated_at)"
            " VALUES (1, ?, ?, ?, ?, ?, '2026-11-30 10:00:00')",
            [(0, "Ana", "human", None, "a"), (1, None, "bot", "easy", None)],
        )

    async def body(store: Store) -> tuple[MatchRow | None, list[RoomMatch], MatchRow | None]:
        old = await store.load_match("old-room")
        seats = [SeatSpec("human", name="Ana", token_hash="a", seat=0), SeatSpec("bot", bot_level="easy")]
        await store.create_match("old-room", "domeng", {}, 2, 30.0, "h", seats, room_match=2, version=13)
        return old, await store.room_matches("old-room"), await store.load_match("old-room")

    old, listed, latest = with_store(url, body)  # the store migrates to the head when it starts
    assert old is not None and latest is not None
    assert (old.id, old.room_match, old.version) == (1, 1, 12)
    assert [s.ready for s in old.seats] == [False, False]
    assert [(m.id, m.number) for m in listed] == [(1, 1), (latest.id, 2)]
    assert (latest.room_match, latest.version) == (2, 13)


LONGEST_NAME = "👩🏽‍💻" * MAX_NAME_GRAPHEMES
"""A name the table takes (`app.rooms.names.check_name`) of 128 code points: 32 joined emoji."""


def test_the_longest_names_a_person_may_give_are_stored_whole(database_url: str) -> None:  # noqa: F811
    """A seat's and a chat line's name hold whatever name the table takes (PostgreSQL refused one
    over 64 code points with a server error); a name's column is wide enough for the longest."""
    assert check_name(LONGEST_NAME) == LONGEST_NAME and len(LONGEST_NAME) > 64
    assert NAME_LENGTH >= MAX_NAME_GRAPHEMES * MAX_CLUSTER_CODE_POINTS

    async def body(store: Store) -> tuple[MatchRow | None, str]:
        seats = [SeatSpec("human", name=LONGEST_NAME, token_hash="a", seat=0, ready=True), *PEOPLE[1:]]
        match_id, code = await new_match(store, seats=seats)
        await store.add_chat(match_id, None, LONGEST_NAME, text="halo", watcher="3fa9c1d2")
        return await store.load_match(code), (await store.load_chat(match_id))[1][0].name

    match, said_by = with_store(database_url, body)
    assert match is not None and match.seats[0].name == said_by == LONGEST_NAME


async def _listed(store: Store, code: str) -> tuple[float | None, float]:
    """How long ago (seconds, on the database's clock) room ``code``'s latest match was first
    listed (None: never), and when it was read."""
    row = await store.load_room(code)
    assert row is not None and row.read_at is not None
    return (None if row.listed_at is None else row.read_at - row.listed_at), row.read_at


async def _list_earlier(store: Store, match_id: int, seconds: float) -> None:
    """Make match ``match_id``'s first listing ``seconds`` older (the database's clock cannot be moved)."""
    async with store.engine.begin() as connection:
        listed = Match.__table__.c.listed_at
        await connection.execute(
            update(Match.__table__).where(Match.__table__.c.id == match_id).values(listed_at=listed - seconds)
        )


def test_a_matchs_first_listing_is_stored_on_the_databases_clock_and_kept(database_url: str) -> None:  # noqa: F811
    """`Match.listed_at`: stamped by the match's first listing (`Store.save_room` with
    ``open_table``), kept when its table is taken off and listed again; the next match of the room
    (Play again) listed is listed now, one not listed has none."""

    async def body(store: Store) -> list[float | None]:
        first, code = await new_match(store, seats=PEOPLE)
        ages = [(await _listed(store, code))[0]]
        await store.save_room(first, 1, open_table=True)
        ages.append((await _listed(store, code))[0])
        await _list_earlier(store, first, 100.0)
        await store.save_room(first, 2, open_table=False)
        await store.save_room(first, 3, open_table=True)
        ages.append((await _listed(store, code))[0])
        await store.save_room(first, 4, status="finished")
        args = (code, "domeng", {"camat_target": 1}, 5, 30.0, "host-hash", PEOPLE)
        second = await store.create_match(*args, room_match=2, version=5, open_table=True)
        ages.append((await _listed(store, code))[0])
        await store.save_room(second, 6, status="finished")
        await store.create_match(*args, room_match=3, version=7)
        ages.append((await _listed(store, code))[0])
        return ages

    never, listed, again_listed, next_match, unlisted = with_store(database_url, body)
    assert never is None and unlisted is None
    assert listed is not None and 0.0 <= listed < 5.0
    assert again_listed is not None and again_listed >= 100.0
    assert next_match is not None and 0.0 <= next_match < 5.0


def test_a_room_loaded_again_keeps_its_tables_first_listing_time(database_url: str) -> None:  # noqa: F811
    """A listed table's room loaded again from the store (a restart, another process, an idle
    unload) keeps how long ago the match was first listed, on this process's clock whatever the
    database's says (`Room.listed_at`, the lobby's ``waiting_s``), also once taken off and
    listed again; the next match (Play again) is listed anew."""

    async def main() -> tuple[float | None, float | None, float | None]:
        clock = FakeClock()
        clock.set_wall(-5000.0)  # this process's clock is far from the database's
        async with Store(database_url) as store:
            _, code = await new_match(store, seats=PEOPLE[:2] + [SeatSpec()] * 3)
            hub = Hub(CONFIG, store, Metrics(), clock=clock, bots=LocalBots())
            room = await hub.open(code)
            assert room is not None
            await room.call(lambda r: host.set_open(r, True))
            await _list_earlier(store, room.match_id, 100.0)
            await hub.stop()

            hub = Hub(CONFIG, store, Metrics(), clock=clock, bots=LocalBots())
            room = await hub.open(code)
            assert room is not None
            reloaded = None if room.listed_at is None else clock.time() - room.listed_at
            await room.call(lambda r: host.set_open(r, False))
            await hub.stop()

            hub = Hub(CONFIG, store, Metrics(), clock=clock, bots=LocalBots())
            room = await hub.open(code)
            assert room is not None
            await room.call(lambda r: host.set_open(r, True))
            relisted = None if room.listed_at is None else clock.time() - room.listed_at
            await hub.stop()
            stored = await store.load_room(code)
            assert stored is not None
            return reloaded, relisted, _age(stored)

    reloaded, relisted, stored = asyncio.run(main())
    assert reloaded is not None and 100.0 <= reloaded < 105.0
    assert relisted is not None and 100.0 <= relisted < 105.0
    assert stored is not None and stored >= 100.0


def _age(row: RoomRow) -> float | None:
    return None if row.listed_at is None or row.read_at is None else row.read_at - row.listed_at


def test_your_tables_shows_no_room_whose_link_cannot_open_it(database_url: str) -> None:  # noqa: F811
    """`Hub.statuses` ("Your tables") agrees with `Hub.open` (``GET /api/rooms/{code}``: 404) on a
    stored room that cannot be rebuilt: one whose rules cannot be made again is not shown, without
    loading it; one whose rounds do not replay is not shown once opening it has failed here. A
    sound room is shown, and the status read loads no room."""

    async def main() -> tuple[dict[str, Any], dict[str, Any], bool, bool, int]:
        async with Store(database_url) as store:
            hub = Hub(CONFIG, store, Metrics(), clock=FakeClock(), bots=LocalBots())
            _, sound = await new_match(store, seats=PEOPLE)
            _, odd = await new_match(store, seats=PEOPLE, options={"camat_target": "many"})
            broken_id, broken = await new_match(store, seats=PEOPLE)
            deal = make_rules("domeng").deal_from_seed("s")
            await store.save_room(broken_id, 1, status="playing")
            await store.start_round(broken_id, 0, "s", commitment_of("s"), deal_json(deal), 2)
            await store.append_action(broken_id, 0, 0, 3, 0, {"seat": 0, "tile": "9-9"}, "human")
            before = await hub.statuses([sound, odd, broken])
            loaded = len(hub.rooms)
            odd_opens, broken_opens = await hub.open(odd) is not None, await hub.open(broken) is not None
            after = await hub.statuses([sound, odd, broken])
            await hub.stop()
            return before, after, odd_opens, broken_opens, loaded

    before, after, odd_opens, broken_opens, loaded = asyncio.run(main())
    assert (odd_opens, broken_opens, loaded) == (False, False, 0)
    sound, odd, broken = before
    assert before[broken] is not None and before[broken]["status"] == "playing"  # its rounds not read
    assert before[sound] is not None and before[sound]["status"] == "waiting" and before[odd] is None
    assert after[sound] is not None and after[odd] is None and after[broken] is None


def test_an_action_stores_the_covers_it_changed_in_its_own_transaction(database_url: str) -> None:  # noqa: F811
    """`Store.append_action` with ``covers``: the action and the seats' covers are stored
    together, or neither (a seat the match lacks refuses both)."""

    async def body(store: Store) -> tuple[list[str | None], list[int]]:
        match_id, code = await new_match(store, seats=PEOPLE)
        await store.set_status(match_id, "playing", 1)
        deal = make_rules("domeng").deal_from_seed("s")
        await store.start_round(match_id, 0, "s", commitment_of("s"), deal_json(deal), 2)
        await store.cover_seats(match_id, {0: "stand_in"})
        with pytest.raises(NotFoundError):
            await store.append_action(
                match_id, 0, 0, 3, 0, {"seat": 0, "pass": True}, "timer", covers={9: None}
            )
        await store.append_action(
            match_id, 0, 0, 3, 0, {"seat": 0, "pass": True}, "timer", covers={0: "timed_out"}
        )
        row = await store.load_match(code)
        assert row is not None
        return [s.cover for s in row.seats], [a.version for r in row.rounds for a in r.actions]

    assert with_store(database_url, body) == (["timed_out", None, None, None, None], [3])


def test_a_rooms_change_stores_the_covers_it_changed_in_its_own_transaction(database_url: str) -> None:  # noqa: F811
    """`Store.save_room` with ``covers`` (the host's stop between rounds ends every cover): the
    change and the seats' covers are stored together, or neither (a seat the match lacks refuses
    both; an unknown cover is refused before anything is queued)."""

    async def body(store: Store) -> tuple[list[str | None], str, int]:
        match_id, code = await new_match(store, seats=PEOPLE)
        await store.set_status(match_id, "playing", 1)
        await store.cover_seats(match_id, {0: "covered", 1: "timed_out"})
        with pytest.raises(NotFoundError):
            await store.save_room(match_id, 2, status="finished", covers={0: None, 9: None})
        with pytest.raises(ValueError, match="seat cover"):
            await store.save_room(match_id, 2, status="finished", covers={0: "asleep"})
        await store.save_room(match_id, 2, status="finished", covers={0: None, 1: None})
        row = await store.load_match(code)
        assert row is not None
        return [s.cover for s in row.seats], row.status, row.version

    assert with_store(database_url, body) == ([None] * 5, "finished", 2)


def test_a_seat_a_bot_plays_for_is_stored_until_the_seat_is_rewritten(database_url: str) -> None:  # noqa: F811
    """Whether a bot plays for a person's seat is stored without a version (`Store.cover_seats`)
    and read with the room; rewriting the seat in any way (a change with the room's version, a
    seat left, a seat claimed) clears it: the seat is someone else's now. A value that is not a
    cover is refused."""

    async def body(store: Store) -> list[list[str | None]]:
        match_id, code = await new_match(store, seats=PEOPLE)
        seen = []

        async def covers() -> None:
            room = await store.load_room(code)
            assert room is not None
            seen.append([s.cover for s in room.match.seats])

        await store.cover_seats(match_id, {0: "covered", 1: "stand_in"})
        await covers()
        await store.cover_seats(match_id, {1: "timed_out"})
        await covers()
        await store.save_room(match_id, 1, seats=[SeatChange(0, PEOPLE[0])])
        await store.update_seat(match_id, 1, name=None, kind="empty", bot_level=None, token_hash=None)
        await covers()
        await store.cover_seats(match_id, {1: "covered"})
        assert await store.claim_seat(match_id, 1, "Citra", "c")
        await covers()
        with pytest.raises(ValueError, match="seat cover"):
            await store.cover_seats(match_id, {0: "asleep"})
        return seen

    assert with_store(database_url, body) == [
        ["covered", "stand_in", None, None, None],
        ["covered", "timed_out", None, None, None],
        [None, None, None, None, None],
        [None, None, None, None, None],
    ]


def test_a_tables_seat_count_is_stored_with_its_seats_and_loaded_again(database_url: str) -> None:  # noqa: F811
    """The host's seat count (`app.rooms.host.set_options`, Kozel's 2 to 4) is stored in one
    transaction with its version: `Match.seat_count` and the seat rows, new ones empty at the end,
    those past a smaller count gone, so the room loaded again has them; a person's seat is never
    deleted, by the room (``seat_taken``) nor by the store (ValueError, nothing stored)."""
    three = [PEOPLE[0], SeatSpec("bot", bot_level="easy", seat=1), SeatSpec(seat=2)]

    async def main() -> list[Any]:
        seen: list[Any] = []
        async with Store(database_url) as store:
            _, code = await new_match(store, variant="kozel", options={}, seat_count=3, seats=three)
            seen.append(await _in_room(store, code, lambda r: host.set_options(r, None, None, seats=4)))
            await _in_room(store, code, lambda r: host.claim(r, 3, "Dewi"))
            with pytest.raises(RoomError) as refused:
                await _in_room(store, code, lambda r: host.set_options(r, {"pairs": False}, 45, seats=2))
            seen.append((refused.value.code, refused.value.status, refused.value.message))
            seen.append(await _in_room(store, code, lambda r: asyncio.sleep(0)))
            await _in_room(store, code, lambda r: host.set_bot(r, 3, "hard"))
            seen.append(await _in_room(store, code, lambda r: host.set_options(r, None, None, seats=2)))
            stored = await store.load_match(code)
            assert stored is not None
            seen.append((stored.seat_count, stored.version, [(s.seat, s.kind) for s in stored.seats]))

            other, other_code = await new_match(
                store,
                variant="kozel",
                options={},
                seat_count=3,
                seats=[
                    SeatSpec("bot", bot_level="easy"),
                    SeatSpec(),
                    SeatSpec("human", name="Ana", token_hash="a"),
                ],
            )
            with pytest.raises(ValueError, match="holds a person"):
                await store.save_room(other, 1, seat_count=2)
            kept = await store.load_match(other_code)
            assert kept is not None
            seen.append((kept.seat_count, kept.version, len(kept.seats)))
        return seen

    grown, refused, unchanged, shrunk, stored, kept = asyncio.run(main())
    four = [(0, "human"), (1, "bot"), (2, "empty"), (3, "empty")]
    assert grown == (4, 1, four, 4, 30.0)
    assert refused[:2] == ("seat_taken", 409) and "seat 3 (Dewi)" in refused[2]
    assert unchanged == (4, 2, [(0, "human"), (1, "bot"), (2, "empty"), (3, "human")], 4, 30.0)
    assert shrunk == (2, 4, [(0, "human"), (1, "bot")], 2, 30.0)
    assert stored == (2, 4, [(0, "human"), (1, "bot")])
    assert kept == (3, 0, 3)


async def _in_room(store: Store, code: str, change: Callable[[Room], Awaitable[object]]) -> tuple[Any, ...]:
    """Open ``code``'s room from the store in a new hub, make ``change`` in it, then open it again
    in another hub (as after a restart): its seat count, version, seats, rules' seats and timer."""
    hub = Hub(CONFIG, store, Metrics(), clock=FakeClock(), bots=LocalBots())
    room = await hub.open(code)
    assert room is not None
    try:
        await room.call(change)
    finally:
        await hub.stop()
    hub = Hub(CONFIG, store, Metrics(), clock=FakeClock(), bots=LocalBots())
    loaded = await hub.open(code)
    assert loaded is not None
    await hub.stop()
    seats = [(s.seat, s.kind) for s in loaded.seats]
    return len(loaded.seats), loaded.version, seats, loaded.rules.seats, loaded.turn_timer_s
