"""Who is at the table: connections coming and going, the grace an absent player gets, the bot
covering a seat, and whether the host is here (or who starts the match in their stead). Presence
is sent and does not change the room's version; of it only whether a bot plays for a seat is
stored (`app.rooms.room.Room.store_covers`), so a room loaded again goes on covering the seat."""

from __future__ import annotations

import hmac
import secrets
from typing import TYPE_CHECKING, Any

import structlog

from app.rooms import frames
from app.rooms.errors import RoomError
from app.rooms.intents import GraceExpired, HostAway, IntentQueue
from app.rooms.ports import Clock, CloseReason, Outbox, Timer
from app.rooms.seats import given_to_bot, hash_token, seat_of_token
from app.rooms.watchers import client_hash, watcher_of

if TYPE_CHECKING:
    from app.metrics import Metrics
    from app.rooms.chat import ChatRoom
    from app.rooms.config import RoomConfig
    from app.rooms.seats import SeatInfo
    from engine.core import State

__all__ = ["CONNECTION_PATTERN", "Presence", "new_connection_id"]

_log = structlog.get_logger("domeng.room")

CONNECTION_PATTERN = r"^[0-9a-f]{16}$"
"""A seat connection's identity as its ``welcome`` gives it and an automatic reconnect's
``hello`` sends it back (``resume``): 16 lowercase hex digits."""


def new_connection_id() -> str:
    """A new seat connection's identity (`CONNECTION_PATTERN`): 64 random bits, so that one a
    room gave before it was loaded again (here or on another process) names no connection now."""
    return secrets.token_hex(8)


