"""The store's errors: a database failure is raised as `StoreError` (the driver's error is
``__cause__``), or one of its kinds.

    Exception
    └── StoreError              a database failure (the driver's error is ``__cause__``)
        ├── StoreClosedError    a write to a store that is not started, or is closing
        ├── DatabaseLockedError another process held the SQLite database's write lock for as long
        │                       as a write may wait (nothing of it was stored)
        ├── NotFoundError       no such match, seat or round (also a LookupError)
        ├── ConflictError       the write breaks a constraint: a room code or (match, round, seq)
        │                       already stored, a round started twice, a row it needs is missing
        └── FencedOutError           the write carried a fencing token older than the one stored for
                                its match: its writer lost the room's lease (docs/cluster.md)
"""

from __future__ import annotations

from sqlalchemy.exc import IntegrityError, SQLAlchemyError

__all__ = [
    "ConflictError",
    "DatabaseLockedError",
    "FencedOutError",
    "NotFoundError",
    "StoreClosedError",
    "StoreError",
    "locked",
    "store_error",
]

_SQLITE_BUSY = 5
"""SQLite's primary result code for a database locked by another connection (``SQLITE_BUSY``)."""


class StoreError(Exception):
    """Base of the store's errors; a database failure is raised as this, with its cause."""


class StoreClosedError(StoreError):
    """Raised by a write to a store that is not started or is closing."""


class DatabaseLockedError(StoreError):
    """Raised when another process held the SQLite database's write lock (a ``sqlite3`` shell in a
    write transaction, a backup) for as long as a write may wait, or at all once the server is
    stopping (`app.store.Store.stop_waiting`; then ``at_stop``, and the store logs every such
    failure in one line, ``store_locked_at_stop``, so its callers need not log each): nothing of
    the write was stored."""

    def __init__(self, message: str, at_stop: bool = False) -> None:
        super().__init__(message)
        self.at_stop = at_stop


def locked(error: BaseException) -> bool:
    """Whether ``error`` (SQLAlchemy's, or the sqlite3 driver's under it) is SQLite's ``database is
    locked``: another process holds the write lock."""
    orig = getattr(error, "orig", None) or error
    return (getattr(orig, "sqlite_errorcode", 0) or 0) & 0xFF == _SQLITE_BUSY


class NotFoundError(StoreError, LookupError):
    """Raised when the match, seat or round a write names does not exist."""


class ConflictError(StoreError):
    """Raised when a write breaks a constraint (a unique key, a foreign key, a check)."""


class FencedOutError(StoreError):
    """Raised when a write of a room carries fencing token ``token`` but its match already holds
    ``stored`` (higher): another process took the room's lease, so this write is refused and stores
    nothing (docs/cluster.md)."""

    def __init__(self, match: int | str, token: int, stored: int) -> None:
        super().__init__(f"match {match}: fencing token {token} is older than the stored {stored}")
        self.token = token
        self.stored = stored


def store_error(error: BaseException) -> BaseException:
    """The error a caller of the store gets for ``error``: a constraint broken becomes
    `ConflictError`, a SQLite database locked by another process `DatabaseLockedError`, any other
    database failure (SQLAlchemy's, or the driver's timeout or lost connection) `StoreError`, each
    with ``error`` as its ``__cause__``; the store's own errors and anything else are returned as
    they are."""
    if isinstance(error, StoreError):
        return error
    if isinstance(error, IntegrityError):
        conflict = ConflictError(f"conflict: {error.orig}")
        conflict.__cause__ = error
        return conflict
    if locked(error):
        refused = DatabaseLockedError(
            "the SQLite database is locked by another process (one holding a write transaction: a "
            "sqlite3 shell, a backup); nothing of this write was stored"
        )
        refused.__cause__ = error
        return refused
    if isinstance(error, SQLAlchemyError):
        failure = StoreError(f"database failure: {error}")
        failure.__cause__ = error
        return failure
    if isinstance(error, (TimeoutError, OSError)):  # the driver's own: no answer in time, no connection
        failure = StoreError(f"database unreachable: {error!r}")
        failure.__cause__ = error
        return failure
    return error
