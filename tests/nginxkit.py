"""nginx from Debian's package in front of real server processes, on 127.0.0.1, with no root path
and no container: the production config (deploy/nginx.conf) with the lines it marks
``# topology:`` replaced by a temporary prefix's paths and free ports. Used by
tests/test_topology.py and benchmarks/load.py ``--processes``.
"""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "deploy" / "nginx.conf"
NGINX = shutil.which("nginx") or next(
    (path for path in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if Path(path).is_file()), None
)
MIME_TYPES = Path("/etc/nginx/mime.types")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (the OS's pick)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def render(
    upstreams: Sequence[str],
    port: int,
    prefix: Path,
    *,
    per_address: int | None = None,
    workers: int | None = None,
    room_hashing: bool = True,
    access_log: bool = False,
) -> str:
    """deploy/nginx.conf for a run under ``prefix``: listening on 127.0.0.1:``port``, proxying to
    ``upstreams`` (``host:port`` each), logs and temporary files in ``prefix``. ``per_address``
    replaces the per-address connection cap and lifts the per-address request rates (``limit_req``:
    a load test's clients all share 127.0.0.1);
    ``workers`` the worker processes; ``room_hashing=False`` comments out ``hash $room
    consistent`` (round robin for every request); ``access_log`` writes one line per request to
    ``prefix/access.log`` (`ACCESS_FORMAT`: its status and every process nginx tried, in order).
    ValueError when a marked line is missing."""
    text = CONFIG.read_text()
    temp = "\n".join(
        f"    {kind}_temp_path {prefix / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    mime = f"include {MIME_TYPES};" if MIME_TYPES.is_file() else "default_type application/octet-stream;"
    replacements = {
        "error log": f"error_log {prefix / 'error.log'} warn;\npid {prefix / 'nginx.pid'};",
        "mime types": f"{mime}\n{temp}",
        "listen": f"listen 127.0.0.1:{port};",
    }
    for mark, line in replacements.items():
        pattern = re.compile(rf"^[^\n#]*# topology: {mark}$", re.MULTILINE)
        if not pattern.search(text):
            raise ValueError(f"deploy/nginx.conf has no line marked '# topology: {mark}'")
        text = pattern.sub(lambda _: line, text)  # noqa: B023 - used at once
    text = _servers(text, upstreams)
    if per_address is not None:
        text = text.replace("limit_conn per_address 64;", f"limit_conn per_address {per_address};")
        rates = re.compile(r"^ *limit_req zone=\S+ burst=\d+ nodelay;\n", re.MULTILINE)
        if not rates.search(text):
            raise ValueError("deploy/nginx.conf has no 'limit_req zone=… burst=… nodelay;' line")
        text = rates.sub("", text)
    if "        hash $room consistent;" not in text:
        raise ValueError("deploy/nginx.conf has no 'hash $room consistent;' line")
    if not room_hashing:
        text = text.replace("        hash $room consistent;", "        # hash $room consistent;")
    if workers is not None:
        text = text.replace("worker_processes auto;", f"worker_processes {workers};")
    if access_log:
        if "    access_log off;\n" not in text:
            raise ValueError("deploy/nginx.conf has no 'access_log off;' line")
        logged = (
            f"    log_format topology '{ACCESS_FORMAT}';\n    access_log {prefix / 'access.log'} topology;\n"
        )
        text = text.replace("    access_log off;\n", logged)
    return text


def _servers(text: str, upstreams: Sequence[str]) -> str:
    """``text`` with its line marked ``# topology: upstream servers`` (``server app:8000
    PARAMETERS;``) made one line per address of ``upstreams``, each with the file's own parameters
    (``max_fails=0``): the tests run the deployed choice, not one of their own."""
    pattern = re.compile(r"^( *)server \S+((?: [^;#\n]+)?);  # topology: upstream servers$", re.MULTILINE)
    found = pattern.search(text)
    if found is None:
        raise ValueError("deploy/nginx.conf has no line marked '# topology: upstream servers'")
    indent, parameters = found.groups()
    lines = "\n".join(f"{indent}server {up}{parameters};" for up in upstreams)
    return text[: found.start()] + lines + text[found.end() :]


ACCESS_FORMAT = "$status $request_method $uri [$upstream_addr] [$upstream_status]"
"""An access log line of `render` with ``access_log``: the status nginx answered, the request, and
the processes it tried in turn (``127.0.0.1:8001, 127.0.0.1:8002``: the first is the one the
room's hash named) with what each answered."""


@dataclass(frozen=True, slots=True)
class Logged:
    """One request of nginx's access log (`ACCESS_FORMAT`)."""

    status: int
    method: str
    uri: str
    tried: tuple[str, ...]
    """The upstreams tried, in order (``host:port``; empty when nginx answered by itself)."""
    answers: tuple[str, ...]
    """What each answered (``503``, ``502``: refused, ``101``…)."""


class Nginx:
    """Debian's nginx in the foreground (``daemon off``) under a temporary prefix, as this user."""

    def __init__(
        self,
        prefix: Path,
        upstreams: Sequence[str],
        *,
        per_address: int | None = None,
        workers: int | None = None,
        room_hashing: bool = True,
        access_log: bool = False,
    ) -> None:
        """The keyword arguments are `render`'s."""
        self.prefix = prefix
        self.port = free_port()
        self.config = prefix / "nginx.conf"
        self.upstreams = list(upstreams)
        self.per_address, self.workers, self.room_hashing = per_address, workers, room_hashing
        self.access_log = access_log
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_base(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def test_config(self) -> subprocess.CompletedProcess[str]:
        """``nginx -t`` on the rendered config."""
        self._write()
        return subprocess.run(self._command("-t"), capture_output=True, text=True, timeout=30, check=False)

    def start(self, timeout: float = 30.0) -> Nginx:
        """Start and wait until it answers on its port; RuntimeError with its log if not."""
        self._write()
        log = (self.prefix / "stderr.log").open("wb")
        self.proc = subprocess.Popen(self._command(), stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"nginx exited {self.proc.returncode}:\n{self.log()}")
            try:
                httpx.get(f"{self.url}/healthz", timeout=2)
                return self
            except httpx.TransportError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"nginx not answering after {timeout} s:\n{self.log()}")

    def reload(self, upstreams: Sequence[str], timeout: float = 30.0) -> None:
        """Render the config again with ``upstreams`` and ``nginx -s reload``, as an operator does
        after adding or removing a process; return once every worker of the old config has stopped
        taking connections (gone, or "shutting down": an old worker keeps its open sockets, a
        WebSocket's to the process it chose, until they close). RuntimeError if not in time."""
        assert self.proc is not None and self.proc.poll() is None, "nginx is not running"
        old = set(self.pids()) - {self.proc.pid}
        self.upstreams = list(upstreams)
        self._write()
        signalled = subprocess.run(
            self._command("-s", "reload"), capture_output=True, text=True, timeout=30, check=False
        )
        if signalled.returncode != 0:
            raise RuntimeError(f"nginx -s reload failed:\n{signalled.stderr}\n{self.log()}")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            workers = set(self.pids()) - {self.proc.pid}
            if workers - old and all(_shutting_down(pid) for pid in workers & old):
                return
            time.sleep(0.05)
        raise RuntimeError(f"nginx did not reload within {timeout} s:\n{self.log()}")

    def requests(self) -> list[Logged]:
        """The requests of the access log so far (``access_log=True``), in the order they ended (a
        WebSocket's when it closed)."""
        path = self.prefix / "access.log"
        found = []
        for line in path.read_text().splitlines() if path.exists() else []:
            head, tried, answers = line.split(" [", 2)
            status, method, uri = head.split(" ", 2)
            found.append(
                Logged(int(status), method, uri, _listed(tried.rstrip("] ")), _listed(answers.rstrip("]")))
            )
        return found

    def requests_once(
        self, select: Callable[[Logged], bool], count: int, timeout: float = 15.0
    ) -> list[Logged]:
        """The `requests` that ``select`` picks, as soon as at least ``count`` of them are logged
        (looked at every 20 ms): nginx writes a request's line after it has answered, so a client
        can hold its answer before the line is written. Raises AssertionError with what was logged
        if fewer than ``count`` are within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while len(picked := [r for r in self.requests() if select(r)]) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"nginx logged {len(picked)} of the {count} requests awaited: {picked}")
            time.sleep(0.02)
        return picked

    def pids(self) -> list[int]:
        """The master's and its workers' process ids (from /proc)."""
        if self.proc is None or self.proc.poll() is not None:
            return []
        found = [self.proc.pid]
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                except (OSError, IndexError):
                    continue
                if int(fields[1]) == self.proc.pid:
                    found.append(int(entry.name))
        return found

    def log(self) -> str:
        """nginx's error log and what it printed."""
        parts = [self.prefix / "stderr.log", self.prefix / "error.log"]
        return "\n".join(p.read_text(errors="replace") for p in parts if p.exists())

    def stop(self) -> None:
        """SIGQUIT (graceful), then SIGKILL after 10 s."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()  # SIGTERM: fast shutdown
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def _write(self) -> None:
        self.prefix.mkdir(parents=True, exist_ok=True)
        self.config.write_text(
            render(
                self.upstreams,
                self.port,
                self.prefix,
                per_address=self.per_address,
                workers=self.workers,
                room_hashing=self.room_hashing,
                access_log=self.access_log,
            )
        )

    def _command(self, *extra: str) -> list[str]:
        assert NGINX is not None, "nginx is not installed"
        # -e: the error log before the config is read (Debian's default is under /var/log)
        return [
            NGINX,
            "-p",
            str(self.prefix),
            "-c",
            str(self.config),
            "-e",
            str(self.prefix / "error.log"),
            "-g",
            "daemon off;",
            *extra,
        ]


def _listed(field: str) -> tuple[str, ...]:
    """``$upstream_addr`` or ``$upstream_status`` as a tuple (``-``, nothing: empty). A request
    passed to the next process lists them with ", " (and " : " after an internal redirect)."""
    return tuple(part for part in re.split(r"\s*[,:]\s+", field.strip()) if part and part != "-")


def _shutting_down(pid: int) -> bool:
    """Whether nginx worker ``pid`` is gone or has stopped taking connections (its title says
    so once it closed its listening sockets, on a reload)."""
    try:
        title = (Path("/proc") / str(pid) / "cmdline").read_bytes()
    except OSError:
        return True
    return not title or b"shutting down" in title
