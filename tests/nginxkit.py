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
from collections.abc import Sequence
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
) -> str:
    """deploy/nginx.conf for a run under ``prefix``: listening on 127.0.0.1:``port``, proxying to
    ``upstreams`` (``host:port`` each), logs and temporary files in ``prefix``. ``per_address``
    replaces the per-address connection cap (a load test's clients all share 127.0.0.1);
    ``workers`` the worker processes; ``room_hashing=False`` comments out ``hash $room
    consistent`` (round robin for every request). ValueError when a marked line is missing."""
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
    if "        hash $room consistent;" not in text:
        raise ValueError("deploy/nginx.conf has no 'hash $room consistent;' line")
    if not room_hashing:
        text = text.replace("        hash $room consistent;", "        # hash $room consistent;")
    if workers is not None:
        text = text.replace("worker_processes auto;", f"worker_processes {workers};")
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
    ) -> None:
        """The keyword arguments are `render`'s."""
        self.prefix = prefix
        self.port = free_port()
        self.config = prefix / "nginx.conf"
        self.upstreams = list(upstreams)
        self.per_address, self.workers, self.room_hashing = per_address, workers, room_hashing
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
