"""Every room socket spends one of its address's socket opens (`app.edge.endpoint.room_socket`,
``DOMENG_SOCKET_LIMIT``), over a real server and real sockets: a client reopening a seat's socket
of a room in memory again and again is closed with 1008 past its allowance, before the room is
looked up, while another address opens the same room. Across processes the count is shared as
the public reads' is (tests/test_cluster_shared.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from app.edge.endpoint import LOOKUPS_SPENT
from tests.serverkit import Client, ServerProcess

ALLOWED = 10
"""The room sockets one address may open in a minute on this module's server."""

POLICY = 1008


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    env = {"DOMENG_SOCKET_LIMIT": f"{ALLOWED} per minute"}
    proc = ServerProcess(tmp_path_factory.mktemp("opens"), env=env).start()
    yield proc
    proc.stop()


def test_a_seat_reopened_again_and_again_is_refused_past_the_allowance_and_another_address_opens(
    server: ServerProcess,
) -> None:
    """A security tester reopened one seat's socket of a room in memory about 200 times a second
    from one address: each hello told every socket of the room who came (with 90 spectators, 120
    frames and 3 ms of the event loop each), and nothing counted a socket of a room in memory.
    Now the address's `ALLOWED` sockets open and are welcomed; the next is closed with 1008 and
    the public reads' reason before its room is looked up; another address still opens the room."""
    room = server.create_room()
    code, token = room["code"], server.claim(room["code"], 0, "Ana").json()["token"]
    for _ in range(ALLOWED):
        seat = Client(server, code, token, source="127.0.0.2")
        assert seat.wait_for(lambda m: m["type"] == "welcome")["seat"] == 0
        seat.close()
    with connect(f"{server.ws_base}/ws/rooms/{code}", open_timeout=10, source_address=("127.0.0.2", 0)) as ws:
        with pytest.raises(ConnectionClosed):
            ws.recv(timeout=10)
        assert (ws.close_code, ws.close_reason) == (POLICY, LOOKUPS_SPENT)
    other = Client(server, code, source="127.0.0.3")
    assert other.wait_for(lambda m: m["type"] == "welcome")["seat"] is None
    other.close()
