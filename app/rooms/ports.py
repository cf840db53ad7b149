"""What a room talks to, as ports: an `Outbox` per connection, the `MatchStore`, a `Clock` and the
`BotPort`; and what the hub holds rooms under when several processes share them, `Leases`
(docs/cluster.md). The room imports no socket, database or process type: the socket edge
implements `Outbox` (`app.edge.connection.Connection`), the store implements `MatchStore`
(`app.store.Store`, and its `fenced` view for a room held under a lease), `app.cluster`
implements `Leases`, `app.rooms.local` holds the clock and the bots of one process, and tests
bring fakes (a clock whose timers they advance, an outbox that keeps what it was sent).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Protocol

from app.store.rows import NewRound, RoundEnd, SeatChange, SeatSpec
from engine.actions import Action
from engine.views import PlayerView

__all__ = [
    "BotPort",
    "ChatLineOut",
    "Clock",
    "CloseReason",
    "Lease",
    "Leases",
    "MatchStore",
    "Outbox",
    "Timer",
]

CloseReason = Literal[
    "replaced",
    "seat_to_bot",
    "seat_emptied",
    "seat_left",
    "spectator_removed",
    "room_closed",
    "server_restart",
    "room_moved",
    "room_reloading",
]
"""Why a room closes a connection; the socket edge maps each to its close code and text."""


class Outbox(Protocol):
    """One client connection as the room sees it: ``seat`` (None for a spectator, set by the room
    when it admits the connection), a spectator's public ``watcher`` tag (`app.rooms.watchers`, set
    then too; None for a seat), its ``client``: the room's salted hash of its client address
    (`app.rooms.watchers.client_hash`, set then too; None when the address is not known), a
    spectator's ``name`` in the chat (`app.rooms.chat.name_spectator`; None: none, and always for
    a seat), whether it is ``closed``, and three calls that never block."""

    seat: int | None
    watcher: str | None
    client: str | None
    name: str | None
    closed: bool

    def send(self, text: str) -> None:
        """Queue one JSON text frame."""

    def send_latest(self, kind: str, text: str) -> None:
        """Queue one JSON text frame of ``kind`` (a state whose latest value alone matters, such as
        the host's ``spectators`` list) that supersedes one of the same ``kind`` still waiting
        unsent: that one's text is replaced in its place in the queue (so it goes no later than
        the stale one would have, and a slow reader is not closed by updates it would throw
        away). An outbox that queues nothing (a relayed one) simply sends."""

    def close(self, reason: CloseReason) -> None:
        """Send what is queued, then close for ``reason`` (idempotent)."""


class Timer(Protocol):
    """An armed timer: cancel it."""

    def cancel(self) -> None:
        """Stop the timer; its callback will not run (a no-op after it ran)."""


class Clock(Protocol):
    """Time and timers. ``time()`` is epoch seconds (deadlines sent to clients), ``monotonic()``
    the timers' clock (never set back or forward); ``call_later``
    runs ``callback`` (it only queues an intent) after ``delay_s`` seconds."""

    def time(self) -> float:
        """Now, in seconds since the epoch."""

    def monotonic(self) -> float:
        """Now on the timers' own clock, which a change of the wall clock does not move (seconds
        from an arbitrary start): what is left of a wait is measured on it."""

    def call_later(self, delay_s: float, callback: Callable[[], None]) -> Timer:
        """Arm a timer."""


class BotPort(Protocol):
    """Bot decisions. The room awaits them outside its state: a decision is applied only while
    the room is still at the version it was asked at (a stale one is dropped, the wait re-armed)."""

    async def decide(self, level: str, view: PlayerView, seed: int, share: str = "") -> Action:
        """The action a bot of ``level`` chooses from ``view`` (its rng seeded with ``seed``);
        ``share`` is who it counts for when decisions queue (`Room.bot_share`): a port shares its
        workers out between shares, never first come first served."""


class ChatLineOut(Protocol):
    """A stored chat line, as the store gives it back."""

    def to_json(self) -> dict[str, Any]:
        """The line as docs/protocol.md's ``chat`` message carries it."""


