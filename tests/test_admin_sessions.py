"""Admin sessions outlive a restart of a one-process server (no Redis): they are kept in the
database as an HMAC of the cookie's token under the admin secret, never the token (docs/admin.md).
Through real servers restarted on the same data directory or PostgreSQL database: the cookie of a
login still works after a restart, signing out ends it (after a restart too), and a changed admin
secret ends every session; no log line holds the token or the secret. The store's own table is
checked too: the hash, never the token, and the expiry."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text

from app.store.database import sqlite_url
from app.store.db import make_engine
from tests.adminkit import COOKIE, POSTGRES_URL, SECRET, login, scratch_postgres
from tests.serverkit import ServerProcess

OTHER_SECRET = "tests-Zt5#Hb3!Nq8-Wd6&Ks1"  # also strong enough (app.web.settings.check_admin_secret)


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, str | None]]:
    """The servers' data directory, and a scratch PostgreSQL database (None: SQLite in it)."""
    if request.param == "sqlite":
        yield tmp_path / "data", None
        return
    if not POSTGRES_URL:
        pytest.skip("DOMENG_TEST_POSTGRES_URL is not set")
    with scratch_postgres() as url:
        yield tmp_path / "data", url


@contextlib.contextmanager
def _server(data: Path, database_url: str | None, secret: str = SECRET) -> Iterator[ServerProcess]:
    """A one-process server (no Redis) with the admin ``secret``, stopped after."""
    env = {"DOMENG_ADMIN_TOKEN": secret}
    server = ServerProcess(data, env=env, database_url=database_url).start()
    try:
        yield server
    finally:
        server.stop()


def _session(server: ServerProcess, token: str) -> httpx.Response:
    return httpx.get(f"{server.url}/api/admin/session", headers={"Cookie": f"{COOKIE}={token}"}, timeout=10)


def _logout(server: ServerProcess, token: str) -> httpx.Response:
    return httpx.post(f"{server.url}/api/admin/logout", headers={"Cookie": f"{COOKIE}={token}"}, timeout=10)


async def _rows(url: str) -> list[tuple[str, float]]:
    engine = make_engine(url)
    try:
        async with engine.connect() as connection:
            found = await connection.execute(text("SELECT digest, expires_at FROM admin_sessions"))
            return [(str(digest), float(expires_at)) for digest, expires_at in found]
    finally:
        await engine.dispose()


def test_a_signed_in_admin_stays_signed_in_across_a_restart_until_signing_out(
    database: tuple[Path, str | None],
) -> None:
    data, database_url = database
    logs = []
    with _server(data, database_url) as server:
        kept, ended = (login(server).cookies[COOKIE] for _ in range(2))
        assert _session(server, kept).status_code == 200
        expires = _session(server, kept).json()["expires_at"]
        logs.append(server.log())
    rows = asyncio.run(_rows(database_url or sqlite_url(data)))
    assert len(rows) == 2 and all(len(digest) == 64 for digest, _ in rows)
    assert not {kept, ended} & {digest for digest, _ in rows}  # a hash, never the token
    with _server(data, database_url) as server:  # restarted: both sessions still work
        assert _session(server, kept).json()["expires_at"] == expires
        assert _session(server, ended).status_code == 200
        assert _logout(server, ended).status_code == 204
        assert _session(server, ended).status_code == 401  # signing out ends it at once…
        assert _session(server, "not-a-session").status_code == 401
        logs.append(server.log())
    with _server(data, database_url) as server:
        assert _session(server, ended).status_code == 401  # … and for good
        assert _session(server, kept).status_code == 200
        logs.append(server.log())
    for log in logs:
        for secret in (kept, ended, SECRET):
            assert secret not in log


def test_a_changed_admin_secret_ends_every_session(database: tuple[Path, str | None]) -> None:
    data, database_url = database
    with _server(data, database_url) as server:
        token = login(server).cookies[COOKIE]
        assert _session(server, token).status_code == 200
    with _server(data, database_url, OTHER_SECRET) as server:
        assert _session(server, token).status_code == 401
        fresh = login(server, OTHER_SECRET).cookies[COOKIE]
        assert _session(server, fresh).status_code == 200
        log = server.log()
    with _server(data, database_url) as server:  # the old secret back: the new session is not its
        assert _session(server, fresh).status_code == 401
        log += server.log()
    for secret in (token, fresh, SECRET, OTHER_SECRET):
        assert secret not in log
