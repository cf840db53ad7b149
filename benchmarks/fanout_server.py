"""A bare FastAPI WebSocket fan-out server: the ceiling `benchmarks/load.py` measures ours against.

No engine, no database, no validation beyond ``json.loads``: one WebSocket route,
``/ws/rooms/{code}``, where the five clients of a table join by code (the first frame is
docs/protocol.md's ``hello``; its token is ``"fanout-seat-<n>"``). When the fifth joins, the table
"deals": version 1, seat 0 to act. Each ``action`` at the table's current version bumps the version
and sends every client of the table its own ``state`` frame (one ``orjson.dumps`` per seat, as
the real server serialises one view per seat), with a fake ``legal`` list for the seat whose turn it is
(the turn rotates 0, 1, 2, 3, 4, 0, …), padded to ``--frame-bytes`` so frames are as large as the
real server's. An action at another version gets an ``error`` reply, as in the real protocol.

Run by load.py as ``python benchmarks/fanout_server.py --port 0 --frame-bytes N [--compression
deflate] [--loop L] [--ws W]``; it serves on 127.0.0.1 with one uvicorn worker on the same stack
and settings as ``domeng serve``: its event loop and WebSocket implementation (the defaults of
``DOMENG_LOOP`` and ``DOMENG_WS_IMPL``, `app.web.settings.Settings`, unless given), 4 KiB frames,
pings every 15 s, permessage-deflate only when asked, as ``DOMENG_WS_COMPRESSION``.
"""

from __future__ import annotations

import argparse
import json
import logging
from typing import Any

import orjson
import uvicorn
from fastapi import FastAPI, WebSocket
from starlette.websockets import WebSocketDisconnect

from app.web.settings import Settings

SEATS = 5
TOKEN_PREFIX = "fanout-seat-"


class Table:
    """The sockets of one table by seat, and its version (the number of stored changes)."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.version = 0
        self.sockets: dict[int, WebSocket] = {}

    def frame(self, seat: int, pad: str) -> str:
        """The ``state`` frame of ``seat`` at the current version."""
        to_act = (self.version - 1) % SEATS
        legal = [{"seat": seat, "play": "0-0", "end": "R"}] if seat == to_act and self.version else []
        message: dict[str, Any] = {
            "type": "state",
            "version": self.version,
            "room": {"code": self.code, "status": "playing", "version": self.version, "turn": to_act},
            "view": {"seat": seat, "to_act": to_act, "legal": legal},
            "events": [],
            "pad": pad,
        }
        return orjson.dumps(message).decode()

    async def broadcast(self, pad: str) -> None:
        """Send every client its frame; a client whose send fails leaves the table."""
        for seat, socket in list(self.sockets.items()):
            try:
                await socket.send_text(self.frame(seat, pad))
            except (WebSocketDisconnect, RuntimeError, OSError):
                self.sockets.pop(seat, None)


def create_app(frame_bytes: int) -> FastAPI:
    """The fan-out app; state frames are padded to about ``frame_bytes`` bytes."""
    app = FastAPI(title="fan-out baseline")
    tables: dict[str, Table] = {}
    probe = Table("x" * 22)
    probe.version = 1
    pad = "x" * max(0, frame_bytes - len(probe.frame(1, "")))  # most frames list nothing legal

    @app.websocket("/ws/rooms/{code}")
    async def table_socket(websocket: WebSocket, code: str) -> None:
        await websocket.accept()
        table = tables.setdefault(code, Table(code))
        try:
            hello = json.loads(await websocket.receive_text())
            seat = int(str(hello["token"]).removeprefix(TOKEN_PREFIX))
            table.sockets[seat] = websocket
            await websocket.send_text(json.dumps({"type": "welcome", "protocol": 1, "seat": seat}))
            await websocket.send_text(table.frame(seat, pad))
            if len(table.sockets) == SEATS and table.version == 0:
                table.version = 1
                await table.broadcast(pad)
            while True:
                message = json.loads(await websocket.receive_text())
                if message.get("type") != "action":
                    continue
                if message.get("version") != table.version:
                    reply = {"type": "error", "code": "stale_version", "version": table.version}
                    await websocket.send_text(json.dumps(reply))
                    continue
                table.version += 1
                await table.broadcast(pad)
        except WebSocketDisconnect:
            pass
        finally:
            for seat, socket in list(table.sockets.items()):
                if socket is websocket:
                    table.sockets.pop(seat, None)

    return app


def main() -> None:
    """``python benchmarks/fanout_server.py [--port 0] [--frame-bytes 2400] [--compression deflate]
    [--loop uvloop|asyncio] [--ws websockets-sansio|wsproto|websockets]``."""
    stack = Settings.model_fields
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--frame-bytes", type=int, default=2400, help="size of a state frame")
    parser.add_argument("--compression", choices=("none", "deflate"), default="none")
    parser.add_argument(
        "--loop", default=stack["loop"].get_default(call_default_factory=True), help="uvicorn's event loop"
    )
    parser.add_argument("--ws", default=stack["ws_impl"].default, help="uvicorn's WebSocket implementation")
    parser.add_argument("--log-level", default="warning")
    args = parser.parse_args()
    logging.basicConfig(level=args.log_level.upper(), format="%(message)s")
    uvicorn.run(
        create_app(args.frame_bytes),
        host="127.0.0.1",
        port=args.port,
        loop=args.loop,
        http="h11",  # as domeng serve (its connection guard is an h11 protocol)
        ws=args.ws,
        ws_max_size=4096,
        ws_per_message_deflate=args.compression == "deflate",
        ws_ping_interval=10.0,  # domeng serve's defaults (DOMENG_PING_INTERVAL_S, _TIMEOUT_S)
        ws_ping_timeout=10.0,
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=5,
    )


if __name__ == "__main__":
    main()
