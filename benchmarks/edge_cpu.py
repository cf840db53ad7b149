"""CPU of a client's message received and of an update built for a table (issue 15), old code against new.

Two figures, each in CPU microseconds (``time.process_time``, so waiting for a core another
process holds counts against neither side):

- **per message received**: the real application (`app.web.create_app`, SQLite in a temporary
  directory) serving one room socket through its whole ASGI middleware stack, driven by direct ASGI
  calls (no network: what is measured is the server's side from uvicorn's ``receive`` on). The
  socket says ``hello`` as a spectator, then ``--messages`` messages one at a time, each sent only
  once the answer to the one before has come back, so that the socket's task waits for every one
  (as it does for a real client's) and the room answers it: an ``action`` (the hot message type;
  a spectator's is parsed, validated and refused by the room with an ``error``) and a ``ping``
  (answered ``pong`` without the room). The driver's own work is in both figures, the same in
  old and new.
- **per update built**: `app.rooms.frames.send_updates` for a room of 5 seats, each seat and one
  spectator connected, after one action, over ``--positions`` positions of random Domeng play (the
  round's events from the action on, as a move's update sends them); the outboxes only keep the
  frame.

``--old DIR`` names a checkout of the old code (e.g. ``git worktree add DIR <commit>``, with its
engine compiled by ``DIR/scripts/compile_engine.py`` as this one's is): each of ``--runs`` rounds
then runs a fresh process in DIR and one here, alternately, and the medians of each figure and
their ratio (new / old) are printed, with the load average before and after. Without it, this
checkout alone is measured.

Usage: ``python benchmarks/edge_cpu.py [--old DIR] [--runs 5] [--messages 3000] [--positions 300] [--json]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.metrics import Metrics  # noqa: E402  (this checkout's, whichever runs the script)
from app.rooms.frames import send_updates  # noqa: E402
from app.rooms.hub import Hub  # noqa: E402
from app.rooms.local import LocalBots  # noqa: E402
from app.store import Store, sqlite_url  # noqa: E402
from app.web.app import create_app, room_config  # noqa: E402
from app.web.settings import Settings  # noqa: E402
from engine.core import Phase  # noqa: E402
from engine.variants import make_rules  # noqa: E402

SEATS = 5


class _Socket:
    """The ASGI server's side of one room socket: what the app receives, one message at a time."""

    def __init__(self) -> None:
        self.incoming: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.answered = asyncio.Event()
        self.sent: list[dict[str, Any]] = []

    async def receive(self) -> dict[str, Any]:
        return await self.incoming.get()

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        if message["type"] == "websocket.send":
            self.answered.set()
        elif message["type"] == "websocket.close":
            raise RuntimeError(f"the socket was closed: {message}")

    async def say(self, text: str) -> None:
        """Send one text frame and wait for an answer to it."""
        self.answered.clear()
        self.incoming.put_nowait({"type": "websocket.receive", "text": text})
        await self.answered.wait()


def _scope(code: str, send: Any) -> dict[str, Any]:
    """A room socket's scope as uvicorn, with `app.edge.heard.heard_protocol`, builds it: the
    server's own ``send`` in its extensions (`app.edge.connection.Connection` writes through it)."""
    return {
        "type": "websocket",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "scheme": "ws",
        "server": ("127.0.0.1", 8000),
        "client": ("127.0.0.1", 40000),
        "root_path": "",
        "path": f"/ws/rooms/{code}",
        "raw_path": f"/ws/rooms/{code}".encode(),
        "query_string": b"",
        "headers": [(b"host", b"127.0.0.1:8000")],
        "subprotocols": [],
        "extensions": {"websocket.http.response": {}, "domeng.send": send},
    }


