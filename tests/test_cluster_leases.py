"""Rooms' ownership leases in a real Redis (DOMENG_TEST_REDIS_URL) with the store's fence on a real
database (docs/cluster.md): two stores on one PostgreSQL database with two lease holders, and hubs
whose Redis goes away (through `tests.clusterkit.TcpProxy`). Skipped without Redis (and the
two-store test without PostgreSQL)."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update

from app.cluster import RedisLease, RedisLeases
from app.edge.handoff import HANDOFF, Handoff
from app.metrics import Metrics
from app.rooms import host
from app.rooms.config import RoomConfig
from app.rooms.errors import RoomError
from app.rooms.hub import Hub
from app.rooms.local import LocalBots
from app.rooms.room import Room
from app.rooms.timing import RESUMED_TURN_MIN_S
from app.store import FencedOutError, Store, sqlite_url
from app.store.models import MatchTurn
from tests.clusterkit import TcpProxy, key_prefix, need_postgres, need_redis, wait_for, wait_until
from tests.roomkit import CONFIG, FakeClock, FakeOutbox, my_move, of_room
from tests.test_cluster_fence import fenced_match, pass_of
from tests.test_store import FIVE_EMPTY, _delete_postgres_matches, new_code

__all__ = ["_delete_postgres_matches"]  # the fixture, shared with test_store

LEASE_S = 3.0  # long enough that a loaded machine (two CPU hogs beside) renews in time
"""A short lease: a holder that stops renewing loses it within this (seconds)."""


def never_lost(lease: RedisLease) -> None:
    raise AssertionError(f"lease of {lease.code} lost")


@asynccontextmanager
async def leases(url: str, prefix: str, renew: bool = True) -> AsyncIterator[RedisLeases]:
    """Leases on ``url``; with ``renew`` their renewal task runs (without it, a lease taken is
    never renewed: the holder looks paused)."""
    held = RedisLeases(url, LEASE_S, prefix=prefix)
    if renew:
        await held.start()
    try:
        yield held
    finally:
        await held.close()


def test_a_held_lease_is_not_taken_and_its_old_holder_is_fenced_out_after_it_expires() -> None:
    redis_url, postgres_url = need_redis(), need_postgres()
    prefix = key_prefix()

    async def main() -> None:
        async with (
            Store(postgres_url) as store_a,
            Store(postgres_url) as store_b,
            leases(redis_url, prefix, renew=False) as first,  # paused: its lease is never renewed
            leases(redis_url, prefix) as second,
        ):
            code = new_code()
            lease_a = await first.acquire(code, lambda lease: None)
            assert lease_a is not None
            match_id, _ = await fenced_match(store_a, lease_a.token, code)
            assert await second.acquire(code, never_lost) is None  # held: not taken
            lease_b = await wait_for(lambda: second.acquire(code, never_lost), timeout=LEASE_S * 20)
            assert isinstance(lease_b, RedisLease) and lease_b.token > lease_a.token
            await store_b.claim_room(code, lease_b.token)
            # the first holder, back from its pause, writes with its old token: refused, nothing stored
            with pytest.raises(FencedOutError):
                await store_a.fenced(lease_a.token).append_action(match_id, 0, 1, 3, 1, pass_of(1), "human")
            await store_b.fenced(lease_b.token).append_action(match_id, 0, 1, 3, 1, pass_of(1), "human")
            await store_b.fenced(lease_b.token).append_action(match_id, 0, 2, 4, 2, pass_of(2), "human")
            stored = await store_a.load_match(code)
            assert stored is not None and stored.version == 4
            assert [(a.seq, a.version) for a in stored.rounds[0].actions] == [(0, 2), (1, 3), (2, 4)]
            # released, the lease is free at once, with a higher token again
            await second.release(lease_b)
            lease_c = await second.acquire(code, never_lost)
            assert lease_c is not None and lease_c.token > lease_b.token

    asyncio.run(main())


def test_a_renewed_lease_outlives_its_length_and_only_its_holder_releases_it() -> None:
    redis_url = need_redis()
    prefix = key_prefix()

    async def main() -> None:
        async with leases(redis_url, prefix) as mine, leases(redis_url, prefix) as other:
            code = new_code()
            lease = await mine.acquire(code, never_lost)
            assert lease is not None
            renewals = mine.renewals
            await wait_until(lambda: mine.renewals >= renewals + 6, timeout=LEASE_S * 20)  # 2 lease lengths
            assert await other.acquire(code, never_lost) is None
            other.held[code] = RedisLease(code, lease.token + 1, other.holder, float("inf"), never_lost)
            await other.release(other.held[code])  # not its value: the compare-and-set keeps it
            assert await other.acquire(code, never_lost) is None
            assert mine.held == {code: lease}

    asyncio.run(main())


@asynccontextmanager
async def hub_on(database_url: str, leases_: RedisLeases, config: RoomConfig = CONFIG) -> AsyncIterator[Hub]:
    async with Store(database_url) as store:
        hub = Hub(config, store, Metrics(), clock=FakeClock(), bots=LocalBots(), leases=leases_)
        await hub.recover()  # starts the leases
        try:
            yield hub
        finally:
            await hub.stop()


def test_a_hub_whose_redis_is_gone_unloads_its_room_and_another_takes_it(tmp_path: Path) -> None:
    redis_url = need_redis()
    prefix = key_prefix()
    database = sqlite_url(tmp_path)

    async def main() -> None:
        proxy = await TcpProxy(redis_url).start()
        first = RedisLeases(proxy.url, LEASE_S, prefix=prefix)
        second = RedisLeases(redis_url, LEASE_S, prefix=prefix)
        async with hub_on(database, first) as hub_a, hub_on(database, second) as hub_b:
            room, _ = await hub_a.create_room("domeng", {}, 5, 0, ["greedy"] * 5)
            watcher = FakeOutbox()
            await room.connect(watcher, None)
            with pytest.raises(RoomError) as elsewhere:
                await hub_b.open(room.code)
            assert (elsewhere.value.code, elsewhere.value.status) == ("room_elsewhere", 503)
            await proxy.cut()  # Redis gone for the first hub: its lease cannot be renewed
            await wait_until(lambda: watcher.closed, timeout=LEASE_S * 20)
            assert watcher.closed_for == "room_moved"
            assert room.code not in hub_a.rooms and room.retired
            moved = await wait_for(lambda: _open_or_none(hub_b, room.code), timeout=LEASE_S * 20)
            assert moved is not None and moved.version == room.version
            assert hub_b.fence_of(room.code) == (hub_a_token := room.store.fence) + 1  # type: ignore[attr-defined]
            with pytest.raises(RoomError) as unreachable:
                await hub_a.open(room.code)
            assert unreachable.value.code == "room_unavailable"
            await proxy.mend()
            # the first hub's next Redis connection may still fail on a loaded machine (a
            # transient room_unavailable, as while it was cut); once Redis answers it, the room
            # is held elsewhere
            held = await wait_for(lambda: _refusal_once_reachable(hub_a, room.code), timeout=LEASE_S * 20)
            assert held == "room_elsewhere"
            assert hub_a_token < (hub_b.fence_of(room.code) or 0)
        await proxy.cut()

    asyncio.run(main())


def test_a_room_taken_over_counts_for_the_address_that_created_it(tmp_path: Path) -> None:
    """A room created on one process and loaded on another after the first is gone (killed, or
    stopped) counts in its creator's open rooms there, and the per-address cap applies to its
    loading (docs/architecture.md): the creator is kept with the room's lease (`Leases.creator`)."""
    redis_url = need_redis()
    prefix = key_prefix()
    database = sqlite_url(tmp_path)
    config = dataclasses.replace(CONFIG, max_rooms_per_address=1)
    maker, other = "203.0.113.7", "198.51.100.2"

    async def main() -> None:
        async with hub_on(database, RedisLeases(redis_url, LEASE_S, prefix=prefix), config) as hub_b:
            async with hub_on(database, RedisLeases(redis_url, LEASE_S, prefix=prefix), config) as hub_a:
                first, _ = await hub_a.create_room("domeng", {}, 5, 0, None, owner=maker)
                second, _ = await hub_a.create_room("domeng", {}, 5, 0, None, owner=maker)
                third, _ = await hub_a.create_room("domeng", {}, 5, 0, None, owner=other)
                finished, _ = await hub_a.create_room("domeng", {}, 5, 0, None, owner=maker)
                await hub_a.store.set_status(finished.match_id, "finished", finished.version)
                abandoned, _ = await hub_a.create_room("domeng", {}, 5, 0, None, owner=maker)
                await hub_a.store.abandon(abandoned.match_id, "idle")
            # the first process is gone, its leases free: the second takes its rooms as their links open
            taken = await hub_b.open(first.code)
            assert taken is not None and taken.status == "waiting"
            assert hub_b.open_rooms_of(maker) == 1 and hub_b.owners[first.code] == maker
            assert taken.bot_share == first.bot_share != first.code  # its bots count for its creator
            with pytest.raises(RoomError) as capped:
                await hub_b.open(second.code)  # its creator has 1 open room here already
            assert (capped.value.code, capped.value.status) == ("too_many_open_rooms", 429)
            assert await hub_b.open(third.code) is not None
            assert hub_b.open_rooms_of(other) == 1
            # whatever its creator holds, a finished room is shown and an abandoned one is gone
            shown = await hub_b.open(finished.code)
            assert shown is not None and shown.status == "finished"
            assert shown.bot_share == finished.bot_share  # its bots (Play again) still count for it
            assert await hub_b.open(abandoned.code) is None

    asyncio.run(main())


