"""Migration 0015: ``seats.cover`` holds only the store's covers (`app.store.models.SEAT_COVERS`)
or NULL, on SQLite (a table rebuilt in batch mode) and PostgreSQL (a new scratch database, since
the test migrates down and up again); down to 0014 drops the check, up again clears a value the
store never wrote."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from app.store import SeatSpec, Store, sqlite_url
from app.store.db import make_engine
from tests.adminkit import POSTGRES_URL, migrate, scratch_postgres

SEATS = [SeatSpec("human", name="Ana", token_hash="a", seat=0), SeatSpec("bot", bot_level="easy", seat=1)]


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A new SQLite file, or a new PostgreSQL database dropped after the test."""
    if request.param == "sqlite":
        yield sqlite_url(tmp_path)
        return
    if not POSTGRES_URL:
        pytest.skip("DOMENG_TEST_POSTGRES_URL is not set")
    with scratch_postgres() as url:
        yield url


async def _set_cover(url: str, cover: str | None) -> str | None:
    """Set seat 0's cover to ``cover`` with SQL, past the store's own check (None: only read it);
    what it reads then ('refused' when the database refused it)."""
    engine = make_engine(url)
    try:
        try:
            async with engine.begin() as connection:
                if cover is not None:
                    update = text("UPDATE seats SET cover = :cover WHERE seat = 0")
                    await connection.execute(update, {"cover": cover})
        except IntegrityError:
            return "refused"
        async with engine.connect() as connection:
            found: str | None = (
                await connection.execute(text("SELECT cover FROM seats WHERE seat = 0"))
            ).scalar_one()
            return found
    finally:
        await engine.dispose()


async def _new_match(url: str) -> None:
    async with Store(url) as store:  # migrates to the head
        await store.create_match("cover-check", "domeng", {}, 2, 30.0, "h", SEATS)


def test_a_seats_cover_is_one_the_store_writes(database_url: str) -> None:
    asyncio.run(_new_match(database_url))
    assert asyncio.run(_set_cover(database_url, "covered")) == "covered"
    assert asyncio.run(_set_cover(database_url, "asleep")) == "refused"
    assert asyncio.run(_set_cover(database_url, "stand_in")) == "stand_in"  # the refusal changed nothing
    migrate(database_url, "0014")
    assert asyncio.run(_set_cover(database_url, "asleep")) == "asleep"  # no check before 0015
    migrate(database_url, "head")
    assert asyncio.run(_set_cover(database_url, None)) is None  # a cover the store never wrote: cleared
    assert asyncio.run(_set_cover(database_url, "timed_out")) == "timed_out"
    assert asyncio.run(_set_cover(database_url, "asleep")) == "refused"
