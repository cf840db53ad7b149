"""The SQLite database file a URL names is the one the driver opens (`app.store.db.sqlite_path`),
so that the server's lock file (`hold_sqlite`, ``<file>.lock``) and the data directory it makes
sit beside the database itself. Before, a ``file:`` URL's path was taken as written: ``%20`` left
in it by SQLAlchemy's decoding (the URL's ``%2520``), which SQLite decodes once more, put the lock
in a directory literally named ``…%20…`` beside an empty one, and a ``file:`` without ``uri=true``
(an ordinary file name to the driver: ``./file:/…``) was locked at another path than the one
opened. Each URL here is opened with the real driver, which creates the file."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

import pytest
from sqlalchemy import text

from app.store.db import hold_sqlite, make_sync_engine, sqlite_path


def _write(url: str) -> None:
    """Open ``url`` with the real driver (the standard library's sqlite3, as the store's writer
    does) and write to it, which creates the database file."""
    engine = make_sync_engine(url)
    try:
        with engine.begin() as connection:
            connection.execute(text("CREATE TABLE seen (x INTEGER)"))
    finally:
        engine.dispose()


@pytest.mark.parametrize(
    ("form", "uri"),
    [
        ("file:{quoted}/d.sqlite3?uri=true", True),  # %20 for SQLite, %2520 in the URL
        ("file://localhost{quoted}/d.sqlite3?mode=rwc&uri=true", True),
        ("file:{plain}/d.sqlite3?uri=true", True),  # the URL's %20: decoded by SQLAlchemy already
        ("{plain}/d.sqlite3", False),
        ("file:{plain}/d.sqlite3", False),  # no uri=true: an ordinary file name, ./file:/…
    ],
)
def test_the_lock_sits_beside_the_file_the_driver_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, form: str, uri: bool
) -> None:
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "my data 100%"
    folder.mkdir()
    # the URL is decoded once by SQLAlchemy; an SQLite URI once more by SQLite
    quoted = quote(quote(str(folder)), safe="/")
    plain = quote(str(folder), safe="/")
    url = "sqlite+aiosqlite:///" + form.format(quoted=quoted, plain=plain)
    path = sqlite_path(url)
    assert path is not None and path.is_absolute()
    lock = hold_sqlite(path)  # as `domeng serve` does first: makes the directory, then the lock
    assert lock is not None
    try:
        _write(url)
    finally:
        os.close(lock)
    assert path.is_file()  # the driver's database file is the one named
    if uri:
        assert path == folder / "d.sqlite3"
    files = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    assert files == [path, path.with_name("d.sqlite3.lock")]  # beside it, and nothing else made


@pytest.mark.parametrize(
    "url",
    [
        "sqlite+aiosqlite://",
        "sqlite+aiosqlite:///:memory:",
        "sqlite+aiosqlite:///file::memory:?uri=true",
        "sqlite+aiosqlite:///file:shared?mode=memory&cache=shared&uri=true",
    ],
)
def test_an_in_memory_database_has_no_file(url: str) -> None:
    with pytest.raises(ValueError, match="in-memory"):
        sqlite_path(url)