def test_a_process_forgets_the_creators_of_rooms_it_no_longer_holds(tmp_path: Path) -> None:
    """With leases a hub keeps a room's creator only while the room is in its memory (the lease
    service keeps it otherwise): a room unloaded here and then finished (or abandoned) on another
    process leaves no entry behind here, and one unloaded and opened here again still counts for
    its creator."""
    redis_url = need_redis()
    prefix = key_prefix()
    database = sqlite_url(tmp_path)
    config = dataclasses.replace(CONFIG, max_rooms_per_address=1)
    maker = "203.0.113.9"

    async def idle(hub: Hub) -> None:
        assert isinstance(hub.clock, FakeClock)
        hub.clock.now += 10.0

    async def main() -> None:
        async with (
            hub_on(database, RedisLeases(redis_url, LEASE_S, prefix=prefix), config) as hub_a,
            hub_on(database, RedisLeases(redis_url, LEASE_S, prefix=prefix), config) as hub_b,
        ):
            room, _ = await hub_a.create_room("domeng", {}, 5, 0, None, owner=maker)
            await idle(hub_a)
            assert await hub_a.unload(room)
            assert hub_a.owners == {}
            taken = await hub_b.open(room.code)  # the other process takes it: its creator from Redis
            assert taken is not None and hub_b.owners == {room.code: maker}
            await hub_b.store.set_status(taken.match_id, "finished", taken.version)
            taken.status = "finished"
            await idle(hub_b)
            assert await hub_b.unload(taken)
            assert (hub_a.owners, hub_b.owners) == ({}, {})
            again, _ = await hub_a.create_room("domeng", {}, 5, 0, None, owner=maker)
            await idle(hub_a)
            assert await hub_a.unload(again) and hub_a.owners == {}
            reopened = await hub_a.open(again.code)
            assert reopened is not None and hub_a.owners == {again.code: maker}
            assert hub_a.open_rooms_of(maker) == 1

    asyncio.run(main())


