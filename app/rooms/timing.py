"""The room's one timer: what it waits for now (`app.rooms.schedule.next_wait`, pure) armed on the
injected `Clock` as the intent that ends the wait (the next deal, a turn timer running out, a forced
pass, a bot's turn)."""

from __future__ import annotations

import asyncio
import random

from app.rooms.config import RoomConfig
from app.rooms.intents import Auto, Intent, NextRound
from app.rooms.pace import pause_s
from app.rooms.ports import Clock, Outbox, Timer
from app.rooms.schedule import Wait, next_wait
from app.rooms.seats import SeatInfo
from engine.actions import Play, PlayLempas
from engine.core import State

__all__ = [
    "RESUMED_TURN_MIN_S",
    "Timing",
]

RESUMED_TURN_MIN_S = 10.0
"""Seconds a turn loaded again from the store keeps at least (or its whole timer if shorter): the
time the server was down, or the room was moving to another process, is nobody's fault, and the
player's page needs a moment to reconnect (its retries start at 0.25 s, `static/js/connection.js`)
and to show the board again before the turn can be taken from them."""


class Timing:
    """The timer half of `app.rooms.room.Room` (which provides the attributes declared here). At
    most one timer is armed at a time, for the wait `current_wait` names."""

    state: State | None
    seats: list[SeatInfo]
    status: str
    version: int
    turn_timer_s: float
    turn_deadline: float | None
    conns: set[Outbox]
    config: RoomConfig
    clock: Clock
    queue: asyncio.Queue[Intent | None]
    _rng: random.Random

    def __init__(self) -> None:
        self._timer: Timer | None = None
        self._wait: Wait | None = None
        # the turn the deadline is for: the state it was armed in (every move makes a new one), the
        # seat to act, and when it is due on the clock's `monotonic` (a wall clock set back or
        # forward meanwhile must not move it)
        self._timed_turn: tuple[State, int, float] | None = None

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
        restarts under them. Nor does a new version that is not a move (the host's stop or its
        taking back, a seat claimed): the same turn (the same state, every move making a new one,
        and seat) keeps its deadline, what is left of it measured on the clock's `monotonic` (the
        wall clock may be set meanwhile); a move, a Kozel draw among them, starts a full one."""
        wait = self.current_wait()
        if wait is not None and wait == self._wait and self._timer is not None:
            return
        self.disarm()
        deadline, turn = self.turn_deadline, self._timed_turn
        self._wait, self.turn_deadline, self._timed_turn = wait, None, None
        if wait is None:
            return
        put = self.queue.put_nowait
        if wait.reason == "timer":
            assert self.state is not None and wait.seat is not None
            now = self.clock.monotonic()
            if deadline is None or turn is None or turn[0] is not self.state or turn[1] != wait.seat:
                deadline, due = self.clock.time() + self.turn_timer_s, now + self.turn_timer_s
            else:
                due = turn[2]
            self._timed_turn = (self.state, wait.seat, due)
            self.turn_deadline = deadline
            self._timer = self.clock.call_later(max(0.0, due - now), lambda: put(Auto(wait.version, "timer")))
            return
        if wait.reason == "deal":
            self._timer = self.clock.call_later(
                self.config.round_pause_s, lambda: put(NextRound(wait.version))
            )
        elif wait.reason == "forced":
            pause = pause_s(self._rng, self.config.bot_delay_s, forced=True)
            self._timer = self.clock.call_later(pause, lambda: put(Auto(wait.version, "forced")))
        else:  # a bot: asked now, its move played once its pause is over (app.rooms.pace)
            assert self.state is not None
            legal = self.state.legal_actions()  # a lone draw is forced too (K3); a lone tile is not
            forced = not any(isinstance(action, (Play, PlayLempas)) for action in legal)
            pause = pause_s(self._rng, self.config.bot_delay_s, forced=forced)
            play_at = self.clock.time() + pause
            self._timer = self.clock.call_later(0.0, lambda: put(Auto(wait.version, "bot", play_at)))

    def resume_turn(self, age_s: float) -> None:
        """The turn in play (a room loaded again from the store: a restart, another process taking
        it) began ``age_s`` seconds ago (`app.rooms.recovery.turn_age_s`): when `schedule` arms
        its timer it keeps what is left of it, never more than a whole turn, and at least
        `RESUMED_TURN_MIN_S` of it (a turn past its end is not taken the moment the room is back).
        Otherwise the deadline the pages were told stands, give or take the difference between the
        store's clock and the room's."""
        assert self.state is not None
        left = self.turn_timer_s - min(max(0.0, age_s), self.turn_timer_s)
        left = max(left, min(RESUMED_TURN_MIN_S, self.turn_timer_s))
        self.turn_deadline = self.clock.time() + left
        self._timed_turn = (self.state, self.state.to_act, self.clock.monotonic() + left)

    def hold(self, delay_s: float, intent: Intent) -> None:
        """Queue ``intent`` again in ``delay_s`` seconds, as the wait's one timer (a bot's move
        waiting for its pause to end): when the room moves on first, `schedule` cancels it."""
        self.disarm()
        self._timer = self.clock.call_later(delay_s, lambda: self.queue.put_nowait(intent))

    def rearm(self) -> None:
        """Arm the wait afresh even if it looks armed (after a failure or a stale decision); a
        turn's deadline stands (`schedule`)."""
        self._wait = None
        self.schedule()

    def disarm(self) -> None:
        """Cancel the armed timer, if any (the wait is forgotten only by `forget_wait`)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def forget_wait(self) -> None:
        """Disarm and forget the wait (the room is stopping or its match changes)."""
        self._wait, self._timed_turn = None, None
        self.disarm()
