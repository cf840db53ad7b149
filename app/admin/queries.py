"""Read-only queries of the admin area over the store's tables: the match list with its filters,
and the players' totals. Portable SQL (SQLite and PostgreSQL) through SQLAlchemy Core.

*Abandoned* (docs/admin.md): a match an admin closed (stored status ``abandoned``), or an
unfinished one (``waiting`` or ``playing``) with no stored change since ``cutoff``: no action,
no round dealt or ended, no seat changed, not created or started. `idle_since` is that test in SQL,
and `last_active` the same in Python, so a listed status always agrees with the filter.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from sqlalchemy import (
    ColumnElement,
    and_,
    case,
    exists,
    false,
    func,
    literal,
    not_,
    null,
    or_,
    select,
    true,
    union_all,
)
from sqlalchemy.ext.asyncio import AsyncConnection

from app.admin.schemas import (
    EffectiveStatus,
    MatchPage,
    MatchResult,
    MatchSummary,
    PlayerPage,
    PlayerTotals,
    SeatAdmin,
)
from app.store import ACTIVE_STATUSES, SeatRow, Store, seat_display_name
from app.store.models import Match, MatchAction, Round, Seat, Tally
from app.store.reads import idle_since
from engine.core import shared_places
from engine.rules.domeng import domeng_standing_key, domeng_standings
from engine.rules.kozel import kozel_standing_key
from engine.variants import VARIANTS, find_variant

__all__ = [
    "MatchFilter",
    "effective_status",
    "last_active",
    "list_matches",
    "list_players",
    "result_of",
    "seat_admin",
]


@dataclass(frozen=True, slots=True)
class MatchFilter:
    """The match list's filters: ``variant``, effective ``status``, ``player`` (part of a seat's
    name, of the person a bot replaced there (``former``), or bot level, any case),
    ``since``/``until`` (creation dates in UTC, both inclusive), the page (from 1) of
    ``per_page`` rows, and the room's ``code`` (exact: every match of that room)."""

    variant: str | None = None
    status: EffectiveStatus | None = None
    player: str | None = None
    since: date | None = None
    until: date | None = None
    page: int = 1
    per_page: int = 50
    code: str | None = None


def _status_filter(status: EffectiveStatus, cutoff: datetime) -> ColumnElement[bool]:
    if status == "abandoned":
        return or_(Match.status == "abandoned", idle_since(cutoff))
    if status == "finished":
        return Match.status == "finished"
    return and_(Match.status == status, not_(idle_since(cutoff)))


def _like(value: str) -> str:
    return value.strip().lower()


def _bot_word(needle: str, kind: Any = Seat.kind) -> ColumnElement[bool]:
    """Bots show as "Bot 2 (greedy)": a search for (part of) the word "bot" finds every bot seat
    (``kind``: the seat kind's column, `Seat.kind` or a subquery's)."""
    return kind == "bot" if needle in "bot" else false()


def _filters(f: MatchFilter, cutoff: datetime) -> list[ColumnElement[bool]]:
    where: list[ColumnElement[bool]] = []
    if f.variant:
        where.append(Match.variant == f.variant)
    if f.status:
        where.append(_status_filter(f.status, cutoff))
    if f.player and f.player.strip():
        needle = _like(f.player)
        where.append(
            exists().where(
                Seat.match_id == Match.id,
                or_(
                    func.lower(Seat.name).contains(needle, autoescape=True),
                    func.lower(Seat.former).contains(needle, autoescape=True),
                    func.lower(Seat.bot_level).contains(needle, autoescape=True),
                    _bot_word(needle),
                ),
            )
        )
    if f.code and f.code.strip():
        where.append(Match.code == f.code.strip())
    if f.since:
        where.append(Match.created_at >= datetime.combine(f.since, time(), UTC))
    if f.until:
        where.append(Match.created_at < datetime.combine(f.until + timedelta(days=1), time(), UTC))
    return where


def seat_admin(seat: SeatRow) -> SeatAdmin:
    """A stored seat as the admin API shows it."""
    return SeatAdmin(
        seat=seat.seat,
        kind=seat.kind,
        name=seat.name,
        bot_level=seat.bot_level,
        display_name=seat_display_name(seat),
        former=seat.former,
    )


