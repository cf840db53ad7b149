"""A room: one table, one asyncio task, one queue. Nothing else changes its state.

Every change follows the same order: check, apply (to a fork of the engine state), store (awaited
until durable), then send each recipient its own `player_view`. Client messages, HTTP commands,
timers and bots all become intents on the room's queue, so they are applied one at a time in
arrival order. A room's ``version`` grows by one with every stored change; presence (who is
connected) is sent separately and does not change the version.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import random
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson
import structlog

from app.connection import Connection
from app.metrics import Metrics
from app.names import is_reserved_name, name_key
from app.protocol import (
    CLOSE_REPLACED,
    CLOSE_ROOM_CLOSED,
    PROTOCOL_VERSION,
    ActionMessage,
    HelloMessage,
    to_engine_action,
)
from app.settings import Settings
from app.store import RoundEnd, SeatSpec, Store, TallySpec
from engine.actions import Action, Pass
from engine.bots import BOTS, Bot, make_bot
from engine.core import Deal, Phase, State
from engine.errors import EngineError
from engine.events import DomengOutcome, Drew, Passed
from engine.rules.base import Rules
from engine.tiles import Tile
from engine.views import events_json, outcome_to_json, player_view, private_view_json, shared_view_json

__all__ = [
    "COVER_BOT",
    "Actor",
    "Room",
    "RoomError",
    "SeatInfo",
    "SeatKind",
    "commitment_of",
    "deal_of",
    "hash_token",
]

_log = structlog.get_logger("domeng.room")

COVER_BOT = "greedy"
"""The bot level that covers for an absent player."""

SeatKind = Literal["empty", "human", "bot"]
Actor = Literal["human", "bot", "timer", "server"]


def _dumps(message: dict[str, Any]) -> str:
    """One JSON text frame (orjson: the server serialises a view per seat per update)."""
    return orjson.dumps(message).decode()


def hash_token(token: str) -> str:
    """The stored form of a secret token: hex SHA-256."""
    return hashlib.sha256(token.encode()).hexdigest()


def commitment_of(seed: str) -> str:
    """A deal's commitment: hex SHA-256 of its seed, sent before play, checked after the reveal."""
    return hashlib.sha256(seed.encode()).hexdigest()


