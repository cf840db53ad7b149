"""The lobby's lists: open tables (rooms a host listed that are waiting for players), and the
status of the rooms a browser holds a token for ("Your tables")."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any, Final

from app.addresses import SITE_SHARE, count_within, counted_keys, counted_site
from app.rooms.room import Room
from app.store.reads import RoomStatus
from engine.variants import make_rules

__all__ = [
    "OPEN_TABLES_PER_ADDRESS",
    "OPEN_TABLES_SHOWN",
    "PRIVATE",
    "SHOWN_STATUSES",
    "address_key",
    "open_tables",
    "people_weights",
    "rank_tables",
    "room_status",
    "stored_status",
]

OPEN_TABLES_SHOWN: Final = 30
"""How many open tables the lobby is answered at most (`rank_tables`): a screenful a player reads,
and a bound on what anyone listing made-up tables from many addresses can put before them."""

OPEN_TABLES_PER_ADDRESS: Final = 3
"""How many open tables created from one client address (`app.addresses.counted_address`: an IPv6
/64 as one) the lobby lists at once (`rank_tables`), the others of that address left off until one
of those leaves the list. A person hosts one table at a time; a household or a club behind one
address may host two or three (a Domeng and a Kozel table, one listed again by Play again). Three
keeps them all listed, while a party listing made-up tables gets no more than three of the
`OPEN_TABLES_SHOWN` places per address it holds: 4 addresses fill 12 at most, not all 30. An IPv6
/48 holds 65,536 /64s, each an address: all of them together are listed `app.addresses.SITE_SHARE`
times three tables at most (12), as four IPv4 addresses are."""

PRIVATE: Final = ("owner", "owner_site", "distinct", "addresses", "sites")
"""What `open_tables` gives a table for ranking it that nobody is told (`rank_tables` leaves it
out): ``owner``, who created the room (`app.rooms.making.share_of` its client address, as
`app.rooms.hub.Hub.creators` holds it; a process of an older release gives the address itself;
None: not known), ``owner_site``, that of the address's IPv6 /48 (None: an IPv4 one; absent from
an older release's table: ``owner``'s /48 counts); ``distinct``, how
many distinct client addresses its connected seated people are at; ``addresses``, those addresses,
each as `address_key` (sorted; a connection whose address is not known as a key of its own);
``sites``, the IPv6 /48 of each IPv6 one of them (`app.addresses.counted_site`), ``{address_key:
address_key of its /48}``."""

SHOWN_STATUSES: Final = ("waiting", "playing", "finished")
"""The statuses of a room its link opens (an abandoned one's no longer does: unknown)."""


def open_tables(
    rooms: Iterable[Room],
    now: float,
    owners: Mapping[str, tuple[str, str | None]] | None = None,
    *,
    private: bool = False,
) -> list[dict[str, Any]]:
    """The rooms listed in the lobby: open, waiting for players, with a free seat and a seated
    person or the host connected (a spectator's socket alone does not list a table; one that
    loses its players and host leaves the list), in `rank_tables`' order and number, each room's
    creator in ``owners`` (code → the keys of its address and /48, `app.rooms.hub.Hub.creators`;
    a room not in it: not known). Each:
    ``code``, ``variant``, ``seats`` (count), ``pairs`` (whether partners share a score, Kozel's
    K10), ``free`` (empty seats), ``people`` (names seated),
    ``here`` (how many of them are connected), ``bots`` (their levels), ``turn_timer_s``,
    ``waiting_s`` (seconds since the match was first listed, at clock time ``now``: taking a table
    off and listing it again does not reset it); with ``private``, `PRIVATE` too (a process
    publishes them to the others: `app.web.shared.Board`)."""
    owners = owners or {}
    listed: list[dict[str, Any]] = []
    for room in rooms:
        free = sum(1 for s in room.seats if s.kind == "empty")
        if not room.open_table or room.status != "waiting" or not free or not _hosted(room):
            continue
        owner, owner_site = owners.get(room.code, (None, None))
        listed.append(
            {
                "code": room.code,
                "variant": room.rules.name,
                "seats": len(room.seats),
                "pairs": any(len(side) > 1 for side in room.rules.sides()),
                "free": free,
                "people": [s.name for s in room.seats if s.kind == "human"],
                "here": sum(1 for s in room.seats if s.kind == "human" and s.connections > 0),
                "bots": [s.bot_level for s in room.seats if s.kind == "bot"],
                "turn_timer_s": room.turn_timer_s,
                "waiting_s": round(max(0.0, now - (room.listed_at or now)), 1),
                "owner": owner,
                "owner_site": owner_site,
                "distinct": _distinct(room),
                "addresses": _seated_addresses(room),
                "sites": _seated_sites(room),
            }
        )
    return rank_tables(listed, private=private)


def rank_tables(tables: Iterable[dict[str, Any]], *, private: bool = False) -> list[dict[str, Any]]:
    """The first `OPEN_TABLES_SHOWN` of ``tables`` (`open_tables`' shape with `PRIVATE`, one
    process's or several's), at most `OPEN_TABLES_PER_ADDRESS` of them created from one address
    (and `app.addresses.SITE_SHARE` times that from one IPv6 /48, `app.addresses.counted_keys`):
    the most people there first (`people_weights`: the client addresses of the seated people
    connected, each worth one person across all the tables it sits at, and all the /64s of one IPv6
    /48 together `app.addresses.SITE_SHARE` people at most), then the most seated
    people connected (``here``), then the newest listing (least ``waiting_s``). Without
    ``private``, what anyone is told: `PRIVATE` left out.

    Most people there first: the table nearest to its start is the one a joining player wants.
    People counted by their addresses, and tables by their creator's: a made-up table must hold a
    live socket for each person it counts (a seat is claimed without one), sockets from one
    address count once, and an address seated at several open tables is shared among them, so that
    one party cannot put its tables before everyone else's by opening more sockets, nor by seating
    its few addresses at every one of its tables, nor fill the list by creating more tables: N
    addresses are worth N people in all, however they are spread, and the 65,536 /64s of one /48
    `SITE_SHARE` people in all, as the per-address caps count them (`app.addresses.counted_keys`).
    Newest next: a table listed long
    ago is the likeliest to have lost its people, and a lobby ordered longest waiting first would
    keep the oldest made-up tables at the top for good, the cap cutting the real ones off."""
    tables = list(tables)
    weights = people_weights(tables)
    ranked = sorted(
        zip(tables, weights, strict=True),
        key=lambda tw: (-tw[1], -tw[0].get("here", 0), tw[0]["waiting_s"], tw[0]["code"]),
    )
    hosted: Counter[str] = Counter()
    shown: list[dict[str, Any]] = []
    for table, _weight in ranked:
        owner = table.get("owner")
        if owner is not None and not count_within(hosted, _creator_keys(table), OPEN_TABLES_PER_ADDRESS):
            continue
        shown.append(table if private else {k: v for k, v in table.items() if k not in PRIVATE})
        if len(shown) == OPEN_TABLES_SHOWN:
            break
    return shown


def _creator_keys(table: Mapping[str, Any]) -> tuple[tuple[str, int], ...]:
    """What the cap of tables per creator counts ``table`` under (`open_tables`' shape with
    `PRIVATE`), each with its share of the cap: its ``owner`` once and its ``owner_site``
    `SITE_SHARE` times; for a table of an older release (no ``owner_site``) those of its owner's
    address (`app.addresses.counted_keys`)."""
    owner = str(table["owner"])
    if "owner_site" not in table:
        return counted_keys(owner)
    site = table["owner_site"]
    return ((owner, 1),) if site is None else ((owner, 1), (f"site:{site}", SITE_SHARE))


def people_weights(tables: Iterable[Mapping[str, Any]]) -> list[Fraction]:
    """How many people each of ``tables`` (`open_tables`' shape with `PRIVATE`) counts for the
    lobby's order: each of its ``addresses`` is worth one person divided by the number of
    ``tables`` that address sits at (a person at one table counts 1 there; a party whose 4
    addresses are seated at each of its 12 tables counts 1/3 at each), and the IPv6 addresses of
    one /48 (``sites``) are worth `app.addresses.SITE_SHARE` people in all at most, as the
    per-address caps count them: each of N > `SITE_SHARE` of them is worth `SITE_SHARE`/N of a
    person. A table without ``addresses`` (a process of an older release, during a rolling
    update) counts its ``distinct``, else its ``here``; its addresses without ``sites``, each
    alone.

    >>> people_weights([{"addresses": ["a", "b"]}, {"addresses": ["b"]}, {"here": 2}])
    [Fraction(3, 2), Fraction(1, 2), Fraction(2, 1)]
    >>> site = {f"v6-{n}": "site" for n in range(8)}  # 8 /64s of one /48, a table each
    >>> tables = [{"addresses": [a], "sites": site} for a in site] + [{"addresses": ["a"]}]
    >>> [str(w) for w in people_weights(tables)]
    ['1/2', '1/2', '1/2', '1/2', '1/2', '1/2', '1/2', '1/2', '1']
    """
    tables = list(tables)
    seats: Counter[str] = Counter(a for t in tables for a in t.get("addresses", ()))
    site_of = {a: site for t in tables for a, site in t.get("sites", {}).items() if a in seats}
    people: Counter[str] = Counter(site_of.values())  # each /48's distinct addresses seated
    worth = {a: min(Fraction(1), Fraction(SITE_SHARE, people[site])) for a, site in site_of.items()}
    return [
        sum((worth.get(a, Fraction(1)) / seats[a] for a in t["addresses"]), Fraction(0))
        if "addresses" in t
        else Fraction(t.get("distinct", t.get("here", 0)))
        for t in tables
    ]


def address_key(address: str) -> str:
    """A client address (as `app.addresses.counted_address` counts it) as the lobby compares it
    across tables and processes: 16 hex digits of its SHA-256, so the board other processes read
    does not spell the seated people's addresses out. (A key for comparing, not a secret: an IPv4
    address is found again by trying them all.)"""
    return hashlib.sha256(b"domeng-lobby:" + address.encode()).hexdigest()[:16]


def _distinct(room: Room) -> int:
    """How many distinct client addresses the seated people connected to ``room`` are at (by the
    room's hashes of them, ``conn.client``; a connection whose address is not known counts alone)."""
    clients = {c.client or id(c) for c in room.conns if c.seat is not None}
    return len(clients)


def _seated_addresses(room: Room) -> list[str]:
    """The `address_key`s of the client addresses of the seated people connected to ``room``,
    sorted, each once (a connection whose address is not known: a key of its own)."""
    keys = {
        address_key(address) if (address := room.addresses.get(c)) else f"conn-{id(c)}"
        for c in room.conns
        if c.seat is not None
    }
    return sorted(keys)


def _seated_sites(room: Room) -> dict[str, str]:
    """The IPv6 /48 (`app.addresses.counted_site`) of each IPv6 client address of the seated people
    connected to ``room``: ``{address_key of the address: address_key of its /48}``."""
    return {
        address_key(address): address_key(site)
        for c in room.conns
        if c.seat is not None
        and (address := room.addresses.get(c))
        and (site := counted_site(address)) is not None
    }


def _hosted(room: Room) -> bool:
    """Whether a person who holds a seat, or the host, is connected to ``room``."""
    return bool(room.host_conns) or any(c.seat is not None for c in room.conns)


def room_status(room: Room) -> dict[str, Any]:
    """A room in memory as "Your tables" shows it: ``{"code": …, "match": 1, "variant":
    "domeng", "options": {"camat_target": 1}, "status": "waiting" | "playing" | "finished",
    "seats": [{"seat": 0, "kind": "human", "name": "Ana", "bot_level": null}, …]}``, a part of
    what `app.rooms.frames.room_public` tells anyone with the code (the options: whether a Kozel
    table plays in pairs)."""
    seats = ((s.seat, s.kind, s.name, s.bot_level) for s in room.seats)
    return _status(room.code, room.room_match, room.rules.name, room.rules.options(), room.status, seats)


def stored_status(row: RoomStatus) -> dict[str, Any] | None:
    """A room's stored latest match as `room_status` shows it, or None when its link no longer
    opens it: abandoned, or its game cannot be made again (its variant unknown, its options or
    seats not the variant's, its stored options no object: `engine.variants.make_rules` raises,
    whatever it raises, as loading the room would, `app.rooms.making.RoomMaker.restore`)."""
    if row.status not in SHOWN_STATUSES:
        return None
    try:
        rules = make_rules(row.variant, row.options, row.seat_count)
    except Exception:  # EngineError, or what options that are no object make it raise
        return None
    seats = ((s.seat, s.kind, s.name, s.bot_level) for s in row.seats)
    return _status(row.code, row.number, row.variant, rules.options(), row.status, seats)


def _status(
    code: str,
    match: int,
    variant: str,
    options: dict[str, Any],
    status: str,
    seats: Iterable[tuple[int, str, str | None, str | None]],
) -> dict[str, Any]:
    return {
        "code": code,
        "match": match,
        "variant": variant,
        "options": options,
        "status": status,
        "seats": [
            {"seat": seat, "kind": kind, "name": name, "bot_level": level}
            for seat, kind, name, level in seats
        ],
    }
