"""The store's errors: a database failure is raised as `StoreError` (the driver's error is
``__cause__``), or one of its kinds.

    Exception
    └── StoreError              a database failure (the driver's error is ``__cause__``)
        ├── StoreClosedError    a write to a store that is not started, or is closing
        ├── NotFoundError       no such match, seat or round (also a LookupError)
        └── ConflictError       the write breaks a constraint: a room code or (match, round, seq)
                                already stored, a round started twice, a row it needs is missing
"""

from __future__ import annotations

from sqlalchemy.exc import IntegrityError, SQLAlchemyError

__all__ = [
    "ConflictError",
    "NotFoundError",
    "StoreClosedError",
    "StoreError",
    "store_error",
]


class StoreError(Exception):
    """Base of the store's errors; a database failure is raised as this, with its cause."""


class StoreClosedError(StoreError):
    """Raised by a write to a store that is not started or is closing."""


class NotFoundError(StoreError, LookupError):
    """Raised when the match, seat or round a write names does not exist."""


class ConflictError(StoreError):
    """Raised when a write breaks a constraint (a unique key, a foreign key, a check)."""


def store_error(error: BaseException) -> BaseException:
    if isinstance(error, StoreError):
        return error
    if isinstance(error, IntegrityError):
        conflict = ConflictError(f"conflict: {error.orig}")
        conflict.__cause__ = error
        return conflict
    if isinstance(error, SQLAlchemyError):
        failure = StoreError(f"database failure: {error}")
        failure.__cause__ = error
        return failure
    return error
