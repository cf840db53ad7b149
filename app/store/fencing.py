"""The fence a write of a room checks in its own transaction (docs/cluster.md): the match's
stored fencing token, raised to the writer's token, or the write refused when it holds a higher
one. Used by the writer (`app.store.writer`) for every write that carries a token."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from sqlalchemy import bindparam, func, select, update
from sqlalchemy.engine import Connection

from app.store.errors import FencedOutError, NotFoundError
from app.store.models import Match, MatchTurn

__all__ = [
    "Refused",
    "check_fence",
    "claim_fences",
    "fence_of",
    "lock_fences",
]

_RAISE_FENCE: Final = (
    update(Match)
    .where(Match.id == bindparam("match"), Match.fence <= bindparam("token"))
    .values(fence=bindparam("new_fence"))
)
_RAISE_ROOM_FENCE: Final = (
    update(Match)
    .where(Match.code == bindparam("room"), Match.fence <= bindparam("token"))
    .values(fence=bindparam("new_fence"))
)
_DROP_OLD_HANDOFFS: Final = (
    update(MatchTurn)
    .where(
        MatchTurn.handed_fence.is_not(None),
        MatchTurn.match_id.in_(
            select(Match.id).where(
                Match.code == bindparam("room"),
                Match.fence <= bindparam("token"),
                Match.fence != MatchTurn.handed_fence,
            )
        ),
    )
    .values(handed_fence=None, handed_at=None)
)
"""Run before `_RAISE_ROOM_FENCE`: a handoff's mark (`MatchTurn.handed_fence`) stands only for the
owner right after the one that handed over; if another owner claimed the room since (and perhaps
crashed), it is no handoff any more."""


_LOCK_FENCES: Final = (
    select(Match.id, Match.fence)
    .where(Match.id.in_(bindparam("matches", expanding=True)))
    .order_by(Match.id)
    .with_for_update()
)
"""Built once: a statement built per batch cost more CPU than running it (issue 15)."""


@dataclass(frozen=True, slots=True)
class Refused:
    """A batch's result for a write refused by its fence (the others' results stand)."""

    error: FencedOutError


def lock_fences(connection: Connection, match_ids: set[int]) -> dict[int, int]:
    """The stored fences of ``match_ids``, their rows locked until the commit (PostgreSQL)."""
    rows = connection.execute(_LOCK_FENCES, {"matches": sorted(match_ids)})
    return {row.id: int(row.fence) for row in rows}


def check_fence(
    connection: Connection, known: dict[int, int], match_id: int, token: int
) -> FencedOutError | None:
    """Raise the match's fence to ``token`` unless it is higher; the refusal when it is (nothing
    changed). ``known``: fences read in this transaction, kept up to date. NotFoundError for no
    such match."""
    stored = known.get(match_id)
    if stored is not None and stored > token:
        return FencedOutError(match_id, token, stored)
    if stored != token:
        values = {"match": match_id, "token": token, "new_fence": token}
        if connection.execute(_RAISE_FENCE, values).rowcount != 1:
            found = fence_of(connection, match_id)
            if found is None:
                raise NotFoundError(f"no match {match_id}")
            known[match_id] = found
            return FencedOutError(match_id, token, found)
        known[match_id] = token
    return None


def fence_of(connection: Connection, match_id: int) -> int | None:
    """The match's stored fencing token, or None for no such match."""
    found = connection.execute(select(Match.fence).where(Match.id == match_id)).scalar()
    return None if found is None else int(found)


def claim_fences(connection: Connection, code: str, token: int) -> None:
    """Raise the ``fence`` of every match of room ``code`` to ``token`` (`Writer.claim_room`).
    Raises `FencedOutError` (its ``stored``: the highest fence found) when a match of the room
    already holds a higher token; a room with no match passes."""
    connection.execute(_DROP_OLD_HANDOFFS, {"room": code, "token": token})
    connection.execute(_RAISE_ROOM_FENCE, {"room": code, "token": token, "new_fence": token})
    stored = connection.execute(select(func.max(Match.fence)).where(Match.code == code)).scalar()
    if stored is not None and stored > token:
        raise FencedOutError(code, token, int(stored))
