"""The HTTP API's request and response bodies (``/api/rooms``)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, field_validator

from app.rooms.watchers import KEY_PATTERN, TAG_PATTERN

__all__ = [
    "MAX_TURN_TIMER_S",
    "MIN_TURN_TIMER_S",
    "TIMER_RULE",
    "BotSet",
    "ChatRulesSet",
    "ClaimCreate",
    "OpenSet",
    "OptionsSet",
    "ReviewDecision",
    "ReviewOption",
    "RoomCreate",
    "RoomCreated",
    "RoundReview",
    "SeatClaimed",
    "StopSet",
    "playable_timer",
]


_OptionName = Annotated[str, Field(max_length=32)]
"""A variant option's name (RULES.md: ``camat_target``, ``two_lempas``, ``pairs``): a longer one is
no option, and is refused before it can be quoted back."""


class RoomCreate(BaseModel):
    """``POST /api/rooms``: the variant, its options (RULES.md), seats, turn timer and bots.

    ``bots`` lists a bot level (or null for a seat left to people) for every seat.
    """

    model_config = ConfigDict(extra="forbid")

    variant: str = Field("domeng", max_length=16)
    options: dict[_OptionName, StrictBool | StrictInt] = Field(default_factory=dict, max_length=8)
    seats: StrictInt | None = None
    """The table's number of seats: the variant checks it (Kozel 2 to 4, Domeng 5) and refuses any
    other with ``invalid_seats`` (a bound here answered 7 with a bare "less than or equal to 5")."""
    turn_timer_s: Annotated[float, Field(strict=True, ge=0, le=600)] | None = None
    """Seconds per human turn: 0 (no timer) or whole seconds from 5 to 600."""
    bots: list[Annotated[str, Field(max_length=16)] | None] | None = Field(None, max_length=5)
    hints: StrictBool = False
    """Players may ask for a hint on their turn (the hard bot's choice, shown to the table)."""

    @field_validator("turn_timer_s")
    @classmethod
    def _playable_timer(cls, value: float | None) -> float | None:
        return _playable_timer(value)


def _playable_timer(value: float | None) -> float | None:
    return None if value is None else playable_timer(value)


def playable_timer(value: float) -> float:
    """``value`` (seconds) as a turn timer: 0 (off) or whole seconds from `MIN_TURN_TIMER_S` to
    `MAX_TURN_TIMER_S`; raises `ValueError` saying so for anything else (30.5 is refused, not
    rounded: the room would otherwise run a timer the asker did not ask for)."""
    if not (value == 0 or MIN_TURN_TIMER_S <= value <= MAX_TURN_TIMER_S) or value != int(value):
        raise ValueError(TIMER_RULE)
    return value + 0.0  # -0.0 is 0


MIN_TURN_TIMER_S = 5.0
"""The shortest turn timer a room may have (seconds): less leaves a person no time to play."""
MAX_TURN_TIMER_S = 600.0
"""The longest turn timer a room may have (seconds)."""
TIMER_RULE = f"a turn timer is whole seconds: 0 (off) or {MIN_TURN_TIMER_S:g} to {MAX_TURN_TIMER_S:g} seconds"


class OptionsSet(BaseModel):
    """``PUT /api/rooms/{code}/options``: the match's options (the variant's, RULES.md: Domeng's
    ``camat_target``, Kozel's ``two_lempas`` and ``pairs``) and, when given, its turn timer, hints
    and number of seats."""

    model_config = ConfigDict(extra="forbid")

    options: dict[_OptionName, StrictBool | StrictInt] | None = Field(None, max_length=8)
    """The variant's options, all of them (one left out takes its default); null: unchanged."""
    seats: StrictInt | None = None
    """The table's number of seats (Kozel: 2, 3 or 4; Domeng: 5; any other is the variant's
    ``invalid_seats``); null: unchanged."""
    turn_timer_s: Annotated[float, Field(strict=True, ge=0, le=600)] | None = None
    """Seconds per human turn: 0 (no timer) or whole seconds from 5 to 600; null: unchanged."""
    hints: StrictBool | None = None
    """Whether a player may ask for a hint on their turn; null: unchanged."""

    @field_validator("turn_timer_s")
    @classmethod
    def _playable_timer(cls, value: float | None) -> float | None:
        return _playable_timer(value)


class RoomCreated(BaseModel):
    """The new room: its code, the link to share, and the host's secret token."""

    code: str
    url: str
    host_token: str


class ClaimCreate(BaseModel):
    """``POST /api/rooms/{code}/seats/{seat}``: take a seat under a display name."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(max_length=1024)
    """The name as typed: the room checks it (1 to 32 user-perceived characters once runs of white
    space are folded, no control or invisible characters: `app.rooms.names.clean_name`) and
    answers a refused one with a reason code (``name_too_long``, ...), which the client words."""
    watcher: str | None = Field(None, pattern=KEY_PATTERN)
    """The spectator key the browser holds (`app.rooms.watchers`), if any: a host's mute of that
    spectator goes with them to the seat (`app.rooms.chat.new_person`)."""


class SeatClaimed(BaseModel):
    """The claimed seat and its secret token (keep it: it regains the seat after a reload)."""

    seat: int
    token: str


class BotSet(BaseModel):
    """``PUT /api/rooms/{code}/seats/{seat}/bot``: a bot level, or null to empty the seat."""

    model_config = ConfigDict(extra="forbid")

    level: str | None = Field(None, max_length=16)


class OpenSet(BaseModel):
    """``PUT /api/rooms/{code}/open``: list the room in the lobby's open tables, or not."""

    model_config = ConfigDict(extra="forbid")

    open: StrictBool


class StopSet(BaseModel):
    """``PUT /api/rooms/{code}/stop``: the host ends the no-limit match after the round in play
    (true), or takes that back (false)."""

    model_config = ConfigDict(extra="forbid")

    stop: StrictBool


class ChatRulesSet(BaseModel):
    """``PUT /api/rooms/{code}/chat``: whether spectators may write (null: unchanged), seats to
    mute (true) or unmute (false), and spectators to mute or unmute by their tags
    (`app.rooms.watchers`), e.g. ``{"spectators": true, "muted": {"2": true},
    "muted_spectators": {"3fa9c1d2": true}}``."""

    model_config = ConfigDict(extra="forbid")

    spectators: StrictBool | None = None
    muted: dict[Annotated[str, Field(max_length=8)], StrictBool] = Field(default_factory=dict, max_length=16)
    """By seat number as text, checked against the table's seats (`app.rooms.seats.seat_named`):
    a JSON key that only converts to one (``"01"``, ``" 1"``) names no seat."""
    muted_spectators: dict[Annotated[str, Field(pattern=TAG_PATTERN)], StrictBool] = Field(
        default_factory=dict, max_length=16
    )


class ReviewOption(BaseModel):
    """One legal action at a decision (RECORD.md's action JSON), its expected ``cost`` this round
    (Domeng: stones received minus paid; Kozel: points written) and ``lost``: its cost above the
    best option's."""

    action: dict[str, object]
    cost: float
    lost: float


class ReviewDecision(BaseModel):
    """A decision with two or more legal actions (engine.review.Decision): ``at`` is the action's
    index in the round (from 0); ``options`` best first; ``lost`` what the choice cost against the
    best, ``noise`` the largest standard error of the choice's paired differences with the other
    options over ``worlds`` sampled worlds and ``margin`` the half-width of a 95% interval of
    ``lost``, which a mistake must exceed (both null when the worlds cannot tell); ``marked`` a mistake;
    ``within_noise`` a loss above the threshold but inside the margin (too close to tell);
    ``chain`` (oriented pip pairs, left to right) and ``hand`` (tiles "a-b") as the seat saw them."""

    at: int
    chosen: dict[str, object]
    best: dict[str, object]
    options: list[ReviewOption]
    lost: float
    noise: float | None
    margin: float | None
    worlds: int
    marked: bool
    within_noise: bool
    chain: list[list[int]]
    hand: list[str]


class RoundReview(BaseModel):
    """A seat's review of one ended round (issue 16; engine.review.RoundReview): ``round`` from 0
    (the record's index), ``unit`` "stones" or "points", ``threshold`` the marking threshold in it,
    ``lost`` the marked decisions' total, ``marked`` their number; ``by_bot`` the indexes in the
    round (from 0) of the seat's moves a bot made for its person (not judged), ``by_timer`` those
    of them it made because the person's turn timer ran out (one turn; the others: while it
    covered their seat); ``all_by_bot``: a bot made every one of the seat's moves in the round,
    none was the person's own (the page says so rather than review nothing)."""

    variant: str
    round: int
    seat: int
    unit: str
    threshold: float
    samples: int
    seed: int
    lost: float
    marked: int
    decisions: list[ReviewDecision]
    by_bot: list[int]
    by_timer: list[int] = []
    all_by_bot: bool = False
