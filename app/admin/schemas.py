"""The admin API's JSON shapes (pydantic response models, named by role as in the FastAPI
template): what the admin pages show, field by field. Seats are indexes (P0 = 0), stones and points
are counts, times are ISO 8601 UTC, milliseconds only where a name says so."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ChatLog",
    "ChatLogLine",
    "ChatRules",
    "EffectiveStatus",
    "HintUsed",
    "LoginBody",
    "LoginDone",
    "MatchChart",
    "MatchDetail",
    "MatchPage",
    "MatchResult",
    "MatchSummary",
    "PayerShare",
    "PlayerPage",
    "PlayerTotals",
    "ReplayFrame",
    "RoomClosed",
    "RoomList",
    "RoomLive",
    "RoomMatchLink",
    "RoundDetail",
    "RoundReplay",
    "SeatAdmin",
    "SeatLive",
    "SeriesOfSeat",
    "SessionInfo",
    "TallyOut",
    "Transfer",
]

EffectiveStatus = Literal["waiting", "playing", "finished", "abandoned"]


class LoginBody(BaseModel):
    """``POST /api/admin/login``: the admin secret (``DOMENG_ADMIN_TOKEN``)."""

    model_config = ConfigDict(extra="forbid")

    secret: str = Field(min_length=1, max_length=512)


class LoginDone(BaseModel):
    """A new session: its cookie is set; ``expires_at`` is when it ends."""

    expires_at: datetime


class SessionInfo(BaseModel):
    """Who is asking: signed in by ``cookie`` (with its expiry) or ``bearer`` secret."""

    via: Literal["cookie", "bearer"]
    expires_at: datetime | None


class SeatAdmin(BaseModel):
    """A stored seat: ``kind`` empty, human or bot; ``display_name`` as records name it;
    ``former``: the person whose seat the host gave to a bot during the match (they made the
    seat's moves marked ``human`` until then), or None."""

    seat: int
    kind: str
    name: str | None
    bot_level: str | None
    display_name: str
    former: str | None = None


class MatchResult(BaseModel):
    """Where a match stands after its last finished round.

    Domeng fills ``stones`` (per seat, after the last round), ``table``, ``camat``,
    ``camat_elections`` and ``received`` (stones received over the match, per seat); Kozel fills
    ``points`` (recorded), ``pending`` (unrecorded) and ``goat``. ``standings`` lists every seat
    best first as the engine ranks them (Domeng: most elections, then fewest stones received,
    `engine.rules.domeng.domeng_standings`; Kozel: fewest points, then fewest pending);
    ``places`` gives each of them its place (1 best; seats equal on both keys share one), and
    ``leaders`` are the seats tied first.
    """

    finished_rounds: int
    match_over: bool
    leaders: list[int]
    standings: list[int] = []
    places: list[int] = []
    stones: list[int] | None = None
    table: int | None = None
    camat: int | None = None
    camat_elections: list[int] | None = None
    received: list[int] | None = None
    points: list[int] | None = None
    pending: list[int] | None = None
    goat: list[int] | None = None


class MatchSummary(BaseModel):
    """One row of the match list.

    ``status`` is the effective status (docs/admin.md): the stored one, except that an unfinished
    match idle for ``DOMENG_ABANDONED_AFTER_S`` is ``abandoned``; ``abandoned_reason`` says
    ``closed`` (by an admin) or ``idle``. ``live``: a room of this server hosts it now.
    ``hosted`` (a ``waiting`` or ``playing`` match only, else None): whether a room in memory,
    on any server process, holds it now; False means its stored status is the last one known
    (its server stopped, or its room left memory idle: opening its link loads it again), since
    ``last_active_at``; None also when the other processes could not be asked (Redis).
    ``room_match``: its number among the matches of its room (``code``), from 1 (Play again).
    ``host_stop``: the host asked to end this no-limit match after the round in play (``playing``),
    or ended it so (``finished``: "stopped by the host", its record's ``ended_by``).
    """

    id: int
    code: str
    variant: str
    options: dict[str, Any]
    status: EffectiveStatus
    stored_status: str
    abandoned_reason: Literal["closed", "idle"] | None
    live: bool
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    last_active_at: datetime
    round_count: int
    seats: list[SeatAdmin]
    result: MatchResult | None
    room_match: int = 1
    host_stop: bool = False
    hosted: bool | None = None


class MatchPage(BaseModel):
    """A page of matches, newest first; ``total`` matches pass the filters, of which one bulk
    export (`app.admin.routes.export_matches`) holds ``export_limit`` at most."""

    items: list[MatchSummary]
    page: int
    per_page: int
    total: int
    export_limit: int = 0


class PayerShare(BaseModel):
    """Stones one payer handed over in a settlement (0 when they had none left)."""

    seat: int
    stones: int


class Transfer(BaseModel):
    """One stone transfer (engine `Settlement`, D5): ``receiver`` was owed ``owed`` stones for
    ``reason``; ``from_table`` came from the table, then each payer in order; ``cancelled`` nobody
    could pay. ``action`` is the index of the action that caused it (a pass), or None for the
    round's end. ``text`` says it in a sentence."""

    reason: str
    receiver: int
    owed: int
    received: int
    from_table: int
    from_payers: list[PayerShare]
    cancelled: int
    action: int | None
    text: str


class TallyOut(BaseModel):
    """A seat's stored result of the round: Domeng stones after it, received and paid in it;
    Kozel points and pending after it."""

    seat: int
    stones: int | None
    received: int
    paid: int
    points: int | None
    pending: int | None


class RoundDetail(BaseModel):
    """One stored round: its deal (every hand and the unused tiles or the bazaar, top first), its
    actions, how it ended in the game's words, and the stone transfers. ``replay_agrees`` is
    whether replaying the round through the engine gives the stored outcome (None while unfinished)."""

    index: int
    seed: str
    commitment: str
    started_at: datetime
    ended_at: datetime | None
    hands: list[list[str]]
    rest: list[str]
    rest_name: Literal["unused", "bazaar"]
    actions: list[dict[str, Any]]
    actors: list[str]
    outcome: dict[str, Any] | None
    summary: list[str]
    transfers: list[Transfer]
    tallies: list[TallyOut]
    replay_agrees: bool | None


class SeriesOfSeat(BaseModel):
    """One seat's line of the chart: its value after each finished round."""

    seat: int
    name: str
    values: list[int]


class MatchChart(BaseModel):
    """Each seat's stones (Domeng) or recorded points (Kozel) after each finished round (numbered
    from 1); Domeng also the table's stones."""

    unit: Literal["stones", "points"]
    rounds: list[int]
    series: list[SeriesOfSeat]
    table: list[int] | None


class HintUsed(BaseModel):
    """A hint a player asked for (issue 16): in round ``round`` (from 0), when ``seq`` of its
    actions were stored, ``seat`` was shown ``action`` (RECORD.md JSON)."""

    round: int
    seq: int
    seat: int
    action: dict[str, Any]


class RoomMatchLink(BaseModel):
    """One match of a room, for the links between them: its ``id``, ``number`` in the room (from
    1) and stored ``status``."""

    id: int
    number: int
    status: str


class MatchDetail(MatchSummary):
    """A match in full: options and seats (above), the turn timer, its ``start`` position, every
    round, the chart, ``replay_error`` if the stored actions do not replay (should not happen),
    and ``room_matches``: every match of its room in order, this one among them (Play again)."""

    turn_timer_s: float
    start: dict[str, Any] | None
    rounds: list[RoundDetail]
    chart: MatchChart
    replay_error: str | None
    room_matches: list[RoomMatchLink] = Field(default_factory=list)
    hints: bool = False
    """Whether the host allowed hints."""
    hints_used: list[HintUsed] = Field(default_factory=list)
    """Every hint used, in order."""


class ReplayFrame(BaseModel):
    """The round after ``step`` actions (0: as dealt), with every hand visible.

    ``action`` is the step's action (RECORD.md notation) and ``actor`` who made it; ``events``
    what it caused; ``chain`` the line left to right as laid tiles ``"a-b"``, ``ends`` the open
    ends; ``rest`` the unused tiles (Domeng) or what is left of the bazaar (Kozel, top first);
    ``score`` the public score (Domeng: table, stones, camat...; Kozel: points, pending...);
    ``outcome`` once the round has ended.
    """

    step: int
    action: dict[str, Any] | None
    actor: str | None
    text: str
    to_act: int | None
    hands: list[list[str]]
    chain: list[str]
    ends: list[int] | None
    rest: list[str]
    score: dict[str, Any]
    events: list[dict[str, Any]]
    outcome: dict[str, Any] | None


class RoundReplay(BaseModel):
    """Every step of one round, built by the engine from the stored deal and actions."""

    match_id: int
    round: int
    rounds: int
    variant: str
    seats: list[str]
    rest_name: Literal["unused", "bazaar"]
    finished: bool
    frames: list[ReplayFrame]


class PlayerTotals(BaseModel):
    """Totals of one display name (people) or bot level (bots) over every stored match.

    ``matches`` they sat in; ``rounds`` finished rounds they sat through (a bot level counts each
    of its seats); Domeng ``stones_received``/``stones_paid`` and ``camat_elections``; Kozel
    ``points`` (recorded at the end of each match, summed) and ``goats``. A seat is credited to
    whoever holds it now: a player replaced by a bot leaves the seat's rounds, stones, points
    and goats to the bot, but the match still counts for them (``matches``), and ``replaced``
    says in how many of those matches the host gave their seat to a bot (``seats.former``).
    """

    display_name: str
    kind: Literal["human", "bot"]
    name: str | None
    bot_level: str | None
    matches: int
    rounds: int
    stones_received: int
    stones_paid: int
    camat_elections: int
    points: int
    goats: int
    replaced: int = 0


class PlayerPage(BaseModel):
    """A page of players, most matches first."""

    items: list[PlayerTotals]
    page: int
    per_page: int
    total: int


class SeatLive(BaseModel):
    """A live seat: who sits there, how many sockets it has, whether a bot covers for them."""

    seat: int
    kind: str
    name: str | None
    bot_level: str | None
    connections: int
    covered: bool


class RoomLive(BaseModel):
    """An open room of this server: its match, state and connections.

    ``phase`` ready/playing/over (None before the first deal), ``round`` the round in play or
    last played (from 0), ``to_act`` the seat whose turn it is, ``turn_deadline_ms`` epoch ms;
    ``queued`` intents waiting for the room's task, ``task_alive`` whether that task runs;
    ``idle_s`` seconds since the room last did anything with nobody connected (0 while in use):
    at ``DOMENG_ROOM_UNLOAD_AFTER_S`` it leaves memory, at ``DOMENG_ABANDONED_AFTER_S`` an
    unfinished one is closed as abandoned. ``process``: with several processes (docs/cluster.md),
    the id (host:pid:random) of the process hosting it; None with one process.
    """

    code: str
    match_id: int
    variant: str
    status: str
    version: int
    phase: str | None
    round: int | None
    to_act: int | None
    turn_deadline_ms: int | None
    connections: int
    spectators: int
    queued: int
    task_alive: bool
    idle_s: float
    seats: list[SeatLive]
    process: str | None = None


class RoomList(BaseModel):
    """Every open room, newest match first: this process's, and with several processes every
    other process's that answered; ``unanswered``: the processes that did not answer in time (or
    failed to)."""

    rooms: list[RoomLive]
    unanswered: list[str] = []


class RoomClosed(BaseModel):
    """A closed room: how many sockets were closed (code 4003), how its task ended (``stopped``
    after what was queued, or ``cancelled`` when it did not stop in time), and the match's stored
    status now (``abandoned``, or ``finished`` if it had already ended)."""

    code: str
    match_id: int
    disconnected: int
    task: Literal["stopped", "cancelled", "none"]
    status: str


class ChatRules(BaseModel):
    """The host's chat rules: whether spectators may write, the muted seats (from 0) and the muted
    spectators' tags (`app.rooms.watchers`)."""

    spectators: bool
    muted: list[int]
    muted_spectators: list[str] = []


class ChatLogLine(BaseModel):
    """One chat line: ``text`` or ``reaction``, from ``seat`` (None: a spectator) under ``name``,
    sent when ``seq`` actions of round ``round`` (from 0) were stored; ``at`` in Unix ms."""

    id: int
    seat: int | None
    name: str
    text: str | None
    reaction: str | None
    round: int
    seq: int
    at: int
    match: int = 1
    """The room's match it was said in (its own, on a match's page)."""
    watcher: str | None = None
    """A spectator's public tag (None: a seat's line, or a line stored before tags)."""


class ChatLog(BaseModel):
    """A match's chat: the rules and every line in order."""

    rules: ChatRules
    lines: list[ChatLogLine]
