"""The match store: matches, seats, rounds and actions kept in SQLite or PostgreSQL.

Every write goes through one writer task ("group commit"): callers queue operations, the writer
takes the first, drains up to ``batch_limit`` more that are already queued, runs them all in one
transaction and commits, and only then answers each caller. A write is therefore durable when its
``await`` returns, and writes are applied in the order they were called. When a batch fails, the
writer retries its operations one by one, so a bad operation fails only its own caller. A write
whose caller is cancelled still happens. ("Durable" means it survives a crash of the process; on
SQLite, whose commits are synced at checkpoints (``synchronous=NORMAL``), a power cut may lose the
last ones.) On SQLite the writer never checkpoints the write-ahead log itself: a checkpoint syncs
the database file, and every write queued behind it would wait for the disk. A background task
checkpoints instead (``PRAGMA wal_checkpoint(PASSIVE)`` every ``checkpoint_interval_s`` seconds on
a connection of its own, which never blocks the writer). Reads
(`Store.load_match`, `Store.active_matches`, `Store.export_record`) use their own connections and
see one consistent snapshot each.

    Exception
    └── StoreError              a database failure (the driver's error is ``__cause__``)
        ├── StoreClosedError    a write to a store that is not started, or is closing
        ├── NotFoundError       no such match, seat or round (also a LookupError)
        └── ConflictError       the write breaks a constraint: a room code or (match, round, seq)
                                already stored, a round started twice, a row it needs is missing

Arguments the store can check without the database (an unknown status, kind or actor) raise
ValueError at once, before anything is queued.

    async with Store(sqlite_url(Path("data"))) as store:
        match_id = await store.create_match("K7Q2", "domeng", {}, 5, 30.0, host_hash, seats)
        await store.append_action(match_id, 0, 0, 12, 3, {"seat": 3, "play": "6-6"}, "human")
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, Generic, TypeVar

import structlog
from alembic import command
from alembic.config import Config
from sqlalchemy import ColumnElement, bindparam, func, insert, literal, select, update
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

import app
from app.db import SQLITE_BEGIN_OPTION, SQLITE_PRAGMAS, is_sqlite, make_engine, make_sync_engine, sqlite_path
from app.db.models import (
    ACTORS,
    MATCH_STATUSES,
    SEAT_KINDS,
    Match,
    MatchAction,
    Round,
    Seat,
    Tally,
    UTCDateTime,
)
from engine.record import FORMAT

__all__ = [
    "ACTIVE_STATUSES",
    "MIGRATIONS_DIR",
    "ActionRow",
    "ConflictError",
    "MatchRow",
    "NotFoundError",
    "RoundEnd",
    "RoundRow",
    "SeatRow",
    "SeatSpec",
    "Store",
    "StoreClosedError",
    "StoreError",
    "TallyRow",
    "TallySpec",
    "commitment_of",
    "record_of",
    "seat_display_name",
    "sqlite_url",
    "upgrade_database",
]

_log = structlog.get_logger("domeng.store")

_T = TypeVar("_T")

MIGRATIONS_DIR: Final = Path(app.__file__).resolve().parents[1] / "migrations"
"""Alembic's script directory (``migrations/`` beside the ``app`` package)."""

ACTIVE_STATUSES: Final = ("waiting", "playing")
"""Statuses of the matches a restarted server must bring back (`Store.active_matches`)."""

_FINAL_STATUSES: Final = ("finished", "abandoned")
_CHUNK = 500  # ids per IN (...) list when loading many matches


# -- errors ------------------------------------------------------------------------------------


class StoreError(Exception):
    """Base of the store's errors; a database failure is raised as this, with its cause."""


class StoreClosedError(StoreError):
    """Raised by a write to a store that is not started or is closing."""


class NotFoundError(StoreError, LookupError):
    """Raised when the match, seat or round a write names does not exist."""


class ConflictError(StoreError):
    """Raised when a write breaks a constraint (a unique key, a foreign key, a check)."""


def _store_error(error: BaseException) -> BaseException:
    if isinstance(error, StoreError):
        return error
    if isinstance(error, IntegrityError):
        conflict = ConflictError(f"conflict: {error.orig}")
        conflict.__cause__ = error
        return conflict
    if isinstance(error, SQLAlchemyError):
        failure = StoreError(f"database failure: {error}")
        failure.__cause__ = error
        return failure
    return error


