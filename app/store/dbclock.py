"""The database's own clock, in SQL: seconds since the epoch as the database server tells them, so
that two times a room's turn is measured between (a move stored by one process, the room loaded by
another) come from one clock whatever the processes' own clocks say (docs/cluster.md)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Float
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import FunctionElement

__all__ = ["db_now_s"]


class db_now_s(FunctionElement[float]):  # noqa: N801 (a SQL function, named as one)
    """Now on the database's clock, in seconds since the epoch (a float, microseconds on
    PostgreSQL, milliseconds on SQLite): PostgreSQL's ``clock_timestamp()`` (the time the statement
    runs, not its transaction's start), SQLite's ``julianday('now')``. Use it in a statement:
    ``update(Match).values(turn_at=db_now_s())``, ``select(db_now_s())``."""

    type = Float()
    inherit_cache = True


@compiles(db_now_s)
def _postgresql(element: db_now_s, compiler: Any, **kw: Any) -> str:
    return "CAST(EXTRACT(EPOCH FROM clock_timestamp()) AS DOUBLE PRECISION)"


@compiles(db_now_s, "sqlite")
def _sqlite(element: db_now_s, compiler: Any, **kw: Any) -> str:
    return "((julianday('now') - 2440587.5) * 86400.0)"
