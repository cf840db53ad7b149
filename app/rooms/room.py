"""A room: one table, one asyncio task, one queue. Nothing else changes its state.

Every change follows one order (`Room.commit` for moves, `Room.save` for everything else):
compute the new state, store it with the room's next ``version`` in one transaction (awaited until
durable), adopt it, then send each recipient its own view. Client messages, HTTP commands, timers
and bot decisions all become intents on the room's queue, so they are applied one at a time in
arrival order. Presence (who is connected, which seat a bot covers) is sent separately and does not
change the version. The room talks only to its ports (`app.rooms.ports`).
"""

from __future__ import annotations

import asyncio
import functools
import hmac
import random
import secrets
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import orjson
import structlog

from app.metrics import Metrics
from app.rooms import frames
from app.rooms.commits import Commits, all_uncovered
from app.rooms.config import RoomConfig
from app.rooms.errors import RoomError
from app.rooms.intents import (
    Auto,
    Back,
    ClientAction,
    Command,
    Connect,
    Decided,
    Disconnect,
    GraceExpired,
    HostAway,
    Intent,
    IntentQueue,
    NextRound,
    Sync,
)
from app.rooms.moves import Moves
from app.rooms.ownership import elsewhere
from app.rooms.ports import BotPort, Clock, MatchStore, Outbox
from app.rooms.presence import Presence
from app.rooms.seats import SeatInfo, hash_token
from app.rooms.timing import Timing
from app.store import ConflictError, DatabaseLockedError, FencedOutError, StoreError
from app.throttle import Throttle
from engine.actions import Action
from engine.core import State
from engine.errors import EngineError
from engine.rules.base import Rules

if TYPE_CHECKING:
    from app.rooms.chat import ChatRoom

__all__ = [
    "FAILURE_LOG_S",
    "Actor",
    "Room",
]

_log = structlog.get_logger("domeng.room")

FAILURE_LOG_S = 10.0
"""A room logs its intents that failed on a database failure at most once in this many seconds."""

Actor = Literal["human", "bot", "timer", "cover", "server"]
"""Who made a move (stored with it, `app.store.models.ACTORS`): the seat's person, the seat's own
bot, a bot for a person whose turn timer ran out (that one turn), a bot covering a person's seat,
or the server (a forced pass)."""


