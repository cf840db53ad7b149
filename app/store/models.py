"""The database tables of Domeng Online as SQLAlchemy 2 typed ORM classes.

One row per match (``matches``), per seat (``seats``), per dealt round (``rounds``), per action
taken (``actions``, append-only) and per seat and finished round (``tallies``). A match is stored
as it is played: each round's seed, commitment and deal, every action in order, and each round's
outcome, so RECORD.md's ``domeng-record/1`` document can be rebuilt from the database alone.

Datetimes are timezone-aware UTC on every backend (`UTCDateTime`). JSON columns hold RECORD.md
objects (``options``, ``start``, a deal's tiles, an action, a round's outcome) as written; a
nullable one stores None as SQL NULL, not JSON ``null``.
``migrations/versions/0001_initial.py`` creates these tables; 0002 adds the room's chat (``chat``),
its rules (``matches.chat_rules``) and the host's open-table choice (``matches.open_table``); 0003
lets ``actions.actor`` be ``cover`` (a bot covering a person's seat); 0004 adds
``matches.closed_reason``; 0005 lets a room (a code) hold several matches, numbered by
``matches.room_match`` (Play again), and adds ``seats.ready``; 0006 adds ``matches.hints`` (the host
allows hints) and ``hints`` (every hint used); 0007 adds ``matches.fence`` (the fencing token of
the room's owner, docs/cluster.md); 0008 adds ``chat.watcher`` (a spectator's public tag); 0009
adds ``matches.host_stop`` (the host ends a no-limit match); 0016 adds ``matches.bot_share``
(whom its room's bot decisions count for); 0017 adds ``chat.number`` (a line's number in its
room); 0018 adds ``deployment_keys`` (secrets made once per deployment, `DeploymentKey`); 0019
adds ``seats.replaced`` (the bot level a seat's person took it from); 0020 adds ``admin_sessions``
(signed-in admins by a keyed hash of their session, `AdminSessionRow`); 0021 adds
``matches.unattended_rounds`` (rounds dealt in a row with no person at the table); 0022 adds
``seats.former`` (the person whose seat the host gave to a bot during the match); 0023 adds
``matches.creator_site`` (the /48 of the room's IPv6 creator, as a keyed hash); 0024 adds
``seats.former_token_hash`` (the token of the person whose seat the host gave to a bot); 0025 moves
a match's version and turn clock (``turn_at``, ``handed_fence``, ``handed_at``, added by 0011 and
0012) to ``match_turns`` (`MatchTurn`), the narrow row a move updates.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, ClassVar, Final

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Integer,
    MetaData,
    String,
    UniqueConstraint,
    select,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, column_property, mapped_column
from sqlalchemy.sql.expression import false, text
from sqlalchemy.types import TypeDecorator

__all__ = [
    "ACTORS",
    "BY_BOT",
    "MATCH_STATUSES",
    "NAME_LENGTH",
    "NAMING_CONVENTION",
    "SEAT_COVERS",
    "SEAT_KINDS",
    "AdminSessionRow",
    "Base",
    "ChatLine",
    "DeploymentKey",
    "Hint",
    "Match",
    "MatchAction",
    "MatchTurn",
    "Round",
    "Seat",
    "Tally",
    "UTCDateTime",
    "sqlite_datetime_text",
]

MATCH_STATUSES: Final = ("waiting", "playing", "finished", "abandoned")
"""``matches.status``: waiting for players, a round in play or between rounds, over, given up."""

NAME_LENGTH: Final = 512
"""The longest person's name stored (``seats.name``, ``chat.name``), in characters (code points,
as PostgreSQL counts a ``varchar``): `app.rooms.names.MAX_NAME_GRAPHEMES` (32) user-perceived
characters of at most `app.rooms.names.MAX_CLUSTER_CODE_POINTS` (16) each. Before 0010 it was 64,
which PostgreSQL refused for a name of joined emoji (32 times 👩🏽‍💻 is 128)."""

SEAT_KINDS: Final = ("empty", "human", "bot")
"""``seats.kind``: nobody sits there, a player (holding a token), or a bot of ``bot_level``."""

SEAT_COVERS: Final = ("covered", "stand_in", "timed_out")
"""``seats.cover``, a person's seat a bot plays for (NULL: the person plays their own turns): a bot
``covered`` it until they are back (two turn timers in a row ran out, or they were away past the
grace); it ``stand_in``: their turn timer ran out, a bot plays this one turn; their last turn's timer
``timed_out`` (the next to run out in a row covers the seat). `app.rooms.seats.SeatInfo`."""

ACTORS: Final = ("human", "bot", "timer", "cover", "server")
"""``actions.actor``: who made the move: the seat's player, its bot, a bot for the player whose turn
timer ran out (that one turn), a bot covering the player's seat (two timers in a row ran out, or
away past the grace), the server (a forced pass)."""

BY_BOT: Final = {"timer": "timeout", "cover": "covering"}
"""The actors that are a bot playing for a person, and how a record names them (an action's
optional ``by_bot``, docs/admin.md)."""

NAMING_CONVENTION: Final = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_N_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
"""Constraint names are deterministic, so later migrations can name what they alter."""


def _one_of(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC datetime on every backend.

    PostgreSQL stores ``timestamptz``; SQLite has no time zones, so the value is stored as naive
    UTC and marked UTC again when read. Binding a naive datetime raises ValueError.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value!r}: store timezone-aware UTC datetimes")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def bind_processor(self, dialect: Dialect) -> Callable[[Any], Any] | None:
        """SQLAlchemy's (`process_bind_param`, then the dialect's DATETIME), except on SQLite:
        `sqlite_datetime_text`, one step to the same text (checked here on two samples; if they
        ever differ, SQLAlchemy's is used). The DATETIME's formatting through a dictionary cost a
        microsecond more per value, once per action on the store writer's thread (issue 15)."""
        general = super().bind_processor(dialect)
        if dialect.name != "sqlite" or general is None:
            return general
        samples = (datetime(1999, 2, 3, 4, 5, 6, 7, tzinfo=UTC), datetime(2026, 12, 6, 1, 2, 3, tzinfo=UTC))
        if any(general(s) != sqlite_datetime_text(s) for s in samples):
            return general
        return sqlite_datetime_text

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def sqlite_datetime_text(value: datetime | None) -> str | None:
    """`UTCDateTime`'s value as SQLite stores it: naive UTC text with microseconds
    (``2026-12-06 01:02:03.000000``). ValueError for a naive datetime."""
    if value is None:
        return None
    if value.tzinfo is None:
        raise ValueError(f"naive datetime {value!r}: store timezone-aware UTC datetimes")
    if value.tzinfo is not UTC:  # the store's own are UTC already: no conversion to make
        value = value.astimezone(UTC)
    return value.replace(tzinfo=None).isoformat(" ", "microseconds")


class Base(DeclarativeBase):
    """The declarative base: ``dict[str, Any]`` maps to JSON, ``datetime`` to `UTCDateTime`."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map: ClassVar[dict[Any, Any]] = {dict[str, Any]: JSON, datetime: UTCDateTime}


class MatchTurn(Base):
    """The part of a match that every move changes, in a narrow row of its own (migration 0025):
    its version and when its turn in play began. A move updates this row alone, never the wide
    ``matches`` row, whose pages a batch of moves of different matches would each write to the
    log (issue 15: the server's CPU per delivered update). One per match, made with it;
    `Match` reads these columns as its own (``Match.version``, ``Match.turn_at`` …)."""

    __tablename__ = "match_turns"

    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"), primary_key=True)
    version: Mapped[int]
    """The room version of the last stored change."""
    turn_at: Mapped[float | None] = mapped_column(Float)
    """When the turn in play began, in seconds since the epoch on the database's own clock
    (`app.store.dbclock.db_now_s`, never a server process's): set by each move and each deal, by a
    turn timer started afresh without a move (a covered player back on their turn), and, shifted
    back by the time already used, when its owner hands the room over (`handed_fence`). None: a
    turn begun before this column (its move's ``created_at`` tells)."""
    handed_fence: Mapped[int | None] = mapped_column(BigInteger)
    """The fencing token of the owner that handed the room over in an orderly way during the turn
    in play (docs/cluster.md, "Handoff"; a clean shutdown), storing what was left of the turn in
    `turn_at`; kept by the next owner's claim only while no other owner came in between
    (`app.store.fencing.claim_fences`), cleared by the next move. None: not handed over (a crash,
    a lost lease, one process)."""
    handed_at: Mapped[float | None] = mapped_column(Float)
    """When it was handed over (with `handed_fence`, kept and cleared with it), in seconds since
    the epoch on the database's own clock: the turn's time stops there until the next owner reads
    the room, since no process had it meanwhile (migration 0012; in this table since 0025). None:
    not handed over, or handed over before that column (the turn then counts until the room is
    read)."""


def _turn_of(column: Any, match_id: Any) -> Any:
    """`MatchTurn`'s ``column`` of the match ``match_id`` (its id column), as a correlated scalar
    subquery labelled with the column's name: how `Match` reads it."""
    query = select(column).where(MatchTurn.match_id == match_id).correlate_except(MatchTurn)
    return query.scalar_subquery().label(column.key)


class Match(Base):
    """One match played in a room: its variant and options, status, timer and where it began.

    A room is its ``code``: every match played in it (Play again) is a row of its own, numbered
    by ``room_match`` (1, 2, …); the room is its latest match. Each match carries the room's host
    token hash, open-table choice and chat rules as they were for it."""

    __tablename__ = "matches"
    __table_args__ = (
        CheckConstraint(_one_of("status", MATCH_STATUSES), name="status"),
        CheckConstraint("seat_count > 0", name="seat_count"),
        CheckConstraint("room_match > 0", name="room_match"),
        UniqueConstraint("code", "room_match"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    code: Mapped[str] = mapped_column(String(32), index=True)
    """The room code players join with (shared by the room's matches)."""
    room_match: Mapped[int] = mapped_column(Integer, server_default=text("1"))
    """The match's number in its room, from 1 (Play again starts the next)."""
    variant: Mapped[str] = mapped_column(String(16))
    options: Mapped[dict[str, Any]]
    """RECORD.md ``options`` of the variant."""
    seat_count: Mapped[int]
    status: Mapped[str] = mapped_column(String(16), index=True)
    turn_timer_s: Mapped[float] = mapped_column(Float)
    """Seconds a seat has to act before the timer acts for it."""
    start: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True))
    """RECORD.md ``start`` object, or None for a new match."""
    version: Mapped[int] = column_property(_turn_of(MatchTurn.version, id))
    """The room version of the last stored change (`MatchTurn.version`, read only here)."""
    created_at: Mapped[datetime]
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]
    host_token_hash: Mapped[str] = mapped_column(String(128))
    open_table: Mapped[bool] = mapped_column(Boolean, server_default=false())
    """Listed in the lobby's open tables while it waits for players (the host's choice)."""
    hints: Mapped[bool] = mapped_column(Boolean, server_default=false())
    """The host allows hints: a player may ask for the hard bot's choice on their turn (issue 16)."""
    chat_rules: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True))
    """The host's chat rules: ``{"spectators": bool, "muted": [seat, …], "muted_spectators": [tag,
    …]}`` (None: the defaults, seated players chat, spectators read; rules stored before spectators
    could be muted one by one have no ``muted_spectators``)."""
    closed_reason: Mapped[str | None] = mapped_column(String(16))
    """Why the match was stored ``abandoned``: ``admin`` (an admin closed its room) or ``idle``
    (nobody used it for ``DOMENG_ABANDONED_AFTER_S``); None otherwise and for older rows."""
    host_stop: Mapped[bool] = mapped_column(Boolean, server_default=false())
    """The host asked to end the match (one only the host ends, `engine.rules.base.Rules.host_stops`):
    while it is ``playing``, it ends when the round in play ends; once ``finished``, the host ended
    it (its record's ``ended_by``)."""
    fence: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    """The highest fencing token a write of this match carried (docs/cluster.md): a write with a
    lower one, from an owner that lost the room's lease, is refused (`app.store.FencedOutError`). 0
    when the server runs without Redis (no write carries a token)."""
    turn_at: Mapped[float | None] = column_property(_turn_of(MatchTurn.turn_at, id))
    """`MatchTurn.turn_at`, read only here."""
    handed_fence: Mapped[int | None] = column_property(_turn_of(MatchTurn.handed_fence, id))
    """`MatchTurn.handed_fence`, read only here."""
    handed_at: Mapped[float | None] = column_property(_turn_of(MatchTurn.handed_at, id))
    """`MatchTurn.handed_at`, read only here."""
    listed_at: Mapped[float | None] = mapped_column(Float)
    """When the host first listed this match in the lobby's open tables (`open_table`), in seconds
    since the epoch on the database's own clock (`app.store.dbclock.db_now_s`): kept when the
    table is taken off and listed again, and when its room is loaded again elsewhere, so neither
    makes it new in the lobby (`app.rooms.lobby.rank_tables`); a match of Play again starts over
    (migration 0013). None: never listed, or listed before this column."""
    bot_share: Mapped[str | None] = mapped_column(String(32))
    """Whom the room's bot decisions count for when they queue for the bot workers
    (`app.rooms.room.Room.bot_share`): a key made from its creator's client address
    (`app.rooms.making.share_of`, a hash keyed with the deployment's ``bot_share`` key, so no
address can be read back from it), carried to the room's next match
    by Play again, so that the room loaded again still shares the workers with its creator's
    other rooms (migration 0016). None: its creator not known, or stored before this column."""
    creator_site: Mapped[str | None] = mapped_column(String(32))
    """The IPv6 /48 of the client address that created the room (`app.addresses.counted_site`),
    keyed as ``bot_share`` is (`app.rooms.making.share_of`), carried to the room's next match by
    Play again: with ``bot_share``, what a room loaded again after a restart counts for in its
    creator's caps (`app.rooms.hub.Hub.creators`, migration 0023). None: an IPv4 creator, one not
    known, or stored before this column."""
    unattended_rounds: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    """Rounds dealt in a row with no person at the table (`app.rooms.unattended`), the last dealt
    among them: set with each deal (0 when a person was at their seat), back to 1 when a
    spectator's ``keep_watching`` dealt the round. At ``DOMENG_UNATTENDED_ROUNDS`` the room deals
    no more until a spectator answers or a person comes, and a room loaded again still waits
    (migration 0021; 0 for a match stored before it: its count starts again)."""


class Seat(Base):
    """One seat of a match: empty, a player (name and token hash) or a bot (level)."""

    __tablename__ = "seats"
    __table_args__ = (
        CheckConstraint(_one_of("kind", SEAT_KINDS), name="kind"),
        CheckConstraint("seat >= 0", name="seat"),
        CheckConstraint(_one_of("cover", SEAT_COVERS), name="cover"),
    )

    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"), primary_key=True)
    seat: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str | None] = mapped_column(String(NAME_LENGTH))
    kind: Mapped[str] = mapped_column(String(8))
    bot_level: Mapped[str | None] = mapped_column(String(16))
    token_hash: Mapped[str | None] = mapped_column(String(128))
    ready: Mapped[bool] = mapped_column(Boolean, server_default=false())
    """The seat's person said they play this match (Play again; a claim is ready at once)."""
    replaced: Mapped[str | None] = mapped_column(String(16))
    """The level of the bot the seat's person took it from, which it goes back to when they leave
    it before a start (NULL: it was empty, or it is no person's; migration 0019)."""
    former: Mapped[str | None] = mapped_column(String(NAME_LENGTH))
    """The name of the person whose seat the host gave to a bot during the match: they made the
    seat's moves until then (NULL: none was; migration 0022)."""
    former_token_hash: Mapped[str | None] = mapped_column(String(128))
    """The token hash of the person whose seat the host gave to a bot (before the start or during
    the match): their token, opened later, is told so (close 4007), not refused as unknown
    (NULL: none was; migration 0024)."""
    cover: Mapped[str | None] = mapped_column(String(10))
    """Whether a bot plays for the seat's person (`SEAT_COVERS`; NULL: they play), kept so that a
    room loaded again goes on as it was; cleared whenever the seat is rewritten (migration 0014;
    0015 checks its values)."""
    updated_at: Mapped[datetime]


