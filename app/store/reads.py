"""Reading stored matches: each load sees one consistent snapshot, on its own connection."""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, TypeVar

from sqlalchemy import ColumnElement, Select, and_, exists, func, not_, or_, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession
from sqlalchemy.orm import aliased

from app.store.dbclock import db_now_s
from app.store.errors import NotFoundError, StoreClosedError, store_error
from app.store.hints import HintRow
from app.store.models import (
    DeploymentKey,
    Hint,
    Match,
    MatchAction,
    Round,
    Seat,
    Tally,
)
from app.store.records import record_of
from app.store.rows import (
    ActionRow,
    MatchRow,
    RoomRow,
    RoundRow,
    SeatRow,
    TallyRow,
)

__all__ = [
    "ACTIVE_STATUSES",
    "MatchReads",
    "RoomMatch",
    "RoomStatus",
    "idle_since",
    "read_outcome",
]

ACTIVE_STATUSES: Final = ("waiting", "playing")
"""Statuses of the matches a restarted server must bring back (`Store.active_matches`)."""


def idle_since(cutoff: datetime) -> ColumnElement[bool]:
    """SQL: the match is unfinished and nothing about it was stored at or after ``cutoff`` (no
    action, no round dealt or ended, no seat changed, not created or started since)."""
    return and_(
        Match.status.in_(ACTIVE_STATUSES),
        Match.created_at < cutoff,
        or_(Match.started_at.is_(None), Match.started_at < cutoff),
        not_(exists().where(MatchAction.match_id == Match.id, MatchAction.created_at >= cutoff)),
        not_(
            exists().where(
                Round.match_id == Match.id,
                or_(Round.started_at >= cutoff, and_(Round.ended_at.is_not(None), Round.ended_at >= cutoff)),
            )
        ),
        not_(exists().where(Seat.match_id == Match.id, Seat.updated_at >= cutoff)),
    )


def _latest(code: str) -> Select[int]:
    """SQL: the id of room ``code``'s latest match (the highest ``room_match``)."""
    return select(Match.id).where(Match.code == code).order_by(Match.room_match.desc()).limit(1)


@dataclass(frozen=True, slots=True)
class RoomMatch:
    """One match of a room, as the admin links them: its ``id``, ``number`` in the room (from 1)
    and ``status``."""

    id: int
    number: int
    status: str


@dataclass(frozen=True, slots=True)
class RoomStatus:
    """A room's latest match as the lobby's "Your tables" lists it (`MatchReads.room_statuses`):
    the room ``code``, the match's ``number`` in the room (from 1), ``variant``, ``status`` and
    ``seats`` (in seat order); its ``id``, ``options`` (RECORD.md's, as stored: a broken row's
    may be no object) and ``seat_count``, with which the rules of its game are made again
    (whether its room can be opened)."""

    code: str
    number: int
    variant: str
    status: str
    seats: tuple[SeatRow, ...]
    id: int = 0
    options: dict[str, Any] = field(default_factory=dict)
    seat_count: int = 0


_CHUNK = 500  # ids per IN (...) list when loading many matches


@contextlib.asynccontextmanager
async def _failures_as_store_errors() -> AsyncIterator[None]:
    """A database failure inside as `app.store.StoreError` (`store_error`), as writes raise it."""
    try:
        yield
    except (SQLAlchemyError, TimeoutError, OSError) as error:
        raise store_error(error) from error