def last_active(times: Iterable[datetime | None]) -> datetime:
    """The latest of ``times`` (a match's creation, start, actions, rounds and seats)."""
    return max(t for t in times if t is not None)


def effective_status(stored: str, last_active_at: datetime, cutoff: datetime) -> EffectiveStatus:
    """The status the admin area shows: ``abandoned`` for an unfinished match idle since before
    ``cutoff``, else the stored one."""
    if stored in ACTIVE_STATUSES and last_active_at < cutoff:
        return "abandoned"
    assert stored in ("waiting", "playing", "finished", "abandoned")
    return stored  # type: ignore[return-value]


def _leaders(values: Sequence[tuple[int, ...]]) -> list[int]:
    best = min(values)
    return [seat for seat, v in enumerate(values) if v == best]


def result_of(
    variant: str,
    outcomes: Sequence[dict[str, Any]],
    received: Sequence[int] | None = None,
    finished: bool = False,
) -> MatchResult | None:
    """The standings after the finished rounds' stored ``outcomes`` (in order); None before any.
    They are final (``match_over``) when the last outcome ended the match by its options, or when
    the match is ``finished`` otherwise (a no-limit match the host ended after its last round).

    Domeng: stones and table after the last round, camat elections per seat, the stones each seat
    ``received`` over those rounds (the sum of its tallies), and the standings the engine ranks
    by them (`engine.rules.domeng.domeng_standings`: most elections, then fewest stones received).
    Kozel: recorded and pending points, the goat(s), fewest points first."""
    if not outcomes:
        return None
    last = outcomes[-1]
    over = bool(last.get("match_over")) or finished
    if find_variant(variant).unit == "points":
        points = list(last["points"])
        pending = list(last.get("pending") or [0] * len(points))
        keys = [kozel_standing_key(points, pending, s) for s in range(len(points))]
        order = sorted(range(len(points)), key=lambda s: (keys[s], s))
        return MatchResult(
            finished_rounds=len(outcomes),
            match_over=over,
            leaders=_leaders([(p,) for p in points]),
            standings=order,
            places=list(shared_places([keys[s] for s in order])),
            points=points,
            pending=list(last.get("pending") or []),
            goat=list(last.get("goat") or []),
        )
    stones = list(last["stones"])
    elections = [0] * len(stones)
    for outcome in outcomes:
        if outcome.get("camat_elected"):
            elections[outcome["winner"]] += 1
    totals = list(received) if received is not None else [0] * len(stones)
    order = [side[0] for side in domeng_standings(elections, totals)]
    return MatchResult(
        finished_rounds=len(outcomes),
        match_over=over,
        leaders=_leaders([(-e, r) for e, r in zip(elections, totals, strict=True)]),
        standings=order,
        places=list(shared_places([domeng_standing_key(elections, totals, s) for s in order])),
        stones=stones,
        table=last.get("table"),
        camat=last.get("camat"),
        camat_elections=elections,
        received=totals,
    )


async def _page_details(
    connection: AsyncConnection, ids: list[int]
) -> tuple[
    dict[int, list[SeatRow]],
    dict[int, list[datetime | None]],
    dict[int, list[dict[str, Any]]],
    dict[int, int],
    dict[int, dict[int, int]],
]:
    seats: dict[int, list[SeatRow]] = defaultdict(list)
    times: dict[int, list[datetime | None]] = defaultdict(list)
    outcomes: dict[int, list[dict[str, Any]]] = defaultdict(list)
    counts: dict[int, int] = defaultdict(int)
    for s in await connection.execute(
        select(Seat).where(Seat.match_id.in_(ids)).order_by(Seat.match_id, Seat.seat)
    ):
        seats[s.match_id].append(
            SeatRow(s.seat, s.name, s.kind, s.bot_level, s.token_hash, s.updated_at, former=s.former)
        )
        times[s.match_id].append(s.updated_at)
    rounds = select(Round.match_id, Round.index, Round.started_at, Round.ended_at, Round.outcome)
    for r in await connection.execute(
        rounds.where(Round.match_id.in_(ids)).order_by(Round.match_id, Round.index)
    ):
        counts[r.match_id] += 1
        times[r.match_id] += [r.started_at, r.ended_at]
        if r.outcome is not None:
            outcomes[r.match_id].append(r.outcome)
    latest = select(MatchAction.match_id, func.max(MatchAction.created_at).label("at"))
    for a in await connection.execute(
        latest.where(MatchAction.match_id.in_(ids)).group_by(MatchAction.match_id)
    ):
        times[a.match_id].append(a.at)
    received: dict[int, dict[int, int]] = defaultdict(dict)
    totals = select(Tally.match_id, Tally.seat, func.sum(Tally.received).label("received"))
    for t in await connection.execute(
        totals.where(Tally.match_id.in_(ids)).group_by(Tally.match_id, Tally.seat)
    ):
        received[t.match_id][t.seat] = int(t.received or 0)
    return seats, times, outcomes, counts, received


