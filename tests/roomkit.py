"""Rooms driven in-process: a real temporary SQLite store, a fake clock whose timers the test
advances, fake outboxes that keep what they were sent, and bots through the room's `BotPort`.
No server process, no socket, no sleep: every wait is for the room to have handled its queue.

    async def body(table: Table) -> None:
        ana = await table.sit(0, "Ana")
        await table.start()
        await table.clock.advance(table.room, 30.0)  # Ana's turn timer runs out

    run_table(tmp_path, body, bots=[None, "greedy", "greedy", "greedy", "greedy"], turn_timer_s=30)
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import select, update

from app.metrics import Metrics
from app.rooms import host
from app.rooms.config import RoomConfig
from app.rooms.hub import Hub
from app.rooms.local import LocalBots
from app.rooms.ports import BotPort, CloseReason
from app.rooms.room import Room
from app.store import MatchRow, Store, sqlite_url
from app.store.models import Match, MatchAction, MatchTurn, Round
from engine.actions import Action, parse_action

T = TypeVar("T")

CONFIG = RoomConfig(disconnect_grace_s=20.0, bot_delay_s=0.5, round_pause_s=6.0, turn_timer_s=0.0)
"""The timings of the tests' rooms (seconds of the fake clock)."""


@dataclass(eq=False)
class FakeTimer:
    """A timer of `FakeClock`: due at ``due`` (fake epoch seconds)."""

    due: float
    seq: int
    callback: Callable[[], None]
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeClock:
    """The room's `Clock`, moved only by `advance`."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now
        self.wall_offset = 0.0  # `time` less `now`: 0 until the wall clock is set (`set_wall`)
        self.timers: list[FakeTimer] = []
        self._seq = 0

    def time(self) -> float:
        return self.now + self.wall_offset

    def monotonic(self) -> float:
        return self.now

    def set_wall(self, seconds: float) -> None:
        """The wall clock is set ``seconds`` forward (back if negative): `time` moves, the timers
        and `monotonic` do not."""
        self.wall_offset += seconds

    def call_later(self, delay_s: float, callback: Callable[[], None]) -> FakeTimer:
        self._seq += 1
        timer = FakeTimer(self.now + delay_s, self._seq, callback)
        self.timers.append(timer)
        return timer

    def armed(self) -> list[float]:
        """The delays (from now) of the timers still armed, soonest first."""
        return sorted(t.due - self.now for t in self.timers if not t.cancelled)

    async def advance(self, room: Room, seconds: float, bots: bool = True) -> None:
        """Move time on by ``seconds``, firing each timer due by then in order, and letting the
        room handle what it queued (and the timers that armed) before the next one; with
        ``bots``, waiting for the bots' decisions too."""
        end = self.now + seconds
        await room.settled(bots)
        while True:
            due = [t for t in self.timers if not t.cancelled and t.due <= end]
            if not due:
                break
            timer = min(due, key=lambda t: (t.due, t.seq))
            self.timers.remove(timer)
            self.now = max(self.now, timer.due)
            timer.callback()
            await room.settled(bots)
        self.now = end
        self.timers = [t for t in self.timers if not t.cancelled]


@dataclass(eq=False)
class FakeOutbox:
    """A connection as the room sees it: keeps every frame (parsed) and why it was closed."""

    seat: int | None = None
    watcher: str | None = None
    client: str | None = None
    name: str | None = None
    closed: bool = False
    frames: list[dict[str, Any]] = field(default_factory=list)
    closed_for: CloseReason | None = None

    def send(self, text: str) -> None:
        if not self.closed:
            self.frames.append(json.loads(text))

    def send_latest(self, kind: str, text: str) -> None:
        """Nothing waits here: sent at once."""
        self.send(text)

    def close(self, reason: CloseReason) -> None:
        if not self.closed:
            self.closed, self.closed_for = True, reason

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        """The frames of one ``type``, oldest first."""
        return [f for f in self.frames if f["type"] == kind]

    @property
    def last_state(self) -> dict[str, Any]:
        """The last ``state`` frame."""
        return self.of_type("state")[-1]