async def _receiving(messages: int) -> dict[str, float]:
    """CPU microseconds per message the app receives, by message type."""
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            data_dir=Path(tmp),
            bot_workers=1,
            log_json=False,
            log_level="warning",
            rate_limit=f"{10 * messages} per 1 second",
        )
        app = create_app(settings)
        async with app.router.lifespan_context(app):
            hub = app.state.hub
            room, _token = await hub.create_room("domeng", {}, SEATS, 0.0, [None] * SEATS)
            socket = _Socket()
            socket.incoming.put_nowait({"type": "websocket.connect"})
            served = asyncio.create_task(app(_scope(room.code, socket.send), socket.receive, socket.send))
            await socket.say(json.dumps({"type": "hello", "protocol": 1}))
            while not any(
                m["type"] == "websocket.send" and '"welcome"' in m.get("text", "") for m in socket.sent
            ):
                socket.answered.clear()
                await socket.answered.wait()
            frames = {
                "action": json.dumps({"type": "action", "version": 0, "action": {"play": "3-6", "end": "R"}}),
                "ping": json.dumps({"type": "ping"}),
            }
            figures: dict[str, float] = {}
            for kind, text in frames.items():
                for _ in range(messages // 10):  # warm up
                    await socket.say(text)
                socket.sent.clear()
                start = time.process_time()
                for _ in range(messages):
                    await socket.say(text)
                figures[f"receive_{kind}_us"] = (time.process_time() - start) / messages * 1e6
                assert len(socket.sent) == messages, (kind, len(socket.sent))
            socket.incoming.put_nowait({"type": "websocket.disconnect", "code": 1000})
            await served
            return figures


class _Outbox:
    def __init__(self, seat: int | None) -> None:
        self.seat = seat
        self.watcher: str | None = None
        self.client: str | None = None
        self.name: str | None = None
        self.closed = False
        self.last = ""

    def send(self, text: str) -> None:
        self.last = text

    def send_latest(self, kind: str, text: str) -> None:
        self.last = text

    def close(self, reason: object) -> None:
        self.closed = True


async def _updating(positions: int) -> dict[str, float]:
    """CPU microseconds per update `send_updates` builds for `SEATS` seats and a spectator."""
    rng = random.Random(15)
    rules = make_rules("domeng", {}, SEATS)
    states: list[Any] = []
    state = rules.new_match()
    while len(states) < positions:
        if state.phase is Phase.OVER:
            state = rules.new_match()
        if state.phase is not Phase.PLAYING:
            state.start_round(rules.deal(rng))
        state.apply(rng.choice(state.legal_actions()))
        if rng.random() < 0.3:
            states.append(state.fork())
    with tempfile.TemporaryDirectory() as tmp:
        async with Store(sqlite_url(Path(tmp))) as store:
            hub = Hub(room_config(Settings(data_dir=Path(tmp))), store, Metrics(), bots=LocalBots())
            room, _token = await hub.create_room("domeng", {}, SEATS, 0.0, [None] * SEATS)
            conns = [_Outbox(seat) for seat in range(SEATS)] + [_Outbox(None)]
            try:
                repeats = 3
                for state in states[: positions // 10]:  # warm up
                    room.state = state
                    send_updates(room, conns, max(0, len(state.log) - 1))
                start = time.process_time()
                for _ in range(repeats):
                    for state in states:
                        room.state = state
                        send_updates(room, conns, max(0, len(state.log) - 1))
                spent = time.process_time() - start
            finally:
                await hub.stop()
    return {"update_us": spent / (repeats * len(states)) * 1e6}


def measure(messages: int, positions: int) -> dict[str, float]:
    """Both figures of this checkout, in this process."""
    figures = asyncio.run(_receiving(messages))
    figures |= asyncio.run(_updating(positions))
    return figures


def _child(root: Path, messages: int, positions: int) -> dict[str, float]:
    """`measure` in a fresh process of the checkout at ``root``, with this interpreter."""
    script = root / "benchmarks" / "edge_cpu.py"
    out = subprocess.run(
        [sys.executable, str(script), "--child", "--messages", str(messages), "--positions", str(positions)],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        check=True,
        capture_output=True,
        text=True,
    )
    figures: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, help="a checkout of the old code to measure alternately")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--messages", type=int, default=3000)
    parser.add_argument("--positions", type=int, default=300)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.messages, args.positions)))
        return
    load_before = os.getloadavg()
    sides: dict[str, list[dict[str, float]]] = {"new": []}
    if args.old is not None:
        sides["old"] = []
    for run in range(args.runs):
        order = ["old", "new"] if run % 2 == 0 else ["new", "old"]
        for side in order:
            if side in sides:
                root = ROOT if side == "new" else args.old.resolve()
                sides[side].append(_child(root, args.messages, args.positions))
    load_after = os.getloadavg()
    medians = {
        side: {k: statistics.median(r[k] for r in runs) for k in runs[0]} for side, runs in sides.items()
    }
    result: dict[str, Any] = {"medians_us": medians, "load_before": load_before, "load_after": load_after}
    if "old" in medians:
        result["ratio_new_over_old"] = {k: medians["new"][k] / medians["old"][k] for k in medians["new"]}
    if args.json:
        print(json.dumps(result, indent=2))
        return
    load = f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f}"
    print(f"{load}; {args.runs} runs, medians (CPU µs)")
    for key in medians["new"]:
        line = f"  {key:<20} new {medians['new'][key]:8.2f}"
        if "old" in medians:
            line += f"   old {medians['old'][key]:8.2f}   new/old {result['ratio_new_over_old'][key]:.3f}"
        print(line)


if __name__ == "__main__":
    main()
