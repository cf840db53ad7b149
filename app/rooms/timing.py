"""The room's one timer: what it waits for now (`app.rooms.schedule.next_wait`, pure) armed on the
injected `Clock` as the intent that ends the wait (the next deal, a turn timer running out, a forced
pass, a bot's turn)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from app.rooms.config import RoomConfig
from app.rooms.intents import Auto, Intent, IntentQueue, NextRound
from app.rooms.pace import pause_s
from app.rooms.ports import Clock, Outbox, Timer
from app.rooms.schedule import Wait, next_wait
from app.rooms.seats import SeatInfo
from app.rooms.unattended import asks_watching
from engine.actions import Play, PlayLempas
from engine.core import State

__all__ = [
    "RESUMED_TURN_MIN_S",
    "Timing",
]

RESUMED_TURN_MIN_S = 10.0
"""Seconds a turn loaded again from the store after a crash keeps at least (or its whole timer if
shorter): the time the server was down, or its lease ran out, is nobody's fault, and the player's
page needs a moment to reconnect (its retries start at 0.25 s, `static/js/connection.js`) and to
show the board again before the turn can be taken from them. After an orderly handoff the turn
keeps what was left of it, and waits this long only for a player who is not back yet
(`Timing.resume_turn`)."""


@dataclass(frozen=True, slots=True)
class _Resumed:
    """A turn loaded again (`Timing.resume_turn`): its ``state``, its age ``age_s`` (seconds, on the
    database's clock) when the row was read (when it was handed over, if ``handed``), the read at
    ``read_at`` on the room clock's `monotonic`, and whether its room was ``handed`` over in an
    orderly way."""

    state: State
    age_s: float
    read_at: float
    handed: bool


class Timing:
    """The timer half of `app.rooms.room.Room` (which provides the attributes declared here). At
    most one timer is armed at a time, for the wait `current_wait` names."""

    state: State | None
    seats: list[SeatInfo]
    status: str
    version: int
    unattended: int
    turn_timer_s: float
    turn_deadline: float | None
    conns: set[Outbox]
    config: RoomConfig
    clock: Clock
    queue: IntentQueue
    _rng: random.Random

    def __init__(self) -> None:
        self._timer: Timer | None = None
        self._wait: Wait | None = None
        # the turn the deadline is for: the state it was armed in (every move makes a new one), the
        # seat to act, and when it is due on the clock's `monotonic` (a wall clock set back or
        # forward meanwhile must not move it)
        self._timed_turn: tuple[State, int, float] | None = None
        self._resumed: _Resumed | None = None
        """A turn loaded again, until `schedule` first arms the room (`resume_turn`)."""
        self._hold: tuple[State, float] | None = None
        """A turn resumed after a handoff, and until when on `monotonic` it waits for its player
        if they are not back when it runs out (`hold_for_absent`)."""
        self._seen: State | None = None
        """The state `schedule` last armed a wait for: a turn timer started afresh on a state
        already seen began without a move (`stamp_due`)."""
        self.stamp_due = False
        """A turn timer started afresh without a move (a covered player back on their turn, a
        person taking a bot's seat on its turn), or a turn handed over resumed: the store is to
        learn when it began (`app.rooms.room.Room.store_turn_start`), as it learns it by itself
        from a move, and, for the handed turn, that its handoff is spent (a server without leases
        never raises the fence that would drop the mark, `app.store.models.Match.handed_fence`)."""

    def current_wait(self) -> Wait | None:
        """What the room waits for now (`app.rooms.schedule.next_wait`)."""
        return next_wait(
            self.state,
            self.seats,
            status=self.status,
            version=self.version,
            watched=bool(self.conns),
            turn_timer_s=self.turn_timer_s,
            asking=self.asks_watching(),
        )

    def asks_watching(self) -> bool:
        """Whether the room holds its next deal to ask its spectators whether they still watch
        (`app.rooms.unattended.asks_watching`, `RoomConfig.unattended_rounds`)."""
        limit = self.config.unattended_rounds
        return asks_watching(
            self.state, self.seats, status=self.status, unattended=self.unattended, limit=limit
        )

    def schedule(self) -> None:
        """Arm the one timer the room needs now. Idempotent: when the same wait is already armed
        (say another seat was just covered), it is left alone, so a player's turn deadline never
        restarts under them. Nor does a new version that is not a move (the host's stop or its
        taking back, a seat claimed): the same turn (the same state, every move making a new one,
        and seat) keeps its deadline, what is left of it measured on the clock's `monotonic` (the
        wall clock may be set meanwhile); a move, a Kozel draw among them, starts a full one. The
        first arming of a room loaded again keeps what was left of its turn (`resume_turn`)."""
        wait = self.current_wait()
        resumed, self._resumed = self._resumed, None  # the first arming only: what was loaded
        seen, self._seen = self._seen, self.state
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
            if resumed is not None and resumed.state is self.state:
                left = self._resumed_left(resumed, now)
                deadline, due = self.clock.time() + left, now + left
                # the handoff's mark is spent: a crash from now on counts the turn from here on
                # (the room loaded then has no handoff of its own), not from the mark again
                self.stamp_due = resumed.handed
            elif deadline is None or turn is None or turn[0] is not self.state or turn[1] != wait.seat:
                deadline, due = self.clock.time() + self.turn_timer_s, now + self.turn_timer_s
                if seen is self.state:  # no move began it: it begins now
                    self.stamp_due = True
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

    def resume_turn(self, age_s: float, read_at: float, handed: bool = False) -> None:
        """The turn in play (a room loaded again from the store: a restart, another process taking
        it) was ``age_s`` seconds old (`app.rooms.recovery.turn_age_s`, on the database's clock)
        when its row was read (when its room was handed over, if ``handed``), the read at
        ``read_at`` on the clock's `monotonic`. When `schedule` first
        arms the room (its task started) the turn keeps what is left of it then, the time since
        the read counted too, never more than a whole turn:

        - after a crash (the owner died, its lease ran out, one process restarted) at least
          `RESUMED_TURN_MIN_S` from the arming (the whole timer if shorter): the player's page
          was reconnecting through the outage, which was not theirs;
        - after an orderly handoff (``handed``: its owner handed it over or shut down cleanly,
          storing what was left, `app.store.Store.stamp_turn`) exactly what was left when it was
          handed over (``age_s`` is its age then: the time no process had the room, a moment in
          a handoff, a restart of every process after a clean shutdown, is nobody's turn), so the
          deadline the pages were told stands, later by that moment; only if it runs out while
          its player has no connection here (their page still reconnecting) does it wait for
          them, until `RESUMED_TURN_MIN_S` after the arming at most (`hold_for_absent`). A handed
          turn with nothing left when armed (handed over as it ran out, or by a version that did
          not store when, `app.store.models.Match.handed_at`) keeps `RESUMED_TURN_MIN_S`, as after
          a crash.

        Otherwise the deadline the pages were told stands, give or take the difference between the
        room clock's rate and the database's."""
        assert self.state is not None
        self._resumed = _Resumed(self.state, max(0.0, age_s), read_at, handed)
        self._seen = self.state

    def _resumed_left(self, resumed: _Resumed, now: float) -> float:
        """Seconds left of a resumed turn armed at ``now`` (`resume_turn`)."""
        age = resumed.age_s + max(0.0, now - resumed.read_at)
        left = self.turn_timer_s - min(age, self.turn_timer_s)
        floor = min(RESUMED_TURN_MIN_S, self.turn_timer_s)
        # a handed turn with nothing left (handed as it ran out, or its handoff's moment unknown,
        # every process restarting meanwhile): nobody could act since, as after a crash
        if resumed.handed and left > 0.0:
            self._hold = (resumed.state, now + floor)
            return left
        return max(left, floor)

    def hold_for_absent(self) -> bool:
        """The turn's timer ran out: if it is a turn resumed after an orderly handoff whose player
        has no connection here (their page still reconnecting), and the room was armed less than
        `RESUMED_TURN_MIN_S` ago, it waits for them until then (once; everyone is told the new
        deadline). Whether it did."""
        hold, self._hold = self._hold, None
        if hold is None or self.state is None or hold[0] is not self.state:
            return False
        seat, now = self.state.to_act, self.clock.monotonic()
        if self.seats[seat].connections > 0 or hold[1] <= now:
            return False
        self.turn_deadline = self.clock.time() + (hold[1] - now)
        self._timed_turn = (self.state, seat, hold[1])
        self.rearm()
        return True

    def turn_left_s(self) -> float | None:
        """Seconds left of the turn whose timer is armed (at least 0), or None when none is."""
        turn = self._timed_turn
        if turn is None or self.state is None or turn[0] is not self.state:
            return None
        return max(0.0, turn[2] - self.clock.monotonic())

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
        self._wait, self._timed_turn, self._hold = None, None, None
        self.disarm()