class Round(Base):
    """One dealt round: seed, commitment (hex SHA-256 of the seed), deal and, once over, outcome.

    ``deal`` is ``{"hands": [[tile, ...], ...], "rest": [tile, ...]}`` with tiles as ``"a-b"``;
    ``rest`` is Domeng's unused tiles or Kozel's bazaar (top first). ``table_after`` is Domeng's
    stones on the table after the round.
    """

    __tablename__ = "rounds"
    __table_args__ = (CheckConstraint('"index" >= 0', name="index"),)

    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"), primary_key=True)
    index: Mapped[int] = mapped_column(primary_key=True)
    seed: Mapped[str] = mapped_column(String(128))
    commitment: Mapped[str] = mapped_column(String(64))
    deal: Mapped[dict[str, Any]]
    started_at: Mapped[datetime]
    ended_at: Mapped[datetime | None]
    outcome: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True))
    table_after: Mapped[int | None]


class MatchAction(Base):
    """One action taken in a round (append-only): RECORD.md's action object, who made it, when.

    ``seq`` counts from 0 within the round; ``version`` is the room version the action produced.
    """

    __tablename__ = "actions"
    __table_args__ = (
        UniqueConstraint("match_id", "round_index", "seq"),
        ForeignKeyConstraint(
            ["match_id", "round_index"], ["rounds.match_id", "rounds.index"], ondelete="CASCADE"
        ),
        CheckConstraint(_one_of("actor", ACTORS), name="actor"),
        CheckConstraint("seq >= 0", name="seq"),
    )

    # BIGINT on PostgreSQL (400 tables at an action a second pass 2^31 in two months); SQLite
    # needs exactly INTEGER for its auto-incrementing rowid key.
    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    match_id: Mapped[int]
    round_index: Mapped[int]
    seq: Mapped[int]
    version: Mapped[int]
    seat: Mapped[int]
    action: Mapped[dict[str, Any]]
    actor: Mapped[str] = mapped_column(String(8))
    created_at: Mapped[datetime]


