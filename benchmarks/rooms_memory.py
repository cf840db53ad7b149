"""Memory after many matches (issue 13): does a server's memory grow with the matches it hosted?

Starts ``domeng serve`` (fresh SQLite, bots without pause, ``DOMENG_ROOM_UNLOAD_AFTER_S`` short
so rooms leave memory soon after they are over) and hosts ``--matches`` matches, ``--parallel``
at a time. Each is, by default, a Domeng match of five greedy bots to one camat election (the
default options, and the lobby's shortest match: about 185 actions in 7.6 rounds, against 290
in 11 rounds for two-seat Kozel to 101; ``--room`` gives another room's body), watched by one
spectator socket (bots deal the next round only while someone watches), played to its end, then
left. Matches run in batches of ``--every``; after each batch, once the sweeper has unloaded its
rooms, a JSON line gives the matches finished so far, RSS (``VmRSS`` of the server process, bot
workers not counted), rooms in memory (``domeng_rooms``) and the CPU seconds spent so far by the
server (``cpu_server_s``), its bot workers (``cpu_bots_s``) and this client (``cpu_client_s``);
at the end, a new room created after them all, and the load average. ``--mode created`` only
creates rooms that nobody joins (each leaves memory after the unload time).

``--probe`` runs the server under `benchmarks/server_probe.py` (tracemalloc, slower; with
``--probe-frames 0`` no tracemalloc): each line also gives the bytes tracemalloc traces, the
bytes glibc's allocator has handed out and holds free, the live objects of the project's own
classes and the unfinished asyncio tasks; at the end, what grew between the first batch and the
last (allocations by line, objects by type). ``--max-s`` starts no batch after that many
seconds.

    .venv/bin/python benchmarks/rooms_memory.py [--matches 10000] [--parallel 16] [--every 1000]
        [--mode created] [--room JSON] [--probe [--probe-frames 1]] [--max-s S]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import connect

ROOT = Path(__file__).resolve().parents[1]
ROOM = {"variant": "domeng", "seats": 5, "bots": ["greedy"] * 5, "turn_timer_s": 0}
"""The room each match is played in (``POST /api/rooms``): Domeng's default options."""
OWN_MODULES = ("app.", "engine.")
"""Object types of these modules are the project's own (``--probe`` counts them)."""


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    """Process ``pid``'s resident memory in MB: all of it (``VmRSS``), or one part of it:
    ``RssAnon`` (its heap), ``RssFile`` (mapped files), ``RssShmem`` (shared memory: SQLite's WAL
    index)."""
    text = Path(f"/proc/{pid}/status").read_text()
    found = re.search(rf"^{field}:\s+(\d+) kB", text, re.MULTILINE)
    assert found
    return int(found.group(1)) / 1024


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) process ``pid`` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def descendants(pid: int) -> list[int]:
    """The living child processes of ``pid``, theirs, and so on (the server's bot workers)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            found += [int(child), *descendants(int(child))]
    return found


def start(data_dir: Path, probe_dir: Path | None, frames: int) -> tuple[subprocess.Popen[bytes], str]:
    env = {
        **os.environ,
        "DOMENG_BOT_DELAY_S": "0",
        "DOMENG_ROUND_PAUSE_S": "0",
        "DOMENG_ROOM_UNLOAD_AFTER_S": "1",
        "DOMENG_MAX_ROOMS_PER_ADDRESS": "0",
        "DOMENG_ROOM_CREATE_LIMIT": "100000 per minute",
        "DOMENG_WRITE_LIMIT": "100000 per minute",
        "DOMENG_READ_LIMIT": "100000 per minute",
        "DOMENG_SOCKET_LIMIT": "100000 per minute",
        "DOMENG_LOG_LEVEL": "info",
    }
    command = [sys.executable, "-m", "app.cli"]
    if probe_dir is not None:
        env |= {"DOMENG_PROBE_DIR": str(probe_dir), "DOMENG_PROBE_FRAMES": str(frames)}
        command = [sys.executable, str(ROOT / "benchmarks" / "server_probe.py")]
    log = (data_dir / "server.log").open("wb")
    proc = subprocess.Popen(
        [*command, "serve", "--port", "0", "--data-dir", str(data_dir)],
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


async def one_match(http: httpx.AsyncClient, ws_base: str, mode: str, room: dict[str, Any]) -> None:
    """Create (``room``: the body of ``POST /api/rooms``), start and watch one bots' match until it
    is over, then leave (``finished``), or only create a room nobody joins (``created``)."""
    reply = await http.post("/api/rooms", json=room)
    while reply.status_code == 503:  # server_full: wait for the sweeper
        await asyncio.sleep(0.2)
        reply = await http.post("/api/rooms", json=room)
    created = reply.json()
    code, host = created["code"], created["host_token"]
    if mode == "created":
        return
    async with connect(f"{ws_base}/ws/rooms/{code}", max_size=None) as ws:
        await ws.send(json.dumps({"type": "hello", "protocol": 1, "token": None}))
        started = await http.post(f"/api/rooms/{code}/start", headers={"Authorization": f"Bearer {host}"})
        assert started.is_success, started.text
        while True:
            frame = await asyncio.wait_for(ws.recv(), 120)
            if '"finished"' not in frame:  # most frames: not parsed, the client stays cheap
                continue
            message: dict[str, Any] = json.loads(frame)
            if message["type"] == "state" and message["room"]["status"] == "finished":
                return


def rooms_in_memory(metrics: str) -> int:
    found = re.search(r"^domeng_rooms (\d+(?:\.\d+)?)$", metrics, re.MULTILINE)
    return int(float(found.group(1))) if found else -1


class Probe:
    """The server's memory probe (`benchmarks/server_probe.py`): one snapshot per report."""

    def __init__(self, pid: int, out: Path) -> None:
        self.pid, self.out, self.taken = pid, out, 0

    async def take(self) -> dict[str, Any]:
        """Asks the server for a snapshot; returns its object counts (``objects-N.json``)."""
        os.kill(self.pid, signal.SIGUSR1)
        written = self.out / f"objects-{self.taken}.json"
        while not written.exists():
            await asyncio.sleep(0.1)
        self.taken += 1
        report: dict[str, Any] = json.loads(written.read_text())
        return report

    def compare(self, first: int, last: int, top: int = 15) -> None:
        """Prints what grew from snapshot ``first`` to ``last``: allocations by line, objects by type."""
        if (self.out / f"snapshot-{last}.pickle").exists():
            before = tracemalloc.Snapshot.load(str(self.out / f"snapshot-{first}.pickle"))
            after = tracemalloc.Snapshot.load(str(self.out / f"snapshot-{last}.pickle"))
            print(f"# allocations grown from report {first} to {last} (by line)")
            for stat in after.compare_to(before, "lineno")[:top]:
                print(f"#   {stat}")
        counts = [json.loads((self.out / f"objects-{n}.json").read_text())["types"] for n in (first, last)]
        grown = sorted(((counts[1].get(k, 0) - counts[0].get(k, 0), k) for k in counts[1]), reverse=True)
        print(f"# objects grown from report {first} to {last} (by type)")
        for diff, kind in grown[:top]:
            print(f"#   {kind}: {counts[0].get(kind, 0)} -> {counts[1][kind]} ({diff:+d})")