class Room(Commits, Timing, Moves, Presence):
    """One table. Build it (`app.rooms.hub.Hub` does, new or from the store), `start_task`, then
    talk to it through `connect`, `act`, `sync`, `back`, `disconnect` and `call`."""

    out_of_step: Callable[[Room], None] | None = None
    """Called (from the room's task) when a write of the room is refused as already stored
    (`ConflictError`: its answer was lost, e.g. the database's connection dropped after the COMMIT
    reached it): the room's state is behind its stored log. The hub takes it out of memory and
    closes its sockets (``room_reloading``); their clients reconnect and the room is loaded from
    the store (`app.rooms.leased.LeasedRooms.reload`). None: the failed write is tried again, as
    any other."""

    bot_share: str
    creator_site: str | None

    round_before: frames.RoundBefore | None = None
    """The round that ended last as everyone may see it, for whole states while the next one is
    played (``round_before``): its number (`State.round_index` then) and its JSON
    (`app.rooms.frames.round_end_json`), made once, when a whole state first needs it
    (`app.rooms.frames.round_end_later`). None before a round of the match
    ended in this process: a room loaded again (a restart, a handoff) sends none until one ends."""

    rules_json: tuple[Rules, orjson.Fragment, orjson.Fragment] | None = None
    """The options and sides of `rules` as JSON, beside the very object they were made from
    (`app.rooms.frames.room_public_json`); None before the room's first update."""

    seats_json: tuple[tuple[Any, ...], orjson.Fragment] | None = None
    """The seats' public forms as JSON, beside their `app.rooms.seats.SeatInfo.public_key` then
    (`app.rooms.frames.room_public_json`): made again when a key changes; None before the room's
    first update."""

    private_parts: dict[int, tuple[int, str]] | None = None
    """Each seat's private part of its last update when it was not to act, by seat
    (`app.rooms.frames.send_updates`): its hand (a bit set) and the part as JSON text (seat, hand,
    no legal actions), kept until the hand changes; None before the room's first update."""

    def __init__(
        self,
        *,
        match_id: int,
        code: str,
        rules: Rules,
        turn_timer_s: float,
        seats: list[SeatInfo],
        host_token_hash: str,
        status: str,
        version: int,
        config: RoomConfig,
        room_match: int = 1,
        store: MatchStore,
        clock: Clock,
        bots: BotPort,
        metrics: Metrics,
    ) -> None:
        Presence.__init__(self)
        Moves.__init__(self)
        Timing.__init__(self)
        self.match_id, self.code, self.rules = match_id, code, rules
        self.room_match = room_match
        """The match's number in the room, from 1 (Play again starts the next: `next_match`)."""
        self.turn_timer_s, self.seats, self.host_token_hash = turn_timer_s, seats, host_token_hash
        self.status, self.version = status, version
        self.config, self.store, self.clock, self.bots, self.metrics = config, store, clock, bots, metrics
        self.bot_share, self.creator_site = code, None
        """``bot_share``: who this room's bot decisions count for when they queue for the workers
        (`BotPort`): a key made from its creator's client address (`app.rooms.making.share_of`),
        so all the rooms one client opened share one turn, else the room's own code;
        ``creator_site``: that key of its creator's IPv6 /48 (`app.addresses.counted_site`; None:
        an IPv4 creator, or not known). Stored with the match (`app.store.models.Match.bot_share`,
        ``creator_site``) and carried to the next by Play again: a room loaded again (a restart, a
        handoff) keeps them, and counts for its creator in the caps (`app.rooms.hub.Hub.creators`)."""
        self.state: State | None = None
        self.seed: str | None = None
        self.commitment: str | None = None
        self.last_round: dict[str, Any] | None = None
        self.previous_match: dict[str, Any] | None = None
        """The room's last match as it ended, as everyone may see it (`app.rooms.frames.previous_public`),
        sent with every whole state (``previous``); None in the room's first match. Set by Play again
        (`next_match`) and, for a room loaded again, from the store (`app.rooms.hub.Hub`)."""
        self.previous_json: tuple[dict[str, Any] | None, bytes] | None = None
        """`previous_match` serialised, beside the very object it was made from: made once per
        match, by the first whole state that sends it (`app.rooms.frames.full_frame`)."""
        self.turn_deadline: float | None = None  # epoch seconds
        self.queue = IntentQueue()
        self.task: asyncio.Task[None] | None = None
        self.marks: dict[int, int] = {}
        """Versions of the round in play → its log's length then (`hello.since`)."""
        self.by_bot: list[int] = []
        """The round's log indexes of the events of moves a bot made for a person (`BY_BOT`)."""
        self._rng = random.Random(secrets.randbits(128))
        self.open_table = False
        self.host_stop = False
        """The host asked to end this no-limit match (stored, `app.store.models.Match.host_stop`): it
        ends when the round in play ends (`app.rooms.commits.Commits.commit`); once finished, the
        host ended it (`app.rooms.host.stop_match`)."""
        self.hints = False
        """The host allows hints (issue 16)."""
        self.hints_given: list[dict[str, int]] = []
        """The hints used in the round in play (or the last ended one): ``{"seat", "seq"}``."""
        self.hint_at: tuple[int, dict[str, Any]] | None = None
        """The last hint given: the version it was for and its action (asking again gets it)."""
        """Listed in the lobby while it waits for players (the host's choice, stored)."""
        self.listed_at: float | None = None
        """When (epoch seconds, on `clock`) the host first listed the match in the lobby (None: not
        yet); kept while it is taken off and listed again (`app.rooms.host.set_open`) and when the
        room is loaded again from the store (`app.store.models.Match.listed_at`, on the database's
        clock), so neither makes it new. The next match (Play again) starts it again if listed."""
        self.chat: ChatRoom | None = None
        """The chat's rules and recent lines, loaded on first use (`app.rooms.chat`)."""
        self.last_active = clock.time()
        """When (clock seconds) the room last handled something or last had a connection."""
        self.covers_stored: tuple[int, list[str | None]] = (match_id, [s.cover for s in seats])
        """The match and its seats' covers as last stored (`store_covers`)."""
        self.unattended = 0
        """Rounds dealt in a row with no person at the table, the last among them
        (`app.rooms.unattended`; stored with each deal, `app.store.models.Match.unattended_rounds`):
        at `RoomConfig.unattended_rounds` the room holds its next deal to ask whether anyone
        still watches (`Timing.asks_watching`)."""
        self.retired = False
        """Unloaded from memory (`app.rooms.hub.Hub.unload`): it takes no more intents."""
        self._busy = False

    # -- lifecycle and the queue ---------------------------------------------------------------

    def start_task(self) -> None:
        """Start the room's single writer task."""
        self.task = asyncio.create_task(self._run(), name=f"room-{self.code[:8]}")
        self.schedule()
        self.grace_for_absent()
        if not self.host_conns:
            self.start_host_grace()  # loaded without the host: their grace runs from now

    async def stop(self, hand_over: bool = False) -> None:
        """Stop the task after the intents already queued; with ``hand_over`` (another process
        is to take the room in an orderly way: a handoff, a clean shutdown), store what is left
        of the turn in play first, so that its deadline stands there (`store_turn_left`)."""
        if self.task is None:
            return
        self.queue.put_nowait(None)
        await self.task
        if hand_over:
            await self.store_turn_left()
        self.cancel_timers()
        self.cancel_host_timer()

    async def store_turn_start(self) -> None:
        """If a turn's timer started afresh without a move (`Timing.stamp_due`: a covered player
        back on their own turn), store when it began (`MatchStore.stamp_turn`), so the room loaded
        again counts the turn from then, not from its move; for a turn resumed after a handoff,
        when it began as its time left says, its handoff's mark cleared. A failure is logged: the
        turn then counts from its move (or its handoff), as a room loaded again did before."""
        if not self.stamp_due:
            return
        self.stamp_due = False
        left = self.turn_left_s()
        used = 0.0 if left is None else max(0.0, self.turn_timer_s - left)
        try:
            await self.store.stamp_turn(self.match_id, used)
        except StoreError as error:
            _log.warning("turn_start_not_saved", room=self.code, error=str(error))

    def stored_covers(self) -> list[str | None]:
        """Each seat's cover as last stored for this match (`covers_stored`; a move stores those
        it changes with it, `app.rooms.commits.Commits.commit`, `store_covers` the others)."""
        match_id, stored = self.covers_stored
        if match_id != self.match_id:  # the next match (Play again): its seats were stored uncovered
            return [None] * len(self.seats)
        return stored

    def covers_settled(self) -> bool:
        """Whether every seat's cover is as last stored (as after most intents: `store_covers`
        has nothing to store); then the stored ones are this match's."""
        stored = self.stored_covers()
        seats = self.seats
        if not any(stored) and len(stored) == len(seats) and all_uncovered(seats):
            pass  # every seat uncovered, stored so (most intents): no seat-by-seat look
        elif [s.cover for s in seats] != stored:
            return False
        self.covers_stored = (self.match_id, stored)
        return True

    async def store_covers(self) -> None:
        """Store each seat's cover that changed since last stored (`SeatInfo.cover`: a bot covering
        it, standing in, the person's timer run out, or none of these; `MatchStore.cover_seats`;
        a move stores those it changes itself, in its own transaction: `Commits.commit`),
        so that the room loaded again goes on covering the seats it covered. A failure is logged
        and tried again after the next intent: the room loaded again meanwhile has the seat as
        last stored (before this was stored at all, every seat was loaded uncovered)."""
        if self.covers_settled():
            return
        stored = self.stored_covers()
        now = [s.cover for s in self.seats]
        changed = {
            seat: cover for seat, (cover, was) in enumerate(zip(now, stored, strict=True)) if cover != was
        }
        try:
            await self.store.cover_seats(self.match_id, changed)
        except StoreError as error:
            _log.warning("seat_covers_not_saved", room=self.code, error=str(error))
            self.covers_stored = (self.match_id, stored)
            return
        self.covers_stored = (self.match_id, now)

    async def store_turn_left(self) -> None:
        """The room is handed over: store the time its timed turn has used (`MatchStore.stamp_turn`
        with ``handed``), if a turn timer is armed. A failure is logged: the next owner then
        counts the turn as after a crash."""
        left = self.turn_left_s()
        if left is None:
            return
        try:
            await self.store.stamp_turn(self.match_id, self.turn_timer_s - left, handed=True)
        except StoreError as error:
            _log.warning("turn_left_not_saved", room=self.code, error=str(error))

    def cancel_timers(self) -> None:
        """Disarm every timer (the room is stopping) and forget pending bot decisions."""
        self.forget_wait()
        self.cancel_graces()
        for task in self._deciding:
            task.cancel()

    def idle_s(self) -> float:
        """Seconds since the room last handled anything while nobody is connected; 0 while
        someone is, or while it has work queued, in hand or a bot deciding."""
        if self.conns or self._busy or self._deciding or not self.queue.empty():
            return 0.0
        return max(0.0, self.clock.time() - self.last_active)

    async def _run(self) -> None:
        while (intent := await self.queue.get()) is not None:
            self._busy = True
            try:
                result = await self._handle(intent)
                self.tell_turn()
            except RoomError as error:
                intent.settle(error=error)
            except Exception as error:
                self._log_failure(intent, error)
                intent.settle(error=error)
                if isinstance(intent, ClientAction) and not intent.conn.closed:
                    self.refuse(intent.conn, "not_saved", "the move could not be saved; make it again")
                if isinstance(error, ConflictError) and self.out_of_step is not None:
                    self.out_of_step(self)  # stored already: loaded again from the store
                else:
                    self.rearm()  # a bot's turn, a forced pass or the next deal is tried again
                    self.tell_turn()
            else:
                intent.settle(result)
            finally:
                self._busy = False
                if not isinstance(intent, Command) or intent.touch:
                    self.last_active = self.clock.time()
            if self.stamp_due:
                await self.store_turn_start()
            if not self.covers_settled():
                await self.store_covers()

    @functools.cached_property
    def _failures_logged(self) -> Throttle:
        """Failed intents logged (`_log_failure`): one line per `FAILURE_LOG_S` at most, on the
        room's clock."""
        return Throttle(FAILURE_LOG_S, self.clock.monotonic)

    def _log_failure(self, intent: Intent, error: Exception) -> None:
        """Log a failed intent: a database failure (`StoreError`) as a warning without its
        traceback, at most one every `FAILURE_LOG_S` seconds per room with the number of failures
        since the last (a room retries its bots' turns about twice a second while the database is
        gone: one line each, with a traceback, flooded the log); anything else with its
        traceback."""
        if not isinstance(error, StoreError):
            _log.exception("room_intent_failed", room=self.code, intent=type(intent).__name__)
            return
        if isinstance(error, DatabaseLockedError) and error.at_stop:
            return  # the store logs these in one line as the server stops
        held = self._failures_logged.allow("write")
        if held is None:
            return
        _log.warning(
            "room_write_failed",
            room=self.code,
            intent=type(intent).__name__,
            failed=held + 1,  # this one and those held back since the last line
            error=f"{type(error).__name__}: {error}",
        )

    async def _ask(self, intent: Intent) -> Any:
        if self.retired:  # unloaded in between: the caller opens the room again from the store
            retry = {"Retry-After": "1"}
            raise RoomError("room_reloading", "the room is being reloaded; try again", 503, retry)
        intent.future = asyncio.get_running_loop().create_future()
        self.queue.put_nowait(intent)
        try:
            return await intent.future
        except FencedOutError:  # another process took the room meanwhile: nothing was stored
            raise elsewhere("this room moved to another server; try again") from None

    async def call(self, run: Callable[[Room], Any]) -> Any:
        """Run ``run(room)`` inside the room task (an HTTP command) and return its reply;
        raises what it raises (`RoomError` for refusals), and `RoomError` ``room_elsewhere``
        (503, ``Retry-After``) when the fence refused its write (docs/cluster.md): another
        process holds the room now and nothing of it was stored, so the caller may make it there
        (nginx passes the 503 on to the next process)."""
        return await self._ask(Command(run))

    async def connect(
        self,
        conn: Outbox,
        token: str | None,
        since: int | None = None,
        host: str | None = None,
        watcher: str | None = None,
        address: str | None = None,
        resume: str | None = None,
    ) -> None:
        """Admit ``conn`` (a seat's by ``token``, else a spectator, known by its ``watcher`` key
        when it has one; the host's too with the room's ``host`` token), from client ``address``
        (`app.addresses.counted_address`; None: not known), and send it the state, or only what
        it missed since version ``since``. ``resume``: the identity of the seat's connection an
        automatic reconnect follows (`app.rooms.presence.Presence.on_connect`). Raises `RoomError`
        (``bad_token``; ``replaced``: another connection said hello for the seat since the one
        ``resume`` names and still holds it; ``spectators_full``)."""
        await self._ask(Connect(conn, token, since, host, watcher, address, resume))

    def act(self, conn: Outbox, version: int, action: Action | EngineError) -> None:
        """Queue a client's action made at ``version`` (or the error its frame parsed to)."""
        self.queue.put_nowait(ClientAction(conn, version, action, time.perf_counter()))

    def sync(self, conn: Outbox) -> None:
        """Queue a full-state resend for ``conn``."""
        self.queue.put_nowait(Sync(conn))

    def back(self, conn: Outbox) -> None:
        """Queue a player's return: the bot covering their seat steps aside."""
        self.queue.put_nowait(Back(conn))

    def disconnect(self, conn: Outbox, silent_s: float = 0.0) -> None:
        """Queue the end of ``conn``, whose client was last heard ``silent_s`` seconds ago (its
        seat's grace counts from then: `app.rooms.presence.Presence.on_disconnect`)."""
        self.queue.put_nowait(Disconnect(conn, silent_s))

    async def settled(self, bots: bool = True) -> None:
        """Wait until the room has handled its queue and, with ``bots``, until no bot decision
        is pending either (tests drive a room this way)."""
        quiet = 0  # two handled calls in a row with nothing else to do: a decision the room had
        # taken off its queue just before the first one is handled by the second
        while quiet < 2:
            await self._ask(Command(lambda room: None, touch=False))
            if (not bots or not self._deciding) and self.queue.empty():
                quiet += 1
                continue
            quiet = 0
            if bots:
                await asyncio.gather(*self._deciding, return_exceptions=True)

    async def _handle(self, intent: Intent) -> Any:
        if isinstance(intent, ClientAction | Sync | Back) and intent.conn.closed:
            return None  # queued before its socket was replaced or its seat given away: void
        match intent:
            case ClientAction():
                await self.on_action(intent)
            case Auto():
                await self.on_auto(intent)
            case Decided():
                await self.on_decided(intent)
            case Connect():
                from app.rooms import chat  # noqa: PLC0415 (chat imports Room: a cycle at the top)

                host = intent.host is not None and hmac.compare_digest(
                    hash_token(intent.host), self.host_token_hash
                )
                await chat.refuse_removed(self, intent.token, host, intent.watcher, intent.address)
                self.on_connect(
                    intent.conn,
                    intent.token,
                    intent.since,
                    intent.host,
                    intent.watcher,
                    intent.address,
                    intent.resume,
                )
            case Disconnect():
                self.on_disconnect(intent.conn, intent.silent_s)
            case Back():
                if intent.conn.seat is not None:
                    self.uncover(intent.conn.seat)
            case Sync():
                intent.conn.send(frames.full_frame(self, intent.conn.seat))
            case GraceExpired():
                self.on_grace(intent.seat)
            case HostAway():
                self.on_host_away(intent.epoch)
            case NextRound():
                if intent.version == self.version and not self.asks_watching():
                    await self.deal_round()
                else:  # stale (see `on_auto`), or held to ask who watches: what it waits for now
                    self.schedule()
            case Command():
                result = intent.run(self)
                return await result if asyncio.iscoroutine(result) else result
        return None
