"""A room socket's text frames go out through the server's own ASGI ``send``
(`app.edge.connection.SERVER_SEND`, put in the scope by `app.edge.heard.heard_protocol`), not
through Starlette's ``send_text`` and the application's wrappers of ``send``, on a real uvicorn
server and a real client, whichever WebSocket implementation runs (the legacy one calls the
application with its ``asgi_send``); the close still goes through the WebSocket."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.websockets import WebSocket
from websockets.sync.client import connect

from app.edge.connection import SERVER_SEND, Connection
from tests.test_edge_refusals import _WS_IMPLS, _serving


class _NoSendText(WebSocket):
    """Starlette's WebSocket whose ``send_text`` is not to be used (it counts its calls)."""

    bypassed = 0

    async def send_text(self, data: str) -> None:
        _NoSendText.bypassed += 1
        await super().send_text(data)


async def _app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Accepts a socket, sends whether the scope's `SERVER_SEND` is the very ``send`` the server
    called it with and two frames through a `Connection`, then closes it with 4000."""
    if scope["type"] != "websocket":
        return
    websocket = _NoSendText(scope, receive, send)
    await websocket.accept()
    conn = Connection(websocket, 8)
    conn.start()
    conn.send("server's send" if scope["extensions"].get(SERVER_SEND) == send else "another send")
    conn.send(f"send_text calls {_NoSendText.bypassed}")
    conn.close_with(4000, "done")
    await conn.flush(timeout_s=5)
    await conn.stop()


@pytest.mark.parametrize("ws_impl", _WS_IMPLS)
def test_frames_go_through_the_servers_own_send(ws_impl: str) -> None:
    with _serving(_app, ws_impl) as (url, _), connect(url.replace("http", "ws") + "/ws") as client:
        assert client.recv(timeout=10) == "server's send"
        assert client.recv(timeout=10) == "send_text calls 0"
        with pytest.raises(Exception, match="4000"):  # the close went through the WebSocket
            client.recv(timeout=10)
