"""The match store (app/store/) on real databases: SQLite always, PostgreSQL when the environment
variable DOMENG_TEST_POSTGRES_URL names one (e.g. ``postgresql+asyncpg://postgres@127.0.0.1/db``).

Tests share a PostgreSQL database with each other and with parallel workers: each works on matches
with codes of its own and asserts nothing about the others. pytest-asyncio is not used: each test
runs its coroutine with ``asyncio.run``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC
from pathlib import Path
from typing import Any, TypeVar

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Text, cast, create_engine, event, inspect, select, text
from sqlalchemy.engine import Connection

from app.store import (
    MIGRATIONS_DIR,
    ConflictError,
    MatchRow,
    NotFoundError,
    RoundEnd,
    SeatSpec,
    Store,
    StoreClosedError,
    TallySpec,
    sqlite_url,
)
from app.store.batches import Op, run_ops
from app.store.db import make_engine
from app.store.group_commit import WriteQueue, checkpoint_loop, unreachable, write_loop
from app.store.models import Base, Match, MatchAction
from app.store.rows import SeatChange
from app.store.writer import now_utc
from engine.core import Deal, Phase, State
from engine.events import DomengOutcome, Passed, Settlement
from engine.hashing import commitment_of
from engine.record import read_record, round_report, write_record
from engine.variants import make_rules
from tests.clusterkit import TcpProxy

T = TypeVar("T")

POSTGRES_URL = os.environ.get("DOMENG_TEST_POSTGRES_URL")
RUN = uuid.uuid4().hex[:8]
"""This test process's part of every room code: on PostgreSQL it deletes its own matches after."""
REPO = Path(__file__).resolve().parents[1]
TABLES = {
    "matches",
    "match_turns",
    "seats",
    "rounds",
    "actions",
    "tallies",
    "chat",
    "hints",
    "deployment_keys",
    "admin_sessions",
}
FIVE_EMPTY = [SeatSpec()] * 5