# -- what goes in ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SeatSpec:
    """A seat as `Store.create_match` stores it: ``kind`` is ``empty``, ``human`` (``name`` and
    ``token_hash``) or ``bot`` (``bot_level``, optional ``name``). ``seat``, when given, must be
    the seat's index in the list. Raises ValueError for an unknown kind or a bot without level."""

    kind: str = "empty"
    name: str | None = None
    bot_level: str | None = None
    token_hash: str | None = None
    seat: int | None = None

    def __post_init__(self) -> None:
        _check_kind(self.kind, self.bot_level)


@dataclass(frozen=True, slots=True)
class TallySpec:
    """One seat's result of a finished round (`Store.end_round`): Domeng ``stones`` held after
    the round, stones ``received`` and ``paid`` in it; Kozel ``points`` and ``pending`` after it."""

    seat: int
    received: int = 0
    paid: int = 0
    stones: int | None = None
    points: int | None = None
    pending: int | None = None


@dataclass(frozen=True, slots=True)
class RoundEnd:
    """How a round ended, stored with its last action in one transaction (`Store.append_action`):
    the ``outcome`` (a JSON object, e.g. RECORD.md's round report), Domeng's stones on the table
    after it (``table_after``, None for Kozel), each seat's tally, and whether the match ended with
    it (``match_finished``: the status becomes ``finished``)."""

    outcome: dict[str, Any]
    table_after: int | None
    tallies: Sequence[TallySpec]
    match_finished: bool = False


def commitment_of(seed: str) -> str:
    """The commitment published for a round's seed: hex SHA-256 of its UTF-8 bytes.

    >>> commitment_of("abc")[:16]
    'ba7816bf8f01cfea'
    """
    return hashlib.sha256(seed.encode()).hexdigest()


def _check_kind(kind: str, bot_level: str | None) -> None:
    if kind not in SEAT_KINDS:
        raise ValueError(f"seat kind must be one of {SEAT_KINDS}, got {kind!r}")
    if kind == "bot" and not bot_level:
        raise ValueError("a bot seat needs a bot_level")


# -- what comes out ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SeatRow:
    """A stored seat (see `app.db.models.Seat`)."""

    seat: int
    name: str | None
    kind: str
    bot_level: str | None
    token_hash: str | None
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class ActionRow:
    """A stored action: ``action`` is RECORD.md's action object, ``seq`` its index in the round."""

    seq: int
    version: int
    seat: int
    action: dict[str, Any]
    actor: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class TallyRow:
    """A seat's stored result of a finished round (see `TallySpec`)."""

    seat: int
    stones: int | None
    received: int
    paid: int
    points: int | None
    pending: int | None


@dataclass(frozen=True, slots=True)
class RoundRow:
    """A stored round: ``deal`` is ``{"hands": [[tile, ...], ...], "rest": [tile, ...]}``;
    ``outcome``, ``ended_at`` and ``table_after`` are None while it is played. ``actions`` are in
    ``seq`` order, ``tallies`` in seat order (empty until the round ends)."""

    index: int
    seed: str
    commitment: str
    deal: dict[str, Any]
    started_at: datetime
    ended_at: datetime | None
    outcome: dict[str, Any] | None
    table_after: int | None
    actions: tuple[ActionRow, ...]
    tallies: tuple[TallyRow, ...]

    @property
    def is_finished(self) -> bool:
        """Whether the round has been ended (`Store.end_round`)."""
        return self.ended_at is not None


@dataclass(frozen=True, slots=True)
class MatchRow:
    """A snapshot of a stored match: its fields, seats in seat order, rounds in index order."""

    id: int
    code: str
    variant: str
    options: dict[str, Any]
    seat_count: int
    status: str
    turn_timer_s: float
    start: dict[str, Any] | None
    version: int
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    host_token_hash: str
    seats: tuple[SeatRow, ...]
    rounds: tuple[RoundRow, ...]

    def seat_names(self) -> list[str]:
        """Display names in seat order (`seat_display_name`)."""
        return [seat_display_name(seat) for seat in self.seats]


def seat_display_name(seat: SeatRow) -> str:
    """The seat's name; else, for seat index 1, ``"Bot 2 (greedy)"`` for a bot of level greedy
    (numbered like the table's "Bot 2", so bots of one match stay apart) and ``"Seat 2"`` for an
    empty seat (seats count from 1 for people). RECORD.md's ``seats`` are free text."""
    if seat.name:
        return seat.name
    if seat.kind == "bot":
        return f"Bot {seat.seat + 1} ({seat.bot_level})"
    return f"Seat {seat.seat + 1}"


# -- opening the database ----------------------------------------------------------------------