def test_a_long_match_on_one_process_still_counts_for_its_creator_after_a_failover(tmp_path: Path) -> None:
    """The creator noted in Redis lives two abandonment periods; a match held on one process for
    longer than that (never moving, so nobody read the note) keeps it, since each renewal of the
    room's lease extends it: after its process is gone, the room counts for its creator on the
    process that takes it."""
    redis_url = need_redis()
    prefix = key_prefix()
    database = sqlite_url(tmp_path)
    config = dataclasses.replace(CONFIG, max_rooms_per_address=1, abandon_after_s=LEASE_S / 2)
    maker = "203.0.113.11"

    async def main() -> None:
        first = RedisLeases(redis_url, LEASE_S, prefix=prefix)
        async with hub_on(database, RedisLeases(redis_url, LEASE_S, prefix=prefix), config) as hub_b:
            async with hub_on(database, first, config) as hub_a:
                room, _ = await hub_a.create_room("domeng", {}, 5, 0, None, owner=maker)
                noted = time.monotonic()
                ttl_s = 2 * config.abandon_after_s  # the note's own life: one lease length
                renewals = first.renewals
                # held past the note's life (several renewals later; the room never moved)
                await wait_until(
                    lambda: first.renewals >= renewals + 5 and time.monotonic() > noted + 1.5 * ttl_s,
                    timeout=LEASE_S * 30,
                )
                assert room.code in hub_a.rooms and first.held.keys() == {room.code}
            taken = await hub_b.open(room.code)  # its process is gone: another takes the room
            assert taken is not None and hub_b.owners == {room.code: maker}
            assert hub_b.open_rooms_of(maker) == 1

    asyncio.run(main())


