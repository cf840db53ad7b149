"""Persistence: the match store (`Store`, a repository over SQLAlchemy models), its writer
thread, and what goes in and comes out of it. It implements the rooms' `MatchStore` port and
imports neither the rooms nor the socket edge."""

from __future__ import annotations

from app.store.database import MIGRATIONS_DIR, sqlite_url, upgrade_database
from app.store.errors import (
    ConflictError,
    DatabaseLockedError,
    FencedOutError,
    NotFoundError,
    StoreClosedError,
    StoreError,
)
from app.store.reads import ACTIVE_STATUSES
from app.store.records import record_of
from app.store.repository import Store
from app.store.rows import (
    ActionRow,
    MatchRow,
    RoomRow,
    RoundEnd,
    RoundRow,
    SeatRow,
    SeatSpec,
    TallyRow,
    TallySpec,
    seat_display_name,
)

__all__ = [
    "ACTIVE_STATUSES",
    "MIGRATIONS_DIR",
    "ActionRow",
    "ConflictError",
    "DatabaseLockedError",
    "FencedOutError",
    "MatchRow",
    "NotFoundError",
    "RoomRow",
    "RoundEnd",
    "RoundRow",
    "SeatRow",
    "SeatSpec",
    "Store",
    "StoreClosedError",
    "StoreError",
    "TallyRow",
    "TallySpec",
    "record_of",
    "seat_display_name",
    "sqlite_url",
    "upgrade_database",
]
