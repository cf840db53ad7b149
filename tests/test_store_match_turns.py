"""Migration 0025: a match's version and turn clock live in its narrow ``match_turns`` row
(`app.store.models.MatchTurn`), the only row a move updates (issue 15). On SQLite and
PostgreSQL (a new scratch database, since the test migrates down and up again): the upgrade
carries every match's values over and the downgrade puts them back; a claim keeps a handoff's mark
only for the owner right after the one that handed over (docs/cluster.md, "Handoff"); a deleted
match takes its row with it."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import select, text
from sqlalchemy.engine import Connection

from app.store import FencedOutError, Store
from app.store.batches import began_turn
from app.store.fencing import claim_fences
from app.store.models import Match, MatchTurn
from tests.adminkit import migrate, sql_rows
from tests.test_store import a_pass, new_match, new_round
from tests.test_store_cover_check import database_url  # noqa: F401  (a fixture)


async def _matches(url: str) -> tuple[int, int, int]:
    """Three matches: one waiting (version 0, no turn), one with a move (version 2, its turn
    stamped), one handed over (version 1, fence 5, marked with fence 5); their ids."""
    async with Store(url) as store:
        waiting, _ = await new_match(store)
        moved, _ = await new_round(store)
        await store.append_action(moved, 0, 0, 2, 0, a_pass(0), "bot")
        handed, _ = await new_round(store)
        async with store.engine.begin() as connection:
            await connection.execute(text(f"UPDATE matches SET fence = 5 WHERE id = {handed}"))
            await connection.run_sync(lambda sync: began_turn(sync, handed, 4.0, handed=True))
        return waiting, moved, handed


QUERY = (
    "SELECT {key}, version, turn_at IS NOT NULL, handed_fence, handed_at IS NOT NULL "
    "FROM {table} ORDER BY {key}"
)


def test_the_migration_carries_each_matchs_version_and_turn_over_and_back(database_url: str) -> None:  # noqa: F811
    waiting, moved, handed = asyncio.run(_matches(database_url))
    expected = [(waiting, 0, False, None, False), (moved, 2, True, None, False), (handed, 1, True, 5, True)]
    at_head = sql_rows(database_url, text(QUERY.format(key="match_id", table="match_turns")))
    assert at_head == expected
    turn_at = sql_rows(database_url, text("SELECT match_id, turn_at FROM match_turns ORDER BY match_id"))

    migrate(database_url, "0024")
    assert sql_rows(database_url, text(QUERY.format(key="id", table="matches"))) == expected
    assert sql_rows(database_url, text("SELECT id, turn_at FROM matches ORDER BY id")) == turn_at

    migrate(database_url, "head")
    assert sql_rows(database_url, text(QUERY.format(key="match_id", table="match_turns"))) == expected
    columns = sql_rows(database_url, text("SELECT * FROM matches"))
    assert len(columns[0]) == len(Match.__table__.c)  # the four columns left the wide row

    async def body() -> list[int | None]:
        async with Store(database_url) as store:
            rows = [await store.load_match_by_id(m) for m in (waiting, moved, handed)]
            return [None if row is None else row.version for row in rows]

    assert asyncio.run(body()) == [0, 2, 1]


def test_a_claim_keeps_a_handoffs_mark_only_for_the_next_owner(database_url: str) -> None:  # noqa: F811
    """The owner right after the handing one (token 6 after fence 5) keeps the mark; a claim
    refused (token 4) changes nothing; the owner after that (token 7) drops it."""
    handed = asyncio.run(_matches(database_url))[2]

    def mark(connection: Connection) -> tuple[Any, ...]:
        row = connection.execute(
            select(Match.fence, MatchTurn.handed_fence, MatchTurn.handed_at.is_not(None))
            .join(MatchTurn, MatchTurn.match_id == Match.id)
            .where(Match.id == handed)
        ).one()
        return tuple(row)

    def claim(connection: Connection, token: int) -> tuple[Any, ...]:
        code = connection.execute(select(Match.code).where(Match.id == handed)).scalar_one()
        claim_fences(connection, code, token)
        return mark(connection)

    async def body() -> list[Any]:
        seen: list[Any] = []
        async with Store(database_url) as store:
            async with store.engine.begin() as connection:
                seen.append(await connection.run_sync(claim, 6))
            with pytest.raises(FencedOutError):
                async with store.engine.begin() as connection:
                    await connection.run_sync(claim, 4)
            async with store.engine.connect() as connection:
                seen.append(await connection.run_sync(mark))
            async with store.engine.begin() as connection:
                seen.append(await connection.run_sync(claim, 7))
        return seen

    assert asyncio.run(body()) == [(6, 5, True), (6, 5, True), (7, None, False)]


def test_a_deleted_match_takes_its_turn_row_with_it(database_url: str) -> None:  # noqa: F811
    async def body() -> int:
        async with Store(database_url) as store:
            match_id, _ = await new_match(store)
            await store.abandon(match_id, "idle", version=3)
            abandoned = await store.load_match_by_id(match_id)
            assert abandoned is not None and abandoned.version == 3
            async with store.engine.begin() as connection:
                await connection.execute(text("UPDATE matches SET finished_at = '2000-01-01'"))
            return await store.prune_unplayed(datetime(2001, 1, 1, tzinfo=UTC))

    assert asyncio.run(body()) == 1
    assert sql_rows(database_url, text("SELECT match_id FROM match_turns")) == []
