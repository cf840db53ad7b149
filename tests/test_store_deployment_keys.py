"""Migration 0018: each deployment gets its own ``bot_share`` key (`app.store.Store.deployment_key`),
which keys the hash of a room creator's address that ``matches.bot_share`` keeps
(`app.rooms.making.share_of`), so the stored value does not give the address back to whoever
hashes every IPv4 address; the unkeyed values stored before it are cleared. On SQLite and
PostgreSQL (a new scratch database, since the test migrates down and up again)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app.rooms.making import share_of
from app.store import NotFoundError, Store, sqlite_url
from engine.hashing import sha256_hex
from tests.adminkit import migrate
from tests.test_store_cover_check import SEATS, database_url  # noqa: F401  (a fixture)


async def _key(url: str) -> str:
    async with Store(url) as store:
        return await store.deployment_key("bot_share")


async def _share(url: str, code: str) -> str | None:
    async with Store(url) as store:
        row = await store.load_room(code)
        assert row is not None
        return row.match.bot_share


def test_each_deployment_has_its_own_share_key_and_the_unkeyed_shares_are_cleared(
    database_url: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    key = asyncio.run(_key(database_url))
    assert len(key) == 64 and int(key, 16) >= 0  # 256 bits, hex
    assert asyncio.run(_key(database_url)) == key  # read, not made again, on every start
    other = tmp_path / "other"
    other.mkdir()
    assert asyncio.run(_key(sqlite_url(other))) != key  # another deployment: another key
    assert share_of("203.0.113.7", key) != sha256_hex("bot-share:203.0.113.7")[:16]

    async def store_unkeyed() -> None:  # a share stored unkeyed, as 0016 and 0017 stored it
        async with Store(database_url) as store:
            unkeyed = sha256_hex("bot-share:203.0.113.7")[:16]
            await store.create_match("unkeyed", "domeng", {}, 2, 30.0, "h", SEATS, bot_share=unkeyed)

    asyncio.run(store_unkeyed())
    migrate(database_url, "0017")
    migrate(database_url, "head")
    assert asyncio.run(_share(database_url, "unkeyed")) is None
    assert asyncio.run(_key(database_url)) != key  # down and up again: a new key


def test_a_missing_deployment_key_is_refused_clearly(tmp_path: Path) -> None:
    async def main() -> None:
        async with Store(sqlite_url(tmp_path)) as store:
            with pytest.raises(NotFoundError, match="no deployment key 'nothing'"):
                await store.deployment_key("nothing")

    asyncio.run(main())
