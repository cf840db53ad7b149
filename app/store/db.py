"""Database access: the ORM tables (`app.store.models`) and the async engine every user shares.

`make_engine` is the one place that knows how to open the database: SQLite through aiosqlite with
WAL and real transactions, PostgreSQL through asyncpg. `app.store.Store` and Alembic's
``migrations/env.py`` both open it through here; the store's SQLite writer uses `make_sync_engine`,
the same database through the standard library's sqlite3, on the event loop or in a thread of its
own (`app.store.sqlite_thread`).
"""

from __future__ import annotations

import errno
import fcntl
import os
import socket
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qs, unquote, urlsplit

import orjson
from sqlalchemy import create_engine, event
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import ConnectionPoolEntry

from app.store.driver_sql import run_sqlite

__all__ = [
    "APPLICATION_NAME_BYTES",
    "DATABASE_TIMEOUT_S",
    "SQLITE_BEGIN_OPTION",
    "SQLITE_PRAGMAS",
    "DatabaseInUseError",
    "application_name",
    "hold_sqlite",
    "is_sqlite",
    "json_text",
    "make_engine",
    "make_sync_engine",
    "name_connections",
    "sqlite_path",
]

SQLITE_PRAGMAS: Final = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=NORMAL",
    "PRAGMA foreign_keys=ON",
    "PRAGMA busy_timeout=5000",
)
"""Set on every SQLite connection: write-ahead log (readers never block the writer), fsync at
checkpoints rather than at every commit (a commit survives a process crash, not a power cut),
foreign keys enforced, and 5 s of waiting for a lock before ``database is locked``."""

DATABASE_TIMEOUT_S: Final = 10.0
"""PostgreSQL: the seconds a new connection (and, for the server, a statement) may take when
nothing else says (``DOMENG_DATABASE_TIMEOUT_S``, `app.web.settings.Settings.database_timeout_s`)."""

SQLITE_BEGIN_OPTION: Final = "domeng_sqlite_begin"
"""Execution option naming the statement that begins a SQLite transaction (default ``BEGIN``);
the store's writer uses ``BEGIN IMMEDIATE`` so it takes the write lock up front."""


APPLICATION_NAME_BYTES: Final = 63
"""PostgreSQL keeps this many bytes of a session's ``application_name`` (NAMEDATALEN - 1)."""

_naming: dict[str, str] = {"command": ""}
"""The ``domeng`` command this process runs, for `application_name` (`name_connections`)."""


def name_connections(command: str) -> None:
    """Name the PostgreSQL connections this process opens from now on after the ``domeng``
    ``command`` it runs (``serve``, ``migrate``): `application_name`."""
    _naming["command"] = command


def application_name() -> str:
    """What this process's PostgreSQL connections call themselves (``application_name``, seen in
    ``pg_stat_activity``): ``domeng serve pid 4242 on web1`` (the command `name_connections` set,
    the process id and the host), ASCII, cut to `APPLICATION_NAME_BYTES`. Every connection of a
    ``domeng serve`` process has it (its database hold's, its pool's, its migrations'), so an
    operator ends a crashed host's sessions by this name alone (docs/deploy.md)."""
    command = _naming["command"]
    name = f"domeng {command} pid {os.getpid()} on {socket.gethostname()}".replace("  ", " ")
    return name.encode("ascii", "replace")[:APPLICATION_NAME_BYTES].decode("ascii")


def is_sqlite(url: str | URL) -> bool:
    """Whether ``url`` names a SQLite database."""
    return make_url(url).get_backend_name() == "sqlite"


