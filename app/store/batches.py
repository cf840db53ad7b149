"""A batch of queued writes (`app.store.writer`'s group commit): the queued operation, and running a
batch in one transaction, fences checked first (docs/cluster.md) and consecutive action rows
inserted together."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Generic, TypeVar

from sqlalchemy import bindparam, insert, select, update
from sqlalchemy.engine import Connection

from app.store.dbclock import db_now_s
from app.store.driver_sql import DriverStatement
from app.store.errors import NotFoundError, store_error
from app.store.fencing import Refused, check_fence, lock_fences
from app.store.models import Match, MatchAction, MatchTurn

__all__ = [
    "ACTION_KEYS",
    "TURN_COLUMNS",
    "Op",
    "answer",
    "answer_all",
    "began_turn",
    "insert_actions",
    "insert_actions_core",
    "run_ops",
    "set_match",
    "set_version",
    "turn_values",
    "update_match",
]

_T = TypeVar("_T")


@dataclass(slots=True)
class Op(Generic[_T]):
    """A queued write: ``run`` on the writer's connection, or, for `Store.append_action`, the
    action's ``row``, which the writer inserts together with the batch's other action rows;
    ``fence``: (match id, fencing token) checked first, or None."""

    future: asyncio.Future[_T]
    run: Callable[[Connection], _T] | None = None
    row: dict[str, Any] | None = None
    fence: tuple[int, int] | None = None
    rekeys: bool = False
    """``run`` may raise fences (a claim, Play again): fences read before it are stale."""
    long: bool = False
    """``run`` may take long (many rows: housekeeping), so SQLite runs its batch in the writer's
    thread, never on the event loop (`app.store.sqlite_thread.SqliteThread.run`)."""


_INSERT_ACTIONS: Final = insert(MatchAction)
TURN_COLUMNS: Final = frozenset(("version", "turn_at", "handed_fence", "handed_at"))
"""The columns of a match that live in its narrow `MatchTurn` row (migration 0025): `update_match`
and `set_match` write them there, the rest to its ``matches`` row."""
_ROWS: Final = ((Match, Match.id), (MatchTurn, MatchTurn.match_id))
"""A match's two rows, as (model, its match id column), in the order of `_split`'s parts."""
_TURN_BEGINS_NOW: Final = {"turn_at": db_now_s(), "handed_fence": None, "handed_at": None}
"""The `MatchTurn` values of a turn beginning now on the database's clock, no handoff marked."""
_SET_VERSIONS: Final = (
    update(MatchTurn).where(MatchTurn.match_id == bindparam("match")).values(version=bindparam("new_version"))
)
_SET_TURNS: Final = (
    update(MatchTurn)
    .where(MatchTurn.match_id == bindparam("match"))
    .values(version=bindparam("new_version"), **_TURN_BEGINS_NOW)
)
"""A move's version, and the next turn beginning now on the database's clock
(`MatchTurn.turn_at`): the narrow row alone, never the match's wide one (issue 15)."""
_FENCE: Final = (
    select(Match.fence).where(Match.id == MatchTurn.match_id).correlate(MatchTurn).scalar_subquery()
)
"""In an UPDATE of `MatchTurn`: its match's fence (`Match.fence`)."""
ACTION_KEYS: Final = ("match_id", "round_index", "seq", "version", "seat", "action", "actor", "created_at")
"""The columns of an action row (`Op.row`)."""
_INSERT_ACTION_ROWS: Final = DriverStatement(_INSERT_ACTIONS, ACTION_KEYS)
_SET_TURN_ROWS: Final = DriverStatement(_SET_TURNS, ("match", "new_version"))
_SET_VERSION_ROWS: Final = DriverStatement(_SET_VERSIONS, ("match", "new_version"))


def answer(op: Op[Any], result: Any = None, error: BaseException | None = None) -> None:
    """Tell ``op``'s caller its ``result`` or ``error`` (a `Refused` result raises its error), unless
    the caller was cancelled."""
    if op.future.done():  # the caller was cancelled; the write stands
        return
    if isinstance(result, Refused):
        error = result.error
    if error is not None:
        op.future.set_exception(store_error(error))
    else:
        op.future.set_result(result)


def answer_all(ops: Sequence[Op[Any]], results: Sequence[Any]) -> None:
    """`answer` each of ``ops`` with its result of ``results`` (as many, in order)."""
    for op, result in zip(ops, results, strict=True):
        answer(op, result)


def run_ops(connection: Connection, ops: Sequence[Op[Any]]) -> list[Any]:
    """Run ``ops`` in order on ``connection`` (inside a transaction); their results (`Refused`
    for a write its fence refused). Consecutive action rows go in together: one executemany INSERT
    and one version UPDATE per match, which is what makes actions cheap."""
    results: list[Any] = []
    rows: list[dict[str, Any]] = []
    fenced = {op.fence[0] for op in ops if op.fence is not None}
    known = lock_fences(connection, fenced) if fenced else {}  # match → its fence now
    for op in ops:
        if op.fence is not None:
            refused = check_fence(connection, known, *op.fence)
            if refused is not None:
                results.append(Refused(refused))
                continue
        if op.row is not None:
            rows.append(op.row)
            results.append(None)
            continue
        if rows:
            insert_actions(connection, rows)
            rows = []
        assert op.run is not None
        results.append(op.run(connection))
        if op.rekeys:
            known.clear()
    if rows:
        insert_actions(connection, rows)
    return results