class MatchReads:
    """The reads of `app.store.repository.Store` (it provides ``_read_engine``)."""

    _read_engine: AsyncEngine | None

    # -- reads ---------------------------------------------------------------------------------

    async def load_match(self, code: str) -> MatchRow | None:
        """The latest match of room ``code`` (seats, rounds, actions and tallies), or None."""
        found = await self._load(Match.id == _latest(code).scalar_subquery())
        return found[0] if found else None

    async def deployment_key(self, name: str) -> str:
        """The deployment's secret ``name`` (`app.store.models.DeploymentKey`, made by migration
        0018; hex), the same for every process on this database. Raises `NotFoundError` when it
        does not exist and `app.store.StoreError` for a database failure."""
        if self._read_engine is None:
            raise StoreClosedError("the store is not started")
        async with _failures_as_store_errors(), AsyncSession(self._read_engine) as session:
            value = await session.scalar(select(DeploymentKey.value).where(DeploymentKey.name == name))
        if value is None:
            raise NotFoundError(f"no deployment key {name!r}")
        return value

    async def room_matches(self, code: str) -> list[RoomMatch]:
        """Every match played in room ``code``, in order (match 1 first): ``(id, number,
        status)`` each; empty for an unknown code. Raises `app.store.StoreError` for a database
        failure."""
        if self._read_engine is None:
            raise StoreClosedError("the store is not started")
        async with _failures_as_store_errors(), AsyncSession(self._read_engine) as session:
            query = (
                select(Match.id, Match.room_match, Match.status)
                .where(Match.code == code)
                .order_by(Match.room_match)
            )
            return [RoomMatch(r.id, r.room_match, r.status) for r in await session.execute(query)]

    async def room_statuses(self, codes: Sequence[str]) -> dict[str, RoomStatus]:
        """The latest match of each room in ``codes`` (`RoomStatus`: no round, no action), by
        code; an unknown code is left out. Two reads, whatever the matches' length: what a list
        of rooms costs without loading them. Raises `app.store.StoreError` for a database failure."""
        if self._read_engine is None:
            raise StoreClosedError("the store is not started")
        if not codes:
            return {}
        other = aliased(Match)
        latest = select(func.max(other.room_match)).where(other.code == Match.code).scalar_subquery()
        async with _failures_as_store_errors(), AsyncSession(self._read_engine) as session, session.begin():
            query = select(
                Match.id,
                Match.code,
                Match.room_match,
                Match.variant,
                Match.status,
                Match.options,
                Match.seat_count,
            ).where(Match.code.in_(list(codes)), Match.room_match == latest)
            matches = (await session.execute(query)).all()
            seats = _by_match(await _select_for(session, Seat, [m.id for m in matches], Seat.seat))
            return {
                m.code: RoomStatus(
                    m.code,
                    m.room_match,
                    m.variant,
                    m.status,
                    tuple(_seat_row(s) for s in seats.get(m.id, [])),
                    m.id,
                    {} if m.options is None else m.options,  # as stored: a broken row's may be no object
                    m.seat_count,
                )
                for m in matches
            }

    async def load_match_by_id(self, match_id: int) -> MatchRow | None:
        """The match with id ``match_id``, or None."""
        found = await self._load(Match.id == match_id)
        return found[0] if found else None

    async def match_seats(self, match_id: int, round_index: int) -> tuple[tuple[SeatRow, ...], bool]:
        """The seats of match ``match_id`` in seat order (empty for an unknown id) and whether its
        round ``round_index`` (from 0) has ended: what a review checks before the match is read whole
        (`app.rooms.reviewing.reviewable_earlier`). Raises `app.store.StoreError` for a database
        failure."""
        if self._read_engine is None:
            raise StoreClosedError("the store is not started")
        async with _failures_as_store_errors(), AsyncSession(self._read_engine) as session, session.begin():
            seats = await session.scalars(select(Seat).where(Seat.match_id == match_id).order_by(Seat.seat))
            rows = tuple(_seat_row(s) for s in seats)
            ended = await session.scalar(
                select(Round.ended_at).where(Round.match_id == match_id, Round.index == round_index)
            )
            return rows, ended is not None

    async def load_room(self, code: str, number: int | None = None) -> RoomRow | None:
        """The latest match of room ``code`` (or its match ``number``, from 1: an earlier one after
        Play again) as a room needs it (`RoomRow`): its seats, its last two rounds with their
        actions and hints, and the outcomes of all earlier rounds, but no earlier action; None for an
        unknown code or number. Its cost grows with the last rounds, not with the match's
        history (restart, issue 13). Raises ValueError when an earlier round has no stored end,
        `app.store.StoreError` for a database failure."""
        if self._read_engine is None:
            raise StoreClosedError("the store is not started")
        async with _failures_as_store_errors(), AsyncSession(self._read_engine) as session, session.begin():
            # the database's own clock with the row: how long ago its turn began, on one clock
            first_row = (
                await session.execute(
                    select(Match, db_now_s()).where(
                        Match.id == _latest(code).scalar_subquery()
                        if number is None
                        else and_(Match.code == code, Match.room_match == number)
                    )
                )
            ).first()
            if first_row is None:
                return None
            match, read_at = first_row
            turn_at, handed = match.turn_at, match.handed_fence is not None
            handed_at = match.handed_at if handed else None
            listed_at = match.listed_at
            mid = match.id
            seats = list(await session.scalars(select(Seat).where(Seat.match_id == mid).order_by(Seat.seat)))
            ended = (
                await session.execute(
                    select(Round.index, Round.outcome).where(Round.match_id == mid).order_by(Round.index)
                )
            ).all()
            first = ended[-2][0] if len(ended) > 1 else 0  # the last two rounds are replayed
            recent = (Round.match_id == mid, Round.index >= first)
            rounds = list(await session.scalars(select(Round).where(*recent).order_by(Round.index)))
            actions = list(
                await session.scalars(
                    select(MatchAction)
                    .where(MatchAction.match_id == mid, MatchAction.round_index >= first)
                    .order_by(MatchAction.round_index, MatchAction.seq)
                )
            )
            tallies = list(
                await session.scalars(
                    select(Tally)
                    .where(Tally.match_id == mid, Tally.round_index >= first)
                    .order_by(Tally.round_index, Tally.seat)
                )
            )
            row = _assemble([match], seats, rounds, actions, tallies)[0]
            last = ended[-1][0] if ended else -1
            hints = tuple(
                HintRow(h.round_index, h.seq, h.seat, dict(h.action))
                for h in await session.scalars(
                    select(Hint).where(Hint.match_id == mid, Hint.round_index >= last - 1).order_by(Hint.id)
                )
            )
            sums = (
                await session.execute(
                    select(Tally.seat, func.sum(Tally.received))
                    .where(Tally.match_id == mid, Tally.round_index < first)
                    .group_by(Tally.seat)
                )
            ).all()
        outcomes = [outcome for index, outcome in ended if index < first]
        if any(outcome is None for outcome in outcomes):
            raise ValueError(f"match {code}: a round before the last two has no stored end")
        received = [0] * row.seat_count
        for seat, total in sums:
            received[seat] = int(total or 0)
        return RoomRow(
            row,
            tuple(o for o in outcomes if o is not None),
            tuple(received),
            hints,
            read_at=float(read_at),
            turn_at=turn_at,
            handed=handed,
            handed_at=handed_at,
            listed_at=listed_at,
        )

    async def count_active(self) -> int:
        """How many matches are ``waiting`` or ``playing``."""
        if self._read_engine is None:
            raise StoreClosedError("the store is not started")
        async with AsyncSession(self._read_engine) as session:
            query = select(func.count()).select_from(Match).where(Match.status.in_(ACTIVE_STATUSES))
            return int(await session.scalar(query) or 0)

    async def idle_matches(self, cutoff: datetime, limit: int = 500) -> list[tuple[int, str]]:
        """(id, code) of up to ``limit`` unfinished matches idle since before ``cutoff``
        (`idle_since`), oldest first."""
        if self._read_engine is None:
            raise StoreClosedError("the store is not started")
        async with AsyncSession(self._read_engine) as session:
            query = select(Match.id, Match.code).where(idle_since(cutoff)).order_by(Match.id).limit(limit)
            return [(row.id, row.code) for row in await session.execute(query)]

    async def active_matches(self) -> list[MatchRow]:
        """Every match that is ``waiting`` or ``playing``, by id: what a restarted server
        brings back."""
        return await self._load(Match.status.in_(ACTIVE_STATUSES))

    async def export_record(self, match: int | str) -> dict[str, Any]:
        """RECORD.md's ``domeng-record/1`` document of a match (by id or room code), from the
        database alone: seats as display names (`seat_display_name`), ``start`` if any, and
        every stored round, the last one possibly unfinished. Each round also carries its
        ``seed`` and ``commitment``.

        Raises NotFoundError for an unknown match.
        """
        row = await (self.load_match_by_id(match) if isinstance(match, int) else self.load_match(match))
        if row is None:
            raise NotFoundError(f"no match {match!r}")
        return record_of(row)

    async def _load(self, where: ColumnElement[bool]) -> list[MatchRow]:
        if self._read_engine is None:
            raise StoreClosedError("the store is not started")
        async with _failures_as_store_errors(), AsyncSession(self._read_engine) as session, session.begin():
            matches = list(await session.scalars(select(Match).where(where).order_by(Match.id)))
            ids = [m.id for m in matches]
            seats = await _select_for(session, Seat, ids, Seat.seat)
            rounds = await _select_for(session, Round, ids, Round.index)
            actions = await _select_for(session, MatchAction, ids, MatchAction.round_index, MatchAction.seq)
            tallies = await _select_for(session, Tally, ids, Tally.round_index, Tally.seat)
            return _assemble(matches, seats, rounds, actions, tallies)