def test_without_redis_a_code_that_names_no_room_is_still_no_room(tmp_path: Path) -> None:
    """Looking up a room's creator needs Redis, but only for a room the store holds unfinished: a
    code of no room (or of an abandoned one) is answered "no room", not "try again"."""
    database = sqlite_url(tmp_path)

    async def main() -> None:
        proxy = await TcpProxy(need_redis()).start()
        async with hub_on(database, RedisLeases(proxy.url, LEASE_S, prefix=key_prefix())) as hub:
            await proxy.cut()
            assert await hub.open(new_code()) is None

    asyncio.run(main())


async def _refusal_once_reachable(hub: Hub, code: str) -> str | None:
    """The code of ``hub``'s refusal to open room ``code``, or None (look again) while it says the
    leases cannot be reached. A room it opens fails the test."""
    try:
        await hub.open(code)
    except RoomError as error:
        return None if error.code == "room_unavailable" else error.code
    raise AssertionError(f"{code} opened on a hub whose lease was taken")


async def _open_or_none(hub: Hub, code: str) -> object:
    try:
        return await hub.open(code)
    except RoomError as error:
        assert error.code == "room_elsewhere"
        return None


def test_redis_gone_for_less_than_a_lease_changes_nothing(tmp_path: Path) -> None:
    """Degrading well: renewals fail for a moment, the room keeps playing on its owner."""
    redis_url = need_redis()
    prefix = key_prefix()

    async def main() -> None:
        proxy = await TcpProxy(redis_url).start()
        # a long lease, renewed by hand below (the background renewer runs too)
        held = RedisLeases(proxy.url, 30.0, prefix=prefix)
        async with hub_on(sqlite_url(tmp_path), held) as hub:
            room, _ = await hub.create_room("domeng", {}, 5, 0, ["greedy"] * 5)
            watcher = FakeOutbox()
            await room.connect(watcher, None)
            renewals = held.renewals
            await proxy.cut()
            await held.renew()  # fails: Redis unreachable
            assert held.renewals == renewals and room.code in held.held
            await proxy.mend()
            await held.renew()
            assert held.renewals == renewals + 1
            assert hub.rooms.get(room.code) is room and not watcher.closed
        await proxy.cut()

    asyncio.run(main())


def test_a_write_refused_by_the_fence_unloads_the_room_at_once(tmp_path: Path) -> None:
    """Another process claimed the room (its lease expired unseen, say): the old owner's next
    write is refused and stores nothing, its caller is told the room is elsewhere, and the hub
    drops the room without waiting for renewal."""
    redis_url = need_redis()

    async def main() -> None:
        async with hub_on(sqlite_url(tmp_path), RedisLeases(redis_url, 30.0, prefix=key_prefix())) as hub:
            room, _ = await hub.create_room("domeng", {}, 5, 0, [None, *["greedy"] * 4])
            watcher = FakeOutbox()
            await room.connect(watcher, None)
            token = hub.fence_of(room.code)
            assert token is not None
            await hub.store.claim_room(room.code, token + 1)  # the new owner's claim
            with pytest.raises(RoomError) as refused:  # the caller makes it on the new owner (HTTP: 503)
                await room.call(lambda r: host.claim(r, 0, "Ana"))
            assert (refused.value.code, refused.value.status) == ("room_elsewhere", 503)
            assert watcher.closed_for == "room_moved"
            assert room.code not in hub.rooms and hub.fence_of(room.code) is None
            stored = await hub.store.load_match(room.code)
            assert stored is not None and stored.seats[0].kind == "empty"

    asyncio.run(main())


