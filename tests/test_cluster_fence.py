"""The store's fence (docs/cluster.md) on real databases: SQLite always, PostgreSQL when
DOMENG_TEST_POSTGRES_URL is set. A write carrying a fencing token older than its match's is
refused and stores nothing; a refused write does not fail the others of its group commit."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
from sqlalchemy import select, text
from sqlalchemy.exc import DBAPIError

from app.store import FencedOutError, NotFoundError, Store
from app.store.db import application_name, make_engine
from app.store.models import Match
from app.store.rows import SeatChange, SeatSpec
from app.store.stalled import PATIENCE_S, end_stalled_blockers
from engine.hashing import commitment_of
from engine.variants import make_rules
from tests.test_store import (
    FIVE_EMPTY,
    POSTGRES_URL,
    _delete_postgres_matches,
    database_url,
    deal_json,
    new_code,
    with_store,
)

__all__ = ["_delete_postgres_matches", "database_url"]  # the fixtures, shared with test_store


async def fenced_match(store: Store, token: int, code: str | None = None) -> tuple[int, str]:
    """A Domeng match created under ``token``, with round 0 dealt and one action; id and code."""
    code = code or new_code()
    owner = store.fenced(token)
    match_id = await owner.create_match(code, "domeng", {"camat_target": 1}, 5, 30.0, "host-hash", FIVE_EMPTY)
    deal = make_rules("domeng").deal_from_seed("s")
    await owner.start_round(match_id, 0, "s", commitment_of("s"), deal_json(deal), 1)
    await owner.append_action(match_id, 0, 0, 2, 0, {"seat": 0, "pass": True}, "human")
    return match_id, code


BOT = SeatSpec(kind="bot", bot_level="greedy")


def pass_of(seat: int) -> dict[str, Any]:
    return {"seat": seat, "pass": True}


def test_a_write_with_an_older_token_is_refused_and_stores_nothing(database_url: str) -> None:
    async def body(store: Store) -> None:
        match_id, code = await fenced_match(store, token=1)
        await store.claim_room(code, 2)  # a new owner took the room
        stale = store.fenced(1)
        refused = [
            stale.append_action(match_id, 0, 1, 3, 1, pass_of(1), "human"),
            stale.save_room(match_id, 3, seats=[SeatChange(0, BOT)]),
            stale.set_status(match_id, "playing", 3),
            stale.add_chat(match_id, 0, "Ana", text="still here?"),
            stale.set_chat_rules(match_id, {"spectators": True, "muted": []}),
            stale.add_hint(match_id, 0, 1, 1, {"seat": 1, "pass": True}),
            stale.abandon(match_id, "idle"),
        ]
        for write in refused:
            with pytest.raises(FencedOutError) as caught:
                await write
            assert (caught.value.token, caught.value.stored) == (1, 2)
        stored = await store.load_match(code)
        assert stored is not None
        assert (stored.version, stored.status) == (2, "waiting")
        assert [a.seq for a in stored.rounds[0].actions] == [0]
        assert stored.seats[0].kind == "empty"
        assert (await store.load_chat(match_id)) == (None, [])
        assert await store.load_hints(match_id) == []
        # the new owner's writes, and the old token's never again
        await store.fenced(2).append_action(match_id, 0, 1, 3, 1, pass_of(1), "human")
        with pytest.raises(FencedOutError):
            await stale.append_action(match_id, 0, 2, 4, 2, pass_of(2), "human")
        stored = await store.load_match(code)
        assert stored is not None and stored.version == 3
        assert [a.seq for a in stored.rounds[0].actions] == [0, 1]

    with_store(database_url, body)


def test_one_refused_write_does_not_fail_the_others_of_its_transaction(database_url: str) -> None:
    async def body(store: Store) -> None:
        stale_id, stale_code = await fenced_match(store, token=1)
        good_id, good_code = await fenced_match(store, token=1)
        await store.claim_room(stale_code, 2)
        store.batch_window_s = 0.05  # the writes below share one transaction
        before = (store.transactions_committed, store.batches_retried)
        owner = store.fenced(1)
        results = await asyncio.gather(
            owner.append_action(good_id, 0, 1, 3, 1, pass_of(1), "bot"),
            owner.append_action(stale_id, 0, 1, 3, 1, pass_of(1), "bot"),
            owner.append_action(good_id, 0, 2, 4, 2, pass_of(2), "bot"),
            owner.add_chat(stale_id, None, "Budi", reaction="wave"),
            owner.add_chat(good_id, None, "Budi", reaction="wave"),
            return_exceptions=True,
        )
        assert [type(r).__name__ for r in results] == [
            "NoneType",
            "FencedOutError",
            "NoneType",
            "FencedOutError",
            "ChatRow",
        ]
        assert (store.transactions_committed - before[0], store.batches_retried - before[1]) == (1, 0)
        good = await store.load_match(good_code)
        stale = await store.load_match(stale_code)
        assert good is not None and stale is not None
        assert (good.version, [a.seq for a in good.rounds[0].actions]) == (4, [0, 1, 2])
        assert (stale.version, [a.seq for a in stale.rounds[0].actions]) == (2, [0])

    with_store(database_url, body)


def test_a_claim_raises_every_match_of_the_room_and_refuses_a_lower_token(database_url: str) -> None:
    async def body(store: Store) -> None:
        first, code = await fenced_match(store, token=3)
        await store.claim_room(code, 3)  # the same token passes
        with pytest.raises(FencedOutError) as caught:
            await store.claim_room(code, 2)
        assert caught.value.stored == 3
        await store.claim_room(new_code(), 1)  # a room with no match passes
        # Play again under a stale token is refused; under the owner's, the next match holds it
        with pytest.raises(FencedOutError):
            await store.fenced(2).create_match(code, "domeng", {}, 5, 30.0, "h", FIVE_EMPTY, room_match=2)
        second = await store.fenced(4).create_match(
            code, "domeng", {}, 5, 30.0, "h", FIVE_EMPTY, room_match=2
        )
        with pytest.raises(FencedOutError):
            await store.fenced(3).set_status(first, "abandoned", 2)
        with pytest.raises(FencedOutError):
            await store.fenced(3).set_chat_rules(second, {"spectators": True, "muted": []})
        await store.fenced(4).set_chat_rules(second, {"spectators": True, "muted": []})
        with pytest.raises(NotFoundError):
            await store.fenced(1).set_status(10**9, "playing", 1)

    with_store(database_url, body)


def test_writes_without_a_token_are_not_checked(database_url: str) -> None:
    """One process (no Redis): no write carries a token, and none is refused."""

    async def body(store: Store) -> None:
        match_id, code = await fenced_match(store, token=5)
        await store.append_action(match_id, 0, 1, 3, 1, pass_of(1), "human")
        stored = await store.load_match(code)
        assert stored is not None and stored.version == 3

    with_store(database_url, body)


def test_a_claim_in_the_same_transaction_fences_out_the_writes_after_it(database_url: str) -> None:
    """The batch read its matches' fences first; a claim among its writes makes them stale."""

    async def body(store: Store) -> None:
        match_id, code = await fenced_match(store, token=1)
        store.batch_window_s = 0.05  # the three writes share one transaction
        before = store.transactions_committed
        owner = store.fenced(1)
        results = await asyncio.gather(
            owner.append_action(match_id, 0, 1, 3, 1, pass_of(1), "bot"),
            store.claim_room(code, 2),
            owner.append_action(match_id, 0, 2, 4, 2, pass_of(2), "bot"),
            return_exceptions=True,
        )
        assert [type(r).__name__ for r in results] == ["NoneType", "NoneType", "FencedOutError"]
        assert store.transactions_committed - before == 1
        stored = await store.load_match(code)
        assert stored is not None
        assert (stored.version, [a.seq for a in stored.rounds[0].actions]) == (3, [0, 1])

    with_store(database_url, body)