_M = TypeVar("_M", Seat, Round, MatchAction, Tally)


async def _select_for(session: AsyncSession, model: type[_M], ids: Sequence[int], *order: Any) -> list[_M]:
    """The rows of ``model`` of the matches ``ids``, by match then ``order``."""
    rows: list[_M] = []
    for at in range(0, len(ids), _CHUNK):
        chunk = ids[at : at + _CHUNK]
        query = select(model).where(model.match_id.in_(chunk)).order_by(model.match_id, *order)
        rows += await session.scalars(query)
    return rows


def _by_match(rows: Iterable[_M]) -> dict[int, list[_M]]:
    grouped: dict[int, list[_M]] = defaultdict(list)
    for row in rows:
        grouped[row.match_id].append(row)
    return grouped


def _seat_row(s: Seat) -> SeatRow:
    return SeatRow(
        s.seat,
        s.name,
        s.kind,
        s.bot_level,
        s.token_hash,
        s.updated_at,
        s.ready,
        s.cover,
        s.replaced,
        s.former,
        s.former_token_hash,
    )


def read_outcome(match: Match, stored: Round, last: bool) -> dict[str, Any] | None:
    """Round ``stored``'s outcome as the store reads it (None while it is played): as stored, but
    when it is the ``last`` round of a match the host ended (``finished`` with ``host_stop``), its
    ``match_over`` is true, as the match's status says: the match ended with that round (RULES.md
    "Match end"). A release before the per-round ``match_over`` counted the host's stop stored it
    false, and an older process still running beside a newer one (docs/cluster.md) can still do
    so: the status, stored with the stop in one transaction by every release, decides."""
    outcome = stored.outcome
    ended_by_host = match.status == "finished" and match.host_stop
    if last and ended_by_host and outcome is not None and not outcome.get("match_over"):
        return {**outcome, "match_over": True}
    return outcome


