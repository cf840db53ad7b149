"""`app.edge.connection.Connection`'s send path: frames go out at once while the socket takes
them, a write that has to wait is finished before anything sent after it, a full queue closes the
connection with 4002, a failed write closes it, and a latest-only frame still waiting is
replaced in its place. The socket here is a stand-in whose writes
wait on a gate; tests/test_server_slow_client.py drives the same path through a real server."""

from __future__ import annotations

import asyncio

from starlette.websockets import WebSocketState

from app.edge.connection import SERVER_SEND, Connection
from app.edge.protocol import CLOSE_TOO_SLOW


class GatedSocket:
    """A WebSocket's send side: ``send_text`` returns at once unless the frame is in ``hold``,
    then it waits for ``gate``; ``fail`` makes a frame's write raise."""

    def __init__(self, hold: set[str] = frozenset(), fail: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        self.written: list[str] = []
        self.closed_with: list[int] = []
        self.hold, self.fail = hold, fail
        self.gate = asyncio.Event()
        self.application_state = WebSocketState.CONNECTED

    async def send_text(self, text: str) -> None:
        if text in self.fail:
            raise ConnectionResetError("peer gone")
        if text in self.hold:
            await asyncio.sleep(0)  # a bare yield first, then a future
            await self.gate.wait()
            if text.startswith("x"):
                raise ConnectionResetError("peer gone while waiting")
        self.written.append(text)

    async def close(self, code: int = 1000, reason: str | None = None) -> None:
        self.closed_with.append(code)
        self.application_state = WebSocketState.DISCONNECTED


async def _started(socket: GatedSocket, queue_size: int = 8) -> Connection:
    conn = Connection(socket, queue_size)  # type: ignore[arg-type]
    conn.start()
    await asyncio.sleep(0)  # the sender reaches its queue
    return conn


def test_frames_are_written_at_once_while_the_socket_takes_them() -> None:
    async def main() -> None:
        socket = GatedSocket()
        conn = await _started(socket)
        for text in ("a", "b", "c"):
            conn.send(text)
            assert socket.written[-1] == text  # written before send returned: no task switch
        await conn.stop()

    asyncio.run(main())


def test_a_write_that_waits_is_finished_before_later_frames() -> None:
    async def main() -> None:
        socket = GatedSocket(hold={"b"})
        conn = await _started(socket)
        for text in ("a", "b", "c", "d"):
            conn.send(text)
        assert socket.written == ["a"]
        for _ in range(3):
            await asyncio.sleep(0)
        assert socket.written == ["a"]  # c and d wait behind b
        socket.gate.set()
        for _ in range(10):
            await asyncio.sleep(0)
        assert socket.written == ["a", "b", "c", "d"]
        conn.send("e")
        assert socket.written[-1] == "e"  # idle again: at once
        await conn.stop()

    asyncio.run(main())


def test_a_full_queue_behind_a_waiting_write_closes_as_too_slow() -> None:
    async def main() -> None:
        socket = GatedSocket(hold={"b"})
        conn = await _started(socket, queue_size=2)
        for text in ("a", "b", "c", "d", "e"):
            conn.send(text)
        assert conn.closed
        socket.gate.set()
        await conn.flush(timeout_s=5)
        assert socket.closed_with == [CLOSE_TOO_SLOW]
        # the write already started (b) is finished, never dropped; what waited behind it goes
        assert socket.written == ["a", "b"]
        await conn.stop()

    asyncio.run(main())


def test_a_failed_write_closes_the_connection() -> None:
    async def main() -> None:
        socket = GatedSocket(fail={"b"})
        conn = await _started(socket)
        conn.send("a")
        conn.send("b")
        assert conn.closed
        conn.send("c")  # dropped: the connection is closing
        await conn.flush(timeout_s=5)
        assert socket.written == ["a"]
        assert socket.closed_with == [CLOSE_TOO_SLOW]
        await conn.stop()

    asyncio.run(main())


def test_stopping_during_a_waiting_write_abandons_it() -> None:
    async def main() -> None:
        socket = GatedSocket(hold={"b"})
        conn = await _started(socket)
        conn.send("a")
        conn.send("b")
        await asyncio.sleep(0)
        await conn.stop()
        socket.gate.set()
        await asyncio.sleep(0)
        assert socket.written == ["a"]

    asyncio.run(main())


def test_a_write_that_fails_after_waiting_closes_the_connection() -> None:
    async def main() -> None:
        socket = GatedSocket(hold={"x"})
        conn = await _started(socket)
        for text in ("a", "x", "c"):
            conn.send(text)
        socket.gate.set()
        for _ in range(10):
            await asyncio.sleep(0)
        assert conn.closed
        assert socket.written == ["a"]
        assert socket.closed_with == [CLOSE_TOO_SLOW]
        await conn.stop()

    asyncio.run(main())


def test_a_waiting_latest_frame_is_replaced_in_its_place_not_queued_again() -> None:
    async def main() -> None:
        socket = GatedSocket(hold={"a"})
        conn = await _started(socket, queue_size=4)
        conn.send("a")  # the socket stops reading
        conn.send_latest("spectators", "s0")
        conn.send("b")
        for n in range(1, 100):  # far more than the queue holds
            conn.send_latest("spectators", f"s{n}")
        conn.send("c")
        assert not conn.closed
        socket.gate.set()
        async with asyncio.timeout(5):
            while socket.written[-1:] != ["c"]:
                await asyncio.sleep(0)
        assert socket.written == ["a", "s99", "b", "c"]  # the latest, in the stale one's place
        assert socket.closed_with == []
        conn.send_latest("spectators", "s100")  # nothing waits: written at once
        assert socket.written[-1] == "s100"
        await conn.stop()

    asyncio.run(main())


def test_a_write_through_the_servers_send_that_fails_marks_the_socket_gone() -> None:
    """Through the server's own ``send`` (`SERVER_SEND`), a socket error marks the WebSocket
    disconnected, as Starlette's ``send_text`` does: no close is written to the gone socket."""

    async def main() -> None:
        socket = GatedSocket()
        server_sent: list[dict[str, str]] = []

        async def server_send(message: dict[str, str]) -> None:
            if message["text"] == "b":
                raise ConnectionResetError("peer gone")
            server_sent.append(message)

        socket.scope = {"extensions": {SERVER_SEND: server_send}}  # type: ignore[attr-defined]
        conn = await _started(socket)
        conn.send("a")
        conn.send("b")
        assert conn.closed
        await conn.flush(timeout_s=5)
        assert server_sent == [{"type": "websocket.send", "text": "a"}]
        assert socket.written == []  # nothing through send_text
        assert socket.application_state is WebSocketState.DISCONNECTED
        assert socket.closed_with == []
        await conn.stop()

    asyncio.run(main())