def test_a_fenced_view_is_the_same_store_and_tells_its_first_refusal(database_url: str) -> None:
    """`Store.fenced`: an object of the store's class sharing its writer, reads and counters; only
    its token is its own. The first refused write calls ``on_fenced``, once."""

    async def body(store: Store) -> None:
        calls: list[int] = []
        match_id, code = await fenced_match(store, token=1)
        view = store.fenced(1, on_fenced=lambda: calls.append(1))
        assert type(view) is Store and (view.fence, store.fence) == (1, None)
        before = store.transactions_committed
        await view.append_action(match_id, 0, 1, 3, 1, pass_of(1), "human")
        assert store.transactions_committed == before + 1 == view.transactions_committed
        assert (await view.load_match(code)) == (await store.load_match(code))
        await store.claim_room(code, 2)
        for seq in (2, 3):
            with pytest.raises(FencedOutError):
                await view.append_action(match_id, 0, seq, seq + 2, seq % 5, pass_of(seq % 5), "human")
        assert calls == [1]
        await store.append_action(match_id, 0, 2, 4, 2, pass_of(2), "human")  # the store is not fenced
        assert calls == [1] and store.fence is None

    with_store(database_url, body)


def test_a_claim_is_not_held_up_by_the_row_lock_of_an_owner_paused_mid_transaction() -> None:
    """An owner paused (SIGSTOP) inside a write transaction holds its match's row locked; the next
    owner's claim waits on that lock. Every session of the writer ends after its database timeout
    idle in a transaction (`make_engine`), so PostgreSQL rolls the paused one back and the claim
    goes through well before its own timeout; the paused owner's transaction is gone when it wakes."""
    if not POSTGRES_URL:
        pytest.skip("DOMENG_TEST_POSTGRES_URL is not set")

    async def main() -> tuple[int | None, str]:
        async with asyncio.timeout(120), Store(POSTGRES_URL, database_timeout_s=30.0) as store:
            match_id, code = await fenced_match(store, token=1)
            paused = make_engine(POSTGRES_URL, timeout_s=1.0)  # the old owner's writer
            try:
                async with paused.connect() as connection:
                    transaction = await connection.begin()
                    await connection.execute(
                        select(Match.fence).where(Match.id == match_id).with_for_update()
                    )  # as `lock_fences` does, then the process stops here
                    await store.claim_room(code, 2)  # waits for the lock, well under 30 s
                    try:
                        await transaction.commit()
                    except DBAPIError as ended:  # the session was ended under it
                        woke = type(ended.orig).__name__
                    else:
                        woke = "committed"
            finally:
                await paused.dispose()
            reader = make_engine(POSTGRES_URL)
            try:
                async with reader.connect() as connection:
                    fence = (
                        await connection.execute(select(Match.fence).where(Match.id == match_id))
                    ).scalar()
            finally:
                await reader.dispose()
            return fence, woke

    fence, woke = asyncio.run(main())
    assert fence == 2
    assert woke != "committed"