@pytest.fixture(scope="module", autouse=True)
def _delete_postgres_matches() -> Iterator[None]:
    """Leave the shared PostgreSQL database as it was: delete this process's matches at the end
    (their rows in the other tables go with them)."""
    yield
    if not POSTGRES_URL:
        return

    async def delete() -> None:
        engine = make_engine(POSTGRES_URL)
        try:
            async with engine.begin() as connection:
                # nothing to delete when no test of this worker migrated the database yet
                if (await connection.execute(text("SELECT to_regclass('matches')"))).scalar() is not None:
                    await connection.execute(delete_matches, {"codes": f"t-{RUN}-%"})
        finally:
            await engine.dispose()

    delete_matches = text("DELETE FROM matches WHERE code LIKE :codes")
    asyncio.run(delete())


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh SQLite file in tmp_path, or the PostgreSQL database shared by every test."""
    if request.param == "sqlite":
        return sqlite_url(tmp_path / "data")
    if not POSTGRES_URL:
        pytest.skip("DOMENG_TEST_POSTGRES_URL is not set")
    return POSTGRES_URL


def with_store(url: str, body: Callable[[Store], Awaitable[T]]) -> T:
    """Run ``body`` with a started store on ``url`` in a new event loop; close it after."""

    async def main() -> T:
        async with Store(url) as store:
            return await body(store)

    return asyncio.run(main())


def new_code() -> str:
    """A room code no other test (or test run) uses."""
    return f"t-{RUN}-{uuid.uuid4().hex[:12]}"


async def new_match(store: Store, seats: list[SeatSpec] | None = None, **fields: Any) -> tuple[int, str]:
    """A Domeng match in the store; returns its id and code."""
    code = new_code()
    args: dict[str, Any] = {
        "code": code,
        "variant": "domeng",
        "options": {"camat_target": 1},
        "seat_count": 5,
        "turn_timer_s": 30.0,
        "host_token_hash": "host-hash",
        "seats": seats or FIVE_EMPTY,
    }
    return await store.create_match(**(args | fields)), code


async def new_round(store: Store, seats: int = 5) -> tuple[int, str]:
    """A match with round 0 dealt; returns its id and code."""
    match_id, code = await new_match(store)
    deal = make_rules("domeng").deal_from_seed("s")
    await store.start_round(match_id, 0, "s", commitment_of("s"), deal_json(deal), 1)
    return match_id, code


def deal_json(deal: Deal) -> dict[str, Any]:
    return {"hands": [[str(t) for t in hand] for hand in deal.hands], "rest": [str(t) for t in deal.rest]}


def a_pass(seat: int) -> dict[str, Any]:
    return {"seat": seat, "pass": True}


# -- migrations ------------------------------------------------------------------------------------


def _schema(connection: Connection) -> tuple[set[str], list[Any], str | None]:
    context = MigrationContext.configure(connection)
    tables = set(inspect(connection).get_table_names())
    return tables, compare_metadata(context, Base.metadata), context.get_current_revision()


def test_start_migrates_to_the_models_and_twice_is_harmless(database_url: str) -> None:
    head = ScriptDirectory(str(MIGRATIONS_DIR)).get_current_head()

    async def body(store: Store) -> tuple[set[str], list[Any], str | None]:
        async with store.engine.connect() as connection:
            return await connection.run_sync(_schema)

    for _ in range(2):
        tables, differences, revision = with_store(database_url, body)
        assert TABLES | {"alembic_version"} <= tables
        assert differences == []  # the migrations create exactly the models' tables
        assert revision == head == "0025"
    if database_url.startswith("sqlite"):
        assert tables == TABLES | {"alembic_version"}


def test_sqlite_connections_get_their_pragmas(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "nested" / "dir")

    async def body(store: Store) -> list[Any]:
        async with store.engine.connect() as connection:
            return [(await connection.exec_driver_sql(f"PRAGMA {p}")).scalar() for p in pragmas]

    pragmas = ("journal_mode", "synchronous", "foreign_keys", "busy_timeout", "wal_autocheckpoint")
    assert with_store(url, body) == ["wal", 1, 1, 5000, 0]  # synchronous 1 is NORMAL
    assert (tmp_path / "nested" / "dir" / "domeng.sqlite3").is_file()
    assert url == f"sqlite+aiosqlite:///{tmp_path.resolve()}/nested/dir/domeng.sqlite3"


def test_sqlite_checkpoints_happen_in_the_background_not_in_commits(tmp_path: Path) -> None:
    """Commits never checkpoint (wal_autocheckpoint=0), so the database file alone holds none of
    a batch until the background checkpointer copies the write-ahead log into it."""
    url = sqlite_url(tmp_path / "data")
    database = tmp_path / "data" / "domeng.sqlite3"

    def actions_in_file() -> int:  # the database file without its write-ahead log
        with sqlite3.connect(f"file:{database}?immutable=1", uri=True) as connection:
            return int(connection.execute("SELECT count(*) FROM actions").fetchone()[0])

    async def main() -> tuple[int, int, int]:
        async with Store(url, checkpoint_interval_s=3600) as store:  # its own checkpointer waits
            match_id, _ = await new_round(store)
            writes = (
                store.append_action(match_id, 0, seq, 10 + seq, seq % 5, a_pass(seq % 5), "bot")
                for seq in range(50)
            )
            await asyncio.gather(*writes)
            before = actions_in_file()
            checkpoints = checkpoint_loop(store.engine, 0.05, store._checkpointed)
            checkpointer = asyncio.create_task(checkpoints)
            deadline = time.monotonic() + 10
            while store.checkpoints == 0 and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            checkpointer.cancel()
            return before, store.checkpoints, actions_in_file()

    before, checkpoints, after = asyncio.run(main())
    assert before == 0 and checkpoints >= 1 and after == 50


def test_in_memory_sqlite_is_refused() -> None:
    with pytest.raises(ValueError, match="in-memory"):
        asyncio.run(Store("sqlite+aiosqlite:///:memory:").start())


# -- a match written and read back -------------------------------------------------------------------


def test_a_match_written_through_the_api_reads_back(database_url: str) -> None:
    seats = [
        SeatSpec("human", "Ana", token_hash="ana-hash"),
        SeatSpec("bot", bot_level="greedy"),
        SeatSpec(),
        SeatSpec("bot", "Robo", bot_level="random"),
        SeatSpec(seat=4),
    ]
    start = {"table": 20, "stones": [1, 1, 1, 1, 1], "camat": None, "leader": 2}

    async def body(store: Store) -> tuple[MatchRow | None, MatchRow | None, list[str], list[str]]:
        match_id, code = await new_match(store, seats, start=start)
        waiting = [m.code for m in await store.active_matches()]
        assert await store.claim_seat(match_id, 2, "Citra", "citra-hash", version=1)
        await store.update_seat(match_id, 4, name="Eko", kind="human", bot_level=None, token_hash="e")
        await store.set_status(match_id, "playing", 2)
        deal = make_rules("domeng").deal_from_seed("seed-0")
        await store.start_round(match_id, 0, "seed-0", commitment_of("seed-0"), deal_json(deal), 3)
        await store.append_action(match_id, 0, 0, 4, 2, {"seat": 2, "play": "3-6"}, "human")
        await store.append_action(match_id, 0, 1, 5, 3, {"seat": 3, "play": "6-6", "end": "R"}, "timer")
        tallies = [TallySpec(seat, received=seat, paid=1, stones=seat + 1) for seat in range(5)]
        await store.end_round(match_id, 0, {"end": "out", "winner": 3}, 10, tallies, 6)
        playing = await store.load_match(code)
        await store.set_status(match_id, "finished", 7)
        finished = [m.code for m in await store.active_matches()]
        return playing, await store.load_match(code), waiting, finished

    playing, row, waiting, finished = with_store(database_url, body)
    assert playing is not None and row is not None
    assert row.code in waiting and row.code not in finished
    assert (row.variant, row.options, row.seat_count, row.turn_timer_s) == (
        "domeng",
        {"camat_target": 1},
        5,
        30,
    )
    assert (row.status, row.version, row.start, row.host_token_hash) == ("finished", 7, start, "host-hash")
    assert playing.status == "playing" and playing.finished_at is None
    assert row.started_at is not None and row.finished_at is not None
    assert row.created_at <= row.started_at <= row.finished_at
    assert all(t.tzinfo is UTC for t in (row.created_at, row.started_at, row.finished_at))
    assert row.seat_names() == ["Ana", "Bot 2 (greedy)", "Citra", "Robo", "Eko"]
    assert [(s.kind, s.bot_level, s.token_hash) for s in row.seats] == [
        ("human", None, "ana-hash"),
        ("bot", "greedy", None),
        ("human", None, "citra-hash"),
        ("bot", "random", None),
        ("human", None, "e"),
    ]
    (stored,) = row.rounds
    assert (stored.index, stored.seed, stored.commitment) == (0, "seed-0", commitment_of("seed-0"))
    assert stored.deal["rest"] == [str(t) for t in make_rules("domeng").deal_from_seed("seed-0").rest]
    assert stored.is_finished and stored.outcome == {"end": "out", "winner": 3} and stored.table_after == 10
    assert [(a.seq, a.version, a.seat, a.actor) for a in stored.actions] == [
        (0, 4, 2, "human"),
        (1, 5, 3, "timer"),
    ]
    assert stored.actions[1].action == {"seat": 3, "play": "6-6", "end": "R"}
    assert [(t.seat, t.stones, t.received, t.paid, t.points) for t in stored.tallies] == [
        (seat, seat + 1, seat, 1, None) for seat in range(5)
    ]


def test_a_round_ends_with_its_last_action_or_not_at_all(database_url: str) -> None:
    """`Store.append_action` with a `RoundEnd`: the action, the round's end, its tallies and the
    match's finish are one transaction. When any part fails, none of it is stored."""
    tallies = [TallySpec(seat, received=seat, paid=1, stones=seat + 1) for seat in range(5)]
    outcome = {"end": "out", "winner": 3}

    async def body(store: Store) -> tuple[MatchRow | None, MatchRow | None]:
        match_id, code = await new_match(store, FIVE_EMPTY)
        await store.set_status(match_id, "playing", 1)
        for index, seed in enumerate(("seed-0", "seed-1")):
            deal = make_rules("domeng").deal_from_seed(seed)
            await store.start_round(match_id, index, seed, commitment_of(seed), deal_json(deal), 2 + index)
        await store.end_round(match_id, 0, outcome, 10, tallies, 4)  # round 0 has its tallies already
        with pytest.raises(ConflictError):
            await store.append_action(match_id, 0, 0, 5, 3, a_pass(3), "bot", RoundEnd(outcome, 10, tallies))
        before = await store.load_match(code)
        end = RoundEnd(outcome, 8, tallies, match_finished=True)
        await store.append_action(match_id, 1, 0, 6, 3, a_pass(3), "bot", round_end=end)
        return before, await store.load_match(code)

    before, after = with_store(database_url, body)
    assert before is not None and after is not None
    assert [len(r.actions) for r in before.rounds] == [0, 0]  # the refused action is not stored
    assert (before.status, before.version) == ("playing", 4)
    assert [len(r.actions) for r in after.rounds] == [0, 1]
    assert after.rounds[1].outcome == outcome and after.rounds[1].table_after == 8
    assert [(t.seat, t.stones) for t in after.rounds[1].tallies] == [(s, s + 1) for s in range(5)]
    assert (after.status, after.version) == ("finished", 6) and after.finished_at is not None


