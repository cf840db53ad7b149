"""Creating a match and rewriting its seats one at a time (the store's writes that are not a
room's change; `app.store.repository.Store` adds those).

"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Connection

from app.store.batches import set_version
from app.store.dbclock import db_now_s
from app.store.errors import FencedOutError, NotFoundError
from app.store.models import (
    Match,
    MatchTurn,
    Seat,
)
from app.store.rows import (
    SeatSpec,
    check_kind,
)
from app.store.writer import Writer, now_utc

__all__ = [
    "MatchWrites",
]


class MatchWrites(Writer):
    """The writes of `app.store.repository.Store` that create a match or rewrite one seat."""

    async def create_match(
        self,
        code: str,
        variant: str,
        options: dict[str, Any],
        seat_count: int,
        turn_timer_s: float,
        host_token_hash: str,
        seats: Sequence[SeatSpec],
        start: dict[str, Any] | None = None,
        *,
        room_match: int = 1,
        version: int = 0,
        open_table: bool = False,
        chat_rules: dict[str, Any] | None = None,
        hints: bool = False,
        bot_share: str | None = None,
        creator_site: str | None = None,
    ) -> int:
        """Store a new match (status ``waiting``) with its seats; returns its id.

        ``options`` and ``start`` are RECORD.md's objects; ``seats`` lists ``seat_count`` seats.
        A new room's first match is ``room_match`` 1 at ``version`` 0; Play again stores the
        room's next match (`next_match`); one stored ``open_table`` is listed now, on the
        database's clock (`Match.listed_at`); ``bot_share``: whom its room's bot decisions count
        for (`Match.bot_share`; None: not known), ``creator_site`` its creator's /48
        (`Match.creator_site`; None: none or not known). Raises ValueError when the seats do not number
        ``seat_count`` or one is out of place, ConflictError when the room ``code`` already has a
        match numbered ``room_match`` (for 1: the code is taken). From a `fenced` view (the room
        owner's token, docs/cluster.md) the new match holds the token, and Play again's is refused
        with `FencedOutError` when the room's previous match holds a higher one.
        """
        if len(seats) != seat_count:
            raise ValueError(f"{seat_count} seats needed, got {len(seats)}")
        misplaced = [i for i, spec in enumerate(seats) if spec.seat not in (None, i)]
        if misplaced:
            raise ValueError(f"seats[{misplaced[0]}] is seat {seats[misplaced[0]].seat}")
        now = now_utc()
        fence = self.fence

        def run(connection: Connection) -> int:
            if fence is not None and room_match > 1:
                _check_previous(connection, code, room_match - 1, fence)
            inserted = connection.execute(
                insert(Match)
                .values(
                    code=code,
                    variant=variant,
                    options=options,
                    seat_count=seat_count,
                    status="waiting",
                    turn_timer_s=turn_timer_s,
                    start=start,
                    created_at=now,
                    host_token_hash=host_token_hash,
                    room_match=room_match,
                    open_table=open_table,
                    listed_at=db_now_s() if open_table else None,
                    chat_rules=chat_rules,
                    hints=hints,
                    bot_share=bot_share,
                    creator_site=creator_site,
                    fence=fence or 0,
                )
                .returning(Match.id)
            )
            match_id: int = inserted.scalar_one()
            connection.execute(insert(MatchTurn).values(match_id=match_id, version=version))
            connection.execute(
                insert(Seat),
                [
                    {
                        "match_id": match_id,
                        "seat": index,
                        "name": spec.name,
                        "kind": spec.kind,
                        "bot_level": spec.bot_level,
                        "token_hash": spec.token_hash,
                        "ready": spec.ready,
                        "replaced": spec.replaced,
                        "former_token_hash": spec.former_token_hash,
                        "updated_at": now,
                    }
                    for index, spec in enumerate(seats)
                ],
            )
            return match_id

        return await self._submit(run, rekeys=fence is not None)

    async def update_seat(
        self,
        match_id: int,
        seat: int,
        *,
        name: str | None,
        kind: str,
        bot_level: str | None,
        token_hash: str | None,
        version: int | None = None,
    ) -> None:
        """Overwrite a seat (a player leaves: ``kind="empty"``; a bot takes over: ``"bot"``), and
        the match's version when given. Raises ValueError for a bad kind, NotFoundError when the
        seat does not exist."""
        check_kind(kind, bot_level)
        values: dict[str, Any] = {
            "name": name,
            "kind": kind,
            "bot_level": bot_level,
            "token_hash": token_hash,
            "cover": None,
            "updated_at": now_utc(),
        }

        def run(connection: Connection) -> None:
            changed = connection.execute(
                update(Seat).where(Seat.match_id == match_id, Seat.seat == seat).values(values)
            )
            if changed.rowcount != 1:
                raise NotFoundError(f"match {match_id} has no seat {seat}")
            if version is not None:
                set_version(connection, match_id, version)

        await self._submit(run, match=match_id)

    async def claim_seat(
        self,
        match_id: int,
        seat: int,
        name: str,
        token_hash: str,
        *,
        take_bot: bool = False,
        version: int | None = None,
    ) -> bool:
        """Seat a player: succeeds only if the seat is ``empty`` (or, with ``take_bot``, a bot).

        One conditional UPDATE through the writer, so of concurrent claims for one seat exactly
        one wins. Returns whether the seat was claimed (False also when there is no such seat);
        on success also stores the match's version when given.
        """
        kinds = ("empty", "bot") if take_bot else ("empty",)
        now = now_utc()

        def run(connection: Connection) -> bool:
            changed = connection.execute(
                update(Seat)
                .where(Seat.match_id == match_id, Seat.seat == seat, Seat.kind.in_(kinds))
                .values(
                    name=name,
                    kind="human",
                    bot_level=None,
                    replaced=Seat.bot_level,  # the bot it was taken from (the row's value before)
                    token_hash=token_hash,
                    cover=None,
                    updated_at=now,
                )
            )
            if changed.rowcount != 1:
                return False
            if version is not None:
                set_version(connection, match_id, version)
            return True

        return await self._submit(run, match=match_id)


def _check_previous(connection: Connection, code: str, room_match: int, token: int) -> None:
    """Play again under a lease: raise the fence of the room's match ``room_match`` to ``token``,
    or raise `FencedOutError` when it holds a higher one (NotFoundError when there is no such match)."""
    previous = (Match.code == code, Match.room_match == room_match)
    changed = connection.execute(
        update(Match).where(*previous, Match.fence <= token).values(fence=token)
    ).rowcount
    if changed == 1:
        return
    stored = connection.execute(select(Match.fence).where(*previous)).scalar()
    if stored is None:
        raise NotFoundError(f"room {code} has no match {room_match}")
    raise FencedOutError(code, token, int(stored))