def sqlite_path(url: str | URL) -> Path | None:
    """The database file of a SQLite ``url``, the one the driver opens (absolute); None for other
    backends. The driver's file name is SQLAlchemy's (its pysqlite dialect: the URL's path, taken
    from the working directory when relative); with ``uri=true`` in the URL's query, one that
    begins with ``file:`` is an SQLite URI (https://www.sqlite.org/uri.html), whose ``%HH``
    escapes SQLite decodes: ``sqlite+aiosqlite:///file:/srv/my%2520data/d.db?uri=true`` is the
    file ``/srv/my data/d.db`` (SQLAlchemy decodes the URL once, SQLite the URI once more).

    Raises ValueError for an in-memory database (every connection would see a different one) and
    for an SQLite URI naming another host.
    """
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return None
    (filename, *_), options = parsed.get_dialect()().create_connect_args(parsed)
    if filename in ("", ":memory:") or "mode=memory" in str(parsed):
        raise ValueError(f"an in-memory SQLite database cannot be shared by connections: {url!s}")
    if not (options.get("uri") and filename.startswith("file:")):
        return Path(filename)  # an ordinary file name (a ``file:`` without ``uri=true`` too)
    uri = urlsplit(filename)
    if uri.netloc not in ("", "localhost"):
        raise ValueError(f"an SQLite URI names a file on this host only: {url!s}")
    path = unquote(uri.path)
    if path in ("", ":memory:") or "memory" in parse_qs(uri.query).get("mode", []):
        raise ValueError(f"an in-memory SQLite database cannot be shared by connections: {url!s}")
    return Path(os.path.abspath(path))


class DatabaseInUseError(Exception):
    """Another server process holds the SQLite database (`hold_sqlite`): ``pid`` is its process id
    as it wrote it beside the database (0: not known), ``path`` the database file."""

    def __init__(self, path: Path, pid: int) -> None:
        self.path = path
        self.pid = pid
        who = f"another Domeng server (process {pid})" if pid else "another Domeng server"
        super().__init__(
            f"{who} is serving {path}: one SQLite database serves one server, or both would play "
            "the same rooms apart; stop that server first (Ctrl+C where it runs), or give this one "
            "a database of its own (--data-dir)"
        )


_NO_FLOCK: Final = frozenset({errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL})
"""``flock`` errors that say the file system does not do it (not that another process holds it)."""


