"""The admin queries on a real store (SQLite, and PostgreSQL when DOMENG_TEST_POSTGRES_URL is set):
"abandoned" means closed, or unfinished and idle since the cutoff, and the list's filter and the
status it shows agree on it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from app.admin.queries import MatchFilter, list_matches, list_players
from app.store import SeatSpec, Store, sqlite_url
from engine.hashing import commitment_of
from engine.variants import make_rules
from tests.adminkit import POSTGRES_URL, scratch_postgres

SEATS = [SeatSpec("human", "Citra", token_hash="h"), *[SeatSpec("bot", bot_level="greedy")] * 4]


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield sqlite_url(tmp_path / "data")
        return
    if not POSTGRES_URL:
        pytest.skip("DOMENG_TEST_POSTGRES_URL is not set")
    with scratch_postgres() as url:
        yield url


async def _three_matches(store: Store) -> tuple[int, int, int]:
    """A waiting match, one in play (a round dealt), and one closed by an admin."""
    ids = []
    for code in ("waiting", "playing", "closed"):
        ids.append(await store.create_match(code, "domeng", {}, 5, 30.0, "host", SEATS))
    deal = make_rules("domeng").deal_from_seed("s")
    deal_json = {"hands": [[str(t) for t in h] for h in deal.hands], "rest": [str(t) for t in deal.rest]}
    for match_id in ids[1:]:
        await store.set_status(match_id, "playing", 1)
        await store.start_round(match_id, 0, "s", commitment_of("s"), deal_json, 2)
    await store.set_status(ids[2], "abandoned", 3)
    return ids[0], ids[1], ids[2]


def test_idle_unfinished_matches_count_as_abandoned_in_filter_and_status(database_url: str) -> None:
    async def body() -> None:
        async with Store(database_url) as store:
            waiting, playing, closed = await _three_matches(store)

            async def listed(
                cutoff: datetime, status: str | None = None
            ) -> dict[int, tuple[str, str | None]]:
                page = await list_matches(store, MatchFilter(status=status), cutoff, set())  # type: ignore[arg-type]
                return {m.id: (m.status, m.abandoned_reason) for m in page.items}

            past = datetime.now(UTC) - timedelta(hours=1)
            assert await listed(past) == {
                waiting: ("waiting", None),
                playing: ("playing", None),
                closed: ("abandoned", "closed"),
            }
            assert set(await listed(past, "abandoned")) == {closed}
            assert set(await listed(past, "playing")) == {playing}
            future = datetime.now(UTC) + timedelta(seconds=1)  # nothing stored since: all idle
            assert await listed(future) == {
                waiting: ("abandoned", "idle"),
                playing: ("abandoned", "idle"),
                closed: ("abandoned", "closed"),
            }
            assert set(await listed(future, "abandoned")) == {waiting, playing, closed}
            assert await listed(future, "waiting") == {} and await listed(future, "playing") == {}
            # one stored action makes a match active again (the cutoff from before the write, so
            # however long the write takes, the action comes after it)
            acted = datetime.now(UTC)
            await store.append_action(playing, 0, 0, 3, 0, {"seat": 0, "pass": True}, "server")
            later = await listed(acted - timedelta(milliseconds=500))
            assert later[playing] == ("playing", None)
            players = await list_players(store, "citra", 1, 10)
            assert [(p.display_name, p.matches, p.rounds) for p in players.items] == [("Citra", 3, 0)]

    asyncio.run(body())
