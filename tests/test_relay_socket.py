"""`app.edge.remote.relay_socket`, the relay's side of a socket whose room another process hosts
(docs/cluster.md, "The relay"), in-process: a stand-in relay records what would go to the owner,
and a stand-in socket closes at every point around the owner's first answer. Whenever the client
leaves, its goodbye goes out and its heartbeats stop, so the owner never counts a closed window
as holding its seat."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from starlette.websockets import WebSocketDisconnect

from app.edge.connection import Connection
from app.edge.remote import _Relayed, relay_socket
from app.rooms.frames import dumps
from tests.test_connection import GatedSocket

HELLO = '{"type":"hello","protocol":1,"token":"t"}'
BEAT_S = 0.01
"""The stand-in relay's heartbeat period (s): a heartbeat task left running beats at once."""


class _Link:
    """One relayed socket as the stand-in relay sees it: every record it would publish."""

    conn_id = "edge:1"

    def __init__(self, on_record: Callable[[str], None]) -> None:
        self.on_record = on_record
        self.sent: list[str] = []

    async def open(self, hello: str) -> bool:
        self.sent.append("open")
        return True

    def post(self, text: str) -> None:
        self.sent.append("msg")

    async def beat(self, silent_s: float = 0.0) -> bool:
        self.sent.append("beat")
        self.on_record("!beat")  # the owner answers
        return True

    async def close(self, silent_s: float = 0.0) -> None:
        self.sent.append("bye")


class _Relay:
    """`app.edge.remote.RelayPort`, its one link kept for the test."""

    beat_s = BEAT_S
    on_inbox = None

    def __init__(self) -> None:
        self.links: list[_Link] = []

    def link(self, code: str, on_record: Callable[[str], None]) -> _Link:
        self.links.append(_Link(on_record))
        return self.links[-1]

    def outbox(self, conn_id: str, on_close: Callable[[], None]) -> None:
        raise AssertionError("the relay's side makes no outbox")


@pytest.mark.parametrize("turns", range(8))
def test_a_socket_closed_as_the_owner_first_answers_says_goodbye_and_stops_beating(turns: int) -> None:
    """The owner's welcome reaches the relay, and ``turns`` turns of the event loop later the
    client is gone (each count is another interleaving with the heartbeat task's first wait)."""

    async def main() -> list[str]:
        relay = _Relay()
        conn = Connection(GatedSocket(), 8)  # type: ignore[arg-type]
        calls = 0

        async def next_text() -> str:
            nonlocal calls
            calls += 1
            if calls == 1:
                return HELLO
            await asyncio.sleep(0)  # the heartbeat task starts and waits for the owner's answer
            relay.links[0].on_record('{"type":"welcome","seat":0}')
            for _ in range(turns):
                await asyncio.sleep(0)
            raise WebSocketDisconnect(1000)  # the player closed the window

        serving = asyncio.create_task(relay_socket(relay, "ROOM", conn, next_text, wait_s=5))
        await asyncio.wait([serving], timeout=10)  # a bound, not a wait: it ends at once, or never
        ended, beats = serving.done(), relay.links[0].sent.count("beat")
        serving.cancel()  # one that did not end beat on and on, and sent no goodbye: stop it
        await asyncio.wait([serving])
        await conn.stop()
        assert ended, f"still relayed after its socket closed: {beats} heartbeats, no goodbye"
        assert isinstance(serving.exception(), WebSocketDisconnect)
        assert asyncio.all_tasks() == {asyncio.current_task()}, "a task of the socket outlived it"
        return relay.links[0].sent

    sent = asyncio.run(main())
    assert sent[0] == "open" and sent[-1] == "bye" and sent.count("bye") == 1


def test_a_relayed_host_that_reads_slowly_gets_only_the_latest_spectators_list() -> None:
    """The owner publishes every list; the relay's `Connection` keeps only the latest waiting."""

    async def main() -> None:
        socket = GatedSocket(hold={"held"})
        conn = Connection(socket, 4)  # type: ignore[arg-type]
        conn.start()
        await asyncio.sleep(0)  # the sender reaches its queue
        relayed = _Relayed(conn)
        relayed.on_record("held")  # the host's socket stops reading
        lists = [
            dumps({"type": "spectators", "spectators": [{"tag": "t", "name": f"n{n}"}]}) for n in range(50)
        ]
        for text in lists:
            relayed.on_record(text)
        assert not conn.closed
        socket.gate.set()
        async with asyncio.timeout(5):
            while socket.written[-1:] != [lists[-1]]:
                await asyncio.sleep(0)
        assert socket.written == ["held", lists[-1]] and socket.closed_with == []
        await conn.stop()

    asyncio.run(main())