def test_end_round_can_finish_the_match_in_the_same_transaction(database_url: str) -> None:
    """Recovery's way to store a round whose end is missing (app.rooms.hub.store_finished_round)."""
    tallies = [TallySpec(seat, stones=0) for seat in range(5)]

    async def body(store: Store) -> MatchRow | None:
        match_id, code = await new_match(store, FIVE_EMPTY)
        await store.set_status(match_id, "playing", 1)
        deal = make_rules("domeng").deal_from_seed("seed-0")
        await store.start_round(match_id, 0, "seed-0", commitment_of("seed-0"), deal_json(deal), 2)
        await store.end_round(match_id, 0, {"end": "out"}, 25, tallies, 3, match_finished=True)
        return await store.load_match(code)

    row = with_store(database_url, body)
    assert row is not None and (row.status, row.version) == ("finished", 3) and row.finished_at is not None
    assert row.rounds[0].outcome == {"end": "out"} and len(row.rounds[0].tallies) == 5


def test_unknown_matches_and_bad_arguments(database_url: str) -> None:
    async def body(store: Store) -> None:
        assert await store.load_match(new_code()) is None
        with pytest.raises(NotFoundError):
            await store.export_record(new_code())
        with pytest.raises(NotFoundError):
            await store.set_status(2**31 - 1, "playing", 1)
        with pytest.raises(ConflictError):  # its round is not stored
            await store.append_action(2**31 - 1, 0, 0, 1, 0, a_pass(0), "bot")
        match_id, code = await new_match(store)
        with pytest.raises(ConflictError):
            await new_match(store, code=code)
        with pytest.raises(NotFoundError):
            await store.end_round(match_id, 0, {}, None, [], 2)
        with pytest.raises(NotFoundError):
            await store.update_seat(match_id, 5, name=None, kind="empty", bot_level=None, token_hash=None)
        for bad in (
            store.set_status(match_id, "paused", 1),
            store.append_action(match_id, 0, 0, 1, 0, a_pass(0), "ghost"),
            store.update_seat(match_id, 0, name=None, kind="bot", bot_level=None, token_hash=None),
            store.create_match(new_code(), "domeng", {}, 5, 30.0, "h", FIVE_EMPTY[:4]),
            store.start_round(match_id, 0, "s", "c", {"hands": []}, 1),
        ):
            with pytest.raises(ValueError):
                await bad

    with_store(database_url, body)


# -- a real game, exported and replayed --------------------------------------------------------------


def _tallies(state: State) -> list[TallySpec]:
    """Each seat's stones after the round just ended, and what it received and paid in it."""
    settlements: list[Settlement] = [e.settlement for e in state.log if type(e) is Passed and e.settlement]
    assert isinstance(state.outcome, DomengOutcome)
    settlements.append(state.outcome.settlement)
    received, paid = [0] * state.seats, [0] * state.seats
    for s in settlements:
        received[s.receiver] += s.received
        for payer, amount in s.from_payers:
            paid[payer] += amount
    stones = state.public_score()["stones"]
    return [TallySpec(i, received[i], paid[i], stones=stones[i]) for i in range(state.seats)]


async def _play_round(store: Store, match_id: int, state: State, index: int, version: int) -> int:
    """Deal round ``index`` from a seed, play it with random legal actions (storing each) to its
    end, store the end; returns the room version after it."""
    rng = random.Random(index)
    seed = f"{match_id}:{index}"
    deal = state.rules.deal_from_seed(seed)
    state.start_round(deal)
    version += 1
    await store.start_round(match_id, index, seed, commitment_of(seed), deal_json(deal), version)
    seq = 0
    while state.phase is Phase.PLAYING:
        action = rng.choice(state.legal_actions())
        state.apply(action)
        version += 1
        await store.append_action(match_id, index, seq, version, action.seat, action.to_json(), "bot")
        seq += 1
    assert isinstance(state.outcome, DomengOutcome)
    version += 1
    report = round_report(state.outcome)
    await store.end_round(match_id, index, report, state.outcome.table, _tallies(state), version)
    return version