def hold_sqlite(path: Path) -> int | None:
    """Take this process's hold on the SQLite database ``path`` for as long as it runs: an
    exclusive ``flock`` of ``<path>.lock`` beside it, which holds this process's id. The kernel
    lets go of it when the process ends, however it ends. Returns the lock file's descriptor (kept
    open: closing it lets go). Raises `DatabaseInUseError` when another process holds it: two
    servers on one SQLite file would each own the same rooms, with no lease between them (the
    several-process shape is PostgreSQL and Redis: docs/cluster.md). Returns None when the file
    system takes no ``flock`` (`_NO_FLOCK`: some network and FUSE mounts), where the server runs
    without the hold, as it did before there was one. Raises `OSError` when the lock file cannot be
    made or opened (a data directory that is not writable, or not a directory)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        written = os.read(lock, 32).decode("ascii", "replace").strip()
        os.close(lock)
        raise DatabaseInUseError(path, int(written) if written.isdigit() else 0) from None
    except OSError as error:
        os.close(lock)
        if error.errno in _NO_FLOCK:
            return None
        raise
    os.ftruncate(lock, 0)
    os.write(lock, f"{os.getpid()}\n".encode("ascii"))
    return lock


def _sqlite_connect(pragmas: Sequence[str]) -> Callable[[Any, ConnectionPoolEntry], None]:
    def connect(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
        # Take transaction control away from the sqlite3 driver (it begins none before a
        # SELECT); `_sqlite_begin` emits BEGIN instead, so a read transaction sees one snapshot.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            for pragma in pragmas:
                cursor.execute(pragma)
        finally:
            cursor.close()

    return connect


def _sqlite_begin(connection: Connection) -> None:
    connection.exec_driver_sql(connection.get_execution_options().get(SQLITE_BEGIN_OPTION, "BEGIN"))


def json_text(value: Any) -> str:
    """The text a JSON column stores for ``value`` (every engine's ``json_serializer``): orjson's
    compact JSON, with dict keys that are not strings (a seat number…) written as strings as the
    standard library's `json.dumps` writes them. About a fifth of the standard library's CPU for
    an action row (issue 15: the writer serialises one per move). TypeError for a value JSON
    cannot hold."""
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def _sqlite3_begin(connection: Connection) -> None:
    """`_sqlite_begin` on the standard library's sqlite3 connection itself (`run_sqlite`: the
    writer's thread begins a transaction per batch, issue 15)."""
    run_sqlite(connection, connection.get_execution_options().get(SQLITE_BEGIN_OPTION, "BEGIN"))


def make_engine(
    url: str | URL,
    *,
    sqlite_pragmas: Sequence[str] = SQLITE_PRAGMAS,
    timeout_s: float | None = None,
    connect_timeout_s: float | None = None,
    **kwargs: Any,
) -> AsyncEngine:
    """An async engine for ``url`` (``sqlite+aiosqlite:///path`` or ``postgresql+asyncpg://...``).

    SQLite connections run ``sqlite_pragmas`` when opened and get SQLAlchemy-controlled
    transactions (a real BEGIN, also before reads and DDL); PostgreSQL connections are pinged when
    taken from the pool, and with ``timeout_s`` (seconds) each statement, new connection and wait
    for a pooled one fails after that long (asyncpg's ``command_timeout`` and ``timeout``, the
    pool's ``pool_timeout``): a database cut off without a word fails the call instead of holding
    it for ever. With ``timeout_s`` a session also may not sit idle inside a transaction for
    longer than that (PostgreSQL's ``idle_in_transaction_session_timeout``): a process paused
    mid-transaction (SIGSTOP, a stalled VM) has its session ended and its row locks released, so
    the process that takes its rooms over is not blocked by them (docs/cluster.md).
    ``connect_timeout_s`` bounds opening a connection alone (asyncpg's ``timeout``; default
    ``timeout_s``), for a user whose statements may rightly wait longer (the migrations: one
    server's waits for another's to finish). Every
    PostgreSQL connection is named `application_name` (``connect_args``'s ``server_settings`` are
    added to these, and win). ``kwargs`` go to ``create_async_engine``. Raises ValueError for an
    in-memory SQLite database.
    """
    if is_sqlite(url):
        sqlite_path(url)
        engine = create_async_engine(url, json_serializer=json_text, **kwargs)
        event.listen(engine.sync_engine, "connect", _sqlite_connect(sqlite_pragmas))
        event.listen(engine.sync_engine, "begin", _sqlite_begin)
        return engine
    kwargs.setdefault("pool_pre_ping", True)
    given = dict(kwargs.get("connect_args", {}))
    connect_args: dict[str, Any] = {}
    settings = {"application_name": application_name()}
    if timeout_s is not None:
        kwargs.setdefault("pool_timeout", timeout_s)
        connect_args["command_timeout"] = timeout_s
        settings["idle_in_transaction_session_timeout"] = str(max(1, round(timeout_s * 1000)))
    connect_timeout_s = timeout_s if connect_timeout_s is None else connect_timeout_s
    if connect_timeout_s is not None:
        connect_args["timeout"] = connect_timeout_s
    settings |= given.pop("server_settings", {})  # the caller's settings added, not in place of these
    kwargs["connect_args"] = {**connect_args, **given, "server_settings": settings}
    return create_async_engine(url, json_serializer=json_text, **kwargs)


def make_sync_engine(url: str | URL, *, sqlite_pragmas: Sequence[str] = SQLITE_PRAGMAS) -> Engine:
    """A synchronous engine (the standard library's sqlite3 driver) on the SQLite database of
    ``url`` (an ``sqlite+aiosqlite`` URL is accepted), with the same pragmas and transaction
    control as `make_engine`. Its connections must stay in the thread that opened them. Raises
    ValueError for another backend or an in-memory database."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        raise ValueError(f"a synchronous engine is for SQLite only, got {parsed.get_backend_name()}")
    sqlite_path(parsed)
    engine = create_engine(parsed.set(drivername="sqlite+pysqlite"), json_serializer=json_text)
    event.listen(engine, "connect", _sqlite_connect(sqlite_pragmas))
    event.listen(engine, "begin", _sqlite3_begin)
    return engine
