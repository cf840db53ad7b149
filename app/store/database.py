"""Where the database is and bringing its schema up to date (Alembic)."""

from __future__ import annotations

import logging
import re
import threading
from pathlib import Path
from typing import Final

from alembic import command
from alembic.config import Config

import app

__all__ = [
    "MIGRATIONS_DIR",
    "SUBJECT_CHARS",
    "sqlite_url",
    "upgrade_database",
]

MIGRATIONS_DIR: Final = Path(app.__file__).resolve().parents[1] / "migrations"
"""Alembic's script directory (``migrations/`` beside the ``app`` package)."""


# -- opening the database ----------------------------------------------------------------------


def sqlite_url(data_dir: Path) -> str:
    """The URL of the SQLite database ``domeng.sqlite3`` in ``data_dir`` (made absolute).

    >>> sqlite_url(Path("/srv/domeng/data"))
    'sqlite+aiosqlite:////srv/domeng/data/domeng.sqlite3'
    """
    return f"sqlite+aiosqlite:///{(data_dir / 'domeng.sqlite3').resolve()}"


_STEP = re.compile(r"Running upgrade (?P<down>\S*) -> (?P<up>\S+), (?P<doc>.*)", re.S)
_NOISE = ("Context impl ", "Will assume ")

SUBJECT_CHARS: Final = 72
"""At most this many characters of a migration's subject go in its one line of the log."""


class _OneLinePerMigration(logging.Filter):
    """On Alembic's runtime logger during `upgrade_database`: each migration run is logged as one
    short line, ``migrating the database: 0010 -> 0011 (matches.turn_at and …)`` (the subject of
    its docstring, cut to `SUBJECT_CHARS`), instead of Alembic's "Running upgrade" with the
    docstring's whole first paragraph; its notes on the connection's dialect are dropped."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if message.startswith(_NOISE):
            return False
        step = _STEP.match(message)
        if step is not None:
            subject = " ".join(step["doc"].split())
            if len(subject) > SUBJECT_CHARS:
                subject = subject[: SUBJECT_CHARS - 1].rstrip() + "…"
            down = step["down"] or "empty"
            record.msg, record.args = f"migrating the database: {down} -> {step['up']} ({subject})", None
        return True


_MIGRATING = threading.Lock()  # Alembic's `context` is one per process: migrate one at a time


def upgrade_database(database_url: str, timeout_s: float | None = None) -> None:
    """Run Alembic's ``upgrade head`` on ``database_url`` (blocking; see ``migrations/env.py``).
    On PostgreSQL, opening the connection fails after ``timeout_s`` seconds (the server's
    ``DOMENG_DATABASE_TIMEOUT_S``; default `app.store.db.DATABASE_TIMEOUT_S`) with TimeoutError, so
    a host that never answers is said at once rather than after the driver's own minute.

    Alembic's env.py runs its own event loop, so call this from a thread when a loop is running.
    Each migration run is logged (INFO, logger ``alembic.runtime.migration``) as one short line
    (`_OneLinePerMigration`); nothing when the schema is already up to date.
    """
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("path_separator", "os")
    config.attributes["database_url"] = database_url
    config.attributes["timeout_s"] = timeout_s
    config.attributes["configure_logger"] = False
    runtime = logging.getLogger("alembic.runtime.migration")
    one_line = _OneLinePerMigration()
    with _MIGRATING:
        runtime.addFilter(one_line)
        try:
            command.upgrade(config, "head")
        finally:
            runtime.removeFilter(one_line)
