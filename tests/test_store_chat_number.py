"""Migration 0017: ``chat.number``, a line's number in its room, stored with the line, on SQLite
(a table rebuilt in batch mode) and PostgreSQL (a new scratch database, since the test migrates
down and up again). Up from 0016 numbers the lines stored so far as 0016's reads numbered them (by
id among the lines of the room's matches); the next line stored goes on from the room's last;
down drops it."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import text

from app.store import Store
from app.store.db import make_engine
from tests.adminkit import migrate
from tests.test_store_cover_check import SEATS, database_url  # noqa: F401  (a fixture)


async def _first_lines(url: str) -> tuple[int, int, int]:
    """Two rooms, the first with two matches (Play again), each with a line stored (migrating to
    the head): the three matches' ids."""
    async with Store(url) as store:
        first = await store.create_match("room-a", "domeng", {}, 2, 30.0, "h", SEATS)
        other = await store.create_match("room-b", "domeng", {}, 2, 30.0, "h", SEATS)
        second = await store.create_match("room-a", "domeng", {}, 2, 30.0, "h", SEATS, room_match=2)
        assert (await store.add_chat(first, 0, "Ana", text="one")).id == 1
        assert (await store.add_chat(other, 0, "Ana", text="elsewhere")).id == 1
        assert (await store.add_chat(second, 0, "Ana", text="two")).id == 2
        return first, other, second


async def _old_lines(url: str, lines: list[tuple[int, str]]) -> None:
    """Store ``lines`` (match id, text) with SQL, as 0016 stored them: no number."""
    engine = make_engine(url)
    try:
        async with engine.begin() as connection:
            for match_id, said in lines:
                await connection.execute(
                    text(
                        "INSERT INTO chat (match_id, seat, name, text, round_index, seq, created_at)"
                        " VALUES (:m, 0, 'Ana', :t, 0, 0, CURRENT_TIMESTAMP)"
                    ),
                    {"m": match_id, "t": said},
                )
    finally:
        await engine.dispose()


async def _room_chat(url: str, match_id: int, add: str | None = None) -> list[tuple[int, Any]]:
    """The room chat up to match ``match_id`` as (number, text), after storing ``add`` there."""
    async with Store(url) as store:
        if add is not None:
            await store.add_chat(match_id, 1, "Budi", text=add)
        _, rows = await store.load_room_chat(match_id)
        return [(row.id, row.text) for row in rows]


async def _stored_numbers(url: str) -> dict[str, int]:
    """Each stored line's text → the number stored in its row (read with SQL, not by the store)."""
    engine = make_engine(url)
    try:
        async with engine.connect() as connection:
            rows = await connection.execute(text("SELECT text, number FROM chat"))
            return {said: number for said, number in rows}
    finally:
        await engine.dispose()


def test_chat_numbers_are_stored_with_the_lines_and_migrate_down_and_up(database_url: str) -> None:  # noqa: F811
    first, other, second = asyncio.run(_first_lines(database_url))
    assert asyncio.run(_stored_numbers(database_url)) == {"one": 1, "elsewhere": 1, "two": 2}
    migrate(database_url, "0016")
    asyncio.run(_old_lines(database_url, [(second, "three"), (other, "again"), (first, "late")]))
    migrate(database_url, "head")
    # numbered as 0016 read them: by id among the room's lines, whichever of its matches holds them
    assert asyncio.run(_room_chat(database_url, second, add="five")) == [
        (1, "one"),
        (2, "two"),
        (3, "three"),
        (4, "late"),
        (5, "five"),
    ]
    assert asyncio.run(_room_chat(database_url, other)) == [(1, "elsewhere"), (2, "again")]
    assert asyncio.run(_room_chat(database_url, first)) == [(1, "one"), (4, "late")]
    stored = {"one": 1, "two": 2, "three": 3, "late": 4, "five": 5, "elsewhere": 1, "again": 2}
    assert asyncio.run(_stored_numbers(database_url)) == stored
