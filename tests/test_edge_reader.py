"""A room socket's messages are read in a task of their own (issue 15, `app.edge.endpoint._reader`).

Every message a client sends resumes the coroutines awaiting it, one frame each: read from the
socket handler's own task, that is the whole ASGI middleware stack and FastAPI's and Starlette's
routing and exception layers (some 33 frames) for every message; read from a task started under
the handler, a handful. The application is driven in-process by direct ASGI calls.
"""

from __future__ import annotations

import asyncio
import json
import sys
import traceback
from pathlib import Path
from typing import Any

from app.web.app import create_app
from app.web.settings import Settings

MOST_FRAMES = 12
"""Frames a message resumes at most, from its task's first to the server's ``receive``."""


def test_a_message_resumes_only_the_reader_tasks_few_frames(tmp_path: Path) -> None:
    depths: list[int] = []
    incoming: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    sent: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def receive() -> dict[str, Any]:
        stack = traceback.extract_stack(sys._getframe(1))  # the task's coroutines, innermost last
        first = max(i for i, frame in enumerate(stack) if frame.name == "_run")  # asyncio's Handle._run
        depths.append(len(stack) - first - 1)
        return await incoming.get()

    async def send(message: dict[str, Any]) -> None:
        await sent.put(message)

    async def next_text() -> str:
        while True:
            message = await sent.get()
            if message["type"] == "websocket.close":
                raise AssertionError(f"closed: {message}")
            if message["type"] == "websocket.send":
                return str(message["text"])

    async def main() -> None:
        app = create_app(Settings(data_dir=tmp_path, bot_workers=1, log_json=False, log_level="warning"))
        async with app.router.lifespan_context(app):
            room, _token = await app.state.hub.create_room("domeng", {}, 5, 0.0, [None] * 5)
            scope = {
                "type": "websocket",
                "asgi": {"version": "3.0"},
                "scheme": "ws",
                "server": ("127.0.0.1", 8000),
                "client": ("127.0.0.1", 40000),
                "root_path": "",
                "path": f"/ws/rooms/{room.code}",
                "raw_path": f"/ws/rooms/{room.code}".encode(),
                "query_string": b"",
                "headers": [(b"host", b"127.0.0.1:8000")],
                "subprotocols": [],
            }
            incoming.put_nowait({"type": "websocket.connect"})
            served = asyncio.create_task(app(scope, receive, send))
            assert (await sent.get())["type"] == "websocket.accept"
            incoming.put_nowait({"type": "websocket.receive", "text": json.dumps({"type": "hello"})})
            while '"welcome"' not in await next_text():
                pass
            depths.clear()
            for _ in range(3):
                incoming.put_nowait({"type": "websocket.receive", "text": '{"type":"ping"}'})
                while await next_text() != '{"type":"pong"}':
                    pass
            incoming.put_nowait({"type": "websocket.disconnect", "code": 1000})
            await served

    asyncio.run(main())
    assert len(depths) >= 3
    assert max(depths) <= MOST_FRAMES, depths
