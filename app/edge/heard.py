"""When the server last heard from a WebSocket's client, whichever implementation uvicorn runs.

A network that drops without a word (a phone losing its signal, a laptop lid shut) is noticed only
when a ping goes unanswered for ``DOMENG_PING_TIMEOUT_S``: up to ``DOMENG_PING_INTERVAL_S`` plus that
after the last byte came in. The player's grace must not wait for that on top of its own length,
so `heard_protocol` subclasses uvicorn's WebSocket protocol to stamp every arrival of bytes (a
frame of the client's, a pong the browser sends by itself even from a hidden tab, a close; its
side ending the TCP connection, with a FIN or a reset, counts too: it was there to do it) and
gives the application a way to read the stamp: the socket's ASGI scope carries, under
``extensions`` → `HEARD`, a callable returning the `time.monotonic` seconds of the last arrival.
`silent_s` reads it (0.0 for a server without it, as in-process test apps).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from typing import Any, Final

from uvicorn.config import WS_PROTOCOLS
from uvicorn.importer import import_from_string

__all__ = ["HEARD", "heard_protocol", "silent_s"]

HEARD: Final = "domeng.heard"
"""The ASGI scope extension holding ``() -> float``: `time.monotonic` at the client's last bytes."""


def heard_protocol(ws_impl: str) -> type[asyncio.Protocol]:
    """uvicorn's WebSocket protocol class named ``ws_impl`` (``websockets-sansio``, ``wsproto``,
    ``websockets``), subclassed to stamp each arrival of bytes and to put `HEARD` in the scope.
    Raises ImportError when that implementation's package is not installed."""
    base: type[Any] = import_from_string(WS_PROTOCOLS[ws_impl])

    class Heard(base):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.domeng_heard = time.monotonic()

        def data_received(self, data: bytes) -> None:
            self.domeng_heard = time.monotonic()
            super().data_received(data)

        def eof_received(self) -> bool | None:
            self.domeng_heard = time.monotonic()  # the client's side closed: it was there to say so
            result: bool | None = super().eof_received()
            return result

        def connection_lost(self, exc: Exception | None) -> None:
            if isinstance(exc, ConnectionResetError | BrokenPipeError):  # the client's side reset it
                self.domeng_heard = time.monotonic()
            super().connection_lost(exc)

        async def run_asgi(self) -> None:
            # the scope is built from the upgrade request just before the application runs
            extensions = self.scope.setdefault("extensions", {})
            extensions[HEARD] = self.last_heard
            await super().run_asgi()

        def last_heard(self) -> float:
            return float(self.domeng_heard)

    Heard.__name__ = Heard.__qualname__ = f"Heard{base.__name__}"
    return Heard


def silent_s(scope: Mapping[str, Any]) -> float:
    """Seconds since the client of the socket with ASGI ``scope`` was last heard (at least 0.0);
    0.0 when the server does not know (no `HEARD` extension)."""
    heard: Callable[[], float] | None = (scope.get("extensions") or {}).get(HEARD)
    if heard is None:
        return 0.0
    return max(0.0, time.monotonic() - heard())
