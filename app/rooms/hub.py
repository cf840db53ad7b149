"""The hub: every room this process hosts, their creation, and restart recovery."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Mapping
from typing import Any

import structlog

from app.metrics import Metrics
from app.rooms.config import RoomConfig
from app.rooms.errors import RoomError
from app.rooms.local import LocalBots, LoopClock
from app.rooms.ports import BotPort, Clock
from app.rooms.recovery import rebuild, round_end
from app.rooms.room import Room
from app.rooms.seats import SeatInfo, hash_token
from app.store import MatchRow, SeatSpec, Store
from engine.bots import BOTS
from engine.core import Phase
from engine.errors import EngineError
from engine.rules.base import Rules
from engine.variants import make_rules

__all__ = [
    "Hub",
    "store_finished_round",
]

_log = structlog.get_logger("domeng.hub")


class Hub:
    """Rooms by code. One per server process; its rooms share its store, clock and bots."""

    def __init__(
        self,
        config: RoomConfig,
        store: Store,
        metrics: Metrics,
        *,
        clock: Clock | None = None,
        bots: BotPort | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self.metrics = metrics
        self.clock: Clock = clock or LoopClock()
        self.bots: BotPort = bots or LocalBots()
        self.rooms: dict[str, Room] = {}

    def get(self, code: str) -> Room | None:
        """The room with this code, or None."""
        return self.rooms.get(code)

    def open_tables(self) -> list[dict[str, Any]]:
        """The rooms listed in the lobby: open, waiting for players, with a free seat and someone
        there (a room that empties leaves the list), longest waiting first. Each: ``code``,
        ``variant``, ``seats`` (count), ``free`` (empty seats), ``people`` (names seated),
        ``bots`` (their levels), ``turn_timer_s``, ``waiting_s`` (seconds since listed)."""
        now = self.clock.time()
        listed: list[dict[str, Any]] = []
        for room in self.rooms.values():
            free = sum(1 for s in room.seats if s.kind == "empty")
            if not room.open_table or room.status != "waiting" or not free or not room.conns:
                continue
            listed.append(
                {
                    "code": room.code,
                    "variant": room.rules.name,
                    "seats": len(room.seats),
                    "free": free,
                    "people": [s.name for s in room.seats if s.kind == "human"],
                    "bots": [s.bot_level for s in room.seats if s.kind == "bot"],
                    "turn_timer_s": room.turn_timer_s,
                    "waiting_s": round(max(0.0, now - (room.listed_at or now)), 1),
                }
            )
        listed.sort(key=lambda t: -t["waiting_s"])
        return listed

    def _room(
        self,
        match_id: int,
        code: str,
        rules: Rules,
        turn_timer_s: float,
        seats: list[SeatInfo],
        *,
        host_token_hash: str,
        status: str,
        version: int,
    ) -> Room:
        return Room(
            match_id=match_id,
            code=code,
            rules=rules,
            turn_timer_s=turn_timer_s,
            seats=seats,
            host_token_hash=host_token_hash,
            status=status,
            version=version,
            config=self.config,
            store=self.store,
            clock=self.clock,
            bots=self.bots,
            metrics=self.metrics,
        )

    async def create_room(
        self,
        variant: str,
        options: Mapping[str, object],
        seat_count: int | None,
        turn_timer_s: float | None,
        bot_levels: list[str | None] | None,
    ) -> tuple[Room, str]:
        """A new waiting room and its host token. Raises `RoomError` (422) for bad settings."""
        try:
            rules = make_rules(variant, options, seat_count)
        except EngineError as error:
            raise RoomError(error.code, error.message, 422) from None
        levels = list(bot_levels or [None] * rules.seats)
        if len(levels) != rules.seats:
            raise RoomError("invalid_seats", f"'bots' must list {rules.seats} seats", 422)
        unknown = sorted({level for level in levels if level is not None and level not in BOTS})
        if unknown:
            raise RoomError("unknown_bot", f"unknown bot level(s) {unknown}; known: {sorted(BOTS)}", 422)
        code = secrets.token_urlsafe(16)  # 128 bits
        host_token = secrets.token_urlsafe(32)
        timer = self.config.turn_timer_s if turn_timer_s is None else turn_timer_s
        seats = [SeatInfo(i, "bot" if level else "empty", bot_level=level) for i, level in enumerate(levels)]
        match_id = await self.store.create_match(
            code=code,
            variant=rules.name,
            options=rules.options(),
            seat_count=rules.seats,
            turn_timer_s=timer,
            host_token_hash=hash_token(host_token),
            seats=[SeatSpec(kind=s.kind, bot_level=s.bot_level, seat=s.seat) for s in seats],
            start=None,
        )
        room = self._room(
            match_id,
            code,
            rules,
            timer,
            seats,
            host_token_hash=hash_token(host_token),
            status="waiting",
            version=0,
        )
        self._add(room)
        _log.info("room_created", room=code, variant=rules.name, seats=rules.seats)
        return room, host_token

    def _add(self, room: Room) -> None:
        self.rooms[room.code] = room
        self.metrics.rooms.set(len(self.rooms))
        room.start_task()

    async def recover(self) -> int:
        """Rebuild every unfinished room from the store, at exactly its last stored action."""
        rows = await self.store.active_matches()
        for row in rows:
            try:
                room = self.restore(row)
                if row.rounds and row.rounds[-1].outcome is None:
                    # a round's last action stored without its end (older databases): store it now
                    await store_finished_round(room)
            except (EngineError, ValueError, KeyError) as error:
                _log.error("room_recovery_failed", room=row.code, error=str(error))
                continue
            self._add(room)
        if rows:
            _log.info("rooms_recovered", count=len(self.rooms))
        return len(self.rooms)

    def restore(self, row: MatchRow) -> Room:
        """The room of a stored match, its game replayed (its task not started)."""
        rules = make_rules(row.variant, row.options, row.seat_count)
        seats = [
            SeatInfo(s.seat, s.kind, s.name, s.bot_level, s.token_hash)  # type: ignore[arg-type]
            for s in row.seats
        ]
        room = self._room(
            row.id,
            row.code,
            rules,
            row.turn_timer_s,
            seats,
            host_token_hash=row.host_token_hash,
            status=row.status,
            version=row.version,
        )
        room.open_table = row.open_table
        room.listed_at = self.clock.time() if row.open_table else None
        game = rebuild(row, rules)
        room.state, room.seed, room.commitment = game.state, game.seed, game.commitment
        room.last_round, room.marks, room.by_bot = game.last_round, game.marks, game.by_bot
        return room

    async def stop(self) -> None:
        """Stop every room's task (connections are closed by the server's shutdown)."""
        await asyncio.gather(*(room.stop() for room in self.rooms.values()))


async def store_finished_round(room: Room) -> None:
    """Recovery: if the rebuilt round has ended but its end was not stored, store it now (a
    database written before a round's end went in with its last action can hold such a round)."""
    state = room.state
    if state is None or not state.round_index or state.phase is Phase.PLAYING:
        return
    end = round_end(state)
    await room.store.end_round(
        room.match_id,
        state.round_index - 1,
        end.outcome,
        end.table_after,
        end.tallies,
        room.version,
        match_finished=end.match_finished,
    )
    if end.match_finished:
        room.status = "finished"