def _assemble(
    matches: Sequence[Match],
    seats: Sequence[Seat],
    rounds: Sequence[Round],
    actions: Sequence[MatchAction],
    tallies: Sequence[Tally],
) -> list[MatchRow]:
    seats_of, rounds_of = _by_match(seats), _by_match(rounds)
    actions_of: dict[tuple[int, int], list[ActionRow]] = defaultdict(list)
    for a in actions:
        actions_of[a.match_id, a.round_index].append(
            ActionRow(a.seq, a.version, a.seat, a.action, a.actor, a.created_at)
        )
    tallies_of: dict[tuple[int, int], list[TallyRow]] = defaultdict(list)
    for t in tallies:
        tallies_of[t.match_id, t.round_index].append(
            TallyRow(t.seat, t.stones, t.received, t.paid, t.points, t.pending)
        )
    return [
        MatchRow(
            id=m.id,
            code=m.code,
            variant=m.variant,
            options=m.options,
            seat_count=m.seat_count,
            status=m.status,
            turn_timer_s=m.turn_timer_s,
            start=m.start,
            version=m.version,
            created_at=m.created_at,
            started_at=m.started_at,
            finished_at=m.finished_at,
            host_token_hash=m.host_token_hash,
            open_table=m.open_table,
            closed_reason=m.closed_reason,
            room_match=m.room_match,
            chat_rules=m.chat_rules,
            hints=m.hints,
            host_stop=m.host_stop,
            bot_share=m.bot_share,
            creator_site=m.creator_site,
            unattended_rounds=m.unattended_rounds,
            seats=tuple(_seat_row(s) for s in seats_of[m.id]),
            rounds=tuple(
                RoundRow(
                    index=r.index,
                    seed=r.seed,
                    commitment=r.commitment,
                    deal=r.deal,
                    started_at=r.started_at,
                    ended_at=r.ended_at,
                    outcome=read_outcome(m, r, last=r is rounds_of[m.id][-1]),
                    table_after=r.table_after,
                    actions=tuple(actions_of[m.id, r.index]),
                    tallies=tuple(tallies_of[m.id, r.index]),
                )
                for r in rounds_of[m.id]
            ),
        )
        for m in matches
    ]
