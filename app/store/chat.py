"""A room's chat in the store: its lines (texts and quick reactions, each with where the play
stood) and the host's chat rules. Chat never changes a room's version: it is not game state.

Each line belongs to one match (the admin reads a match's own lines, `ChatStore.load_chat`); the
table shows the room's conversation across its matches (`ChatStore.load_room_chat`). A line is
known by its number in its room (1, 2, … across the room's matches, `ChatRow.id`), stored with it
in its insert (`app.store.models.ChatLine.number`), never by the database's counter of every room's
lines, which would tell anyone how much the whole server's chat holds."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from app.store.errors import NotFoundError, StoreClosedError
from app.store.models import ChatLine, Match
from app.store.writer import Writer, now_utc

__all__ = [
    "ChatRow",
    "ChatStore",
]


@dataclass(frozen=True, slots=True)
class ChatRow:
    """One stored chat line: ``text`` or ``reaction`` (one of the two), from ``seat`` (None: a
    spectator, ``watcher`` its public tag) under ``name``, sent when ``seq`` actions of round
    ``round_index`` of the room's match number ``room_match`` (from 1) were stored."""

    id: int
    seat: int | None
    name: str
    text: str | None
    reaction: str | None
    round_index: int
    seq: int
    created_at: datetime
    room_match: int = 1
    watcher: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The line as docs/protocol.md's ``chat`` message carries it (``at``: Unix ms)."""
        return {
            "id": self.id,
            "seat": self.seat,
            "name": self.name,
            "text": self.text,
            "reaction": self.reaction,
            "round": self.round_index,
            "seq": self.seq,
            "at": int(self.created_at.timestamp() * 1000),
            "match": self.room_match,
            "watcher": self.watcher,
        }

    @classmethod
    def of(cls, line: ChatLine, room_match: int) -> ChatRow:
        """The row of a stored line of the room's match number ``room_match``."""
        return cls(
            line.number,
            line.seat,
            line.name,
            line.text,
            line.reaction,
            line.round_index,
            line.seq,
            line.created_at,
            room_match,
            line.watcher,
        )


class ChatStore(Writer):
    """The chat writes and reads of `app.store.repository.Store`."""

    _read_engine: AsyncEngine | None

    async def add_chat(
        self,
        match_id: int,
        seat: int | None,
        name: str,
        *,
        text: str | None = None,
        reaction: str | None = None,
        round_index: int = 0,
        seq: int = 0,
        watcher: str | None = None,
        room_match: int = 1,
    ) -> ChatRow:
        """Store one chat line (a ``text`` or a ``reaction``; ``watcher``: a spectator's public tag,
        `app.rooms.watchers.watcher_tag`) of match ``match_id``, the room's match number
        ``room_match`` (as the room knows it; reads take it from the match); returns it as stored.
        Its number in the room (`ChatRow.id`) is given in the same statement that stores it: one
        more than the room's last line's. Raises ValueError unless exactly one of ``text`` and
        ``reaction`` is given; `FencedOutError` from a stale `fenced` view (`app.store.Store`)."""
        if (text is None) == (reaction is None):
            raise ValueError("a chat line is a text or a reaction")
        now = now_utc()
        values = {
            "match_id": match_id,
            "seat": seat,
            "name": name,
            "text": text,
            "reaction": reaction,
            "round_index": round_index,
            "seq": seq,
            "created_at": now,
            "watcher": watcher,
        }

        def run(connection: Connection) -> int:
            numbered = insert(ChatLine).values(**values, number=_next_number(match_id))
            return int(connection.execute(numbered.returning(ChatLine.number)).scalar_one())

        number = await self._submit(run, match=match_id)
        return ChatRow(number, seat, name, text, reaction, round_index, seq, now, room_match, watcher)

    async def set_chat_rules(self, match_id: int, rules: dict[str, Any]) -> None:
        """Store the host's chat rules (``{"spectators": bool, "muted": [seat, …], "muted_spectators":
        [tag, …]}``); raises NotFoundError for an unknown match, `FencedOutError` from a stale
        `fenced` view."""

        def run(connection: Connection) -> None:
            changed = connection.execute(update(Match).where(Match.id == match_id).values(chat_rules=rules))
            if changed.rowcount != 1:
                raise NotFoundError(f"no match {match_id}")

        await self._submit(run, match=match_id)

    async def load_chat(
        self, match_id: int, last: int | None = None
    ) -> tuple[dict[str, Any] | None, list[ChatRow]]:
        """The match's chat rules (None: the defaults) and its own chat lines in order, only the
        ``last`` ones when given (what the admin reads of one match)."""
        return await self._read_chat(match_id, last, room=False)

    async def load_room_chat(
        self, match_id: int, last: int | None = None
    ) -> tuple[dict[str, Any] | None, list[ChatRow]]:
        """The match's chat rules (None: the defaults) and the chat lines of its room up to it
        (this match's and its room's earlier matches', Play again) in order, only the ``last`` ones
        when given: the conversation the table carries on across a room's matches. Each row says
        its match (`ChatRow.room_match`)."""
        return await self._read_chat(match_id, last, room=True)

    async def _read_chat(
        self, match_id: int, last: int | None, *, room: bool
    ) -> tuple[dict[str, Any] | None, list[ChatRow]]:
        if self._read_engine is None:
            raise StoreClosedError("the store is not started")
        async with AsyncSession(self._read_engine) as session, session.begin():
            match = (
                await session.execute(
                    select(Match.chat_rules, Match.code, Match.room_match).where(Match.id == match_id)
                )
            ).one_or_none()
            if match is None:
                return None, []
            rules, code, number = match
            query = select(ChatLine, Match.room_match).join(Match, Match.id == ChatLine.match_id)
            if room:
                query = query.where(Match.code == code, Match.room_match <= number)
            else:
                query = query.where(ChatLine.match_id == match_id)
            query = query.order_by(ChatLine.number.desc())
            if last is not None:
                query = query.limit(last)
            rows = [ChatRow.of(line, n) for line, n in await session.execute(query)]
        rows.reverse()
        return rules, rows


def _next_number(match_id: int) -> Any:
    """The number of the next line of match ``match_id``'s room, as a scalar subquery of its
    insert: one more than the highest of the room's lines (its matches', which share its code), 1
    for its first. The room's writes are one after another, so no other line of the room is
    numbered between this and its insert; two that were would break the unique (match, number)."""
    code = select(Match.code).where(Match.id == match_id).scalar_subquery()
    return (
        select(func.coalesce(func.max(ChatLine.number), 0) + 1)
        .join(Match, Match.id == ChatLine.match_id)
        .where(Match.code == code)
        .scalar_subquery()
    )
