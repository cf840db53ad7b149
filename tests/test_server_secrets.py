"""Secrets stay secret and the edges hold (issue 13, "Smaller findings"), on real processes:
no seat token, host token or admin secret in any log line at any level (the WebSocket library's
debug frames included); redirects never echo the Host header; weak admin secrets are refused at
start-up without being echoed; the secret can come from a file; the admin login limit holds
across addresses; the Origin check compares the scheme, and a browser's request that says
another site sent it (Sec-Fetch-Site) is refused without an Origin too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from starlette.requests import Request

from app.admin.auth import AdminError, check_origin
from tests.serverkit import ROOT, Client, ServerProcess

SECRET = "Xq7-vR2m!Lk9#pT4wZs8"  # 20 characters, 20 distinct


def test_no_token_or_secret_reaches_the_log_even_at_debug_level(tmp_path: Path) -> None:
    server = ServerProcess(
        tmp_path, {"DOMENG_LOG_LEVEL": "debug", "DOMENG_ADMIN_TOKEN": SECRET, "DOMENG_LOG_JSON": "true"}
    ).start()
    try:
        room = server.create_room(variant="kozel", seats=2, bots=[None, None])
        code, host = room["code"], room["host_token"]
        seat_token = server.claim(code, 0, "Ana").json()["token"]
        other_token = server.claim(code, 1, "Budi").json()["token"]
        player = Client(server, code, seat_token)
        player.wait_for(lambda m: m["type"] == "state")
        assert server.start_match(code, host).is_success
        player.wait_for(lambda m: m["type"] == "state" and m["room"]["status"] == "playing")
        budi = Client(server, code, other_token)
        budi.wait_for(lambda m: m["type"] == "state")
        budi.close()
        wrong = Client(server, code, "not-a-token-" + seat_token[::-1])
        with pytest.raises(Exception):  # noqa: B017 - the socket closes (4004) on a bad token
            wrong.wait_for(lambda m: False, timeout=10)
        player.close()
        with httpx.Client(base_url=server.url, timeout=10) as http:
            assert http.get("/api/admin/matches", headers={"Authorization": f"Bearer {SECRET}"}).is_success
            login = http.post("/api/admin/login", json={"secret": SECRET})
            assert login.is_success
            cookie = login.cookies.get("__Host-domeng_admin") or ""
            http.post("/api/admin/login", json={"secret": SECRET[::-1]})  # a wrong guess
            http.put(
                f"/api/rooms/{code}/seats/1/bot",
                json={"level": "greedy"},
                headers={"Authorization": f"Bearer {host}"},
            )
    finally:
        server.stop()
    log = server.log()
    said = events(log)
    # the WebSocket library's debug frames were written, each hello with its token taken out
    assert said.count("< TEXT") >= 3 and said.count('"token": "[redacted]"') >= 3
    for secret in (SECRET, host, seat_token, other_token, cookie):
        assert not secret or secret not in log, "a secret reached the log"
    assert seat_token[::-1] not in log


def events(log: str) -> str:
    """The ``event`` of every line of a JSON ``log``, a line each; every line must be one JSON
    object with a level and an ISO 8601 UTC time (structlog's events and the standard library's
    records, uvicorn's and the WebSocket library's, alike: `configure_logging`)."""
    said = []
    for line in log.splitlines():
        entry = json.loads(line)
        assert entry["level"] and entry["timestamp"].endswith("Z"), line
        said.append(entry["event"])
    return "\n".join(said)


def _pieces(secret: str, size: int = 12) -> list[str]:
    """Every ``size``-character piece of ``secret``: a log line holding any of them holds part of it."""
    return [secret[i : i + size] for i in range(len(secret) - size + 1)]


def test_no_part_of_a_host_token_or_spectator_key_reaches_the_debug_log(tmp_path: Path) -> None:
    """The WebSocket library logs a long frame at debug level by its start and end, which cut the
    browser's hello (``host``, the host token, or ``watcher``, a spectator's key, last) from the
    field's name: the last 22 characters of the token were written. The frame is redacted before."""
    server = ServerProcess(tmp_path, {"DOMENG_LOG_LEVEL": "debug", "DOMENG_LOG_JSON": "true"}).start()
    try:
        room = server.create_room(variant="kozel", seats=2, bots=[None, None])
        code, host = room["code"], room["host_token"]
        # {"type": "hello", "protocol": 1, "token": null, "host": "…"}, the host token last
        hosting = Client(server, code, host=host)
        hosting.wait_for(lambda m: m["type"] == "state")
        spectator = Client(server, code)
        key = spectator.wait_for(lambda m: m["type"] == "welcome")["watcher"]
        spectator.close()
        again = Client(server, code, hello=False)  # the same browser later, as the page sends it
        again.send({"type": "hello", "protocol": 1, "token": None, "watcher": key})
        assert again.wait_for(lambda m: m["type"] == "welcome")["watcher"] == key
        again.close()
        hosting.close()
    finally:
        server.stop()
    log = server.log()
    said = events(log)
    assert said.count("< TEXT") >= 3  # the frames were written
    for secret in (host, key):
        assert not [piece for piece in _pieces(secret) if piece in log], "part of a secret reached the log"
    assert said.count('"host": "[redacted]"') >= 1


