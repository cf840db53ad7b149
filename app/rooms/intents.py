"""What goes on a room's queue: every change a room considers is one of these intents."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from app.queues import ReaderQueue
from app.rooms.ports import Outbox
from app.rooms.schedule import Wait
from engine.actions import Action
from engine.errors import EngineError

if TYPE_CHECKING:
    from app.rooms.room import Actor, Room

__all__ = [
    "Auto",
    "Back",
    "ClientAction",
    "Command",
    "Connect",
    "Decided",
    "Disconnect",
    "GraceExpired",
    "HostAway",
    "Intent",
    "IntentQueue",
    "NextRound",
    "Sync",
]


@dataclass
class Intent:
    """An intent; ``future``, when set, gets its result (or error) once the room handled it."""

    future: asyncio.Future[Any] | None = field(default=None, kw_only=True)

    def settle(self, result: Any = None, error: BaseException | None = None) -> None:
        """Answer whoever awaits this intent (nobody, or someone who gave up: nothing)."""
        future = self.future
        if future is None or future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)


@dataclass
class Connect(Intent):
    """A connection's ``hello``: its seat ``token`` (None: watch), the version it last saw, the
    room's ``host`` token when this browser holds it (None: not the host), and a spectator's
    ``watcher`` key (`app.rooms.watchers`; None: a new spectator, or a seat), its client
    ``address`` (`app.addresses.counted_address`; None: not known), and the identity of the seat
    connection an automatic reconnect ``resume``s (None: a fresh hello)."""

    conn: Outbox
    token: str | None
    since: int | None
    host: str | None = None
    watcher: str | None = None
    address: str | None = None
    resume: str | None = None


@dataclass
class HostAway(Intent):
    """The host's grace ran out (armed when their last connection ended, or when the room was
    loaded without them); ``epoch`` tells a stale one from the current."""

    epoch: int


@dataclass
class Disconnect(Intent):
    """A connection ended; ``silent_s``: seconds its client had already been silent when the
    server noticed (a dead network is noticed only at the ping timeout), 0.0 when unknown."""

    conn: Outbox
    silent_s: float = 0.0


@dataclass
class ClientAction(Intent):
    """A player's action at ``version``, parsed by the edge (or the error its frame parsed to)."""

    conn: Outbox
    version: int
    action: Action | EngineError
    received: float


@dataclass
class Sync(Intent):
    """A client asks for the whole state."""

    conn: Outbox


@dataclass
class Back(Intent):
    """A player is back: the bot covering their seat steps aside."""

    conn: Outbox


@dataclass
class Auto(Intent):
    """A bot's turn, a forced action, or a timeout, valid only at ``version``. A bot's move is
    played no sooner than ``play_at`` (the clock's epoch seconds: the end of its pause)."""

    version: int
    reason: Literal["bot", "forced", "timer"]
    play_at: float = 0.0


@dataclass
class Decided(Intent):
    """A bot's decision, asked for while the room waited for ``asked``, to be played no sooner
    than ``play_at`` (epoch seconds; its thinking time counts into the pause)."""

    asked: Wait
    action: Action
    actor: Actor
    play_at: float = 0.0


@dataclass
class GraceExpired(Intent):
    """An absent player's grace ran out (valid only for the ``epoch`` it was armed in)."""

    seat: int
    epoch: int


@dataclass
class NextRound(Intent):
    """The pause between rounds is over (valid only at ``version``)."""

    version: int


@dataclass
class Command(Intent):
    """An HTTP command, run inside the room task: ``run(room)`` returns the reply. ``touch``:
    whether it counts as using the room (`Room.idle_s`); a wait for the queue to drain does not."""

    run: Callable[[Room], Any]
    touch: bool = True


class IntentQueue(ReaderQueue[Intent]):
    """A room's queue of intents (None: the end marker), read by the room's task alone
    (`app.queues.ReaderQueue`: issue 15, `benchmarks/room_moves.py`)."""
