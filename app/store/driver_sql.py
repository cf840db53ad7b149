"""A Core statement compiled once per dialect to the driver's own SQL and run with positional
parameters (`DriverStatement`): the store writer's hottest statements (issue 15) skip SQLAlchemy's
per-execution compile cache lookup and parameter building while the schema stays their source. On
the standard library's sqlite3 (the SQLite writer's connections, `app.store.sqlite_thread`) they
run on its connection itself (`run_sqlite`), skipping SQLAlchemy's execution context too."""

from __future__ import annotations

import operator
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql.dml import UpdateBase

__all__ = ["DriverStatement", "run_sqlite"]


@dataclass(frozen=True, slots=True)
class _Compiled:
    """A statement's SQL for one dialect and how a row of parameters becomes its positional ones."""

    sql: str
    sqlite3: bool
    """Whether the dialect's driver is the standard library's sqlite3 (`run_sqlite`)."""
    plan: tuple[tuple[str | None, Callable[[Any], Any] | None, Any], ...]
    """Per position: the row's key (None: the statement's own value, the third item, processed
    already) and the bind processor of its type for this dialect (None: the value as it is)."""

    keyed: Callable[[Mapping[str, Any]], tuple[Any, ...]] | None = None
    """When every position is a row's key (and there are two or more): the row's values in the
    statement's order, in one call (`operator.itemgetter`); `processes` then converts some."""
    processes: tuple[tuple[int, Callable[[Any], Any]], ...] = ()
    """With `keyed`: the positions whose value goes through its bind processor."""

    def parameters(self, row: Mapping[str, Any]) -> tuple[Any, ...]:
        """``row``'s positional parameters for `sql` (KeyError for a row without a key)."""
        keyed = self.keyed
        if keyed is not None:  # the hot statements' case: a row's values fetched in C
            values = list(keyed(row))
            for index, process in self.processes:
                values[index] = process(values[index])
            return tuple(values)
        out = []
        for key, convert, value in self.plan:
            if key is None:
                out.append(value)
            elif convert is None:
                out.append(row[key])
            else:
                out.append(convert(row[key]))
        return tuple(out)


