"""Alembic environment of Domeng Online: runs the migrations of ``migrations/versions`` online
(through an async engine from `app.store.db.make_engine`) or offline (``alembic upgrade head --sql``).

The database URL is, first found: ``config.attributes["database_url"]`` (set by
`app.store.Store.start`), the environment variable ``DOMENG_DATABASE_URL``, ``sqlalchemy.url`` of
alembic.ini. On PostgreSQL, opening the connection fails after ``config.attributes["timeout_s"]``
seconds, else ``DOMENG_DATABASE_TIMEOUT_S``, else `app.store.db.DATABASE_TIMEOUT_S` (the server's
engine's connect timeout); its statements have none (a server waits for another's migration). The
whole upgrade is one transaction, on SQLite too. On PostgreSQL it holds an
advisory lock, so servers starting together migrate one after the other; on SQLite it runs with
foreign keys off (so a table rebuilt by a batch migration does not cascade-delete its children)
and checks them before committing.
"""

from __future__ import annotations

import asyncio
import os
from logging.config import fileConfig
from typing import Literal

from alembic import context
from alembic.autogenerate.api import AutogenContext
from sqlalchemy import pool, text
from sqlalchemy.engine import Connection

from app.store.db import DATABASE_TIMEOUT_S, SQLITE_PRAGMAS, is_sqlite, make_engine, sqlite_path
from app.store.models import Base, UTCDateTime

config = context.config
target_metadata = Base.metadata

MIGRATION_LOCK = 0x446F6D656E67  # "Domeng": the PostgreSQL advisory lock key of migrations
MIGRATION_PRAGMAS = tuple(p.replace("foreign_keys=ON", "foreign_keys=OFF") for p in SQLITE_PRAGMAS)

if config.config_file_name is not None and config.attributes.get("configure_logger", True):
    fileConfig(config.config_file_name, disable_existing_loggers=False)


def database_url() -> str:
    """The URL to migrate (see the module docstring); raises RuntimeError when none is set."""
    url = (
        config.attributes.get("database_url")
        or os.environ.get("DOMENG_DATABASE_URL")
        or config.get_main_option("sqlalchemy.url")
    )
    if not url:
        raise RuntimeError("no database URL: set DOMENG_DATABASE_URL or sqlalchemy.url")
    return str(url)


def connect_timeout_s() -> float:
    """Seconds opening a PostgreSQL connection may take (see the module docstring)."""
    given = config.attributes.get("timeout_s") or os.environ.get("DOMENG_DATABASE_TIMEOUT_S")
    return float(given) if given else DATABASE_TIMEOUT_S


def render_item(kind: str, obj: object, _context: AutogenContext) -> str | Literal[False]:
    """Autogenerate writes `UTCDateTime` as the plain type it stores through: a migration must
    not import the models, which change after it."""
    if kind == "type" and isinstance(obj, UTCDateTime):
        return "sa.DateTime(timezone=True)"
    return False


def run_migrations_offline() -> None:
    """Write the migrations' SQL to standard output instead of running it."""
    context.configure(
        url=database_url(),
        target_metadata=target_metadata,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
        render_as_batch=is_sqlite(database_url()),
    )
    with context.begin_transaction():
        context.run_migrations()


def do_run_migrations(connection: Connection) -> None:
    """Run every pending migration on ``connection`` in one transaction."""
    sqlite = connection.dialect.name == "sqlite"
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=sqlite,
        render_item=render_item,
        # make_engine gives SQLite a real BEGIN, so its DDL is transactional too
        transactional_ddl=True,
    )
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        context.run_migrations()
        if sqlite and connection.exec_driver_sql("PRAGMA foreign_key_check").first() is not None:
            raise RuntimeError("the migration left rows that break a foreign key; rolled back")


async def run_async_migrations() -> None:
    """Open the database (creating a SQLite file's directory) and migrate it."""
    url = database_url()
    path = sqlite_path(url)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
    engine = make_engine(
        url,
        poolclass=pool.NullPool,
        sqlite_pragmas=MIGRATION_PRAGMAS,
        connect_timeout_s=None if path is not None else connect_timeout_s(),
    )
    try:
        async with engine.connect() as connection:
            await connection.run_sync(do_run_migrations)
    finally:
        await engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    asyncio.run(run_async_migrations())
