"""Hints in the store (issue 16): every hint a player asked for, and the room's hints of a round.
A hint is not game state: it never changes a room's version, but the table and the history show it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from app.store.errors import StoreClosedError
from app.store.models import Hint
from app.store.writer import Writer, now_utc

__all__ = ["HintRow", "HintStore"]


@dataclass(frozen=True, slots=True)
class HintRow:
    """One hint used: ``seat`` was shown ``action`` (RECORD.md JSON) when ``seq`` actions of round
    ``round_index`` (from 0) were stored."""

    round_index: int
    seq: int
    seat: int
    action: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """``{"round": r, "seq": n, "seat": s, "action": {...}}``."""
        return {"round": self.round_index, "seq": self.seq, "seat": self.seat, "action": self.action}


class HintStore(Writer):
    """The hint writes and reads of `app.store.repository.Store`."""

    _read_engine: AsyncEngine | None

    async def add_hint(
        self,
        match_id: int,
        round_index: int,
        seq: int,
        seat: int,
        action: dict[str, Any],
    ) -> None:
        """Store one hint used (see `HintRow`); `FencedOutError` from a stale `fenced` view."""
        values = {
            "match_id": match_id,
            "round_index": round_index,
            "seq": seq,
            "seat": seat,
            "action": action,
            "created_at": now_utc(),
        }

        def run(connection: Connection) -> None:
            connection.execute(insert(Hint).values(**values))

        await self._submit(run, match=match_id)

    async def load_hints(self, match_id: int, round_index: int | None = None) -> list[HintRow]:
        """The match's hints in the order they were given, only round ``round_index``'s when given."""
        if self._read_engine is None:
            raise StoreClosedError("the store is not started")
        query = select(Hint).where(Hint.match_id == match_id)
        if round_index is not None:
            query = query.where(Hint.round_index == round_index)
        async with AsyncSession(self._read_engine) as session, session.begin():
            found = await session.scalars(query.order_by(Hint.id))
            return [HintRow(h.round_index, h.seq, h.seat, dict(h.action)) for h in found]
