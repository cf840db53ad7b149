"""The writer's action rows through `app.store.driver_sql.DriverStatement` (issue 15): stored
byte for byte as SQLAlchemy Core's `Connection.execute` stores them, on SQLite and on PostgreSQL
(when DOMENG_TEST_POSTGRES_URL is set); on the standard library's sqlite3 (the writer's thread)
run on the driver's connection itself, its errors SQLAlchemy's."""

from __future__ import annotations

import asyncio
import random
import sqlite3
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import bindparam, insert, update
from sqlalchemy.dialects import sqlite
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.types import TypeDecorator

from app.store import NotFoundError, RoundEnd, Store, TallySpec, sqlite_url
from app.store.batches import (
    _INSERT_ACTION_ROWS,
    insert_actions,
    insert_actions_core,
    set_match,
    turn_values,
    update_match,
)
from app.store.db import SQLITE_BEGIN_OPTION, make_sync_engine
from app.store.driver_sql import DriverStatement, run_sqlite
from app.store.models import Match, MatchAction, MatchTurn, UTCDateTime, sqlite_datetime_text
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
        "SELECT version, turn_at IS NOT NULL, handed_fence, handed_at FROM match_turns "
        f"WHERE match_id = {int(match_id)}"
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
        update(Match).where(Match.id == bindparam("match")).values(status=bindparam("s"), closed_reason=None),
        ("match", "s"),
    )
    dialect = sqlite.dialect()
    assert statement.sql(dialect) == "UPDATE matches SET status=?, closed_reason=? WHERE matches.id = ?"
    assert statement.sql(dialect) is statement.sql(dialect)


def test_a_statement_missing_a_value_it_needs_is_refused() -> None:
    statement = DriverStatement(insert(MatchAction).values(match_id=bindparam("match")), ("seq",))
    with pytest.raises(ValueError, match="'match'"):
        statement.sql(sqlite.dialect())


# -- the standard library's sqlite3: the writer's statements on the driver's connection ------------


def _sync_engine(url: str) -> Any:
    return make_sync_engine(url).execution_options(**{SQLITE_BEGIN_OPTION: "BEGIN IMMEDIATE"})


def test_on_sqlite3_action_rows_are_stored_as_core_stores_them(tmp_path: Path) -> None:
    """The writer's thread (sqlite3): `DriverStatement` (run on the driver's connection) stores
    what `Connection.execute` stores, and counts the rows it changed."""
    url = sqlite_url(tmp_path / "data")
    core, driver = asyncio.run(_with_store(url, _two_rounds))
    engine = _sync_engine(url)
    try:
        with engine.connect() as connection:
            with connection.begin():
                insert_actions_core(connection, _rows(core))
            with connection.begin():
                insert_actions(connection, _rows(driver))
                changed = _INSERT_ACTION_ROWS.execute(connection, [_rows(driver)[0] | {"seq": 9}])
            stored = _stored(connection, core), _stored(connection, driver)
    finally:
        engine.dispose()
    assert changed == 1
    assert stored[0] == {"actions": stored[1]["actions"][:3], "match": stored[1]["match"]}


async def _two_rounds(store: Store) -> tuple[int, int]:
    return (await new_round(store))[0], (await new_round(store))[0]


def test_on_sqlite3_a_broken_constraint_is_sqlalchemys_error_and_undoes_its_transaction(
    tmp_path: Path,
) -> None:
    """`run_sqlite` raises the driver's error as SQLAlchemy does (the store makes an
    IntegrityError a `ConflictError`), and the transaction rolls back as any other."""
    url = sqlite_url(tmp_path / "data")
    match_id = asyncio.run(_with_store(url, new_round))[0]
    engine = _sync_engine(url)
    try:
        with engine.connect() as connection:
            with pytest.raises(IntegrityError) as raised, connection.begin():
                insert_actions(connection, _rows(match_id))
                insert_actions(connection, _rows(match_id)[:1])  # seq 0 again
            assert isinstance(raised.value.orig, sqlite3.IntegrityError)
            assert "INSERT INTO actions" in str(raised.value.statement)
            assert not connection.in_transaction()
            with connection.begin():
                assert run_sqlite(connection, "DELETE FROM actions WHERE match_id = ?", [(match_id,)]) == 0
                insert_actions(connection, _rows(match_id)[:1])  # the connection goes on
            assert len(_stored(connection, match_id)["actions"]) == 1
    finally:
        engine.dispose()


def _match_row(connection: Connection, match_id: int) -> tuple[Any, ...]:
    options = "CAST(options AS TEXT)" if connection.dialect.name == "sqlite" else "options::text"
    return tuple(
        connection.exec_driver_sql(
            f"SELECT version, unattended_rounds, hints, {options}, turn_at IS NOT NULL, "
            "handed_fence, handed_at FROM matches JOIN match_turns ON match_id = id "
            f"WHERE id = {int(match_id)}"
        ).one()
    )


