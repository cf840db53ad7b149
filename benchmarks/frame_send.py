"""CPU of sending one text frame to a room socket (issue 15), old code against new.

A real uvicorn server in this process (uvloop, websockets-sansio, `app.edge.heard.heard_protocol`
as `domeng serve` gives it, no permessage-deflate) accepts one socket and sends ``--frames``
frames of ``--bytes`` bytes through an `app.edge.connection.Connection`, ``--burst`` at a time
(as a move's update reaches a table's five sockets), each burst only once the client (a
websockets client in another thread) has read the last one. The figure is the server thread's
CPU (`time.thread_time`) inside those ``send`` calls, per frame, in µs: building the frame and the
socket's write (the kernel's part of it too), not the client's reading.

``--old DIR`` names a checkout of the old code (e.g. ``git worktree add DIR <commit>``): each of
``--runs`` rounds then runs this script in a fresh process on DIR's code and one on this
checkout's, alternately, and
the medians and their ratio (new / old) are printed with the load average before and after.

Usage: ``python benchmarks/frame_send.py [--old DIR] [--runs 5] [--frames 20000] [--bytes 1700]
[--burst 5]``.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def measure(frames: int, size: int, burst: int) -> float:
    """µs of the server thread's CPU per frame sent (module docstring)."""
    # imported here: from the tree on PYTHONPATH (`_one`), which may be an old checkout
    import uvicorn  # noqa: PLC0415
    from starlette.websockets import WebSocket  # noqa: PLC0415
    from websockets.sync.client import connect  # noqa: PLC0415

    from app.edge.connection import Connection  # noqa: PLC0415
    from app.edge.heard import heard_protocol  # noqa: PLC0415

    text, bursts, spent = "y" * size, max(1, frames // burst), [0.0]

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "websocket":
            return
        websocket = WebSocket(scope, receive, send)
        await websocket.accept()
        conn = Connection(websocket, 64)
        conn.start()
        for _ in range(bursts):
            await websocket.receive_text()  # the client read the burst before
            start = time.thread_time()
            for _ in range(burst):
                conn.send(text)
            spent[0] += time.thread_time() - start
        await websocket.receive_text()
        await conn.stop()

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        ws=heard_protocol("websockets-sansio"),
        ws_per_message_deflate=False,
        loop="uvloop",
        lifespan="off",
        log_level="critical",
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    with connect(f"ws://127.0.0.1:{port}/", compression=None, max_size=None) as client:
        for _ in range(bursts):
            client.send("more")
            for _ in range(burst):
                client.recv(timeout=30)
        client.send("done")
    server.should_exit = True
    thread.join(10)
    return spent[0] / (bursts * burst) * 1e6


def _one(tree: Path, args: argparse.Namespace) -> float:
    """The figure of a fresh process running this script on ``tree``'s code (its ``app`` first on
    the path: an old checkout need not have this script)."""
    command = [sys.executable, str(Path(__file__).resolve()), "--one"]
    command += ["--frames", str(args.frames), "--bytes", str(args.bytes), "--burst", str(args.burst)]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(command, check=True, capture_output=True, text=True, env=env, cwd=tree)
    return float(out.stdout.split()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, help="a checkout of the old code to compare with")
    parser.add_argument("--runs", type=int, default=5, help="fresh processes of each (default 5)")
    parser.add_argument("--frames", type=int, default=20000, help="frames per run (default 20000)")
    parser.add_argument("--bytes", type=int, default=1700, help="bytes per frame (default 1700)")
    parser.add_argument("--burst", type=int, default=5, help="frames sent together (default 5)")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(f"{measure(args.frames, args.bytes, args.burst):.3f}")
        return 0
    trees = {"new": ROOT} if args.old is None else {"old": args.old.resolve(), "new": ROOT}
    figures: dict[str, list[float]] = {name: [] for name in trees}
    before = os.getloadavg()
    for _ in range(args.runs):
        for name, tree in trees.items():
            figures[name].append(_one(tree, args))
    after = os.getloadavg()
    for name, values in figures.items():
        print(f"{name}: {statistics.median(values):.2f} µs per frame · runs {[round(v, 2) for v in values]}")
    if args.old is not None:
        ratio = statistics.median(figures["new"]) / statistics.median(figures["old"])
        print(f"new / old: {ratio:.3f}")
    print(f"load average {before[0]:.2f} → {after[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
