"""Migrations once (issue 15, "Running it"): ``domeng migrate`` brings a database's schema up to
date and exits; a server with ``DOMENG_MIGRATE=false`` (`Store(migrate=False)`) does not migrate
at start-up. Real SQLite files."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from pathlib import Path

import pytest

from app.cli import main
from app.store import Store, sqlite_url, upgrade_database
from app.store.database import MIGRATIONS_DIR
from app.web.settings import Settings


def _tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as db:
        return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_migrate_brings_a_new_database_up_to_date(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["migrate", "--data-dir", str(tmp_path / "data")]) == 0
    assert "up to date" in capsys.readouterr().out
    tables = _tables(tmp_path / "data" / "domeng.sqlite3")
    assert {"alembic_version", "matches"} <= tables
    assert main(["migrate", "--data-dir", str(tmp_path / "data")]) == 0  # again: nothing to do


def test_migrate_reports_a_failure_without_the_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = "postgresql+asyncpg://domeng:s3cretpass@127.0.0.1:1/nowhere"
    assert main(["migrate", "--database-url", url]) == 1
    out = capsys.readouterr()
    assert "the migration failed" in out.err
    assert "s3cretpass" not in out.err + out.out


def test_a_store_that_does_not_migrate_leaves_the_schema_alone(tmp_path: Path) -> None:
    path = tmp_path / "domeng.sqlite3"

    async def start_and_close(migrate: bool) -> None:
        store = Store(sqlite_url(tmp_path), migrate=migrate)
        await store.start()
        await store.close()

    asyncio.run(start_and_close(migrate=False))
    assert "alembic_version" not in _tables(path)
    asyncio.run(start_and_close(migrate=True))
    assert "alembic_version" in _tables(path)


def test_servers_migrate_at_start_unless_told_not_to(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DOMENG_MIGRATE", raising=False)
    assert Settings().migrate is True  # the README's quick start is unchanged
    monkeypatch.setenv("DOMENG_MIGRATE", "false")
    assert Settings().migrate is False


def test_a_new_database_logs_one_short_line_per_migration(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The first ``domeng serve`` printed pages of docstrings: Alembic logs "Running upgrade" with
    the whole first paragraph of each migration's docstring. The operator reads one short line
    per migration, in order, and nothing more; a schema already up to date logs nothing."""
    migrations = sorted(p.name.split("_")[0] for p in (MIGRATIONS_DIR / "versions").glob("[0-9]*.py"))
    with caplog.at_level(logging.INFO, logger="alembic"):
        upgrade_database(sqlite_url(tmp_path))
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("alembic")]
    assert len(lines) == len(migrations), lines
    for line, before, revision in zip(lines, ["empty", *migrations], migrations, strict=False):
        assert line.startswith(f"migrating the database: {before} -> {revision} ("), line
        assert "\n" not in line and len(line) <= 120, line
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="alembic"):
        upgrade_database(sqlite_url(tmp_path))
    assert [r.getMessage() for r in caplog.records if r.name.startswith("alembic")] == []
