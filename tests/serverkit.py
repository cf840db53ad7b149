"""Real server processes and real sockets for the server tests (no mocks).

`ServerProcess` runs ``domeng serve`` (`app.cli.main`) in a process of its own on a port the OS
picks, with its own data directory; `Client` is a blocking WebSocket client that speaks
docs/protocol.md.

Server processes are forked from multiprocessing's fork server, which imports the server's modules
once per test process (`PRELOADED`): a fresh interpreter spends about 1.5 CPU s importing FastAPI,
SQLAlchemy and Alembic, and the suite starts over a hundred servers. Each is still its own process
with its own environment, sockets, database, bot workers and signals; only the imports are done
before the fork. ``ServerProcess(..., fresh=True)`` (or DOMENG_TEST_FRESH_SERVERS=1 for all of them)
runs ``python -m app.cli serve`` in a new interpreter instead, as the README's command does.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import multiprocessing
import os
import re
import resource
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

ROOT = Path(__file__).resolve().parents[1]
FAST = {
    "DOMENG_BOT_DELAY_S": "0",
    "DOMENG_ROUND_PAUSE_S": "0.05",
    "DOMENG_DISCONNECT_GRACE_S": "30",
    "DOMENG_LOG_JSON": "true",
    # every test client is 127.0.0.1: a module's server hosts more rooms for it than one player
    # may hold open (the cap's own test sets it)
    "DOMENG_MAX_ROOMS_PER_ADDRESS": "0",
    # nor may one address create more than 60 rooms a minute, and a fast machine runs a module's
    # tests quicker than that (the limit's own tests set it low)
    "DOMENG_ROOM_CREATE_LIMIT": "100000 per minute",
    # nor make more than 240 public reads a minute, and tests poll the lobby and rooms faster than
    # any page does (the limit's own tests set it)
    "DOMENG_READ_LIMIT": "100000 per minute",
    # nor ask for more than 600 room changes a minute (the limit's own test sets it)
    "DOMENG_WRITE_LIMIT": "100000 per minute",
    # nor send more than 80 chat lines a minute across rooms (the limit's own tests set it)
    "DOMENG_CHAT_LIMIT": "100000 per minute",
    # nor open more than 240 room sockets a minute (the limit's own test sets it)
    "DOMENG_SOCKET_LIMIT": "100000 per minute",
}

PRELOADED = (
    "app.cli",
    "app.web.app",
    "app.web.guard",
    "app.edge.heard",
    "app.edge.refusals",
    "app.web.settings",
    "app.store.database",
    "alembic.command",
    "uvicorn",
    "uvicorn.lifespan.on",
    "uvicorn.loops.auto",
    "uvicorn.protocols.http.auto",
    "uvicorn.protocols.http.h11_impl",
    "uvicorn.protocols.http.httptools_impl",
    "uvicorn.protocols.websockets.websockets_sansio_impl",
    "uvicorn.protocols.websockets.wsproto_impl",
)
"""What the fork server imports once, before any server is forked from it (the modules that
``domeng serve`` imports: the app with FastAPI, SQLAlchemy and Alembic, uvicorn's protocols)."""

FRESH = os.environ.get("DOMENG_TEST_FRESH_SERVERS") == "1"
"""Every `ServerProcess` in a new interpreter (``python -m app.cli serve``), as ``fresh=True``."""

_FORKS = multiprocessing.get_context("forkserver")
_FORKS.set_forkserver_preload(list(PRELOADED))
_forked: list[multiprocessing.process.BaseProcess] = []


def _serve(argv: list[str], env: dict[str, str], log_path: str, nofile: tuple[int, int] | None) -> None:
    """A forked server's body: the environment, working directory, output and open-files limit
    that ``python -m app.cli serve`` would have had, then `app.cli.main`."""
    os.environ.clear()
    os.environ.update(env)
    os.chdir(ROOT)
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    if nofile is not None:
        resource.setrlimit(resource.RLIMIT_NOFILE, nofile)
    from app.cli import main  # noqa: PLC0415 - imported already, by the fork server

    sys.exit(main(argv))


@atexit.register
def _forked_servers_stopped() -> None:
    """A server a test left running is killed when its test process ends (multiprocessing would
    otherwise wait for it)."""
    for process in _forked:
        if process.exitcode is None:
            process.kill()
            process.join(10)


class Forked:
    """A forked server process, seen through the part of `subprocess.Popen` the tests use."""

    def __init__(self, process: multiprocessing.process.BaseProcess) -> None:
        self._process = process
        assert process.pid is not None
        self.pid: int = process.pid

    @property
    def returncode(self) -> int | None:
        """The exit status (minus the signal's number for a process a signal ended), or None."""
        return self._process.exitcode

    def poll(self) -> int | None:
        """`returncode`, without waiting."""
        return self._process.exitcode

    def wait(self, timeout: float | None = None) -> int:
        """The exit status once the process has ended; subprocess.TimeoutExpired after ``timeout`` s."""
        self._process.join(timeout)
        if self._process.exitcode is None:
            raise subprocess.TimeoutExpired("domeng serve", timeout or 0.0)
        return self._process.exitcode

    def send_signal(self, sig: int) -> None:
        """Send ``sig`` to the process unless it has ended."""
        if self._process.exitcode is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        """SIGTERM."""
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        """SIGKILL."""
        self.send_signal(signal.SIGKILL)


_LIMITED = (
    "import os, resource, sys; "
    "resource.setrlimit(resource.RLIMIT_NOFILE, ({soft}, {hard})); "
    "os.execv(sys.executable, [sys.executable, '-m', 'app.cli', *sys.argv[1:]])"
)
"""``python -c`` that sets the open-files limits (soft and hard), then runs ``app.cli`` with the same
arguments."""


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command's name (state first), or None when the
    process is gone."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def lan_address() -> str | None:
    """An IPv4 address of this machine other than a loopback one (``hostname -I``'s first), that a
    browser reaches the server by as from another machine on the LAN, or None."""
    try:
        found = subprocess.run(["hostname", "-I"], check=False, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    for address in found.stdout.split():
        if re.fullmatch(r"\d+\.\d+\.\d+\.\d+", address) and not address.startswith("127."):
            return address
    return None


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists and has not exited (a zombie has)."""
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"


def children_of(pid: int) -> dict[int, int]:
    """The live processes whose parent is ``pid``, each with its niceness (from /proc)."""
    found = {}
    for entry in Path("/proc").iterdir():
        fields = _stat(int(entry.name)) if entry.name.isdigit() else None
        if fields is not None and int(fields[1]) == pid and fields[0] != "Z":
            found[int(entry.name)] = int(fields[16])
    return found


def wait_gone(pids: list[int], timeout: float = 60.0) -> list[int]:
    """Wait (bounded by ``timeout`` seconds) until none of ``pids`` is alive; those still alive."""
    deadline = time.monotonic() + timeout
    while (left := [pid for pid in pids if alive(pid)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


class ServerProcess:
    """``domeng serve`` in a subprocess; ``url`` is its base URL once `start` returns."""

    def __init__(
        self,
        data_dir: Path,
        env: dict[str, str] | None = None,
        database_url: str | None = None,
        nofile: int | tuple[int, int] | None = None,
        *,
        fresh: bool = FRESH,
        host: str | None = None,
        port: int = 0,
    ) -> None:
        """``nofile``: the server's open-files limit (RLIMIT_NOFILE), soft and hard (the server
        raises its soft limit to its hard one at start), or ``(soft, hard)``; else this process's.
        ``fresh``: a new interpreter rather than a fork of the fork server (module docstring).
        ``host``: the address to listen on (`lan_address`, say), else 127.0.0.1. ``port``: the
        port to listen on (a stopped server's, to start it again where its pages are), else a
        free one."""
        self.data_dir = data_dir
        self.nofile = (nofile, nofile) if isinstance(nofile, int) else nofile
        self.host = host
        self.port = port
        self.fresh = fresh
        self.env = {**os.environ, **FAST, **(env or {})}
        if database_url:
            self.env["DOMENG_DATABASE_URL"] = database_url
        self.proc: subprocess.Popen[bytes] | Forked | None = None
        self.url = ""
        self.log_path = data_dir / f"server-{time.monotonic_ns()}.log"

    def start(self, timeout: float = 120.0) -> ServerProcess:
        """Start and wait until ``/readyz`` answers 200; raises RuntimeError with the log if not."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        argv = ["serve", "--port", str(self.port), "--data-dir", str(self.data_dir)]
        if self.host:
            argv += ["--host", self.host]
        if self.fresh:
            command = [sys.executable, "-m", "app.cli", *argv]
            if self.nofile is not None:  # the limit set in the child, which then becomes the server
                command[1:3] = ["-c", _LIMITED.format(soft=self.nofile[0], hard=self.nofile[1])]
            with self.log_path.open("wb") as log:
                self.proc = subprocess.Popen(
                    command, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT
                )
        else:
            self.log_path.touch()
            process = _FORKS.Process(
                target=_serve, args=(argv, self.env, str(self.log_path), self.nofile), name="domeng serve"
            )
            process.start()
            _forked.append(process)
            self.proc = Forked(process)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited {self.proc.returncode}:\n{self.log()}")
            found = re.search(r"running on (http://[\d.]+:\d+)", self.log())
            if found:
                self.url = found.group(1)
                try:
                    if httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200:
                        return self
                except httpx.HTTPError:
                    pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"server not ready after {timeout} s:\n{self.log()}")

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """The started server's process stopped (SIGSTOP: alive, its sockets open, answering
        nothing) for the ``with`` block, and resumed (SIGCONT) when it ends, however it ends."""
        assert self.proc is not None, "the server is not started"
        self.proc.send_signal(signal.SIGSTOP)
        try:
            yield
        finally:
            self.proc.send_signal(signal.SIGCONT)

    def log(self) -> str:
        """Everything the server has printed so far."""
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def children(self) -> list[int]:
        """The live processes whose parent is the server (its bot and review workers, with
        multiprocessing's resource tracker)."""
        assert self.proc is not None
        return list(children_of(self.proc.pid))

    def kill(self) -> None:
        """SIGKILL: the crash of the restart-recovery tests."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        """SIGTERM and wait (SIGKILL after 10 s)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()

    @property
    def ws_base(self) -> str:
        """The ws:// base URL."""
        return self.url.replace("http://", "ws://")

    # -- HTTP helpers --------------------------------------------------------------------------

    def http_from(self, address: str, timeout: float = 30.0) -> httpx.Client:
        """An HTTP client of this server whose connections leave from ``address`` (127.0.0.0/8:
        another client address, for the per-address limits)."""
        return httpx.Client(
            base_url=self.url, timeout=timeout, transport=httpx.HTTPTransport(local_address=address)
        )

    def create_room(self, **body: Any) -> dict[str, Any]:
        """``POST /api/rooms``; returns the reply (code, url, host_token)."""
        reply = httpx.post(f"{self.url}/api/rooms", json=body, timeout=10)
        assert reply.status_code == 201, reply.text
        result: dict[str, Any] = reply.json()
        return result

    def claim(self, code: str, seat: int, name: str) -> httpx.Response:
        """``POST /api/rooms/{code}/seats/{seat}``."""
        return httpx.post(f"{self.url}/api/rooms/{code}/seats/{seat}", json={"name": name}, timeout=10)

    def start_match(self, code: str, host_token: str) -> httpx.Response:
        """``POST /api/rooms/{code}/start`` as the host."""
        return httpx.post(
            f"{self.url}/api/rooms/{code}/start",
            headers={"Authorization": f"Bearer {host_token}"},
            timeout=10,
        )

    def let_spectators_chat(self, code: str, host_token: str) -> None:
        """``PUT /api/rooms/{code}/chat`` ``{"spectators": true}`` as the host: spectators may
        write in the room's chat. Asserts it is done."""
        reply = httpx.put(
            f"{self.url}/api/rooms/{code}/chat",
            json={"spectators": True},
            headers={"Authorization": f"Bearer {host_token}"},
            timeout=10,
        )
        assert reply.status_code == 200, reply.text

    def room(self, code: str) -> dict[str, Any]:
        """``GET /api/rooms/{code}``."""
        result: dict[str, Any] = httpx.get(f"{self.url}/api/rooms/{code}", timeout=10).json()
        return result


class Client:
    """A blocking WebSocket client of one room (a seat with ``token``, or a spectator; the host's
    too with ``host``, the room's host token)."""

    def __init__(
        self,
        server: ServerProcess,
        code: str,
        token: str | None = None,
        hello: bool = True,
        headers: dict[str, str] | None = None,
        host: str | None = None,
        resume: str | None = None,
        source: str | None = None,
        open_timeout: float = 10,
        keepalive: bool = True,
    ) -> None:
        """``headers``: more headers of the opening handshake (say, a trusted proxy's
        ``X-Forwarded-For``); ``resume``: the hello's, an automatic reconnect's (the ``connection``
        of the seat's welcome it follows, docs/protocol.md); ``source``: the address the socket
        leaves from (127.0.0.0/8: another client address, for the per-address limits);
        ``open_timeout``: seconds the handshake may take (a browser sets none); ``keepalive``:
        whether it pings the server (every 20 s, closing the socket 1011 after 20 s without a
        pong) as the websockets client does by default."""
        where = {} if source is None else {"source_address": (source, 0)}
        self.ws: ClientConnection = connect(
            # max_queue=None: the client's reader never pauses, so it always answers the server's pings
            f"{server.ws_base}/ws/rooms/{code}",
            max_size=None,
            max_queue=None,
            open_timeout=open_timeout,
            ping_interval=20 if keepalive else None,
            additional_headers=headers,
            **where,
        ).__enter__()
        self.messages: list[dict[str, Any]] = []
        self.state: dict[str, Any] | None = None
        self.whole = False
        """Whether the last ``state`` was a whole state (connect, sync) rather than an update."""
        if hello:
            hello = {"type": "hello", "protocol": 1, "token": token, "host": host, "resume": resume}
            self.send({k: v for k, v in hello.items() if v is not None or k == "token"})

    def send(self, message: dict[str, Any]) -> None:
        """Send one JSON message."""
        self.ws.send(json.dumps(message))

    def recv(self, timeout: float = 10.0) -> dict[str, Any]:
        """The next message (raises TimeoutError); ``state`` messages update ``self.state``.

        An update's view comes without its ``log``: like the browser client, this one keeps the
        round's log, ``log[:from] + events`` (docs/protocol.md), and fills it in, so every
        ``state`` message it returns holds the whole view. AssertionError when an update skips
        events of the round."""
        message: dict[str, Any] = json.loads(self.ws.recv(timeout=timeout))
        self.messages.append(message)
        if message["type"] == "state":
            view = message["view"]
            self.whole = view is None or "log" in view
            if not self.whole:
                last = None if self.state is None else self.state["view"]
                before = last["log"] if last is not None and last["round"] == view["round"] else []
                assert len(before) >= message["from"], f"update from {message['from']} after {len(before)}"
                view["log"] = before[: message["from"]] + message["events"]
            self.state = message
        return message

    def wait_for(self, predicate: Any, timeout: float = 20.0) -> dict[str, Any]:
        """Receive until ``predicate(message)`` holds; raises TimeoutError."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no matching message")
            message = self.recv(timeout=left)
            if predicate(message):
                return message

    def answer(self, message: dict[str, Any], pick: int = 0) -> bool:
        """If ``message`` is a ``state`` in which this client's seat has a move to make (a tile, two
        lempas or a draw; a lone forced pass is the server's to apply), send its ``pick``-th legal
        action (counted round the list) at the message's version. Whether it sent one."""
        view = message.get("view") if message["type"] == "state" else None
        if not view or view["phase"] != "playing" or not view["legal"]:
            return False
        legal = view["legal"]
        if any("pass" in a for a in legal):
            return False
        action = {k: v for k, v in legal[pick % len(legal)].items() if k != "seat"}
        self.send({"type": "action", "version": message["version"], "action": action})
        return True

    def close(self) -> None:
        """Close the socket."""
        self.ws.close()


def my_turn_to_place(message: dict[str, Any]) -> bool:
    """A ``state`` in which the receiving seat has a tile to place. A lone forced pass does not
    count: the server applies it by itself (no turn timer runs), so the version moves on without
    the client."""
    if message["type"] != "state" or not message["view"] or message["view"]["phase"] != "playing":
        return False
    legal = message["view"]["legal"]
    return bool(legal) and not (len(legal) == 1 and legal[0].get("pass"))


def quoted(tile: str) -> tuple[str, str]:
    """A tile ``"a-b"`` as it may appear quoted in a JSON message, either way round."""
    low, high = tile.split("-")
    return f'"{low}-{high}"', f'"{high}-{low}"'


def play_to_match_over(
    clients: list[Client], spectator: Client, pick: Callable[[int], int] = lambda seat: -1
) -> None:
    """Each seated client answers every turn of its seat, in a thread of its own, with its
    ``pick(seat)``-th legal action (draws included; a forced pass is the server's to apply) until
    the match is over, and the spectator sees it end. AssertionError when the server refused an
    action or a client failed; every wait is bounded (240 s for the match)."""
    done, errors = threading.Event(), []

    def autoplay(seat: int, client: Client) -> None:
        try:
            while not done.is_set():
                message = client.recv(timeout=30)
                if message["type"] == "error":
                    errors.append(f"seat {seat}: the server refused: {message}")
                if message["type"] == "state" and message["view"] and message["view"]["match_over"]:
                    return
                client.answer(message, pick(seat))
        except Exception as error:
            errors.append(f"seat {seat}: {error!r}")
            done.set()

    threads = [threading.Thread(target=autoplay, args=(s, c), daemon=True) for s, c in enumerate(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(240)
    done.set()
    assert not errors, errors
    spectator.wait_for(lambda m: m["type"] == "state" and m["view"] and m["view"]["match_over"], timeout=60)


def closed_with(client: Client) -> tuple[int, str]:
    """Receive until ``client``'s socket closes; its close code and reason."""
    with pytest.raises(ConnectionClosed) as closed:
        client.wait_for(lambda m: False, timeout=10)
    assert closed.value.rcvd is not None
    return closed.value.rcvd.code, closed.value.rcvd.reason


def live(client: Client) -> None:
    """``client``'s socket is open and answered."""
    client.send({"type": "ping"})
    client.wait_for(lambda m: m["type"] == "pong")
