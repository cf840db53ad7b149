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
    "Timing",
]


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
        self.disarm()
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
            pause = pause_s(self._rng, self.config.bot_delay_s, forced=True)
            self._timer = self.clock.call_later(pause, lambda: put(Auto(wait.version, "forced")))
        else:  # a bot: asked now, its move played once its pause is over (app.rooms.pace)
            assert self.state is not None
            legal = self.state.legal_actions()  # a lone draw is forced too (K3); a lone tile is not
            forced = not any(isinstance(action, (Play, PlayLempas)) for action in legal)
            pause = pause_s(self._rng, self.config.bot_delay_s, forced=forced)
            play_at = self.clock.time() + pause
            self._timer = self.clock.call_later(0.0, lambda: put(Auto(wait.version, "bot", play_at)))

    def hold(self, delay_s: float, intent: Intent) -> None:
        """Queue ``intent`` again in ``delay_s`` seconds, as the wait's one timer (a bot's move
        waiting for its pause to end): when the room moves on first, `schedule` cancels it."""
        self.disarm()
        self._timer = self.clock.call_later(delay_s, lambda: self.queue.put_nowait(intent))

    def rearm(self) -> None:
        """Arm the wait afresh even if it looks armed (after a failure or a stale decision)."""
        self._wait = None
        self.schedule()

    def disarm(self) -> None:
        """Cancel the armed timer, if any (the wait is forgotten only by `forget_wait`)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def forget_wait(self) -> None:
        """Disarm and forget the wait (the room is stopping or its match changes)."""
        self._wait = None
        self.disarm()
