"""Where the database is and bringing its schema up to date (Alembic)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Final

from alembic import command
from alembic.config import Config

import app

__all__ = [
    "MIGRATIONS_DIR",
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
