"""Every refused WebSocket handshake carries the site's security headers, whoever writes it.

`app.web.middleware.SecureDenials` gives them to a refusal the application writes (ASGI's
``websocket.http.response``: the room socket's 503). uvicorn's WebSocket protocols write the other
refusals themselves, out of the application's reach: 403 when the application closes a socket
before accepting it (a path with no socket), 400 (or 426) for a malformed handshake, 500 when the
application fails before accepting, and the websockets library's own 414/431. `secure_refusals`
subclasses uvicorn's protocol class so each of those answers carries the same headers as every
page (replacing any header of the same name); the answer that accepts a socket (101) is left as
it is. It covers the three implementations uvicorn offers (``DOMENG_WS_IMPL``): ``websockets-sansio``
and ``wsproto``, whose every refusal goes through their connection object, and the legacy
``websockets``, whose every refusal goes through ``write_http_response``.
"""

from __future__ import annotations

import dataclasses
import http
import importlib
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["secure_refusals"]

_SWITCHING = 101


def secure_refusals(base: type[Any], headers: Iterable[tuple[str, str]]) -> type[Any]:
    """``base`` (one of uvicorn's WebSocket protocol classes, or a subclass of one such as
    `app.edge.heard.heard_protocol`'s) subclassed so that every handshake it refuses carries
    ``headers`` (name, value), as a page does. Pass the result as ``uvicorn.run(ws=...)``."""
    secured = [(name, value) for name, value in headers]
    names = {name.lower() for name, _ in secured}

    def replace_in(found: Any) -> None:
        """``headers`` set in a websockets `Headers` (a multi-dict), replacing those of the same name."""
        for name, value in secured:
            if name in found:
                del found[name]
            found[name] = value

    def secure_pairs(pairs: Iterable[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
        kept = [(k, v) for k, v in pairs if k.decode("latin-1").lower() not in names]
        return kept + [(k.encode("latin-1"), v.encode("latin-1")) for k, v in secured]

    class SecureRefusals(base):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            conn = getattr(self, "conn", None)
            module = type(conn).__module__
            if module.startswith("websockets"):  # websockets-sansio: a `websockets.server.ServerProtocol`
                _secure_sansio(conn, replace_in)
            elif module.startswith("wsproto"):  # wsproto: a `wsproto.WSConnection`
                _secure_wsproto(conn, secure_pairs)

        # the legacy websockets: every answer to the handshake is written here, refusals included
        def write_http_response(
            self, status: http.HTTPStatus, headers: Any, body: bytes | None = None
        ) -> None:
            if status != _SWITCHING:
                replace_in(headers)
            super().write_http_response(status, headers, body)

        def send_500_response(self) -> None:
            if not hasattr(base, "write_http_response"):  # the others' go through their connection
                super().send_500_response()
                return
            # the legacy one writes its 500 as raw bytes: written here through write_http_response
            from websockets.datastructures import Headers  # noqa: PLC0415 (legacy websockets only)

            body = b"Internal Server Error"
            answer = Headers(
                [
                    ("Content-Type", "text/plain; charset=utf-8"),
                    ("Content-Length", str(len(body))),
                    ("Connection", "close"),
                ]
            )
            self.write_http_response(http.HTTPStatus.INTERNAL_SERVER_ERROR, answer, body)
            self.handshake_started_event.set()  # as uvicorn's own: its handler task may end

    SecureRefusals.__name__ = SecureRefusals.__qualname__ = f"SecureRefusals{base.__name__}"
    return SecureRefusals


def _secure_sansio(conn: Any, replace_in: Callable[[Any], None]) -> None:
    """The websockets-sansio connection ``conn``: every response but a 101 gets the headers, those
    it sends (`send_response`) and those uvicorn serializes itself (from `reject`)."""
    reject, send_response = conn.reject, conn.send_response

    def secured_reject(status: Any, text: str) -> Any:
        response = reject(status, text)
        replace_in(response.headers)
        return response

    def secured_send_response(response: Any) -> None:
        if response.status_code != _SWITCHING:
            replace_in(response.headers)
        send_response(response)

    conn.reject, conn.send_response = secured_reject, secured_send_response


def _secure_wsproto(conn: Any, secure_pairs: Callable[[Any], list[tuple[bytes, bytes]]]) -> None:
    """The wsproto connection ``conn``: every refusal (a ``RejectConnection`` event) gets the headers."""
    reject_connection = importlib.import_module("wsproto.events").RejectConnection  # where wsproto runs
    send = conn.send

    def secured_send(event: Any) -> bytes:
        if isinstance(event, reject_connection):
            event = dataclasses.replace(event, headers=secure_pairs(event.headers))
        result: bytes = send(event)
        return result

    conn.send = secured_send
