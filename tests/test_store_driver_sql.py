"""The writer's action rows through `app.store.driver_sql.DriverStatement` (issue 15): stored
byte for byte as SQLAlchemy Core's `Connection.execute` stores them, on SQLite and on PostgreSQL
(when DOMENG_TEST_POSTGRES_URL is set)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from sqlalchemy import bindparam, insert, update
from sqlalchemy.dialects import sqlite
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncConnection

from app.store import Store
from app.store.batches import insert_actions, insert_actions_core
from app.store.driver_sql import DriverStatement
from app.store.models import Match, MatchAction
from tests.test_store import _delete_postgres_matches, database_url, new_round

__all__ = ["_delete_postgres_matches", "database_url"]  # fixtures, shared with test_store

ACTIONS = [
    {"seat": 3, "play": "6-6"},
    {"seat": 4, "play": "3-6", "end": "R", "note": 'é ✓ "quoted" \\ back'},
    {"seat": 0, "pass": True, "nested": {"list": [1, 2.5, None, False]}},
]
TIMES = [
    datetime(2026, 12, 6, 1, 2, 3, 456789, tzinfo=UTC),
    datetime(2026, 12, 6, 1, 2, 3, tzinfo=UTC),  # no microseconds
    datetime(2026, 12, 6, 9, 0, 0, 1, tzinfo=timezone(timedelta(hours=8))),  # not UTC
]


def _rows(match_id: int) -> list[dict[str, Any]]:
    return [
        {
            "match_id": match_id,
            "round_index": 0,
            "seq": seq,
            "version": 2 + seq,
            "seat": action["seat"],
            "action": action,
            "actor": ("human", "bot", "timer")[seq],
            "created_at": at,
        }
        for seq, (action, at) in enumerate(zip(ACTIONS, TIMES, strict=True))
    ]


def _stored(connection: Connection, match_id: int) -> dict[str, list[tuple[Any, ...]]]:
    """The match's action rows and its row, as the database holds them (text, not read through
    SQLAlchemy's types)."""
    if connection.dialect.name == "sqlite":
        columns = "CAST(action AS TEXT), actor, CAST(created_at AS TEXT), typeof(created_at)"
    else:
        columns = "action::text, actor, created_at::text, pg_typeof(created_at)::text"
    actions = connection.exec_driver_sql(
        f"SELECT round_index, seq, version, seat, {columns} FROM actions "
        f"WHERE match_id = {int(match_id)} ORDER BY seq"
    ).all()
    match = connection.exec_driver_sql(
        "SELECT version, turn_at IS NOT NULL, handed_fence, handed_at FROM matches "
        f"WHERE id = {int(match_id)}"
    ).all()
    return {"actions": [tuple(row) for row in actions], "match": [tuple(row) for row in match]}


def test_action_rows_are_stored_as_sqlalchemy_core_stores_them(database_url: str) -> None:
    async def body(store: Store) -> tuple[Any, Any]:
        core, driver = (await new_round(store))[0], (await new_round(store))[0]
        async with store.engine.connect() as connection:
            await _write(connection, insert_actions_core, _rows(core))
            await _write(connection, insert_actions, _rows(driver))
            return (
                await connection.run_sync(_stored, core),
                await connection.run_sync(_stored, driver),
            )

    core, driver = asyncio.run(_with_store(database_url, body))
    assert len(core["actions"]) == len(ACTIONS)
    assert core == driver
    assert core["match"] == [(4, True, None, None)]


async def _write(connection: AsyncConnection, write: Any, rows: list[dict[str, Any]]) -> None:
    await connection.begin()
    await connection.run_sync(write, rows)
    await connection.commit()


async def _with_store(url: str, body: Any) -> Any:
    async with Store(url) as store:
        return await body(store)


def test_a_statement_is_compiled_once_per_dialect_with_its_own_values_bound() -> None:
    statement = DriverStatement(
        update(Match).where(Match.id == bindparam("match")).values(version=bindparam("v"), handed_at=None),
        ("match", "v"),
    )
    dialect = sqlite.dialect()
    assert statement.sql(dialect) == "UPDATE matches SET version=?, handed_at=? WHERE matches.id = ?"
    assert statement.sql(dialect) is statement.sql(dialect)


def test_a_statement_missing_a_value_it_needs_is_refused() -> None:
    statement = DriverStatement(insert(MatchAction).values(match_id=bindparam("match")), ("seq",))
    with pytest.raises(ValueError, match="'match'"):
        statement.sql(sqlite.dialect())
