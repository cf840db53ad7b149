"""Load benchmark: many concurrent five-seat tables against a real server, beside a bare fan-out.

In one run, on 127.0.0.1 only:

1. ours: ``python -m app.cli serve --port 0`` in a subprocess (one uvicorn worker; SQLite in a
   temporary data directory, or ``--database-url``), with no turn timer, no bot delay, a short
   round pause, warning-level logs, and rate limits (messages per connection, rooms created per
   address) and a room cap high enough for the run. ``--tables`` rooms
   are created over HTTP (``camat_target`` 0, so matches never end), all five seats of each are
   claimed, five WebSocket clients per table say ``hello`` with their seat tokens, and the host
   starts each match;
2. baseline: `benchmarks/fanout_server.py`, a FastAPI WebSocket route that bumps a table's
   version on every action and sends each of its five clients a ``state`` frame padded to the
   median size of ours (measured in step 1), with a fake turn rotation; no engine, no database.

Both run on the same stack: the event loop and WebSocket implementation of ``domeng serve``
(``--loop`` and ``--ws`` change them for both), h11 for HTTP, and the same WebSocket settings
(permessage-deflate only with ``--compression deflate``,
which sets ``DOMENG_WS_COMPRESSION``; off by default, as in ``domeng serve``) and are driven by the
same client logic (websockets' asyncio client, one event loop): a client
whose ``state`` lists ``view.legal`` (and not just a forced pass, which the server applies by
itself) waits for its table's next slot and sends ``view.legal[0]`` without ``seat``. Slots come
``1 / --pace`` seconds apart per table, from a random phase, so tables do not act in lockstep.

Figures, over ``--seconds`` after ``--warmup``:

- latency: from sending an action at version V to the moment the LAST of the table's five
  clients has the ``state`` of version V+1 (p50, p99, max, in ms; actions sent in the window);
- actions/s: every version increment seen, in all tables (forced passes and deals included);
  client actions/s: the actions the clients sent;
- deliveries/s: ``state`` frames received by all clients;
- connections opened, failed (a failed handshake, no ``welcome``, or a close we did not ask for);
- server RSS (VmRSS of /proc/PID/status, the peak of samples over the whole run; VmHWM beside it)
  and CPU (% of one core: utime+stime of /proc/PID/stat over the window), and that CPU per
  delivered ``state`` frame (µs; issue 15 compares ours with the fan-out's); the client's own CPU.

A table has at most one client action in flight (its next turn comes with the update), so the load
is a closed loop: when the server cannot keep up, the pace falls below ``--pace`` and the latency
grows to about tables / actions per second (Little's law) instead of growing without bound. The
load generator shares the machine with the server: read its CPU figure beside the server's.

With ``--bot-seats N`` (1 to 3) a third run follows the all-human one: the same server settings,
but each table seats ``5 - N`` socket players and ``N`` bots of ``--bot-level`` (default ``hard``)
in its last seats, pausing ``--bot-delay`` seconds (``DOMENG_BOT_DELAY_S``, default 0.7 as in
``domeng serve``) and thinking in ``--bot-workers`` worker processes (``DOMENG_BOT_WORKERS``;
default: the server's own default). It is printed beside the all-human run: what thinking bots in
worker processes cost the players' latency (``server CPU`` is the server process alone; the
workers' CPU shows as ``bot workers CPU``).

With ``--processes 1 2`` (and ``--database-url`` on PostgreSQL, ``--redis-url``) it measures the
production shape instead (docs/deploy.md): for each count, one run with that many ``domeng serve``
processes (migrated once by ``domeng migrate``, then ``DOMENG_MIGRATE=false``, the Redis leases of
docs/cluster.md) behind Debian's nginx on deploy/nginx.conf (one worker; tests/nginxkit.py; it hashes
the room code, so each room moves to the process its clients reach: ``--no-room-hashing`` sends
requests round robin instead, and most sockets are relayed to their room's owner). The
clients reach the servers only through nginx; a socket closed with 1013 at opening (its room is
hosted by the other process) connects again, as the browser does (``sockets moved``). Per count:
throughput (offer more than the machine can take to read it at saturation, marked ``saturated``),
p99, the servers' CPU summed over their processes (from /proc) and per delivered update, nginx's
and the load generator's CPU, and the ratio of CPU per delivered update with the most processes
against the fewest (goal ≤ 1.15×: near-linear scaling). No fan-out baseline in this mode.

Of the server's CPU per delivery it also reports the share of the main thread, the event loop's
(the rest is the store writer's thread and other threads'), from ``/proc/PID/task/PID/stat``, and
the kernel's (stime: socket writes and reads, polling, file writes), for ours and the fan-out.
From the server's ``/metrics`` it also reports the store's transactions per second and writes per
transaction over the window (the group commit's batches, `app.store.group_commit`), and its own
latency from an action's arrival to its update queued for every recipient (p50 and p99 of its
``domeng_action_broadcast_seconds`` histogram over the window, as the upper bound of the bucket
that holds each: "≤ 50" is between the bucket below and 50 ms). Beside it, the load generator's
own loop lag (p99 of how late its 10 ms wake-ups come, in the window): the latency the clients
measure is the server's own, plus the time before the server reads the action and after it
writes the update (both loops' turns, the kernel), plus the generator's lag. And how long each
side's event loop thread was ready to run but waited for a CPU (ms per second of the window, from
``/proc/PID/task/TID/schedstat``): on 2 cores shared with the load generator, the time the two
take from each other.
``--server-env DOMENG_X=VALUE`` (repeatable) sets one of our server's settings for the run, e.g.
the group commit's, to measure a setting against the defaults. ``--repeat N`` runs ours and the
fan-out N times in turn and prints every pair's CPU per delivery, ratio, latency and batches with
their medians (the table is the median pair's): one pair is a single sample of a shared machine.

Usage: ``python benchmarks/load.py [--tables 400] [--pace 1.0] [--seconds 30] [--warmup 5]
[--database-url postgresql+asyncpg://…] [--compression none|deflate] [--loop L] [--ws W] [--skip-baseline]
[--bot-seats 3 [--bot-level hard] [--bot-delay 0.7] [--bot-workers N]]
[--processes 1 2 --redis-url redis://… [--no-room-hashing]] [--profile DIR] [--repeat N]
[--server-env DOMENG_X=V] [--json]``.

With ``--profile DIR`` each server is sampled by py-spy over the window (100 Hz) and its busy
samples are printed by stage beside the others (`benchmarks/profile_stages.py`): where the CPU
per delivery that the fan-out does not spend goes.
The goals it judges (printed as meets/MISSES) on the all-human run, by its size (issue 15): below
5,000 connections, 2,000 connections (400 tables) at 1 action/s per table, p99 ≤ 50 ms, no failed
connection, server RSS ≤ 250 MB, with one uvicorn worker; from 5,000 connections (1,000 tables) on,
the full offered pace, p99 ≤ 100 ms and no failed connection (no memory goal); with the baseline,
at either size, server CPU per delivered update at most 1.7× the fan-out's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import platform
import random
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson
from prometheus_client.parser import text_string_to_metric_families
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.profile_stages import format_stages, py_spy, stages, start_py_spy  # noqa: E402
from tests.nginxkit import NGINX, Nginx  # noqa: E402 - after the repository is on the path

SEATS = 5
BATCH = 50  # connections opened at a time
HTTP_CONCURRENCY = 16
OPEN_TIMEOUT_S = 10.0
WELCOME_TIMEOUT_S = 30.0
DRAIN_S = 5.0  # after the window: how long unfinished updates may still arrive
SETUP_BUDGET_S = 300.0  # rooms, seats, connections and starts must be done by then
CLOSE_TRY_AGAIN = 1013  # a room hosted by another server process (docs/cluster.md)
MOVED_RETRIES = 20  # how many 1013s a socket behind nginx may meet while opening
DEFAULT_FRAME_BYTES = 2400  # the fan-out's frame size when ours was not measured (--baseline-only)

GOAL_CONNECTIONS = 2000
GOAL_PACE = 1.0
GOAL_P99_MS = 50.0
GOAL_RSS_MB = 250.0
LARGE_CONNECTIONS = 5000  # issue 15's second size: one worker at the full offered pace…
LARGE_P99_MS = 100.0  # …with p99 at most this
GOAL_CPU_RATIO = 1.7  # issue 15: server CPU per delivered update against the fan-out's
LAG_TICK_S = 0.01  # the load generator's loop is sampled every this many seconds (`loop_lag`)
LAG_SAMPLES = 100_000  # …at most this many times in a run
GOAL_SCALING = 1.15  # issue 15: CPU per delivered update, 2 processes behind nginx against 1


# -- the server processes ----------------------------------------------------------------------


def listening_port(pid: int) -> int | None:
    """The TCP port process ``pid`` listens on (from /proc), or None while it listens on none."""
    inodes = set()
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                found = re.fullmatch(r"socket:\[(\d+)\]", os.readlink(f"/proc/{pid}/fd/{fd}"))
                if found:
                    inodes.add(found.group(1))
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table) as lines:
            for line in list(lines)[1:]:
                fields = line.split()
                if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                    return int(fields[1].rsplit(":", 1)[1], 16)
    return None


STAT_PPID, STAT_UTIME, STAT_STIME = 1, 11, 12
"""Indexes in `stat_fields` of the parent's id and the user and kernel CPU times (clock ticks)."""