async def run(url: str, pid: int, args: argparse.Namespace, probe: Probe | None) -> None:
    matches, parallel, every, mode, room = args.matches, args.parallel, args.every, args.mode, args.room
    ws_base = url.replace("http://", "ws://")
    done = 0
    started = time.perf_counter()
    async with httpx.AsyncClient(base_url=url, timeout=120) as http:

        async def settle() -> int:
            """Waits (at most 10 s) for the sweeper to unload the finished rooms; the rooms left."""
            for _ in range(100):
                rooms = rooms_in_memory((await http.get("/metrics")).text)
                if rooms == 0:
                    break
                await asyncio.sleep(0.1)
            return rooms

        async def report() -> None:
            rooms = await settle()
            server, bots = cpu_s(pid), sum(cpu_s(child) for child in descendants(pid))
            line: dict[str, Any] = {
                "matches_finished": done,
                "rss_mb": round(rss_mb(pid), 1),
                "anon_mb": round(rss_mb(pid, "RssAnon"), 1),
                "file_mb": round(rss_mb(pid, "RssFile"), 1),
                "shmem_mb": round(rss_mb(pid, "RssShmem"), 1),
                "rooms_in_memory": rooms,
                "elapsed_s": round(time.perf_counter() - started, 1),
                "cpu_server_s": round(server, 1),
                "cpu_bots_s": round(bots, 1),
                "cpu_client_s": round(time.process_time(), 1),
            }
            if probe is not None:
                objects = await probe.take()
                own = {k: v for k, v in objects["types"].items() if k.startswith(OWN_MODULES)}
                line |= {
                    "traced_mb": round(objects["traced_bytes"] / 2**20, 2),
                    "malloc_used_mb": round(objects["malloc"]["used"] / 2**20, 2),
                    "malloc_free_mb": round(objects["malloc"]["free"] / 2**20, 2),
                    "py_blocks": objects["blocks"],
                    "gc_objects": sum(objects["types"].values()),
                    "tasks": objects["tasks"],
                }
                line["own_objects"] = dict(sorted(own.items(), key=lambda item: -item[1])[:12])
                line["dead_weakrefs"] = objects["types"].get("weakref->dead", 0)
                line["dead_weakref_holders"] = objects["dead_weakref_holders"]
            print(json.dumps(line), flush=True)

        async def worker(batch: Any) -> None:
            nonlocal done
            for _ in batch:
                await one_match(http, ws_base, mode, room)
                done += 1

        await report()
        while (
            done < matches and time.perf_counter() - started < args.max_s
        ):  # a batch of `every` matches, then a report with their rooms unloaded
            batch = iter(range(min(every, matches - done)))
            await asyncio.gather(*(worker(batch) for _ in range(parallel)))
            await report()
        created = await http.post("/api/rooms", json=room)
        print(
            json.dumps(
                {
                    "new_room_after_all": created.status_code,
                    "loadavg": [round(x, 2) for x in os.getloadavg()],
                }
            ),
            flush=True,
        )
        if probe is not None and probe.taken > 2:
            probe.compare(1, probe.taken - 1)


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
    parser.add_argument("--room", type=json.loads, default=ROOM, help="the body of POST /api/rooms (JSON)")
    parser.add_argument(
        "--probe-frames", type=int, default=1, help="with --probe: tracemalloc's frames (0: off)"
    )
    parser.add_argument(
        "--max-s", type=float, default=float("inf"), help="start no batch after this many seconds"
    )
    parser.add_argument("--probe", action="store_true", help="trace the server's allocations (slower)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="domeng-rooms-") as tmp:
        probe_dir = Path(tmp) / "probe" if args.probe else None
        if probe_dir is not None:
            probe_dir.mkdir()
        proc, url = start(Path(tmp), probe_dir, args.probe_frames)
        probe = None if probe_dir is None else Probe(proc.pid, probe_dir)
        try:
            asyncio.run(run(url, proc.pid, args, probe))
        finally:
            proc.terminate()
            proc.wait(15)


if __name__ == "__main__":
    main()