def test_export_record_of_an_engine_game_replays_to_the_same_outcomes(database_url: str) -> None:
    start: dict[str, Any] = {"table": 22, "stones": [0, 3, 0, 0, 0], "camat": None, "leader": None}
    rules = make_rules("domeng", {"camat_target": 0})
    state = rules.new_match(start)
    seats = [SeatSpec("human", "Ana", token_hash="x"), SeatSpec("bot", bot_level="greedy"), SeatSpec()]
    seats += [SeatSpec("bot", "Dewi", bot_level="random"), SeatSpec("human", "Eko", token_hash="y")]
    names = ["Ana", "Bot 2 (greedy)", "Seat 3", "Dewi", "Eko"]

    async def body(store: Store) -> tuple[dict[str, Any], MatchRow | None]:
        match_id, code = await new_match(store, seats, options=rules.options(), start=start)
        await store.set_status(match_id, "playing", 1)
        version = 1
        for index in range(6):
            version = await _play_round(store, match_id, state, index, version)
        # a seventh round in play: exported as the unfinished last round
        deal = rules.deal_from_seed("live")
        state.start_round(deal)
        await store.start_round(match_id, 6, "live", commitment_of("live"), deal_json(deal), version + 1)
        for seq in range(3):
            action = state.legal_actions()[0]
            state.apply(action)
            await store.append_action(
                match_id, 6, seq, version + 2 + seq, action.seat, action.to_json(), "human"
            )
        return await store.export_record(match_id), await store.load_match(code)

    doc, row = with_store(database_url, body)
    assert row is not None
    doc = json.loads(json.dumps(doc))  # a plain JSON document
    assert doc["format"] == "domeng-record/1" and doc["seats"] == names and doc["start"] == start
    expected = write_record(state, names)
    for ours, theirs, stored in zip(doc["rounds"], expected["rounds"], row.rounds, strict=True):
        assert ours["seed"] == stored.seed and ours["commitment"] == commitment_of(stored.seed)
        assert {k: v for k, v in ours.items() if k not in ("seed", "commitment")} == theirs
    replay = read_record(doc)
    reports = replay.report()["rounds"]
    assert reports[:-1] == [r.outcome for r in row.rounds[:-1]]
    assert reports[:-1] == [round_report(log.outcome) for log in state.history]
    assert reports[-1] == round_report(None, state) and reports[-1]["end"] is None
    assert replay.state.public_score() == state.public_score()


# -- races, batches and failures ---------------------------------------------------------------------


def test_concurrent_claims_of_one_seat_seat_exactly_one_player(database_url: str) -> None:
    seats = [SeatSpec(), SeatSpec("bot", bot_level="greedy"), SeatSpec(), SeatSpec(), SeatSpec()]

    async def body(store: Store) -> tuple[list[bool], MatchRow | None, list[bool]]:
        match_id, code = await new_match(store, seats)
        claims = await asyncio.gather(*(store.claim_seat(match_id, 2, f"P{i}", f"h{i}") for i in range(10)))
        bot_seat = [
            await store.claim_seat(match_id, 1, "Budi", "b"),
            await store.claim_seat(match_id, 1, "Budi", "b", take_bot=True),
            await store.claim_seat(match_id, 1, "Cici", "c", take_bot=True),
            await store.claim_seat(match_id, 9, "Nobody", "n"),
        ]
        return claims, await store.load_match(code), bot_seat

    claims, row, bot_seat = with_store(database_url, body)
    assert claims.count(True) == 1 and row is not None
    winner = claims.index(True)
    assert (row.seats[2].name, row.seats[2].kind, row.seats[2].token_hash) == (
        f"P{winner}",
        "human",
        f"h{winner}",
    )
    assert bot_seat == [False, True, False, False]
    assert (row.seats[1].replaced, row.seats[2].replaced) == ("greedy", None)  # the bot it was taken from
    assert (row.seats[1].name, row.seats[1].bot_level) == ("Budi", None)


def test_group_commit_stores_200_concurrent_actions_in_order_in_few_transactions(database_url: str) -> None:
    async def body(store: Store) -> tuple[int, int, list[int], MatchRow | None]:
        match_id, code = await new_round(store)
        before, written = store.transactions_committed, store.writes_committed
        await asyncio.gather(
            *(
                store.append_action(match_id, 0, seq, 10 + seq, seq % 5, a_pass(seq % 5), "bot")
                for seq in range(200)
            )
        )
        transactions = store.transactions_committed - before
        async with store.engine.connect() as connection:
            query = select(MatchAction.seq).where(MatchAction.match_id == match_id).order_by(MatchAction.id)
            by_insertion = list((await connection.execute(query)).scalars())
        return transactions, store.writes_committed - written, by_insertion, await store.load_match(code)

    transactions, writes, by_insertion, row = with_store(database_url, body)
    assert writes == 200 and 1 <= transactions <= 5
    assert by_insertion == list(range(200))  # committed in the order they were called
    assert row is not None and row.version == 209
    assert [(a.seq, a.version, a.seat) for a in row.rounds[0].actions] == [
        (s, 10 + s, s % 5) for s in range(200)
    ]


def test_a_batch_of_moves_runs_one_insert_and_one_update_that_stamps_each_turn(tmp_path: Path) -> None:
    """The hot path of the load benchmark: a batch of action rows of two matches is one INSERT
    (executemany) and one UPDATE (executemany) setting each match's version and the start of its
    next turn on the database's clock (`MatchTurn.turn_at`, migration 0011), whatever the batch's
    size; no statement per move is added, and the UPDATE is of the narrow ``match_turns`` rows, not
    of the wide ``matches`` ones (migration 0025, issue 15)."""
    url = sqlite_url(tmp_path)

    async def made(store: Store) -> tuple[int, int]:
        return (await new_round(store))[0], (await new_round(store))[0]

    first, second = with_store(url, made)
    loop = asyncio.new_event_loop()
    rows = [
        {
            "match_id": match_id,
            "round_index": 0,
            "seq": seq,
            "version": 2 + seq,
            "seat": seq % 5,
            "action": a_pass(seq % 5),
            "actor": "bot",
            "created_at": now_utc(),
        }
        for match_id in (first, second)
        for seq in range(4)
    ]
    ops: list[Op[Any]] = [Op(loop.create_future(), row=row) for row in rows]
    engine = create_engine(f"sqlite:///{tmp_path / 'domeng.sqlite3'}")
    statements: list[tuple[str, bool]] = []

    def count(_conn: Any, _cursor: Any, statement: str, _params: Any, _context: Any, many: bool) -> None:
        statements.append((" ".join(statement.split(maxsplit=3)[:3]), many))

    try:
        with engine.begin() as connection:
            event.listen(engine, "before_cursor_execute", count)
            run_ops(connection, ops)
            event.remove(engine, "before_cursor_execute", count)
            stamped = connection.execute(
                select(Match.id, Match.version, Match.turn_at, text("julianday('now')"))
            ).all()
    finally:
        engine.dispose()
        loop.close()
    assert statements == [("INSERT INTO actions", True), ("UPDATE match_turns SET", True)]
    assert sorted((row.id, row.version) for row in stamped) == [(first, 5), (second, 5)]
    for row in stamped:
        now_s = (row[3] - 2440587.5) * 86400.0
        assert row.turn_at is not None and 0.0 <= now_s - row.turn_at < 60.0


