"""A room socket's look-up of a room not in memory spends its address's public reads
(`app.edge.endpoint.room_socket`, ``DOMENG_READ_LIMIT``) over a real server and real sockets: a
flood of made-up codes from one address is refused with 1008 before anything is looked up, while
another address opens its room, and a room in memory opens uncounted, even for the flooding
address. Across processes: tests/test_cluster_shared.py."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from app.edge.endpoint import LOOKUPS_SPENT
from tests.serverkit import Client, ServerProcess

ALLOWED = 12
"""The reads one address may make in a minute on this module's server."""

POLICY = 1008
ROOM_CLOSED = 4003


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    env = {"DOMENG_READ_LIMIT": f"{ALLOWED} per minute"}
    proc = ServerProcess(tmp_path_factory.mktemp("lookups"), env=env).start()
    yield proc
    proc.stop()


def closed_with(server: ServerProcess, code: str, source: str) -> tuple[int | None, str | None]:
    """Open a socket for room ``code`` from ``source`` and wait for the server to close it: its
    close code and reason."""
    with connect(f"{server.ws_base}/ws/rooms/{code}", open_timeout=10, source_address=(source, 0)) as ws:
        with pytest.raises(ConnectionClosed):
            ws.recv(timeout=10)
        return ws.close_code, ws.close_reason


def welcomed(client: Client) -> dict[str, object]:
    return client.wait_for(lambda m: m["type"] == "welcome")


def test_a_flood_of_made_up_codes_from_one_address_is_refused_and_another_address_opens_its_room(
    server: ServerProcess,
) -> None:
    """A security tester's socket opens to made-up codes (~170 a second from one address), each a
    database look-up, slowed another table's moves from 1.3 to 4.6 ms (median): past its public
    reads an address's sockets for rooms not in memory close with 1008 before any look-up, on
    the HTTP reads too (one allowance); another address opens its room, and so does the flooding
    address's own table, in memory, socket after socket (play and reconnects are never counted)."""
    room = server.create_room()
    code, token = room["code"], server.claim(room["code"], 0, "Ana").json()["token"]
    for n in range(ALLOWED):
        assert closed_with(server, f"made-up-{n}", "127.0.0.2") == (ROOM_CLOSED, "no room with this code")
    for n in range(3):
        assert closed_with(server, f"made-up-again-{n}", "127.0.0.2") == (POLICY, LOOKUPS_SPENT)
    with server.http_from("127.0.0.2") as flood:
        refused = flood.get(f"/api/rooms/{code}")
        assert refused.status_code == 429 and refused.json()["detail"]["code"] == "too_many_reads"
    for _ in range(ALLOWED + 2):  # in memory: a seat's reconnects from the spent address open on
        seat = Client(server, code, token, source="127.0.0.2")
        assert welcomed(seat)["seat"] == 0
        seat.close()
    other = Client(server, code, source="127.0.0.3")  # another address, a spectator
    assert welcomed(other)["seat"] is None
    other.close()
    assert closed_with(server, "made-up-elsewhere", "127.0.0.3") == (ROOM_CLOSED, "no room with this code")
    assert httpx.get(f"{server.url}/api/rooms/{code}", timeout=10).status_code == 200
