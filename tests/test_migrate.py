"""Migrations once (issue 15, "Running it"): ``domeng migrate`` brings a database's schema up to
date and exits; a server with ``DOMENG_MIGRATE=false`` (`Store(migrate=False)`) does not migrate
at start-up. Real SQLite files."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import sqlite3
import subprocess
import uuid
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from app.cli import main
from app.store import Store, sqlite_url, upgrade_database
from app.store.database import MIGRATIONS_DIR
from app.web.settings import Settings
from tests.clusterkit import need_postgres
from tests.conftest import DOMENG_SCRIPT, domeng_cli


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
    assert out.err.startswith("domeng migrate: cannot reach the PostgreSQL database ("), out.err
    assert "s3cretpass" not in out.err + out.out


def test_migrate_gives_up_on_a_database_that_never_answers(tmp_path: Path) -> None:
    """A PostgreSQL address that takes the connection and never answers (a blackholed host, a
    stuck server; here a listening socket nobody reads): ``domeng migrate`` gives up after
    DOMENG_DATABASE_TIMEOUT_S (1 s here), the connect timeout of the server's own engine, and says
    it cannot reach the database. Before, the migration's engine had no connect timeout and waited
    for asyncpg's default minute: the wait below is bounded at 30 s, far above the second asked
    for and short of that minute."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        url = f"postgresql+asyncpg://domeng:s3cretpass@127.0.0.1:{port}/nowhere"
        env = {**os.environ, "DOMENG_DATABASE_TIMEOUT_S": "1"}
        with subprocess.Popen(
            [str(DOMENG_SCRIPT), "migrate", "--database-url", url],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ) as migrate:
            try:
                out, err = migrate.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                migrate.kill()
                migrate.communicate()
                pytest.fail("domeng migrate still waited for the silent database after 30 s")
        peer, _ = silent.accept()  # it did connect, and spoke first (the request PostgreSQL answers)
        with peer:
            assert peer.recv(64)
    assert migrate.returncode == 1, err[-2000:]
    assert err.startswith("domeng migrate: cannot reach the PostgreSQL database (TimeoutError)"), err
    assert "s3cretpass" not in out + err and "Traceback" not in err


def test_migrate_tells_a_refused_login_and_a_missing_database_apart(tmp_path: Path) -> None:
    """As ``domeng serve`` does (tests/test_server_postgres_hold.py): a role PostgreSQL does not
    know (a wrong password is refused the same way; trust auth takes any password) and a database
    that does not exist are each said as such, naming the user or the database, never the URL nor
    the password. Before, both were only ``the migration failed: DBAPIError`` (the driver's class
    name, InvalidAuthorizationSpecificationError, at best). The real ``domeng`` against the real
    PostgreSQL."""
    base = make_url(need_postgres())
    password = f"pw-{uuid.uuid4().hex}"
    role = f"nobody_{uuid.uuid4().hex[:8]}"
    stranger = base.set(username=role, password=password).render_as_string(hide_password=False)
    refused = domeng_cli("migrate", "--database-url", stranger)
    assert refused.returncode == 1, refused.stderr[-2000:]
    assert refused.stderr.startswith(f"domeng migrate: PostgreSQL refused the login for user '{role}'")
    assert "check the user and password in DOMENG_DATABASE_URL" in refused.stderr
    missing = f"nodb_{uuid.uuid4().hex[:8]}"
    nowhere = base.set(database=missing, password=password).render_as_string(hide_password=False)
    absent = domeng_cli("migrate", "--database-url", nowhere)
    assert absent.returncode == 1, absent.stderr[-2000:]
    assert absent.stderr.startswith(f"domeng migrate: the PostgreSQL database '{missing}' does not exist")
    for done in (refused, absent):
        said = done.stderr + done.stdout
        assert "the migration failed" not in said and "cannot reach" not in said
        assert password not in said and "postgresql+asyncpg://" not in said and "@127.0.0.1" not in said
        assert "Traceback" not in said


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