def test_set_match_stores_what_update_match_stores(database_url: str) -> None:
    """A deal's UPDATE of its match (`set_match`, a `DriverStatement` per set of columns) and
    SQLAlchemy Core's (`update_match`) store the same row, and a match that is not there is
    NotFoundError; on sqlite3 (the writer's thread) and on PostgreSQL."""
    options = {"camat_target": 0, "note": 'é "q"'}
    values = {"version": 7, "unattended_rounds": 2, "hints": True, "options": options}

    def write(connection: Connection, core: int, driver: int) -> tuple[Any, Any]:
        update_match(connection, core, values | turn_values())
        set_match(connection, driver, values, turn=True)
        with pytest.raises(NotFoundError):
            set_match(connection, -1, values, turn=True)
        return _match_row(connection, core), _match_row(connection, driver)

    async def body(store: Store) -> tuple[Any, Any]:
        core, driver = await _two_rounds(store)
        async with store.engine.connect() as connection:
            marked = update(MatchTurn).values(handed_fence=3).where(MatchTurn.match_id.in_([core, driver]))
            await connection.execute(marked)
            await connection.commit()
        if not store.is_sqlite:
            async with store.engine.begin() as connection:
                return await connection.run_sync(write, core, driver)
        engine = _sync_engine(database_url)
        try:
            with engine.connect() as sync, sync.begin():
                return write(sync, core, driver)
        finally:
            engine.dispose()

    core, driver = asyncio.run(_with_store(database_url, body))
    assert core == driver
    assert core[:3] == (7, 2, True) and core[4:] == (True, None, None)


def test_the_action_that_ends_a_round_stores_the_matchs_version_once(tmp_path: Path) -> None:
    """`Store.append_action` with the round's end: the action's UPDATE of its match stores the
    version; the round's end adds none (statements seen by sqlite3 on the writer's connection on
    the event loop, where a batch runs when the database is free)."""
    statements: list[str] = []

    async def body(store: Store) -> None:
        match_id = (await new_round(store))[0]
        writer = store._sqlite  # the writer's connection on the loop (a free database): the one to watch
        assert writer is not None and writer._inline is not None
        driver = writer._inline.connection.driver_connection
        assert driver is not None
        driver.set_trace_callback(statements.append)
        tallies = [TallySpec(seat, stones=1) for seat in range(5)]
        end = RoundEnd({"match_over": False}, 3, tallies, False)
        await store.append_action(match_id, 0, 0, 2, 0, {"seat": 0, "play": "6-6"}, "human", end)
        stored = await store.load_match_by_id(match_id)
        assert stored is not None and stored.version == 2

    asyncio.run(_with_store(sqlite_url(tmp_path / "data"), body))
    updates = [s.split(" SET ", 1)[0] for s in statements if s.startswith("UPDATE")]
    assert updates == ["UPDATE match_turns", "UPDATE rounds"]


def test_no_rows_run_nothing(tmp_path: Path) -> None:
    """`DriverStatement.execute` of no rows runs no statement (none with no parameters) and
    changes nothing."""
    url = sqlite_url(tmp_path / "data")
    match_id = asyncio.run(_with_store(url, new_round))[0]
    engine = _sync_engine(url)
    try:
        with engine.connect() as connection:
            with connection.begin():
                assert _INSERT_ACTION_ROWS.execute(connection, []) == 0
            assert _stored(connection, match_id)["actions"] == []
    finally:
        engine.dispose()


def test_sqlite_binds_a_datetime_in_one_step_to_sqlalchemys_text() -> None:
    """On SQLite `UTCDateTime` binds through `sqlite_datetime_text`, which makes the text
    SQLAlchemy's own processors make (`process_bind_param`, then SQLite's DATETIME), for times in
    any zone, with and without microseconds; a naive time is refused as before."""
    dialect = sqlite.dialect()
    typed = UTCDateTime().dialect_impl(dialect)
    assert typed.bind_processor(dialect) is sqlite_datetime_text
    general = TypeDecorator.bind_processor(typed, dialect)
    assert general is not None
    draw = random.Random(15)
    for _ in range(20000):
        zone = timezone(timedelta(minutes=draw.randint(-900, 900)))
        micro = draw.choice([0, draw.randint(0, 999_999)])
        fields = (draw.randint(2, 9998), draw.randint(1, 12), draw.randint(1, 28), draw.randint(0, 23))
        value = datetime(*fields, draw.randint(0, 59), draw.randint(0, 59), micro, tzinfo=zone)
        assert sqlite_datetime_text(value) == general(value)
    assert sqlite_datetime_text(None) is None
    with pytest.raises(ValueError, match="naive"):
        sqlite_datetime_text(datetime(2026, 12, 6))