def sqlite_url(data_dir: Path) -> str:
    """The URL of the SQLite database ``domeng.sqlite3`` in ``data_dir`` (made absolute).

    >>> sqlite_url(Path("/srv/domeng/data"))
    'sqlite+aiosqlite:////srv/domeng/data/domeng.sqlite3'
    """
    return f"sqlite+aiosqlite:///{(data_dir / 'domeng.sqlite3').resolve()}"


_MIGRATING = threading.Lock()  # Alembic's `context` is one per process: migrate one at a time


def upgrade_database(database_url: str) -> None:
    """Run Alembic's ``upgrade head`` on ``database_url`` (blocking; see ``migrations/env.py``).

    Alembic's env.py runs its own event loop, so call this from a thread when a loop is running.
    """
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("path_separator", "os")
    config.attributes["database_url"] = database_url
    config.attributes["configure_logger"] = False
    with _MIGRATING:
        command.upgrade(config, "head")


# -- the store ---------------------------------------------------------------------------------


@dataclass(slots=True)
class _Op(Generic[_T]):
    """A queued write: ``run`` on the writer's connection, or, for `Store.append_action`, the
    action's ``row``, which the writer inserts together with the batch's other action rows."""

    future: asyncio.Future[_T]
    run: Callable[[Connection], _T] | None = None
    row: dict[str, Any] | None = None


_INSERT_ACTIONS: Final = insert(MatchAction)
_SET_VERSIONS: Final = (
    update(Match).where(Match.id == bindparam("match")).values(version=bindparam("new_version"))
)


def _now() -> datetime:
    return datetime.now(UTC)


