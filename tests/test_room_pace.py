"""The pause before a bot's move (app.rooms.pace), in-process with a fake clock: varied, drawn from
the room's rng, shorter for a forced pass, the same range however many tiles fit (the count is the
seat's secret, D20), and the bot's thinking time counts into it."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

from app.rooms.pace import FORCED_RANGE, PAUSE_RANGE, pause_s
from engine.actions import Action, Play, PlayLempas
from engine.bots import make_bot
from engine.core import Phase
from engine.views import PlayerView
from tests.roomkit import Table, run_table

STEP = 0.01
"""How far the fake clock moves at a time while a test looks for the next version."""


async def _next_version(table: Table, limit: float = 10.0) -> float:
    """Move the clock on a step at a time until the room's version grows; the time it took."""
    version, started = table.room.version, table.clock.now
    while table.room.version == version:
        assert table.clock.now - started < limit, "no move came"
        await table.clock.advance(table.room, STEP)
    return table.clock.now - started


def test_a_bots_pause_varies_and_stays_within_its_range(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        table.room._rng = random.Random(7)  # the room's own rng: a pinned seed, pinned pauses
        await table.watch()
        await table.start()
        delay = table.hub.config.bot_delay_s
        gaps = [await _next_version(table) for _ in range(12)]
        assert all(0.5 * delay - STEP <= gap <= 1.6 * delay + STEP for gap in gaps), gaps
        assert len({round(gap, 2) for gap in gaps}) > 6, gaps  # varied, not one fixed wait

    run_table(tmp_path, body, bots=["medium"] * 5)


def test_a_bots_pause_does_not_tell_how_many_tiles_fit(tmp_path: Path) -> None:
    """A spectator timing the updates must not learn that a bot had one fitting tile: every move
    that places a tile waits within the same range, one fitting tile or several; only a forced pass
    (seen by all when it is made) is quicker."""

    async def body(table: Table) -> None:
        table.room._rng = random.Random(5)
        await table.watch()
        await table.start()
        delay = table.hub.config.bot_delay_s
        gaps: dict[str, list[float]] = {"forced": [], "one": [], "several": []}
        for _ in range(400):
            state = table.room.state
            if state is None or state.phase is not Phase.PLAYING:
                await _next_version(table)  # the next deal
                continue
            placements = sum(isinstance(a, (Play, PlayLempas)) for a in state.legal_actions())
            kind = "forced" if placements == 0 else "one" if placements == 1 else "several"
            gaps[kind].append(await _next_version(table))
            if min(map(len, gaps.values())) >= 12:
                break
        assert min(map(len, gaps.values())) >= 12, {k: len(v) for k, v in gaps.items()}
        low, high = (delay * bound for bound in PAUSE_RANGE)
        for kind in ("one", "several"):
            assert all(low - STEP <= gap <= high + STEP for gap in gaps[kind]), (kind, gaps[kind])
        forced_low, forced_high = (delay * bound for bound in FORCED_RANGE)
        assert all(forced_low - STEP <= gap <= forced_high + STEP for gap in gaps["forced"]), gaps["forced"]

    run_table(tmp_path, body, bots=["medium"] * 5)


class OneAtATime:
    """A `BotPort` whose decisions wait for a `release` each: the test says when a bot has thought."""

    def __init__(self) -> None:
        self.asked = self.released = 0
        self._permits = asyncio.Semaphore(0)

    async def decide(self, level: str, view: PlayerView, seed: int, share: str = "") -> Action:
        self.asked += 1
        await self._permits.acquire()
        return make_bot(level, random.Random(seed)).choose(view)

    def release(self) -> None:
        self.released += 1
        self._permits.release()


def test_a_bots_thinking_time_counts_into_its_pause(tmp_path: Path) -> None:
    bots = OneAtATime()

    async def until_asked(table: Table) -> float:
        """Move on (forced passes are the server's) until a bot is asked; the clock then."""
        for _ in range(2000):
            if bots.asked > bots.released:
                return table.clock.now
            await table.clock.advance(table.room, STEP, bots=False)
        raise AssertionError("no bot was asked")

    async def body(table: Table) -> None:
        table.room._rng = random.Random(3)
        await table.watch()
        await table.start()
        delay = table.hub.config.bot_delay_s
        # asked at once, it thinks for 0.2 s (less than any pause) and plays when its pause ends
        asked_at, version = await until_asked(table), table.room.version
        await table.clock.advance(table.room, 0.2, bots=False)
        assert table.room.version == version
        bots.release()
        await table.room.settled()
        assert table.room.version == version  # decided, but its pause is not over
        while table.room.version == version:
            await table.clock.advance(table.room, STEP, bots=False)
        assert 0.5 * delay - STEP <= table.clock.now - asked_at <= 1.6 * delay + STEP
        # a bot that thinks longer than its pause plays as soon as it has decided
        await until_asked(table)
        version = table.room.version
        await table.clock.advance(table.room, 3 * delay, bots=False)
        assert table.room.version == version
        bots.release()
        await table.room.settled()
        assert table.room.version == version + 1

    run_table(tmp_path, body, bots=["medium"] * 5, bot_port=bots)


def test_the_same_room_seed_gives_the_same_pauses() -> None:
    one, two = random.Random(11), random.Random(11)
    forced = (True, False, False, True)
    assert [pause_s(one, 0.7, f) for f in forced] == [pause_s(two, 0.7, f) for f in forced]