def test_redirects_never_echo_the_host_header(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, {"DOMENG_ALLOWED_HOSTS": "*"}).start()  # any Host is answered
    try:
        redirected = []
        for path in ("/api/rooms/", "/admin/", "/admin/matches/", "//evil.example/api/rooms/"):
            reply = httpx.get(f"{server.url}{path}", headers={"Host": "evil.example"}, timeout=10)
            location = reply.headers.get("location", "")
            assert "evil.example" not in location, (path, location)
            if reply.is_redirect:
                assert location.startswith("/") and not location.startswith("//"), (path, location)
                redirected.append(location)
        assert "/api/rooms" in redirected  # the trailing-slash redirect, made relative
    finally:
        server.stop()


def _serve(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``domeng serve`` expected to refuse its configuration at once."""
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "serve", "--port", "0", "--data-dir", str(tmp_path)],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    "weak",
    ["aaaaaaaaaaaaaaaaaaaaaaaa", "abababababababababab", "changeme-changeme-changeme", "0123456789abcdef"],
)
def test_a_weak_admin_secret_is_refused_at_start_up_without_echoing_it(tmp_path: Path, weak: str) -> None:
    done = _serve(tmp_path, {"DOMENG_ADMIN_TOKEN": weak})
    assert done.returncode != 0
    said = done.stdout + done.stderr
    assert "admin" in said.lower() and "weak" in said.lower()
    assert weak not in said


def test_the_admin_secret_can_come_from_a_file(tmp_path: Path) -> None:
    secret_file = tmp_path / "admin-secret"
    secret_file.write_text(SECRET + "\n")
    secret_file.chmod(0o600)
    server = ServerProcess(tmp_path / "data", {"DOMENG_ADMIN_TOKEN_FILE": str(secret_file)}).start()
    try:
        reply = httpx.get(f"{server.url}/api/admin/session", headers={"Authorization": f"Bearer {SECRET}"})
        assert reply.is_success, reply.text
    finally:
        server.stop()
    missing = _serve(tmp_path, {"DOMENG_ADMIN_TOKEN_FILE": str(tmp_path / "nowhere")})
    assert missing.returncode != 0 and "DOMENG_ADMIN_TOKEN_FILE" in missing.stdout + missing.stderr


def test_admin_login_limit_holds_across_addresses(tmp_path: Path) -> None:
    env = {
        "DOMENG_ADMIN_TOKEN": SECRET,
        "DOMENG_ADMIN_LOGIN_LIMIT": "3 per minute",
        "DOMENG_ADMIN_LOGIN_LIMIT_ALL": "6 per minute",
    }
    server = ServerProcess(tmp_path, env).start()
    try:
        statuses = []
        for i in range(8):  # one wrong guess from each of eight addresses
            with server.http_from(f"127.0.2.{i + 1}", timeout=10) as http:
                guess = http.post("/api/admin/login", json={"secret": f"guess-{i}-{SECRET}"})
                statuses.append(guess.status_code)
        assert statuses[:6] == [401] * 6 and statuses[6:] == [429, 429], statuses
    finally:
        server.stop()


def test_the_origin_check_compares_the_scheme(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, {"DOMENG_ADMIN_TOKEN": SECRET}).start()
    try:
        host = server.url.split("://", 1)[1]
        bearer = {"Authorization": f"Bearer {SECRET}"}
        other_scheme = httpx.post(
            f"{server.url}/api/admin/rooms/nope/close", headers={**bearer, "Origin": f"https://{host}"}
        )
        assert other_scheme.status_code == 403 and other_scheme.json()["detail"]["code"] == "cross_origin"
        same = httpx.post(
            f"{server.url}/api/admin/rooms/nope/close", headers={**bearer, "Origin": f"http://{host}"}
        )
        assert same.status_code == 404, same.text
    finally:
        server.stop()


def _request(headers: dict[str, str]) -> Request:
    """A POST to the admin API as the server sees it, sent to ``127.0.0.1:8000`` over http."""
    raw = [(k.lower().encode(), v.encode()) for k, v in {"host": "127.0.0.1:8000", **headers}.items()]
    scope = {"type": "http", "method": "POST", "scheme": "http", "path": "/api/admin/rooms/x/close"}
    return Request({**scope, "headers": raw, "query_string": b"", "server": ("127.0.0.1", 8000)})


@pytest.mark.parametrize(
    "headers",
    [
        {"Sec-Fetch-Site": "cross-site"},  # a form posted from another site's page: no Origin
        {"Sec-Fetch-Site": "same-site"},  # a sibling host of the same site is another origin still
        {"Sec-Fetch-Site": "Cross-Site "},
        {"Sec-Fetch-Site": "cross-site", "Origin": "http://127.0.0.1:8000"},
        {"Origin": "http://evil.example"},
    ],
)
def test_a_request_a_browser_says_another_site_sent_is_refused(headers: dict[str, str]) -> None:
    with pytest.raises(AdminError) as refused:
        check_origin(_request(headers))
    assert refused.value.code == "cross_origin" and refused.value.status == 403


@pytest.mark.parametrize(
    "headers",
    [
        {},  # curl or a script with the secret: neither header
        {"Sec-Fetch-Site": "same-origin"},
        {"Sec-Fetch-Site": "none"},  # the user's own doing (typed, a bookmark)
        {"Sec-Fetch-Site": "same-origin", "Origin": "http://127.0.0.1:8000"},
    ],
)
def test_a_same_origin_request_or_a_script_passes_the_origin_check(headers: dict[str, str]) -> None:
    check_origin(_request(headers))


def test_a_cross_site_post_without_origin_is_refused_by_the_server(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path, {"DOMENG_ADMIN_TOKEN": SECRET}).start()
    try:
        bearer = {"Authorization": f"Bearer {SECRET}"}
        close = f"{server.url}/api/admin/rooms/nope/close"
        login = f"{server.url}/api/admin/login"
        for url, headers in ((close, bearer), (login, {})):
            foreign = httpx.post(
                url, json={"secret": SECRET}, headers={**headers, "Sec-Fetch-Site": "cross-site"}
            )
            assert foreign.status_code == 403 and foreign.json()["detail"]["code"] == "cross_origin", (
                foreign.text
            )
        assert httpx.post(close, headers={**bearer, "Sec-Fetch-Site": "same-origin"}).status_code == 404
        assert httpx.post(close, headers=bearer).status_code == 404  # a script without either header
    finally:
        server.stop()