class Tally(Base):
    """A seat's result of a finished round: Domeng stones held after it, stones received and paid;
    Kozel points and pending (unrecorded) points after it."""

    __tablename__ = "tallies"
    __table_args__ = (
        ForeignKeyConstraint(
            ["match_id", "round_index"], ["rounds.match_id", "rounds.index"], ondelete="CASCADE"
        ),
    )

    match_id: Mapped[int] = mapped_column(primary_key=True)
    round_index: Mapped[int] = mapped_column(primary_key=True)
    seat: Mapped[int] = mapped_column(primary_key=True)
    stones: Mapped[int | None]
    received: Mapped[int]
    paid: Mapped[int]
    points: Mapped[int | None]
    pending: Mapped[int | None]


class ChatLine(Base):
    """One line of a room's chat: a short text or a quick reaction, from a seat (None: a
    spectator), with where the play stood (``round_index``, ``seq``: the actions stored in that
    round before it), so the admin can read it beside the play."""

    __tablename__ = "chat"
    __table_args__ = (UniqueConstraint("match_id", "number"),)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"), index=True)
    number: Mapped[int]
    """The line's number among its room's lines (1, 2, … across the room's matches, Play again),
    given in its insert (`app.store.chat.ChatStore.add_chat`; migration 0017): what a client and
    the admin know the line by, never `id`, the database's counter of every room's lines."""
    seat: Mapped[int | None]
    name: Mapped[str] = mapped_column(String(NAME_LENGTH))
    text: Mapped[str | None] = mapped_column(String(1024))
    reaction: Mapped[str | None] = mapped_column(String(16))
    round_index: Mapped[int]
    seq: Mapped[int]
    created_at: Mapped[datetime]
    watcher: Mapped[str | None] = mapped_column(String(16))
    """A spectator's public tag (`app.rooms.watchers.watcher_tag`), so the host can mute that one
    spectator; None for a seat's line and for lines stored before 0008."""