@dataclass(eq=False)
class RawOutbox(FakeOutbox):
    """A `FakeOutbox` that keeps the text objects it was sent too (``texts``), oldest first."""

    texts: list[str] = field(default_factory=list)

    def send(self, text: str) -> None:
        self.texts.append(text)
        super().send(text)


class SlowBots:
    """A `BotPort` that decides like the in-process bots, but only once `release` is called: the
    room's state may move on meanwhile (stale decisions)."""

    def __init__(self) -> None:
        self.asked = 0
        self.gate = asyncio.Event()
        self._local = LocalBots()

    async def decide(self, level: str, view: Any, seed: int, share: str = "") -> Action:
        self.asked += 1
        await self.gate.wait()
        return await self._local.decide(level, view, seed)

    def release(self) -> None:
        self.gate.set()


@dataclass
class Table:
    """One room under test with its hub, store, clock and host token."""

    hub: Hub
    room: Room
    host_token: str
    clock: FakeClock

    @property
    def store(self) -> Store:
        return self.hub.store

    async def watch(
        self, token: str | None = None, since: int | None = None, host: bool = False
    ) -> FakeOutbox:
        """Connect a new outbox (a seat's with ``token``, else a spectator's; with ``host``, the
        host's too)."""
        conn = FakeOutbox()
        await self.room.connect(conn, token, since, self.host_token if host else None)
        return conn

    async def sit(self, seat: int, name: str) -> tuple[str, FakeOutbox]:
        """Claim ``seat`` for ``name`` and connect to it: its token and its outbox."""
        token: str = await self.room.call(lambda r: host.claim(r, seat, name))
        return token, await self.watch(token)

    async def start(self) -> None:
        """The host starts the match."""

        async def run(room: Room) -> None:
            host.check_host(room, self.host_token)
            await host.begin_match(room)

        await self.room.call(run)

    async def act(self, conn: FakeOutbox, action: dict[str, Any], version: int | None = None) -> None:
        """``conn``'s seat makes ``action`` (RECORD.md without the seat) at ``version`` (default:
        the room's), and the room handles it."""
        assert conn.seat is not None
        made = parse_action({**action, "seat": conn.seat})
        self.room.act(conn, self.room.version if version is None else version, made)
        await self.room.settled()

    async def stored(self) -> MatchRow:
        """The match as the store has it now."""
        row = await self.store.load_match(self.room.code)
        assert row is not None
        return row


def run_table(
    tmp_path: Path,
    body: Callable[[Table], Awaitable[T]],
    *,
    bots: Sequence[str | None],
    variant: str = "domeng",
    turn_timer_s: float = 0.0,
    config: RoomConfig = CONFIG,
    bot_port: BotPort | None = None,
    hints: bool = False,
    options: dict[str, object] | None = None,
    database_url: str | None = None,
) -> T:
    """Run ``body`` on a new room (its seats bots of the given levels, or empty; ``hints``: the
    host allows hints; ``options``: the variant's, e.g. ``{"camat_target": 0}`` for a match that
    never ends) on a fresh store in ``tmp_path`` (or on ``database_url``'s, e.g. a scratch
    PostgreSQL database); the room's task and the store are stopped afterwards."""

    async def main() -> T:
        clock = FakeClock()
        async with Store(database_url or sqlite_url(tmp_path)) as store:
            hub = Hub(config, store, Metrics(), clock=clock, bots=bot_port or LocalBots())
            room, token = await hub.create_room(
                variant, options or {}, len(bots), turn_timer_s, list(bots), hints=hints
            )
            try:
                return await body(Table(hub, room, token, clock))
            finally:
                await hub.stop()

    return asyncio.run(main())


