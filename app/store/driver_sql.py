"""A Core statement compiled once per dialect to the driver's own SQL and run with positional
parameters (`DriverStatement`): the store writer's hottest statements (issue 15) skip SQLAlchemy's
per-execution compile cache lookup and parameter building while the schema stays their source."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Connection, CursorResult, Dialect
from sqlalchemy.sql.dml import UpdateBase

__all__ = ["DriverStatement"]


@dataclass(frozen=True, slots=True)
class _Compiled:
    """A statement's SQL for one dialect and how a row of parameters becomes its positional ones."""

    sql: str
    plan: tuple[tuple[str | None, Callable[[Any], Any] | None, Any], ...]
    """Per position: the row's key (None: the statement's own value, the third item, processed
    already) and the bind processor of its type for this dialect (None: the value as it is)."""

    def parameters(self, row: Mapping[str, Any]) -> tuple[Any, ...]:
        values = []
        for key, process, value in self.plan:
            if key is None:
                values.append(value)
            elif process is None:
                values.append(row[key])
            else:
                values.append(process(row[key]))
        return tuple(values)


class DriverStatement:
    """``statement`` (an INSERT or UPDATE of SQLAlchemy Core with named bind parameters, e.g.
    ``update(Match).where(Match.id == bindparam("match")).values(version=bindparam("new_version"))``)
    run as the driver's SQL text with positional parameters (`Connection.exec_driver_sql`), for
    rows that always give the same ``keys``.

    The text is the one SQLAlchemy compiles for the connection's dialect (once per dialect) and
    each value goes through the bind processor SQLAlchemy's type for it would apply (JSON dumped,
    `app.store.models.UTCDateTime` made naive UTC and formatted on SQLite…), so the rows stored are
    the ones `Connection.execute` would store; what it skips is the statement cache lookup and
    the per-execution parameter machinery (issue 15: a transaction of 7 action rows and their 7
    version UPDATEs cost 533 µs of CPU through `Connection.execute`). Errors are SQLAlchemy's own
    (`exec_driver_sql` wraps the driver's). The dialect must use a positional paramstyle
    (``qmark`` for sqlite3, ``numeric_dollar`` for asyncpg); ValueError otherwise."""

    def __init__(self, statement: UpdateBase, keys: Sequence[str]) -> None:
        self.statement = statement
        self.keys = tuple(keys)
        self._compiled: weakref.WeakKeyDictionary[Dialect, _Compiled] = weakref.WeakKeyDictionary()

    def sql(self, dialect: Dialect) -> str:
        """The statement's SQL text for ``dialect``, with its positional parameter markers."""
        return self._compile(dialect).sql

    def execute(self, connection: Connection, rows: Sequence[Mapping[str, Any]]) -> CursorResult[Any]:
        """Run the statement once per row of ``rows`` (one executemany; a row maps each of
        ``keys`` to its Python value, other keys are ignored); the cursor's result (its
        ``rowcount``: rows changed in all, where the driver counts them). Raises KeyError for a row
        without one of ``keys``, SQLAlchemy's errors for the database's."""
        compiled = self._compiled.get(connection.dialect)
        if compiled is None:
            compiled = self._compile(connection.dialect)
        parameters = [compiled.parameters(row) for row in rows]
        return connection.exec_driver_sql(compiled.sql, parameters)

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
        found = self._compiled[dialect] = _Compiled(compiled.string, tuple(plan))
        return found
