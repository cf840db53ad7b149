"""Migration 0016: ``matches.bot_share`` keeps whom a room's bot decisions count for, on SQLite (a
table rebuilt in batch mode) and PostgreSQL (a new scratch database, since the test migrates down
and up again): stored with a new match and read back with its room; down to 0015 drops it, up
again reads every older match as not known (its room then counts alone, or as its hub knows its
creator)."""

from __future__ import annotations

import asyncio

from app.store import Store
from tests.adminkit import migrate
from tests.test_store_cover_check import SEATS, database_url  # noqa: F401  (a fixture)


async def _stored_share(url: str, code: str, share: str | None = None) -> str | None:
    """Store a new match of room ``code`` with ``share`` when given (migrating to the head), then
    read its room back: its stored share."""
    async with Store(url) as store:
        if share is not None:
            await store.create_match(code, "domeng", {}, 2, 30.0, "h", SEATS, bot_share=share)
        row = await store.load_room(code)
        assert row is not None
        return row.match.bot_share


def test_a_matchs_bot_share_is_stored_and_migrates_down_and_up(database_url: str) -> None:  # noqa: F811
    assert asyncio.run(_stored_share(database_url, "shared", "0123456789abcdef")) == "0123456789abcdef"
    migrate(database_url, "0015")
    migrate(database_url, "head")
    assert asyncio.run(_stored_share(database_url, "shared")) is None