def test_a_group_commit_window_lets_writes_called_after_the_first_share_its_transaction(
    database_url: str,
) -> None:
    """``batch_window_s`` (DOMENG_GROUP_COMMIT_S): under load (the last batch held more than one
    write) the writer takes the first write, waits, and commits everything queued meanwhile with
    it: one transaction for 20 writes that came while it waited (the window is long here, so the
    count does not depend on the machine's speed)."""

    async def main() -> tuple[int, int, MatchRow | None]:
        async with Store(database_url, batch_window_s=2.0) as store:
            match_id, code = await new_round(store)
            # two writes queued together: one batch of two, so the writer knows it is under load
            await asyncio.gather(
                store.claim_seat(match_id, 0, "Ana", "a"), store.claim_seat(match_id, 1, "Bo", "b")
            )
            before, written = store.transactions_committed, store.writes_committed
            first = asyncio.ensure_future(store.append_action(match_id, 0, 0, 10, 0, a_pass(0), "bot"))
            for _ in range(5):
                await asyncio.sleep(0)  # the writer takes the first write and starts waiting
            assert not first.done()
            rest = [
                store.append_action(match_id, 0, seq, 10 + seq, seq % 5, a_pass(seq % 5), "bot")
                for seq in range(1, 20)
            ]
            await asyncio.gather(first, *rest)
            return (
                store.transactions_committed - before,
                store.writes_committed - written,
                await store.load_match(code),
            )

    transactions, writes, row = asyncio.run(main())
    assert (writes, transactions) == (20, 1)
    assert row is not None and [a.seq for a in row.rounds[0].actions] == list(range(20))
    with pytest.raises(ValueError, match="batch_window_s"):
        Store(database_url, batch_window_s=-0.001)


def test_a_lone_write_on_a_quiet_store_does_not_wait_for_the_group_commit_window(
    database_url: str,
) -> None:
    """The window is paid only under load: a write that comes after single ones (a quiet table) is
    committed at once, however long the window (90 s here; the 30 s bound only keeps the old
    writer's failure short, it measures nothing)."""

    async def main() -> int:
        async with Store(database_url, batch_window_s=90.0) as store:
            match_id, _code = await new_round(store)
            before = store.transactions_committed
            for seq in range(3):
                await asyncio.wait_for(
                    store.append_action(match_id, 0, seq, 10 + seq, seq, a_pass(seq), "bot"), timeout=30
                )
            return store.transactions_committed - before

    assert asyncio.run(main()) == 3


def test_the_group_commit_window_ends_as_soon_as_its_batch_has_its_target_of_writes(
    database_url: str,
) -> None:
    """``batch_target`` (DOMENG_GROUP_COMMIT_WRITES): under load the writer waits for company only
    until that many writes are at hand. With a 90 s window and a target of 4, four writes called
    together are committed in one transaction without waiting out the window (the 30 s bound only
    keeps the old writer's failure short: it would have waited 90 s), and the next lone write too."""

    async def main() -> tuple[int, int, MatchRow | None]:
        async with Store(database_url, batch_window_s=90.0, batch_target=4) as store:
            match_id, code = await new_round(store)
            # two writes queued together: one batch of two, so the writer knows it is under load
            await asyncio.gather(
                store.claim_seat(match_id, 0, "Ana", "a"), store.claim_seat(match_id, 1, "Bo", "b")
            )
            before, written = store.transactions_committed, store.writes_committed
            four = [
                store.append_action(match_id, 0, seq, 10 + seq, seq % 5, a_pass(seq % 5), "bot")
                for seq in range(4)
            ]
            await asyncio.wait_for(asyncio.gather(*four), timeout=30)
            return (
                store.transactions_committed - before,
                store.writes_committed - written,
                await store.load_match(code),
            )

    transactions, writes, row = asyncio.run(main())
    assert (writes, transactions) == (4, 1)
    assert row is not None and [a.seq for a in row.rounds[0].actions] == list(range(4))
    with pytest.raises(ValueError, match="batch_target"):
        Store(database_url, batch_target=-1)


def test_closing_the_store_ends_the_group_commit_window_at_once(database_url: str) -> None:
    """A write the writer holds in its window (under load, waiting for its target of company) is
    committed as soon as the store closes, not after the window: the end marker ends the wait."""

    async def main() -> tuple[int, MatchRow | None]:
        store = Store(database_url, batch_window_s=90.0, batch_target=50)
        await store.start()
        match_id, code = await new_round(store)
        await asyncio.gather(
            store.claim_seat(match_id, 0, "Ana", "a"), store.claim_seat(match_id, 1, "Bo", "b")
        )
        held = asyncio.ensure_future(store.append_action(match_id, 0, 0, 10, 0, a_pass(0), "bot"))
        while not store._queue.empty():  # the writer took it and now waits for company
            await asyncio.sleep(0)
        await asyncio.wait_for(store.close(), timeout=30)
        await held
        async with Store(database_url) as again:
            return again.writes_committed, await again.load_match(code)

    _writes, row = asyncio.run(main())
    assert row is not None and [a.seq for a in row.rounds[0].actions] == [0]


