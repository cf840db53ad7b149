"""Matches closed before their first deal are deleted after `RoomConfig.unplayed_kept_s`
(`app.store.Store.prune_unplayed`, run by the hub's sweeper): one client can create rooms it never
plays (60 a minute), and nothing deleted them, so the database grew for ever. A match with a round,
and an unfinished one, are never deleted. On SQLite and PostgreSQL (a scratch database per test:
the deletion looks at every match)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from app.store import Store
from engine.hashing import commitment_of
from engine.variants import make_rules
from tests.roomkit import CONFIG, left_unplayed, sweep_until, swept_hub
from tests.test_store import deal_json
from tests.test_store_cover_check import SEATS, database_url  # noqa: F401  (a fixture)


def test_only_matches_closed_before_their_first_deal_are_deleted_and_only_once_old(database_url: str) -> None:  # noqa: F811
    async def main() -> None:
        async with Store(database_url) as store:
            unplayed = await store.create_match("unplayed", "domeng", {}, 2, 30.0, "h", SEATS)
            await store.add_chat(unplayed, 0, "Ana", text="anyone?")
            played = await store.create_match("played", "domeng", {}, 2, 30.0, "h", SEATS)
            deal = make_rules("domeng").deal_from_seed("s")
            await store.start_round(played, 0, "s", commitment_of("s"), deal_json(deal), 1)
            waiting = await store.create_match("waiting", "domeng", {}, 2, 30.0, "h", SEATS)
            assert await store.abandon(unplayed, "idle") and await store.abandon(played, "idle")

            assert await store.prune_unplayed(datetime.now(UTC) - timedelta(hours=1)) == 0  # not old yet
            assert await store.prune_unplayed(datetime.now(UTC) + timedelta(seconds=1)) == 1
            assert await store.load_match_by_id(unplayed) is None
            kept = await store.load_match_by_id(played)
            assert kept is not None and kept.status == "abandoned" and len(kept.rounds) == 1
            still = await store.load_match_by_id(waiting)
            assert still is not None and still.status == "waiting"
            assert await store.prune_unplayed(datetime.now(UTC) + timedelta(seconds=1)) == 0

    asyncio.run(main())


def test_the_sweeper_deletes_a_room_left_before_its_first_deal_once_kept_long_enough(tmp_path: Path) -> None:
    async def main() -> None:
        config = replace(CONFIG, abandon_after_s=0.2, unplayed_kept_s=0.2)
        async with swept_hub(tmp_path, config) as (hub, store, clock):
            room = await left_unplayed(hub, clock)

            async def deleted(_: tuple[int, int]) -> bool:  # abandoned by one scan, deleted by a later one
                return await store.load_match(room.code) is None

            await sweep_until(hub, clock, deleted)
            assert await store.load_match(room.code) is None
            assert await hub.open(room.code) is None  # its link finds no room

    asyncio.run(main())
