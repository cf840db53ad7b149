"""Making rooms: a new room from the lobby's settings, and a stored match's room restored from its
last round's start (issue 13). The hub (`app.rooms.hub.Hub`) decides when, and under which lease;
this module only builds."""

from __future__ import annotations

import hmac
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from app.metrics import Metrics
from app.rooms import frames
from app.rooms.config import RoomConfig
from app.rooms.errors import RoomError
from app.rooms.ports import BotPort, Clock, MatchStore
from app.rooms.recovery import Rebuilt, resume
from app.rooms.room import Room
from app.rooms.seats import SeatInfo, hash_token
from app.store import RoomRow, SeatRow, SeatSpec
from app.store.hints import HintRow
from engine.bots import BOTS
from engine.core import Phase
from engine.errors import EngineError
from engine.rules.base import Rules
from engine.variants import make_rules

__all__ = ["RoomMaker", "RoomPlan", "share_of"]


def share_of(address: str, key: str) -> str:
    """Whom the bot decisions of the rooms a client created count for (`Room.bot_share`), from
    its ``address`` (`app.addresses.counted_address`): 16 hex digits of HMAC-SHA-256 over it
    keyed with ``key``, the deployment's ``bot_share`` key (`app.store.Store.deployment_key`), so
    the same on every process and after a restart, and stored with the room's match
    (`app.store.models.Match.bot_share`) in place of the address; without the key, hashing every
    IPv4 address does not find the one it came from.

    >>> share_of("203.0.113.7", "k1") == share_of("203.0.113.7", "k1") != share_of("198.51.100.2", "k1")
    True
    >>> share_of("203.0.113.7", "k1") != share_of("203.0.113.7", "k2")
    True
    >>> len(share_of("203.0.113.7", "k1"))
    16
    """
    return hmac.new(key.encode(), f"bot-share:{address}".encode(), "sha256").hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class RoomPlan:
    """A new room's checked settings: its ``rules``, turn timer (seconds, 0 for none) and seats
    (bots at their levels, the others empty)."""

    rules: Rules
    turn_timer_s: float
    seats: tuple[SeatInfo, ...]


class RoomMaker:
    """Builds the rooms of one hub: each shares the hub's config, clock, bots and metrics, and
    writes to the store it is given (the hub's, or the hub's under a room's lease)."""

    def __init__(
        self, config: RoomConfig, store: MatchStore, metrics: Metrics, clock: Clock, bots: BotPort
    ) -> None:
        self.config = config
        self.store = store
        self.metrics = metrics
        self.clock = clock
        self.bots = bots

    def plan(
        self,
        variant: str,
        options: Mapping[str, object],
        seat_count: int | None,
        turn_timer_s: float | None,
        bot_levels: list[str | None] | None,
    ) -> RoomPlan:
        """Check a new room's settings (``turn_timer_s`` None: the configured default; bot levels
        per seat, None for a person's seat). Raises `RoomError` (422): the rules' own codes for a
        bad variant or option (`engine.variants.make_rules`), ``invalid_seats`` when ``bot_levels``
        does not list every seat, ``unknown_bot`` for a level that is not in `engine.bots.BOTS`."""
        try:
            rules = make_rules(variant, options, seat_count)
        except EngineError as error:
            raise RoomError(error.code, error.message, 422) from None
        levels = list(bot_levels or [None] * rules.seats)
        if len(levels) != rules.seats:
            raise RoomError("invalid_seats", f"'bots' must list {rules.seats} seats", 422)
        unknown = sorted({level for level in levels if level is not None and level not in BOTS})
        if unknown:
            raise RoomError("unknown_bot", f"unknown bot level(s) {unknown}; known: {sorted(BOTS)}", 422)
        timer = self.config.turn_timer_s if turn_timer_s is None else turn_timer_s
        seats = tuple(
            SeatInfo(i, "bot" if level else "empty", bot_level=level) for i, level in enumerate(levels)
        )
        return RoomPlan(rules, timer, seats)

    async def create(
        self,
        plan: RoomPlan,
        code: str,
        host_token: str,
        hints: bool,
        store: MatchStore,
        bot_share: str | None = None,
        creator_site: str | None = None,
    ) -> Room:
        """A new waiting room ``code`` of ``plan``, its match stored first in ``store``; its task
        not started. ``hints``: players may ask for hints (issue 16); ``bot_share``: whom its bot
        decisions count for (`share_of` its creator; None: the room alone, by its code), and
        ``creator_site`` (`share_of` its creator's IPv6 /48; None: none), stored with it. Raises
        the store's errors."""
        rules = plan.rules
        match_id = await store.create_match(
            code=code,
            variant=rules.name,
            options=rules.options(),
            seat_count=rules.seats,
            turn_timer_s=plan.turn_timer_s,
            host_token_hash=hash_token(host_token),
            seats=[SeatSpec(kind=s.kind, bot_level=s.bot_level, seat=s.seat) for s in plan.seats],
            start=None,
            hints=hints,
            bot_share=bot_share,
            creator_site=creator_site,
        )
        room = self.room(
            match_id,
            code,
            rules,
            plan.turn_timer_s,
            list(plan.seats),
            host_token_hash=hash_token(host_token),
            status="waiting",
            version=0,
            store=store,
        )
        room.hints = hints
        room.bot_share = bot_share or code
        room.creator_site = creator_site
        return room

    def restore(self, row: RoomRow, store: MatchStore | None = None, read_at: float | None = None) -> Room:
        """The room of a stored match, its game resumed from its last round's start
        (`app.rooms.recovery.resume`), writing to ``store`` (default: the maker's), ``row`` read
        at ``read_at`` on the clock's `monotonic` (default: now; the turn in play counts the time
        from then until its room is armed, `app.rooms.timing.Timing.resume_turn`); its task not
        started. Raises ValueError, KeyError or `EngineError` when it cannot be rebuilt."""
        read_at = self.clock.monotonic() if read_at is None else read_at
        match = row.match
        rules = make_rules(match.variant, match.options, match.seat_count)
        seats = [
            SeatInfo(
                s.seat,
                s.kind,  # type: ignore[arg-type]
                s.name,
                s.bot_level,
                s.token_hash,
                s.ready,
                replaced=s.replaced,
                former_token_hash=s.former_token_hash,
            )
            for s in match.seats
        ]
        room = self.room(
            match.id,
            match.code,
            rules,
            match.turn_timer_s,
            seats,
            host_token_hash=match.host_token_hash,
            status=match.status,
            version=match.version,
            room_match=match.room_match,
            store=store,
        )
        room.open_table = match.open_table
        room.listed_at = _listed_at(row, self.clock.time())
        room.hints = match.hints
        room.host_stop = match.host_stop
        room.bot_share = match.bot_share or match.code
        room.creator_site = match.creator_site
        room.unattended = match.unattended_rounds  # it still asks who watches, if it asked
        game = resume(row, rules)
        room.state, room.seed, room.commitment = game.state, game.seed, game.commitment
        room.last_round, room.marks, room.by_bot = game.last_round, game.marks, game.by_bot
        _adopt_covers(room, match.seats)
        if game.turn_age_s is not None:  # what was left of it, not a full timer
            room.resume_turn(game.turn_age_s, read_at, handed=row.handed)
        last = None if room.state is None else room.state.round_index - 1
        log = 0 if game.state is None else len(game.state.log)
        room.hints_given = [
            _hint_given(h.seat, h.seq, game.starts, log) for h in row.hints if h.round_index == last
        ]
        room.round_before = _round_before(room, game, row.hints)
        return room

    def room(
        self,
        match_id: int,
        code: str,
        rules: Rules,
        turn_timer_s: float,
        seats: list[SeatInfo],
        *,
        host_token_hash: str,
        status: str,
        version: int,
        room_match: int = 1,
        store: MatchStore | None = None,
    ) -> Room:
        """A `Room` of this hub's parts with these fields (the store: ``store`` or the maker's)."""
        return Room(
            room_match=room_match,
            match_id=match_id,
            code=code,
            rules=rules,
            turn_timer_s=turn_timer_s,
            seats=seats,
            host_token_hash=host_token_hash,
            status=status,
            version=version,
            config=self.config,
            store=store or self.store,
            clock=self.clock,
            bots=self.bots,
            metrics=self.metrics,
        )