async def _after_a_busy_batch(
    queue: WriteQueue, batch_target: int = 0
) -> tuple[asyncio.Task[None], list[int]]:
    """A `write_loop` on ``queue`` (10 writes a batch at most, a 90 s window, ``batch_target``)
    whose commits answer every write and record each batch's size, once it has committed a batch
    of two: it is under load, so its next batch waits for company. The loop's task and the sizes."""
    loop = asyncio.get_running_loop()
    committed: list[int] = []

    async def commit(batch: list[Op[Any]]) -> None:
        committed.append(len(batch))
        for op in batch:
            op.future.set_result(None)

    writer = asyncio.create_task(
        write_loop(queue, commit, batch_limit=10, batch_window_s=90.0, batch_target=batch_target)
    )
    two = [Op(loop.create_future()), Op(loop.create_future())]
    for op in two:
        queue.put_nowait(op)
    await asyncio.gather(*(op.future for op in two))  # a batch of two: under load
    return writer, committed


def test_a_write_the_writer_holds_in_its_window_fails_when_the_writer_is_cancelled() -> None:
    """A write the writer took and holds while it waits for company (the window, under load) is
    answered with `StoreClosedError` when the writer is cancelled then, like every write it has
    not committed: its caller does not wait for ever."""

    async def main() -> BaseException | None:
        loop = asyncio.get_running_loop()
        queue = WriteQueue()
        writer, committed = await _after_a_busy_batch(queue)
        held = Op[None](loop.create_future())
        queue.put_nowait(held)
        while not queue.empty():  # the writer took it and now waits for more
            await asyncio.sleep(0)
        writer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await writer
        assert committed == [2]
        return held.future.exception() if held.future.done() else None

    assert isinstance(asyncio.run(main()), StoreClosedError)


def test_under_load_a_batch_short_of_its_target_waits_for_more_even_with_writes_queued() -> None:
    """Under load (the last batch held more than one write, and at least half its target), a
    batch whose first write finds a few others queued, fewer than the target, still waits (up to
    the window) for the target: the writes queued while a busy loop ran are not committed alone,
    so a busy server commits fewer, larger transactions (issue 15: a transaction's cost is mostly
    fixed)."""

    async def main() -> list[int]:
        loop = asyncio.get_running_loop()
        queue = WriteQueue()
        writer, committed = await _after_a_busy_batch(queue, batch_target=4)
        first = [Op[None](loop.create_future()) for _ in range(3)]
        for op in first:  # queued at once, as a busy loop queues them: fewer than the target
            queue.put_nowait(op)
        while queue.qsize() == 3:  # the writer takes the first, then waits for one more
            await asyncio.sleep(0)
        for _ in range(5):
            await asyncio.sleep(0)
        assert not any(op.future.done() for op in first)  # waiting, not committed as they were
        last = Op[None](loop.create_future())
        queue.put_nowait(last)
        await asyncio.gather(*(op.future for op in [*first, last]))
        queue.put_nowait(None)
        await writer
        return committed

    assert asyncio.run(main()) == [2, 4]


def test_after_a_small_batch_the_writes_queued_are_committed_at_once() -> None:
    """After a batch of two, far from its target of 16 (a few rooms playing), writes queued
    behind the next one are committed with it at once, without waiting for company: the window
    would add its length to their moves for little gain."""

    async def main() -> list[int]:
        loop = asyncio.get_running_loop()
        queue = WriteQueue()
        writer, committed = await _after_a_busy_batch(queue, batch_target=16)
        three = [Op[None](loop.create_future()) for _ in range(3)]
        for op in three:
            queue.put_nowait(op)
        await asyncio.wait_for(asyncio.gather(*(op.future for op in three)), timeout=30)
        queue.put_nowait(None)
        await writer
        return committed

    assert asyncio.run(main()) == [2, 3]


def test_json_columns_hold_compact_json_with_string_keys(database_url: str) -> None:
    """A JSON column's text is orjson's compact JSON (`app.store.db.json_text`: the writer
    serialises an action per move, issue 15), keys that are not strings written as the standard
    library writes them, text that is not ASCII kept as it is; it reads back as the value."""
    action = {"seat": 2, "play": "3-6", "end": "R"}
    deal = {"hands": [["0-0"]], "rest": [], "names": {0: "Dewi é"}}

    async def body(store: Store) -> tuple[list[str], MatchRow | None]:
        match_id, code = await new_match(store)
        await store.start_round(match_id, 0, "s", commitment_of("s"), deal, 1)
        await store.append_action(match_id, 0, 0, 2, 2, action, "human")
        engine = make_engine(database_url)
        try:
            async with engine.connect() as connection:
                texts = [
                    await connection.scalar(
                        select(cast(MatchAction.action, Text)).where(MatchAction.match_id == match_id)
                    ),
                    await connection.scalar(
                        text("SELECT CAST(deal AS TEXT) FROM rounds WHERE match_id = :m"), {"m": match_id}
                    ),
                ]
        finally:
            await engine.dispose()
        return texts, await store.load_match(code)

    (stored_action, stored_deal), row = with_store(database_url, body)
    assert stored_action == '{"seat":2,"play":"3-6","end":"R"}'
    assert stored_deal == '{"hands":[["0-0"]],"rest":[],"names":{"0":"Dewi é"}}'
    assert row is not None and row.rounds[0].actions[0].action == action