def insert_actions(connection: Connection, rows: list[dict[str, Any]]) -> None:
    """Insert action ``rows`` (one executemany; each maps every one of `ACTION_KEYS` to its value)
    and set each match's version to its last row's; each move begins the next turn
    (`MatchTurn.turn_at`, on the database's clock), in the same statement, on the match's narrow
    row. Both run as the SQL SQLAlchemy compiles for the dialect, executed with positional
    parameters (`DriverStatement`: about half the CPU of `Connection.execute`, issue 15)."""
    _INSERT_ACTION_ROWS.execute(connection, rows)
    last = {row["match_id"]: row["version"] for row in rows}  # each match's last version
    _SET_TURN_ROWS.execute(connection, [{"match": m, "new_version": v} for m, v in last.items()])


def insert_actions_core(connection: Connection, rows: list[dict[str, Any]]) -> None:
    """`insert_actions` through `Connection.execute` (SQLAlchemy Core's full path): what the
    writer ran before; kept to check and measure `insert_actions` against."""
    connection.execute(_INSERT_ACTIONS, rows)
    last = {row["match_id"]: row["version"] for row in rows}
    connection.execute(_SET_TURNS, [{"match": m, "new_version": v} for m, v in last.items()])


def began_turn(connection: Connection, match_id: int, used_s: float = 0.0, handed: bool = False) -> None:
    """The match's turn in play began ``used_s`` seconds ago (0: now, a deal or a timer started
    afresh), on the database's clock (`MatchTurn.turn_at`); with ``handed``, its owner is handing
    the room over in an orderly way (`MatchTurn.handed_fence` := the fence its writes carry,
    `MatchTurn.handed_at` := now), otherwise that mark is cleared. Inside a transaction."""
    update_match(connection, match_id, turn_values(used_s, handed))


def turn_values(used_s: float = 0.0, handed: bool = False) -> dict[str, Any]:
    """`began_turn`'s column values, for an UPDATE of the match that sets more of it."""
    return {
        "turn_at": db_now_s() - used_s,
        "handed_fence": _FENCE if handed else None,
        "handed_at": db_now_s() if handed else None,
    }


def update_match(connection: Connection, match_id: int, values: dict[str, Any]) -> None:
    """Set ``values`` (column name → value or SQL expression) on match ``match_id``: one UPDATE of
    its ``matches`` row and one of its `MatchTurn` row (`TURN_COLUMNS`), each only when it has
    columns to set, inside a transaction; NotFoundError for no such match."""
    for (model, key), part in zip(_ROWS, _split(values), strict=True):
        if part and connection.execute(update(model).where(key == match_id).values(part)).rowcount != 1:
            raise NotFoundError(f"no match {match_id}")


def _split(values: dict[str, _T]) -> tuple[dict[str, _T], dict[str, _T]]:
    """``values`` (column name → value) by the row that holds each column, in `_ROWS`' order: the
    ``matches`` row's and the `MatchTurn` row's (`TURN_COLUMNS`)."""
    plain = {column: value for column, value in values.items() if column not in TURN_COLUMNS}
    turns = {column: value for column, value in values.items() if column in TURN_COLUMNS}
    return plain, turns


def set_match(connection: Connection, match_id: int, values: dict[str, Any], turn: bool = False) -> None:
    """`update_match` for ``values`` that are all plain values (column → Python value, no SQL
    expression), with ``turn``: `began_turn` now (`turn_values`' defaults) in the same UPDATE;
    run as a `DriverStatement` built once per set of columns (a deal's UPDATE through
    `Connection.execute` built and compiled a statement of SQLAlchemy's every time, issue 15).
    NotFoundError for no such match."""
    row = {f"set_{column}": value for column, value in values.items()}
    row["match"] = match_id
    for statement in _match_updates(tuple(values), turn):
        if statement.execute(connection, [row]) != 1:
            raise NotFoundError(f"no match {match_id}")


@functools.cache
def _match_updates(columns: tuple[str, ...], turn: bool) -> tuple[DriverStatement, ...]:
    """`set_match`'s statements for ``columns`` (in this order) and ``turn``: the ``matches`` row's
    UPDATE and the `MatchTurn` row's (`TURN_COLUMNS`), each only when it has columns to set."""
    keys = {c: f"set_{c}" for c in columns}  # column → its key in `set_match`'s row
    statements = []
    for (model, key), part in zip(_ROWS, _split(keys), strict=True):
        table = model.__table__
        values: dict[str, Any] = {c: bindparam(name, type_=table.c[c].type) for c, name in part.items()}
        if turn and model is MatchTurn:
            values |= _TURN_BEGINS_NOW
        if values:
            statement = update(model).where(key == bindparam("match")).values(values)
            statements.append(DriverStatement(statement, ("match", *part.values())))
    return tuple(statements)


def set_version(connection: Connection, match_id: int, version: int) -> None:
    """Store the match's ``version`` (inside a transaction); NotFoundError for no such match."""
    if _SET_VERSION_ROWS.execute(connection, [{"match": match_id, "new_version": version}]) != 1:
        raise NotFoundError(f"no match {match_id}")