@asynccontextmanager
async def swept_hub(tmp_path: Path, config: RoomConfig) -> AsyncIterator[tuple[Hub, Store, FakeClock]]:
    """A hub with ``config`` on a SQLite store in ``tmp_path``, its own `FakeClock` and local bots,
    for tests that drive a hub itself (its sweeper, `Hub.sweep`, say): the hub, its store and its
    clock; the hub stopped after."""
    clock = FakeClock()
    async with Store(sqlite_url(tmp_path)) as store:
        hub = Hub(config, store, Metrics(), clock=clock, bots=LocalBots())
        try:
            yield hub, store, clock
        finally:
            await hub.stop()


async def left_unplayed(hub: Hub, clock: FakeClock) -> Room:
    """A two-seat Kozel room nobody joined, out of memory a tenth of a second after it was made
    (`Hub.unload`, as after a restart too)."""
    room, _ = await hub.create_room("kozel", {}, 2, 0.0, [None, None])
    clock.now += 0.1
    assert await hub.unload(room)
    return room


async def sweep_until(
    hub: Hub, clock: FakeClock, done: Callable[[tuple[int, int]], Awaitable[bool]], scans: int = 400
) -> tuple[int, int]:
    """Scan with the hub's sweeper, each scan of the store due (a second later on ``clock``), until
    ``done`` says yes to what a scan did (`Hub.sweep`: rooms unloaded, matches abandoned), ``scans``
    at most; what the last scan did. A match's age is counted on the store's own clock (the
    database's), which the fake clock does not move: 50 ms pass between scans."""
    for _ in range(scans):
        clock.now += 1.0  # the next scan of the store is due
        swept = await hub.sweep()
        if await done(swept):
            break
        await asyncio.sleep(0.05)
    return swept


async def reopen(table: Table) -> Table:
    """Stop ``table``'s hub and recover its room from the same store into a new hub (a restart):
    the recovered room, its task started."""
    await table.hub.stop()
    hub = Hub(table.hub.config, table.store, Metrics(), clock=table.clock, bots=table.hub.bots)
    await hub.recover()
    room = await hub.open(table.room.code)
    assert room is not None
    return Table(hub, room, table.host_token, table.clock)


async def age_store(table: Table, seconds: float) -> None:
    """``seconds`` pass on the store's clock for ``table``'s match. The database's clock cannot be
    moved, so every time stored for the match so far is made that much older instead: its rounds'
    ``started_at``, its actions' ``created_at`` and, where the store keeps it, its turn's
    ``turn_at``. Call it while the room is quiet (`Room.settled`)."""
    match_id, back = table.room.match_id, timedelta(seconds=seconds)
    async with table.store.engine.begin() as connection:
        for stored in (Round.__table__, MatchAction.__table__):
            column = stored.c.started_at if "started_at" in stored.c else stored.c.created_at
            keys = list(stored.primary_key.columns)
            ours = select(*keys, column).where(stored.c.match_id == match_id)
            for row in (await connection.execute(ours)).all():
                where = [key == row[i] for i, key in enumerate(keys)]
                await connection.execute(update(stored).where(*where).values({column.name: row[-1] - back}))
        turns = update(MatchTurn).where(MatchTurn.match_id == match_id)
        await connection.execute(turns.values(turn_at=MatchTurn.turn_at - seconds))


def of_room(code: str) -> Any:
    """A WHERE clause for the `MatchTurn` rows of room ``code``'s matches."""
    return MatchTurn.match_id.in_(select(Match.id).where(Match.code == code))


def my_move(frame: dict[str, Any]) -> dict[str, Any] | None:
    """The first legal action in a ``state`` frame's view (without its seat), or None when the
    receiving seat has none to choose (a lone forced pass is the server's)."""
    view = frame.get("view")
    if not view or view["phase"] != "playing" or not view["legal"]:
        return None
    if any("pass" in a for a in view["legal"]):
        return None
    return {k: v for k, v in view["legal"][0].items() if k != "seat"}