class Store:
    """The match store on ``database_url`` (``sqlite+aiosqlite:///path`` or
    ``postgresql+asyncpg://...``). `start` it before use and `close` it after, or use
    ``async with Store(url) as store``. Writes are queued to one writer (see the module
    docstring); a write's ``await`` returns once it is committed.

    Counters for tests and metrics: ``transactions_committed`` (write transactions),
    ``writes_committed`` (operations in them) and ``batches_retried`` (failed batches retried one
    operation at a time).
    """

    def __init__(
        self,
        database_url: str,
        *,
        batch_limit: int = 500,
        checkpoint_interval_s: float = 1.0,
        on_commit: Callable[[float, int], None] | None = None,
    ) -> None:
        if batch_limit < 1:
            raise ValueError(f"batch_limit must be at least 1, got {batch_limit}")
        if checkpoint_interval_s <= 0:
            raise ValueError(f"checkpoint_interval_s must be > 0, got {checkpoint_interval_s}")
        self.database_url = database_url
        self.batch_limit = batch_limit
        self.checkpoint_interval_s = checkpoint_interval_s
        self.checkpoints = 0
        """SQLite: background checkpoints run so far."""
        self.on_commit = on_commit
        """Called after each write transaction with its duration (seconds) and its writes."""
        self.transactions_committed = 0
        self.writes_committed = 0
        self.batches_retried = 0
        self._engine: AsyncEngine | None = None
        self._write_engine: AsyncEngine | None = None
        self._read_engine: AsyncEngine | None = None
        self._sync_writer: Engine | None = None
        """SQLite: the writer's synchronous engine, used only in ``_writer_thread``."""
        self._writer_thread: ThreadPoolExecutor | None = None
        self._queue: asyncio.Queue[_Op[Any] | None] = asyncio.Queue()
        self._writer: asyncio.Task[None] | None = None
        self._checkpointer: asyncio.Task[None] | None = None
        self._closing = False

    @property
    def dialect(self) -> str:
        """The database's kind: ``"sqlite"`` or ``"postgresql"``."""
        return make_url(self.database_url).get_backend_name()

    @property
    def is_sqlite(self) -> bool:
        """Whether the store is a SQLite database."""
        return is_sqlite(self.database_url)

    @property
    def engine(self) -> AsyncEngine:
        """The async engine; raises StoreClosedError before `start` and after `close`."""
        if self._engine is None:
            raise StoreClosedError("the store is not started")
        return self._engine

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Open the database: create a SQLite file's directory, migrate to the latest schema
        (Alembic ``upgrade head``, in a worker thread) and start the writer.

        Raises RuntimeError when already started, ValueError for an in-memory SQLite URL, and
        the migration's errors.
        """
        if self._engine is not None:
            raise RuntimeError("the store is already started")
        path = sqlite_path(self.database_url)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        await asyncio.to_thread(upgrade_database, self.database_url)
        if self.is_sqlite:  # checkpoints are the checkpointer's, never a commit's (module docstring)
            pragmas = (*SQLITE_PRAGMAS, "PRAGMA wal_autocheckpoint=0")
            engine = make_engine(self.database_url, sqlite_pragmas=pragmas)
        else:
            engine = make_engine(self.database_url)
        self._engine = engine
        if self.is_sqlite:
            # one writer: take the write lock at BEGIN rather than at the first write
            writer = make_sync_engine(self.database_url, sqlite_pragmas=pragmas)
            self._sync_writer = writer.execution_options(**{SQLITE_BEGIN_OPTION: "BEGIN IMMEDIATE"})
            self._writer_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="store-writer")
            self._read_engine = engine
        else:
            self._write_engine = engine
            # several SELECTs of one load see one snapshot
            self._read_engine = engine.execution_options(isolation_level="REPEATABLE READ")
        self._closing = False
        self._queue = asyncio.Queue()
        self._writer = asyncio.create_task(self._write_loop(), name="store-writer")
        if self.is_sqlite:
            self._checkpointer = asyncio.create_task(self._checkpoint_loop(), name="store-checkpointer")

    async def close(self) -> None:
        """Let the writer finish every queued write, then close the database's connections.

        Writes called after `close` has begun raise StoreClosedError. Safe to call twice.
        """
        self._closing = True
        checkpointer, self._checkpointer = self._checkpointer, None
        if checkpointer is not None:
            checkpointer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await checkpointer
        writer, self._writer = self._writer, None
        if writer is not None:
            self._queue.put_nowait(None)
            await asyncio.shield(writer)  # a cancelled close must not cancel queued writes
        engine, self._engine = self._engine, None
        self._write_engine = self._read_engine = None
        if engine is not None:
            await engine.dispose()
        sync_writer, self._sync_writer = self._sync_writer, None
        thread, self._writer_thread = self._writer_thread, None
        if sync_writer is not None and thread is not None:
            # SQLite connections belong to the thread that opened them: close them there
            await asyncio.get_running_loop().run_in_executor(thread, sync_writer.engine.dispose)
            thread.shutdown(wait=False)

    async def ping(self, timeout_s: float = 2.0) -> bool:
        """Readiness: whether the writer is running and the database answers ``SELECT 1`` within
        ``timeout_s`` seconds. Never raises."""
        writer, engine = self._writer, self._read_engine
        if writer is None or writer.done() or self._closing or engine is None:
            return False
        try:
            async with asyncio.timeout(timeout_s), engine.connect() as connection:
                await connection.execute(select(1))
        except (TimeoutError, SQLAlchemyError, OSError):
            return False
        return True

    async def __aenter__(self) -> Store:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # -- the writer ----------------------------------------------------------------------------

    async def _checkpoint_loop(self) -> None:
        """SQLite: copy the write-ahead log into the database file every ``checkpoint_interval_s``
        seconds, off the writer's path. PASSIVE takes no lock that a writer waits for; what it
        cannot copy (pages a reader still needs) the next round copies. A failure is logged and
        retried at the next interval (the log only grows meanwhile)."""
        assert self._read_engine is not None
        engine = self._read_engine
        while True:
            await asyncio.sleep(self.checkpoint_interval_s)
            try:
                async with engine.connect() as connection:
                    await connection.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)")
                    await connection.commit()
                self.checkpoints += 1
            except (SQLAlchemyError, OSError) as error:
                _log.warning("store_checkpoint_failed", error=str(error))

    async def _submit(self, run: Callable[[Connection], _T] | None, row: dict[str, Any] | None = None) -> _T:
        """Queue ``run`` (or an action ``row``) for the writer and wait until it is committed;
        returns ``run``'s value."""
        if self._writer is None or self._writer.done() or self._closing:
            raise StoreClosedError("the store is not started or is closing")
        future: asyncio.Future[_T] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(_Op(future, run, row))
        return await future

    async def _write_loop(self) -> None:
        queue = self._queue
        batch: list[_Op[Any]] = []
        try:
            while True:
                first = await queue.get()
                if first is None:
                    return
                batch = [first]
                stop = False
                while len(batch) < self.batch_limit and not queue.empty():
                    op = queue.get_nowait()
                    if op is None:
                        stop = True
                        break
                    batch.append(op)
                await self._commit(batch)
                batch = []
                if stop:
                    return
        finally:
            # cancelled (the loop is shutting down): nobody will run what is left
            closed = StoreClosedError("the store closed before this write was committed")
            for op in [*batch, *_drain(queue)]:
                if not op.future.done():
                    op.future.set_exception(closed)

    async def _commit(self, batch: list[_Op[Any]]) -> None:
        """Run ``batch`` in one transaction and answer its callers; on failure, run each
        operation in a transaction of its own."""
        try:
            results = await self._transaction(batch)
        except Exception as error:
            if len(batch) == 1:
                _answer(batch[0], error=error)
                return
            self.batches_retried += 1
            for op in batch:
                try:
                    (result,) = await self._transaction([op])
                except Exception as single_error:
                    _answer(op, error=single_error)
                else:
                    _answer(op, result)
            return
        for op, result in zip(batch, results, strict=True):
            _answer(op, result)

    async def _transaction(self, ops: Sequence[_Op[Any]]) -> list[Any]:
        """Run ``ops`` in order in one transaction. SQLite: on the writer's own synchronous
        connection in the writer's thread, the whole batch in one hand-over (an async driver would
        hand every statement to its thread and back). PostgreSQL: on an asyncpg connection."""
        started = time.perf_counter()
        if self._sync_writer is not None:
            loop = asyncio.get_running_loop()
            results = await loop.run_in_executor(self._writer_thread, self._run_sync_transaction, ops)
        else:
            assert self._write_engine is not None
            async with self._write_engine.begin() as connection:
                results = await connection.run_sync(_run_ops, ops)
        self.transactions_committed += 1
        self.writes_committed += len(ops)
        if self.on_commit is not None:
            self.on_commit(time.perf_counter() - started, len(ops))
        return results

    def _run_sync_transaction(self, ops: Sequence[_Op[Any]]) -> list[Any]:
        assert self._sync_writer is not None
        with self._sync_writer.begin() as connection:
            return _run_ops(connection, ops)

    # -- writes --------------------------------------------------------------------------------

    async def create_match(
        self,
        code: str,
        variant: str,
        options: dict[str, Any],
        seat_count: int,
        turn_timer_s: float,
        host_token_hash: str,
        seats: Sequence[SeatSpec],
        start: dict[str, Any] | None = None,
    ) -> int:
        """Store a new match (status ``waiting``, version 0) with its seats; returns its id.

        ``options`` and ``start`` are RECORD.md's objects; ``seats`` lists ``seat_count`` seats.
        Raises ValueError when the seats do not number ``seat_count`` or one is out of place,
        ConflictError when the room ``code`` is taken.
        """
        if len(seats) != seat_count:
            raise ValueError(f"{seat_count} seats needed, got {len(seats)}")
        misplaced = [i for i, spec in enumerate(seats) if spec.seat not in (None, i)]
        if misplaced:
            raise ValueError(f"seats[{misplaced[0]}] is seat {seats[misplaced[0]].seat}")
        now = _now()

        def run(connection: Connection) -> int:
            inserted = connection.execute(
                insert(Match)
                .values(
                    code=code,
                    variant=variant,
                    options=options,
                    seat_count=seat_count,
                    status="waiting",
                    turn_timer_s=turn_timer_s,
                    start=start,
                    version=0,
                    created_at=now,
                    host_token_hash=host_token_hash,
                )
                .returning(Match.id)
            )
            match_id: int = inserted.scalar_one()
            connection.execute(
                insert(Seat),
                [
                    {
                        "match_id": match_id,
                        "seat": index,
                        "name": spec.name,
                        "kind": spec.kind,
                        "bot_level": spec.bot_level,
                        "token_hash": spec.token_hash,
                        "updated_at": now,
                    }
                    for index, spec in enumerate(seats)
                ],
            )
            return match_id

        return await self._submit(run)

    async def update_seat(
        self,
        match_id: int,
        seat: int,
        *,
        name: str | None,
        kind: str,
        bot_level: str | None,
        token_hash: str | None,
        version: int | None = None,
    ) -> None:
        """Overwrite a seat (a player leaves: ``kind="empty"``; a bot takes over: ``"bot"``), and
        the match's version when given. Raises ValueError for a bad kind, NotFoundError when the
        seat does not exist."""
        _check_kind(kind, bot_level)
        values: dict[str, Any] = {
            "name": name,
            "kind": kind,
            "bot_level": bot_level,
            "token_hash": token_hash,
            "updated_at": _now(),
        }

        def run(connection: Connection) -> None:
            changed = connection.execute(
                update(Seat).where(Seat.match_id == match_id, Seat.seat == seat).values(values)
            )
            if changed.rowcount != 1:
                raise NotFoundError(f"match {match_id} has no seat {seat}")
            if version is not None:
                _set_version(connection, match_id, version)

        await self._submit(run)

    async def claim_seat(
        self,
        match_id: int,
        seat: int,
        name: str,
        token_hash: str,
        *,
        take_bot: bool = False,
        version: int | None = None,
    ) -> bool:
        """Seat a player: succeeds only if the seat is ``empty`` (or, with ``take_bot``, a bot).

        One conditional UPDATE through the writer, so of concurrent claims for one seat exactly
        one wins. Returns whether the seat was claimed (False also when there is no such seat);
        on success also stores the match's version when given.
        """
        kinds = ("empty", "bot") if take_bot else ("empty",)
        now = _now()

        def run(connection: Connection) -> bool:
            changed = connection.execute(
                update(Seat)
                .where(Seat.match_id == match_id, Seat.seat == seat, Seat.kind.in_(kinds))
                .values(name=name, kind="human", bot_level=None, token_hash=token_hash, updated_at=now)
            )
            if changed.rowcount != 1:
                return False
            if version is not None:
                _set_version(connection, match_id, version)
            return True

        return await self._submit(run)

    async def set_status(self, match_id: int, status: str, version: int) -> None:
        """Set the match's status and version. The first ``playing`` stamps ``started_at``, the
        first ``finished`` or ``abandoned`` stamps ``finished_at``.

        Raises ValueError for an unknown status, NotFoundError for an unknown match.
        """
        if status not in MATCH_STATUSES:
            raise ValueError(f"status must be one of {MATCH_STATUSES}, got {status!r}")
        now = _now()
        await self._submit(lambda connection: _write_status(connection, match_id, status, version, now))

    async def start_round(
        self, match_id: int, index: int, seed: str, commitment: str, deal: dict[str, Any], version: int
    ) -> None:
        """Store a dealt round: ``index`` from 0, its ``seed``, ``commitment`` (`commitment_of`)
        and ``deal`` ``{"hands": [[tile, ...], ...], "rest": [tile, ...]}`` (tiles ``"a-b"``).

        Raises ValueError for a deal without hands and rest, ConflictError when the round is
        already stored or the match does not exist.
        """
        if not isinstance(deal.get("hands"), list) or not isinstance(deal.get("rest"), list):
            raise ValueError("a deal is {'hands': [[tile, ...], ...], 'rest': [tile, ...]}")
        now = _now()

        def run(connection: Connection) -> None:
            connection.execute(
                insert(Round).values(
                    match_id=match_id,
                    index=index,
                    seed=seed,
                    commitment=commitment,
                    deal=deal,
                    started_at=now,
                )
            )
            _set_version(connection, match_id, version)

        await self._submit(run)

    async def append_action(
        self,
        match_id: int,
        round_index: int,
        seq: int,
        version: int,
        seat: int,
        action: dict[str, Any],
        actor: str,
        round_end: RoundEnd | None = None,
    ) -> None:
        """Append one action: RECORD.md's action object (``{"seat": 2, "play": "3-6", "end":
        "R"}``), its ``seq`` in the round (from 0), the room ``version`` it produced, and who made
        it (``human``, ``bot``, ``timer`` or ``server``). With ``round_end`` (the action ended the
        round), the round's end and tallies, and the match's finish, are stored in the same
        transaction: all of it is stored, or none of it (`end_round`).

        Raises ValueError for an unknown actor, ConflictError when ``seq`` is already stored for
        the round or the round is not stored (or already ended), NotFoundError for an unknown match.
        """
        if actor not in ACTORS:
            raise ValueError(f"actor must be one of {ACTORS}, got {actor!r}")
        now = _now()
        row = {
            "match_id": match_id,
            "round_index": round_index,
            "seq": seq,
            "version": version,
            "seat": seat,
            "action": action,
            "actor": actor,
            "created_at": now,
        }
        if round_end is None:
            await self._submit(None, row)
            return

        def run(connection: Connection) -> None:
            _insert_actions(connection, [row])
            _write_round_end(connection, match_id, round_index, round_end, version, now)

        await self._submit(run)

    async def end_round(
        self,
        match_id: int,
        index: int,
        outcome: dict[str, Any],
        table_after: int | None,
        tallies: Sequence[TallySpec],
        version: int,
        match_finished: bool = False,
    ) -> None:
        """Store a round's end: its ``outcome`` (a JSON object, e.g. RECORD.md's round report),
        Domeng's stones on the table after it, and each seat's tally; with ``match_finished``, the
        match's ``finished`` status too, in the same transaction.

        Raises NotFoundError when the round is not stored, ConflictError when it already has
        tallies.
        """
        end = RoundEnd(outcome, table_after, tallies, match_finished)
        now = _now()
        await self._submit(lambda conn: _write_round_end(conn, match_id, index, end, version, now))

    # -- reads ---------------------------------------------------------------------------------

    async def load_match(self, code: str) -> MatchRow | None:
        """The match with room ``code`` (seats, rounds, actions and tallies), or None."""
        found = await self._load(Match.code == code)
        return found[0] if found else None

    async def load_match_by_id(self, match_id: int) -> MatchRow | None:
        """The match with id ``match_id``, or None."""
        found = await self._load(Match.id == match_id)
        return found[0] if found else None

    async def active_matches(self) -> list[MatchRow]:
        """Every match that is ``waiting`` or ``playing``, by id: what a restarted server
        brings back."""
        return await self._load(Match.status.in_(ACTIVE_STATUSES))

    async def export_record(self, match: int | str) -> dict[str, Any]:
        """RECORD.md's ``domeng-record/1`` document of a match (by id or room code), from the
        database alone: seats as display names (`seat_display_name`), ``start`` if any, and
        every stored round, the last one possibly unfinished. Each round also carries its
        ``seed`` and ``commitment``.

        Raises NotFoundError for an unknown match.
        """
        row = await (self.load_match_by_id(match) if isinstance(match, int) else self.load_match(match))
        if row is None:
            raise NotFoundError(f"no match {match!r}")
        return record_of(row)

    async def _load(self, where: ColumnElement[bool]) -> list[MatchRow]:
        if self._read_engine is None:
            raise StoreClosedError("the store is not started")
        async with AsyncSession(self._read_engine) as session, session.begin():
            matches = list(await session.scalars(select(Match).where(where).order_by(Match.id)))
            ids = [m.id for m in matches]
            seats = await _select_for(session, Seat, ids, Seat.seat)
            rounds = await _select_for(session, Round, ids, Round.index)
            actions = await _select_for(session, MatchAction, ids, MatchAction.round_index, MatchAction.seq)
            tallies = await _select_for(session, Tally, ids, Tally.round_index, Tally.seat)
            return _assemble(matches, seats, rounds, actions, tallies)