def stat_fields(path: str) -> list[str]:
    """The fields of a ``/proc/PID/stat`` or ``/proc/PID/task/TID/stat`` file after the command's
    name (the process state first, as field 3 of proc(5)). Raises OSError when it cannot be read."""
    return Path(path).read_text().rsplit(")", 1)[1].split()


def cpu_of(fields: list[str], kernel_only: bool = False) -> float:
    """utime + stime (or stime alone) in seconds, of `stat_fields`."""
    ticks = int(fields[STAT_STIME]) + (0 if kernel_only else int(fields[STAT_UTIME]))
    return ticks / os.sysconf("SC_CLK_TCK")


def child_pids(pid: int) -> list[int]:
    """The process ids whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                if int(stat_fields(f"/proc/{entry}/stat")[STAT_PPID]) == pid:
                    found.append(int(entry))
    return found


class ServerProcess:
    """A server in a subprocess: its URL once `start` returns, its RSS and CPU from /proc."""

    def __init__(self, name: str, command: list[str], env: dict[str, str], log_path: Path) -> None:
        self.name = name
        self.command = command
        self.env = env
        self.log_path = log_path
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = ""
        self.rss_peak_mb = 0.0
        self.rss_hwm_mb = 0.0

    def start(self, ready_path: str, timeout: float = 60.0) -> None:
        """Start, find the port, and wait until ``ready_path`` answers 200 (RuntimeError if not)."""
        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen(self.command, cwd=ROOT, env=self.env, stdout=log, stderr=log)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited {self.proc.returncode}:\n{self.log_tail()}")
            port = listening_port(self.proc.pid)
            if port:
                self.url = f"http://127.0.0.1:{port}"
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(self.url + ready_path, timeout=2).status_code == 200:
                        return
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"{self.name} not ready after {timeout} s:\n{self.log_tail()}")

    @property
    def ws_base(self) -> str:
        """The ws:// base URL."""
        return self.url.replace("http://", "ws://")

    def log_tail(self, lines: int = 30) -> str:
        """The last lines the server printed."""
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def sample_rss(self) -> None:
        """Read VmRSS and VmHWM (the kernel's high-water mark) and keep their peaks, in MB."""
        assert self.proc is not None
        with contextlib.suppress(OSError), open(f"/proc/{self.proc.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    self.rss_peak_mb = max(self.rss_peak_mb, int(line.split()[1]) / 1024)
                elif line.startswith("VmHWM:"):
                    self.rss_hwm_mb = max(self.rss_hwm_mb, int(line.split()[1]) / 1024)

    def children_cpu_seconds(self) -> float:
        """CPU seconds (user + system) of the server's live child processes (its bot workers)."""
        if self.proc is None:
            return 0.0
        return pids_cpu_seconds(child_pids(self.proc.pid))

    def cpu_seconds(self) -> float:
        """utime + stime of the process so far, in seconds."""
        assert self.proc is not None
        return cpu_of(stat_fields(f"/proc/{self.proc.pid}/stat"))

    def kernel_cpu_seconds(self) -> float:
        """stime of the process so far (the kernel's part of `cpu_seconds`: socket writes and
        reads, polling, the database's file writes), in seconds."""
        assert self.proc is not None
        return cpu_of(stat_fields(f"/proc/{self.proc.pid}/stat"), kernel_only=True)

    def loop_thread_cpu_seconds(self) -> float:
        """utime + stime so far of the process's main thread alone (the event loop's: its thread
        id is the process id), in seconds; 0 when it cannot be read."""
        assert self.proc is not None
        try:
            return cpu_of(stat_fields(f"/proc/{self.proc.pid}/task/{self.proc.pid}/stat"))
        except OSError:
            return 0.0

    def loop_thread_waited_seconds(self) -> float:
        """Seconds the process's main thread (the event loop's) has waited so far on a run queue,
        ready but given no CPU (`run_queue_wait_seconds`)."""
        assert self.proc is not None
        return run_queue_wait_seconds(self.proc.pid, self.proc.pid)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 15 s."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


def domeng_server(
    args: argparse.Namespace, data_dir: Path, bots: bool = False, extra_env: dict[str, str] | None = None
) -> ServerProcess:
    """``python -m app.cli serve`` configured for the benchmark (``bots``: for the run with bots;
    ``extra_env``: more ``DOMENG_*`` variables)."""
    per_conn = max(20, math.ceil(args.pace * 2 * 4))  # a seat sends ≤ `pace`/s: 4× margin over 2 s
    env = {
        **os.environ,
        "DOMENG_TURN_TIMER_S": "0",
        "DOMENG_BOT_DELAY_S": str(args.bot_delay) if bots else "0",
        "DOMENG_ROUND_PAUSE_S": str(args.round_pause),
        "DOMENG_LOG_LEVEL": "warning",
        "DOMENG_RATE_LIMIT": f"{per_conn} per 2 seconds",
        "DOMENG_ROOM_CREATE_LIMIT": "100000 per minute",  # one address creates every table
        "DOMENG_WRITE_LIMIT": "100000 per minute",  # …and claims every seat
        "DOMENG_READ_LIMIT": "100000 per minute",
        "DOMENG_SOCKET_LIMIT": "100000 per minute",
        "DOMENG_MAX_ROOMS": str(max(5000, args.tables)),
        "DOMENG_MAX_SOCKETS_PER_ADDRESS": "0",  # every client is 127.0.0.1 here
        "DOMENG_MAX_CONNECTIONS_PER_ADDRESS": "0",
        "DOMENG_MAX_ROOMS_PER_ADDRESS": "0",
        "DOMENG_WS_COMPRESSION": "true" if args.compression == "deflate" else "false",
    }
    env.update(dict(args.server_env))
    env.update(extra_env or {})
    if bots and args.bot_workers:
        env["DOMENG_BOT_WORKERS"] = str(args.bot_workers)
    if args.loop:
        env["DOMENG_LOOP"] = args.loop
    if args.ws:
        env["DOMENG_WS_IMPL"] = args.ws
    command = [sys.executable, "-m", "app.cli", "serve", "--port", "0", "--data-dir", str(data_dir)]
    if args.database_url:
        command += ["--database-url", args.database_url]
    log = data_dir / ("server-bots.log" if bots else "server.log")
    return ServerProcess("domeng serve", command, env, log)


def pids_cpu_seconds(pids: Iterable[int]) -> float:
    """utime + stime of the processes ``pids`` so far, in seconds (those gone count 0)."""
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError, IndexError, ValueError):
            total += cpu_of(stat_fields(f"/proc/{pid}/stat"))
    return total