def test_a_store_ahead_of_redis_counters_gets_a_token_above_its_own(tmp_path: Path) -> None:
    """Redis lost its data (restarted without persistence): its counters start again below the
    tokens the store holds, and the hub takes a token above the stored one instead of being
    fenced out of the room for good."""
    redis_url = need_redis()

    async def main() -> None:
        async with hub_on(sqlite_url(tmp_path), RedisLeases(redis_url, 30.0, prefix=key_prefix())) as hub:
            code = new_code()
            await hub.store.fenced(100).create_match(code, "domeng", {}, 5, 30.0, "h", FIVE_EMPTY)
            room = await hub.open(code)
            assert room is not None and hub.fence_of(code) == 101
            await room.call(lambda r: host.claim(r, 0, "Ana"))  # its writes pass the fence
            stored = await hub.store.load_match(code)
            assert stored is not None and stored.seats[0].name == "Ana"

    asyncio.run(main())


class _Peers:
    """The other processes as `app.edge.handoff.Asker` sees them: here one, answered in-process
    (the Redis asks themselves are tested in tests/test_cluster_shared.py)."""

    def __init__(self, other: Handoff) -> None:
        self.other = other
        self.asked: list[dict[str, Any]] = []

    async def ask(self, kind: str, body: dict[str, Any], timeout_s: float = 3.0) -> dict[str, Any]:
        assert kind == HANDOFF
        self.asked.append(body)
        return {"other": await self.other.answer(body)}


def test_a_room_is_handed_over_only_while_its_owner_has_no_socket_of_its_own(tmp_path: Path) -> None:
    """Two hubs on one store and one Redis (docs/cluster.md, "Handoff"). While the owner has a
    socket of its own in the room it keeps it (the asker gets ``room_elsewhere`` and would relay);
    once that socket is gone it hands the room over: its other connections are told
    ``room_moved``, its lease is released, and the asker holds the room at the stored version with
    a higher fencing token, its seats and its creator's address kept."""
    redis_url = need_redis()
    prefix = key_prefix()
    database = sqlite_url(tmp_path)

    async def main() -> None:
        async with (
            hub_on(database, RedisLeases(redis_url, 30.0, prefix=prefix)) as owner,
            hub_on(database, RedisLeases(redis_url, 30.0, prefix=prefix)) as other,
        ):
            here, there = Handoff(owner, None), Handoff(other, None)
            there.asker = peers = _Peers(here)
            room, _ = await owner.create_room("domeng", {}, 5, 0, [None, *["greedy"] * 4], owner="10.0.0.7")
            await room.call(lambda r: host.claim(r, 0, "Ana"))
            relayed = FakeOutbox()  # a relayed connection: the owner's edge does not count it
            await room.connect(relayed, None)
            fence = owner.fence_of(room.code)
            assert fence is not None

            here.arrived(room.code)  # a socket of the owner's own is in the room
            with pytest.raises(RoomError) as kept:
                await there.open(room.code)
            assert kept.value.code == "room_elsewhere" and peers.asked == [{"code": room.code}]
            assert owner.get(room.code) is room and not relayed.closed

            here.left(room.code)  # that socket closed: the room may go
            taken = await there.open(room.code)
            assert taken is not None and taken is not room
            assert relayed.closed_for == "room_moved"
            assert owner.get(room.code) is None and owner.fence_of(room.code) is None
            new_fence = other.fence_of(room.code)
            assert new_fence is not None and new_fence > fence
            assert taken.version == room.version and taken.seats[0].name == "Ana"
            assert other.open_rooms_of("10.0.0.7") == 1  # the creator's open rooms count it here now
            assert await here.answer({"code": room.code}) is None  # not held there any more

    asyncio.run(main())


