"""What goes into the store (seat and tally specs, a round's end) and what comes out of it
(snapshots of stored matches, seats, rounds, actions and tallies)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.store.hints import HintRow
from app.store.models import (
    SEAT_KINDS,
)

__all__ = [
    "ActionRow",
    "MatchRow",
    "NewRound",
    "RoomRow",
    "RoundEnd",
    "RoundRow",
    "SeatChange",
    "SeatRow",
    "SeatSpec",
    "TallyRow",
    "TallySpec",
    "check_kind",
    "seat_display_name",
]

# -- what goes in ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SeatSpec:
    """A seat as `Store.create_match` stores it: ``kind`` is ``empty``, ``human`` (``name`` and
    ``token_hash``) or ``bot`` (``bot_level``, optional ``name``). ``seat``, when given, must be
    the seat's index in the list; ``ready``: its person said they play this match (Play again);
    ``replaced``: the level of the bot a person's seat was taken from (None: it was empty);
    ``former_token_hash``: the token hash of the person the host gave this seat to a bot from
    (None: the stored one stays). Raises ValueError for an unknown kind or a bot without level."""

    kind: str = "empty"
    name: str | None = None
    bot_level: str | None = None
    token_hash: str | None = None
    seat: int | None = None
    ready: bool = False
    replaced: str | None = None
    former_token_hash: str | None = None

    def __post_init__(self) -> None:
        check_kind(self.kind, self.bot_level)


@dataclass(frozen=True, slots=True)
class TallySpec:
    """One seat's result of a finished round (`Store.end_round`): Domeng ``stones`` held after
    the round, stones ``received`` and ``paid`` in it; Kozel ``points`` and ``pending`` after it."""

    seat: int
    received: int = 0
    paid: int = 0
    stones: int | None = None
    points: int | None = None
    pending: int | None = None


@dataclass(frozen=True, slots=True)
class RoundEnd:
    """How a round ended, stored with its last action in one transaction (`Store.append_action`):
    the ``outcome`` (a JSON object, e.g. RECORD.md's round report), Domeng's stones on the table
    after it (``table_after``, None for Kozel), each seat's tally, and whether the match ended with
    it (``match_finished``: the status becomes ``finished``)."""

    outcome: dict[str, Any]
    table_after: int | None
    tallies: Sequence[TallySpec]
    match_finished: bool = False


def check_kind(kind: str, bot_level: str | None) -> None:
    if kind not in SEAT_KINDS:
        raise ValueError(f"seat kind must be one of {SEAT_KINDS}, got {kind!r}")
    if kind == "bot" and not bot_level:
        raise ValueError("a bot seat needs a bot_level")


@dataclass(frozen=True, slots=True)
class SeatChange:
    """One seat rewritten: ``spec`` is what the seat becomes (its ``seat`` field is ignored)."""

    seat: int
    spec: SeatSpec


@dataclass(frozen=True, slots=True)
class NewRound:
    """A dealt round as stored: ``index`` from 0, its secret ``seed``, ``commitment`` and
    ``deal`` (``{"hands": [[tile, ...], ...], "rest": [tile, ...]}``)."""

    index: int
    seed: str
    commitment: str
    deal: dict[str, Any]


# -- what comes out ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SeatRow:
    """A stored seat (see `app.store.models.Seat`)."""

    seat: int
    name: str | None
    kind: str
    bot_level: str | None
    token_hash: str | None
    updated_at: datetime
    ready: bool = False
    cover: str | None = None
    """Whether a bot plays for the seat's person (`app.store.models.SEAT_COVERS`; None: they do)."""
    replaced: str | None = None
    """The level of the bot the seat's person took it from (None: it was empty, or no person's)."""
    former: str | None = None
    """The person whose seat the host gave to a bot during the match (None: none was)."""
    former_token_hash: str | None = None
    """The token hash of the person whose seat the host gave to a bot (None: none was)."""


@dataclass(frozen=True, slots=True)
class ActionRow:
    """A stored action: ``action`` is RECORD.md's action object, ``seq`` its index in the round."""

    seq: int
    version: int
    seat: int
    action: dict[str, Any]
    actor: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class TallyRow:
    """A seat's stored result of a finished round (see `TallySpec`)."""

    seat: int
    stones: int | None
    received: int
    paid: int
    points: int | None
    pending: int | None


@dataclass(frozen=True, slots=True)
class RoundRow:
    """A stored round: ``deal`` is ``{"hands": [[tile, ...], ...], "rest": [tile, ...]}``;
    ``outcome``, ``ended_at`` and ``table_after`` are None while it is played. ``actions`` are in
    ``seq`` order, ``tallies`` in seat order (empty until the round ends). The last round of a
    match the host ended reads with ``match_over`` true in its outcome, whatever the release that
    stored it wrote (`app.store.reads.read_outcome`)."""

    index: int
    seed: str
    commitment: str
    deal: dict[str, Any]
    started_at: datetime
    ended_at: datetime | None
    outcome: dict[str, Any] | None
    table_after: int | None
    actions: tuple[ActionRow, ...]
    tallies: tuple[TallyRow, ...]

    @property
    def is_finished(self) -> bool:
        """Whether the round has been ended (`Store.end_round`)."""
        return self.ended_at is not None


@dataclass(frozen=True, slots=True)
class MatchRow:
    """A snapshot of a stored match: its fields, seats in seat order, rounds in index order."""

    id: int
    code: str
    variant: str
    options: dict[str, Any]
    seat_count: int
    status: str
    turn_timer_s: float
    start: dict[str, Any] | None
    version: int
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    host_token_hash: str
    seats: tuple[SeatRow, ...]
    rounds: tuple[RoundRow, ...]
    open_table: bool = False
    """Listed in the lobby while it waits for players."""
    closed_reason: str | None = None
    """Why it was stored ``abandoned`` (``admin`` or ``idle``), else None."""
    room_match: int = 1
    """Its number among the matches of its room (``code``), from 1."""
    chat_rules: dict[str, Any] | None = None
    """The host's chat rules for it (None: the defaults)."""
    hints: bool = False
    """The host allows hints (issue 16)."""
    host_stop: bool = False
    """The host asked to end it after the round in play; once finished, the host ended it."""
    bot_share: str | None = None
    """Whom its room's bot decisions count for (`app.store.models.Match.bot_share`; None: not known)."""
    creator_site: str | None = None
    """Its creator's IPv6 /48, keyed (`app.store.models.Match.creator_site`; None: none, not known)."""
    unattended_rounds: int = 0
    """Rounds dealt in a row with no person at the table (`app.store.models.Match.unattended_rounds`)."""

    @property
    def ended_by_host(self) -> bool:
        """Whether the host ended it (``finished`` with ``host_stop``): it is over after its last
        round, which the host's stop never cuts (RULES.md "Match end"; a record's ``ended_by``)."""
        return self.status == "finished" and self.host_stop

    def seat_names(self) -> list[str]:
        """Display names in seat order (`seat_display_name`)."""
        return [seat_display_name(seat) for seat in self.seats]


@dataclass(frozen=True, slots=True)
class RoomRow:
    """What a room needs of its stored match (`Store.load_room`), without its whole history:
    ``match`` with only its last two rounds (actions and tallies included) in ``rounds``, and
    ``outcomes_before`` the outcomes of every round before those, in order, and
    ``received_before`` each seat's stones received in those rounds (their tallies' sum)."""

    match: MatchRow
    outcomes_before: tuple[dict[str, Any], ...]
    received_before: tuple[int, ...] = ()
    hints: tuple[HintRow, ...] = ()
    """The hints used in its last two rounds (the one in play, or the last ended one, and the one
    before: the room sends that one as it ended, `app.rooms.frames.round_end_json`)."""
    read_at: float | None = None
    """When it was read, in seconds since the epoch on the database's own clock (the one
    ``turn_at`` is on, `app.store.dbclock.db_now_s`); None: not known."""
    turn_at: float | None = None
    """When the turn in play began, on that same clock (`app.store.models.Match.turn_at`; None for
    a turn begun before the store kept it): with ``read_at``, how long ago it began
    (`app.rooms.recovery.resume`), whatever the clocks of the processes that wrote and read it."""
    handed: bool = False
    """The room was handed over in an orderly way during the turn in play, by the owner right
    before this reader (`app.store.models.Match.handed_fence`): the turn's time did not stop for
    a crash (`app.rooms.timing.Timing.resume_turn`)."""
    handed_at: float | None = None
    """When it was handed over, on the database's clock (`app.store.models.Match.handed_at`), if
    ``handed`` and the store knows: the turn's age stops there (no process had the room between
    then and ``read_at``)."""
    listed_at: float | None = None
    """When the match was first listed in the lobby's open tables, on the database's clock
    (`app.store.models.Match.listed_at`; None: never listed, or before the store kept it): with
    ``read_at``, how long ago, whichever process listed it."""


def seat_display_name(seat: SeatRow) -> str:
    """The seat's name; else, for seat index 1, ``"Bot 2 (greedy)"`` for a bot of level greedy
    (numbered like the table's "Bot 2", so bots of one match stay apart) and ``"Seat 2"`` for an
    empty seat (seats count from 1 for people). RECORD.md's ``seats`` are free text."""
    if seat.name:
        return seat.name
    if seat.kind == "bot":
        return f"Bot {seat.seat + 1} ({seat.bot_level})"
    return f"Seat {seat.seat + 1}"
