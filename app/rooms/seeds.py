"""A deal's secret seed and its commitment: what the server makes, and the one check of a seed and
commitment someone brings back to verify a deal (the API's ``/api/deals/verify``, ``domeng
verify-deal``)."""

from __future__ import annotations

import re
from typing import Final

from app.rooms.errors import RoomError

__all__ = ["COMMITMENT_PATTERN", "SEED_BYTES", "SEED_PATTERN", "check_deal_proof"]

SEED_BYTES: Final = 32
"""A deal's seed is this many random bytes from `secrets`, written as twice as many lowercase hex
digits (`app.rooms.moves.Moves.next_deal`); anyone can re-deal the round from it once it is revealed."""
SEED_PATTERN: Final = f"^[0-9a-f]{{{2 * SEED_BYTES}}}$"
"""What a seed the server made looks like: 64 lowercase hex digits."""
COMMITMENT_PATTERN: Final = "^[0-9a-fA-F]{64}$"
"""What a deal's commitment looks like (`engine.hashing.commitment_of`: hex SHA-256 of the seed,
64 digits; compared without regard to case)."""


def check_deal_proof(seed: str, commitment: str | None = None) -> None:
    """Refuse a ``seed`` the server cannot have made (`SEED_PATTERN`) and a ``commitment`` that is
    not a SHA-256 (`COMMITMENT_PATTERN`; None: none given, nothing to check), the seed first.

    Raises `RoomError` ``invalid_seed`` or ``invalid_commitment`` (status 422), whose message says
    what the value should be.

    >>> check_deal_proof("5f" * 32, "AB" * 32)
    >>> check_deal_proof("5F" * 32)
    Traceback (most recent call last):
    app.rooms.errors.RoomError: a seed is 64 lowercase hex digits (0-9, a-f), as a round's end reveals it
    """
    if not re.fullmatch(SEED_PATTERN, seed):
        message = "a seed is 64 lowercase hex digits (0-9, a-f), as a round's end reveals it"
        raise RoomError("invalid_seed", message, 422)
    if commitment is not None and not re.fullmatch(COMMITMENT_PATTERN, commitment):
        message = "a commitment is 64 hex digits: the SHA-256 of the seed, sent when the round is dealt"
        raise RoomError("invalid_commitment", message, 422)