async def _anas_turn_nearly_gone(hub: Hub, timer_s: float) -> tuple[Room, str, FakeOutbox]:
    """A no-limit Domeng room on ``hub``: Ana (seat 0, connected) against four bots, started and
    played by the bots until her turn, its timer of ``timer_s`` armed, then run to 3 s before its
    end on ``hub``'s fake clock. The room, her seat token and her outbox."""
    clock = hub.clock
    assert isinstance(clock, FakeClock)
    room, host_token = await hub.create_room(
        "domeng", {"camat_target": 0}, 5, timer_s, [None, *["greedy"] * 4]
    )
    token = await room.call(lambda r: host.claim(r, 0, "Ana"))
    ana = FakeOutbox()  # where another process takes the room, relayed: its owner's edge does not count it
    await room.connect(ana, token)

    async def start(r: Room) -> None:
        host.check_host(r, host_token)
        await host.begin_match(r)

    await room.call(start)
    for _ in range(400):  # the bots play until Ana has a tile to choose, her timer armed
        if my_move(ana.last_state) is not None and room.turn_deadline is not None:
            break
        await clock.advance(room, CONFIG.bot_delay_s)
    assert room.turn_deadline is not None
    await clock.advance(room, timer_s - 3.0, bots=False)  # 27 s of her 30 gone
    return room, token, ana


@pytest.mark.parametrize("how", ["handoff", "shutdown"])
def test_a_turn_handed_over_keeps_its_deadline_and_waits_only_for_a_player_not_back(
    tmp_path: Path, how: str
) -> None:
    """An orderly handoff (docs/cluster.md, "Handoff"; or the owner's clean shutdown, whose rooms
    another process takes at once) with 3 s left of Ana's turn: the new owner
    keeps those 3 s, so the deadline her page was told stands (after a crash it would get
    `RESUMED_TURN_MIN_S`). Her page is not back when they run out (still reconnecting): the turn
    waits for her until `RESUMED_TURN_MIN_S` after the room was taken, then runs out; back in
    time, she is timed as ever. (The new owner gave a whole turn, 30 s, timed from the move.)"""
    redis_url = need_redis()
    prefix = key_prefix()
    database = sqlite_url(tmp_path)
    timer_s = 30.0

    async def main() -> None:
        async with (
            hub_on(database, RedisLeases(redis_url, 30.0, prefix=prefix)) as owner,
            hub_on(database, RedisLeases(redis_url, 30.0, prefix=prefix)) as other,
        ):
            here, there = Handoff(owner, None), Handoff(other, None)
            there.asker = _Peers(here)
            later = other.clock
            assert isinstance(later, FakeClock)
            room, token, ana = await _anas_turn_nearly_gone(owner, timer_s)
            version = room.version

            if how == "handoff":
                taken = await there.open(room.code)  # the owner hands the room over
                assert ana.closed_for == "room_moved"
            else:
                await owner.stop()  # its sockets were closed by the server's shutdown before
                taken = await other.open(room.code)
            assert taken is not None
            assert taken.version == version and taken.turn_deadline is not None
            # it stands (the moment the room had no server counts for nobody: 3 s, on any machine)
            assert later.time() + 2.5 < taken.turn_deadline <= later.time() + 3.0
            await later.advance(taken, 3.5, bots=False)  # ran out while her page was away: held
            assert taken.version == version and taken.turn_deadline is not None
            floor = RESUMED_TURN_MIN_S
            assert later.time() - 3.5 + floor - 1.0 < taken.turn_deadline <= later.time() - 3.5 + floor
            ana = FakeOutbox()
            await taken.connect(ana, token)  # back: she sees the deadline it waits for
            assert ana.last_state["room"]["turn"]["deadline_ms"] == int(taken.turn_deadline * 1000)
            await later.advance(taken, floor - 3.5 - 1.0, bots=False)
            assert taken.version == version  # hers still
            await later.advance(taken, 1.0 + 2 * CONFIG.bot_delay_s)
            assert taken.version > version  # then it ran out: a bot stood in
            row = await other.store.load_match(taken.code)
            assert row is not None
            made = [a for r in row.rounds for a in r.actions if a.version == version + 1]
            assert [(a.seat, a.actor) for a in made] == [(0, "timer")]

    asyncio.run(main())


