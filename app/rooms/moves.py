"""Moves and deals: a player's action checked against the room's version and the rules, a bot's turn (asked
of the `BotPort` outside the room's state, applied only while still awaited), a forced pass, a
turn timer running out, each ending in `Room.commit` (store, adopt, send); and the next deal."""

from __future__ import annotations

import asyncio
import random
import secrets
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

import structlog

from app.rooms import frames
from app.rooms.intents import Auto, ClientAction, Command, Decided, Intent, IntentQueue
from app.rooms.ports import BotPort, Clock, Outbox
from app.rooms.schedule import Wait
from app.rooms.seats import COVER_BOT, SeatInfo
from app.rooms.seeds import SEED_BYTES
from app.rooms.unattended import rounds_after_deal
from app.store.rows import NewRound, SeatChange
from engine.actions import Action, Draw, Pass
from engine.core import Phase, State
from engine.deal_json import deal_to_json
from engine.errors import EngineError
from engine.hashing import commitment_of
from engine.rules.base import Rules
from engine.views import player_view

if TYPE_CHECKING:
    from app.rooms.room import Actor

__all__ = [
    "REFUSALS",
    "Moves",
    "refusal_message",
]

_log = structlog.get_logger("domeng.room")

REFUSALS: Final[dict[str, str]] = {
    "wrong_seat": "it is not your turn",
    "tile_not_in_hand": "that tile is not in your hand",
    "does_not_fit": "that tile does not fit there",
    "end_required": "that tile fits both ends: choose one",
    "voluntary_pass": "you may pass only when you cannot play (or draw)",
    "wrong_opening_tile": (
        "the first round must open with the tile the rules name: the highest lempa dealt (D11, K2;"
        " Kozel with none dealt: the highest tile)"
    ),
    "round_over": "no round is being played",
    "match_over": "the match is over",
    "draw_not_allowed": "you cannot draw now",
    "not_two_lempas": "the two-lempas move does not apply here",
    "invalid_action": "that is not a move",
    "invalid_tile": "that is not a tile of the set",
    "invalid_end": "an end is L or R",
}
"""What a player is told when the rules refuse their move, by the engine's code (`engine.errors`):
plain words, never the engine's own message (which names the round, the action's number and the
chain for a developer: that goes to the server's log)."""


def refusal_message(code: str) -> str:
    """The plain words for a refused move's ``code`` (`REFUSALS`; any other: a general refusal).

    >>> refusal_message("wrong_seat")
    'it is not your turn'
    """
    return REFUSALS.get(code, "that move is not allowed")


