"""The lobby's lists: open tables (rooms a host listed that are waiting for players), and the
status of the rooms a browser holds a token for ("Your tables")."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from app.rooms.room import Room
from app.store.reads import RoomStatus
from engine.variants import make_rules

__all__ = [
    "OPEN_TABLES_SHOWN",
    "SHOWN_STATUSES",
    "open_tables",
    "rank_tables",
    "room_status",
    "stored_status",
]

OPEN_TABLES_SHOWN: Final = 30
"""How many open tables the lobby is answered at most (`rank_tables`): a screenful a player reads,
and a bound on what anyone listing made-up tables from many addresses can put before them."""

SHOWN_STATUSES: Final = ("waiting", "playing", "finished")
"""The statuses of a room its link opens (an abandoned one's no longer does: unknown)."""


def open_tables(rooms: Iterable[Room], now: float) -> list[dict[str, Any]]:
    """The rooms listed in the lobby: open, waiting for players, with a free seat and a seated
    person or the host connected (a spectator's socket alone does not list a table; one that
    loses its players and host leaves the list), in `rank_tables`' order and number. Each:
    ``code``, ``variant``, ``seats`` (count), ``free`` (empty seats), ``people`` (names seated),
    ``here`` (how many of them are connected), ``bots`` (their levels), ``turn_timer_s``,
    ``waiting_s`` (seconds since the match was first listed, at clock time ``now``: taking a table
    off and listing it again does not reset it)."""
    listed: list[dict[str, Any]] = []
    for room in rooms:
        free = sum(1 for s in room.seats if s.kind == "empty")
        if not room.open_table or room.status != "waiting" or not free or not _hosted(room):
            continue
        listed.append(
            {
                "code": room.code,
                "variant": room.rules.name,
                "seats": len(room.seats),
                "free": free,
                "people": [s.name for s in room.seats if s.kind == "human"],
                "here": sum(1 for s in room.seats if s.kind == "human" and s.connections > 0),
                "bots": [s.bot_level for s in room.seats if s.kind == "bot"],
                "turn_timer_s": room.turn_timer_s,
                "waiting_s": round(max(0.0, now - (room.listed_at or now)), 1),
            }
        )
    return rank_tables(listed)


def rank_tables(tables: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first `OPEN_TABLES_SHOWN` of ``tables`` (`open_tables`' shape, one process's or
    several's): the most seated people connected (``here``) first, then the newest listing (least
    ``waiting_s``).

    Most people there first: the table nearest to its start is the one a joining player wants,
    and a made-up table must hold a live socket for each person it counts (a seat is claimed
    without one). Newest next: a table listed long ago is the likeliest to have lost its people,
    and a lobby ordered longest waiting first would keep the oldest made-up tables at the top for
    good, the cap cutting the real ones off."""
    # .get: a process of an older release, during a rolling update, publishes no ``here``
    ranked = sorted(tables, key=lambda t: (-t.get("here", 0), t["waiting_s"], t["code"]))
    return ranked[:OPEN_TABLES_SHOWN]


def _hosted(room: Room) -> bool:
    """Whether a person who holds a seat, or the host, is connected to ``room``."""
    return bool(room.host_conns) or any(c.seat is not None for c in room.conns)


def room_status(room: Room) -> dict[str, Any]:
    """A room in memory as "Your tables" shows it: ``{"code": …, "match": 1, "variant":
    "domeng", "status": "waiting" | "playing" | "finished", "seats": [{"seat": 0, "kind": "human",
    "name": "Ana", "bot_level": null}, …]}``, a part of what `app.rooms.frames.room_public` tells
    anyone with the code."""
    seats = ((s.seat, s.kind, s.name, s.bot_level) for s in room.seats)
    return _status(room.code, room.room_match, room.rules.name, room.status, seats)


def stored_status(row: RoomStatus) -> dict[str, Any] | None:
    """A room's stored latest match as `room_status` shows it, or None when its link no longer
    opens it: abandoned, or its game cannot be made again (its variant unknown, its options or
    seats not the variant's, its stored options no object: `engine.variants.make_rules` raises,
    whatever it raises, as loading the room would, `app.rooms.making.RoomMaker.restore`)."""
    if row.status not in SHOWN_STATUSES:
        return None
    try:
        make_rules(row.variant, row.options, row.seat_count)
    except Exception:  # EngineError, or what options that are no object make it raise
        return None
    seats = ((s.seat, s.kind, s.name, s.bot_level) for s in row.seats)
    return _status(row.code, row.number, row.variant, row.status, seats)


def _status(
    code: str, match: int, variant: str, status: str, seats: Iterable[tuple[int, str, str | None, str | None]]
) -> dict[str, Any]:
    return {
        "code": code,
        "match": match,
        "variant": variant,
        "status": status,
        "seats": [
            {"seat": seat, "kind": kind, "name": name, "bot_level": level}
            for seat, kind, name, level in seats
        ],
    }