@pytest.mark.parametrize("handed_at", ["stored", "unknown", "stale"])
def test_the_time_no_server_had_a_handed_room_does_not_count_in_its_turn(
    tmp_path: Path, handed_at: str
) -> None:
    """Every process stops cleanly (a restart of them all) with 3 s left of Ana's turn, and the
    room is opened again 20 s later on the database's clock, by her page reconnecting: nobody
    could act meanwhile, so her turn keeps the 3 s it had when its server handed it over (the time
    the room had no server is nobody's), with her page told the deadline. Handed over by a server
    that did not store when (``unknown``: revision 0011; ``stale``: an earlier handoff's time left
    by such a server, before the turn began), the turn, past its deadline, keeps
    `RESUMED_TURN_MIN_S` as after a crash (a stale time gave a whole new turn). (Her deadline had
    passed while no server had the room: the turn was taken the moment she was back.)"""
    redis_url = need_redis()
    prefix = key_prefix()
    database = sqlite_url(tmp_path)
    timer_s = 30.0

    async def main() -> None:
        async with hub_on(database, RedisLeases(redis_url, 30.0, prefix=prefix)) as owner:
            room, token, ana = await _anas_turn_nearly_gone(owner, timer_s)
            version = room.version
            await owner.stop()  # a clean shutdown: it stores the 27 s, marked as handed over
            async with owner.store.engine.begin() as connection:  # 20 s pass on the database's clock
                ago = {"turn_at": MatchTurn.turn_at - 20.0, "handed_at": MatchTurn.handed_at - 20.0}
                if handed_at != "stored":
                    ago["handed_at"] = None if handed_at == "unknown" else MatchTurn.turn_at - 100.0
                await connection.execute(update(MatchTurn).where(of_room(room.code)).values(ago))

        async with hub_on(database, RedisLeases(redis_url, 30.0, prefix=prefix)) as restarted:
            later = restarted.clock
            assert isinstance(later, FakeClock)
            taken = await restarted.open(room.code)  # her page, reconnecting, opens it
            assert taken is not None
            ana = FakeOutbox()
            await taken.connect(ana, token)
            await later.advance(taken, 0.0, bots=False)
            assert taken.version == version  # hers still
            deadline = taken.turn_deadline
            assert deadline is not None
            left_s = 3.0 if handed_at == "stored" else RESUMED_TURN_MIN_S
            assert later.time() + left_s - 1.0 < deadline <= later.time() + left_s
            assert ana.last_state["room"]["turn"]["deadline_ms"] == int(deadline * 1000)
            await later.advance(taken, deadline - later.time() - 0.5, bots=False)
            assert taken.version == version  # still hers just before it
            await later.advance(taken, 0.5 + 2 * CONFIG.bot_delay_s)
            assert taken.version > version  # then it ran out: she is here, so no wait
            row = await restarted.store.load_match(taken.code)
            assert row is not None
            made = [a for r in row.rounds for a in r.actions if a.version == version + 1]
            assert [(a.seat, a.actor) for a in made] == [(0, "timer")]

    asyncio.run(main())


class _BlipAfterAcquire(RedisLeases):
    """Leases whose Redis (through ``proxy``) goes away just after the first lease is taken: a
    blip that falls between taking a new room's lease and anything else the creation writes."""

    def __init__(self, proxy: TcpProxy, *args: Any, **kwargs: Any) -> None:
        super().__init__(proxy.url, *args, **kwargs)
        self.proxy = proxy
        self.blips = 0

    async def acquire(self, *args: Any, **kwargs: Any) -> RedisLease | None:
        lease = await super().acquire(*args, **kwargs)
        if not self.blips:
            await self.proxy.cut()
            self.blips += 1
        return lease


