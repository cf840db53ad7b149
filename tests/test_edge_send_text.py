"""A room socket's text frames on websockets-sansio are framed by the library's protocol and
written straight to the transport (`app.edge.connection.SERVER_SEND_TEXT`), on a real uvicorn
server and a real client, with and without permessage-deflate; on the other implementations they
go through the server's ``send`` (`app.edge.connection.SERVER_SEND`)."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.websockets import WebSocket
from websockets.sync.client import connect

from app.edge.connection import SERVER_SEND, SERVER_SEND_TEXT, Connection
from tests.test_edge_refusals import _WS_IMPLS, _serving

_SIZES = (0, 1, 125, 126, 127, 65535, 65536, 70000)
"""Payload lengths around the frame header's 7-, 16- and 64-bit length forms."""


async def _app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Accepts a socket and counts the frames that go through the server's ``send``; sends a
    frame of each of `_SIZES` through a `Connection`, then, once the client says it has them all,
    that count, then closes with 4000."""
    if scope["type"] != "websocket":
        return
    through_send = 0
    extensions = scope["extensions"]
    server_send = extensions[SERVER_SEND]

    async def counting(message: dict[str, Any]) -> None:
        nonlocal through_send
        if message["type"] == "websocket.send":
            through_send += 1
        await server_send(message)

    extensions[SERVER_SEND] = counting
    websocket = WebSocket(scope, receive, send)
    await websocket.accept()
    conn = Connection(websocket, 16)
    conn.start()
    for size in _SIZES:
        conn.send("x" * size)
    assert await websocket.receive_text() == "all in"
    conn.send(f"through send {through_send}; offered {SERVER_SEND_TEXT in extensions}")
    conn.close_with(4000, "done")
    await conn.flush(timeout_s=5)
    await conn.stop()


@pytest.mark.parametrize("compression", [None, "deflate"])
@pytest.mark.parametrize("ws_impl", _WS_IMPLS)
def test_text_frames_skip_the_servers_send_on_sansio_alone(ws_impl: str, compression: str | None) -> None:
    """Straight to the transport on websockets-sansio (`domeng serve`'s default), compressed or
    not, each whole and in order."""
    address = lambda url: url.replace("http", "ws") + "/ws"  # noqa: E731
    with (
        _serving(_app, ws_impl) as (url, _),
        connect(address(url), max_size=None, compression=compression) as client,
    ):
        for size in _SIZES:
            assert client.recv(timeout=10) == "x" * size
        client.send("all in")
        sansio = ws_impl == "websockets-sansio"
        counted = 0 if sansio else len(_SIZES)
        assert client.recv(timeout=10) == f"through send {counted}; offered {sansio}"
        with pytest.raises(Exception, match="4000"):  # the close went through the WebSocket
            client.recv(timeout=10)
