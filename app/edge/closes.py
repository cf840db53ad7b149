"""The close code and text a socket closes with for each reason a room closes it."""

from __future__ import annotations

from typing import Final

from app.edge.protocol import (
    CLOSE_REMOVED,
    CLOSE_REPLACED,
    CLOSE_ROOM_CLOSED,
    CLOSE_SEAT_LEFT,
    CLOSE_SEAT_TO_BOT,
    CLOSE_TRY_AGAIN,
)
from app.rooms.ports import CloseReason

__all__ = ["CLOSES", "close_for"]

CLOSES: Final[dict[CloseReason, tuple[int, str]]] = {
    "replaced": (CLOSE_REPLACED, "this seat was opened in another window"),
    "seat_to_bot": (CLOSE_SEAT_TO_BOT, "the host gave this seat to a bot"),
    "seat_emptied": (CLOSE_SEAT_LEFT, "the host emptied this seat"),
    "seat_left": (CLOSE_SEAT_LEFT, "the player left this seat"),
    "spectator_removed": (CLOSE_REMOVED, "the host removed you from this room"),
    "room_closed": (CLOSE_ROOM_CLOSED, "the room was closed by an admin"),
    "server_restart": (CLOSE_ROOM_CLOSED, "the server is restarting"),
    "room_moved": (CLOSE_TRY_AGAIN, "this room moved to another server; reconnect"),
    "room_reloading": (CLOSE_TRY_AGAIN, "this room is being loaded again from the database; reconnect"),
}
"""Every `CloseReason` → (close code, reason text) (docs/protocol.md)."""


def close_for(reason: CloseReason) -> tuple[int, str]:
    """The close code and text of ``reason``."""
    return CLOSES[reason]
