"""Memory after many matches (issue 13): does a server's memory grow with the matches it hosted?

Starts ``domeng serve`` (fresh SQLite, bots without pause, ``DOMENG_ROOM_UNLOAD_AFTER_S`` short
so rooms leave memory soon after they are over) and hosts ``--matches`` matches, ``--parallel``
at a time. Each is a Kozel match of two greedy bots watched by one spectator socket (bots deal the
next round only while someone watches) and played to its end (a goat at 101), then left. Prints,
as JSON lines: RSS (``VmRSS`` of the server process, bot workers not counted), rooms in memory
(``domeng_rooms``) and the matches finished so far, every ``--every`` matches; at the end, a new
room created after them all, and the load average. ``--mode created`` only creates rooms that
nobody joins (each leaves memory after the unload time).

    .venv/bin/python benchmarks/rooms_memory.py [--matches 10000] [--parallel 16] [--mode created]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import connect

ROOT = Path(__file__).resolve().parents[1]
ROOM = {"variant": "kozel", "seats": 2, "bots": ["greedy", "greedy"], "turn_timer_s": 0}


def rss_mb(pid: int) -> float:
    text = Path(f"/proc/{pid}/status").read_text()
    found = re.search(r"^VmRSS:\s+(\d+) kB", text, re.MULTILINE)
    assert found
    return int(found.group(1)) / 1024


def start(data_dir: Path) -> tuple[subprocess.Popen[bytes], str]:
    env = {
        **os.environ,
        "DOMENG_BOT_DELAY_S": "0",
        "DOMENG_ROUND_PAUSE_S": "0",
        "DOMENG_ROOM_UNLOAD_AFTER_S": "1",
        "DOMENG_MAX_ROOMS_PER_ADDRESS": "0",
        "DOMENG_ROOM_CREATE_LIMIT": "100000 per minute",
        "DOMENG_LOG_LEVEL": "info",
    }
    log = (data_dir / "server.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve", "--port", "0", "--data-dir", str(data_dir)],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = re.search(r"running on (http://[\d.]+:\d+)", (data_dir / "server.log").read_text())
        if found:
            try:
                if httpx.get(f"{found.group(1)}/readyz", timeout=5).status_code == 200:
                    return proc, found.group(1)
            except httpx.HTTPError:
                pass
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError((data_dir / "server.log").read_text()[-3000:])


async def one_match(http: httpx.AsyncClient, ws_base: str, mode: str) -> None:
    """Create, start and watch one bots' match until it is over, then leave (``finished``), or
    only create a room nobody joins (``created``)."""
    reply = await http.post("/api/rooms", json=ROOM)
    while reply.status_code == 503:  # server_full: wait for the sweeper
        await asyncio.sleep(0.2)
        reply = await http.post("/api/rooms", json=ROOM)
    created = reply.json()
    code, host = created["code"], created["host_token"]
    if mode == "created":
        return
    async with connect(f"{ws_base}/ws/rooms/{code}", max_size=None) as ws:
        await ws.send(json.dumps({"type": "hello", "protocol": 1, "token": None}))
        started = await http.post(f"/api/rooms/{code}/start", headers={"Authorization": f"Bearer {host}"})
        assert started.is_success, started.text
        while True:
            message: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), 120))
            if message["type"] == "state" and message["room"]["status"] == "finished":
                return


def rooms_in_memory(metrics: str) -> int:
    found = re.search(r"^domeng_rooms (\d+(?:\.\d+)?)$", metrics, re.MULTILINE)
    return int(float(found.group(1))) if found else -1


async def run(url: str, pid: int, matches: int, parallel: int, every: int, mode: str) -> None:
    ws_base = url.replace("http://", "ws://")
    done = 0
    started = time.perf_counter()
    async with httpx.AsyncClient(base_url=url, timeout=120) as http:

        async def report() -> None:
            metrics = (await http.get("/metrics")).text
            line = {
                "matches_finished": done,
                "rss_mb": round(rss_mb(pid), 1),
                "rooms_in_memory": rooms_in_memory(metrics),
                "elapsed_s": round(time.perf_counter() - started, 1),
            }
            print(json.dumps(line), flush=True)

        await report()
        queue = iter(range(matches))

        async def worker() -> None:
            nonlocal done
            for _ in queue:
                await one_match(http, ws_base, mode)
                done += 1
                if done % every == 0:
                    await report()

        await asyncio.gather(*(worker() for _ in range(parallel)))
        await asyncio.sleep(3)  # the sweeper unloads the last finished rooms
        await report()
        created = await http.post("/api/rooms", json=ROOM)
        print(
            json.dumps(
                {
                    "new_room_after_all": created.status_code,
                    "loadavg": [round(x, 2) for x in os.getloadavg()],
                }
            ),
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=10_000)
    parser.add_argument("--parallel", type=int, default=16)
    parser.add_argument("--every", type=int, default=1000)
    parser.add_argument(
        "--mode",
        choices=("finished", "created"),
        default="finished",
        help="play each match to its end, or only create rooms nobody joins",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="domeng-rooms-") as tmp:
        proc, url = start(Path(tmp))
        try:
            asyncio.run(run(url, proc.pid, args.matches, args.parallel, args.every, args.mode))
        finally:
            proc.terminate()
            proc.wait(15)


if __name__ == "__main__":
    main()