def _listed_at(row: RoomRow, now: float) -> float | None:
    """When the stored match was first listed in the lobby, on this process's clock (``now``: its
    `Clock.time`): as long ago as the database's clock tells (`RoomRow.listed_at`, `RoomRow.read_at`),
    so loading the room again does not make its table new (`app.rooms.lobby.rank_tables`); now for
    a table listed before the store kept the time; None for one never listed."""
    if row.listed_at is not None and row.read_at is not None:
        return now - max(0.0, row.read_at - row.listed_at)
    return now if row.match.open_table else None


def _adopt_covers(room: Room, stored: Sequence[SeatRow]) -> None:
    """The rebuilt ``room``'s seats covered as ``stored`` (`app.rooms.seats.SeatInfo.cover`): a
    bot goes on covering a person's seat until they are back, as before the room was loaded. A
    stand-in is for the turn in play only: stored for a seat not to act (its turn was played, the
    room stopped before its end was stored), the seat's timer ran out once, no more."""
    state = room.state
    to_act = state.to_act if state is not None and state.phase is Phase.PLAYING else None
    for info, row in zip(room.seats, stored, strict=True):
        info.adopt_cover(row.cover)
        if info.stand_in and info.seat != to_act:
            info.stand_in = False
    room.covers_stored = (room.match_id, [row.cover for row in stored])


def _round_before(room: Room, game: Rebuilt, hints: Sequence[HintRow]) -> frames.RoundBefore | None:
    """For a room read back while a round is played: the round before it as it ended
    (`Room.round_before`, sent in whole states as ``round_before``: a page opened now offers its
    results), as the room serialised it at that round's end (`frames.round_end_json`), with the
    hints used in it (of ``hints``, the stored ones). None between rounds, or without it."""
    state, ended = room.state, game.ended
    if (
        state is None
        or state.phase is not Phase.PLAYING
        or ended is None
        or ended.round != state.round_index - 1
    ):
        return None
    log = len(ended.view.get("log", ()))
    ended.hints = [
        _hint_given(h.seat, h.seq, ended.starts, log) for h in hints if h.round_index == ended.round - 1
    ]
    return frames.RoundBefore(*frames.round_end_json(room, ended))


def _hint_given(seat: int, seq: int, starts: Sequence[int], log: int) -> dict[str, int]:
    """A stored hint of a round, as `RoomPublic.round.hints` lists it: ``{"seat": 0, "seq": 7,
    "at": 12}``, ``at`` the log index where the hinted turn's move begins (its action's events, by
    the round's ``starts``; ``log``, the round's log's length, while that move is still to come)."""
    return {"seat": seat, "seq": seq, "at": starts[seq] if seq < len(starts) else log}
