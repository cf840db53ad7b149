"""Every PostgreSQL connection a Domeng process opens says which process it is
(`app.store.db.application_name`: ``domeng serve pid N on HOST``), within PostgreSQL's 63 bytes,
and a caller's own ``server_settings`` are added to the engine's rather than replacing them (the
database hold's name once dropped the idle-in-transaction timeout). Real PostgreSQL
(DOMENG_TEST_POSTGRES_URL; skipped without it)."""

from __future__ import annotations

import asyncio
import os
import socket

import pytest
from sqlalchemy import text

from app.store import db
from app.store.db import APPLICATION_NAME_BYTES, application_name, make_engine, name_connections
from tests.clusterkit import need_postgres

_SEEN = text(
    "SELECT application_name, current_setting('idle_in_transaction_session_timeout') "
    "FROM pg_stat_activity WHERE pid = pg_backend_pid()"
)


def _seen(url: str, **kwargs: object) -> tuple[str, str]:
    """This session's name and idle-in-transaction timeout, as PostgreSQL has them, for an engine
    of ``make_engine(url, **kwargs)``."""

    async def look() -> tuple[str, str]:
        engine = make_engine(url, **kwargs)  # type: ignore[arg-type]
        try:
            async with engine.connect() as connection:
                name, idle = (await connection.execute(_SEEN)).one()
                return str(name), str(idle)
        finally:
            await engine.dispose()

    return asyncio.run(look())


def test_a_connection_names_its_process_within_postgresqls_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    url = need_postgres()
    monkeypatch.setitem(db._naming, "command", "")
    name_connections("serve")
    assert application_name() == f"domeng serve pid {os.getpid()} on {socket.gethostname()}"[:63]
    assert _seen(url, timeout_s=2.0) == (application_name(), "2s")
    long_host = "web-" + "x" * 80 + ".example.org"
    monkeypatch.setattr(socket, "gethostname", lambda: long_host)
    name = application_name()
    assert len(name.encode()) == APPLICATION_NAME_BYTES
    assert name.startswith(f"domeng serve pid {os.getpid()} on web-xxx")
    assert _seen(url)[0] == name  # as PostgreSQL keeps it: the refusal names it so, the query matches


def test_a_callers_server_settings_keep_the_engines(monkeypatch: pytest.MonkeyPatch) -> None:
    url = need_postgres()
    monkeypatch.setitem(db._naming, "command", "serve")
    given = {"server_settings": {"application_name": "domeng serve pid 1 on h"}}
    assert _seen(url, timeout_s=3.0, connect_args=given) == ("domeng serve pid 1 on h", "3s")
