"""The match store: matches, seats, rounds and actions kept in SQLite or PostgreSQL.

Writes go through the writer (`app.store.writer`), reads through `app.store.reads`.
Arguments the store can check without the database (an unknown status, kind or actor) raise
ValueError at once, before anything is queued.

    async with Store(sqlite_url(Path("data"))) as store:
        match_id = await store.create_match("K7Q2", "domeng", {}, 5, 30.0, host_hash, seats)
        await store.append_action(match_id, 0, 0, 12, 3, {"seat": 3, "play": "6-6"}, "human")
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Final

from sqlalchemy import and_, bindparam, case, delete, exists, func, insert, literal, select, update
from sqlalchemy.engine import Connection

from app.store.admin_sessions import AdminSessionStore
from app.store.batches import (
    began_turn,
    insert_actions,
    set_match,
    set_version,
    turn_values,
    update_match,
)
from app.store.chat import ChatStore
from app.store.dbclock import db_now_s
from app.store.driver_sql import DriverStatement
from app.store.errors import NotFoundError
from app.store.hints import HintStore
from app.store.matches import MatchWrites
from app.store.models import (
    ACTORS,
    MATCH_STATUSES,
    SEAT_COVERS,
    Match,
    Round,
    Seat,
    Tally,
    UTCDateTime,
)
from app.store.reads import MatchReads
from app.store.rows import (
    NewRound,
    RoundEnd,
    SeatChange,
    SeatSpec,
    TallySpec,
)
from app.store.writer import now_utc

__all__ = [
    "CLOSED_REASONS",
    "Store",
]

_FINAL_STATUSES: Final = ("finished", "abandoned")
CLOSED_REASONS: Final = ("admin", "idle")
"""``matches.closed_reason``: why a match was stored ``abandoned``."""

# Statements built once (the hot path of a room: a round's end, the next deal), each compiled
# once per dialect and run with positional parameters (`DriverStatement`, issue 15).
_ROUND_KEYS: Final = ("match_id", "index", "seed", "commitment", "deal", "started_at")
_INSERT_ROUND: Final = DriverStatement(insert(Round), _ROUND_KEYS)
_TALLY_KEYS: Final = ("match_id", "round_index", "seat", "stones", "received", "paid", "points", "pending")
_INSERT_TALLIES: Final = DriverStatement(insert(Tally), _TALLY_KEYS)
_END_ROUND: Final = DriverStatement(
    update(Round)
    .where(Round.match_id == bindparam("m"), Round.index == bindparam("i"))
    .values(ended_at=bindparam("at"), outcome=bindparam("out"), table_after=bindparam("after")),
    ("m", "i", "at", "out", "after"),
)


class Store(MatchReads, MatchWrites, ChatStore, HintStore, AdminSessionStore):
    """The match store on ``database_url`` (see `Writer` for starting and closing it): the
    writes below, and the reads of `MatchReads`. A write's ``await`` returns once committed.

    A room held under a lease writes through ``store.fenced(token, on_fenced)`` (`Writer.fenced`):
    the same store, each write of a match carrying the fencing token of the room's owner
    (docs/cluster.md; the store itself, without Redis: no check). Such a write is refused with
    `FencedOutError`, storing nothing, when the match already holds a higher token (its writer lost
    the room's lease)."""

    # -- writes --------------------------------------------------------------------------------

    async def save_room(
        self,
        match_id: int,
        version: int,
        *,
        seats: Sequence[SeatChange] = (),
        status: str | None = None,
        new_round: NewRound | None = None,
        open_table: bool | None = None,
        options: dict[str, Any] | None = None,
        turn_timer_s: float | None = None,
        hints: bool | None = None,
        host_stop: bool | None = None,
        ended_round: tuple[int, dict[str, Any]] | None = None,
        covers: Mapping[int, str | None] | None = None,
        unattended: int | None = None,
        seat_count: int | None = None,
    ) -> None:
        """A room's change in one transaction with its new ``version``: with ``seat_count``, the
        table's size before the start (the host's, Kozel's 2 to 4: `Match.seat_count`; the seats
        past it are deleted, new ones at the end stored empty), then rewrite ``seats`` (a claim,
        a bot swap, the bots filling empty seats at the start), set the ``status`` (as `set_status`),
        store a ``new_round`` (as `start_round`), list it in the lobby or not (``open_table``: the
        first listing stamps `Match.listed_at` on the database's clock, a later one keeps it), the
        match's ``options`` (RECORD.md's), ``turn_timer_s`` and ``hints`` (the host's, before the
        start), ``host_stop`` (the host's ask to end a no-limit match, `Match.host_stop`), and
        ``ended_round`` ``(index, outcome)``: the stored outcome of that ended round rewritten (the
        host's stop between rounds: its last round's outcome then says ``match_over``), and
        ``covers``, the seats' covers the change ends or starts (seat → one of
        `app.store.models.SEAT_COVERS` or None, as `cover_seats` takes them; a seat of ``seats``
        is stored uncovered anyway), and ``unattended``, the rounds dealt in a row with no person
        at the table (`Match.unattended_rounds`, with the deal that makes it), each when given.
        All of it, or none.

        Raises ValueError for an unknown status, cover or a bad deal, a ``seat_count`` under 1 or one
        that would delete a person's seat, NotFoundError for an unknown match or seat or an
        ``ended_round`` not stored as ended, ConflictError when the round is already stored.
        """
        if seat_count is not None and seat_count < 1:
            raise ValueError(f"a table has at least 1 seat, not {seat_count}")
        if status is not None and status not in MATCH_STATUSES:
            raise ValueError(f"status must be one of {MATCH_STATUSES}, got {status!r}")
        if new_round is not None:
            _check_deal(new_round.deal)
        _check_covers(covers or {})
        now = now_utc()

        def run(connection: Connection) -> None:
            if seat_count is not None:
                _resize_seats(connection, match_id, seat_count, now)
            for change in seats:
                _write_seat(connection, match_id, change.seat, change.spec, now)
            if covers:
                _write_covers(connection, match_id, covers)
            if new_round is not None:
                row = {
                    "match_id": match_id,
                    "index": new_round.index,
                    "seed": new_round.seed,
                    "commitment": new_round.commitment,
                    "deal": new_round.deal,
                    "started_at": now,
                }
                _INSERT_ROUND.execute(connection, [row])
            # the match changes in at most two UPDATEs: its settings, and its turn (a deal begins one)
            # with its version on its narrow row (`set_match`)
            settings: dict[str, Any] = {}
            if open_table is not None:
                settings["open_table"] = open_table
            if options is not None:
                settings["options"] = options
            if turn_timer_s is not None:
                settings["turn_timer_s"] = turn_timer_s
            if hints is not None:
                settings["hints"] = hints
            if host_stop is not None:
                settings["host_stop"] = host_stop
            if unattended is not None:
                settings["unattended_rounds"] = unattended
            if seat_count is not None:
                settings["seat_count"] = seat_count
            if ended_round is not None:
                _rewrite_outcome(connection, match_id, *ended_round)
            if status is None and not open_table:  # plain values: a deal's, a seat's (the hot path)
                set_match(connection, match_id, settings | {"version": version}, new_round is not None)
                return
            if new_round is not None:
                settings |= turn_values()
            if open_table:  # the match's first listing, on the database's clock (`Match.listed_at`)
                settings["listed_at"] = func.coalesce(Match.listed_at, db_now_s())
            if status is not None:
                settings |= _status_values(status, version, now)
            else:
                settings["version"] = version
            update_match(connection, match_id, settings)

        await self._submit(run, match=match_id)

    async def set_status(self, match_id: int, status: str, version: int) -> None:
        """Set the match's status and version. The first ``playing`` stamps ``started_at``, the
        first ``finished`` or ``abandoned`` stamps ``finished_at``.

        Raises ValueError for an unknown status, NotFoundError for an unknown match.
        """
        if status not in MATCH_STATUSES:
            raise ValueError(f"status must be one of {MATCH_STATUSES}, got {status!r}")
        now = now_utc()

        def run(connection: Connection) -> None:
            _write_status(connection, match_id, status, version, now)

        await self._submit(run, match=match_id)

    async def abandon(self, match_id: int, reason: str, version: int | None = None) -> bool:
        """Store an unfinished match as ``abandoned`` because of ``reason`` (``admin``: an admin
        closed its room; ``idle``: nobody used it), stamping ``finished_at``, and its ``version``
        when given. A match already finished or abandoned is left alone; whether it changed.

        Raises ValueError for an unknown reason.
        """
        if reason not in CLOSED_REASONS:
            raise ValueError(f"reason must be one of {CLOSED_REASONS}, got {reason!r}")
        now = now_utc()

        def run(connection: Connection) -> bool:
            values: dict[str, Any] = {
                "status": "abandoned",
                "closed_reason": reason,
                "finished_at": func.coalesce(Match.finished_at, literal(now, UTCDateTime())),
            }
            query = update(Match).where(Match.id == match_id, Match.status.in_(("waiting", "playing")))
            if connection.execute(query.values(values)).rowcount != 1:
                return False
            if version is not None:
                set_version(connection, match_id, version)
            return True

        return await self._submit(run, match=match_id)

    async def prune_unplayed(self, cutoff: datetime, limit: int = 500) -> int:
        """Delete up to ``limit`` matches stored ``abandoned`` before ``cutoff`` (``finished_at``)
        that never dealt a round: rooms created and left before their first deal, with their
        seats, chat and hints (foreign keys cascade). A match with a round is never deleted, nor
        an unfinished one. Returns how many were deleted."""

        def run(connection: Connection) -> int:
            unplayed = (
                select(Match.id)
                .where(
                    Match.status == "abandoned",
                    Match.finished_at < cutoff,
                    ~exists().where(Round.match_id == Match.id),
                )
                .order_by(Match.id)
                .limit(limit)
            )
            ids = list(connection.scalars(unplayed))
            if not ids:
                return 0
            return int(connection.execute(delete(Match).where(Match.id.in_(ids))).rowcount)

        return await self._submit(run, long=True)  # hundreds of rows, cascading: off the loop

    async def start_round(
        self,
        match_id: int,
        index: int,
        seed: str,
        commitment: str,
        deal: dict[str, Any],
        version: int,
    ) -> None:
        """Store a dealt round: ``index`` from 0, its ``seed``, ``commitment`` (`commitment_of`)
        and ``deal`` ``{"hands": [[tile, ...], ...], "rest": [tile, ...]}`` (tiles ``"a-b"``).

        Raises ValueError for a deal without hands and rest, ConflictError when the round is
        already stored or the match does not exist.
        """
        if not isinstance(deal.get("hands"), list) or not isinstance(deal.get("rest"), list):
            raise ValueError("a deal is {'hands': [[tile, ...], ...], 'rest': [tile, ...]}")
        now = now_utc()

        def run(connection: Connection) -> None:
            connection.execute(
                insert(Round).values(
                    match_id=match_id,
                    index=index,
                    seed=seed,
                    commitment=commitment,
                    deal=deal,
                    started_at=now,
                )
            )
            update_match(connection, match_id, turn_values() | {"version": version})

        await self._submit(run, match=match_id)

    async def append_action(
        self,
        match_id: int,
        round_index: int,
        seq: int,
        version: int,
        seat: int,
        action: dict[str, Any],
        actor: str,
        round_end: RoundEnd | None = None,
        covers: Mapping[int, str | None] | None = None,
    ) -> None:
        """Append one action: RECORD.md's action object (``{"seat": 2, "play": "3-6", "end":
        "R"}``), its ``seq`` in the round (from 0), the room ``version`` it produced, and who made
        it (``human``, ``bot``, ``timer`` or ``server``). With ``round_end`` (the action ended the
        round), the round's end and tallies, and the match's finish, and with ``covers`` the seats'
        covers the action changed (as `cover_seats` takes them), are stored in the same
        transaction: all of it is stored, or none of it (`end_round`). An action with neither
        goes in with other rooms' actions (the group commit's batched rows).

        Raises ValueError for an unknown actor or cover, ConflictError when ``seq`` is already
        stored for the round or the round is not stored (or already ended), NotFoundError for an
        unknown match or seat.
        """
        if actor not in ACTORS:
            raise ValueError(f"actor must be one of {ACTORS}, got {actor!r}")
        if covers:
            _check_covers(covers)
        now = now_utc()
        row = {
            "match_id": match_id,
            "round_index": round_index,
            "seq": seq,
            "version": version,
            "seat": seat,
            "action": action,
            "actor": actor,
            "created_at": now,
        }
        if round_end is None and not covers:
            await self._submit(None, row, match=match_id)
            return

        def run(connection: Connection) -> None:
            insert_actions(connection, [row])
            if covers:
                _write_covers(connection, match_id, covers)
            if round_end is not None:  # the match's version is the action's, stored with it
                _write_round_end(connection, match_id, round_index, round_end, version, now, stored=True)

        await self._submit(run, match=match_id)

    async def stamp_turn(self, match_id: int, used_s: float = 0.0, *, handed: bool = False) -> None:
        """Store when the turn in play began (`MatchTurn.turn_at`): ``used_s`` seconds ago on the
        database's clock (0: now). A room calls it when a turn's timer starts afresh without a
        move (a covered player back on their turn, a person taking a bot's seat on its turn: a
        move or a deal stores it by itself), and, with ``handed``, when it hands the room over in
        an orderly way (docs/cluster.md, "Handoff"), with the time the turn had used (seconds, at
        least 0). Raises NotFoundError for an unknown match."""
        used = max(0.0, used_s)

        def run(connection: Connection) -> None:
            began_turn(connection, match_id, used, handed)

        await self._submit(run, match=match_id)

    async def cover_seats(self, match_id: int, covers: Mapping[int, str | None]) -> None:
        """Store whether a bot plays for each person's seat of ``covers`` (seat → one of
        `app.store.models.SEAT_COVERS`, or None: the person plays), as a room's presence changes
        (no version; `app.rooms.seats.SeatInfo.cover`), so that the room loaded again goes on as
        it was. Raises ValueError for a value not in ``SEAT_COVERS``, NotFoundError for an unknown
        match or seat."""
        _check_covers(covers)

        def run(connection: Connection) -> None:
            _write_covers(connection, match_id, covers)

        await self._submit(run, match=match_id)

    async def end_round(
        self,
        match_id: int,
        index: int,
        outcome: dict[str, Any],
        table_after: int | None,
        tallies: Sequence[TallySpec],
        version: int,
        match_finished: bool = False,
    ) -> None:
        """Store a round's end: its ``outcome`` (a JSON object, e.g. RECORD.md's round report),
        Domeng's stones on the table after it, and each seat's tally; with ``match_finished``, the
        match's ``finished`` status too, in the same transaction.

        Raises NotFoundError when the round is not stored, ConflictError when it already has
        tallies.
        """
        end = RoundEnd(outcome, table_after, tallies, match_finished)
        now = now_utc()
        await self._submit(
            lambda conn: _write_round_end(conn, match_id, index, end, version, now), match=match_id
        )


def _rewrite_outcome(connection: Connection, match_id: int, index: int, outcome: dict[str, Any]) -> None:
    """The stored outcome of ended round ``index`` of match ``match_id`` replaced by ``outcome``."""
    changed = connection.execute(
        update(Round)
        .where(Round.match_id == match_id, Round.index == index, Round.ended_at.is_not(None))
        .values(outcome=outcome)
    )
    if changed.rowcount != 1:
        raise NotFoundError(f"match {match_id} has no ended round {index}")


def _check_covers(covers: Mapping[int, str | None]) -> None:
    """Raise ValueError for a cover not in ``SEAT_COVERS`` (None aside)."""
    bad = sorted(str(c) for c in covers.values() if c is not None and c not in SEAT_COVERS)
    if bad:
        raise ValueError(f"seat cover must be one of {SEAT_COVERS} or None, got {bad}")


def _write_covers(connection: Connection, match_id: int, covers: Mapping[int, str | None]) -> None:
    """Set each seat's cover of ``covers`` (seat → cover); NotFoundError for a seat not stored."""
    for seat, cover in covers.items():
        where = (Seat.match_id == match_id, Seat.seat == seat)
        if connection.execute(update(Seat).where(*where).values(cover=cover)).rowcount != 1:
            raise NotFoundError(f"match {match_id} has no seat {seat}")


def _check_deal(deal: dict[str, Any]) -> None:
    if not isinstance(deal.get("hands"), list) or not isinstance(deal.get("rest"), list):
        raise ValueError("a deal is {'hands': [[tile, ...], ...], 'rest': [tile, ...]}")


def _write_seat(connection: Connection, match_id: int, seat: int, spec: SeatSpec, now: datetime) -> None:
    values: dict[str, Any] = {
        "name": spec.name,
        "kind": spec.kind,
        "bot_level": spec.bot_level,
        "token_hash": spec.token_hash,
        "ready": spec.ready,
        "replaced": spec.replaced,
        "cover": None,  # a seat rewritten is nobody's a bot plays for
        "updated_at": now,
    }
    if spec.kind == "bot":  # a person's seat given to a bot once the match started: keep who they were
        started = select(Match.status).where(Match.id == match_id).scalar_subquery() != "waiting"
        values["former"] = case((and_(Seat.kind == "human", started), Seat.name), else_=Seat.former)
    if spec.former_token_hash is not None:  # the host gave a person's seat to a bot
        values["former_token_hash"] = spec.former_token_hash
    changed = connection.execute(
        update(Seat).where(Seat.match_id == match_id, Seat.seat == seat).values(values)
    )
    if changed.rowcount != 1:
        raise NotFoundError(f"match {match_id} has no seat {seat}")


def _resize_seats(connection: Connection, match_id: int, count: int, now: datetime) -> None:
    """`Store.save_room`'s ``seat_count``: the match's seats from ``count`` on deleted (a bot's or
    an empty seat; a person's raises ValueError, undoing the transaction), then empty seats added
    at the end up to ``count``."""
    past = (Seat.match_id == match_id) & (Seat.seat >= count)
    person = connection.execute(select(Seat.seat).where(past, Seat.kind == "human").limit(1)).scalar()
    if person is not None:
        raise ValueError(f"match {match_id}'s seat {person} holds a person: it cannot be removed")
    connection.execute(delete(Seat).where(past))
    have = connection.execute(
        select(func.count()).select_from(Seat).where(Seat.match_id == match_id)
    ).scalar_one()
    if have < count:
        rows = [
            {"match_id": match_id, "seat": i, "kind": "empty", "updated_at": now} for i in range(have, count)
        ]
        connection.execute(insert(Seat), rows)


def _write_status(connection: Connection, match_id: int, status: str, version: int, now: datetime) -> None:
    """`Store.set_status` inside a transaction."""
    update_match(connection, match_id, _status_values(status, version, now))


def _status_values(status: str, version: int, now: datetime) -> dict[str, Any]:
    """`_write_status`'s column values, for an UPDATE of the match that sets more of it."""
    at = literal(now, UTCDateTime())
    values: dict[str, Any] = {"status": status, "version": version}
    if status == "playing":
        values["started_at"] = func.coalesce(Match.started_at, at)
    elif status in _FINAL_STATUSES:
        values["finished_at"] = func.coalesce(Match.finished_at, at)
    return values


def _write_round_end(
    connection: Connection,
    match_id: int,
    index: int,
    end: RoundEnd,
    version: int,
    now: datetime,
    *,
    stored: bool = False,
) -> None:
    """`Store.end_round` (and, when the match ended too, its ``finished`` status) inside a
    transaction, with the match's ``version``; ``stored``: the action that ended the round stored
    that version already, in the same transaction (`Store.append_action`: one UPDATE less)."""
    values = {"m": match_id, "i": index, "at": now, "out": end.outcome, "after": end.table_after}
    if _END_ROUND.execute(connection, [values]) != 1:
        raise NotFoundError(f"match {match_id} has no round {index}")
    rows = [
        {
            "match_id": match_id,
            "round_index": index,
            "seat": t.seat,
            "stones": t.stones,
            "received": t.received,
            "paid": t.paid,
            "points": t.points,
            "pending": t.pending,
        }
        for t in end.tallies
    ]
    if rows:
        _INSERT_TALLIES.execute(connection, rows)
    if end.match_finished:
        _write_status(connection, match_id, "finished", version, now)
    elif not stored:
        set_version(connection, match_id, version)
