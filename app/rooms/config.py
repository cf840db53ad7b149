"""The timings and limits rooms run with (from the server's settings, or a test's)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RoomConfig"]


@dataclass(frozen=True, slots=True)
class RoomConfig:
    """Seconds: ``disconnect_grace_s`` before a bot covers an absent player, ``bot_delay_s``
    before a bot's (or a forced) move, ``round_pause_s`` between rounds, and the default
    ``turn_timer_s`` of a new room (0: none). ``max_rooms`` caps the rooms of one hub in memory
    (created or loaded), ``max_rooms_per_address`` the unfinished rooms in memory one client
    address created (0: no limit; counted when one is loaded again too), ``max_spectators`` the
    spectators of one room (0: no limit)."""

    disconnect_grace_s: float = 20.0
    bot_delay_s: float = 0.7
    round_pause_s: float = 6.0
    turn_timer_s: float = 30.0
    max_rooms: int = 5000
    max_rooms_per_address: int = 0
    max_spectators: int = 100
    unload_after_s: float = 300.0
    """A room nobody is connected to and that handled nothing this long leaves memory."""
    abandon_after_s: float = 86400.0
    """An unfinished match nobody used this long is stored ``abandoned`` (reason ``idle``)."""
    unplayed_kept_s: float = 7 * 86400.0
    """A match stored ``abandoned`` before its first deal is deleted this long after (0: kept for
    ever): one client can create rooms it never plays far faster than anyone reads them."""
    unattended_rounds: int = 10
    """Rounds dealt in a row with no person at the table after which the room deals no more until
    a spectator answers that they still watch (`app.rooms.unattended`; 0: no limit)."""
