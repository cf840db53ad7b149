"""One PostgreSQL database, one deployment (`app.store.pghold`, docs/deploy.md): a second server
without Redis on the database another serves refuses to start, saying what to do, and exits 1;
once the first has stopped (SIGTERM) or died (SIGKILL), a new one starts. With Redis, several
servers share the database, and one without Redis beside them is refused. Before, the second
server started and hosted the same rooms apart from the first (each its own table, both writing
the same match's actions). A server whose hold's connection is lost while another process takes
the lock stops serving (status 1, saying why), every acknowledged action stored; before, it only
logged the error and served on beside the other; and from the moment its hold is seen lost it
commits nothing (a move then is refused, ``not_saved``). Real servers on a scratch database of
DOMENG_TEST_POSTGRES_URL's server
(a test's servers without Redis hold their database alone); skipped without it (and the Redis case
without DOMENG_TEST_REDIS_URL)."""

from __future__ import annotations

import asyncio
import socket
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url

from app.store import upgrade_database
from app.store.db import make_engine
from app.store.pghold import HOLD_TAG
from tests.adminkit import scratch_postgres, sql_rows
from tests.clusterkit import ThreadedProxy, key_prefix, need_postgres, need_redis
from tests.serverkit import Client, ServerProcess

_END_HOLDS = text(
    "SELECT pg_terminate_backend(a.pid) FROM pg_stat_activity AS a JOIN pg_locks AS l ON l.pid = a.pid "
    "WHERE a.datname = current_database() AND a.application_name LIKE 'domeng serve pid %' "
    f"AND l.locktype = 'advisory' AND l.granted AND l.classid::bigint = {HOLD_TAG}"
)
"""End the sessions of the servers' holds on the database (as a PostgreSQL restart would), not
their pools' (named alike)."""
_SESSIONS = text(
    "SELECT application_name FROM pg_stat_activity "
    "WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
)
_END_NAMED = text(  # docs/deploy.md's, for a host crashed during a network partition
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
    "WHERE datname = current_database() AND application_name = :name"
)


def _end_holds(url: str) -> int:
    """End the sessions of the servers' holds on the database of ``url`` (as a PostgreSQL restart
    would); how many were ended."""
    return len(sql_rows(url, _END_HOLDS))