def test_a_failing_write_fails_only_its_caller(database_url: str) -> None:
    async def body(store: Store) -> tuple[list[object], MatchRow | None, int, int]:
        match_id, code = await new_round(store)
        await store.append_action(match_id, 0, 3, 2, 3, a_pass(3), "bot")
        retried, committed = store.batches_retried, store.transactions_committed
        writes: list[Awaitable[object]] = [
            store.append_action(match_id, 0, seq, 10 + seq, 0, a_pass(0), "bot") for seq in (0, 1, 2, 3, 4, 5)
        ]
        writes.insert(4, store.set_status(2**31 - 2, "playing", 1))
        writes.append(store.claim_seat(match_id, 0, "Ana", "a"))
        results = await asyncio.gather(*writes, return_exceptions=True)
        transactions = store.transactions_committed - committed
        return results, await store.load_match(code), store.batches_retried - retried, transactions

    results, row, retried, transactions = with_store(database_url, body)
    assert [type(r).__name__ for r in results] == [
        "NoneType", "NoneType", "NoneType", "ConflictError", "NotFoundError", "NoneType", "NoneType", "bool"
    ]  # fmt: skip
    assert results[-1] is True
    assert retried == 1 and transactions == 6  # one batch failed; its 8 writes retried one by one
    assert row is not None and row.seats[0].name == "Ana"
    assert [(a.seq, a.version) for a in row.rounds[0].actions] == [
        (0, 10),
        (1, 11),
        (2, 12),
        (3, 2),
        (4, 14),
        (5, 15),
    ]
    assert row.version == 15


def test_a_silent_postgres_fails_a_batch_at_the_timeout_at_once_and_the_next_write_is_stored() -> None:
    """A partition (issue 15): PostgreSQL's connection stays open and nothing comes back. The
    writes waiting in one batch fail together once the statement times out (``database_timeout_s``),
    none retried one by one; when the bytes flow again, the next write is stored."""
    if not POSTGRES_URL:
        pytest.skip("DOMENG_TEST_POSTGRES_URL is not set")

    async def main() -> tuple[list[object], int, int, MatchRow | None]:
        proxy = await TcpProxy(POSTGRES_URL).start()
        try:
            async with asyncio.timeout(120), Store(proxy.url, database_timeout_s=1.0, migrate=False) as store:
                match_id, code = await new_round(store)
                retried, committed = store.batches_retried, store.transactions_committed
                await proxy.stall()
                writes = [
                    store.append_action(match_id, 0, seq, 2 + seq, 0, a_pass(0), "bot") for seq in range(4)
                ]
                results = await asyncio.gather(*writes, return_exceptions=True)
                await proxy.flow()
                await store.append_action(match_id, 0, 0, 2, 0, a_pass(0), "bot")
                stored = store.transactions_committed - committed
                return results, store.batches_retried - retried, stored, await store.load_match(code)
        finally:
            await proxy.cut()

    results, retried, stored, row = asyncio.run(main())
    assert [type(r).__name__ for r in results] == ["StoreError"] * 4, results
    assert all(unreachable(r) for r in results if isinstance(r, BaseException))
    assert (retried, stored) == (0, 1)
    assert row is not None and [(a.seq, a.version) for a in row.rounds[0].actions] == [(0, 2)]


def test_a_write_after_postgres_dropped_the_pooled_connection_is_stored_once_on_a_new_one() -> None:
    """The writer's pooled connection is not pinged before each batch (three round trips of five
    more): when PostgreSQL has dropped it meanwhile (a restart), the batch fails before its COMMIT
    and runs once more on a new connection: the move is stored once, and its caller never sees
    the dead connection."""
    if not POSTGRES_URL:
        pytest.skip("DOMENG_TEST_POSTGRES_URL is not set")

    async def main() -> tuple[int, int, MatchRow | None]:
        proxy = await TcpProxy(POSTGRES_URL).start()
        try:
            async with asyncio.timeout(120), Store(proxy.url, migrate=False) as store:
                match_id, code = await new_round(store)
                await store.append_action(match_id, 0, 0, 2, 0, a_pass(0), "bot")
                await proxy.cut()  # every open connection dropped, as by a restarted server
                await proxy.mend()
                await store.append_action(match_id, 0, 1, 3, 1, a_pass(1), "bot")
                return store.stale_connections, store.batches_retried, await store.load_match(code)
        finally:
            await proxy.cut()

    stale, retried, row = asyncio.run(main())
    assert (stale, retried) == (1, 0)
    assert row is not None and [(a.seq, a.version) for a in row.rounds[0].actions] == [(0, 2), (1, 3)]


def test_close_commits_every_queued_write_then_refuses_more(database_url: str) -> None:
    async def main() -> tuple[MatchRow | None, int]:
        store = Store(database_url)
        await store.start()
        match_id, code = await new_round(store)
        tasks = [
            asyncio.create_task(store.append_action(match_id, 0, seq, 2 + seq, 0, a_pass(0), "bot"))
            for seq in range(50)
        ]
        await asyncio.sleep(0)  # every task has queued its write
        assert await store.ping()
        await store.close()
        assert all(t.done() and t.exception() is None for t in tasks)
        assert not await store.ping()
        with pytest.raises(StoreClosedError):
            await store.append_action(match_id, 0, 50, 60, 0, a_pass(0), "bot")
        async with Store(database_url) as reopened:
            return await reopened.load_match(code), store.transactions_committed

    row, _ = asyncio.run(main())
    assert row is not None and len(row.rounds[0].actions) == 50


# -- durability --------------------------------------------------------------------------------------

