"""Failed admin logins are throttled without a lockout strangers can set off (app.admin.auth,
docs/admin.md "Access"): strangers failing from many addresses spend the all-addresses limit for
every unknown client, while a browser that signed in before (its device cookie) still signs in;
device cookies are signed with the secret, expire, and have their own count."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx

from app.admin.auth import DEVICE_COOKIE, DEVICE_TTL_S, AdminAuth, AdminError
from app.web.logs import Redactor
from app.web.settings import Settings
from tests.adminkit import SECRET
from tests.serverkit import ServerProcess


def _login(server: ServerProcess, address: str, secret: str, device: str | None = None) -> httpx.Response:
    # the device cookie is Secure, which Python's cookie jar never sends over http://: a plain header
    headers = {"Cookie": f"{DEVICE_COOKIE}={device}"} if device else {}
    with server.http_from(address, timeout=10) as http:
        return http.post("/api/admin/login", json={"secret": secret}, headers=headers)


def test_strangers_failing_everywhere_do_not_lock_out_the_admins_browser(tmp_path: Path) -> None:
    env = {
        "DOMENG_ADMIN_TOKEN": SECRET,
        "DOMENG_ADMIN_LOGIN_LIMIT": "3 per minute",
        "DOMENG_ADMIN_LOGIN_LIMIT_ALL": "6 per minute",
    }
    server = ServerProcess(tmp_path, env).start()
    try:
        signed_in = _login(server, "127.0.3.100", SECRET)
        assert signed_in.status_code == 200, signed_in.text
        device = signed_in.cookies[DEVICE_COOKIE]
        assert f"{DEVICE_COOKIE}=" in signed_in.headers["set-cookie"]

        guesses = [_login(server, f"127.0.3.{i + 1}", f"guess-{i}-{SECRET}").status_code for i in range(8)]
        assert guesses == [401] * 6 + [429] * 2, guesses  # many addresses guessing are still slowed down
        stranger = _login(server, "127.0.3.50", SECRET)
        assert stranger.status_code == 429  # an unknown client learns nothing, the right secret included
        nonce, issued, mac = device.split(".")
        forged = f"{nonce}.{issued}.{'0' * len(mac)}"
        assert _login(server, "127.0.3.51", SECRET, forged).status_code == 429

        # the admin's browser, even from an address it never used, signs in, and as a bearer too
        again = _login(server, "127.0.3.52", SECRET, device)
        assert again.status_code == 200, again.text
        with server.http_from("127.0.3.53", timeout=10) as http:
            headers = {"Authorization": f"Bearer {SECRET}", "Cookie": f"{DEVICE_COOKIE}={device}"}
            assert http.get("/api/admin/session", headers=headers).status_code == 200

        # a known device has its own count; over it, it is an unknown client again (here: refused)
        fresh = again.cookies[DEVICE_COOKIE]
        wrong = [_login(server, "127.0.3.54", f"nope-{SECRET}", fresh).status_code for _ in range(3)]
        assert wrong == [401] * 3
        assert _login(server, "127.0.3.54", SECRET, fresh).status_code == 429
        assert _login(server, "127.0.3.55", SECRET, device).status_code == 200  # other devices unharmed
    finally:
        server.stop()


def test_a_device_cookie_is_signed_with_the_secret_and_expires() -> None:
    auth = AdminAuth(Settings(admin_token=SECRET))
    device = auth.new_device()
    nonce = device.split(".")[0]
    assert auth.known_device(device) == nonce
    assert auth.known_device(auth.new_device(now=time.time() - DEVICE_TTL_S - 1)) is None
    assert auth.known_device(auth.new_device(now=time.time() + 3600)) is None  # issued in the future
    for broken in (
        None,
        "",
        "x",
        f"{nonce}..",
        f"{nonce}.12.34",
        device + "0",
        device.replace(".", "!"),
        f"{nonce}.\u00b2.ab",
        f"{nonce}.{'9' * 5000}.ab",
        f"{nonce}.12.\u00e9",
    ):
        assert auth.known_device(broken) is None, broken
    other_secret = AdminAuth(Settings(admin_token=SECRET[::-1] + "Q"))
    assert other_secret.known_device(device) is None  # a new secret voids every device cookie


def test_a_known_device_is_not_held_by_the_all_addresses_limit_in_process() -> None:
    settings = Settings(
        admin_token=SECRET, admin_login_limit="2 per minute", admin_login_limit_all="2 per minute"
    )
    auth = AdminAuth(settings)

    async def main() -> None:
        device = (await auth.login(SECRET, "10.0.0.9")).device
        for address in ("10.0.0.1", "10.0.0.2"):
            try:
                await auth.login("wrong-" + SECRET, address)
            except AdminError as error:
                assert error.code == "wrong_secret"
        try:
            await auth.login(SECRET, "10.0.0.3")
            raise AssertionError("an unknown client went past the spent all-addresses limit")
        except AdminError as error:
            assert (error.code, error.status) == ("too_many_attempts", 429)
            assert int(error.headers["Retry-After"]) >= 1
        assert (await auth.login(SECRET, "10.0.0.1", device)).token

    asyncio.run(main())


def test_the_device_cookie_is_redacted_from_log_lines() -> None:
    line = f"cookie: {DEVICE_COOKIE}=abc.1700000000.ff00; other=1"
    assert Redactor()(line) == f"cookie: {DEVICE_COOKIE}=[redacted]; other=1"