STALLED_SERVER = "domeng serve pid 4194304 on a-stopped-host"
"""The ``application_name`` of a former owner's session in the tests below (another server's)."""
BLOCKING_SERVER = "domeng serve pid 4194305 on a-blocking-host"
"""The stalled server of `test_only_another_servers_stalled_session_that_blocks_ours_is_ended`: a
name of its own, since its test finds its stalled session by name (`_STALLED_FOR`); sharing
`STALLED_SERVER` with a test running beside it on another worker, it once found that test's
session, open long enough, before its own was, and saw nothing ended."""


async def _lock_and_stall(connection: Any, match_id: int) -> asyncio.Task[Any]:
    """In ``connection`` (a former owner's), lock the match's row as `lock_fences` does and leave
    the session *active* with the transaction open, as asyncpg's pipelined ``executemany`` paused
    before its Sync leaves it: no ``idle_in_transaction_session_timeout`` applies. Returns the
    task of the statement that keeps it active."""
    await connection.begin()
    await connection.execute(select(Match.fence).where(Match.id == match_id).with_for_update())
    return asyncio.create_task(connection.execute(text("SELECT pg_sleep(600)")))


async def _until(engine: Any, sql: str, **values: Any) -> None:
    """Poll ``sql`` (one boolean) on ``engine`` until it is true, within 60 s."""
    async with asyncio.timeout(60):
        while True:
            async with engine.connect() as connection:
                if (await connection.execute(text(sql), values)).scalar():
                    return
            await asyncio.sleep(0.05)


_CLAIM_WAITS = (
    "SELECT count(*) > 0 FROM pg_stat_activity WHERE application_name = :ours AND wait_event_type = 'Lock'"
)
_CANCEL = text("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = :name")
_STALLED_FOR = (
    "SELECT count(*) > 0 FROM pg_stat_activity WHERE application_name = :name "
    "AND clock_timestamp() - xact_start > make_interval(secs => :seconds)"
)


def test_a_claim_ends_a_stopped_owners_session_that_holds_its_row_active() -> None:
    """A former owner stopped mid-pipeline holds the row with its session *active*; the claim does
    not wait until its own timeout: the stalled session is ended and the claim goes through
    (`app.store.stalled`). Before it, the claim failed after its database timeout, every time."""
    if not POSTGRES_URL:
        pytest.skip("DOMENG_TEST_POSTGRES_URL is not set")

    async def main() -> tuple[int | None, str]:
        async with asyncio.timeout(120), Store(POSTGRES_URL, database_timeout_s=30.0) as store:
            match_id, code = await fenced_match(store, token=1)
            named = {"server_settings": {"application_name": STALLED_SERVER}}
            stopped = make_engine(POSTGRES_URL, connect_args=named)
            try:
                async with stopped.connect() as connection:
                    stalled = await _lock_and_stall(connection, match_id)
                    await store.claim_room(code, 2)
                    try:
                        await stalled
                    except DBAPIError as ended:
                        woke = type(ended.orig).__name__
                    else:
                        woke = "slept"
            finally:
                await stopped.dispose()
            async with store.engine.connect() as connection:
                fence = (await connection.execute(select(Match.fence).where(Match.id == match_id))).scalar()
            return fence, woke

    fence, woke = asyncio.run(main())
    assert fence == 2
    assert woke != "slept"