def _wait_logged(server: ServerProcess, event: str, timeout: float = 30.0) -> None:
    """Wait until ``server`` has logged ``event``; AssertionError if not within ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while f'"{event}"' not in server.log():
        assert time.monotonic() < deadline, f"no {event} in:\n{server.log()}"
        time.sleep(0.05)


def _refused(server: ServerProcess) -> str:
    """Start ``server``, which must exit 1 before it is ready; what it printed."""
    with pytest.raises(RuntimeError, match=r"server exited") as exited:
        server.start()
    assert str(exited.value).startswith("server exited 1:"), exited.value
    return server.log()


def test_a_second_server_without_redis_refuses_the_database_until_the_first_has_gone(tmp_path: Path) -> None:
    need_postgres()
    with scratch_postgres("hold") as url:
        first = ServerProcess(tmp_path / "a", database_url=url).start()
        try:
            said = _refused(ServerProcess(tmp_path / "b", database_url=url))
            assert "domeng serve: another Domeng server" in said
            assert "without Redis" in said and "Stop that server first" in said
            assert "set DOMENG_REDIS_URL" in said and "docs/deploy.md" in said
            # a holder whose host is gone (crashed in a partition) keeps its session for hours
            assert "its host gone, end its sessions with pg_terminate_backend" in said
            assert "postgresql+asyncpg://" not in said  # the URL (its password) is never printed
            assert "Traceback" not in said
            assert httpx.get(f"{first.url}/readyz", timeout=10).status_code == 200  # the first serves on
            # its hold's connection lost (PostgreSQL restarted, say): opened again, the lock taken again
            assert _end_holds(url) == 1
            _wait_logged(first, "database_hold_lost")
            _wait_logged(first, "database_hold_taken_again")
            assert "without Redis" in _refused(ServerProcess(tmp_path / "b2", database_url=url))
        finally:
            first.stop()
        second = ServerProcess(tmp_path / "c", database_url=url).start()  # stopped: free again
        second.kill()  # a crash lets go of it too
        ServerProcess(tmp_path / "d", database_url=url).start().stop()


def test_a_refused_login_or_a_missing_database_is_told_apart_from_an_unreachable_one(tmp_path: Path) -> None:
    """A role PostgreSQL does not know (a wrong password is refused the same way; trust auth takes
    any password, so the test uses a role that does not exist) and a database that does not exist
    are each said as such, naming the user or the database but never the URL nor the password;
    before, both were "cannot reach … start the database first", which sends the operator to
    start a database that runs. An unreachable server is still said so."""
    base = make_url(need_postgres())
    password = f"pw-{uuid.uuid4().hex}"
    role = f"nobody_{uuid.uuid4().hex[:8]}"
    stranger = base.set(username=role, password=password).render_as_string(hide_password=False)
    said = _refused(ServerProcess(tmp_path / "role", database_url=stranger))
    assert f"domeng serve: PostgreSQL refused the login for user '{role}'" in said, said
    assert "check the user and password in DOMENG_DATABASE_URL" in said
    assert "cannot reach" not in said and "start the database first" not in said
    missing = f"nodb_{uuid.uuid4().hex[:8]}"
    nowhere = base.set(database=missing, password=password).render_as_string(hide_password=False)
    told = _refused(ServerProcess(tmp_path / "db", database_url=nowhere))
    assert f"domeng serve: the PostgreSQL database '{missing}' does not exist" in told, told
    assert "cannot reach" not in told and "start the database first" not in told
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    away = base.set(host="127.0.0.1", port=port, password=password).render_as_string(hide_password=False)
    down = _refused(ServerProcess(tmp_path / "down", database_url=away))
    assert "domeng serve: cannot reach the PostgreSQL database" in down, down
    assert "start the database first" in down
    for text_ in (said, told, down):
        assert password not in text_ and "postgresql+asyncpg://" not in text_ and "@127.0.0.1" not in text_
        assert "Traceback" not in text_


def test_every_session_of_a_server_names_its_process_and_ending_them_by_name_frees_the_database(
    tmp_path: Path,
) -> None:
    """Every PostgreSQL session of a server (its hold's, its pool's) is named ``domeng serve pid N
    on HOST``, the name a refused server prints, so after a host crashed during a network partition
    (its sessions kept by PostgreSQL for hours) docs/deploy.md's one query by that name ends them
    all, and the next server starts at once. Before, only the hold's session had a name: the pool's
    had none and had to be found by ``client_addr`` (the pooler's, behind one). Here the first
    server is stopped (SIGSTOP: its sockets stay open, as a crashed host's do); let go again, it
    sees its hold taken and stops (status 1)."""
    need_postgres()
    with scratch_postgres("hold") as url:
        first = ServerProcess(tmp_path / "a", database_url=url).start()
        second = None
        try:
            first.create_room(bots=[None, "greedy"], variant="kozel", seats=2)
            assert first.proc is not None
            name = f"domeng serve pid {first.proc.pid} on {socket.gethostname()}"[:63]
            named = [row[0] for row in sql_rows(url, _SESSIONS)]
            assert len(named) >= 2 and set(named) == {name}, named  # the hold and the pool
            with first.paused():
                said = _refused(ServerProcess(tmp_path / "b", database_url=url))
                assert f"another Domeng server ({name}) is serving" in said, said
                ended = sql_rows(url, _END_NAMED, name=name)
                assert len(ended) >= 2 and all(row[0] for row in ended), ended
                deadline = time.monotonic() + 30
                while left := sql_rows(url, _SESSIONS):  # each ends once it has seen the signal
                    assert time.monotonic() < deadline, left
                second = ServerProcess(tmp_path / "c", database_url=url).start()
            assert first.proc.wait(60) == 1  # it serves no more beside the second
            assert "another Domeng server" in first.log()
        finally:
            first.stop()
            if second is not None:
                second.stop()


def test_servers_with_redis_share_the_database_and_one_without_is_refused(tmp_path: Path) -> None:
    redis_url = need_redis()
    need_postgres()
    with scratch_postgres("hold") as url:
        upgrade_database(url)  # once: the servers do not migrate
        env = {"DOMENG_REDIS_URL": redis_url, "DOMENG_REDIS_PREFIX": key_prefix(), "DOMENG_MIGRATE": "false"}
        both = [ServerProcess(tmp_path / name, env=env, database_url=url) for name in ("a", "b")]
        try:
            for server in both:
                server.start()
            alone = _refused(ServerProcess(tmp_path / "c", env={"DOMENG_MIGRATE": "false"}, database_url=url))
            assert "domeng serve: Domeng servers with Redis" in alone
            assert "this one has no DOMENG_REDIS_URL" in alone and "Set DOMENG_REDIS_URL" in alone
            assert all(httpx.get(f"{s.url}/readyz", timeout=10).status_code == 200 for s in both)
        finally:
            for server in both:
                server.stop()
        lone = ServerProcess(tmp_path / "d", env={"DOMENG_MIGRATE": "false"}, database_url=url).start()
        try:  # and while it serves the database alone, a server with Redis is refused
            joining = _refused(ServerProcess(tmp_path / "e", env=env, database_url=url))
            assert "domeng serve: another Domeng server" in joining and "without Redis" in joining
        finally:
            lone.stop()


def _can_play(message: dict[str, Any]) -> bool:
    view = message.get("view") if message["type"] == "state" else None
    return bool(view) and view["phase"] == "playing" and any("play" in a for a in view["legal"])


def _take_the_lost_hold(url: str, server: ServerProcess, meanwhile: Callable[[], None]) -> int:
    """As another process would: wait for the lock of ``server``'s hold on a session of our own,
    end the hold's session (a PostgreSQL restart, say), so the lock is ours before the server can
    take it back, run ``meanwhile`` (in a thread), and keep the lock until ``server`` has exited;
    its exit status."""

    async def take() -> int:
        engine = make_engine(url, isolation_level="AUTOCOMMIT", pool_size=2)
        try:
            async with engine.connect() as taker, engine.connect() as admin:
                oid = (
                    await taker.execute(
                        text("SELECT oid::bigint FROM pg_namespace WHERE nspname = current_schema()")
                    )
                ).scalar_one()
                pid = (await taker.execute(text("SELECT pg_backend_pid()"))).scalar_one()
                key = (HOLD_TAG << 32) | int(oid)
                waiting = asyncio.ensure_future(
                    taker.execute(text("SELECT pg_advisory_lock(:key)"), {"key": key})
                )
                queued = text(
                    "SELECT count(*) FROM pg_locks WHERE pid = :pid AND locktype = 'advisory' AND NOT granted"
                )
                deadline = time.monotonic() + 30
                while not (await admin.execute(queued, {"pid": pid})).scalar_one():
                    assert time.monotonic() < deadline, "our session never queued for the lock"
                    await asyncio.sleep(0.02)
                ended = await admin.execute(_END_HOLDS)
                assert len(ended.all()) == 1
                await waiting  # granted as the hold's session ends: PostgreSQL wakes the queued waiter
                await asyncio.to_thread(meanwhile)
                assert server.proc is not None
                return await asyncio.to_thread(server.proc.wait, 60)
        finally:
            await engine.dispose()

    return asyncio.run(take())


def test_a_server_whose_lost_hold_another_took_stops_serving_with_every_acknowledged_action(
    tmp_path: Path,
) -> None:
    need_postgres()
    with scratch_postgres("hold") as url:
        first = ServerProcess(tmp_path / "a", database_url=url).start()
        try:
            room = first.create_room(bots=[None, "greedy", "greedy", "random", "greedy"], turn_timer_s=0)
            token = first.claim(room["code"], 0, "Ana").json()["token"]
            first.start_match(room["code"], room["host_token"])
            player = Client(first, room["code"], token)
            for _ in range(2):  # a few acknowledged moves: each state after ours is the acknowledgement
                turn = player.wait_for(_can_play)
                action = {k: v for k, v in turn["view"]["legal"][0].items() if k != "seat"}
                player.send({"type": "action", "version": turn["version"], "action": action})
            waiting = player.wait_for(_can_play)  # the bots have moved too: all of it stored

            def move_while_lost() -> None:  # the server has seen its hold lost: nothing is committed
                _wait_logged(first, "database_hold_lost")
                action = {k: v for k, v in waiting["view"]["legal"][0].items() if k != "seat"}
                player.send({"type": "action", "version": waiting["version"], "action": action})
                refused = player.wait_for(lambda m: m["type"] == "error")
                assert refused["code"] == "not_saved", refused

            status = _take_the_lost_hold(url, first, move_while_lost)
            player.close()
        finally:
            first.stop()
        said = first.log()
        assert status == 1, said
        assert '"database_hold_taken"' in said
        assert "domeng serve: stopping: this server's hold on its PostgreSQL database was lost" in said
        assert "another Domeng server" in said and "Stop that server first" in said
        assert "postgresql+asyncpg://" not in said and "Traceback" not in said and token not in said
        # the lock is free again (our session ended): the next server serves every acknowledged
        # action, and not the move refused while the hold was lost
        second = ServerProcess(tmp_path / "b", database_url=url).start()
        try:
            back = Client(second, room["code"], token)
            resumed = back.wait_for(lambda m: m["type"] == "state")
            assert resumed["version"] == waiting["version"]
            assert resumed["view"]["hand"] == waiting["view"]["hand"]
            back.close()
        finally:
            second.stop()


def test_a_hold_whose_session_outlives_its_connection_is_taken_again(tmp_path: Path) -> None:
    """A reset that closes the hold's connection on the server's side only (a middlebox, a NAT
    that forgot it) leaves PostgreSQL keeping its session, and the lock, until its TCP keepalive
    gives up (hours). The server ends that session of its own and takes the lock again; before, it
    was refused by its own session, named itself as "another Domeng server", never tried again,
    and once PostgreSQL let the session go a second server without Redis started beside it."""
    need_postgres()
    with scratch_postgres("hold") as url, ThreadedProxy(url) as proxy:
        first = ServerProcess(tmp_path / "a", database_url=proxy.url).start()
        try:
            proxy.strand()
            _wait_logged(first, "database_hold_lost")
            _wait_logged(first, "database_hold_taken_again")
            assert '"database_hold_taken"' not in first.log()
            assert "without Redis" in _refused(ServerProcess(tmp_path / "b", database_url=url))
        finally:
            first.stop()