class DriverStatement:
    """``statement`` (an INSERT or UPDATE of SQLAlchemy Core with named bind parameters, e.g.
    ``update(MatchTurn).where(MatchTurn.match_id == bindparam("match")).values(version=bindparam("v"))``)
    run as the driver's SQL text with positional parameters (`Connection.exec_driver_sql`), for
    rows that always give the same ``keys``.

    The text is the one SQLAlchemy compiles for the connection's dialect (once per dialect) and
    each value goes through the bind processor SQLAlchemy's type for it would apply (JSON dumped,
    `app.store.models.UTCDateTime` made naive UTC and formatted on SQLite…), so the rows stored are
    the ones `Connection.execute` would store; what it skips is the statement cache lookup and
    the per-execution parameter machinery (issue 15: a transaction of 7 action rows and their 7
    version UPDATEs cost 533 µs of CPU through `Connection.execute`). On sqlite3, inside a
    transaction, it runs on the driver's connection itself (`run_sqlite`: no execution context
    either; a connection whose engine has cursor event listeners, ``before_cursor_execute`` or
    ``after_cursor_execute``, goes through `Connection.exec_driver_sql` so that they see it).
    Errors are SQLAlchemy's own (the driver's wrapped, as `Connection.exec_driver_sql` wraps
    them). The dialect must use a positional paramstyle (``qmark`` for sqlite3,
    ``numeric_dollar`` for asyncpg); ValueError otherwise."""

    def __init__(self, statement: UpdateBase, keys: Sequence[str]) -> None:
        self.statement = statement
        self.keys = tuple(keys)
        self._compiled: weakref.WeakKeyDictionary[Dialect, _Compiled] = weakref.WeakKeyDictionary()

    def sql(self, dialect: Dialect) -> str:
        """The statement's SQL text for ``dialect``, with its positional parameter markers."""
        return self._compile(dialect).sql

    def execute(self, connection: Connection, rows: Sequence[Mapping[str, Any]]) -> int:
        """Run the statement once per row of ``rows`` (one executemany; a row maps each of
        ``keys`` to its Python value, other keys are ignored); the rows changed in all (the
        cursor's ``rowcount``, where the driver counts them). Raises KeyError for a row without
        one of ``keys``, SQLAlchemy's errors for the database's. No rows: nothing runs, 0."""
        if not rows:
            return 0
        compiled = self._compiled.get(connection.dialect)
        if compiled is None:
            compiled = self._compile(connection.dialect)
        parameters = [compiled.parameters(row) for row in rows]
        if compiled.sqlite3 and connection.in_transaction() and not _cursor_events(connection):
            return run_sqlite(connection, compiled.sql, parameters)
        return int(connection.exec_driver_sql(compiled.sql, parameters).rowcount)

    def _compile(self, dialect: Dialect) -> _Compiled:
        found = self._compiled.get(dialect)
        if found is not None:
            return found
        compiled: Any = self.statement.compile(
            dialect=dialect, column_keys=list(self.keys), for_executemany=True
        )
        if not compiled.positional or compiled.positiontup is None:
            raise ValueError(f"{dialect.name} binds parameters by name ({dialect.paramstyle})")
        plan = []
        for name in compiled.positiontup:
            bind = compiled.binds[name]
            process = bind.type.dialect_impl(dialect).bind_processor(dialect)
            if name in self.keys:
                plan.append((name, process, None))
            elif bind.required:
                raise ValueError(f"no value for {name!r}: keys {self.keys} lack it")
            elif bind.callable is not None:
                raise ValueError(f"the value of {name!r} is computed at each execution")
            else:
                value = bind.value if process is None else process(bind.value)
                plan.append((None, None, value))
        sqlite3 = dialect.name == "sqlite" and dialect.driver == "pysqlite"
        keyed = None
        processes: tuple[tuple[int, Callable[[Any], Any]], ...] = ()
        if len(plan) > 1 and all(key is not None for key, _, _ in plan):
            keyed = operator.itemgetter(*(key for key, _, _ in plan))
            processes = tuple((i, process) for i, (_, process, _) in enumerate(plan) if process is not None)
        found = self._compiled[dialect] = _Compiled(compiled.string, sqlite3, tuple(plan), keyed, processes)
        return found


def _cursor_events(connection: Connection) -> bool:
    """Whether ``connection``'s engine has listeners of its statements' execution."""
    events = connection.engine.dispatch
    return bool(events.before_cursor_execute or events.after_cursor_execute)


def run_sqlite(connection: Connection, sql: str, parameters: Sequence[Sequence[Any]] = ()) -> int:
    """Run ``sql`` on the standard library's sqlite3 connection under ``connection`` (a
    SQLAlchemy connection of the ``sqlite+pysqlite`` dialect, which is in a transaction or does
    not need one): once with no parameters, once with the one row of ``parameters``, or once per
    row (executemany). Returns the rows changed. What SQLAlchemy's `Connection.exec_driver_sql`
    adds, an execution context and its result, costs about 15 µs of CPU per statement (issue 15:
    the writer's thread runs a few statements per batch, thousands of batches a minute). The
    driver's errors are raised as SQLAlchemy raises them (`sqlalchemy.exc.DBAPIError.instance`:
    an IntegrityError for a broken constraint…), and one that says the connection is closed
    invalidates ``connection``, as SQLAlchemy does."""
    driver = connection.connection.driver_connection
    assert driver is not None
    try:
        if not parameters:
            cursor = driver.execute(sql)
        elif len(parameters) == 1:
            cursor = driver.execute(sql, parameters[0])
        else:
            cursor = driver.executemany(sql, parameters)
    except Exception as error:
        dialect = connection.dialect
        dbapi_error = dialect.loaded_dbapi.Error
        if not isinstance(error, dbapi_error):
            raise
        invalidated = dialect.is_disconnect(error, connection.connection, None)
        if invalidated:
            connection.invalidate(error)
        raise DBAPIError.instance(
            sql,
            list(parameters),
            error,
            dbapi_error,
            connection_invalidated=invalidated,
            dialect=dialect,
            ismulti=len(parameters) > 1,
        ) from error
    rowcount: int = cursor.rowcount
    cursor.close()
    return rowcount
