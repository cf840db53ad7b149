"""The per-address allowance of public reads over a real server (`app.web.routes`, ``READ``;
``DOMENG_READ_LIMIT``): a flood from one address is refused with 429 before any work while
another address reads on, and the lobby's own polling stays far within it. Across processes:
tests/test_cluster_shared.py."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from limits import parse

from app.web.settings import Settings
from tests.serverkit import ServerProcess

READ_LIMIT = Settings.model_fields["read_limit"].default
"""The server's own allowance (the tests' servers are given a far larger one: tests/serverkit.py)."""

LOBBY_JS = Path(__file__).resolve().parents[1] / "static" / "js" / "opentables.js"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    proc = ServerProcess(tmp_path_factory.mktemp("reads"), env={"DOMENG_READ_LIMIT": READ_LIMIT}).start()
    yield proc
    proc.stop()


def test_a_flood_of_reads_from_one_address_is_refused_and_another_address_reads_on(
    server: ServerProcess,
) -> None:
    """A security tester's 64 connections reading ``/api/rooms/status`` as fast as they could
    (238 a second) slowed every other client down: past its allowance an address gets 429
    ``too_many_reads`` with ``Retry-After``, on every public read, the others none."""
    room = server.create_room()
    allowed = parse(READ_LIMIT).amount
    with server.http_from("127.0.0.2") as flood:
        for n in range(allowed):
            reply = flood.get("/api/rooms/status", params={"codes": room["code"]})
            assert reply.status_code == 200, (n, reply.text)
        for path in ("/api/rooms/status?codes=x", "/api/open-tables", f"/api/rooms/{room['code']}"):
            refused = flood.get(path)
            assert refused.status_code == 429, refused.text
            assert refused.json()["detail"]["code"] == "too_many_reads"
            assert "too many requests" in refused.json()["detail"]["message"]
            assert 1 <= int(refused.headers["Retry-After"]) <= 60
    with server.http_from("127.0.0.3") as other:
        assert other.get("/api/rooms/status", params={"codes": room["code"]}).status_code == 200
        assert other.get("/api/open-tables").status_code == 200


def test_a_dozen_lobbies_left_open_behind_one_address_never_meet_the_allowance() -> None:
    """The lobby polls the open tables every ``REFRESH_MS`` while it is visible (its other reads
    are made once, when it opens): twelve of them, with a room page opened every 5 seconds, make
    fewer reads a minute than one address may."""
    found = re.search(r"const REFRESH_MS = (\d+);", LOBBY_JS.read_text(encoding="utf-8"))
    assert found is not None
    limit = parse(READ_LIMIT)
    per_window = limit.get_expiry() * 1000 / int(found.group(1))
    assert 12 * per_window + limit.get_expiry() / 5 < limit.amount
