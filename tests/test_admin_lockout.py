"""Failed admin logins are throttled without a lockout strangers can set off (app.admin.auth,
docs/admin.md "Access"): strangers failing from many addresses spend the all-addresses limit for
every unknown client, while a browser that signed in before (its device cookie) still signs in;
device cookies are signed with the secret, expire, and have their own count. A burst of guesses
fired at once is judged no more often than the limits allow, in one process and across processes
sharing Redis (DOMENG_TEST_REDIS_URL; skipped without it); an IPv6 client is counted by its /64,
and all the /64s of its /48 together at `SITE_SHARE` times the limit."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis

from app.addresses import SITE_SHARE, counted_address
from app.admin.auth import DEVICE_COOKIE, DEVICE_TTL_S, AdminAuth, AdminError
from app.web.logs import Redactor
from app.web.ratelimit import MemoryAttempts, RateLimits
from app.web.settings import Settings
from tests.adminkit import SECRET
from tests.clusterkit import key_prefix, need_redis
from tests.serverkit import ServerProcess

BURST = 50
"""Wrong guesses fired at once."""


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
            wait = int(error.headers["Retry-After"])
            assert wait >= 1
            # the sign-in form shows the message: it says how long to wait, as Retry-After does
            words = f"{wait} s" if wait < 60 else "1 min"  # a window of a minute
            assert error.message.endswith(f"; try again in {words}"), error.message
        assert (await auth.login(SECRET, "10.0.0.1", device)).token

    asyncio.run(main())


def test_the_device_cookie_is_redacted_from_log_lines() -> None:
    line = f"cookie: {DEVICE_COOKIE}=abc.1700000000.ff00; other=1"
    assert Redactor()(line) == f"cookie: {DEVICE_COOKIE}=[redacted]; other=1"


# -- a burst of guesses at once --------------------------------------------------------------------


@contextlib.contextmanager
def _servers(tmp_path: Path, shared: bool, env: dict[str, str]) -> Iterator[list[ServerProcess]]:
    """One server process (its counts in its memory) or, ``shared``, two on one Redis (a key
    prefix of their own, its keys deleted after)."""
    prefix = key_prefix()
    if shared:
        env = {
            **env,
            "DOMENG_REDIS_URL": need_redis(),
            "DOMENG_REDIS_PREFIX": prefix,
            "DOMENG_BOT_WORKERS": "1",
        }
    servers = [ServerProcess(tmp_path / name, env) for name in ("ab" if shared else "a")]
    try:
        for server in servers:
            server.start()
        yield servers
    finally:
        for server in servers:
            server.stop()
        if shared:
            with redis.Redis.from_url(need_redis()) as client:
                for key in client.scan_iter(f"{prefix}:*"):
                    client.delete(key)


async def _at_once(servers: list[ServerProcess], address: str, bodies: list[dict[str, str]]) -> list[int]:
    """POST each of ``bodies`` to ``/api/admin/login``, all at once, from ``address``, spread over
    ``servers``; their statuses. Each request has its connection open before any is sent, so the
    burst is not spaced out by connecting."""
    clients = [
        httpx.AsyncClient(
            base_url=server.url,
            timeout=60,
            transport=httpx.AsyncHTTPTransport(
                local_address=address, limits=httpx.Limits(max_connections=None)
            ),
        )
        for server in servers
    ]
    try:
        mine = [clients[i % len(clients)] for i in range(len(bodies))]
        await asyncio.gather(*(client.get("/healthz") for client in mine))  # one connection each
        go = asyncio.Event()

        async def post(client: httpx.AsyncClient, body: dict[str, str]) -> int:
            await go.wait()
            return (await client.post("/api/admin/login", json=body)).status_code

        tasks = [asyncio.create_task(post(client, body)) for client, body in zip(mine, bodies, strict=True)]
        await asyncio.sleep(0)  # every task waits at the gate
        go.set()
        return list(await asyncio.gather(*tasks))
    finally:
        for client in clients:
            await client.aclose()


@pytest.mark.parametrize("shared", [False, True], ids=["one-process", "two-processes-redis"])
def test_a_burst_of_wrong_guesses_at_once_is_judged_no_more_often_than_the_limit(
    tmp_path: Path, shared: bool
) -> None:
    env = {
        "DOMENG_ADMIN_TOKEN": SECRET,
        "DOMENG_ADMIN_LOGIN_LIMIT": "5 per minute",
        "DOMENG_ADMIN_LOGIN_LIMIT_ALL": "8 per minute",
    }
    with _servers(tmp_path, shared, env) as servers:
        guesses = [{"secret": f"guess-{i}-{SECRET}"} for i in range(BURST)]
        statuses = asyncio.run(_at_once(servers, "127.0.4.1", guesses))
        assert Counter(statuses) == {401: 5, 429: BURST - 5}, Counter(statuses)
        # another address, at once: only the 3 attempts left for all unknown clients together
        others = asyncio.run(_at_once(servers, "127.0.4.2", guesses[:10]))
        assert Counter(others) == {401: 3, 429: 7}, Counter(others)


@pytest.mark.parametrize("shared", [False, True], ids=["memory", "redis"])
def test_concurrent_attempts_in_one_process_are_counted_before_they_are_judged(shared: bool) -> None:
    """Through `AdminAuth` itself, on the event loop: wrong guesses at once from one address, then
    with a device cookie (its own count, then the address's); right secrets are not counted."""
    settings = Settings(
        admin_token=SECRET, admin_login_limit="5 per minute", admin_login_limit_all="1000 per minute"
    )
    prefix = key_prefix()
    # what is tested is that every guess is judged and counted at once, not how fast: on a busy
    # machine 50 new Redis connections at once can take longer than the 1 s bound (then a 503)
    limiter = RateLimits(need_redis() if shared else None, prefix=prefix, timeout_s=30)
    auth = AdminAuth(settings, limiter=limiter)

    async def outcome(secret: str, address: str, device: str | None = None) -> str:
        try:
            await auth.login(secret, address, device)
        except AdminError as error:
            return error.code
        return "signed_in"

    async def main() -> None:
        try:
            device = (await auth.login(SECRET, "10.0.0.9")).device
            rights = await asyncio.gather(*(outcome(SECRET, "10.0.0.1") for _ in range(20)))
            assert rights == ["signed_in"] * 20  # never counted: the address has all its guesses left
            wrong = await asyncio.gather(*(outcome(f"nope-{i}", "10.0.0.1") for i in range(BURST)))
            assert Counter(wrong) == {"wrong_secret": 5, "too_many_attempts": BURST - 5}, Counter(wrong)
            # a known device: its own 5, then as an unknown client from a fresh address, 5 more
            devices = await asyncio.gather(*(outcome(f"nope-{i}", "10.0.0.2", device) for i in range(BURST)))
            assert Counter(devices) == {"wrong_secret": 10, "too_many_attempts": BURST - 10}, Counter(devices)
        finally:
            await limiter.close()

    try:
        asyncio.run(main())
    finally:
        if shared:
            with redis.Redis.from_url(need_redis()) as client:
                for key in client.scan_iter(f"{prefix}:*"):
                    client.delete(key)


def test_in_memory_counts_whose_window_has_passed_are_dropped_once_many() -> None:
    now = [1000.0]
    attempts = MemoryAttempts(clock=lambda: now[0])
    hour, minute = 3_600_000, 60_000
    assert attempts.take([("all", 2, hour)], failed=True) is None
    for i in range(5000):  # a fresh address every half second
        assert attempts.take([(f"address-{i}", 2, minute)], failed=True) is None
        now[0] += 0.5
    assert len(attempts.held) <= 2 * attempts.sweep_at
    assert attempts.held["all"][1]  # the hour's count is kept while its window lasts
    now[0] = 1000.0 + 3599
    assert attempts.take([("all", 2, hour)], failed=True) is None
    assert attempts.take([("all", 2, hour)], failed=True) == (0, 1000)  # its first leaves in 1 s


# -- IPv6: one client is a /64, one site a /48 -----------------------------------------------------


def test_counted_address_keys_ipv6_by_its_64_and_mapped_ipv4_as_ipv4() -> None:
    assert counted_address("203.0.113.9") == "203.0.113.9"
    assert counted_address("2001:db8:1:2::1") == "2001:db8:1:2::/64"
    assert counted_address("2001:0DB8:0001:0002:ffff:1:2:3") == "2001:db8:1:2::/64"
    assert counted_address("2001:db8:1:3::1") == "2001:db8:1:3::/64"
    assert counted_address("::ffff:203.0.113.9") == "203.0.113.9"
    assert counted_address("fe80::1%eth0") == "fe80::/64"
    assert counted_address("::1") == "::/64"
    assert counted_address("unknown") == "unknown"


def test_an_ipv6_client_is_counted_by_its_64_behind_a_trusted_proxy(tmp_path: Path) -> None:
    env = {
        "DOMENG_ADMIN_TOKEN": SECRET,
        "DOMENG_ADMIN_LOGIN_LIMIT": "3 per minute",
        "DOMENG_FORWARDED_ALLOW_IPS": "127.0.0.1",  # a reverse proxy on this host says who the client is
    }
    server = ServerProcess(tmp_path, env).start()
    try:
        with httpx.Client(base_url=server.url, timeout=10) as http:

            def login(client: str, secret: str) -> int:
                reply = http.post(
                    "/api/admin/login", json={"secret": secret}, headers={"X-Forwarded-For": client}
                )
                return reply.status_code

            # a fresh address of one /64 for every guess: one client all the same
            assert [login(f"2001:db8:1:2::{i + 1:x}", f"nope-{i}") for i in range(3)] == [401] * 3
            assert login("2001:db8:1:2:ffff:ffff:ffff:fffe", SECRET) == 429
            assert login("2001:db8:1:3::1", SECRET) == 200  # the next /64 is another client
            # an IPv4-mapped IPv6 address is its IPv4 address; IPv4 stays per address
            assert [login("::ffff:198.51.100.7", f"nope-{i}") for i in range(3)] == [401] * 3
            assert login("198.51.100.7", SECRET) == 429
            assert login("198.51.100.8", SECRET) == 200
    finally:
        server.stop()


@pytest.mark.parametrize("shared", [False, True], ids=["one-process", "two-processes-redis"])
def test_the_64s_of_one_48_share_a_few_times_one_clients_failed_sign_ins(
    tmp_path: Path, shared: bool
) -> None:
    """Guesses from a fresh /64 of one /48 each: the /48 gets `SITE_SHARE` times one client's
    failures in all (spread over two processes on one Redis, all the same), then even the right
    secret from a fresh /64 of it is refused (before: 65,536 clients of their own); another /48, an
    IPv4 address and the admin's device cookie from inside the /48 still sign in."""
    env = {
        "DOMENG_ADMIN_TOKEN": SECRET,
        "DOMENG_ADMIN_LOGIN_LIMIT": "2 per minute",
        "DOMENG_ADMIN_LOGIN_LIMIT_ALL": "1000 per minute",
        "DOMENG_FORWARDED_ALLOW_IPS": "127.0.0.1",  # a reverse proxy on this host says who the client is
    }
    with _servers(tmp_path, shared, env) as servers:

        def login(n: int, client: str, secret: str, device: str | None = None) -> httpx.Response:
            headers = {"X-Forwarded-For": client} | (
                {"Cookie": f"{DEVICE_COOKIE}={device}"} if device else {}
            )
            with httpx.Client(base_url=servers[n % len(servers)].url, timeout=10) as http:
                return http.post("/api/admin/login", json={"secret": secret}, headers=headers)

        signed_in = login(0, "2001:db8:ab:ffff::1", SECRET)
        assert signed_in.status_code == 200, signed_in.text
        device = signed_in.cookies[DEVICE_COOKIE]
        guesses = [login(n, f"2001:db8:ab:{n:x}::1", f"nope-{n}").status_code for n in range(2 * SITE_SHARE)]
        assert guesses == [401] * 2 * SITE_SHARE  # each /64 one guess, under its own 2
        refused = login(1, "2001:db8:ab:beef::1", SECRET)  # a fresh /64 of the same /48
        assert refused.status_code == 429, refused.text
        assert refused.json()["detail"]["code"] == "too_many_attempts"
        assert "network" in refused.json()["detail"]["message"]
        assert login(0, "2001:db8:ac::1", SECRET).status_code == 200  # another /48: another site
        assert login(1, "198.51.100.7", SECRET).status_code == 200
        assert login(1, "2001:db8:ab:cafe::1", SECRET, device).status_code == 200  # the admin's browser
