"""The hub: every room this process hosts, their creation, and restart recovery; with several
processes (docs/cluster.md), the lease each room is held under."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Mapping, Sequence
from typing import Any, Final

import structlog

from app.addresses import IPV6_SITE_PREFIX, SITE_SHARE, counted_keys, counted_site
from app.metrics import Metrics
from app.rooms import frames
from app.rooms.config import RoomConfig
from app.rooms.errors import RoomError
from app.rooms.leased import LeasedRooms
from app.rooms.lobby import open_tables, room_status, stored_status
from app.rooms.local import LocalBots, LoopClock
from app.rooms.making import RoomMaker, share_of
from app.rooms.ownership import Ownership, unavailable
from app.rooms.ports import BotPort, Clock, Leases, MatchStore
from app.rooms.recovery import round_end
from app.rooms.room import Room
from app.rooms.sweeper import Sweeper
from app.store import Store, StoreError
from engine.core import Phase

__all__ = [
    "UNOPENABLE_KEPT",
    "Hub",
    "store_finished_round",
]

_log = structlog.get_logger("domeng.hub")

_LOADABLE = ("waiting", "playing", "finished")

UNOPENABLE_KEPT: Final = 1024
"""How many rooms whose stored match could not be rebuilt a hub remembers (`Hub.statuses`), the
oldest forgotten first: a bound on what made-up broken rooms hold in memory."""


class Hub(LeasedRooms):
    """Rooms by code. One per server process; its rooms share its store, clock and bots.

    With ``leases`` (several processes, docs/cluster.md) a room is loaded or created only under
    its lease, taken first; its writes carry the lease's fencing token (`app.store.Store.fenced`),
    and a lost lease (or a write refused by the fence) unloads it at once, closing its sockets
    (``room_moved``) so their clients reconnect to the room's new owner. Without ``leases`` none
    of this happens: one process, as before."""

    def __init__(
        self,
        config: RoomConfig,
        store: Store,
        metrics: Metrics,
        *,
        clock: Clock | None = None,
        bots: BotPort | None = None,
        leases: Leases | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self.metrics = metrics
        self.clock: Clock = clock or LoopClock()
        self.bots: BotPort = bots or LocalBots()
        self.rooms: dict[str, Room] = {}
        """The rooms in memory, by code: only those in use (`sweep` unloads the others)."""
        self.owners: dict[str, str] = {}
        """Client address that created each room (`open_rooms_of`): rooms in memory and, with one
        process, unfinished ones unloaded, so that one loaded again counts for its creator once
        more (forgotten when its match finishes, is abandoned or moves to another process). With
        leases only the rooms in memory: the lease service keeps the creators of the others
        (`Leases.creator`), and a room unloaded here may be finished or abandoned on another
        process, which this one would never hear of, so entries kept here would grow without
        bound in a long-running process."""
        self.creators: dict[str, tuple[str, str | None]] = {}
        """Who created each room in memory, as what the caps count (`open_rooms_of`, and the
        lobby's tables per creator, `open_tables`): `share_of` its client address and of that
        address's IPv6 /48 (None: an IPv4 creator), as its match stores them (`Room.bot_share`,
        `Room.creator_site`). A room loaded again after a restart, which ``owners`` no longer
        knows, thus still counts for its creator; one whose match stored no creator (created
        without an address, or before its creator was stored) counts for nobody."""
        self._share_key: str | None = None
        """The deployment's ``bot_share`` key (`share_of`), read from the store on first use."""
        self._loading: dict[str, asyncio.Future[Room | None]] = {}
        self._unopenable: dict[str, int] = {}
        """The rooms (code → their latest match's id) whose stored match failed to rebuild here
        (`_load_row`: the room's link answers 404), the last `UNOPENABLE_KEPT`: "Your tables" does
        not show them as open (`statuses`)."""
        self.maker = RoomMaker(config, store, metrics, self.clock, self.bots)
        """Builds the rooms: new ones and those restored from the store."""
        self.sweeper = Sweeper(self)
        self.ownership = None if leases is None else Ownership(leases, store, self._lost)
        """The rooms' leases (several processes), or None (one process)."""
        LeasedRooms.__init__(self)

    def loaded_or_loading(self, code: str) -> bool:
        """Whether room ``code`` is in memory or being loaded."""
        return code in self.rooms or code in self._loading

    def get(self, code: str) -> Room | None:
        """The room with this code if it is in memory, or None (`open` loads it)."""
        return self.rooms.get(code)

    def open_tables(self, *, private: bool = False) -> list[dict[str, Any]]:
        """The rooms listed in the lobby (`app.rooms.lobby.open_tables`; with ``private``, with
        what ranks them that nobody is told, `app.rooms.lobby.PRIVATE`)."""
        return open_tables(self.rooms.values(), self.clock.time(), self.creators, private=private)

    async def statuses(self, codes: Sequence[str]) -> dict[str, dict[str, Any] | None]:
        """The lobby's "Your tables": each room of ``codes`` as `app.rooms.lobby.room_status`
        shows it, from memory when it is loaded here, else from the store without loading it
        (`app.store.Store.room_statuses`: its latest match and seats, no round); None for a code
        whose link opens no room (`open`): unknown, abandoned, or its match cannot be rebuilt (its
        rules cannot be made again, `app.rooms.lobby.stored_status`, or its restore already
        failed here: its rounds are not read for this). Raises `RoomError` ``room_unavailable``
        (503, ``Retry-After``) when the store cannot be read."""
        shown: dict[str, dict[str, Any] | None] = {
            code: room_status(room) for code in codes if (room := self.rooms.get(code)) is not None
        }
        missing = [code for code in codes if code not in shown]
        try:
            stored = await self.store.room_statuses(missing) if missing else {}
        except StoreError as error:
            _log.warning("room_statuses_failed", rooms=len(missing), error=str(error))
            raise unavailable("the rooms cannot be read right now; try again") from error
        for code in missing:
            row = stored.get(code)
            broken = row is not None and self._unopenable.get(code) == row.id
            shown[code] = None if row is None or broken else stored_status(row)
        return {code: shown[code] for code in codes}

    async def open(self, code: str) -> Room | None:
        """The room with this code, loaded from the store when it is not in memory (its latest
        match, `app.store.Store.load_room`) and that match can still be played (waiting, or
        playing), or is finished (shown as it ended); None for an unknown code, an abandoned match
        or one that cannot be rebuilt (logged). Two callers opening the same room at once get the
        same room. Loading one raises `RoomError` ``server_full`` (503) when ``max_rooms`` are in
        memory and none is idle (`make_room`), and ``too_many_open_rooms`` (429) when the address
        that created it already has ``max_rooms_per_address`` unfinished rooms in memory: letting
        rooms leave memory and opening them again must not get around either cap (both with
        ``Retry-After``). With leases, raises `RoomError` (503, ``Retry-After``): ``room_elsewhere``
        while another process holds the room's lease, ``room_unavailable`` while the leases cannot
        be reached (docs/cluster.md)."""
        room = self.rooms.get(code)
        if room is not None:
            return room
        if len(code) > 64:
            return None
        loading = self._loading.get(code)
        if loading is None:
            if self._full() and not await self._names_a_room(code):
                return None  # a made-up code neither unloads a room nor is told the server is full
            await self._check_room_for(code)
            loading = self._loading.get(code)  # another caller may have started it meanwhile
        if loading is None:
            loading = self._loading[code] = asyncio.ensure_future(self._load_or_unavailable(code))
            loading.add_done_callback(lambda _: self._loading.pop(code, None))
        return await asyncio.shield(loading)

    async def make_room(self) -> bool:
        """Whether one more room fits in memory (``max_rooms``, counting those being loaded); when
        none does, the room idle longest (`Room.idle_s`: nobody connected, nothing to do) is
        unloaded first: it comes back from the store when its link is opened."""
        if not self._full():
            return True
        idlest = max(self.rooms.values(), key=lambda room: room.idle_s(), default=None)
        if idlest is not None and idlest.idle_s() > 0.0:
            await self.unload(idlest)
        return not self._full()

    def _full(self) -> bool:
        """Whether ``max_rooms`` rooms are in memory or being loaded: one more needs another to
        leave memory first (`make_room`)."""
        return len(self.rooms) + len(self._loading) >= self.config.max_rooms

    async def _names_a_room(self, code: str) -> bool:
        """Whether ``code`` names a room the store can open (its latest match waiting, playing
        or finished), asked before a full server makes room for it. Raises `RoomError`
        ``room_unavailable`` (503, ``Retry-After``) when the database cannot be read now."""
        try:
            matches = await self.store.room_matches(code)
        except StoreError as error:
            _log.warning("room_load_failed", room=code, error=str(error))
            raise unavailable("the room cannot be loaded right now; try again") from error
        return bool(matches) and matches[-1].status in _LOADABLE

    async def _check_room_for(self, code: str) -> None:
        """Raises `RoomError` when loading room ``code`` would pass a cap (see `open`)."""
        if not await self.make_room():
            message = "this server hosts as many rooms as it can; try again later"
            raise RoomError("server_full", message, 503, {"Retry-After": "60"})
        if self.ownership is None:  # with leases, `_load` checks it once the room is known unfinished
            self._check_creator(self.owners.get(code))

    def _check_creator(self, creator: str | None) -> None:
        """Raises `RoomError` (429) when ``creator`` already has the cap of unfinished rooms in
        memory here, or its IPv6 /48 that cap's `app.addresses.SITE_SHARE` times."""
        cap = self.config.max_rooms_per_address
        if creator is None or not cap:
            return
        for key, share in counted_keys(creator):
            if self.open_rooms_of(key) >= cap * share:
                raise _too_many(cap * share)

    async def _check_stored_creator(self, share: str | None, site: str | None) -> None:
        """`_check_creator` for a room whose creator is known only as its match stored it (its
        `share_of` and its /48's, `Room.bot_share` and `Room.creator_site`; None: not stored), one
        loaded after a restart: raises `RoomError` (429) as `_check_creator` does, and
        `app.store.StoreError` when the deployment's key cannot be read."""
        cap = self.config.max_rooms_per_address
        if share is None or not cap:
            return
        await self._share_of(share)  # the key, read once: `creators` are compared under it
        for hashed, times, whole_site in ((share, 1, False), (site, SITE_SHARE, True)):
            if hashed is not None and self._open_rooms_keyed(hashed, whole_site) >= cap * times:
                raise _too_many(cap * times)

    async def _shared_creator(self, code: str) -> str | None:
        """With leases, the address that created unfinished room ``code``: as this process knows
        it, else from the lease service (`Leases.creator`, noted with the lease of every room
        created with an address); None when unknown. Raises `RoomError` ``room_unavailable``
        (503, ``Retry-After``) when the lease service cannot be reached: the room is not loaded
        counting for nobody (its lease needs the same service a moment later anyway)."""
        if self.ownership is None or code in self.owners:
            return self.owners.get(code)
        try:
            return await self.ownership.leases.creator(code, self._creator_ttl_s)
        except ConnectionError:
            _log.warning("room_creator_unknown", room=code)
            raise unavailable("the room's server cannot be found right now; try again") from None

    @property
    def _creator_ttl_s(self) -> float:
        """How long the lease service remembers who created a room (seconds): twice the time
        after which an unused match is abandoned; each load of the room extends it."""
        return 2 * self.config.abandon_after_s

    async def _load_or_unavailable(self, code: str) -> Room | None:
        try:
            return await self._load(code)
        except StoreError as error:  # the database unreachable, or a claim's row lock held too long
            _log.warning("room_load_failed", room=code, error=str(error))
            raise unavailable("the room cannot be loaded right now; try again") from error

    async def _load(self, code: str) -> Room | None:
        ownership = self.ownership
        if ownership is None:
            room = await self._load_row(code, self.store)
            if room is not None:
                await self._share_with(room, self.owners.get(code))
                await self._note_creator(room, self.owners.get(code))
            return room
        matches = await self.store.room_matches(code)
        if not matches or matches[-1].status not in _LOADABLE:
            return None  # no lease (nor fence counter) for a code that names no room
        # an unfinished room made on another process counts for its creator here (a finished one
        # counts for nobody, and is shown whatever its creator holds)
        creator = None if matches[-1].status == "finished" else await self._shared_creator(code)
        self._check_creator(creator)
        lease = await ownership.take(code)
        try:
            room = await self._load_row(code, ownership.fenced(lease))
        except BaseException:
            await ownership.give_up(lease)
            raise
        if room is None:
            await ownership.give_up(lease)
        else:
            self._lost_meanwhile(room, lease)
            if creator is not None:
                self.owners.setdefault(code, creator)  # it counts in its creator's open rooms here
            await self._share_with(room, creator)
            await self._note_creator(room, creator)
        return room

    async def _note_creator(self, room: Room, creator: str | None) -> None:
        """Note who created ``room``, just loaded, in `creators`: from its creator's address
        when it is known here (``creator``), else as its match stored it, if it did (after a
        restart). Raises `app.store.StoreError` when the deployment's key cannot be read."""
        if creator is not None:
            self.creators[room.code] = await self._creator_of(creator)
        elif room.bot_share != room.code:
            await self._share_of(room.code)  # the key, read once: `open_rooms_of` compares with it
            self.creators[room.code] = (room.bot_share, room.creator_site)

    async def _creator_of(self, address: str) -> tuple[str, str | None]:
        """`share_of` client ``address`` and of its IPv6 /48 (None: it has none), as `creators`
        holds them. Raises `app.store.StoreError` when the deployment's key cannot be read."""
        site = counted_site(address)
        return await self._share_of(address), None if site is None else await self._share_of(site)

    async def _load_row(self, code: str, store: MatchStore) -> Room | None:
        """Room ``code`` rebuilt from its stored latest match (`open`), writing to ``store``;
        None when there is none to open, or when that match cannot be rebuilt, whatever fails:
        reading it back (`app.store.Store.load_room`: an earlier round without its end, a stored
        row that is not what it should be) or replaying it (`RoomMaker.restore`: rules, start,
        outcomes, deals or actions that do not replay). Such a failure is logged once
        (``room_restore_failed``, with the room's code) and remembered for `statuses`. Raises
        `app.store.StoreError` for a database failure (`open` answers 503)."""
        try:
            row = await self.store.load_room(code)
        except StoreError:
            raise
        except Exception as error:  # whatever a stored match that does not read back raises
            await self._restore_failed(code, None, error)
            return None
        read_at = self.clock.monotonic()  # the turn in play counts from here to its arming
        if row is None or row.match.status not in _LOADABLE:
            return None
        if code in self.rooms:  # created meanwhile (codes are random: never in practice)
            return self.rooms[code]
        if self.ownership is None and code not in self.owners and row.match.status != "finished":
            # who created it is not known here since a restart: its match says (with leases, the
            # lease service does, `_load`)
            await self._check_stored_creator(row.match.bot_share, row.match.creator_site)
        try:
            room = self.maker.restore(row, store, read_at)
            last = row.match.rounds[-1] if row.match.rounds else None
            if last is not None and last.outcome is None and row.match.status == "playing":
                # a round's last action stored without its end (older databases): store it now
                await store_finished_round(room)
        except StoreError:
            raise
        except Exception as error:  # whatever a stored match that does not replay raises
            await self._restore_failed(code, row.match.id, error)
            return None
        self._unopenable.pop(code, None)
        if room.room_match > 1:
            room.previous_match = await self._previous_match(code, room.room_match - 1, store)
        self._add(room)
        self.metrics.rooms_loaded.inc()
        _log.info("room_loaded", room=code, status=room.status, version=room.version)
        return room

    async def _previous_match(self, code: str, number: int, store: MatchStore) -> dict[str, Any] | None:
        """Room ``code``'s match ``number`` as it ended (`app.rooms.frames.previous_public`), read
        back and replayed for a room loaded again in its next match; None when it cannot be, a
        database failure included (logged ``previous_match_unread``: the room opens without it,
        its pages without "Previous match", rather than not at all)."""
        try:
            row = await self.store.load_room(code, number)
            if row is None or row.match.status != "finished":
                return None
            return frames.previous_public(self.maker.restore(row, store))
        except Exception as error:  # a database failure, or whatever a match that does not replay raises
            _log.warning("previous_match_unread", room=code, kind=type(error).__name__, error=str(error))
            return None

    async def _restore_failed(self, code: str, match_id: int | None, error: Exception) -> None:
        """Log that room ``code``'s stored match ``match_id`` (None: its latest, not read back)
        cannot be rebuilt, by the error's kind and message (no row, no token), and remember it
        for `statuses`. Raises `app.store.StoreError` when the match's id cannot be read."""
        _log.error("room_restore_failed", room=code, kind=type(error).__name__, error=str(error))
        if match_id is None:
            matches = await self.store.room_matches(code)
            if not matches:
                return
            match_id = matches[-1].id
        self._unopenable.pop(code, None)  # the latest failure is the last to be forgotten
        self._unopenable[code] = match_id
        while len(self._unopenable) > UNOPENABLE_KEPT:
            del self._unopenable[next(iter(self._unopenable))]

    def open_rooms_of(self, address: str) -> int:
        """Rooms in memory whose match is not over created by ``address``, a client as
        `app.addresses.counted_address` gives it, or an IPv6 /48 (`app.addresses.counted_site`):
        then those of every client inside it; by `creators`, so those loaded again after a
        restart count too."""
        if self._share_key is None or not self.creators:
            return 0  # nothing is noted in `creators` before the key is read
        site = address.endswith(f"/{IPV6_SITE_PREFIX}")
        return self._open_rooms_keyed(share_of(address, self._share_key), site)

    def _open_rooms_keyed(self, hashed: str, site: bool) -> int:
        """`open_rooms_of` a client by its `share_of` ``hashed``, or with ``site`` an IPv6 /48."""
        return sum(
            1
            for code, (client, client_site) in self.creators.items()
            if (client_site if site else client) == hashed
            and (room := self.rooms.get(code)) is not None
            and room.status != "finished"
        )

    async def create_room(
        self,
        variant: str,
        options: Mapping[str, object],
        seat_count: int | None,
        turn_timer_s: float | None,
        bot_levels: list[str | None] | None,
        owner: str | None = None,
        hints: bool = False,
    ) -> tuple[Room, str]:
        """A new waiting room and its host token; ``owner`` is the creator's address (it counts
        in `open_rooms_of`, here and, with leases, on whichever process loads it later: it is
        noted with the room's lease, `Leases.acquire`); ``hints``: players may ask for hints
        (issue 16). Raises `RoomError`: 422 for bad settings; with leases, 503
        ``room_unavailable`` (``Retry-After``) when they cannot be reached, and then no room is
        stored."""
        plan = self.maker.plan(variant, options, seat_count, turn_timer_s, bot_levels)
        code = secrets.token_urlsafe(16)  # 128 bits
        host_token = secrets.token_urlsafe(32)
        ownership = self.ownership
        # with leases the creator is noted with the lease, in one step: whichever process loads
        # the room later counts it for its creator (no Redis, no lease: refused with a 503)
        lease = (
            None
            if ownership is None
            else await ownership.take(code, claim=False, creator=owner, creator_ttl_s=self._creator_ttl_s)
        )
        store: MatchStore = self.store if ownership is None or lease is None else ownership.fenced(lease)
        try:
            creator = None if owner is None else await self._creator_of(owner)
            share, site = (None, None) if creator is None else creator
            room = await self.maker.create(plan, code, host_token, hints, store, share, site)
            self._add(room)
        except BaseException:
            if ownership is not None and lease is not None:
                await ownership.give_up(lease)
            raise
        if lease is not None:
            self._lost_meanwhile(room, lease)
        if owner is not None and creator is not None:
            self.owners[code] = owner
            self.creators[code] = creator
        _log.info("room_created", room=code, variant=plan.rules.name, seats=plan.rules.seats)
        return room, host_token

    async def _share_of(self, address: str) -> str:
        """`share_of` client ``address`` under the deployment's key (read once from the store;
        raises `app.store.StoreError` when it cannot be read)."""
        if self._share_key is None:
            self._share_key = await self.store.deployment_key("bot_share")
        return share_of(address, self._share_key)

    async def _share_with(self, room: Room, creator: str | None) -> None:
        """A room loaded again whose match stored no share (`app.store.models.Match.bot_share`:
        stored before it was kept) shares the bot workers with its ``creator``'s rooms when the
        hub knows it (None: it counts alone, by its code)."""
        if creator is not None and room.bot_share == room.code:
            room.bot_share = await self._share_of(creator)

    def _add(self, room: Room) -> None:
        room.out_of_step = self.reload
        self.rooms[room.code] = room
        self.metrics.rooms.set(len(self.rooms))
        room.start_task()

    async def recover(self) -> int:
        """At start-up: how many unfinished matches the store holds. None is loaded now: each
        room comes back from the store when someone opens it (`open`), so start-up does not
        grow with the stored history (issue 13). Starts the leases, if any."""
        if self.ownership is not None:
            await self.ownership.leases.start()
        count = await self.store.count_active()
        if count:
            _log.info("rooms_stored", count=count)
        return count

    # -- what stays in memory ------------------------------------------------------------------

    def start_sweeper(self, interval_s: float) -> None:
        """Run `sweep` every ``interval_s`` seconds until `stop`."""
        self.sweeper.start(interval_s)

    async def sweep(self) -> tuple[int, int]:
        """Unload the rooms nobody uses and abandon the long idle matches
        (`app.rooms.sweeper.Sweeper.sweep`). Returns (unloaded, abandoned)."""
        return await self.sweeper.sweep()

    def _retire(self, room: Room, keep_creator: bool = False) -> bool:
        """Take an idle room out of memory at once (no await in between: nothing can slip into
        its queue), remembering who created it with ``keep_creator``; False if it is in use
        again."""
        if room.idle_s() == 0.0 or self.rooms.get(room.code) is not room:
            return False
        self._take_out(room, keep_creator)
        return True

    async def unload(self, room: Room) -> bool:
        """Take ``room`` out of memory if it is idle (`Room.idle_s`); everything it holds is
        stored, and `open` brings it back (its lease, if any, is released after its task stopped).
        An orderly handoff: the time its turn in play has used is stored (`Room.stop`), so the
        room loaded again keeps what was left of the turn, however long it was out of memory.
        Whether it was unloaded."""
        keep_creator = self.ownership is None and room.status != "finished"  # see `owners`
        if not self._retire(room, keep_creator):
            return False
        await room.stop(hand_over=True)
        await self.release(room.code)
        self.metrics.rooms_unloaded.inc()
        _log.info("room_unloaded", room=room.code, status=room.status, version=room.version)
        return True

    async def abandon(self, room: Room) -> bool:
        """Close an idle unfinished ``room``: out of memory, stored as ``abandoned`` (reason
        ``idle``) with its history kept; its link no longer opens it."""
        if not self._retire(room):
            return False
        await room.stop()
        try:
            await self.store_of(room.code).abandon(room.match_id, "idle")
        finally:
            await self.release(room.code)
        room.status = "abandoned"
        _log.info("room_abandoned", room=room.code, match=room.match_id, why="idle")
        return True

    async def stop(self) -> None:
        """Stop the sweeper and every room's task (connections are closed by the server's
        shutdown), then give up the rooms' leases and close them."""
        await self.sweeper.stop()
        # with leases another process takes the rooms at once: each stores what is left of its turn
        handed = self.ownership is not None
        await asyncio.gather(*(room.stop(handed) for room in self.rooms.values()), *self._stopping)
        if self.ownership is not None:  # another process may take the rooms at once
            await self.ownership.close()


def _too_many(cap: int) -> RoomError:
    """The refusal of a room loaded past its creator's ``cap`` of open rooms (429)."""
    message = f"whoever made this room has {cap} other rooms open; try again when one is over"
    return RoomError("too_many_open_rooms", message, 429, {"Retry-After": "60"})


async def store_finished_round(room: Room) -> None:
    """Recovery: if the rebuilt round has ended but its end was not stored, store it now (a
    database written before a round's end went in with its last action can hold such a round)."""
    state = room.state
    if state is None or not state.round_index or state.phase is Phase.PLAYING:
        return
    if room.host_stop and state.phase is Phase.READY and state.rules.host_stops:
        state.stop()  # the host had asked to end the match with this round
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
