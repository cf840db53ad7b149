"""A round review served over HTTP: `run_review` maps the review workers' refusals to API errors.
Both the player's route (``/api/rooms/{code}/rounds/{r}/review``) and the admin's use it."""

from __future__ import annotations

from typing import Any

from app.bots.reviews import ReviewsBusyError, ReviewWorkers
from app.rooms.errors import RoomError
from app.rooms.ownership import unavailable
from app.store import NotFoundError, StoreError
from engine.errors import RecordError

__all__ = ["RETRY_AFTER_S", "run_review"]

RETRY_AFTER_S = 5
"""Seconds a client waits before asking again when the review workers are busy (Retry-After)."""


async def run_review(
    reviews: ReviewWorkers, match_id: int, round_index: int, seat: int, asker: str | None = None
) -> dict[str, Any]:
    """`ReviewWorkers.review` for ``asker`` (a player's client address; None: the admin's), its
    refusals as `RoomError`: 503 ``reviews_busy`` (with Retry-After: many reviews, or a few of this
    asker's, are in the works)
    or ``review_timeout``; 409 with the record's code (``unfinished_round``, ``invalid_round``)
    when the stored match cannot be reviewed there; 503 ``room_unavailable`` (Retry-After) when the
    store cannot read the match's record now, 404 ``no_such_match`` when it has none."""
    try:
        return await reviews.review(match_id, round_index, seat, asker)
    except ReviewsBusyError:
        raise RoomError(
            "reviews_busy",
            "many reviews are being prepared: ask again in a moment",
            503,
            {"Retry-After": str(RETRY_AFTER_S)},
        ) from None
    except TimeoutError:
        raise RoomError("review_timeout", "the review took too long: ask again later", 503) from None
    except RecordError as error:
        raise RoomError(error.code, error.message, 409) from None
    except NotFoundError:
        raise RoomError("no_such_match", "no such match is stored", 404) from None
    except StoreError as error:
        raise unavailable("the review cannot be read right now; try again") from error
