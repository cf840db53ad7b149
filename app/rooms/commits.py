"""The room's one commit path (module docstring of `app.rooms.room`): every change is stored with
the room's next version in one transaction, then adopted, then sent. `Commits.commit` does all
three for a move; `Commits.save` stores any other change and returns its version for the caller to
`Commits.adopt` and send."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from app.metrics import Metrics
from app.rooms import frames
from app.rooms.ports import Clock, MatchStore, Outbox
from app.rooms.recovery import move_events, round_end
from app.rooms.seats import SeatInfo
from app.store.models import BY_BOT
from app.store.rows import NewRound, SeatChange, SeatSpec
from engine.actions import Action
from engine.core import Phase, State

if TYPE_CHECKING:
    from app.rooms.room import Actor

__all__ = [
    "Commits",
    "all_uncovered",
]


def _after_move(seats: Sequence[SeatInfo], state: State, finished: bool) -> None:
    """`Commits.after_move` on ``seats`` (``finished``: the match is over)."""
    for info in seats:
        if finished:
            info.release()
        elif info.stand_in and _stand_in_ends(info, state):
            info.stand_in = False


def all_uncovered(seats: Sequence[SeatInfo]) -> bool:
    """Whether no seat's person has a bot playing for them or a timer run out (every seat's
    `SeatInfo.cover` None), as at most moves: the room's covers then need no seat-by-seat look."""
    for info in seats:  # noqa: SIM110 (a loop: a generator costs more, on every move)
        if info.covered or info.stand_in or info.timeouts:
            return False
    return True


def _stand_in_ends(info: SeatInfo, state: State) -> bool:
    """Whether the bot standing in for ``info``'s person has played its one turn in ``state``
    (the turn moved on; a Kozel draw keeps it)."""
    return info.stand_in and (state.phase is not Phase.PLAYING or state.to_act != info.seat)


def _cover_after(info: SeatInfo, state: State, finished: bool, back: bool) -> str | None:
    """``info``'s `SeatInfo.cover` once `_after_move` has run on it (after `SeatInfo.release`
    when ``back``), computed without changing it: `Commits.covers_after` runs on every move, and
    copying five seats to change the copies cost about 5% of a move's CPU (benchmarks/load.py)."""
    if finished or back or not (info.covered or info.stand_in or info.timeouts):
        return None  # the last: no bot plays for the seat's person (most seats, most moves)
    stand_in = info.stand_in and not _stand_in_ends(info, state)
    return SeatInfo.cover_of(info.covered, stand_in, info.timeouts)


