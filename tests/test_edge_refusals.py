"""`app.edge.refusals` on a real uvicorn server and real sockets, for a refusal no request to the
game's server provokes: the application failing before it accepts a socket (uvicorn answers 500
itself). The answer carries every security header once, as a page does, whichever WebSocket
implementation runs (wsproto where installed). The 403 and 400 that uvicorn writes, and the
application's own 503, are checked on the game's server (tests/test_server_lifecycle.py)."""

from __future__ import annotations

import base64
import os
import socket
import threading
import time
from collections.abc import Iterator
from importlib.util import find_spec
from typing import Any

import httpx
import pytest
import uvicorn

from app.edge.heard import heard_protocol
from app.edge.refusals import secure_refusals
from app.web.middleware import security_headers

_WS_IMPLS = [
    "websockets-sansio",
    "websockets",
    pytest.param("wsproto", marks=pytest.mark.skipif(find_spec("wsproto") is None, reason="no wsproto")),
]


async def _failing_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """An application that fails before it accepts any socket."""
    if scope["type"] == "websocket":
        raise RuntimeError("failed before accepting (a test)")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(params=_WS_IMPLS)
def failing_server(request: pytest.FixtureRequest) -> Iterator[str]:
    """A uvicorn server in a thread, running `_failing_app` with the protocol `domeng serve` gives
    uvicorn for the implementation of the parameter; its base URL."""
    protocol = secure_refusals(heard_protocol(request.param), security_headers().headers.items())
    port = _free_port()
    config = uvicorn.Config(
        _failing_app, host="127.0.0.1", port=port, ws=protocol, lifespan="off", log_level="critical"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def test_a_handshake_the_application_fails_is_refused_with_the_security_headers(failing_server: str) -> None:
    headers = {
        "Upgrade": "websocket",
        "Connection": "Upgrade",
        "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": base64.b64encode(os.urandom(16)).decode(),
    }
    answer = httpx.get(f"{failing_server}/ws/anything", headers=headers, timeout=30)
    assert answer.status_code == 500
    for name, value in security_headers().headers.items():
        assert answer.headers.get_list(name) == [value], name