@pytest.mark.parametrize(
    ("name", "ended"),
    [(BLOCKING_SERVER, 1), ("psql", 0), ("domeng migrate pid 4194304 on a-stopped-host", 0)],
)
def test_only_another_servers_stalled_session_that_blocks_ours_is_ended(name: str, ended: int) -> None:
    """`end_stalled_blockers` ends a blocker only when it is another ``domeng serve`` process's
    (an operator's session or a migration is waited for) and only when it blocks this process."""
    if not POSTGRES_URL:
        pytest.skip("DOMENG_TEST_POSTGRES_URL is not set")

    async def main() -> tuple[int, int, int]:
        async with asyncio.timeout(120), Store(POSTGRES_URL, database_timeout_s=60.0) as store:
            match_id, _ = await fenced_match(store, token=1)
            other = make_engine(POSTGRES_URL, connect_args={"server_settings": {"application_name": name}})
            try:
                async with other.connect() as connection:
                    stalled = await _lock_and_stall(connection, match_id)
                    await _until(store.engine, _STALLED_FOR, name=name, seconds=PATIENCE_S)
                    # it blocks nobody of ours yet: nothing is ended
                    before = await end_stalled_blockers(store.engine)
                    # a write of the new owner's waits on the row (not a claim: no watchdog here)
                    write = store.fenced(2).append_action(match_id, 0, 1, 3, 1, pass_of(1), "human")
                    waiting = asyncio.create_task(write)
                    await _until(store.engine, _CLAIM_WAITS, ours=application_name())
                    during = await end_stalled_blockers(store.engine)
                    if not during:  # its statement cancelled, its transaction rolled back
                        async with store.engine.connect() as own:
                            await own.execute(_CANCEL, {"name": name})
                            await own.rollback()
                    with contextlib.suppress(DBAPIError):
                        await stalled
                    if not during:
                        await connection.rollback()
                    await waiting
            finally:
                await other.dispose()
            async with store.engine.connect() as connection:
                fence = (await connection.execute(select(Match.fence).where(Match.id == match_id))).scalar()
            return before, during, int(fence or 0)

    before, during, fence = asyncio.run(main())
    assert (before, during, fence) == (0, ended, 2)


def test_a_turn_is_timed_on_the_databases_clock_and_a_handoff_mark_lasts_one_owner(database_url: str) -> None:
    """Each move stamps when the next turn began on the database's own clock, which `load_room`
    reads with the row (`RoomRow.read_at`, `turn_at`): no server process's clock enters a turn's
    age. An owner handing the room over stores the time its turn had used, marked as handed: the
    next owner reads the mark; an owner after that one (the next one crashed, storing nothing)
    does not, nor does anyone after a move."""

    async def body(store: Store) -> None:
        match_id, code = await fenced_match(store, token=1)  # its last write a move
        row = await store.load_room(code)
        assert row is not None and row.read_at is not None and row.turn_at is not None
        assert 0.0 <= row.read_at - row.turn_at < 5.0 and not row.handed
        await store.fenced(1).stamp_turn(match_id, 20.0, handed=True)  # its owner hands it over
        for token, handed in ((2, True), (3, False)):  # 2 took it, then crashed; 3 took it
            await store.claim_room(code, token)
            row = await store.load_room(code)
            assert row is not None and row.read_at is not None and row.turn_at is not None
            assert 20.0 <= row.read_at - row.turn_at < 25.0 and row.handed is handed
            # when it was handed over, 20 s into the turn (the next owner's read counts no later)
            assert (row.handed_at is not None) is handed
            assert row.handed_at is None or abs(row.handed_at - row.turn_at - 20.0) < 0.5
        await store.fenced(3).stamp_turn(match_id, 5.0, handed=True)
        await store.fenced(3).append_action(match_id, 0, 1, 3, 1, pass_of(1), "human")  # a move after all
        await store.claim_room(code, 4)
        row = await store.load_room(code)
        assert row is not None and row.read_at is not None and row.turn_at is not None
        assert 0.0 <= row.read_at - row.turn_at < 5.0 and not row.handed and row.handed_at is None

    with_store(database_url, body)
