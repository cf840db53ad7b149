"""Migration 0021: ``matches.unattended_rounds`` keeps how many rounds a room dealt in a row with
no person at the table (`app.rooms.unattended`), on SQLite (a table rebuilt in batch mode) and
PostgreSQL (a new scratch database, since the test migrates down and up again): stored with a deal
and read back with its room; down to 0020 drops it, up again reads every older match as 0."""

from __future__ import annotations

import asyncio

from app.store import SeatSpec, Store
from app.store.rows import NewRound
from engine.deal_json import deal_to_json
from engine.hashing import commitment_of
from engine.variants import make_rules
from tests.adminkit import migrate
from tests.test_store_cover_check import database_url  # noqa: F401  (a fixture)

SEED = "ab" * 32


async def _stored_count(url: str, code: str, deal: bool = False) -> int:
    """With ``deal``, store a new match of room ``code`` and its first round dealt as the fourth
    in a row with no person at the table (migrating to the head); then read its room back: its
    stored count."""
    async with Store(url) as store:
        if deal:
            match_id = await store.create_match(code, "domeng", {}, 5, 30.0, "h", _five())
            rules = make_rules("domeng", {}, 5)
            new_round = NewRound(0, SEED, commitment_of(SEED), deal_to_json(rules.deal_from_seed(SEED)))
            await store.save_room(match_id, 1, status="playing", new_round=new_round, unattended=4)
        row = await store.load_room(code)
        assert row is not None
        return row.match.unattended_rounds


def _five() -> list[SeatSpec]:
    """Five bots' seats."""
    return [SeatSpec("bot", bot_level="easy", seat=i) for i in range(5)]


def test_a_matchs_unattended_rounds_are_stored_and_migrate_down_and_up(database_url: str) -> None:  # noqa: F811
    assert asyncio.run(_stored_count(database_url, "unattended", deal=True)) == 4
    migrate(database_url, "0020")
    migrate(database_url, "head")
    assert asyncio.run(_stored_count(database_url, "unattended")) == 0