class Presence:
    """The presence half of `app.rooms.room.Room` (which provides the attributes declared here)."""

    code: str
    status: str
    version: int
    seats: list[SeatInfo]
    state: State | None
    config: RoomConfig
    clock: Clock
    metrics: Metrics
    queue: IntentQueue
    marks: dict[int, int]
    host_token_hash: str
    chat: ChatRoom | None

    def __init__(self) -> None:
        self.conns: set[Outbox] = set()
        self._grace: dict[int, Timer] = {}
        self._epoch = 0
        self.latest: dict[int, str] = {}
        """Each seat's connection that said ``hello`` last, by its identity (`new_connection_id`),
        since the room was loaded: an automatic reconnect of an earlier one is refused while that
        one is connected (`held_since`)."""
        self.host_conns: set[Outbox] = set()
        """The connections whose ``hello`` carried the room's host token."""
        self.host_away = False
        """The host has had no connection for longer than the grace (`host_gone`)."""
        self._host_timer: Timer | None = None
        self._host_epoch = 0
        self.told_turn: dict[str, Any] | None = None
        """The turn (`app.rooms.frames.turn_public`) as every connection was last told it."""
        self.addresses: dict[Outbox, str] = {}
        """Each connection's client address, as `app.addresses.counted_address` counts it (an IPv6
        client: its /64), where known: in memory only, never sent nor stored; the lobby counts a
        person at several open tables once across them (`app.rooms.lobby.rank_tables`)."""
        self.arrivals: dict[Outbox, None] = {}
        """The spectators' connections in the order they came (an ordered set): the host's list of
        who watches (`spectators_public`) keeps its order as people come and go."""

    if TYPE_CHECKING:  # the rest of Room that presence calls

        def schedule(self) -> None: ...

    def on_connect(
        self,
        conn: Outbox,
        token: str | None,
        since: int | None,
        host: str | None = None,
        watcher: str | None = None,
        address: str | None = None,
        resume: str | None = None,
    ) -> None:
        """Admit ``conn``: a seat's by ``token`` (its other connection is closed, its grace ends),
        else a spectator, known by its ``watcher`` key (a new one when it has none:
        `app.rooms.watchers`), from client ``address`` (kept only as the room's salted hash,
        `app.rooms.watchers.client_hash`, in ``conn.client``), the host's too when ``host`` is the
        room's host token (anything else there is ignored), then the welcome (a spectator's with
        its key and tag, to it alone) and the state, whole or only what was missed since version ``since``.
        A seat's welcome gives the connection its identity (`new_connection_id`). With ``resume``,
        the identity of the seat's connection an automatic reconnect follows, the seat is taken
        unless a later connection holds it (`held_since`): a window the player opened meanwhile
        keeps it while it is open, and once it has closed the reconnect takes the seat back.
        Raises `RoomError` ``spectators_full`` for a spectator past ``config.max_spectators`` (the
        host's sockets neither count nor are refused: spectators filling the room never lock the
        host out of removing them), and
        ``replaced`` for a reconnect that would take the seat from a later connection,
        ``seat_to_bot`` for the token of a person whose seat the host gave to a bot
        (`app.rooms.seats.given_to_bot`), ``bad_token`` for any other token that holds no seat."""
        try:
            seat = None if token is None else seat_of_token(self.seats, token)
        except RoomError:
            if token is not None and given_to_bot(self.seats, token):  # its person was away then
                raise RoomError("seat_to_bot", "the host gave this seat to a bot", 403) from None
            raise
        if seat is not None and resume is not None and self.held_since(seat, resume):
            _log.info("resume_refused", room=self.code, seat=seat)
            raise RoomError("replaced", "this seat was opened in another window")
        host_back = host is not None and hmac.compare_digest(hash_token(host), self.host_token_hash)
        limit = self.config.max_spectators
        watching = sum(1 for c in self.conns if c.seat is None and c not in self.host_conns)
        if seat is None and not host_back and limit and watching >= limit:  # never the host's own
            raise RoomError("spectators_full", f"this room has as many spectators as it takes ({limit})", 503)
        connection = None
        if seat is not None:
            for other in [c for c in self.conns if c.seat == seat]:
                self.close(other, "replaced")
            self.seats[seat].connections += 1
            connection = self.latest[seat] = new_connection_id()
            self._epoch += 1
            grace = self._grace.pop(seat, None)
            if grace is not None:
                grace.cancel()
        conn.seat = seat
        key, conn.watcher = (
            (None, None) if seat is not None else watcher_of(self.host_token_hash, self.code, watcher)
        )
        conn.client = None if not address else client_hash(self.host_token_hash, address)
        self.conns.add(conn)
        if address:
            self.addresses[conn] = address
        self.metrics.connections.inc()
        if host_back:
            self.host_here(conn)
        conn.send(frames.welcome_frame(seat, key, conn.watcher, connection))
        missed_from = None if since is None or since > self.version else self.marks.get(since)
        if missed_from is not None and self.state is not None:
            frames.send_updates(self, [conn], missed_from)  # type: ignore[arg-type]
        else:
            conn.send(frames.full_frame(self, seat))  # type: ignore[arg-type]
        if seat is None:
            self.arrivals[conn] = None
        if seat is None or host_back:
            self.send_spectators()
        if seat is not None and self.seats[seat].covered:
            self.uncover(seat)
        elif seat is not None or host_back:
            self.send_presence()
        self.schedule()  # the first to come back to an unwatched table lets the next deal come

    def held_since(self, seat: int, resume: str) -> bool:
        """Whether a connection that said hello for ``seat`` after the one ``resume`` names holds
        the seat now: the seat's latest is another (as far as this room remembers, `latest`) and
        is still connected (a relayed one: until its relay says it ended). A seat has at most one
        connection (a hello closes the others), so a connected one is the latest."""
        return self.latest.get(seat, resume) != resume and self.seats[seat].connections > 0

    def cover(self, seat: int, why: str) -> None:
        """A bot plays for the human at ``seat`` until they are back (two turn timers in a row ran
        out, or they are away past the grace); the caller sends presence and schedules."""
        self.seats[seat].covered, self.seats[seat].stand_in = True, False
        _log.info("seat_covered", room=self.code, seat=seat, why=why)

    def time_out(self, seat: int) -> None:
        """The turn timer of the human at ``seat`` ran out: a bot plays this one turn for them
        (``stand_in``) and the next is theirs again; the second in a row without a move of their
        own in between, a bot covers the seat until they are back. Everyone is told, with the turn
        now a bot's (no deadline)."""
        info = self.seats[seat]
        info.timeouts += 1
        if info.timeouts >= 2:
            self.cover(seat, "two turn timers in a row")
        else:
            info.stand_in = True
            _log.info("turn_timed_out", room=self.code, seat=seat)
        self.schedule()
        self.send_presence()

    def uncover(self, seat: int) -> None:
        """The player is back: their seat is theirs again, their timeouts count from 0, and if it
        is their turn its timer starts now; everyone learns it, the deadline included."""
        info = self.seats[seat]
        if not info.covered:
            return
        info.release()
        _log.info("seat_uncovered", room=self.code, seat=seat)
        self.schedule()
        self.send_presence()

    def close(self, conn: Outbox, reason: CloseReason) -> None:
        """Close ``conn`` for ``reason`` and forget it (what it queued before is void)."""
        conn.close(reason)
        self.drop(conn)

    def drop(self, conn: Outbox) -> bool:
        """Forget ``conn`` (closed or closing); whether it was still counted."""
        if conn not in self.conns:
            return False
        self.conns.discard(conn)
        self.addresses.pop(conn, None)
        self.arrivals.pop(conn, None)
        self.metrics.connections.dec()
        if conn.seat is not None:
            self.seats[conn.seat].connections -= 1
        if conn in self.host_conns:
            self.host_conns.discard(conn)
            if not self.host_conns:
                self.start_host_grace()
        return True

    def on_disconnect(self, conn: Outbox, silent_s: float = 0.0) -> None:
        """``conn`` is gone: an absent player's grace starts (the host's too, `start_host_grace`),
        counted from when its client was last heard, ``silent_s`` seconds ago (a network that
        dropped without a word is noticed only at the ping timeout, which the player's grace
        does not add to)."""
        was_host = conn in self.host_conns
        if not self.drop(conn):
            return
        if not self.conns:
            self.schedule()  # nobody watches now: no next deal until someone is back
        if conn.seat is None:
            if was_host:
                self.send_presence()  # everyone learns that the host is away
            else:
                self.send_spectators()  # the host's list loses them
            return
        info = self.seats[conn.seat]
        if info.connections == 0 and info.kind == "human" and self.status == "playing":
            self.start_grace(conn.seat, silent_s)
        self.send_presence()

    def grace_for_absent(self) -> None:
        """Start the grace of every human seat of a match in play that nobody holds."""
        for info in self.seats:
            absent = info.kind == "human" and info.connections == 0 and info.seat not in self._grace
            if absent and self.status == "playing":
                self.start_grace(info.seat)

    def start_grace(self, seat: int, spent_s: float = 0.0) -> None:
        """Arm ``seat``'s grace, ``spent_s`` seconds of it already gone (at least 0: it runs out
        at once past the grace): when it runs out with nobody back, a bot covers the seat."""
        self._epoch += 1
        expired = GraceExpired(seat, self._epoch)
        self.end_grace(seat)
        left_s = max(0.0, self.config.disconnect_grace_s - max(0.0, spent_s))
        self._grace[seat] = self.clock.call_later(left_s, lambda: self.queue.put_nowait(expired))

    def end_grace(self, seat: int) -> None:
        """Disarm ``seat``'s grace, if armed."""
        old = self._grace.pop(seat, None)
        if old is not None:
            old.cancel()

    def cancel_graces(self) -> None:
        """Disarm every grace."""
        for handle in self._grace.values():
            handle.cancel()
        self._grace.clear()

    def on_grace(self, seat: int) -> None:
        """A grace ran out: cover the seat if its player is still away."""
        info = self.seats[seat]
        self._grace.pop(seat, None)
        if info.kind != "human" or info.connections > 0 or info.covered:
            return
        self.cover(seat, "disconnected")
        self.schedule()
        self.send_presence()

    # -- the host, and who starts the match in their stead -----------------------------------

    def host_here(self, conn: Outbox) -> None:
        """``conn`` holds the host token: the host is here, their powers are theirs again."""
        self.host_conns.add(conn)
        self.host_away = False
        if self._host_timer is not None:
            self._host_timer.cancel()
            self._host_timer = None

    def start_host_grace(self) -> None:
        """The host has no connection: when ``config.disconnect_grace_s`` runs out with them still
        away, the match may be started by a seated person (`deputy`)."""
        if self._host_timer is not None:
            self._host_timer.cancel()
        self._host_epoch += 1
        expired = HostAway(self._host_epoch)
        self._host_timer = self.clock.call_later(
            self.config.disconnect_grace_s, lambda: self.queue.put_nowait(expired)
        )

    def on_host_away(self, epoch: int) -> None:
        """The host's grace ran out: if they are still away, everyone learns who may start."""
        if epoch != self._host_epoch or self.host_conns:
            return
        self._host_timer, self.host_away = None, True
        _log.info("host_away", room=self.code)
        self.send_presence()

    def deputy(self) -> int | None:
        """The seat that may start (and set up) the match in the host's stead, or None: while the
        match waits for its start and the host has been away past the grace, the first seat in
        seat order whose person is connected (docs/protocol.md, "When the host is away")."""
        if self.status != "waiting" or self.host_conns or not self.host_away:
            return None
        here = [s.seat for s in self.seats if s.kind == "human" and s.connections > 0]
        return here[0] if here else None

    def host_public(self) -> dict[str, Any]:
        """Whether the host is connected and who starts in their stead:
        ``{"connected": false, "deputy": 2}`` (``deputy`` null while the host may start)."""
        return {"connected": bool(self.host_conns), "deputy": self.deputy()}

    def spectators_public(self) -> list[dict[str, Any]]:
        """Every spectator watching, for the host alone (`send_spectators`): each public tag once
        (all the tabs of one spectator key share it), in the order they came, with the name it
        gave in the chat ("" none; its latest tab's that has one) and whether the host's mutes hold
        it (``muted``: `app.rooms.chat.ChatRoom.mutes`, any of its tabs: its tag muted, or its
        client address held by another mute, e.g. the seat it left, and not spared), e.g.
        ``[{"tag": "3fa9c1d2", "name": "Dewi", "muted": false}, {"tag": "b07c44e1", "name": "",
        "muted": true}]``. The host's own sockets are not listed. Never the spectator's key, nor its
        client address."""
        names: dict[str, str] = {}
        muted: dict[str, bool] = {}
        for conn in self.arrivals:
            if conn.watcher is None or conn in self.host_conns:
                continue
            names[conn.watcher] = conn.name or names.get(conn.watcher, "")
            held = self.chat is not None and self.chat.mutes(conn)
            muted[conn.watcher] = muted.get(conn.watcher, False) or held
        return [{"tag": tag, "name": name, "muted": muted[tag]} for tag, name in names.items()]

    def send_spectators(self) -> None:
        """Send the host's connections, and only theirs, who watches (`spectators_public`):
        ``{"type": "spectators", "spectators": [...]}``, so the host may mute or remove a silent
        spectator too. Nobody else learns a silent spectator's tag; it does not change the version.
        Only the latest list matters: one still waiting in a slow host's queue is replaced
        (`Outbox.send_latest`), so churning spectators cannot fill that queue and cut the host off."""
        if not self.host_conns:
            return
        frame = frames.dumps({"type": "spectators", "spectators": self.spectators_public()})
        for conn in list(self.host_conns):
            conn.send_latest("spectators", frame)

    def cancel_host_timer(self) -> None:
        """Disarm the host's grace (the room is stopping)."""
        if self._host_timer is not None:
            self._host_timer.cancel()
            self._host_timer = None

    def send_presence(self) -> None:
        """Send everyone who is connected and covered, and the turn with its deadline."""
        frame = frames.presence_frame(self)  # type: ignore[arg-type]
        for conn in list(self.conns):
            conn.send(frame)
        self.told_turn = frames.turn_public(self)  # type: ignore[arg-type]

    def tell_turn(self) -> None:
        """If the turn's deadline changed since everyone was last told (a timer armed by a return,
        a retry after a failed write), send presence: every client knows every deadline."""
        if frames.turn_public(self) != self.told_turn:  # type: ignore[arg-type]
            self.send_presence()

    def refuse(self, conn: Outbox, code: str, message: str) -> None:
        """Answer ``conn`` with an error (its action changed nothing)."""
        conn.send(frames.error_frame(code, message, self.version))

    def close_all(self, reason: CloseReason) -> None:
        """Close every connection (the room is being closed)."""
        for conn in list(self.conns):
            self.close(conn, reason)
