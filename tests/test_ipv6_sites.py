"""One IPv6 /48 cannot fill the server's caps with its 65,536 /64s (app.addresses): every
per-address cap counts an IPv6 client by its /64 and, besides, its /48 at `SITE_SHARE` times the
cap, while an IPv4 address is counted alone as always. In process, with real addresses: the
connections and room sockets held, the lobby's tables per creator and the people it ranks them by,
rooms created and open, and the allowances (reads) of a client."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

from app.addresses import SITE_SHARE, counted_address, counted_keys, counted_site
from app.edge.endpoint import SocketCounter
from app.metrics import Metrics
from app.rooms import host
from app.rooms.hub import Hub
from app.rooms.lobby import OPEN_TABLES_PER_ADDRESS, rank_tables
from app.rooms.local import LocalBots
from app.store import Store, sqlite_url
from app.web.app import create_app
from app.web.guard import ConnectionGuard
from app.web.settings import Settings
from app.web.shared import Board, open_rooms_by_address
from tests.roomkit import CONFIG, FakeClock, FakeOutbox
from tests.test_cluster_shared import shared_pair

SITE = "2001:db8:ab"
"""A /48 (``2001:db8:ab::/48``): its /64s are ``2001:db8:ab:N::/64``."""


def _in_site(n: int, host: int = 1) -> str:
    """An address of the ``n``th /64 of `SITE`."""
    return f"{SITE}:{n:x}::{host:x}"


class _Open:
    """A transport as `ConnectionGuard` sees one (whether it is closing)."""

    def is_closing(self) -> bool:
        return False


def test_an_ipv6_client_is_counted_by_its_64_and_its_48_and_ipv4_alone() -> None:
    assert counted_site("2001:db8:ab:ffff:1:2:3:4") == "2001:db8:ab::/48"
    assert counted_site(counted_address("2001:db8:ab:7::1")) == "2001:db8:ab::/48"
    assert counted_site("2001:db8:ac::1") == "2001:db8:ac::/48"
    assert counted_site("2001:db8:ab::/48") == "2001:db8:ab::/48"
    assert counted_site("203.0.113.9") is None and counted_site("::ffff:203.0.113.9") is None
    assert counted_site("unknown") is None
    assert counted_keys("2001:db8:ab:7::1") == (("2001:db8:ab:7::/64", 1), ("2001:db8:ab::/48", SITE_SHARE))
    assert counted_keys("203.0.113.9") == (("203.0.113.9", 1),)
    assert counted_keys("::ffff:203.0.113.9") == (("203.0.113.9", 1),)


def test_the_64s_of_one_48_hold_a_few_times_one_clients_connections_together() -> None:
    guard = ConnectionGuard(2)
    held = []
    for n in range(2 * SITE_SHARE):  # each /64 its own 2, until the /48 holds 4 times 2
        transport = _Open()
        assert guard.admit(_in_site(n // 2, n), transport), n
        held.append((_in_site(n // 2, n), transport))
    assert not guard.admit(_in_site(100), _Open())  # a fresh /64 of the same /48: refused
    assert not guard.admit(_in_site(0xFFFF), _Open())
    assert guard.open_count("2001:db8:ab::/48") == 2 * SITE_SHARE
    assert guard.admit("2001:db8:ac::1", _Open())  # the next /48 is another site
    assert all(guard.admit(f"203.0.113.{i}", _Open()) for i in range(1, 20))  # IPv4: each alone
    address, transport = held[0]
    guard.release(address, transport)  # a place of the /48 is free again
    assert guard.admit(_in_site(100), _Open())
    assert guard.open_count(_in_site(0xFFFF)) == 0  # nothing left behind by its refusals


def test_the_64s_of_one_48_hold_a_few_times_one_clients_room_sockets_together() -> None:
    counter = SocketCounter(3)
    opened = [counted_address(_in_site(n)) for n in range(3 * SITE_SHARE)]  # one socket per /64
    assert all(counter.admit(address) for address in opened)
    assert not counter.admit(counted_address(_in_site(500)))
    assert counter.admit(counted_address("2001:db8:ac::1"))
    counter.release(opened[0])
    assert counter.admit(counted_address(_in_site(500)))
    assert all(counter.admit(f"198.51.100.{i}") for i in range(1, 3 * SITE_SHARE + 5))  # IPv4 alone


def _table(code: str, owner: str) -> dict[str, Any]:
    return {"code": code, "waiting_s": 0.0, "owner": owner, "addresses": [], "here": 1}


def test_one_48_lists_a_few_times_one_clients_tables_and_never_the_whole_lobby() -> None:
    site = [_table(f"s{n}", counted_address(_in_site(n))) for n in range(40)]  # 40 /64s, a table each
    others = [_table(f"o{n}", f"192.0.2.{n}") for n in range(5)]
    shown = [t["code"] for t in rank_tables([*site, *others])]
    assert len([c for c in shown if c.startswith("s")]) == OPEN_TABLES_PER_ADDRESS * SITE_SHARE
    assert {f"o{n}" for n in range(5)} <= set(shown)
    ipv4 = [_table(f"v{n}", f"198.51.100.{n}") for n in range(40)]  # 40 IPv4 addresses: each alone
    assert len(rank_tables(ipv4)) == 30


@contextlib.asynccontextmanager
async def _hub(path: Path) -> AsyncIterator[Hub]:
    """A hub of rooms (one process's) on a SQLite store in ``path``, stopped after."""
    async with Store(sqlite_url(path)) as store:
        hub = Hub(CONFIG, store, Metrics(), clock=FakeClock(), bots=LocalBots())
        try:
            yield hub
        finally:
            await hub.stop()


async def _listed(hub: Hub, owner: str, people: list[str]) -> str:
    """A room of five seats ``hub`` holds, created from ``owner`` and listed in the lobby, a
    person from each of ``people`` (client addresses) seated and connected: its code."""
    room, _ = await hub.create_room("domeng", {}, 5, 0.0, [None] * 5, owner=counted_address(owner))
    await room.call(lambda r: host.set_open(r, True))
    for seat, address in enumerate(people):
        token = await room.call(lambda r, seat=seat: host.claim(r, seat, f"P{seat}"))
        await room.connect(FakeOutbox(), token, address=counted_address(address))
    return room.code


def test_the_64s_of_one_48_seated_at_its_tables_are_a_few_people_in_the_lobbys_order(tmp_path: Path) -> None:
    """A /48 lists 12 tables (the cap of its creators) and seats a person from a fresh /64 at
    each of 4 seats of every one: 48 /64s, worth `SITE_SHARE` people in all (1/3 at each table),
    so a table of two people at two IPv4 addresses, and one of three from three /64s of another
    /48 (a site of few people: each counts), come before all 12 (before: after, each worth 4)."""

    async def main() -> None:
        async with _hub(tmp_path) as hub:
            site = [
                await _listed(hub, _in_site(n % 4), [_in_site(100 + 4 * n + s) for s in range(4)])
                for n in range(12)
            ]
            pair = await _listed(hub, "192.0.2.1", ["192.0.2.1", "192.0.2.2"])
            family = await _listed(hub, "2001:db8:ac::1", [f"2001:db8:ac:{n}::1" for n in range(3)])
            tables = hub.open_tables(private=True)
            assert [t["code"] for t in tables] == [family, pair, *sorted(site)], tables
            assert [t["here"] for t in tables] == [3, 2, *[4] * 12]

    asyncio.run(main())


def test_the_lobby_counts_the_64s_of_one_48_together_across_processes(tmp_path: Path) -> None:
    """Two processes on one Redis (`app.web.shared.Board`), each with a table of 4 people from 4
    /64s of one /48: each process alone would count 4 people at its table, but the lobby counts
    the 8 /64s as `SITE_SHARE` people, 2 at each, so a table of three people at IPv4 addresses
    comes first (before: after both)."""

    async def main() -> None:
        a, b = shared_pair()
        try:
            async with _hub(tmp_path / "a") as there, _hub(tmp_path / "b") as here:
                theirs = await _listed(there, _in_site(1), [_in_site(n) for n in range(1, 5)])
                mine = await _listed(here, _in_site(5), [_in_site(n) for n in range(5, 9)])
                trio = await _listed(here, "192.0.2.1", [f"192.0.2.{n}" for n in range(1, 4)])
                await Board(there, a).publish()
                tables = await Board(here, b).open_tables()
                # the two tables of 2 people each follow in the newest-first order (`rank_tables`),
                # which on a busy machine may tell their listings apart by a tenth of a second
                codes = [t["code"] for t in tables]
                assert codes[0] == trio and sorted(codes[1:]) == sorted([theirs, mine]), tables
        finally:
            await a.close()
            await b.close()

    asyncio.run(main())


def _app(tmp_path: Path, **settings: Any) -> Any:
    return create_app(
        Settings(data_dir=tmp_path, bot_workers=1, log_json=False, log_level="warning", **settings)
    )


async def _from(app: Any, address: str, method: str, path: str, body: Any = None) -> httpx.Response:
    """A request of ``app`` from client ``address``."""
    transport = httpx.ASGITransport(app=app, client=(address, 40000))
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        return await http.request(method, path, json=body)


def test_the_64s_of_one_48_cannot_fill_the_servers_rooms(tmp_path: Path) -> None:
    async def main() -> None:
        app = _app(tmp_path, max_rooms_per_address=2, room_create_limit="1000 per minute")
        async with app.router.lifespan_context(app):

            async def create(address: str) -> httpx.Response:
                return await _from(app, address, "POST", "/api/rooms", {"variant": "kozel"})

            made = [(await create(_in_site(n))).status_code for n in range(2 * SITE_SHARE)]
            assert made == [201] * (2 * SITE_SHARE)  # 8 rooms from 8 /64s: each under its own 2
            # what this process tells the others (docs/cluster.md): the /48's rooms, counted there too
            assert open_rooms_by_address(app.state.hub)["2001:db8:ab::/48"] == 2 * SITE_SHARE
            refused = await create(_in_site(0xBEEF))  # a fresh /64 of the same /48
            assert refused.status_code == 429, refused.text
            assert refused.json()["detail"]["code"] == "too_many_open_rooms"
            assert (await create("2001:db8:ac::1")).status_code == 201  # another /48
            assert [(await create("203.0.113.5")).status_code for _ in range(3)] == [201, 201, 429]
            assert (await create("203.0.113.6")).status_code == 201  # the next IPv4 address: its own

    asyncio.run(main())


def test_the_64s_of_one_48_share_a_few_times_one_clients_rate_of_creations_and_reads(tmp_path: Path) -> None:
    async def main() -> None:
        app = _app(tmp_path, room_create_limit="1 per minute", read_limit="1 per minute")
        async with app.router.lifespan_context(app):

            async def create(address: str) -> int:
                return (await _from(app, address, "POST", "/api/rooms", {"variant": "kozel"})).status_code

            async def read(address: str) -> int:
                return (await _from(app, address, "GET", "/api/room-defaults")).status_code

            assert [await create(_in_site(n)) for n in range(SITE_SHARE + 1)] == [201] * SITE_SHARE + [429]
            assert [await read(_in_site(n)) for n in range(SITE_SHARE + 1)] == [200] * SITE_SHARE + [429]
            assert await create("2001:db8:ac::1") == 201 and await read("2001:db8:ac::1") == 200
            assert [await read(f"203.0.113.{i}") for i in range(1, 8)] == [200] * 7  # IPv4: each alone

    asyncio.run(main())


def test_the_rooms_of_one_48_count_for_it_after_a_restart_too(tmp_path: Path) -> None:
    """Who created a room is stored with its match, the /48 of an IPv6 creator too
    (`app.rooms.hub.Hub.creators`): the tables of many /64s of one /48 loaded again after a
    restart are listed no more than before it (`SITE_SHARE` times 3), and count against the /48's
    cap of open rooms, though none of their creators has come back."""

    async def main() -> None:
        made: list[tuple[str, str]] = []
        async with _hub(tmp_path) as hub:
            for n in range(20):  # 20 /64s of one /48, a listed table each
                room, host_token = await hub.create_room(
                    "domeng", {}, 5, 0.0, [None] * 5, owner=counted_address(_in_site(n))
                )
                await room.call(lambda r: host.set_open(r, True))
                await room.connect(FakeOutbox(), None, host=host_token, address="198.51.100.9")
                made.append((room.code, host_token))
            listed = len(hub.open_tables())
            assert listed == OPEN_TABLES_PER_ADDRESS * SITE_SHARE
            assert hub.open_rooms_of(f"{SITE}::/48") == 20
        async with _hub(tmp_path) as again:  # a restart: nothing of the first hub's memory
            assert again.owners == {}
            for code, host_token in made:  # each host back, from another address
                room = await again.open(code)
                assert room is not None
                await room.connect(FakeOutbox(), None, host=host_token, address="198.51.100.9")
            assert len(again.open_tables()) == listed
            assert again.open_rooms_of(f"{SITE}::/48") == 20
            assert again.open_rooms_of(counted_address(_in_site(3))) == 1
            assert again.open_rooms_of(counted_address(_in_site(0xBEEF))) == 0

    asyncio.run(main())