class Moves:
    """The moves half of `app.rooms.room.Room` (which provides the attributes declared here)."""

    code: str
    rules: Rules
    version: int
    unattended: int
    seed: str | None
    commitment: str | None
    marks: dict[int, int]
    by_bot: list[int]
    hints_given: list[dict[str, int]]
    conns: set[Outbox]
    state: State | None
    seats: list[SeatInfo]
    bots: BotPort
    bot_share: str
    clock: Clock
    queue: IntentQueue
    _rng: random.Random

    def __init__(self) -> None:
        self._deciding: set[asyncio.Task[None]] = set()

    if TYPE_CHECKING:  # the rest of Room that moves call

        def refuse(self, conn: Outbox, code: str, message: str) -> None: ...
        def time_out(self, seat: int) -> None: ...
        def rearm(self) -> None: ...
        def hold_for_absent(self) -> bool: ...
        def hold(self, delay_s: float, intent: Intent) -> None: ...
        def current_wait(self) -> Wait | None: ...
        async def commit(
            self, fork: State, action: Action, actor: Actor, received: float, back: int | None = None
        ) -> None: ...
        async def save(self, *, new_round: NewRound, unattended: int | None = None) -> int: ...
        def adopt(
            self, version: int, seats: Sequence[SeatChange] = (), status: str | None = None
        ) -> None: ...
        def schedule(self) -> None: ...

    async def on_action(self, intent: ClientAction) -> None:
        conn, seat = intent.conn, intent.conn.seat
        if seat is None:
            return self.refuse(conn, "not_seated", "spectators cannot act")
        if self.state is None or self.state.phase is not Phase.PLAYING:
            return self.refuse(conn, "round_over", "no round is being played")
        if intent.version != self.version and self.marks.get(intent.version) != len(self.state.log):
            # made before a move it did not see; a move made before a change that is not a move
            # (the host's stop, a seat claimed or covered) still stands: the game is the same
            _log.info("action_stale", room=self.code, seat=seat, sent=intent.version, now=self.version)
            message = "the table moved on before your move arrived; try again"
            return self.refuse(conn, "stale_version", message)
        try:
            if isinstance(intent.action, EngineError):
                raise intent.action
            fork = self.state.fork()
            fork.apply(intent.action)
        except EngineError as error:
            _log.info("action_refused", room=self.code, seat=seat, code=error.code, detail=error.message)
            return self.refuse(conn, error.code, refusal_message(error.code))
        # choosing a move is coming back: no bot, no timeouts counted, released with the stored
        # move (`Commits.commit`); a Kozel draw is the client's own, not a choice
        back = None if isinstance(intent.action, Draw) else seat
        await self.commit(fork, intent.action, "human", intent.received, back=back)
        return None

    async def on_auto(self, intent: Auto) -> None:
        """What the room waited for is due: a human's turn timer ran out (`time_out`: a bot plays
        that turn, or covers the seat after two in a row), a forced pass (the server's), or a bot's
        turn (asked of the `BotPort`; a bot seat's own, or one playing for a human: ``timer`` for
        one turn, ``cover`` while covering)."""
        state = self.state
        if intent.version != self.version or state is None or state.phase is not Phase.PLAYING:
            # stale: the room moved on, or a stored change that is not a move (the host's stop or
            # its taking back) gave it a new version while this waited: arm what it waits for now,
            # as for a stale decision (left alone, a forced pass or a bot's turn never came)
            self.schedule()
            return
        seat = state.to_act
        info = self.seats[seat]
        if intent.reason == "timer":
            if info.kind == "human" and not info.played_for and not self.hold_for_absent():
                self.time_out(seat)
            return
        legal = state.legal_actions()
        if len(legal) == 1 and isinstance(legal[0], Pass):
            fork = state.fork()
            fork.apply(legal[0])
            await self.commit(fork, legal[0], "server", time.perf_counter())
            return
        level = info.bot_level if info.kind == "bot" and info.bot_level else COVER_BOT
        actor: Actor = "bot" if info.kind == "bot" else "cover" if info.covered else "timer"
        asked = Wait(self.version, "bot", seat)
        view, seed, play_at = player_view(state, seat), self._rng.getrandbits(64), intent.play_at

        async def decide() -> None:
            action = await self.bots.decide(level, view, seed, self.bot_share)
            self.queue.put_nowait(Decided(asked, action, actor, play_at))

        task = asyncio.create_task(decide(), name=f"room-{self.code[:8]}-bot")
        self._deciding.add(task)
        task.add_done_callback(self._decided)

    def _decided(self, task: asyncio.Task[None]) -> None:
        self._deciding.discard(task)
        if not task.cancelled() and task.exception() is not None:
            _log.error("bot_decision_failed", room=self.code, error=repr(task.exception()))
            self.queue.put_nowait(Command(lambda room: room.rearm()))

    async def on_decided(self, intent: Decided) -> None:
        """A bot's decision: applied only while the room still waits for it (same version, same
        seat, still a bot's turn), and not before its pause is over (it comes back then); a stale
        one is dropped (the room armed what it waits for now when its state changed)."""
        state = self.state
        if state is None or self.current_wait() != intent.asked:
            self.schedule()
            return
        rest = intent.play_at - self.clock.time()
        if rest > 0:
            self.hold(rest, intent)
            return
        fork = state.fork()
        fork.apply(intent.action)
        await self.commit(fork, intent.action, intent.actor, time.perf_counter())

    # -- deals ----------------------------------------------------------------------------------

    async def deal_round(self, again: bool = False) -> None:
        """Deal the next round from a fresh secret seed; its commitment goes out with the deal.
        Stored with it: the rounds dealt in a row with no person at the table
        (`app.rooms.unattended.rounds_after_deal`; ``again``: a spectator's ``keep_watching``
        dealt it, and that count starts again)."""
        assert self.state is not None and self.state.phase is Phase.READY
        new_round, fork, seed = self.next_deal(self.state)
        unattended = rounds_after_deal(self.seats, self.unattended, again)
        version = await self.save(new_round=new_round, unattended=unattended)
        self.adopt(version)
        self.unattended = unattended
        self.adopt_deal(fork, seed)
        self.schedule()
        frames.send_updates(self, self.conns, 0)  # type: ignore[arg-type]

    def next_deal(self, state: State) -> tuple[NewRound, State, str]:
        """The next round dealt on a fork of ``state`` from a fresh secret seed: what the store
        keeps of it, the fork, and the seed."""
        seed = secrets.token_hex(SEED_BYTES)
        deal = self.rules.deal_from_seed(seed)
        fork = state.fork()
        fork.start_round(deal)
        return NewRound(fork.round_index - 1, seed, commitment_of(seed), deal_to_json(deal)), fork, seed

    def adopt_deal(self, fork: State, seed: str) -> None:
        """Adopt a stored deal (after `adopt` took its version)."""
        self.state, self.seed, self.commitment = fork, seed, commitment_of(seed)
        self.marks = {self.version: 0}
        self.by_bot = []
        self.hints_given = []
