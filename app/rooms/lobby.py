"""The lobby's list of open tables: rooms a host listed that are waiting for players."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from app.rooms.room import Room

__all__ = ["open_tables"]


def open_tables(rooms: Iterable[Room], now: float) -> list[dict[str, Any]]:
    """The rooms listed in the lobby: open, waiting for players, with a free seat and someone
    there (a room that empties leaves the list), longest waiting first. Each: ``code``,
    ``variant``, ``seats`` (count), ``free`` (empty seats), ``people`` (names seated), ``bots``
    (their levels), ``turn_timer_s``, ``waiting_s`` (seconds since listed, at clock time
    ``now``)."""
    listed: list[dict[str, Any]] = []
    for room in rooms:
        free = sum(1 for s in room.seats if s.kind == "empty")
        if not room.open_table or room.status != "waiting" or not free or not room.conns:
            continue
        listed.append(
            {
                "code": room.code,
                "variant": room.rules.name,
                "seats": len(room.seats),
                "free": free,
                "people": [s.name for s in room.seats if s.kind == "human"],
                "bots": [s.bot_level for s in room.seats if s.kind == "bot"],
                "turn_timer_s": room.turn_timer_s,
                "waiting_s": round(max(0.0, now - (room.listed_at or now)), 1),
            }
        )
    listed.sort(key=lambda t: -t["waiting_s"])
    return listed