class Commits:
    """The commit half of `app.rooms.room.Room` (which provides the attributes declared here)."""

    match_id: int
    room_match: int
    status: str
    version: int
    state: State | None
    seed: str | None
    commitment: str | None
    last_round: dict[str, Any] | None
    previous_match: dict[str, Any] | None
    round_before: frames.RoundBefore | None
    turn_deadline: float | None
    marks: dict[int, int]
    by_bot: list[int]
    seats: list[SeatInfo]
    covers_stored: tuple[int, list[str | None]]
    conns: set[Outbox]
    open_table: bool
    host_stop: bool
    unattended: int
    listed_at: float | None
    store: MatchStore
    clock: Clock
    metrics: Metrics

    if TYPE_CHECKING:  # the rest of Room that commits call

        def schedule(self) -> None: ...
        def cancel_timers(self) -> None: ...
        def stored_covers(self) -> list[str | None]: ...

    async def commit(
        self, fork: State, action: Action, actor: Actor, received: float, back: int | None = None
    ) -> None:
        """Store ``action`` (and the round's end with it, in one transaction), adopt ``fork``, then
        send everyone their view. ``back``: the seat whose person chose this move themselves, who
        is back (`SeatInfo.release`: no bot plays for them, their timeouts count from 0), stored
        with the move as the seats' covers and adopted only once it is. A failed write raises and
        changes nothing, the seats' covers included: the room keeps its state, and the action can
        be made again. When the host has asked to end the match
        (``host_stop``) and ``action`` ends the round, the match ends with it (`State.stop`),
        stored in the same transaction (RULES.md "Match end": the round is finished, never cut)."""
        old = self.state
        assert old is not None
        if self.host_stop and fork.phase is Phase.READY and fork.rules.host_stops:
            fork.stop()
        before, version = len(old.log), self.version + 1
        covers = self.covers_after(fork, back)
        await self.store.append_action(
            self.match_id,
            old.round_index - 1,
            len(old.actions),
            version,
            action.seat,
            action.to_json(),
            actor,
            round_end=None if fork.phase is Phase.PLAYING else round_end(fork),
            covers=covers or None,
        )
        if fork.phase is Phase.OVER:
            self.status = "finished"
        self.state, self.version = fork, version
        if back is not None:
            self.seats[back].release()
        self.marks[version] = len(fork.log)
        if actor in BY_BOT:
            self.by_bot.extend(move_events(fork.log, before))
        self.after_move(fork)
        self.covers_adopted()
        self.metrics.actions.inc()
        if fork.phase is not Phase.PLAYING:
            fork.forget_rounds(1)  # only the last round's reveal stays in memory
            self.last_round = {
                "index": fork.round_index - 1,
                "seed": self.seed,
                "commitment": self.commitment,
            }
            self.round_before = frames.round_end_later(self)  # type: ignore[arg-type]
        self.schedule()
        frames.send_updates(self, self.conns, before)  # type: ignore[arg-type]
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
        host_stop: bool | None = None,
        ended_round: tuple[int, dict[str, Any]] | None = None,
        covers: Mapping[int, str | None] | None = None,
        unattended: int | None = None,
        seat_count: int | None = None,
    ) -> int:
        """Store a change that is not a move with the next version, in one transaction (with
        ``seat_count``, the table's new size before the start: `resize`; with
        ``covers``, the seats' covers it changes: seat → `SeatInfo.cover`; with ``unattended``, a
        deal's count of rounds dealt in a row with no person at the table,
        `app.rooms.unattended`); returns that version.
        The caller adopts the change (`adopt`) only after this returns (and, with ``covers``,
        calls `covers_adopted` once its seats have them)."""
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
            host_stop=host_stop,
            ended_round=ended_round,
            covers=covers,
            unattended=unattended,
            seat_count=seat_count,
        )
        return version

    def resize(self, count: int) -> None:
        """Adopt a stored change of the table's size (`save` with ``seat_count``, before the
        start): the seats from ``count`` on are gone (a bot's or an empty one, never a person's),
        new empty seats are added at the end; the covers as stored follow (a new seat is stored
        uncovered). The caller adopts the version and the rules made for ``count`` seats."""
        del self.seats[count:]  # in place: whoever holds the room's list sees the new one
        self.seats.extend(SeatInfo(i) for i in range(len(self.seats), count))
        match_id, stored = self.covers_stored
        self.covers_stored = (match_id, (stored[:count] + [None] * count)[:count])

    def after_move(self, state: State) -> None:
        """A stand-in's one turn is over once the turn moved on (a Kozel draw keeps it); at the
        match's end no bot plays for anyone any more."""
        _after_move(self.seats, state, self.status == "finished")

    def covers_adopted(self) -> None:
        """The seats' covers as they are now were stored (with a move or a change: `commit`,
        `save`), so `app.rooms.room.Room.store_covers` has nothing of them to store."""
        seats = self.seats
        now: list[str | None] = (
            [None] * len(seats) if all_uncovered(seats) else [info.cover for info in seats]
        )
        self.covers_stored = (self.match_id, now)

    def covers_after(self, fork: State, back: int | None = None) -> dict[int, str | None]:
        """The seats' covers that the move to ``fork`` changes from the stored ones (seat →
        cover, `SeatInfo.cover`), with seat ``back``'s person back (`commit`) and `after_move`,
        on copies of the seats (`app.rooms.room.Room.stored_covers`): stored with the move, so
        that no crash comes between them."""
        stored = self.stored_covers()
        if not any(stored) and all_uncovered(self.seats):
            return {}  # every seat uncovered, stored so, and the move covers none (most moves)
        finished = self.status == "finished" or fork.phase is Phase.OVER
        changed: dict[int, str | None] = {}
        for i, (info, was) in enumerate(zip(self.seats, stored, strict=True)):
            cover = _cover_after(info, fork, finished, i == back)
            if cover != was:
                changed[i] = cover
        return changed

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
        self.previous_match = frames.previous_public(self)  # type: ignore[arg-type]
        self.match_id, self.room_match, self.status = match_id, room_match, "waiting"
        self.host_stop = False  # the host's stop was the last match's
        self.unattended = 0  # and so were its rounds with no person at the table
        self.state, self.seed, self.commitment, self.last_round = None, None, None, None
        self.round_before = None
        self.by_bot, self.marks, self.turn_deadline = [], {}, None
        self.adopt(version, seats=[SeatChange(spec.seat or 0, spec) for spec in seats])
        self.listed_at = self.clock.time() if self.open_table else None
        self.schedule()