class Hint(Base):
    """A hint a player asked for and was given (issue 16): the hard bot's ``action`` (RECORD.md
    JSON) for ``seat`` at ``seq`` (the actions stored in round ``round_index`` before it). Every
    hint used is shown to the table and kept in the history."""

    __tablename__ = "hints"

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"), index=True)
    round_index: Mapped[int]
    seq: Mapped[int]
    seat: Mapped[int]
    action: Mapped[dict[str, Any]]
    created_at: Mapped[datetime]


class DeploymentKey(Base):
    """A secret made once per deployment by its migration (0018) and read by every process: by
    ``name``, its ``value`` (hex). ``bot_share`` keys the hash of a room creator's client address
    that ``matches.bot_share`` keeps (`app.rooms.making.share_of`)."""

    __tablename__ = "deployment_keys"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    value: Mapped[str] = mapped_column(String(64))


class AdminSessionRow(Base):
    """A signed-in admin's session (0020), kept so that it outlives a restart of the server:
    ``digest`` is the HMAC-SHA256 (hex) of the session's cookie value under the admin secret,
    never the value itself (`app.admin.auth.AdminAuth`), and ``expires_at`` its expiry in epoch
    seconds. Signing out deletes the row; a row under an older secret matches no cookie any more."""

    __tablename__ = "admin_sessions"

    digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    expires_at: Mapped[float] = mapped_column(Float, index=True)