class Cluster:
    """``count`` `domeng serve` processes on one PostgreSQL database and one Redis, behind Debian's
    nginx with deploy/nginx.conf (tests/nginxkit.py): the interface of `ServerProcess` that
    `drive` uses, with CPU summed over the server processes (nginx's apart, `proxy_cpu_seconds`)
    and RSS as the largest process's."""

    def __init__(self, args: argparse.Namespace, count: int, data_dir: Path) -> None:
        env = {
            "DOMENG_REDIS_URL": args.redis_url,
            "DOMENG_MIGRATE": "false",  # migrated once, by `run`
            "DOMENG_FORWARDED_ALLOW_IPS": "127.0.0.1",
        }
        self.servers = []
        for index in range(count):
            (data_dir / f"p{index}").mkdir(parents=True, exist_ok=True)
            self.servers.append(domeng_server(args, data_dir / f"p{index}", extra_env=env))
        self.nginx = Nginx(
            data_dir / "nginx", [], per_address=60_000, workers=1, room_hashing=args.room_hashing
        )
        self.url = ""

    @property
    def ws_base(self) -> str:
        """The ws:// base URL (nginx's)."""
        return self.url.replace("http://", "ws://")

    @property
    def rss_peak_mb(self) -> float:
        return max(server.rss_peak_mb for server in self.servers)

    @property
    def rss_hwm_mb(self) -> float:
        return max(server.rss_hwm_mb for server in self.servers)

    def start(self, ready_path: str) -> None:
        """Start the servers side by side, then nginx in front of them."""
        try:
            with ThreadPoolExecutor(len(self.servers)) as starting:
                list(starting.map(lambda server: server.start(ready_path), self.servers))
            self.nginx.upstreams = [server.url.removeprefix("http://") for server in self.servers]
            self.nginx.start()
        except BaseException:
            self.stop()
            raise
        self.url = self.nginx.url

    def sample_rss(self) -> None:
        for server in self.servers:
            server.sample_rss()

    def cpu_seconds(self) -> float:
        return sum(server.cpu_seconds() for server in self.servers)

    def children_cpu_seconds(self) -> float:
        return sum(server.children_cpu_seconds() for server in self.servers)

    def kernel_cpu_seconds(self) -> float:
        return sum(server.kernel_cpu_seconds() for server in self.servers)

    def proxy_cpu_seconds(self) -> float:
        """nginx's CPU seconds (master and workers)."""
        return pids_cpu_seconds(self.nginx.pids())

    def stop(self) -> None:
        self.nginx.stop()
        for server in self.servers:
            server.stop()


def migrate_once(database_url: str) -> None:
    """``domeng migrate`` on ``database_url``; RuntimeError if it failed."""
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "migrate", "--database-url", database_url],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"domeng migrate failed: {done.stderr.strip()}")


def fanout_server(args: argparse.Namespace, frame_bytes: int, data_dir: Path) -> ServerProcess:
    """`benchmarks/fanout_server.py` with frames of ``frame_bytes``."""
    script = str(ROOT / "benchmarks" / "fanout_server.py")
    command = [sys.executable, script, "--port", "0", "--frame-bytes", str(frame_bytes)]
    command += ["--compression", args.compression]
    command += ["--loop", args.loop] if args.loop else []
    command += ["--ws", args.ws] if args.ws else []
    return ServerProcess("fan-out baseline", command, dict(os.environ), data_dir / "fanout.log")


# -- what the clients measure ------------------------------------------------------------------


@dataclass
class Stats:
    """Counters of one target's run; ``window`` is (start, end) in loop time."""

    window: tuple[float, float] = (math.inf, math.inf)
    stopping: bool = False  # no new actions: the window is over
    closing: bool = False  # we are closing the sockets: closes are expected
    opened: int = 0
    failed: int = 0
    welcomed: int = 0
    sent: int = 0
    sent_in_window: int = 0
    versions: int = 0
    deliveries: int = 0
    latencies: list[float] = field(default_factory=list)
    lost: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    close_codes: Counter[str] = field(default_factory=Counter)
    moved: int = 0  # sockets closed with 1013 at opening (another process hosts the room), tried again
    frame_sizes: list[int] = field(default_factory=list)
    loop_lags: list[float] = field(default_factory=list)  # the generator's late wake-ups (s), `loop_lag`

    def in_window(self, moment: float) -> bool:
        """Whether ``moment`` (loop time) falls in the measured window."""
        return self.window[0] <= moment < self.window[1]


@dataclass
class Pending:
    """An action sent at ``sent`` (loop time), waiting for its version to reach every client."""

    sent: float
    seen: int = 0


class Table:
    """One table as the load generator sees it: its clients, slots and unfinished actions."""

    def __init__(self, code: str, tokens: list[str], host_token: str | None, stats: Stats) -> None:
        self.code = code
        self.tokens = tokens
        self.host_token = host_token
        self.stats = stats
        self.clients: list[SeatClient] = []
        self.top_version = 0
        self.pending: dict[int, Pending] = {}
        self.interval = 1.0
        self.next_slot = math.inf
        self.started = asyncio.Event()

    def begin(self, first_slot: float, interval: float) -> None:
        """Let the table play: its first action at ``first_slot``, then every ``interval`` s."""
        self.next_slot, self.interval = first_slot, interval
        self.started.set()

    def claim_slot(self, now: float) -> float:
        """The moment of the table's next action (never in the past)."""
        at = max(self.next_slot, now)
        self.next_slot = at + self.interval
        return at

    def on_state(self, version: int, now: float) -> None:
        """A client got the ``state`` of ``version`` at ``now``."""
        stats = self.stats
        if version > self.top_version:
            if stats.in_window(now):
                stats.versions += version - self.top_version
            self.top_version = version
        pending = self.pending.get(version)
        if pending is not None:
            pending.seen += 1
            if pending.seen >= len(self.clients):
                del self.pending[version]
                if stats.in_window(pending.sent):
                    stats.latencies.append(now - pending.sent)


class SeatClient:
    """One seat's WebSocket: reads every frame, and plays when its ``state`` says it is its turn."""

    def __init__(self, table: Table, seat: int, url: str, compression: str | None) -> None:
        self.table = table
        self.seat = seat
        self.url = url
        self.compression = compression
        self.ws: ClientConnection | None = None
        self.last_version = -1
        self.acted_version = -1
        self.welcomed = False
        self.failed = False
        self.reader: asyncio.Task[None] | None = None
        self.actor: asyncio.Task[None] | None = None

    async def open(self, deadline: float, moved_retries: int = 0) -> bool:
        """Connect, say hello and start reading until ``deadline`` (loop time); False if it failed.

        ``moved_retries`` > 0 (several processes behind nginx): wait for the first frame, and
        while the socket is closed with 1013 (a process that does not host the room) connect
        again, as the browser does, at most that many times (``Stats.moved`` counts them)."""
        stats = self.table.stats
        first: str | bytes | None = None
        for attempt in range(moved_retries + 1):
            try:
                self.ws = await connect(
                    self.url,
                    open_timeout=OPEN_TIMEOUT_S,
                    compression=self.compression,
                    ping_interval=None,  # the server pings every 10 s
                    close_timeout=5,
                    max_queue=256,
                )
                hello = {"type": "hello", "protocol": 1, "token": self.table.tokens[self.seat]}
                await self.ws.send(json.dumps(hello))
                if moved_retries:
                    first = await asyncio.wait_for(self.ws.recv(), WELCOME_TIMEOUT_S)
                break
            except ConnectionClosed as closed:
                moved = closed.rcvd is not None and closed.rcvd.code == CLOSE_TRY_AGAIN
                if not moved or attempt == moved_retries:
                    self.fail(f"open: {type(closed).__name__}")
                    return False
                stats.moved += 1
                await asyncio.sleep(0.02)
            except (OSError, TimeoutError, InvalidHandshake, InvalidURI) as error:
                self.fail(f"open: {type(error).__name__}")
                return False
        stats.opened += 1
        if first is not None:
            self.handle(first)
        self.reader = asyncio.create_task(self.read(deadline))
        return True

    async def read(self, deadline: float) -> None:
        """Handle frames until the socket closes or ``deadline`` passes."""
        assert self.ws is not None
        stats = self.table.stats
        try:
            async with asyncio.timeout_at(deadline):
                async for frame in self.ws:
                    self.handle(frame)
        except ConnectionClosed:
            pass
        except TimeoutError:
            stats.errors["reader deadline"] += 1
        if not stats.closing:
            code = self.ws.close_code
            stats.close_codes[str(code) if code is not None else "no close code"] += 1
            self.fail("closed unexpectedly")

    def fail(self, reason: str) -> None:
        """Count this connection as failed (once), with ``reason``."""
        if not self.failed:
            self.failed = True
            self.table.stats.failed += 1
            self.table.stats.errors[reason] += 1

    def handle(self, frame: str | bytes) -> None:
        """One frame from the server."""
        loop_now = asyncio.get_running_loop().time()
        message = orjson.loads(frame)
        kind = message.get("type")
        stats = self.table.stats
        if kind == "state":
            if stats.in_window(loop_now):
                stats.deliveries += 1
                if len(stats.frame_sizes) < 20000:
                    stats.frame_sizes.append(len(frame))
            version = message["version"]
            if version <= self.last_version:
                return
            self.last_version = version
            self.table.on_state(version, loop_now)
            self.maybe_act(version, (message.get("view") or {}).get("legal") or [])
        elif kind == "welcome" and not self.welcomed:
            self.welcomed = True
            stats.welcomed += 1
        elif kind == "error":
            stats.errors[f"server: {message.get('code')}"] += 1

    def maybe_act(self, version: int, legal: list[dict[str, Any]]) -> None:
        """Schedule ``legal[0]`` unless nothing or only a forced pass is legal (the server
        applies that itself)."""
        if not legal or (len(legal) == 1 and legal[0].get("pass")) or version <= self.acted_version:
            return
        if self.table.stats.stopping:
            return
        self.acted_version = version
        action = {key: value for key, value in legal[0].items() if key != "seat"}
        self.actor = asyncio.create_task(self.act(version, action))

    async def act(self, version: int, action: dict[str, Any]) -> None:
        """At the table's next slot, send ``action`` made at ``version`` (if still current)."""
        table, stats = self.table, self.table.stats
        await table.started.wait()
        loop = asyncio.get_running_loop()
        delay = table.claim_slot(loop.time()) - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        if stats.stopping or table.top_version != version or self.ws is None:
            return
        now = loop.time()
        table.pending[version + 1] = Pending(now)
        stats.sent += 1
        stats.sent_in_window += stats.in_window(now)
        with contextlib.suppress(ConnectionClosed):
            await self.ws.send(json.dumps({"type": "action", "version": version, "action": action}))


