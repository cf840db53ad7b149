"""The hub: every room this process hosts, their creation, and restart recovery."""

from __future__ import annotations

import asyncio
import secrets
from collections import Counter
from collections.abc import Mapping
from typing import Any

import structlog

from app.metrics import Metrics
from app.rooms import Room, RoomError, SeatInfo, commitment_of, deal_of, hash_token
from app.settings import Settings
from app.store import MatchRow, Store
from engine.actions import parse_action
from engine.bots import BOTS
from engine.core import Phase
from engine.errors import EngineError
from engine.variants import make_rules

__all__ = ["Hub"]

_log = structlog.get_logger("domeng.hub")


class Hub:
    """Rooms by code. One per server process."""

    def __init__(self, settings: Settings, store: Store, metrics: Metrics) -> None:
        self.settings = settings
        self.store = store
        self.metrics = metrics
        self.rooms: dict[str, Room] = {}
        self._sockets: Counter[str] = Counter()

    def admit_socket(self, address: str) -> bool:
        """Count one more open room socket from ``address``; False (and not counted) when the
        address already holds ``max_sockets_per_address`` of them. Pair with `release_socket`."""
        limit = self.settings.max_sockets_per_address
        if limit and self._sockets[address] >= limit:
            return False
        self._sockets[address] += 1
        return True

    def release_socket(self, address: str) -> None:
        """A socket counted by `admit_socket` has closed."""
        self._sockets[address] -= 1
        if self._sockets[address] <= 0:
            del self._sockets[address]

    def get(self, code: str) -> Room | None:
        """The room with this code, or None."""
        return self.rooms.get(code)

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
        timer = self.settings.turn_timer_s if turn_timer_s is None else turn_timer_s
        match_id = await self.store.create_match(
            code=code,
            variant=rules.name,
            options=rules.options(),
            seat_count=rules.seats,
            turn_timer_s=timer,
            host_token_hash=hash_token(host_token),
            seats=Room.seat_specs(levels),
            start=None,
        )
        room = Room(
            match_id=match_id,
            code=code,
            rules=rules,
            turn_timer_s=timer,
            seats=[
                SeatInfo(i, "bot" if level else "empty", bot_level=level) for i, level in enumerate(levels)
            ],
            host_token_hash=hash_token(host_token),
            status="waiting",
            version=0,
            settings=self.settings,
            store=self.store,
            metrics=self.metrics,
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
                room = self._restore(row)
                if row.rounds and row.rounds[-1].outcome is None:
                    # a round's last action stored without its end (older databases): store it now
                    await room.store_finished_round()
            except (EngineError, ValueError, KeyError) as error:
                _log.error("room_recovery_failed", room=row.code, error=str(error))
                continue
            self._add(room)
        if rows:
            _log.info("rooms_recovered", count=len(self.rooms))
        return len(self.rooms)

    def _restore(self, row: MatchRow) -> Room:
        rules = make_rules(row.variant, row.options, row.seat_count)
        room = Room(
            match_id=row.id,
            code=row.code,
            rules=rules,
            turn_timer_s=row.turn_timer_s,
            seats=[
                SeatInfo(s.seat, s.kind, s.name, s.bot_level, s.token_hash)  # type: ignore[arg-type]
                for s in sorted(row.seats, key=lambda s: s.seat)
            ],
            host_token_hash=row.host_token_hash,
            status=row.status,
            version=row.version,
            settings=self.settings,
            store=self.store,
            metrics=self.metrics,
        )
        if row.status != "playing" or not row.rounds:
            if row.status == "playing":
                room.state = rules.new_match(row.start)
            return room
        state = rules.new_match(row.start)
        seed: str | None = None
        commitment: str | None = None
        last: dict[str, Any] | None = None
        for stored in sorted(row.rounds, key=lambda r: r.index):
            if seed is not None:  # the previous round is over: its seed was revealed
                last = {"index": stored.index - 1, "seed": seed, "commitment": commitment}
            if commitment_of(stored.seed) != stored.commitment:
                raise ValueError(f"round {stored.index}: seed does not match its commitment")
            state.start_round(deal_of(stored.deal))
            for action in stored.actions:
                state.apply(parse_action(action.action))
            seed, commitment = stored.seed, stored.commitment
        if state.phase is not Phase.PLAYING:
            last = {"index": state.round_index - 1, "seed": seed, "commitment": commitment}
        room.restore_state(state, seed, commitment, last)
        return room

    async def stop(self) -> None:
        """Stop every room's task (connections are closed by the server's shutdown)."""
        await asyncio.gather(*(room.stop() for room in self.rooms.values()))