# -- helpers -----------------------------------------------------------------------------------


def _drain(queue: asyncio.Queue[_Op[Any] | None]) -> list[_Op[Any]]:
    left = []
    while not queue.empty():
        op = queue.get_nowait()
        if op is not None:
            left.append(op)
    return left


def _answer(op: _Op[Any], result: Any = None, error: BaseException | None = None) -> None:
    if op.future.done():  # the caller was cancelled; the write stands
        return
    if error is not None:
        op.future.set_exception(_store_error(error))
    else:
        op.future.set_result(result)


def _run_ops(connection: Connection, ops: Sequence[_Op[Any]]) -> list[Any]:
    """Run ``ops`` in order on ``connection`` (inside a transaction); their results. Consecutive
    action rows go in together: one executemany INSERT and one version UPDATE per match, which is
    what makes actions cheap."""
    results: list[Any] = []
    rows: list[dict[str, Any]] = []
    for op in ops:
        if op.row is not None:
            rows.append(op.row)
            results.append(None)
            continue
        if rows:
            _insert_actions(connection, rows)
            rows = []
        assert op.run is not None
        results.append(op.run(connection))
    if rows:
        _insert_actions(connection, rows)
    return results


def _insert_actions(connection: Connection, rows: list[dict[str, Any]]) -> None:
    connection.execute(_INSERT_ACTIONS, rows)
    last = {row["match_id"]: row["version"] for row in rows}  # each match's last version
    connection.execute(_SET_VERSIONS, [{"match": m, "new_version": v} for m, v in last.items()])