class MatchStore(Protocol):
    """The writes a room makes. Each is one transaction that also stores the room's new
    ``version``; it returns once durable and raises (changing nothing) when it fails."""

    async def create_match(
        self,
        code: str,
        variant: str,
        options: dict[str, Any],
        seat_count: int,
        turn_timer_s: float,
        host_token_hash: str,
        seats: Sequence[SeatSpec],
        start: dict[str, Any] | None = None,
        *,
        room_match: int = 1,
        version: int = 0,
        open_table: bool = False,
        chat_rules: dict[str, Any] | None = None,
        hints: bool = False,
        bot_share: str | None = None,
        creator_site: str | None = None,
    ) -> int:
        """The room's next match (Play again: ``room_match`` > 1), waiting, with its seats, and
        whom its bot decisions count for (``bot_share``, `BotPort.decide`'s ``share``; None: the
        room's code), its creator's keyed /48 (``creator_site``, `Room.creator_site`); its id."""

    async def append_action(
        self,
        match_id: int,
        round_index: int,
        seq: int,
        version: int,
        seat: int,
        action: dict[str, Any],
        actor: str,
        round_end: RoundEnd | None = None,
        covers: Mapping[int, str | None] | None = None,
    ) -> None:
        """One action (and, with ``round_end``, the round's end and the match's finish; with
        ``covers``, the seats' covers it changed, as `cover_seats` takes them)."""

    async def save_room(
        self,
        match_id: int,
        version: int,
        *,
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
    ) -> None:
        """The table's size before the start (``seat_count``: seats past it removed, new ones
        empty at the end), seat changes, a status change, a dealt round, the open-table choice and the match's
        options, turn timer and hints, the host's ask to end a no-limit match, an ended round's
        outcome rewritten (``(index, outcome)``), the seats' covers it changes (as `cover_seats`
        takes them), the rounds dealt in a row with no person at the table (``unattended``, with a
        deal: `app.rooms.unattended`), together or alone."""

    async def stamp_turn(self, match_id: int, used_s: float = 0.0, *, handed: bool = False) -> None:
        """When the turn in play began: ``used_s`` seconds ago on the database's clock; with
        ``handed``, the room is being handed over in an orderly way (no version)."""

    async def cover_seats(self, match_id: int, covers: Mapping[int, str | None]) -> None:
        """Whether a bot plays for each person's seat of ``covers`` (seat → ``"covered"``,
        ``"stand_in"``, ``"timed_out"``, or None: they play; `app.rooms.seats.SeatInfo.cover`)."""

    async def end_round(
        self,
        match_id: int,
        index: int,
        outcome: dict[str, Any],
        table_after: int | None,
        tallies: Sequence[Any],
        version: int,
        match_finished: bool = False,
    ) -> None:
        """A round's end stored late (restart recovery of an older database)."""

    async def add_chat(
        self,
        match_id: int,
        seat: int | None,
        name: str,
        *,
        text: str | None = None,
        reaction: str | None = None,
        round_index: int = 0,
        seq: int = 0,
        watcher: str | None = None,
        room_match: int = 1,
    ) -> ChatLineOut:
        """One chat line (not game state: no version); ``watcher``: a spectator's public tag;
        ``room_match``: the match's number in the room, which the line returned says."""

    async def set_chat_rules(self, match_id: int, rules: dict[str, Any]) -> None:
        """The host's chat rules."""

    async def load_chat(self, match_id: int, last: int | None = None) -> tuple[dict[str, Any] | None, Any]:
        """The chat rules (None: defaults) and the last ``last`` chat lines (`ChatLineOut`), in order."""

    async def load_room_chat(
        self, match_id: int, last: int | None = None
    ) -> tuple[dict[str, Any] | None, Any]:
        """The chat rules (None: defaults) and the last ``last`` chat lines (`ChatLineOut`) of the
        match's room up to this match, in order."""

    async def add_hint(
        self, match_id: int, round_index: int, seq: int, seat: int, action: dict[str, Any]
    ) -> None:
        """Store a hint used: ``seat`` was shown ``action`` (RECORD.md JSON) at ``seq`` (issue 16)."""


class Lease(Protocol):
    """This process's ownership of room ``code`` (docs/cluster.md), with the fencing ``token``
    every write of the room carries (strictly greater than any earlier owner's)."""

    @property
    def code(self) -> str:
        """The room's code."""

    @property
    def token(self) -> int:
        """The fencing token, from 1."""


class Leases(Protocol):
    """Rooms' ownership leases shared by the server processes (docs/cluster.md). A held lease is
    renewed in the background until `release`; one that cannot be renewed before it would expire
    (the lease service unreachable, or this process paused) is lost: ``on_lost`` is called once.
    The hub starts them (`app.rooms.hub.Hub.recover`) and closes them (`app.rooms.hub.Hub.stop`)."""

    async def start(self) -> None:
        """Start renewing (a lease service not reachable yet is logged, not raised)."""

    async def close(self) -> None:
        """Stop renewing, give up every lease still held, close the connections."""

    async def acquire(
        self,
        code: str,
        on_lost: Callable[[Lease], None],
        *,
        creator: str | None = None,
        creator_ttl_s: float = 0.0,
    ) -> Lease | None:
        """Take room ``code``'s lease with a new token; None while another process holds it.
        With ``creator`` (a room being created), remember in the same atomic step, for
        ``creator_ttl_s`` seconds (and as long again from each renewal of the lease held here),
        that this client address created the room, so that whichever process loads it later
        counts it in that address's open rooms: the lease is never taken without it. Raises
        ConnectionError when the lease service cannot be reached."""

    async def advance(self, lease: Lease, floor: int) -> bool:
        """Give the held ``lease`` a token above ``floor`` (the store holds a token the lease
        service no longer knows, e.g. after it lost its data); False if the lease is no longer
        held. Raises ConnectionError when the lease service cannot be reached."""

    async def release(self, lease: Lease) -> None:
        """Stop renewing ``lease`` and give it up, so another process may take the room at once
        (never raises: a lease not released expires)."""

    async def creator(self, code: str, ttl_s: float) -> str | None:
        """The client address that created room ``code`` (`acquire`), remembered ``ttl_s``
        seconds from now on, or None when none is. Raises ConnectionError when the lease service
        cannot be reached."""
