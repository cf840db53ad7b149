"""When the host is away, a table never traps its players (tests/roomkit.py: fake outboxes and
clock, a real SQLite store): past the host's grace, the first connected seated person may start
the match and set its options, nothing more; the host's return takes it back; after Play again
with the host long gone, the friend who asked can start at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.rooms import again, host
from app.rooms.errors import RoomError
from app.rooms.room import Room
from tests.roomkit import FakeOutbox, Table, run_table
from tests.test_room_again import _finished_match

GRACE = 20.0  # tests/roomkit.py CONFIG.disconnect_grace_s


async def _start(room: Room, token: str) -> None:
    async def run(r: Room) -> None:
        host.check_starter(r, token)
        await host.begin_match(r)

    await room.call(run)


async def _options(room: Room, token: str, options: dict[str, object]) -> None:
    async def run(r: Room) -> None:
        host.check_starter(r, token)
        await host.set_options(r, options, None)

    await room.call(run)


async def _refused(call: object) -> str:
    with pytest.raises(RoomError) as refused:
        await call  # type: ignore[misc]
    return refused.value.code


async def _host_tab(table: Table, token: str | None = None) -> FakeOutbox:
    conn = FakeOutbox()
    await table.room.connect(conn, token, None, table.host_token)
    return conn


def test_the_first_connected_person_starts_when_the_host_is_away(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        room = table.room
        hosts_tab = await _host_tab(table)
        ana_token, ana = await table.sit(1, "Ana")
        budi_token, budi = await table.sit(2, "Budi")
        assert ana.last_state["room"]["host"] == {"connected": True, "deputy": None}

        room.disconnect(hosts_tab)  # the host closes the tab
        await table.clock.advance(room, GRACE - 1)
        assert ana.of_type("presence")[-1]["host"] == {"connected": False, "deputy": None}
        assert await _refused(_start(room, ana_token)) == "not_host"  # a reload is not an absence

        await table.clock.advance(room, 1)
        assert budi.of_type("presence")[-1]["host"] == {"connected": False, "deputy": 1}
        assert await _refused(_start(room, budi_token)) == "not_host"  # only the deputy
        with pytest.raises(RoomError):  # no host powers beyond the match's start and setup
            await room.call(lambda r: host.check_host(r, ana_token))

        room.disconnect(ana)  # the deputy leaves too: the next person in seat order
        await room.settled()
        assert budi.of_type("presence")[-1]["host"] == {"connected": False, "deputy": 2}
        await _options(room, budi_token, {"camat_target": 2})
        await _start(room, budi_token)
        assert room.status == "playing" and room.rules.options()["camat_target"] == 2
        assert budi.last_state["room"]["host"]["deputy"] is None  # nobody's once it started

    run_table(tmp_path, body, bots=["easy", None, None, "easy", "easy"])


def test_the_host_back_takes_their_powers_back(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        room = table.room
        ana_token, ana = await table.sit(0, "Ana")
        await table.clock.advance(room, GRACE)  # the host never came (the room was opened without them)
        assert room.deputy() == 0
        await _host_tab(table)
        assert ana.of_type("presence")[-1]["host"] == {"connected": True, "deputy": None}
        assert await _refused(_start(room, ana_token)) == "not_host"
        assert await _refused(_start(room, "forged")) == "not_host"

    run_table(tmp_path, body, bots=[None, "easy", "easy", "easy", "easy"])


def test_a_friend_starts_the_next_match_when_the_host_left_after_the_last(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        room = table.room
        hosts_tab = await _host_tab(table)
        tokens, (ana, budi), _ = await _finished_match(table)
        room.disconnect(hosts_tab)  # the host leaves after the match
        room.disconnect(ana)
        await table.clock.advance(room, GRACE)
        await room.call(lambda r: again.play_again(r, tokens[1]))  # Budi: Play again
        shown = budi.last_state["room"]
        assert (shown["status"], shown["match"]) == ("waiting", 2)
        assert shown["host"] == {"connected": False, "deputy": 1}  # at once: the host left long ago
        await _start(room, tokens[1])
        assert room.status == "playing" and room.room_match == 2

    run_table(tmp_path, body, bots=[None, None, "greedy", "random", "easy"])


def test_the_next_matchs_options_set_hints_too(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        room = table.room
        _, ana = await table.sit(0, "Ana")
        await room.call(lambda r: host.set_options(r, {"camat_target": 1}, None, True))
        assert room.hints is True and ana.last_state["room"]["hints"] is True
        assert (await table.stored()).hints is True
        await room.call(lambda r: host.set_options(r, {"camat_target": 1}, None))  # unchanged
        assert room.hints is True

    run_table(tmp_path, body, bots=[None, "easy", "easy", "easy", "easy"])


def test_the_deputy_sets_a_kozel_tables_number_of_seats_too(tmp_path: Path) -> None:
    """The number of seats is one of the match's options (docs/protocol.md): while the host is
    away the deputy may make the table larger (K1: up to 4), and never take a person's seat."""

    async def body(table: Table) -> None:
        room = table.room
        ana_token, ana = await table.sit(0, "Ana")
        _, budi = await table.sit(1, "Budi")
        await table.clock.advance(room, GRACE)  # the host never came
        assert room.deputy() == 0

        async def seats(count: int) -> None:
            async def run(r: Room) -> None:
                host.check_starter(r, ana_token)
                await host.set_options(r, None, None, seats=count)

            await room.call(run)

        await seats(4)
        assert [s["kind"] for s in budi.last_state["room"]["seats"]] == ["human", "human", "bot", "empty"]
        assert room.rules.seats == 4 and (await table.stored()).seat_count == 4
        assert await _refused(seats(1)) == "invalid_seats"
        await seats(2)
        assert len(ana.last_state["room"]["seats"]) == 2 and room.rules.seats == 2

    run_table(tmp_path, body, variant="kozel", bots=[None, None, "easy"])