def _set_version(connection: Connection, match_id: int, version: int) -> None:
    changed = connection.execute(update(Match).where(Match.id == match_id).values(version=version))
    if changed.rowcount != 1:
        raise NotFoundError(f"no match {match_id}")


def _write_status(connection: Connection, match_id: int, status: str, version: int, now: datetime) -> None:
    """`Store.set_status` inside a transaction."""
    at = literal(now, UTCDateTime())
    values: dict[str, Any] = {"status": status, "version": version}
    if status == "playing":
        values["started_at"] = func.coalesce(Match.started_at, at)
    elif status in _FINAL_STATUSES:
        values["finished_at"] = func.coalesce(Match.finished_at, at)
    changed = connection.execute(update(Match).where(Match.id == match_id).values(values))
    if changed.rowcount != 1:
        raise NotFoundError(f"no match {match_id}")


def _write_round_end(
    connection: Connection, match_id: int, index: int, end: RoundEnd, version: int, now: datetime
) -> None:
    """`Store.end_round` (and, when the match ended too, its ``finished`` status) inside a
    transaction."""
    changed = connection.execute(
        update(Round)
        .where(Round.match_id == match_id, Round.index == index)
        .values(ended_at=now, outcome=end.outcome, table_after=end.table_after)
    )
    if changed.rowcount != 1:
        raise NotFoundError(f"match {match_id} has no round {index}")
    rows = [
        {
            "match_id": match_id,
            "round_index": index,
            "seat": t.seat,
            "stones": t.stones,
            "received": t.received,
            "paid": t.paid,
            "points": t.points,
            "pending": t.pending,
        }
        for t in end.tallies
    ]
    if rows:
        connection.execute(insert(Tally), rows)
    if end.match_finished:
        _write_status(connection, match_id, "finished", version, now)
    else:
        _set_version(connection, match_id, version)