async def list_matches(store: Store, f: MatchFilter, cutoff: datetime, live: set[int]) -> MatchPage:
    """A page of the matches that pass ``f``, newest first (by id, which grows with creation).

    ``cutoff``: matches idle since before it count as abandoned; ``live``: ids of the matches the
    rooms of this server hold now (a room's latest match; its earlier ones are not live). Raises
    `app.store.StoreClosedError` when the store is not started."""
    where = _filters(f, cutoff)
    async with store.engine.connect() as connection:
        total = (await connection.execute(select(func.count()).select_from(Match).where(*where))).scalar_one()
        query = select(Match).where(*where).order_by(Match.id.desc())
        matches = list(await connection.execute(query.limit(f.per_page).offset((f.page - 1) * f.per_page)))
        seats, times, outcomes, counts, received = await _page_details(connection, [m.id for m in matches])
    items = []
    for m in matches:
        active_at = last_active([m.created_at, m.started_at, m.finished_at, *times[m.id]])
        status = effective_status(m.status, active_at, cutoff)
        items.append(
            MatchSummary(
                id=m.id,
                code=m.code,
                variant=m.variant,
                options=m.options,
                status=status,
                stored_status=m.status,
                abandoned_reason=None
                if status != "abandoned"
                else ("closed" if m.status == "abandoned" and m.closed_reason != "idle" else "idle"),
                live=m.id in live,
                room_match=m.room_match,
                host_stop=m.host_stop,
                created_at=m.created_at,
                started_at=m.started_at,
                finished_at=m.finished_at,
                last_active_at=active_at,
                round_count=counts[m.id],
                seats=[seat_admin(s) for s in seats[m.id]],
                result=result_of(
                    m.variant,
                    outcomes[m.id],
                    [received[m.id].get(s, 0) for s in range(m.seat_count)],
                    m.status == "finished",
                ),
            )
        )
    return MatchPage(items=items, page=f.page, per_page=f.per_page, total=total)


# -- players -------------------------------------------------------------------------------------


def _players_query(name: str | None) -> Any:
    per_seat = (
        select(
            Tally.match_id,
            Tally.seat,
            func.count().label("rounds"),
            func.sum(Tally.received).label("received"),
            func.sum(Tally.paid).label("paid"),
        )
        .group_by(Tally.match_id, Tally.seat)
        .subquery()
    )
    last = (
        select(Tally.match_id, func.max(Tally.round_index).label("last")).group_by(Tally.match_id).subquery()
    )
    final = (
        select(Tally.match_id, Tally.seat, Tally.points)
        .join(last, and_(Tally.match_id == last.c.match_id, Tally.round_index == last.c.last))
        .subquery()
    )
    # JSON paths are bound parameters on PostgreSQL: group the extracted seat in an outer query.
    elected = (
        select(Round.match_id, Round.outcome["winner"].as_integer().label("seat"))
        .where(Round.outcome["camat_elected"].as_boolean().is_(true()))
        .subquery()
    )
    camat = (
        select(elected.c.match_id, elected.c.seat, func.count().label("n"))
        .group_by(elected.c.match_id, elected.c.seat)
        .subquery()
    )
    # who sat in each seat: its holder (credited with the seat's rounds, stones and points) and,
    # for a person's seat the host gave to a bot during the match, that person (``former``: the
    # match counts for them, and as one they were replaced in)
    holders = select(
        Seat.match_id,
        Seat.seat,
        Seat.kind,
        Seat.name,
        Seat.bot_level,
        literal(1).label("held"),
    ).where(Seat.kind != "empty")
    formers = select(
        Seat.match_id,
        Seat.seat,
        literal("human").label("kind"),
        Seat.former.label("name"),
        null().label("bot_level"),
        literal(0).label("held"),
    ).where(Seat.former.is_not(None))
    who = union_all(holders, formers).subquery()
    held = who.c.held == 1
    query = (
        select(
            who.c.kind,
            who.c.name,
            who.c.bot_level,
            func.count(func.distinct(who.c.match_id)).label("matches"),
            func.coalesce(func.sum(per_seat.c.rounds), 0).label("rounds"),
            func.coalesce(func.sum(per_seat.c.received), 0).label("received"),
            func.coalesce(func.sum(per_seat.c.paid), 0).label("paid"),
            func.coalesce(func.sum(camat.c.n), 0).label("elections"),
            func.coalesce(func.sum(final.c.points), 0).label("points"),
            func.count(func.distinct(case((not_(held), who.c.match_id)))).label("replaced"),
        )
        .select_from(who)
        .outerjoin(per_seat, and_(per_seat.c.match_id == who.c.match_id, per_seat.c.seat == who.c.seat, held))
        .outerjoin(camat, and_(camat.c.match_id == who.c.match_id, camat.c.seat == who.c.seat, held))
        .outerjoin(final, and_(final.c.match_id == who.c.match_id, final.c.seat == who.c.seat, held))
        .group_by(who.c.kind, who.c.name, who.c.bot_level)
    )
    if name and name.strip():
        needle = _like(name)
        query = query.where(
            or_(
                func.lower(who.c.name).contains(needle, autoescape=True),
                and_(who.c.name.is_(None), func.lower(who.c.bot_level).contains(needle, autoescape=True)),
                and_(who.c.name.is_(None), _bot_word(needle, who.c.kind)),
            )
        )
    return query


