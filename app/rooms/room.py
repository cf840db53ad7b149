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
import random
import secrets
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

import structlog

from app.metrics import Metrics
from app.rooms import frames
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
    NextRound,
    Sync,
)
from app.rooms.moves import Moves
from app.rooms.pace import pause_s
from app.rooms.ports import BotPort, Clock, MatchStore, Outbox, Timer
from app.rooms.presence import Presence
from app.rooms.recovery import move_events, round_end
from app.rooms.schedule import Wait, next_wait
from app.rooms.seats import SeatInfo
from app.store.models import BY_BOT
from app.store.rows import NewRound, SeatChange, SeatSpec
from engine.actions import Action
from engine.core import Phase, State
from engine.errors import EngineError
from engine.rules.base import Rules

if TYPE_CHECKING:
    from app.rooms.chat import ChatRoom

__all__ = [
    "Actor",
    "Room",
]

_log = structlog.get_logger("domeng.room")

Actor = Literal["human", "bot", "timer", "cover", "server"]
"""Who made a move (stored with it, `app.store.models.ACTORS`): the seat's person, the seat's own
bot, a bot for a person whose turn timer ran out (that one turn), a bot covering a person's seat,
or the server (a forced pass)."""


class Room(Moves, Presence):
    """One table. Build it (`app.rooms.hub.Hub` does, new or from the store), `start_task`, then
    talk to it through `connect`, `act`, `sync`, `back`, `disconnect` and `call`."""

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
        self.match_id, self.code, self.rules = match_id, code, rules
        self.room_match = room_match
        """The match's number in the room, from 1 (Play again starts the next: `next_match`)."""
        self.turn_timer_s, self.seats, self.host_token_hash = turn_timer_s, seats, host_token_hash
        self.status, self.version = status, version
        self.config, self.store, self.clock, self.bots, self.metrics = config, store, clock, bots, metrics
        self.state: State | None = None
        self.seed: str | None = None
        self.commitment: str | None = None
        self.last_round: dict[str, Any] | None = None
        self.turn_deadline: float | None = None  # epoch seconds
        self.queue: asyncio.Queue[Intent | None] = asyncio.Queue()
        self.task: asyncio.Task[None] | None = None
        self.marks: dict[int, int] = {}
        """Versions of the round in play → its log's length then (`hello.since`)."""
        self.by_bot: list[int] = []
        """The round's log indexes of the events of moves a bot made for a person (`BY_BOT`)."""
        self._rng = random.Random(secrets.randbits(128))
        self._timer: Timer | None = None
        self._wait: Wait | None = None
        self.open_table = False
        self.hints = False
        """The host allows hints (issue 16)."""
        self.hints_given: list[dict[str, int]] = []
        """The hints used in the round in play (or the last ended one): ``{"seat", "seq"}``."""
        self.hint_at: tuple[int, dict[str, Any]] | None = None
        """The last hint given: the version it was for and its action (asking again gets it)."""
        """Listed in the lobby while it waits for players (the host's choice, stored)."""
        self.listed_at: float | None = None
        """Since when (epoch seconds) it has been listed."""
        self.chat: ChatRoom | None = None
        """The chat's rules and recent lines, loaded on first use (`app.rooms.chat`)."""
        self.last_active = clock.time()
        """When (clock seconds) the room last handled something or last had a connection."""
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

    async def stop(self) -> None:
        """Stop the task after the intents already queued."""
        if self.task is None:
            return
        self.queue.put_nowait(None)
        await self.task
        self.cancel_timers()
        self.cancel_host_timer()

    def cancel_timers(self) -> None:
        """Disarm every timer (the room is stopping) and forget pending bot decisions."""
        self._wait = None
        if self._timer is not None:
            self._timer.cancel()
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
                _log.exception("room_intent_failed", room=self.code, intent=type(intent).__name__)
                intent.settle(error=error)
                if isinstance(intent, ClientAction) and not intent.conn.closed:
                    self.refuse(intent.conn, "not_saved", "the move could not be saved; make it again")
                self.rearm()  # a bot's turn, a forced pass or the next deal is tried again
                self.tell_turn()
            else:
                intent.settle(result)
            finally:
                self._busy = False
                if not isinstance(intent, Command) or intent.touch:
                    self.last_active = self.clock.time()

    async def _ask(self, intent: Intent) -> Any:
        if self.retired:  # unloaded in between: the caller opens the room again from the store
            retry = {"Retry-After": "1"}
            raise RoomError("room_reloading", "the room is being reloaded; try again", 503, retry)
        intent.future = asyncio.get_running_loop().create_future()
        self.queue.put_nowait(intent)
        return await intent.future

    async def call(self, run: Callable[[Room], Any]) -> Any:
        """Run ``run(room)`` inside the room task (an HTTP command) and return its reply;
        raises what it raises (`RoomError` for refusals)."""
        return await self._ask(Command(run))

    async def connect(
        self, conn: Outbox, token: str | None, since: int | None = None, host: str | None = None
    ) -> None:
        """Admit ``conn`` (a seat's by ``token``, else a spectator; the host's too with the room's
        ``host`` token) and send it the state, or only what it missed since version ``since``;
        raises `RoomError` (``bad_token``)."""
        await self._ask(Connect(conn, token, since, host))

    def act(self, conn: Outbox, version: int, action: Action | EngineError) -> None:
        """Queue a client's action made at ``version`` (or the error its frame parsed to)."""
        self.queue.put_nowait(ClientAction(conn, version, action, time.perf_counter()))

    def sync(self, conn: Outbox) -> None:
        """Queue a full-state resend for ``conn``."""
        self.queue.put_nowait(Sync(conn))

    def back(self, conn: Outbox) -> None:
        """Queue a player's return: the bot covering their seat steps aside."""
        self.queue.put_nowait(Back(conn))

    def disconnect(self, conn: Outbox) -> None:
        """Queue the end of ``conn``."""
        self.queue.put_nowait(Disconnect(conn))

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
                self.on_connect(intent.conn, intent.token, intent.since, intent.host)
            case Disconnect():
                self.on_disconnect(intent.conn)
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
                if intent.version == self.version:
                    await self.deal_round()
            case Command():
                result = intent.run(self)
                return await result if asyncio.iscoroutine(result) else result
        return None

    async def commit(self, fork: State, action: Action, actor: Actor, received: float) -> None:
        """Store ``action`` (and the round's end with it, in one transaction), adopt ``fork``, then
        send everyone their view. A failed write raises and changes nothing: the room keeps its
        state, and the action can be made again."""
        old = self.state
        assert old is not None
        before, version = len(old.log), self.version + 1
        await self.store.append_action(
            self.match_id,
            old.round_index - 1,
            len(old.actions),
            version,
            action.seat,
            action.to_json(),
            actor,
            round_end=None if fork.phase is Phase.PLAYING else round_end(fork),
        )
        if fork.phase is Phase.OVER:
            self.status = "finished"
        self.state, self.version = fork, version
        self.marks[version] = len(fork.log)
        if actor in BY_BOT:
            self.by_bot.extend(move_events(fork.log, before))
        self.after_move(fork)
        self.metrics.actions.inc()
        if fork.phase is not Phase.PLAYING:
            fork.forget_rounds(1)  # only the last round's reveal stays in memory
            self.last_round = {
                "index": fork.round_index - 1,
                "seed": self.seed,
                "commitment": self.commitment,
            }
        self.schedule()
        frames.send_updates(self, self.conns, before)
        self.metrics.latency.observe(time.perf_counter() - received)

    async def save(
        self,
        seats: Sequence[SeatChange] = (),
        status: str | None = None,
        new_round: NewRound | None = None,
        open_table: bool | None = None,
        options: dict[str, Any] | None = None,
        turn_timer_s: float | None = None,
        hints: bool | None = None,
    ) -> int:
        """Store a change that is not a move with the next version, in one transaction; returns
        that version. The caller adopts the change (`adopt`) only after this returns."""
        version = self.version + 1
        await self.store.save_room(
            self.match_id,
            version,
            seats=seats,
            status=status,
            new_round=new_round,
            open_table=open_table,
            options=options,
            turn_timer_s=turn_timer_s,
            hints=hints,
        )
        return version

    def after_move(self, state: State) -> None:
        """A stand-in's one turn is over once the turn moved on (a Kozel draw keeps it); at the
        match's end no bot plays for anyone any more."""
        for info in self.seats:
            if self.status == "finished":
                info.release()
            elif info.stand_in and (state.phase is not Phase.PLAYING or state.to_act != info.seat):
                info.stand_in = False

    def adopt(self, version: int, seats: Sequence[SeatChange] = (), status: str | None = None) -> None:
        """Adopt a stored change: its version, seats and status (then the caller sends)."""
        self.version = version
        for change in seats:
            self.seats[change.seat].become(change.spec)
        if status is not None:
            self.status = status
        self.marks[version] = 0 if self.state is None else len(self.state.log)

    def next_match(self, match_id: int, room_match: int, version: int, seats: Sequence[SeatSpec]) -> None:
        """Adopt the room's next match, stored (Play again): match ``match_id``, number
        ``room_match`` in the room, waiting for its start at ``version`` with ``seats``; the last
        match's game, reveal and marks are gone (a client's ``since`` from it gets a whole state),
        its graces and timers too. The caller sets the chat and sends."""
        self.cancel_timers()
        self.match_id, self.room_match, self.status = match_id, room_match, "waiting"
        self.state, self.seed, self.commitment, self.last_round = None, None, None, None
        self.by_bot, self.marks, self.turn_deadline = [], {}, None
        self.adopt(version, seats=[SeatChange(spec.seat or 0, spec) for spec in seats])
        self.listed_at = self.clock.time() if self.open_table else None
        self.schedule()

    # -- what happens next ---------------------------------------------------------------------

    def current_wait(self) -> Wait | None:
        """What the room waits for now (`app.rooms.schedule.next_wait`)."""
        return next_wait(
            self.state,
            self.seats,
            status=self.status,
            version=self.version,
            watched=bool(self.conns),
            turn_timer_s=self.turn_timer_s,
        )

    def schedule(self) -> None:
        """Arm the one timer the room needs now. Idempotent: when the same wait is already armed
        (say another seat was just covered), it is left alone, so a player's turn deadline never
        restarts under them."""
        wait = self.current_wait()
        if wait is not None and wait == self._wait and self._timer is not None:
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._wait, self.turn_deadline = wait, None
        if wait is None:
            return
        put = self.queue.put_nowait
        if wait.reason == "deal":
            self._timer = self.clock.call_later(
                self.config.round_pause_s, lambda: put(NextRound(wait.version))
            )
        elif wait.reason == "timer":
            self.turn_deadline = self.clock.time() + self.turn_timer_s
            self._timer = self.clock.call_later(self.turn_timer_s, lambda: put(Auto(wait.version, "timer")))
        elif wait.reason == "forced":
            pause = pause_s(self._rng, self.config.bot_delay_s, 1)
            self._timer = self.clock.call_later(pause, lambda: put(Auto(wait.version, "forced")))
        else:  # a bot: asked now, its move played once its pause is over (app.rooms.pace)
            assert self.state is not None
            pause = pause_s(self._rng, self.config.bot_delay_s, len(self.state.legal_actions()))
            play_at = self.clock.time() + pause
            self._timer = self.clock.call_later(0.0, lambda: put(Auto(wait.version, "bot", play_at)))

    def hold(self, delay_s: float, intent: Intent) -> None:
        """Queue ``intent`` again in ``delay_s`` seconds, as the wait's one timer (a bot's move
        waiting for its pause to end): when the room moves on first, `schedule` cancels it."""
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self.clock.call_later(delay_s, lambda: self.queue.put_nowait(intent))

    def rearm(self) -> None:
        """Arm the wait afresh even if it looks armed (after a failure or a stale decision)."""
        self._wait = None
        self.schedule()
