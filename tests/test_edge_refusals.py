"""`app.edge.refusals` on a real uvicorn server and real sockets, for a refusal no request to the
game's server provokes: the application failing before it accepts a socket (uvicorn answers 500
itself), and the server stopping while the application has not answered a handshake yet (503 and
``Retry-After``, so nginx tries another process: uvicorn's own answer was its 500, which nginx hands
to the browser). The answer carries every security header once, as a page does, whichever WebSocket
implementation runs (wsproto where installed). The 403 and 400 that uvicorn writes, and the
application's own 503, are checked on the game's server (tests/test_server_lifecycle.py)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from importlib.util import find_spec
from typing import Any

import httpx
import pytest
import uvicorn

from app.edge.heard import heard_protocol
from app.edge.refusals import STOPPING, secure_refusals
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


@contextlib.contextmanager
def _serving(app: Any, ws_impl: str) -> Iterator[tuple[str, uvicorn.Server]]:
    """A uvicorn server in a thread, running ``app`` with the protocol `domeng serve` gives uvicorn
    for ``ws_impl``; its base URL and the server (stopped on the way out, if not before)."""
    protocol = secure_refusals(heard_protocol(ws_impl), security_headers().headers.items())
    port = _free_port()
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, ws=protocol, lifespan="off", log_level="critical"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}", server
    finally:
        server.should_exit = True
        thread.join(timeout=30)


@pytest.fixture(params=_WS_IMPLS)
def failing_server(request: pytest.FixtureRequest) -> Iterator[str]:
    """`_serving` `_failing_app` with the implementation of the parameter; its base URL."""
    with _serving(_failing_app, request.param) as (url, _):
        yield url


def _handshake() -> dict[str, str]:
    return {
        "Upgrade": "websocket",
        "Connection": "Upgrade",
        "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": base64.b64encode(os.urandom(16)).decode(),
    }


def test_a_handshake_the_application_fails_is_refused_with_the_security_headers(failing_server: str) -> None:
    answer = httpx.get(f"{failing_server}/ws/anything", headers=_handshake(), timeout=30)
    assert answer.status_code == 500
    for name, value in security_headers().headers.items():
        assert answer.headers.get_list(name) == [value], name


@pytest.mark.parametrize("ws_impl", _WS_IMPLS)
def test_a_handshake_unanswered_when_the_server_stops_is_refused_with_503(ws_impl: str) -> None:
    """A socket whose application is still deciding (a room asked of another process, say) when
    the server stops (SIGTERM: uvicorn's shutdown) is answered 503 with ``Retry-After``, which
    nginx passes to the next process (deploy/nginx.conf, ``proxy_next_upstream http_503``);
    uvicorn answered it 500, which nginx gave the browser."""
    arrived, released = threading.Event(), threading.Event()

    async def deciding_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "websocket":
            arrived.set()
            await asyncio.to_thread(released.wait, 30)  # still deciding when the server stops

    with _serving(deciding_app, ws_impl) as (url, server), ThreadPoolExecutor(1) as asking:
        answering = asking.submit(httpx.get, f"{url}/ws/anything", headers=_handshake(), timeout=30)
        assert arrived.wait(30), "the handshake did not reach the application"
        server.should_exit = True  # what SIGTERM does
        try:
            answer = answering.result(30)
        finally:
            released.set()
    assert answer.status_code == 503, answer.text
    assert answer.headers["Retry-After"] == "1"
    assert answer.text == STOPPING.decode()
    for name, value in security_headers().headers.items():
        assert answer.headers.get_list(name) == [value], name