class _BlipOnCreator(RedisLeases):
    """Leases whose Redis (through ``proxy``) is gone for the next look-up of a room's creator
    only (cut before it, mended right after it failed)."""

    def __init__(self, proxy: TcpProxy, *args: Any, **kwargs: Any) -> None:
        super().__init__(proxy.url, *args, **kwargs)
        self.proxy = proxy
        self.blips = 0

    async def creator(self, code: str, ttl_s: float) -> str | None:
        if self.blips:
            return await super().creator(code, ttl_s)
        self.blips += 1
        await self.proxy.cut()
        try:
            return await super().creator(code, ttl_s)
        finally:
            await self.proxy.mend()


def test_a_redis_blip_as_a_room_is_created_does_not_lose_its_creator(tmp_path: Path) -> None:
    """Redis gone for a moment right after a new room's lease is taken: its creator was noted in
    the same step as the lease (one script), so once the room leaves memory and another process
    loads it, it still counts for the address that created it, and the cap applies; its host
    token (stored with the match) still makes its holder the host."""
    redis_url = need_redis()
    prefix = key_prefix()
    database = sqlite_url(tmp_path)
    config = dataclasses.replace(CONFIG, max_rooms_per_address=1)
    maker = "203.0.113.21"

    async def main() -> None:
        proxy = await TcpProxy(redis_url).start()
        first = _BlipAfterAcquire(proxy, LEASE_S, prefix=prefix)
        async with (
            hub_on(database, first, config) as hub_a,
            hub_on(database, RedisLeases(redis_url, LEASE_S, prefix=prefix), config) as hub_b,
        ):
            room, host_token = await hub_a.create_room("domeng", {}, 5, 0, None, owner=maker)
            assert first.blips == 1
            await proxy.mend()
            assert isinstance(hub_a.clock, FakeClock)
            hub_a.clock.now += 10.0
            assert await hub_a.unload(room)  # out of memory, its lease released
            taken = await hub_b.open(room.code)
            assert taken is not None and hub_b.owners == {room.code: maker}
            assert hub_b.open_rooms_of(maker) == 1
            host.check_host(taken, host_token)  # the host stays the host (its token is stored)
            second, _ = await hub_a.create_room("domeng", {}, 5, 0, None, owner=maker)
            hub_a.clock.now += 10.0
            assert await hub_a.unload(second)
            with pytest.raises(RoomError) as capped:  # the first room counts for its creator there
                await hub_b.open(second.code)
            assert (capped.value.code, capped.value.status) == ("too_many_open_rooms", 429)
        await proxy.cut()

    asyncio.run(main())


def test_a_room_whose_creator_cannot_be_looked_up_is_not_loaded_uncounted(tmp_path: Path) -> None:
    """Loading a room another process created needs its creator from Redis: while that look-up
    fails the room is refused with 503 ``room_unavailable`` (try again), never loaded counting for
    nobody; the next try loads it for its creator."""
    redis_url = need_redis()
    prefix = key_prefix()
    database = sqlite_url(tmp_path)
    maker = "203.0.113.22"

    async def main() -> None:
        proxy = await TcpProxy(redis_url).start()
        second = _BlipOnCreator(proxy, LEASE_S, prefix=prefix)
        async with (
            hub_on(database, RedisLeases(redis_url, LEASE_S, prefix=prefix)) as hub_a,
            hub_on(database, second) as hub_b,
        ):
            room, _ = await hub_a.create_room("domeng", {}, 5, 0, None, owner=maker)
            assert isinstance(hub_a.clock, FakeClock)
            hub_a.clock.now += 10.0
            assert await hub_a.unload(room)
            with pytest.raises(RoomError) as refused:
                await hub_b.open(room.code)
            assert (refused.value.code, refused.value.status) == ("room_unavailable", 503)
            assert refused.value.headers == {"Retry-After": "1"}
            assert room.code not in hub_b.rooms and hub_b.owners == {}
            taken = await hub_b.open(room.code)
            assert taken is not None and hub_b.owners == {room.code: maker}
        await proxy.cut()

    asyncio.run(main())
