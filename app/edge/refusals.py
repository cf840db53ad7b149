"""Every refused WebSocket handshake carries the site's security headers, whoever writes it.

`app.web.middleware.SecureDenials` gives them to a refusal the application writes (ASGI's
``websocket.http.response``: the room socket's 503). uvicorn's WebSocket protocols write the other
refusals themselves, out of the application's reach: 403 when the application closes a socket
before accepting it (a path with no socket), 400 (or 426) for a malformed handshake, 500 when the
application fails before accepting, and the websockets library's own 414/431. When the server stops
(SIGTERM) while the application has not answered a handshake yet (a room asked of another process,
say), uvicorn answers it with the same 500; it is answered 503 with ``Retry-After: 1`` instead
(`STOPPING`), so that nginx tries another process (``proxy_next_upstream http_503``) rather than
handing the browser a server error (docs/deploy.md, "Adding and removing a process"). `secure_refusals`
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

__all__ = ["STOPPING", "secure_refusals"]

_SWITCHING = 101

STOPPING = b"this server is stopping; try again"
"""The body of the 503 that answers a handshake still waiting for the application when the server
stops (uvicorn's own answer is its 500)."""


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

        def shutdown(self) -> None:
            # uvicorn answers a handshake the application has not answered yet with its 500:
            # the server stopping is no fault, and a 503 lets nginx try another process
            self.domeng_stopping = True
            super().shutdown()

        def send_500_response(self) -> None:
            if not getattr(self, "domeng_stopping", False):
                self._refuse(http.HTTPStatus.INTERNAL_SERVER_ERROR, b"Internal Server Error", [])
            elif not getattr(self, "domeng_refused", False):  # once: the handler may fail after it
                self.domeng_refused = True
                self._refuse(http.HTTPStatus.SERVICE_UNAVAILABLE, STOPPING, [("Retry-After", "1")])

        def _refuse(self, status: http.HTTPStatus, body: bytes, extra: list[tuple[str, str]]) -> None:
            """Answer the handshake ``status`` with ``body`` and ``extra`` headers, as uvicorn's
            `send_500_response` answers it 500 in each implementation."""
            if status == http.HTTPStatus.INTERNAL_SERVER_ERROR and not hasattr(base, "write_http_response"):
                super().send_500_response()
            elif hasattr(base, "write_http_response"):  # the legacy one: through write_http_response
                from websockets.datastructures import Headers  # noqa: PLC0415 (legacy websockets only)

                plain = [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body)))]
                self.write_http_response(status, Headers([*plain, ("Connection", "close"), *extra]), body)
                self.handshake_started_event.set()  # as uvicorn's own: its handler task may end
            elif self.handshake_complete or getattr(self, "response_started", False):
                return  # too late for an answer (wsproto's own check)
            elif type(self.conn).__module__.startswith("websockets"):  # websockets-sansio
                if self.initial_response:
                    return
                response = self.conn.reject(int(status), body.decode())
                for name, value in extra:
                    response.headers[name] = value
                self.conn.send_response(response)
                self.transport.write(b"".join(self.conn.data_to_send()))
            else:  # wsproto
                events = importlib.import_module("wsproto.events")
                pairs = [(b"content-type", b"text/plain; charset=utf-8"), (b"connection", b"close")]
                pairs += [(b"content-length", str(len(body)).encode())]
                pairs += [(k.lower().encode(), v.encode()) for k, v in extra]
                rejected = events.RejectConnection(status_code=int(status), headers=pairs, has_body=True)
                self.transport.write(self.conn.send(rejected) + self.conn.send(events.RejectData(data=body)))

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