_M = TypeVar("_M", Seat, Round, MatchAction, Tally)


async def _select_for(session: AsyncSession, model: type[_M], ids: Sequence[int], *order: Any) -> list[_M]:
    """The rows of ``model`` of the matches ``ids``, by match then ``order``."""
    rows: list[_M] = []
    for at in range(0, len(ids), _CHUNK):
        chunk = ids[at : at + _CHUNK]
        query = select(model).where(model.match_id.in_(chunk)).order_by(model.match_id, *order)
        rows += await session.scalars(query)
    return rows


def _by_match(rows: Iterable[_M]) -> dict[int, list[_M]]:
    grouped: dict[int, list[_M]] = defaultdict(list)
    for row in rows:
        grouped[row.match_id].append(row)
    return grouped


def _assemble(
    matches: Sequence[Match],
    seats: Sequence[Seat],
    rounds: Sequence[Round],
    actions: Sequence[MatchAction],
    tallies: Sequence[Tally],
) -> list[MatchRow]:
    seats_of, rounds_of = _by_match(seats), _by_match(rounds)
    actions_of: dict[tuple[int, int], list[ActionRow]] = defaultdict(list)
    for a in actions:
        actions_of[a.match_id, a.round_index].append(
            ActionRow(a.seq, a.version, a.seat, a.action, a.actor, a.created_at)
        )
    tallies_of: dict[tuple[int, int], list[TallyRow]] = defaultdict(list)
    for t in tallies:
        tallies_of[t.match_id, t.round_index].append(
            TallyRow(t.seat, t.stones, t.received, t.paid, t.points, t.pending)
        )
    return [
        MatchRow(
            id=m.id,
            code=m.code,
            variant=m.variant,
            options=m.options,
            seat_count=m.seat_count,
            status=m.status,
            turn_timer_s=m.turn_timer_s,
            start=m.start,
            version=m.version,
            created_at=m.created_at,
            started_at=m.started_at,
            finished_at=m.finished_at,
            host_token_hash=m.host_token_hash,
            seats=tuple(
                SeatRow(s.seat, s.name, s.kind, s.bot_level, s.token_hash, s.updated_at)
                for s in seats_of[m.id]
            ),
            rounds=tuple(
                RoundRow(
                    index=r.index,
                    seed=r.seed,
                    commitment=r.commitment,
                    deal=r.deal,
                    started_at=r.started_at,
                    ended_at=r.ended_at,
                    outcome=r.outcome,
                    table_after=r.table_after,
                    actions=tuple(actions_of[m.id, r.index]),
                    tallies=tuple(tallies_of[m.id, r.index]),
                )
                for r in rounds_of[m.id]
            ),
        )
        for m in matches
    ]


def record_of(match: MatchRow) -> dict[str, Any]:
    """RECORD.md's document of a loaded match (see `Store.export_record`)."""
    rest_key = "bazaar" if match.variant == "kozel" else "unused"
    doc: dict[str, Any] = {
        "format": FORMAT,
        "variant": match.variant,
        "options": dict(match.options),
        "seats": match.seat_names(),
    }
    if match.start is not None:
        doc["start"] = dict(match.start)
    doc["rounds"] = [
        {
            "hands": r.deal["hands"],
            rest_key: r.deal["rest"],
            "actions": [a.action for a in r.actions],
            "seed": r.seed,
            "commitment": r.commitment,
        }
        for r in match.rounds
    ]
    return doc