class RoomError(Exception):
    """A refused command: ``code`` is stable, ``status`` the HTTP status it maps to."""

    def __init__(
        self, code: str, message: str, status: int = 409, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.headers = headers or {}


@dataclass
class SeatInfo:
    """A seat: empty, a human (with the hash of their secret token) or a bot of a level.

    ``covered`` marks a human seat that a bot is playing for (timer ran out, or absent too long).
    """

    seat: int
    kind: SeatKind = "empty"
    name: str | None = None
    bot_level: str | None = None
    token_hash: str | None = None
    covered: bool = False
    connections: int = 0

    def public(self) -> dict[str, Any]:
        """What everyone may know about the seat."""
        return {
            "seat": self.seat,
            "kind": self.kind,
            "name": self.name,
            "bot_level": self.bot_level,
            "connected": self.connections > 0 or self.kind == "bot",
            "covered": self.covered,
        }


@dataclass
class _Intent:
    future: asyncio.Future[Any] | None = field(default=None, kw_only=True)


@dataclass
class _Connect(_Intent):
    conn: Connection
    hello: HelloMessage


@dataclass
class _Disconnect(_Intent):
    conn: Connection


@dataclass
class _ClientAction(_Intent):
    conn: Connection
    message: ActionMessage
    received: float


@dataclass
class _Sync(_Intent):
    conn: Connection


@dataclass
class _Back(_Intent):
    conn: Connection


@dataclass
class _Auto(_Intent):
    """A bot's turn, a forced action, or a timeout, valid only at ``version``."""

    version: int
    reason: Literal["bot", "forced", "timer"]


@dataclass
class _GraceExpired(_Intent):
    seat: int
    epoch: int


@dataclass
class _NextRound(_Intent):
    version: int


@dataclass
class _Command(_Intent):
    """An HTTP command, run inside the room task: ``run(room)`` returns the reply."""

    run: Callable[[Room], Any]


class Room:
    """One table. Create with `Room.new` or `Room.restore`, then `start_task`."""

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
        settings: Settings,
        store: Store,
        metrics: Metrics,
    ) -> None:
        self.match_id = match_id
        self.code = code
        self.rules = rules
        self.turn_timer_s = turn_timer_s
        self.seats = seats
        self.host_token_hash = host_token_hash
        self.status = status
        self.version = version
        self.settings = settings
        self.store = store
        self.metrics = metrics
        self.state: State | None = None
        self.seed: str | None = None
        self.commitment: str | None = None
        self.last_round: dict[str, Any] | None = None
        self.turn_deadline: float | None = None  # epoch seconds
        self.conns: set[Connection] = set()
        self.queue: asyncio.Queue[_Intent | None] = asyncio.Queue()
        self.task: asyncio.Task[None] | None = None
        self._bots: dict[int, Bot] = {}
        self._rng = random.Random(secrets.randbits(128))
        self._timer: asyncio.TimerHandle | None = None
        self._grace: dict[int, asyncio.TimerHandle] = {}
        self._timer_key: tuple[int, str, int | None] | None = None
        self._epoch = 0

    # -- lifecycle -----------------------------------------------------------------------------

    def start_task(self) -> None:
        """Start the room's single writer task."""
        self.task = asyncio.create_task(self._run(), name=f"room-{self.code[:8]}")
        self._schedule()
        for seat in self.seats:
            if seat.kind == "human" and seat.connections == 0 and self.status == "playing":
                self._start_grace(seat.seat)

    async def stop(self) -> None:
        """Stop the task after the intents already queued."""
        if self.task is None:
            return
        self.queue.put_nowait(None)
        await self.task
        self._cancel_timers()

    def _cancel_timers(self) -> None:
        self._timer_key = None
        if self._timer is not None:
            self._timer.cancel()
        for handle in self._grace.values():
            handle.cancel()
        self._grace.clear()

    async def _run(self) -> None:
        while True:
            intent = await self.queue.get()
            if intent is None:
                return
            try:
                result = await self._handle(intent)
            except RoomError as error:
                self._settle(intent, error=error)
            except Exception as error:
                _log.exception("room_intent_failed", room=self.code, intent=type(intent).__name__)
                self._settle(intent, error=error)
                self._after_failure(intent)
            else:
                self._settle(intent, result=result)

    def _after_failure(self, intent: _Intent) -> None:
        """``intent`` failed unexpectedly (say the database refused a write, so the room's state is
        as it was): the player whose move it was hears so (``not_saved``), and the room's wait is
        armed afresh, so a bot's turn, a forced pass or the next deal is tried again rather than
        leaving the table stuck."""
        if isinstance(intent, _ClientAction) and not intent.conn.closed:
            self._error(intent.conn, "not_saved", "the move could not be saved; make it again")
        self._timer_key = None
        self._schedule()

    @staticmethod
    def _settle(intent: _Intent, result: Any = None, error: BaseException | None = None) -> None:
        future = intent.future
        if future is None or future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    async def call(self, run: Callable[[Room], Any]) -> Any:
        """Run ``run(room)`` inside the room task (an HTTP command) and return its reply;
        raises what it raises (`RoomError` for refusals)."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.queue.put_nowait(_Command(run, future=future))
        return await future

    async def connect(self, conn: Connection, hello: HelloMessage) -> None:
        """Authenticate ``conn`` and send it the full state; raises `RoomError` for a bad token."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.queue.put_nowait(_Connect(conn, hello, future=future))
        await future

    def action(self, conn: Connection, message: ActionMessage) -> None:
        """Queue a client's action."""
        self.queue.put_nowait(_ClientAction(conn, message, time.perf_counter()))

    def sync(self, conn: Connection) -> None:
        """Queue a full-state resend for ``conn``."""
        self.queue.put_nowait(_Sync(conn))

    def back(self, conn: Connection) -> None:
        """Queue a player's return: the bot covering their seat steps aside."""
        self.queue.put_nowait(_Back(conn))

    def disconnect(self, conn: Connection) -> None:
        """Queue the end of ``conn``."""
        self.queue.put_nowait(_Disconnect(conn))

    # -- dispatch ------------------------------------------------------------------------------

    async def _handle(self, intent: _Intent) -> Any:
        if isinstance(intent, _ClientAction | _Sync | _Back) and intent.conn.closed:
            return None  # queued before its socket was replaced or its seat given away: void
        match intent:
            case _ClientAction():
                await self._on_action(intent)
            case _Auto():
                await self._on_auto(intent)
            case _Connect():
                self._on_connect(intent.conn, intent.hello)
            case _Disconnect():
                self._on_disconnect(intent.conn)
            case _Back():
                if intent.conn.seat is not None:
                    self._uncover(intent.conn.seat)
            case _Sync():
                intent.conn.send(self._full_frame(intent.conn.seat))
            case _GraceExpired():
                await self._on_grace(intent)
            case _NextRound():
                if intent.version == self.version:
                    await self.deal_round()
            case _Command():
                result = intent.run(self)
                if asyncio.iscoroutine(result):
                    return await result
                return result
        return None

    # -- connections ---------------------------------------------------------------------------

    def seat_of_token(self, token: str) -> int:
        """The seat whose token this is; raises `RoomError` (``bad_token``, 403)."""
        digest = hash_token(token)
        for seat in self.seats:
            if seat.token_hash is not None and hmac.compare_digest(seat.token_hash, digest):
                return seat.seat
        raise RoomError("bad_token", "this token holds no seat in this room", 403)

    def _on_connect(self, conn: Connection, hello: HelloMessage) -> None:
        seat = None if hello.token is None else self.seat_of_token(hello.token)
        if seat is not None:
            for other in [c for c in self.conns if c.seat == seat]:
                other.close(CLOSE_REPLACED, "this seat was opened in another window")
                self._drop(other)
            info = self.seats[seat]
            info.connections += 1
            self._epoch += 1
            grace = self._grace.pop(seat, None)
            if grace is not None:
                grace.cancel()
        conn.seat = seat
        self.conns.add(conn)
        self.metrics.connections.inc()
        conn.send(_dumps({"type": "welcome", "protocol": PROTOCOL_VERSION, "seat": seat}))
        conn.send(self._full_frame(seat))
        if seat is not None:
            if self.seats[seat].covered:
                self._uncover(seat)
            else:
                self._send_presence()
        self._schedule()  # the first to come back to an unwatched table lets the next deal come

    def _uncover(self, seat: int) -> None:
        """The player is back: their seat is theirs again (timers restart for their turn)."""
        info = self.seats[seat]
        if not info.covered:
            return
        info.covered = False
        _log.info("seat_uncovered", room=self.code, seat=seat)
        self._send_presence()
        self._schedule()

    def _drop(self, conn: Connection) -> bool:
        """Forget ``conn`` (closed or closing); whether it was still counted."""
        if conn not in self.conns:
            return False
        self.conns.discard(conn)
        self.metrics.connections.dec()
        if conn.seat is not None:
            self.seats[conn.seat].connections -= 1
        return True

    def _on_disconnect(self, conn: Connection) -> None:
        if not self._drop(conn):
            return
        if not self.conns:
            self._schedule()  # nobody watches now: no next deal until someone is back
        if conn.seat is None:
            return
        info = self.seats[conn.seat]
        if info.connections == 0 and info.kind == "human" and self.status == "playing":
            self._start_grace(conn.seat)
        self._send_presence()

    def _start_grace(self, seat: int) -> None:
        self._epoch += 1
        epoch = self._epoch
        loop = asyncio.get_running_loop()
        old = self._grace.pop(seat, None)
        if old is not None:
            old.cancel()
        self._grace[seat] = loop.call_later(
            self.settings.disconnect_grace_s, self.queue.put_nowait, _GraceExpired(seat, epoch)
        )

    async def _on_grace(self, intent: _GraceExpired) -> None:
        info = self.seats[intent.seat]
        self._grace.pop(intent.seat, None)
        if info.kind != "human" or info.connections > 0 or info.covered:
            return
        info.covered = True
        _log.info("seat_covered", room=self.code, seat=intent.seat, why="disconnected")
        self._send_presence()
        self._schedule()

    # -- play ----------------------------------------------------------------------------------

    async def _on_action(self, intent: _ClientAction) -> None:
        conn, message = intent.conn, intent.message
        seat = conn.seat
        if seat is None:
            return self._error(conn, "not_seated", "spectators cannot act")
        if self.state is None or self.state.phase is not Phase.PLAYING:
            return self._error(conn, "round_over", "no round is being played")
        if message.version != self.version:
            return self._error(
                conn, "stale_version", f"action made at version {message.version}, room is at {self.version}"
            )
        try:
            action = to_engine_action(seat, message.action)
            fork = self.state.fork()
            fork.apply(action)
        except EngineError as error:
            return self._error(conn, error.code, error.message)
        self.seats[seat].covered = False  # acting is coming back
        await self._commit(fork, action, "human", intent.received)
        return None

    async def _on_auto(self, intent: _Auto) -> None:
        state = self.state
        if intent.version != self.version or state is None or state.phase is not Phase.PLAYING:
            return
        seat = state.to_act
        info = self.seats[seat]
        if intent.reason == "timer":
            if info.kind != "human" or info.covered:
                return
            info.covered = True
            _log.info("seat_covered", room=self.code, seat=seat, why="turn timer")
        legal = state.legal_actions()
        actor: Actor
        if len(legal) == 1 and isinstance(legal[0], Pass):
            action: Action = legal[0]
            actor = "server"
        else:
            action = self._bot_for(seat).choose(player_view(state, seat))
            actor = "timer" if intent.reason == "timer" else "bot"
        fork = state.fork()
        fork.apply(action)
        await self._commit(fork, action, actor, time.perf_counter())

    def _bot_for(self, seat: int) -> Bot:
        info = self.seats[seat]
        level = info.bot_level if info.kind == "bot" and info.bot_level else COVER_BOT
        bot = self._bots.get(seat)
        if bot is None or bot.name != level:
            bot = self._bots[seat] = make_bot(level, random.Random(self._rng.getrandbits(64)))
        return bot

    async def _commit(self, fork: State, action: Action, actor: Actor, received: float) -> None:
        """Store ``action`` (and the round's end with it, in one transaction), adopt ``fork``, then
        send everyone their view. A failed write raises and changes nothing: the room keeps its
        state, and the action can be made again."""
        old = self.state
        assert old is not None
        before = len(old.log)
        version = self.version + 1
        await self.store.append_action(
            self.match_id,
            old.round_index - 1,
            len(old.actions),
            version,
            action.seat,
            action.to_json(),
            actor,
            round_end=None if fork.phase is Phase.PLAYING else self._round_end(fork),
        )
        if fork.phase is Phase.OVER:
            self.status = "finished"
        self.state = fork
        self.version = version
        self.metrics.actions.inc()
        if fork.phase is not Phase.PLAYING:
            self._reveal_round()
        self._schedule()
        self._broadcast(before)
        self.metrics.latency.observe(time.perf_counter() - received)

    @staticmethod
    def _round_end(state: State) -> RoundEnd:
        """What the store keeps of the round ``state`` has just ended: its outcome, the table's
        stones, each seat's tally (stones received and paid from the round's settlements)."""
        outcome = state.outcome
        assert outcome is not None
        received = [0] * state.seats
        paid = [0] * state.seats
        settlements = [e.settlement for e in state.log if type(e) is Passed and e.settlement is not None]
        if isinstance(outcome, DomengOutcome):
            settlements.append(outcome.settlement)
        for s in settlements:
            received[s.receiver] += s.received
            for payer, amount in s.from_payers:
                paid[payer] += amount
        score = state.public_score()
        tallies = [
            TallySpec(
                seat=seat,
                stones=score["stones"][seat] if "stones" in score else None,
                received=received[seat],
                paid=paid[seat],
                points=score["points"][seat] if "points" in score else None,
                pending=score["pending"][seat] if "pending" in score else None,
            )
            for seat in range(state.seats)
        ]
        return RoundEnd(outcome_to_json(outcome), score.get("table"), tallies, state.phase is Phase.OVER)

    def _reveal_round(self) -> None:
        assert self.state is not None
        self.last_round = {
            "index": self.state.round_index - 1,
            "seed": self.seed,
            "commitment": self.commitment,
        }

    async def deal_round(self) -> None:
        """Deal the next round from a fresh secret seed; its commitment goes out with the deal."""
        state = self.state
        assert state is not None and state.phase is Phase.READY
        seed = secrets.token_hex(32)
        deal = self.rules.deal_from_seed(seed)
        fork = state.fork()
        fork.start_round(deal)
        version = self.version + 1
        await self.store.start_round(
            self.match_id,
            fork.round_index - 1,
            seed,
            commitment_of(seed),
            {"hands": [[str(t) for t in h] for h in deal.hands], "rest": [str(t) for t in deal.rest]},
            version,
        )
        self.state, self.version = fork, version
        self.seed, self.commitment = seed, commitment_of(seed)
        self._schedule()
        self._broadcast(0)

    async def begin_match(self) -> None:
        """Fill empty seats with bots and deal the first round (the host's ``start``)."""
        if self.status != "waiting":
            raise RoomError("already_started", "the match has already started")
        for info in self.seats:
            if info.kind == "empty":
                info.kind, info.bot_level = "bot", COVER_BOT
                await self.store.update_seat(
                    self.match_id, info.seat, name=None, kind="bot", bot_level=COVER_BOT, token_hash=None
                )
        self.status = "playing"
        await self.store.set_status(self.match_id, "playing", self.version)
        self.state = self.rules.new_match()
        for info in self.seats:  # left before the start: the grace runs from now
            if info.kind == "human" and info.connections == 0 and info.seat not in self._grace:
                self._start_grace(info.seat)
        await self.deal_round()

    # -- scheduling bots, forced passes, timers and the next deal ----------------------------

    def _schedule(self) -> None:
        """Arm the one timer the room needs now: the pause before the next deal, a bot's (or a
        forced pass's) delay, or the turn timer of a human's turn. Idempotent: when the same wait
        is already armed for the same version and seat (say another seat was just covered), it is
        left alone, so a player's turn deadline never restarts under them."""
        wait = self._wait()
        if wait is not None and wait == self._timer_key and self._timer is not None:
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._timer_key = wait
        self.turn_deadline = None
        if wait is None:
            return
        _, reason, _ = wait
        loop = asyncio.get_running_loop()
        if reason == "deal":
            self._timer = loop.call_later(
                self.settings.round_pause_s, self.queue.put_nowait, _NextRound(self.version)
            )
        elif reason == "timer":
            self.turn_deadline = time.time() + self.turn_timer_s
            self._timer = loop.call_later(
                self.turn_timer_s, self.queue.put_nowait, _Auto(self.version, "timer")
            )
        else:
            self._timer = loop.call_later(
                self.settings.bot_delay_s, self.queue.put_nowait, _Auto(self.version, reason)
            )

    def _wait(self) -> tuple[int, Literal["deal", "bot", "forced", "timer"], int | None] | None:
        """What the room waits for now, as (version, reason, seat to act), or None."""
        state = self.state
        if state is None or self.status != "playing":
            return None
        if state.phase is Phase.READY:
            # nobody at the table or watching: bots do not play on alone, round after round (a
            # no-limit match would never end); the round in play is finished, the next waits
            return (self.version, "deal", None) if self.conns else None
        if state.phase is not Phase.PLAYING:
            return None
        seat = state.to_act
        info = self.seats[seat]
        legal = state.legal_actions()
        if len(legal) == 1 and isinstance(legal[0], Pass):
            return (self.version, "forced", seat)
        if info.kind == "bot" or info.covered:
            return (self.version, "bot", seat)
        if self.turn_timer_s > 0:
            return (self.version, "timer", seat)
        return None

    # -- messages ------------------------------------------------------------------------------

    def public(self) -> dict[str, Any]:
        """The room as everyone may see it (RoomPublic in docs/protocol.md)."""
        state = self.state
        return {
            "code": self.code,
            "variant": self.rules.name,
            "options": self.rules.options(),
            "status": self.status,
            "version": self.version,
            "turn_timer_s": self.turn_timer_s,
            "seats": [s.public() for s in self.seats],
            "turn": None
            if state is None or state.phase is not Phase.PLAYING
            else {
                "seat": state.to_act,
                "deadline_ms": None if self.turn_deadline is None else int(self.turn_deadline * 1000),
            },
            "round": None
            if state is None or state.round_index == 0
            else {
                "index": state.round_index - 1,
                "commitment": self.commitment,
                "seed": self.seed if state.phase is not Phase.PLAYING else None,
            },
            "last_round": self.last_round,
        }

    def _broadcast(self, log_before: int) -> None:
        """Send each connection its own update: the view without its ``log``, and the round's events
        from ``log_before`` on (docs/protocol.md, "state"). The room and the part of the view that
        every recipient shares are serialised once; each seat (and the spectators) adds its own
        hand and legal actions, and its own events only when they hold a drawn tile."""
        conns = list(self.conns)
        state = self.state
        if not conns:
            return
        if state is None:
            whole = self._full_frame(None)
            for conn in conns:
                conn.send(whole)
            return
        head = b'{"type":"state","version":%d,"from":%d,"room":%s,"view":' % (
            self.version,
            log_before,
            orjson.dumps(self.public()),
        )
        shared = b"," + orjson.dumps(shared_view_json(state))[1:]

        def tail(seat: int | None) -> bytes:
            return b',"events":' + orjson.dumps(events_json(state, seat, log_before)) + b"}"

        private_events = any(type(e) is Drew for e in state.log[log_before:])
        events = tail(None)
        frames: dict[int | None, str] = {}
        for conn in conns:
            seat = conn.seat
            frame = frames.get(seat)
            if frame is None:
                own = tail(seat) if private_events and seat is not None else events
                private = orjson.dumps(private_view_json(state, seat))[:-1]
                frame = frames[seat] = (head + private + shared + own).decode()
            conn.send(frame)

    def _full_frame(self, seat: int | None) -> str:
        """A whole state for one recipient (on connect and on ``sync``): the view with its ``log``."""
        state = self.state
        view = None if state is None else player_view(state, seat).to_json()
        return _dumps(
            {
                "type": "state",
                "version": self.version,
                "from": self._log_length(),
                "room": self.public(),
                "view": view,
                "events": [],
            }
        )

    def _log_length(self) -> int:
        return 0 if self.state is None else len(self.state.log)

    def _send_presence(self) -> None:
        frame = _dumps(
            {"type": "presence", "version": self.version, "seats": [s.public() for s in self.seats]}
        )
        for conn in list(self.conns):
            conn.send(frame)

    def _error(self, conn: Connection, code: str, message: str) -> None:
        conn.send(_dumps({"type": "error", "code": code, "message": message, "version": self.version}))

    def close_all(self, reason: str) -> None:
        """Close every connection (the room is being closed)."""
        for conn in list(self.conns):
            conn.close(CLOSE_ROOM_CLOSED, reason)
            self._drop(conn)

    # -- host commands (run inside the task through `call`) ----------------------------------

    def check_host(self, token: str | None) -> None:
        """Raises `RoomError` (``not_host``, 403) unless ``token`` is this room's host token."""
        if token is None or not hmac.compare_digest(hash_token(token), self.host_token_hash):
            raise RoomError("not_host", "only the room's host may do this", 403)

    async def claim(self, seat: int, name: str) -> str:
        """Give ``seat`` to a person called ``name``; returns their secret seat token.

        Raises `RoomError`: ``no_such_seat`` (404), ``seat_taken`` (409), ``name_taken`` (409: a
        person at another seat has this name, `app.names.name_key`), ``name_reserved`` (422: the
        table's label of a bot or empty seat, such as "Bot 3").
        """
        info = self._seat(seat)
        open_seat = info.kind == "empty" or (info.kind == "bot" and self.status == "waiting")
        if not open_seat:
            raise RoomError("seat_taken", f"seat {seat} is taken")
        if is_reserved_name(name):
            raise RoomError("name_reserved", f"{name!r} is how the table names a bot or an empty seat", 422)
        key = name_key(name)
        if any(s.kind == "human" and s.name and name_key(s.name) == key for s in self.seats):
            raise RoomError("name_taken", f"someone at this table is already called {name!r}")
        token = secrets.token_urlsafe(32)
        await self.store.update_seat(
            self.match_id, seat, name=name, kind="human", bot_level=None, token_hash=hash_token(token)
        )
        info.kind, info.name, info.bot_level, info.token_hash = "human", name, None, hash_token(token)
        info.covered = False
        await self._seats_changed()
        return token

    async def set_bot(self, seat: int, level: str | None) -> None:
        """Make ``seat`` a bot of ``level`` (None: empty it) before the match starts, or replace a
        human with a bot at any time. Raises `RoomError` (``no_such_seat``, ``unknown_bot``)."""
        info = self._seat(seat)
        if level is not None and level not in BOTS:
            raise RoomError("unknown_bot", f"unknown bot level {level!r}", 422)
        if level is None and self.status != "waiting":
            raise RoomError("already_started", "seats cannot be emptied once the match started")
        for conn in [c for c in self.conns if c.seat == seat]:
            conn.close(CLOSE_REPLACED, "the host gave this seat to a bot")
            self._drop(conn)  # what it queued before this is void (`_handle`)
        grace = self._grace.pop(seat, None)
        if grace is not None:
            grace.cancel()
        kind: SeatKind = "bot" if level is not None else "empty"
        await self.store.update_seat(
            self.match_id, seat, name=None, kind=kind, bot_level=level, token_hash=None
        )
        info.kind, info.name, info.bot_level, info.token_hash, info.covered = kind, None, level, None, False
        await self._seats_changed()
        self._schedule()

    async def _seats_changed(self) -> None:
        self.version += 1
        await self.store.set_status(self.match_id, self.status, self.version)
        self._broadcast(self._log_length())

    def _seat(self, seat: int) -> SeatInfo:
        if not 0 <= seat < len(self.seats):
            raise RoomError("no_such_seat", f"no seat {seat} at this {len(self.seats)}-seat table", 404)
        return self.seats[seat]

    # -- construction --------------------------------------------------------------------------

    @staticmethod
    def seat_specs(bot_levels: list[str | None]) -> list[SeatSpec]:
        """Initial seats: a bot where a level is given, else empty."""
        return [
            SeatSpec(seat=i, name=None, kind="bot" if level else "empty", bot_level=level, token_hash=None)
            for i, level in enumerate(bot_levels)
        ]

    def restore_state(
        self, state: State, seed: str | None, commitment: str | None, last_round: dict[str, Any] | None
    ) -> None:
        """Adopt a state rebuilt from the store (restart recovery)."""
        self.state, self.seed, self.commitment, self.last_round = state, seed, commitment, last_round

    async def store_finished_round(self) -> None:
        """Recovery: if the rebuilt round has ended but its end was not stored, store it now (a
        database written before a round's end went in with its last action can hold such a round)."""
        state = self.state
        if state is None or not state.round_index or state.phase is Phase.PLAYING:
            return
        end = self._round_end(state)
        await self.store.end_round(
            self.match_id,
            state.round_index - 1,
            end.outcome,
            end.table_after,
            end.tallies,
            self.version,
            match_finished=end.match_finished,
        )
        if end.match_finished:
            self.status = "finished"


def deal_of(stored: dict[str, Any]) -> Deal:
    """The `Deal` of a stored round (``{"hands": [[tiles]...], "rest": [tiles]}``)."""
    return Deal(
        tuple(tuple(Tile.parse(t) for t in hand) for hand in stored["hands"]),
        tuple(Tile.parse(t) for t in stored["rest"]),
    )