# -- driving one target ------------------------------------------------------------------------


async def bounded(jobs: Iterable[Awaitable[Any]], limit: int) -> list[Any]:
    """Await ``jobs`` with at most ``limit`` running at a time; returns their results in order."""
    gate = asyncio.Semaphore(limit)

    async def one(job: Awaitable[Any]) -> Any:
        async with gate:
            return await job

    return await asyncio.gather(*(one(job) for job in jobs))


async def create_tables(
    http: httpx.AsyncClient, count: int, stats: Stats, bot_seats: int = 0, bot_level: str = "hard"
) -> list[Table]:
    """``count`` rooms, a `Table` each: the first ``5 - bot_seats`` seats claimed by players, the
    last ``bot_seats`` given to bots of ``bot_level``."""
    people = SEATS - bot_seats

    async def one(index: int) -> Table:
        bots = [None] * people + [bot_level] * bot_seats
        body = {"turn_timer_s": 0, "options": {"camat_target": 0}, "bots": bots}
        reply = await http.post("/api/rooms", json=body)
        reply.raise_for_status()
        room = reply.json()
        tokens = []
        for seat in range(people):
            claimed = await http.post(f"/api/rooms/{room['code']}/seats/{seat}", json={"name": f"L{seat}"})
            claimed.raise_for_status()
            tokens.append(claimed.json()["token"])
        return Table(room["code"], tokens, room["host_token"], stats)

    tables: list[Table] = await bounded((one(i) for i in range(count)), HTTP_CONCURRENCY)
    return tables


def fanout_tables(count: int, stats: Stats) -> list[Table]:
    """Tables of the fan-out baseline: made-up codes, tokens that name the seat."""
    tokens = [f"fanout-seat-{seat}" for seat in range(SEATS)]
    return [Table(f"t{index:05d}", tokens, None, stats) for index in range(count)]


async def open_clients(
    tables: list[Table], ws_base: str, compression: str | None, deadline: float, moved_retries: int = 0
) -> None:
    """Open five clients per table, ``BATCH`` connections at a time, each with a timeout (and
    ``moved_retries``: `SeatClient.open`)."""
    clients = []
    for table in tables:
        table.clients = [
            SeatClient(table, seat, f"{ws_base}/ws/rooms/{table.code}", compression)
            for seat in range(len(table.tokens))
        ]
        clients += table.clients
    for at in range(0, len(clients), BATCH):
        await asyncio.gather(*(client.open(deadline, moved_retries) for client in clients[at : at + BATCH]))


async def wait_for(condition: Callable[[], bool], timeout: float) -> bool:
    """Poll ``condition`` every 50 ms for at most ``timeout`` seconds."""
    for _ in range(max(1, int(timeout / 0.05))):
        if condition():
            return True
        await asyncio.sleep(0.05)
    return condition()


async def start_tables(
    tables: list[Table], http: httpx.AsyncClient | None, pace: float, rng: random.Random
) -> None:
    """Start each match (over HTTP as its host, for ours) and give its slots a random phase."""
    loop = asyncio.get_running_loop()
    interval = 1.0 / pace

    async def one(table: Table) -> None:
        if http is not None:
            reply = await http.post(
                f"/api/rooms/{table.code}/start", headers={"Authorization": f"Bearer {table.host_token}"}
            )
            reply.raise_for_status()
        table.begin(loop.time() + rng.uniform(0, interval), interval)

    await bounded((one(table) for table in tables), HTTP_CONCURRENCY)


async def sample_rss(server: ServerProcess | Cluster, until: float) -> None:
    """Sample the server's RSS every 250 ms until ``until`` (loop time)."""
    loop = asyncio.get_running_loop()
    for _ in range(100_000):
        if loop.time() >= until:
            return
        server.sample_rss()
        await asyncio.sleep(0.25)


