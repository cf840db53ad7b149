"""Helpers of the admin tests: a scratch PostgreSQL database, signing in, playing a bot match
through a real server, and checking an export with the real ``domeng replay --json``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
from alembic import command
from alembic.config import Config
from sqlalchemy import text
from sqlalchemy.engine import make_url

from app.store import MIGRATIONS_DIR
from app.store.db import make_engine
from tests.conftest import domeng_cli
from tests.serverkit import Client, ServerProcess

SECRET = "tests-Qm7#Vx2!Kp9-Rz4&Lw8"  # strong enough: app.web.settings.check_admin_secret
COOKIE = "__Host-domeng_admin"
POSTGRES_URL = os.environ.get("DOMENG_TEST_POSTGRES_URL")
DOMENG_KEYS = (
    "end",
    "winner",
    "cucuq",
    "manguno",
    "mattikkeng",
    "table",
    "stones",
    "camat",
    "camat_elected",
    "next_leader",
)
"""RECORD.md's Domeng round report: what ``replay --json`` prints per round."""
KOZEL_KEYS = ("end", "winner", "points", "pending", "goat", "next_leader")


async def _admin_sql(url: str, statement: str) -> None:
    engine = make_engine(url, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as connection:
            await connection.execute(text(statement))
    finally:
        await engine.dispose()


@contextlib.contextmanager
def scratch_postgres(purpose: str = "admin") -> Iterator[str]:
    """A new, empty PostgreSQL database ``domeng_PURPOSE_…`` on DOMENG_TEST_POSTGRES_URL's server
    for one test module (so it can count exactly), dropped after; yields its URL. Servers without
    Redis need one too: each holds its database alone (`app.store.pghold`)."""
    assert POSTGRES_URL
    name = f"domeng_{purpose}_{uuid.uuid4().hex[:10]}"
    url = make_url(POSTGRES_URL)
    asyncio.run(_admin_sql(POSTGRES_URL, f'CREATE DATABASE "{name}"'))
    try:
        yield url.set(database=name).render_as_string(hide_password=False)
    finally:
        asyncio.run(_admin_sql(POSTGRES_URL, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def sql_rows(url: str, query: Any, **params: Any) -> list[Any]:
    """The rows of ``query`` (a statement, e.g. ``text(…)``, with ``params``) on the database of
    ``url``, in a connection of its own: past the store, and past the models when given as SQL."""

    async def run() -> list[Any]:
        engine = make_engine(url)
        try:
            async with engine.begin() as connection:
                return list((await connection.execute(query, params)).all())
        finally:
            await engine.dispose()

    return asyncio.run(run())


def migrate(url: str, revision: str) -> None:
    """Alembic ``upgrade`` of ``url`` to the head (``head``) or ``downgrade`` to ``revision``."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("path_separator", "os")
    config.attributes["database_url"] = url
    config.attributes["configure_logger"] = False
    if revision == "head":
        command.upgrade(config, "head")
    else:
        command.downgrade(config, revision)


def login(server: ServerProcess, secret: str = SECRET) -> httpx.Response:
    """``POST /api/admin/login``."""
    return httpx.post(f"{server.url}/api/admin/login", json={"secret": secret}, timeout=10)


def admin_client(server: ServerProcess) -> httpx.Client:
    """An HTTP client holding a fresh admin session. The cookie is Secure, which Python's cookie
    jar never sends over http://, so the client carries it as a plain header (a browser sends
    Secure cookies to http://127.0.0.1 and localhost: tests/test_admin_browser.py)."""
    reply = login(server)
    assert reply.status_code == 200, reply.text
    token = reply.cookies[COOKIE]
    return httpx.Client(base_url=server.url, headers={"Cookie": f"{COOKIE}={token}"}, timeout=20)


def close_live_rooms(server: ServerProcess) -> list[str]:
    """Close every room ``server`` holds open (``POST /api/admin/rooms/{code}/close``): a test's
    table that would play on without it (bots covering a seat, no camat target) stops taking the
    CPU from the tests after it. Returns the codes closed; the server needs ``SECRET``."""
    with admin_client(server) as http:
        listed = http.get("/api/admin/rooms")
        assert listed.status_code == 200, listed.text
        codes = [room["code"] for room in listed.json()["rooms"]]
        for code in codes:
            assert http.post(f"/api/admin/rooms/{code}/close").status_code in {200, 404}
    return codes


def play_bot_match(server: ServerProcess, timeout: float = 60.0) -> dict[str, Any]:
    """Create a room of five bots, start it and watch it (bots deal no new round to an empty room)
    until the match is over; returns the room as created (code, host_token)."""
    room = server.create_room(bots=["greedy", "random", "greedy", "random", "greedy"], turn_timer_s=0)
    assert server.start_match(room["code"], room["host_token"]).status_code == 200
    watcher = Client(server, room["code"])
    try:
        deadline = time.monotonic() + timeout
        while server.room(room["code"])["status"] != "finished":
            assert time.monotonic() < deadline, "the bot match did not finish"
            time.sleep(0.1)
    finally:
        watcher.close()
    return room


def replay_export(path: Path) -> dict[str, Any]:
    """``domeng replay FILE --json`` (the real console script); asserts it accepted the file."""
    done = domeng_cli("replay", path, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def assert_replay_reproduces(report: dict[str, Any], detail: dict[str, Any]) -> None:
    """Every round the store holds as finished comes out of the replay with the stored result;
    an unfinished last round comes out unfinished."""
    assert len(report["rounds"]) == len(detail["rounds"])
    for replayed, stored in zip(report["rounds"], detail["rounds"], strict=True):
        outcome = stored["outcome"]
        if outcome is None:
            assert replayed["end"] is None
            continue
        keys = KOZEL_KEYS if detail["variant"] == "kozel" else DOMENG_KEYS
        assert replayed == {k: outcome[k] for k in keys}
    finished = [r for r in detail["rounds"] if r["outcome"] is not None]
    assert report["match_over"] == bool(finished and finished[-1]["outcome"]["match_over"])