WRITER = """
import asyncio, sys
from app.store import SeatSpec, Store
from engine.hashing import commitment_of

async def main(url, code):
    store = Store(url)
    await store.start()
    match_id = await store.create_match(code, "domeng", {}, 5, 30.0, "h", [SeatSpec()] * 5)
    await store.start_round(match_id, 0, "s", commitment_of("s"), {"hands": [], "rest": []}, 1)
    print("ready", flush=True)

    async def write(seq):
        await store.append_action(match_id, 0, seq, seq + 2, seq % 5, {"seat": seq % 5, "pass": True}, "bot")
        print("ack", seq, flush=True)

    seq = 0
    while True:
        await asyncio.gather(*(write(seq + k) for k in range(7)))
        seq += 7

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def test_every_acknowledged_write_survives_sigkill(database_url: str) -> None:
    code = new_code()
    env = os.environ | {"PYTHONPATH": str(REPO)}
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, database_url, code],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    acked: set[int] = set()
    deadline = time.monotonic() + 60
    try:
        assert child.stdout is not None
        for line in child.stdout:
            if line.startswith("ack"):
                acked.add(int(line.split()[1]))
            if len(acked) >= 150 or time.monotonic() > deadline:
                break
    finally:
        child.send_signal(signal.SIGKILL)  # right after an acknowledged write, mid-batch
        out, err = child.communicate(timeout=30)
    assert child.returncode == -signal.SIGKILL, err
    acked |= {
        int(line.split()[1]) for line in out.splitlines() if line.startswith("ack ") and line[4:].isdigit()
    }
    assert len(acked) >= 150, err

    row = with_store(database_url, lambda store: store.load_match(code))
    assert row is not None
    stored = {a.seq for a in row.rounds[0].actions}
    assert acked <= stored
    assert stored == set(range(len(stored)))  # whole batches: no gaps


def test_ping_answers_while_the_database_does(database_url: str) -> None:
    async def body(store: Store) -> tuple[bool, str]:
        return await store.ping(), store.dialect

    ok, dialect = with_store(database_url, body)
    assert ok and dialect in ("sqlite", "postgresql") and dialect in database_url


def test_readers_see_one_snapshot_while_the_writer_writes(database_url: str) -> None:
    async def body(store: Store) -> list[MatchRow | None]:
        match_id, code = await new_round(store)
        writes = [store.append_action(match_id, 0, seq, 2 + seq, 0, a_pass(0), "bot") for seq in range(300)]
        reads = [store.load_match(code) for _ in range(20)]
        results = await asyncio.gather(*writes, *reads)
        return list(results[300:])

    for row in with_store(database_url, body):
        assert row is not None
        (stored,) = row.rounds
        assert row.version == (stored.actions[-1].version if stored.actions else 1)


def test_export_record_without_rounds(database_url: str) -> None:
    async def body(store: Store) -> dict[str, Any]:
        match_id, code = await new_match(store)
        await store.update_seat(match_id, 0, name=None, kind="bot", bot_level="random", token_hash=None)
        return await store.export_record(code)

    doc = with_store(database_url, body)
    assert doc == {
        "format": "domeng-record/1",
        "variant": "domeng",
        "options": {"camat_target": 1},
        "seats": ["Bot 1 (random)", "Seat 2", "Seat 3", "Seat 4", "Seat 5"],
        "rounds": [],
    }
    assert read_record(doc).report() == {"rounds": [], "match_over": False}


def test_sql_of_the_store_is_plain(database_url: str) -> None:
    """The tables are usable from a SQL console: counting a match's actions needs no quoting."""

    async def body(store: Store) -> int:
        match_id, _ = await new_round(store)
        await store.append_action(match_id, 0, 0, 2, 0, a_pass(0), "server")
        async with store.engine.connect() as connection:
            query = text("SELECT count(*) FROM actions WHERE match_id = :m AND actor = 'server'")
            return int((await connection.execute(query, {"m": match_id})).scalar_one())

    assert with_store(database_url, body) == 1


def test_a_seat_change_is_stored_with_its_version_in_one_transaction(database_url: str) -> None:
    """A claim or a bot swap (`Store.save_room` with seats) stores the seats and the room's new
    version together, or nothing: a change that fails halfway (its second seat does not exist)
    leaves the first seat and the version as they were (issue 13)."""

    async def body(store: Store) -> tuple[MatchRow | None, MatchRow | None]:
        match_id, code = await new_match(store)
        claim = SeatChange(0, SeatSpec("human", name="Ana", token_hash="a"))
        await store.save_room(match_id, 1, seats=[claim])
        saved = await store.load_match(code)
        swap = [SeatChange(0, SeatSpec("bot", bot_level="greedy")), SeatChange(9, SeatSpec())]
        with pytest.raises(NotFoundError):
            await store.save_room(match_id, 2, seats=swap)
        return saved, await store.load_match(code)

    saved, after = with_store(database_url, body)
    assert saved is not None and after is not None
    assert (saved.version, saved.seats[0].kind, saved.seats[0].name) == (1, "human", "Ana")
    assert (after.version, after.seats[0].kind, after.seats[0].name) == (1, "human", "Ana")


def test_a_chat_line_is_numbered_in_its_room_not_by_every_rooms_lines(database_url: str) -> None:
    """Two fresh rooms' first lines are both line 1 (the database's counter of every room's lines
    would tell anyone how much chat the server holds); Play again's match numbers on from the
    room's earlier lines; every read gives a line the number it was stored with."""

    async def body(store: Store) -> None:
        first, code = await new_match(store)
        other, _ = await new_match(store)
        said = [
            await store.add_chat(first, 0, "Ana", text="hi"),
            await store.add_chat(other, 1, "Budi", text="yo"),
        ]
        said.append(await store.add_chat(first, None, "", reaction="nice", watcher="3fa9c1d2"))
        assert [line.id for line in said] == [1, 1, 2]
        again, _ = await new_match(store, code=code, room_match=2, version=3)
        said.append(await store.add_chat(again, 2, "Citra", text="again", room_match=2))
        assert said[-1].id == 3
        _, room = await store.load_room_chat(again)
        assert [(line.id, line.room_match, line.text) for line in room] == [
            (1, 1, "hi"),
            (2, 1, None),
            (3, 2, "again"),
        ]
        _, last = await store.load_room_chat(again, last=2)
        assert [line.id for line in last] == [2, 3]
        _, own = await store.load_chat(again)  # the admin's lines of one match: the room's numbers
        assert [(line.id, line.text) for line in own] == [(3, "again")]
        _, earlier = await store.load_chat(first)
        assert [line.id for line in earlier] == [1, 2]
        assert [line.to_json()["id"] for line in earlier] == [1, 2]

    with_store(database_url, body)