def run_queue_wait_seconds(pid: int, tid: int) -> float:
    """Seconds thread ``tid`` of process ``pid`` has waited so far on a run queue, ready to run but
    given no CPU (the second field of ``/proc/PID/task/TID/schedstat``, ns): on a machine the load
    generator shares, what the machine's other work made an event loop wait. 0 when it cannot be
    read (no such thread, a kernel without schedstat)."""
    try:
        return int(Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def client_cpu() -> float:
    """CPU seconds of this process (user + system)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def drive(
    server: ServerProcess | Cluster,
    args: argparse.Namespace,
    http_setup: bool,
    rng: random.Random,
    bot_seats: int = 0,
) -> dict[str, Any]:
    """Run the whole client side against a started ``server`` (tables with ``bot_seats`` bots);
    returns the figures."""
    loop = asyncio.get_running_loop()
    stats = Stats()
    budget_end = loop.time() + SETUP_BUDGET_S
    hard_end = budget_end + args.warmup + args.seconds + DRAIN_S + 30
    sampler = asyncio.create_task(sample_rss(server, hard_end))
    lagging = asyncio.create_task(loop_lag(stats))
    compression = None if args.compression == "none" else "deflate"
    limits = httpx.Limits(max_connections=HTTP_CONCURRENCY)
    setup_started = loop.time()
    async with (
        httpx.AsyncClient(base_url=server.url, timeout=30, limits=limits) as http,
        asyncio.timeout_at(budget_end),
    ):
        if http_setup:
            tables = await create_tables(http, args.tables, stats, bot_seats, args.bot_level)
        else:
            tables = fanout_tables(args.tables, stats)
        moved_retries = MOVED_RETRIES if isinstance(server, Cluster) else 0
        await open_clients(tables, server.ws_base, compression, hard_end, moved_retries)
        await wait_for(lambda: stats.welcomed >= stats.opened, WELCOME_TIMEOUT_S)
        for client in (c for t in tables for c in t.clients if c.ws is not None and not c.welcomed):
            client.fail("no welcome")
        await start_tables(tables, http if http_setup else None, args.pace, rng)
    setup_s = loop.time() - setup_started
    playing = loop.time()
    stats.window = (playing + args.warmup, playing + args.warmup + args.seconds)
    await asyncio.sleep(max(0.0, stats.window[0] - loop.time()))
    proxy = server.proxy_cpu_seconds if isinstance(server, Cluster) else lambda: 0.0
    metrics = isinstance(server, ServerProcess) and http_setup
    store0 = await server_metrics(server.url) if metrics else None
    loop_thread = server.loop_thread_cpu_seconds if isinstance(server, ServerProcess) else None
    cpu0, mine0, workers0 = server.cpu_seconds(), client_cpu(), server.children_cpu_seconds()
    kernel0 = server.kernel_cpu_seconds()
    loop0 = loop_thread() if loop_thread else 0.0
    waited = server.loop_thread_waited_seconds if isinstance(server, ServerProcess) else None
    me = os.getpid()
    waited0, mine_waited0 = waited() if waited else 0.0, run_queue_wait_seconds(me, me)
    proxy0 = proxy()
    spy = None
    if args.profile and isinstance(server, ServerProcess) and server.proc is not None:
        stacks = Path(args.profile) / f"{server.name.replace(' ', '-')}{'-bots' if bot_seats else ''}.txt"
        spy = (stacks, start_py_spy(server.proc.pid, args.seconds, stacks))
    await asyncio.sleep(max(0.0, stats.window[1] - loop.time()))
    cpu1, mine1, workers1 = server.cpu_seconds(), client_cpu(), server.children_cpu_seconds()
    kernel1 = server.kernel_cpu_seconds()
    loop1 = loop_thread() if loop_thread else 0.0
    waited1, mine_waited1 = waited() if waited else 0.0, run_queue_wait_seconds(me, me)
    proxy1 = proxy()
    store1 = await server_metrics(server.url) if metrics else None
    stats.stopping = True
    await wait_for(lambda: not any(t.pending for t in tables), DRAIN_S)
    stats.lost = sum(len(t.pending) for t in tables)
    stats.closing = True
    await close_clients(tables)
    server.sample_rss()
    for task in (sampler, lagging):
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    result = figures(stats, args, setup_s, server, cpu1 - cpu0, mine1 - mine0)
    result["bot_seats"] = bot_seats
    if stats.deliveries:
        result["kernel_cpu_us_per_delivery"] = round(1e6 * (kernel1 - kernel0) / stats.deliveries, 1)
    if loop_thread is not None and stats.deliveries:
        result["loop_thread_cpu_us_per_delivery"] = round(1e6 * (loop1 - loop0) / stats.deliveries, 1)
    if waited is not None:
        result["loop_thread_run_queue_ms_per_s"] = round(1000 * (waited1 - waited0) / args.seconds, 1)
    result["client_run_queue_ms_per_s"] = round(1000 * (mine_waited1 - mine_waited0) / args.seconds, 1)
    if store0 is not None and store1 is not None:
        transactions, writes = store1.transactions - store0.transactions, store1.writes - store0.writes
        result["store_transactions_per_s"] = round(transactions / args.seconds, 1)
        result["writes_per_transaction"] = round(writes / transactions, 2) if transactions else math.nan
        for name, q in (("p50", 0.50), ("p99", 0.99)):
            bound = bucket_quantile(store0.broadcast, store1.broadcast, q)
            result[f"server_latency_{name}_ms_at_most"] = round(1000 * bound, 1)
    if spy is not None:
        stacks, process = spy
        _, errors = await asyncio.to_thread(process.communicate)
        if stacks.exists():
            result["profile"] = dict(zip(("stages", "busy_samples"), stages(stacks.read_text()), strict=True))
        else:
            result["profile_error"] = errors.decode(errors="replace").strip()[-500:]
    result["workers_cpu_pct"] = round(100 * (workers1 - workers0) / args.seconds, 1)
    if isinstance(server, Cluster):
        result["processes"] = len(server.servers)
        result["proxy_cpu_pct"] = round(100 * (proxy1 - proxy0) / args.seconds, 1)
        result["sockets_moved"] = stats.moved
        offered = args.tables * args.pace
        result["saturated"] = result["client_actions_per_s"] < 0.95 * offered
    return result


STORE_METRICS = ("domeng_store_batch_writes_count", "domeng_store_batch_writes_sum")
"""The server's Prometheus counters of store transactions and of the writes in them (app/metrics.py)."""
BROADCAST_BUCKET = "domeng_action_broadcast_seconds_bucket"
"""The server's histogram of an action's arrival to its update queued for every recipient
(app/metrics.py): its buckets, cumulative counts by upper bound ``le`` in seconds."""


@dataclass
class ServerMetrics:
    """What load.py reads of the server's ``/metrics`` at each end of the window: store
    transactions and their writes so far, and the action-to-broadcast histogram's cumulative
    counts by upper bound (seconds, ``inf`` for +Inf)."""

    transactions: float
    writes: float
    broadcast: dict[float, float]


async def server_metrics(url: str) -> ServerMetrics | None:
    """The server's `ServerMetrics` so far, read from its ``/metrics``; None when it does not
    answer or lacks the store's counters (the histogram may be empty: no action yet)."""
    try:
        async with httpx.AsyncClient(timeout=10) as http:
            text = (await http.get(url + "/metrics")).text
    except httpx.HTTPError:
        return None
    found, buckets = {}, {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name in STORE_METRICS:
                found[sample.name] = sample.value
            elif sample.name == BROADCAST_BUCKET:
                buckets[float(sample.labels["le"])] = sample.value
    if len(found) != len(STORE_METRICS):
        return None
    return ServerMetrics(found[STORE_METRICS[0]], found[STORE_METRICS[1]], buckets)


def bucket_quantile(before: dict[float, float], after: dict[float, float], q: float) -> float:
    """The upper bound (seconds) of the histogram bucket that holds quantile ``q`` (0–1) of what
    was observed between two readings of its cumulative counts by bound (``before``, ``after``):
    the quantile is at most that; ``inf`` when it lies above every finite bound, nan when nothing
    was observed."""
    bounds = sorted(after)
    counts = [after[b] - before.get(b, 0.0) for b in bounds]
    if not counts or counts[-1] <= 0:
        return math.nan
    rank = q * counts[-1]
    return next(b for b, c in zip(bounds, counts, strict=True) if c >= rank)


async def loop_lag(stats: Stats, tick_s: float = LAG_TICK_S) -> None:
    """Sample the load generator's own event loop: sleep ``tick_s`` again and again and record
    how late each wake-up is (s) while in the window, in ``stats.loop_lags``; runs until cancelled.
    A late wake-up delays every frame the generator reads then, so its p99 bounds how much of the
    latency measured is the generator's own."""
    loop = asyncio.get_running_loop()
    while len(stats.loop_lags) < LAG_SAMPLES:
        due = loop.time() + tick_s
        await asyncio.sleep(tick_s)
        now = loop.time()
        if stats.in_window(now):
            stats.loop_lags.append(now - due)


async def close_clients(tables: list[Table]) -> None:
    """Close every socket (bounded by a timeout) and end the readers."""
    clients = [c for t in tables for c in t.clients if c.ws is not None]
    for at in range(0, len(clients), BATCH * 4):
        batch = clients[at : at + BATCH * 4]
        closing = [asyncio.create_task(c.ws.close()) for c in batch if c.ws is not None]
        await asyncio.wait(closing, timeout=10)
    tasks = [task for c in clients for task in (c.reader, c.actor) if task is not None and not task.done()]
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks, timeout=10)


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile ``q`` (0–1) of ascending values (nan when empty)."""
    if not sorted_values:
        return math.nan
    return sorted_values[min(len(sorted_values) - 1, max(0, math.ceil(q * len(sorted_values)) - 1))]


def figures(
    stats: Stats,
    args: argparse.Namespace,
    setup_s: float,
    server: ServerProcess | Cluster,
    cpu: float,
    mine: float,
) -> dict[str, Any]:
    """The figures of one target as a JSON-ready dict."""
    window = args.seconds
    latencies = sorted(stats.latencies)
    return {
        "tables": args.tables,
        "connections_opened": stats.opened,
        "connections_failed": stats.failed,
        "close_codes": dict(stats.close_codes),
        "setup_s": round(setup_s, 1),
        "actions_per_s": round(stats.versions / window, 1),
        "client_actions_per_s": round(stats.sent_in_window / window, 1),
        "deliveries_per_s": round(stats.deliveries / window, 1),
        "latency_ms": {
            "p50": round(1000 * percentile(latencies, 0.50), 2),
            "p99": round(1000 * percentile(latencies, 0.99), 2),
            "max": round(1000 * latencies[-1], 2) if latencies else math.nan,
            "samples": len(latencies),
        },
        "lost_updates": stats.lost,
        "errors": dict(stats.errors),
        "median_state_bytes": int(statistics.median(stats.frame_sizes)) if stats.frame_sizes else 0,
        "server_rss_mb_peak": round(server.rss_peak_mb, 1),
        "server_rss_mb_hwm": round(server.rss_hwm_mb, 1),
        "server_cpu_pct": round(100 * cpu / window, 1),
        "server_cpu_us_per_delivery": round(1e6 * cpu / stats.deliveries, 1)
        if stats.deliveries
        else math.nan,
        "client_cpu_pct": round(100 * mine / window, 1),
        "client_lag_p99_ms": round(1000 * percentile(sorted(stats.loop_lags), 0.99), 2),
    }


# -- the run -----------------------------------------------------------------------------------


def raise_open_files(needed: int) -> None:
    """Raise the soft limit of open files to ``needed`` (at most the hard limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        target = needed if hard == resource.RLIM_INFINITY else min(hard, needed)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


async def run_target(
    server: ServerProcess | Cluster,
    ready_path: str,
    args: argparse.Namespace,
    http_setup: bool,
    bot_seats: int = 0,
) -> dict[str, Any]:
    """Start ``server``, drive it, stop it."""
    await asyncio.to_thread(server.start, ready_path)
    try:
        return await drive(server, args, http_setup, random.Random(args.seed), bot_seats)
    finally:
        await asyncio.to_thread(server.stop)


def load_average() -> list[float]:
    """The machine's 1, 5 and 15 minute load averages (other processes compete for the CPUs)."""
    return [round(x, 2) for x in os.getloadavg()]


async def run_processes(args: argparse.Namespace) -> dict[str, Any]:
    """``--processes``: for each count, that many servers behind nginx, one run each."""
    result: dict[str, Any] = {"config": config_of(args), "load_average_before": load_average()}
    await asyncio.to_thread(migrate_once, args.database_url)
    runs = {}
    with tempfile.TemporaryDirectory(prefix="domeng-load-") as tmp:
        for count in args.processes:
            cluster = Cluster(args, count, Path(tmp) / f"n{count}")
            runs[str(count)] = await run_target(cluster, "/readyz", args, http_setup=True)
    result["processes"] = runs
    result["load_average_after"] = load_average()
    fewest, most = min(args.processes), max(args.processes)
    first, last = runs[str(fewest)], runs[str(most)]
    if len(runs) > 1 and first["server_cpu_us_per_delivery"]:
        ratio = last["server_cpu_us_per_delivery"] / first["server_cpu_us_per_delivery"]
        result["cpu_per_delivery_ratio"] = round(ratio, 3)
        name = f"CPU/delivery {most} vs {fewest} processes <= {GOAL_SCALING:g}x"
        result["goals"] = {name: ratio <= GOAL_SCALING}
    return result


async def run(args: argparse.Namespace) -> dict[str, Any]:
    """Ours, then the fan-out baseline with frames as large as ours (or `run_processes`); with
    ``--repeat N``, that pair N times in turn, reported by the pair whose CPU ratio is the median
    (`run_repeated`)."""
    if args.processes:
        return await run_processes(args)
    if args.repeat > 1:
        return await run_repeated(args)
    return await run_once(args)


REPEAT_FIGURES = (
    ("ours µs/delivery", lambda r: r["ours"]["server_cpu_us_per_delivery"]),
    ("fan-out µs/delivery", lambda r: r["baseline"]["server_cpu_us_per_delivery"]),
    ("ratio", lambda r: r["ratio"]["server_cpu_us_per_delivery"]),
    ("ours kernel µs", lambda r: r["ours"].get("kernel_cpu_us_per_delivery", math.nan)),
    ("fan-out kernel µs", lambda r: r["baseline"].get("kernel_cpu_us_per_delivery", math.nan)),
    ("ours p50 ms", lambda r: r["ours"]["latency_ms"]["p50"]),
    ("ours p99 ms", lambda r: r["ours"]["latency_ms"]["p99"]),
    ("ours' own p99 ≤ ms", lambda r: r["ours"].get("server_latency_p99_ms_at_most", math.nan)),
    ("client lag p99 ms", lambda r: r["ours"].get("client_lag_p99_ms", math.nan)),
    ("ours CPU %", lambda r: r["ours"]["server_cpu_pct"]),
    ("writes/transaction", lambda r: r["ours"].get("writes_per_transaction", math.nan)),
)
"""What `run_repeated` lists of each pair, and the median of."""


async def run_repeated(args: argparse.Namespace) -> dict[str, Any]:
    """``--repeat N``: ours and the fan-out, N times in turn (the machine's speed drifts, so each
    ratio compares two runs a minute apart); the report is the pair with the median CPU ratio,
    with every pair's figures (in the order they ran) and their medians beside it."""
    pairs = [await run_once(args) for _ in range(args.repeat)]
    by_ratio = sorted(pairs, key=lambda r: r["ratio"]["server_cpu_us_per_delivery"])
    result = dict(by_ratio[len(pairs) // 2])
    result["load_average_before"] = pairs[0]["load_average_before"]
    result["repeats"] = [{name: get(r) for name, get in REPEAT_FIGURES} for r in pairs]
    result["repeat_medians"] = {
        name: round(statistics.median(get(r) for r in pairs), 3) for name, get in REPEAT_FIGURES
    }
    return result


async def run_once(args: argparse.Namespace) -> dict[str, Any]:
    """One run of ours (and the bot run), then the fan-out's, as the options say."""
    with tempfile.TemporaryDirectory(prefix="domeng-load-") as tmp:
        data_dir = Path(tmp)
        result: dict[str, Any] = {"config": config_of(args), "load_average_before": load_average()}
        frame_bytes = args.frame_bytes or DEFAULT_FRAME_BYTES
        if not args.baseline_only:
            ours = await run_target(domeng_server(args, data_dir), "/readyz", args, http_setup=True)
            result["ours"] = ours
            frame_bytes = args.frame_bytes or ours["median_state_bytes"] or DEFAULT_FRAME_BYTES
            if args.bot_seats:
                server = domeng_server(args, data_dir, bots=True)
                result["ours_bots"] = await run_target(server, "/readyz", args, True, args.bot_seats)
        if not args.skip_baseline:
            fanout = fanout_server(args, frame_bytes, data_dir)
            base = await run_target(fanout, "/docs", args, http_setup=False)
            base["frame_bytes"] = frame_bytes
            result["baseline"] = base
    result["load_average_after"] = load_average()
    if "ours" in result:
        result["goals"] = goals(result["ours"], args)
    if "ours" in result and "baseline" in result:
        result["ratio"] = ratios(result["ours"], result["baseline"])
        cpu_ratio = result["ratio"]["server_cpu_us_per_delivery"]
        result["goals"][f"CPU/delivery <= {GOAL_CPU_RATIO:g}x fan-out's"] = cpu_ratio <= GOAL_CPU_RATIO
    return result


def code_revision() -> str:
    """The git commit of the code under test, ``+changes`` when app/ or engine/ differ from it."""

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=9, check=False
        )
        return done.stdout.strip()

    try:
        head, dirty = git("rev-parse", "--short", "HEAD"), git("status", "--porcelain", "--", "app", "engine")
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{head or 'unknown'}{'+changes' if dirty else ''}"


def config_of(args: argparse.Namespace) -> dict[str, Any]:
    """What was run, for the report."""
    database = args.database_url or "sqlite (temporary data dir)"
    database = re.sub(r"//([^:@/]+):[^@/]*@", r"//\1:***@", database)  # no password in reports
    return {
        "tables": args.tables,
        "connections": args.tables * SEATS,
        "pace": args.pace,
        "seconds": args.seconds,
        "warmup": args.warmup,
        "database": database,
        "compression": args.compression,
        "loop": args.loop or "server default",
        "ws": args.ws or "server default",
        "round_pause_s": args.round_pause,
        "bot_seats": args.bot_seats,
        "bot_level": args.bot_level,
        "bot_delay_s": args.bot_delay,
        "bot_workers": args.bot_workers or "server default",
        "nginx": (
            None if not args.processes else "hash of the room code" if args.room_hashing else "round robin"
        ),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "code": code_revision(),
        "server_env": dict(args.server_env),
    }


def ratios(ours: dict[str, Any], base: dict[str, Any]) -> dict[str, float]:
    """Ours divided by the baseline, figure by figure."""

    def ratio(a: float, b: float) -> float:
        return round(a / b, 3) if b else math.nan

    keys = (
        "actions_per_s",
        "deliveries_per_s",
        "server_cpu_us_per_delivery",
        "loop_thread_cpu_us_per_delivery",
        "kernel_cpu_us_per_delivery",
    )
    result = {key: ratio(ours[key], base[key]) for key in keys if key in ours and key in base}
    for key in ("p50", "p99", "max"):
        result[f"latency_{key}"] = ratio(ours["latency_ms"][key], base["latency_ms"][key])
    return result


def goals(ours: dict[str, Any], args: argparse.Namespace) -> dict[str, bool]:
    """Issue 15's goals for the run's size: from `LARGE_CONNECTIONS` (5,000) connections on, the
    full offered pace (95% of ``--tables`` × ``--pace`` client actions/s, at 1 action/s per table
    or more), p99 ≤ 100 ms and none failed; below it, 2,000 connections at 1 action/s per table,
    p99 ≤ 50 ms, none failed and RSS ≤ 250 MB (the issue sets no memory goal at 5,000)."""
    connections = args.tables * SEATS
    if connections >= LARGE_CONNECTIONS:
        offered = args.tables * args.pace
        return {
            f"{connections} connections at the full offered pace": ours["connections_opened"] >= connections
            and args.pace >= GOAL_PACE
            and ours["client_actions_per_s"] >= 0.95 * offered,
            f"p99 <= {LARGE_P99_MS:g} ms": ours["latency_ms"]["p99"] <= LARGE_P99_MS,
            "0 failed connections": ours["connections_failed"] == 0,
        }
    pace_ok = ours["client_actions_per_s"] >= 0.95 * GOAL_PACE * GOAL_CONNECTIONS / SEATS
    return {
        f"{GOAL_CONNECTIONS} connections at {GOAL_PACE:g} action/s per table": ours["connections_opened"]
        >= GOAL_CONNECTIONS
        and args.pace >= GOAL_PACE
        and pace_ok,
        f"p99 <= {GOAL_P99_MS:g} ms": ours["latency_ms"]["p99"] <= GOAL_P99_MS,
        "0 failed connections": ours["connections_failed"] == 0,
        f"server RSS <= {GOAL_RSS_MB:g} MB": ours["server_rss_mb_peak"] <= GOAL_RSS_MB,
    }


# -- printing ----------------------------------------------------------------------------------

ROWS = (
    ("connections opened", "connections_opened", "{:.0f}"),
    ("connections failed", "connections_failed", "{:.0f}"),
    ("actions/s (all versions)", "actions_per_s", "{:.1f}"),
    ("client actions/s", "client_actions_per_s", "{:.1f}"),
    ("deliveries/s", "deliveries_per_s", "{:.1f}"),
    ("latency p50 (ms)", "p50", "{:.2f}"),
    ("latency p99 (ms)", "p99", "{:.2f}"),
    ("latency max (ms)", "max", "{:.2f}"),
    ("latency samples", "samples", "{:.0f}"),
    ("updates never completed", "lost_updates", "{:.0f}"),
    ("median state frame (bytes)", "median_state_bytes", "{:.0f}"),
    ("server RSS peak (MB)", "server_rss_mb_peak", "{:.1f}"),
    ("server VmHWM (MB)", "server_rss_mb_hwm", "{:.1f}"),
    ("server CPU (% of a core)", "server_cpu_pct", "{:.1f}"),
    ("server CPU per delivery (µs)", "server_cpu_us_per_delivery", "{:.1f}"),
    ("  of it the loop's thread (µs)", "loop_thread_cpu_us_per_delivery", "{:.1f}"),
    ("  of it the kernel's (µs)", "kernel_cpu_us_per_delivery", "{:.1f}"),
    ("store transactions/s", "store_transactions_per_s", "{:.1f}"),
    ("store writes per transaction", "writes_per_transaction", "{:.2f}"),
    ("bot workers CPU (% of a core)", "workers_cpu_pct", "{:.1f}"),
    ("client CPU (% of a core)", "client_cpu_pct", "{:.1f}"),
    ("  its loop's lag p99 (ms)", "client_lag_p99_ms", "{:.2f}"),
    ("  its loop's CPU wait (ms/s)", "client_run_queue_ms_per_s", "{:.1f}"),
    ("server loop's CPU wait (ms/s)", "loop_thread_run_queue_ms_per_s", "{:.1f}"),
    ("server's own latency p50 (ms, ≤)", "server_latency_p50_ms_at_most", "{:g}"),
    ("server's own latency p99 (ms, ≤)", "server_latency_p99_ms_at_most", "{:g}"),
    ("setup (s)", "setup_s", "{:.1f}"),
)
RATIO_KEYS = {
    "actions_per_s": "actions_per_s",
    "deliveries_per_s": "deliveries_per_s",
    "server_cpu_us_per_delivery": "server_cpu_us_per_delivery",
    "loop_thread_cpu_us_per_delivery": "loop_thread_cpu_us_per_delivery",
    "kernel_cpu_us_per_delivery": "kernel_cpu_us_per_delivery",
    "p50": "latency_p50",
    "p99": "latency_p99",
    "max": "latency_max",
}


def cell(figures: dict[str, Any] | None, key: str, fmt: str) -> str:
    """One figure formatted, or a dash."""
    if figures is None:
        return "-"
    if key in ("p50", "p99", "max", "samples"):
        return fmt.format(figures["latency_ms"][key])
    if key not in figures:
        return "-"
    return fmt.format(figures[key])


PROCESS_ROWS = (
    *ROWS[:9],
    ("sockets moved (1013 at open)", "sockets_moved", "{:.0f}"),
    ("updates never completed", "lost_updates", "{:.0f}"),
    ("saturated (< 95% of offered)", "saturated", "{}"),
    ("largest server RSS peak (MB)", "server_rss_mb_peak", "{:.1f}"),
    ("servers' CPU (% of a core)", "server_cpu_pct", "{:.1f}"),
    ("servers' CPU per delivery (µs)", "server_cpu_us_per_delivery", "{:.1f}"),
    ("nginx CPU (% of a core)", "proxy_cpu_pct", "{:.1f}"),
    ("load generator CPU (% of a core)", "client_cpu_pct", "{:.1f}"),
    ("setup (s)", "setup_s", "{:.1f}"),
)


def print_processes_report(result: dict[str, Any]) -> None:
    """``--processes``: one column per process count, the scaling ratio and its goal."""
    c = result["config"]
    print(
        f"Domeng Online load behind nginx: {c['tables']} tables × {SEATS} = {c['connections']} connections, "
        f"offered {c['tables'] * c['pace']:g} client actions/s, {c['seconds']:g} s window after "
        f"{c['warmup']:g} s warmup · database {c['database']} · Redis · nginx {c['nginx']} · "
        f"Python {c['python']} · "
        f"{c['cpus']} CPUs · code {c['code']}"
    )
    runs = result["processes"]
    print(f"{'':34}" + "".join(f"{count + ' proc':>12}" for count in runs))
    for label, key, fmt in PROCESS_ROWS:
        print(f"{label:34}" + "".join(f"{cell(figures, key, fmt):>12}" for figures in runs.values()))
    for count, figures in runs.items():
        if figures["errors"] or figures["close_codes"]:
            print(f"{count} proc: errors {figures['errors']} · unexpected closes {figures['close_codes']}")
    if "cpu_per_delivery_ratio" in result:
        ratio = result["cpu_per_delivery_ratio"]
        print(f"servers' CPU per delivered update, most vs fewest processes: {ratio:.3f}x")
    before, after = result["load_average_before"], result["load_average_after"]
    print(f"machine load average (1/5/15 min): before {before}, after {after} on {c['cpus']} CPUs")
    for goal, met in result.get("goals", {}).items():
        print(f"goal {goal:44} {'meets' if met else 'MISSES'}")


def print_report(result: dict[str, Any]) -> None:
    """The figures side by side, the ratios, and the goals."""
    if "processes" in result:
        print_processes_report(result)
        return
    c = result["config"]
    print(
        f"Domeng Online load: {c['tables']} tables × {SEATS} = {c['connections']} connections, "
        f"pace {c['pace']:g} action/s per table, {c['seconds']:g} s window after {c['warmup']:g} s warmup"
    )
    print(
        f"offered {c['tables'] * c['pace']:g} client actions/s · database {c['database']} · compression "
        f"{c['compression']} · round pause {c['round_pause_s']} s · Python {c['python']} · {c['cpus']} CPUs"
        f" · one uvicorn worker · code {c['code']}"
    )
    if c.get("server_env"):
        print(
            "our server's settings for this run: " + " ".join(f"{k}={v}" for k, v in c["server_env"].items())
        )
    ours, base, ratio = result.get("ours"), result.get("baseline"), result.get("ratio", {})
    bots = result.get("ours_bots")
    if bots:
        print(
            f"with bots: {c['bot_seats']} {c['bot_level']} bots per table (the last seats), "
            f"{SEATS - c['bot_seats']} socket players, bot delay {c['bot_delay_s']:g} s, "
            f"bot workers {c['bot_workers']}; the goals are judged on the all-human run"
        )
    head = f"{'':30}{'ours':>12}" + (f"{'with bots':>12}" if bots else "")
    print(f"{head}{'fan-out':>12}{'ours/fan-out':>14}")
    for label, key, fmt in ROWS:
        shown = f"{ratio[RATIO_KEYS[key]]:.3f}" if key in RATIO_KEYS and RATIO_KEYS[key] in ratio else ""
        with_bots = f"{cell(bots, key, fmt):>12}" if bots else ""
        print(f"{label:30}{cell(ours, key, fmt):>12}{with_bots}{cell(base, key, fmt):>12}{shown:>14}")
    for name, figures in (("ours", ours), ("with bots", bots), ("fan-out", base)):
        if figures and (figures["errors"] or figures["close_codes"]):
            print(f"{name}: errors {figures['errors']} · unexpected closes {figures['close_codes']}")
    if base:
        print(f"fan-out frames padded to {base['frame_bytes']} bytes (ours' median)")
    before, after = result["load_average_before"], result["load_average_after"]
    print(f"machine load average (1/5/15 min): before {before}, after {after} on {c['cpus']} CPUs")
    profiled = {
        name: (figures["profile"]["stages"], figures["profile"]["busy_samples"])
        for name, figures in (("ours", ours), ("with bots", bots), ("fan-out", base))
        if figures and "profile" in figures
    }
    if profiled:
        print("\n".join(format_stages(profiled)))
    for name, figures in (("ours", ours), ("with bots", bots), ("fan-out", base)):
        if figures and "profile_error" in figures:
            print(f"{name}: py-spy failed: {figures['profile_error']}")
    repeats = result.get("repeats")
    if repeats:
        names = [name for name, _ in REPEAT_FIGURES]
        print(f"{len(repeats)} pairs in the order they ran, ours then the fan-out each time", end="")
        print(" (the table above is the pair with the median ratio):")
        print(f"{'':10}" + "".join(f"{name:>20}" for name in names))
        for index, figures in enumerate(repeats, 1):
            print(f"{'pair ' + str(index):10}" + "".join(f"{figures[name]:>20.3f}" for name in names))
        medians = result["repeat_medians"]
        print(f"{'medians':10}" + "".join(f"{medians[name]:>20.3f}" for name in names))
    for goal, met in result.get("goals", {}).items():
        print(f"goal {goal:44} {'meets' if met else 'MISSES'}")


def server_env(text: str) -> tuple[str, str]:
    """``DOMENG_X=VALUE`` as a (name, value) pair; ArgumentTypeError for anything else."""
    name, equals, value = text.partition("=")
    if not equals or not re.fullmatch(r"DOMENG_[A-Z0-9_]+", name):
        raise argparse.ArgumentTypeError(f"expected DOMENG_NAME=VALUE, got {text!r}")
    return name, value


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=400, help="five-seat tables (default 400)")
    parser.add_argument("--pace", type=float, default=1.0, help="client actions/s per table (default 1)")
    parser.add_argument("--seconds", type=float, default=30.0, help="measured window (default 30)")
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds before the window (default 5)")
    parser.add_argument("--database-url", help="e.g. postgresql+asyncpg://postgres@127.0.0.1:5432/db")
    parser.add_argument("--round-pause", type=float, default=0.05, help="DOMENG_ROUND_PAUSE_S (0.05)")
    parser.add_argument(
        "--compression",
        choices=("none", "deflate"),
        default="none",
        help="permessage-deflate on both servers and the clients (default none, as domeng serve)",
    )
    parser.add_argument("--frame-bytes", type=int, help="fan-out frame size (default: ours' median)")
    parser.add_argument(
        "--loop", choices=("uvloop", "asyncio"), help="both servers' event loop (default: DOMENG_LOOP's)"
    )
    parser.add_argument(
        "--ws",
        choices=("websockets-sansio", "wsproto", "websockets"),
        help="both servers' WebSocket implementation (default: DOMENG_WS_IMPL's)",
    )
    parser.add_argument("--skip-baseline", action="store_true", help="measure ours only")
    parser.add_argument("--baseline-only", action="store_true", help="measure the fan-out only")
    parser.add_argument("--seed", type=int, default=1, help="seed of the tables' phases")
    parser.add_argument(
        "--bot-seats", type=int, default=0, help="also run tables with this many bots in the last seats (0-3)"
    )
    parser.add_argument("--bot-level", default="hard", help="the bots' level (default hard)")
    parser.add_argument("--bot-delay", type=float, default=0.7, help="the bot run's DOMENG_BOT_DELAY_S")
    parser.add_argument("--bot-workers", type=int, help="DOMENG_BOT_WORKERS of the bot run (server default)")
    parser.add_argument(
        "--processes",
        type=int,
        nargs="+",
        metavar="N",
        help="several servers behind nginx: one run per count, e.g. --processes 1 2 (needs"
        " --database-url on PostgreSQL and --redis-url; no baseline)",
    )
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("DOMENG_REDIS_URL"),
        help="Redis of --processes (default DOMENG_REDIS_URL), e.g. redis://127.0.0.1:6379/7",
    )
    parser.add_argument(
        "--no-room-hashing",
        dest="room_hashing",
        action="store_false",
        help="--processes: nginx sends requests round robin instead of hashing the room code"
        " (deploy/nginx.conf's default), so most rooms' sockets are relayed to their owner",
    )
    parser.add_argument(
        "--profile",
        metavar="DIR",
        help="sample each server with py-spy over the window: stacks in DIR, shares by stage printed"
        " (benchmarks/profile_stages.py)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="run ours and the fan-out N times in turn and report the pair with the median CPU ratio,"
        " with every pair's figures (default 1)",
    )
    parser.add_argument(
        "--server-env",
        action="append",
        default=[],
        type=server_env,
        metavar="DOMENG_X=VALUE",
        help="a setting of our server for this run (repeatable), e.g. DOMENG_GROUP_COMMIT_S=0.005",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args(argv)
    if args.repeat < 1 or (args.repeat > 1 and (args.skip_baseline or args.baseline_only or args.processes)):
        parser.error(
            "--repeat N ≥ 1; above 1 it runs ours and the fan-out: not with --skip-baseline,"
            " --baseline-only or --processes"
        )
    if args.profile:
        if args.processes:
            parser.error("--profile samples one server process: not with --processes")
        if py_spy() is None:
            parser.error("--profile needs py-spy: .venv/bin/pip install -e '.[dev]'")
        Path(args.profile).mkdir(parents=True, exist_ok=True)
    if args.processes:
        if not (args.database_url or "").startswith("postgresql") or not args.redis_url:
            parser.error("--processes needs --database-url postgresql+asyncpg://… and --redis-url")
        if min(args.processes) < 1 or args.bot_seats or args.baseline_only:
            parser.error("--processes: counts ≥ 1, without --bot-seats or --baseline-only")
        if NGINX is None:
            parser.error("--processes needs nginx (apt-get install -y nginx-light)")
    if args.tables < 1 or args.pace <= 0 or args.seconds <= 0 or args.warmup < 0:
        parser.error("--tables ≥ 1, --pace > 0, --seconds > 0 and --warmup ≥ 0")
    if not 0 <= args.bot_seats <= SEATS - 2 or args.bot_delay < 0:
        parser.error(f"--bot-seats 0 to {SEATS - 2} (two socket players per table) and --bot-delay ≥ 0")
    if args.bot_seats and args.baseline_only:
        parser.error("--bot-seats runs our server: not with --baseline-only")
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its figures (exit status 0 whether or not goals are met)."""
    args = parse_args(argv)
    raise_open_files(args.tables * SEATS + 512)
    result = asyncio.run(run(args))
    if args.json:
        print(json.dumps(result))
    else:
        print_report(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