_POINT_VARIANTS = sorted(name for name, rules in VARIANTS.items() if rules.unit == "points")
"""The variants scored in points (Kozel): the ones with goats."""


async def _goats(connection: AsyncConnection) -> dict[tuple[str, str | None, str | None], int]:
    """Goats per seat identity, from the outcomes of Kozel rounds that ended a match."""
    over = (
        select(Round.match_id, Round.outcome)
        .join(Match, Match.id == Round.match_id)
        .where(Match.variant.in_(_POINT_VARIANTS), Round.outcome["match_over"].as_boolean().is_(true()))
    )
    goats: dict[tuple[int, int], int] = defaultdict(int)
    for row in await connection.execute(over):
        for seat in row.outcome.get("goat") or []:
            goats[row.match_id, seat] += 1
    counted: dict[tuple[str, str | None, str | None], int] = defaultdict(int)
    if not goats:
        return counted
    ids = sorted({match_id for match_id, _ in goats})
    for s in await connection.execute(select(Seat).where(Seat.match_id.in_(ids))):
        counted[s.kind, s.name, s.bot_level] += goats.get((s.match_id, s.seat), 0)
    return counted


def _display(kind: str, name: str | None, bot_level: str | None) -> str:
    if name:
        return name
    return f"Bot ({bot_level})" if kind == "bot" else "(unnamed)"


async def list_players(store: Store, name: str | None, page: int, per_page: int) -> PlayerPage:
    """A page of players (display names of people, levels of unnamed bots) with their totals,
    most matches first, then by name; ``name`` keeps those whose name (or bot level) contains it.
    Raises `app.store.StoreClosedError` when the store is not started."""
    query = _players_query(name)
    async with store.engine.connect() as connection:
        total = (await connection.execute(select(func.count()).select_from(query.subquery()))).scalar_one()
        counted = query.subquery()
        ordered = select(counted).order_by(counted.c.matches.desc(), counted.c.name, counted.c.bot_level)
        rows = list(await connection.execute(ordered.limit(per_page).offset((page - 1) * per_page)))
        goats = await _goats(connection)
    items = [
        PlayerTotals(
            display_name=_display(r.kind, r.name, r.bot_level),
            kind="bot" if r.kind == "bot" else "human",
            name=r.name,
            bot_level=r.bot_level,
            matches=r.matches,
            rounds=r.rounds,
            stones_received=r.received,
            stones_paid=r.paid,
            camat_elections=r.elections,
            points=r.points,
            goats=goats.get((r.kind, r.name, r.bot_level), 0),
            replaced=r.replaced,
        )
        for r in rows
    ]
    return PlayerPage(items=items, page=page, per_page=per_page, total=total)
