"""The room's chat (issue 14), in-process (a real SQLite store, fake outboxes) and through a real
server's socket: lines reach everyone and are stored with where the play stood, their limits,
spectators and muted seats, the rules kept across a restart, the seat's rate limit (one for all
of its sockets)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets

from app.rooms import chat, host, watchers
from app.rooms.errors import RoomError
from app.rooms.room import Room
from tests.roomkit import FakeOutbox, Table, reopen, run_table
from tests.serverkit import Client, ServerProcess

BOTS4 = [None, None, "greedy", "greedy", "greedy"]
HOSTILE = "<img src=x onerror=alert(1)> ' \" & </script>"


async def _say(table: Table, conn: FakeOutbox, text: str | None = None, reaction: str | None = None) -> None:
    await table.room.call(lambda r: chat.say(r, conn, text, reaction))


async def _refused(
    table: Table, conn: FakeOutbox, text: str | None = None, reaction: str | None = None
) -> str:
    with pytest.raises(RoomError) as refused:
        await _say(table, conn, text, reaction)
    return refused.value.code


async def _rules(
    table: Table,
    spectators: bool | None = None,
    muted: dict[int, bool] | None = None,
    watchers: dict[str, bool] | None = None,
) -> Any:
    async def run(room: Room) -> Any:
        host.check_host(room, table.host_token)
        return await chat.set_rules(room, spectators, muted or {}, watchers)

    return await table.room.call(run)


async def _spectate(table: Table, key: str | None = None) -> tuple[FakeOutbox, str, str]:
    """A spectator connects (with the ``key`` an earlier welcome gave it): its outbox, key and tag."""
    conn = FakeOutbox()
    await table.room.connect(conn, None, watcher=key)
    (welcome,) = conn.of_type("welcome")
    return conn, welcome["watcher"], welcome["tag"]


def test_a_line_reaches_everyone_and_is_stored_with_where_the_play_stood(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        _, ana = await table.sit(0, "Ana")
        _, budi = await table.sit(1, "Budi")
        watcher = await table.watch()
        await table.start()
        await _say(table, ana, "  good luck  ")
        await _say(table, budi, reaction="hello")
        await _say(table, ana, HOSTILE)
        for conn in (ana, budi, watcher):
            lines = [f["line"] for f in conn.of_type("chat")]
            assert [(x["seat"], x["name"], x["text"], x["reaction"]) for x in lines] == [
                (0, "Ana", "good luck", None),
                (1, "Budi", None, "hello"),
                (0, "Ana", HOSTILE, None),  # carried as it was typed: the client shows it as text
            ]
        rules, stored = await table.store.load_chat(table.room.match_id)
        assert rules is None
        assert [(x.seat, x.text, x.reaction, x.round_index) for x in stored] == [
            (0, "good luck", None, 0),
            (1, None, "hello", 0),
            (0, HOSTILE, None, 0),
        ]
        assert table.room.version == (await table.stored()).version  # chat is not game state
        late = await table.watch()
        await table.room.call(lambda r: chat.send_log(r, late))
        (log,) = late.of_type("chat_log")
        assert [x["text"] for x in log["lines"]] == ["good luck", None, HOSTILE]
        assert log["rules"] == {"spectators": False, "muted": [], "muted_spectators": []}

    run_table(tmp_path, body, bots=BOTS4)


def test_a_line_must_be_one_short_text_or_a_known_reaction(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        _, ana = await table.sit(0, "Ana")
        assert await _refused(table, ana, "   ") == "chat_invalid"
        assert await _refused(table, ana, "x" * (chat.MAX_TEXT_CHARS + 1)) == "chat_invalid"
        assert await _refused(table, ana, "two\nlines") == "chat_invalid"
        assert await _refused(table, ana, "bell\x07") == "chat_invalid"
        assert await _refused(table, ana, "one\u2028line") == "chat_invalid"  # a line separator
        assert await _refused(table, ana, "\u202egood") == "chat_invalid"  # shows as "doog"
        assert await _refused(table, ana, "a \u2067b") == "chat_invalid"  # an isolate
        assert await _refused(table, ana, "Z" + "\u0301" * 199) == "chat_invalid"  # zalgo
        for hidden in ("a\u200bb", "\ufeffhi", "a\u2060b", "a\ufff9b\ufffac\ufffb", "hi\U000e0041"):
            assert await _refused(table, ana, hidden) == "chat_invalid", hidden  # shows nothing
        assert await _refused(table, ana, "\U0001f44d" + "\u200d\U0001f44d" * 20) == "chat_invalid"
        # printable characters that show nothing: a blank line under Ana's name, as a name of them
        # is refused (name_blank); among letters they stay (a filler within Korean text)
        for blank in ("\u3164", "\u2800" * 5, "\u115f\u1160", "\u034f", "\u3164 \u2800\u0301"):
            assert await _refused(table, ana, blank) == "chat_invalid", ascii(blank)
        assert chat.clean_text("\u3164hi") == "\u3164hi"
        # a run of spaces a browser does not fold (no-break, wide) or of fillers pushed the words after
        # it onto a line of their own, under no name: "gg" from Ana, then "Budi: send me your link"
        spoof = "gg" + "\u00a0" * 120 + "Budi: send me your link"
        assert chat.clean_text(spoof) == "gg Budi: send me your link"
        assert chat.clean_text("a\u2003\u2003 \u3000b") == "a b"
        for run in ("gg" + "\u2800" * 60 + "Budi: hi", "gg \u3164 \u3164 Budi: hi", "gg\u3164\u3164\u3164x"):
            assert await _refused(table, ana, run) == "chat_invalid", ascii(run)
        assert chat.clean_text("\u1100\u1160 ok") == "\u1100\u1160 ok"  # one filler within a syllable
        # what people write is welcome: accents, joined emoji with their joiners, right to left
        for fine in (
            "Nguyễn Thị Ánh 👩🏽‍💻",
            "نور الهدى: good game",
            "👨‍👩‍👧‍👦 🏴\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",
            "\u200fשלום\u200e ok",  # the direction marks act as letters, within the line
            "می\u200cخواهم",  # the zero-width non-joiner of Persian
        ):
            assert chat.clean_text(fine) == fine
        assert await _refused(table, ana, reaction="rude") == "chat_invalid"
        assert await _refused(table, ana, "hi", "nice") == "chat_invalid"
        assert await _refused(table, ana) == "chat_invalid"
        await _say(table, ana, "é" * chat.MAX_TEXT_CHARS)  # the longest allowed
        await _say(table, ana, "👨‍👩‍👧 🇮🇩 👍🏽")  # joined emoji, flags and skin tones are text
        _, stored = await table.store.load_chat(table.room.match_id)
        assert [x.text for x in stored] == ["é" * chat.MAX_TEXT_CHARS, "👨‍👩‍👧 🇮🇩 👍🏽"]

    run_table(tmp_path, body, bots=BOTS4)


def test_spectators_read_and_write_only_when_the_host_allows_and_muted_seats_cannot_chat(
    tmp_path: Path,
) -> None:
    async def body(table: Table) -> None:
        _, ana = await table.sit(0, "Ana")
        _, budi = await table.sit(1, "Budi")
        watcher = await table.watch()
        assert await _refused(table, watcher, "hello") == "chat_not_allowed"
        with pytest.raises(RoomError) as not_host:
            await table.room.call(lambda r: host.check_host(r, "not the host"))
        assert not_host.value.code == "not_host"
        assert await _rules(table, spectators=True, muted={1: True}) == {
            "spectators": True,
            "muted": [1],
            "muted_spectators": [],
        }
        assert ana.of_type("chat_rules")[-1]["rules"] == {
            "spectators": True,
            "muted": [1],
            "muted_spectators": [],
        }
        await _say(table, watcher, "hello from the rail")
        assert await _refused(table, budi, "let me talk") == "chat_muted"
        assert await _refused(table, budi, reaction="oops") == "chat_muted"
        await _rules(table, muted={1: False})
        await _say(table, budi, "thanks")
        texts = [(f["line"]["seat"], f["line"]["text"]) for f in ana.of_type("chat")]
        assert texts == [(None, "hello from the rail"), (1, "thanks")]
        await _rules(table, spectators=False, muted={3: True})

        again = await reopen(table)  # a restart: the rules come back from the store
        watcher2 = FakeOutbox()
        await again.room.connect(watcher2, None)
        await again.room.call(lambda r: chat.send_log(r, watcher2))
        (log,) = watcher2.of_type("chat_log")
        assert log["rules"] == {"spectators": False, "muted": [3], "muted_spectators": []}
        assert [x["text"] for x in log["lines"]] == ["hello from the rail", "thanks"]
        assert await _refused(again, watcher2, "hi") == "chat_not_allowed"

    run_table(tmp_path, body, bots=BOTS4)


def test_a_seats_mute_ends_with_its_person_and_never_falls_on_who_sits_there_next(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        budi_token, budi = await table.sit(1, "Budi")
        rail = await table.watch()
        await _rules(table, muted={1: True})
        assert await _refused(table, budi, "spam") == "chat_muted"
        await table.room.call(lambda r: host.leave(r, 1, budi_token))
        _, cici = await table.sit(1, "Cici")  # someone else in the chair: not muted
        assert rail.of_type("chat_rules")[-1]["rules"]["muted"] == []  # everyone is told
        await _say(table, cici, "hi all")
        rules, _ = await table.store.load_chat(table.room.match_id)
        assert rules is not None and rules["muted"] == []
        await _rules(table, muted={1: True})  # the host may mute whoever sits there, as ever
        assert await _refused(table, cici, "hi again") == "chat_muted"

    run_table(tmp_path, body, bots=BOTS4)


def test_the_host_mutes_one_spectator_who_stays_muted_by_its_key_and_cannot_pass_as_another(
    tmp_path: Path,
) -> None:
    async def body(table: Table) -> None:
        _, ana = await table.sit(0, "Ana")
        assert "watcher" not in ana.of_type("welcome")[0]  # a seat has no spectator key
        await _rules(table, spectators=True)
        rail, key, tag = await _spectate(table)
        other, other_key, other_tag = await _spectate(table)
        assert re.fullmatch(watchers.KEY_PATTERN, key) and watchers.is_tag(tag) and tag != other_tag
        assert rail.watcher == tag == watchers.watcher_tag(table.room.host_token_hash, table.room.code, key)
        await _say(table, rail, "boo")
        assert [f["line"]["watcher"] for f in ana.of_type("chat")] == [tag]  # the tag, never the key

        rules = await _rules(table, watchers={tag: True})
        assert rules == {"spectators": True, "muted": [], "muted_spectators": [tag]}
        assert other.of_type("chat_rules")[-1]["rules"] == rules
        assert await _refused(table, rail, "boo again") == "chat_muted"
        assert await _refused(table, rail, reaction="oops") == "chat_muted"
        await _say(table, other, "hello")  # the other spectators still write
        back, same_key, same_tag = await _spectate(table, key)  # a reload keeps its key: still muted
        assert (same_key, same_tag) == (key, tag)
        assert await _refused(table, back, "I'm back") == "chat_muted"
        # the tag says nothing of the key: another's tag, even made to look like a key, is a new
        # spectator (a key out of form is replaced by a new one)
        for forged in (tag, other_tag * 3, "x" * 15):
            _, new_key, new_tag = await _spectate(table, forged)
            assert new_tag not in (tag, other_tag) and (new_key == forged) == (forged == other_tag * 3)
        _, _, sharing = await _spectate(table, other_key)  # the key itself is the secret
        assert sharing == other_tag
        for conn in (ana, other):
            assert key not in json.dumps(conn.frames)
        with pytest.raises(RoomError) as bad:
            await _rules(table, watchers={"not-a-tag": True})
        assert (bad.value.code, bad.value.status) == ("bad_spectator", 422)
        with pytest.raises(RoomError) as full:
            await _rules(table, watchers={f"{n:08x}": True for n in range(chat.MAX_MUTED_SPECTATORS)})
        assert full.value.code == "too_many_muted"

        again = await reopen(table)  # a restart (or another process): from the store
        rail2 = FakeOutbox()
        await again.room.connect(rail2, None, watcher=key)
        assert await _refused(again, rail2, "still here") == "chat_muted"
        await again.room.call(lambda r: chat.send_log(r, rail2))
        log = rail2.of_type("chat_log")[-1]
        assert log["rules"]["muted_spectators"] == [tag]
        assert [(x["text"], x["watcher"]) for x in log["lines"]] == [("boo", tag), ("hello", other_tag)]
        await _rules(again, watchers={tag: False})  # unmuted
        await _say(again, rail2, "sorry")

    run_table(tmp_path, body, bots=BOTS4)


async def _from(table: Table, address: str, key: str | None = None) -> FakeOutbox:
    """A spectator connects from client ``address`` (with the ``key`` an earlier welcome gave it)."""
    conn = FakeOutbox()
    await table.room.connect(conn, None, watcher=key, address=address)
    return conn


def _key(conn: FakeOutbox) -> str:
    """The spectator key ``conn``'s welcome gave it."""
    key: str = conn.of_type("welcome")[0]["watcher"]
    return key


HOME, NEIGHBOUR = "203.0.113.5", "2001:db8:9:9::/64"


def test_a_mute_holds_the_persons_address_on_a_new_tag_a_seat_and_after_a_restart(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        await _rules(table, spectators=True)
        housemate = await _from(table, HOME)
        await _say(table, housemate, "hi from the sofa")  # heard before the mute: spared by it
        rude = await _from(table, HOME)
        await _say(table, rude, "boo")
        rules = await _rules(table, watchers={rude.watcher: True})
        assert rules == {"spectators": True, "muted": [], "muted_spectators": [rude.watcher]}
        reloaded = await _from(table, HOME)  # a reload without its key, a private window: a new tag
        assert reloaded.watcher != rude.watcher
        assert await _refused(table, reloaded, "boo again") == "chat_muted"
        await _say(table, housemate, "still here")
        neighbour = await _from(table, NEIGHBOUR)  # another address: not held
        await _say(table, neighbour, "hello")

        # the address is stored only as the room's salted hash, and sent to nobody
        held = watchers.client_hash(table.room.host_token_hash, HOME)
        stored, _ = await table.store.load_chat(table.room.match_id)
        assert stored is not None and list(stored["clients"]) == [held]
        assert stored["clients"][held] == {"by": [f"tag:{rude.watcher}"], "spared": [housemate.watcher]}
        assert HOME not in json.dumps(stored)
        for conn in (housemate, rude, reloaded, neighbour):
            assert held not in json.dumps(conn.frames) and HOME not in json.dumps(conn.frames)

        # the muted person claims a seat: the mute comes along, on the seat, until the host lifts it
        token = await table.room.call(lambda r: host.claim(r, 0, "Rude", HOME, _key(rude)))
        seated = await table.watch(token)
        assert await _refused(table, seated, "now I'm a player") == "chat_muted"
        assert neighbour.of_type("chat_rules")[-1]["rules"]["muted"] == [0]
        # the spared housemate claims one, with their key: not muted
        token = await table.room.call(lambda r: host.claim(r, 1, "Sofa", HOME, _key(housemate)))
        await _say(table, await table.watch(token), "my turn to play")

        again = await reopen(table)  # a restart (or another process): the hold comes from the store
        fresh = FakeOutbox()
        await again.room.connect(fresh, None, address=HOME)
        assert await _refused(again, fresh, "after the restart") == "chat_muted"
        sofa = FakeOutbox()
        await again.room.connect(sofa, None, watcher=_key(housemate), address=HOME)
        await _say(again, sofa, "spared still")
        await _rules(again, watchers={rude.watcher: False})  # the seat's mute still holds the person
        assert await _refused(again, fresh, "let me") == "chat_muted"
        await _rules(again, muted={0: False})  # the host lifts both: the address is let go
        await _say(again, fresh, "thanks")
        stored, _ = await again.store.load_chat(again.room.match_id)
        assert stored is not None and "clients" not in stored

    run_table(tmp_path, body, bots=[None, None, "greedy", "greedy", "greedy"])


def test_a_seats_mute_holds_its_person_claiming_again_and_ends_for_another(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        ana_token = await table.room.call(lambda r: host.claim(r, 1, "Ana", HOME))
        ana = await table.watch(ana_token)
        await _rules(table, muted={1: True})
        await table.room.call(lambda r: host.leave(r, 1, ana_token))
        ana_token = await table.room.call(lambda r: host.claim(r, 1, "Ana again", HOME))
        ana = await table.watch(ana_token)  # the same person back in the chair: still muted
        assert await _refused(table, ana, "unmuted?") == "chat_muted"
        rail = await _from(table, HOME)  # nor does she chat as a spectator
        await _rules(table, spectators=True)
        assert await _refused(table, rail, "from the rail") == "chat_muted"
        await table.room.call(lambda r: host.leave(r, 1, ana_token))
        boss = await table.watch(host=True)
        budi_token = await table.room.call(lambda r: host.claim(r, 1, "Budi", NEIGHBOUR))
        await _say(table, await table.watch(budi_token), "hi")  # a different person: the seat's mute ends
        assert rail.of_type("chat_rules")[-1]["rules"]["muted"] == []
        # ... but not Ana's: she stays muted as a spectator, whom the host sees named after her seat
        assert await _refused(table, rail, "and me") == "chat_muted"
        assert rail.of_type("chat_rules")[-1]["you_muted"] is True
        assert await _refused(table, await _from(table, HOME), "a new tab") == "chat_muted"
        (tag,) = rail.of_type("chat_rules")[-1]["rules"]["muted_spectators"]
        assert "left" not in rail.of_type("chat_rules")[-1]["rules"]  # her name is the host's to see
        assert boss.of_type("chat_rules")[-1]["rules"]["left"] == {tag: "Ana again"}
        held = watchers.client_hash(table.room.host_token_hash, HOME)
        for conn in (rail, boss):
            assert held not in json.dumps(conn.frames) and HOME not in json.dumps(conn.frames)
        assert await _rules(table, watchers={tag: False}) == {  # the host lifts it, as a spectator's
            "spectators": True,
            "muted": [],
            "muted_spectators": [],
        }
        await _say(table, rail, "thanks")

    run_table(tmp_path, body, bots=BOTS4)


def test_the_hosts_list_shows_a_tab_a_seats_mute_holds_as_muted_and_unmutes_it(tmp_path: Path) -> None:
    """A muted seat's person who claimed it with no spectator key becomes, when another takes the
    seat, a muted spectator under an invented tag (`chat._handed_over`); the tab she watches from
    has a tag of its own, muted by her address. The host's list of spectators said nothing of it,
    so her real tab showed "Mute", as if she could write; now it says ``muted``, and the host's
    Unmute of that tab lets it write (the invented tag's mute still holds her other tabs)."""

    async def body(table: Table) -> None:
        await _rules(table, spectators=True)
        boss = await table.watch(host=True)
        ana_token = await table.room.call(lambda r: host.claim(r, 1, "Ana", HOME))
        await table.watch(ana_token)
        await _rules(table, muted={1: True})
        rail = await _from(table, HOME)  # her tab, watching: held by the seat's mute
        assert await _refused(table, rail, "from the rail") == "chat_muted"
        listed = boss.of_type("spectators")[-1]["spectators"]
        assert listed == [{"tag": rail.watcher, "name": "", "muted": True}]
        neighbour = await _from(table, NEIGHBOUR)
        listed = boss.of_type("spectators")[-1]["spectators"]
        assert [s["muted"] for s in listed] == [True, False]
        await table.room.call(lambda r: host.leave(r, 1, ana_token))
        await table.room.call(lambda r: host.claim(r, 1, "Budi", NEIGHBOUR))
        (invented,) = rail.of_type("chat_rules")[-1]["rules"]["muted_spectators"]
        assert invented != rail.watcher and boss.of_type("chat_rules")[-1]["rules"]["left"] == {
            invented: "Ana"
        }
        assert await _refused(table, rail, "still?") == "chat_muted"
        assert boss.of_type("spectators")[-1]["spectators"][0] == {
            "tag": rail.watcher,
            "name": "",
            "muted": True,
        }

        await _rules(table, watchers={rail.watcher: False})  # the host's Unmute on her tab's row
        await _say(table, rail, "thanks")
        assert rail.of_type("chat_rules")[-1]["you_muted"] is False
        assert boss.of_type("spectators")[-1]["spectators"][0]["muted"] is False
        assert rail.of_type("chat_rules")[-1]["rules"]["muted_spectators"] == [invented]
        assert await _refused(table, await _from(table, HOME), "a new tab") == "chat_muted"
        await _rules(table, watchers={rail.watcher: True})  # muted again, by its own tag
        assert await _refused(table, rail, "again") == "chat_muted"
        await _say(table, neighbour, "hello")

    run_table(tmp_path, body, bots=BOTS4)


def test_a_muted_seats_person_another_took_it_from_stays_muted_after_a_restart(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        await _rules(table, spectators=True)
        rail = await _from(table, HOME)
        ana_key = _key(rail)
        ana_token = await table.room.call(lambda r: host.claim(r, 1, "Ana", HOME, ana_key))
        await table.watch(ana_token)
        await _rules(table, muted={1: True})
        await table.room.call(lambda r: host.leave(r, 1, ana_token))

        again = await reopen(table)  # a restart before another takes the seat: who was muted is stored
        back = FakeOutbox()
        await again.room.connect(back, None, watcher=ana_key, address=HOME)  # watching, by her own key
        await again.room.call(lambda r: host.claim(r, 1, "Budi", NEIGHBOUR))
        assert await _refused(again, back, "free at last") == "chat_muted"
        assert back.of_type("chat_rules")[-1]["rules"]["muted_spectators"] == [back.watcher]

        again = await reopen(again)  # and after another restart the host still sees and lifts it
        boss = FakeOutbox()
        await again.room.connect(boss, None, host=again.host_token)
        await again.room.call(lambda r: chat.send_log(r, boss))
        rules = boss.of_type("chat_log")[-1]["rules"]
        assert rules["muted_spectators"] == [back.watcher] and rules["left"] == {back.watcher: "Ana"}
        fresh = FakeOutbox()
        await again.room.connect(fresh, None, address=HOME)  # a private window: held by her address
        assert await _refused(again, fresh, "it's me") == "chat_muted"
        await _rules(again, watchers={back.watcher: False})
        await _say(again, fresh, "thanks")
        stored, _ = await again.store.load_chat(again.room.match_id)
        assert stored is not None and "clients" not in stored and "left" not in stored

    run_table(tmp_path, body, bots=BOTS4)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("chat")).start()
    yield process
    process.stop()


def test_a_socket_gets_the_chat_on_joining_and_its_seat_is_slowed_down_past_its_allowance(
    server: ServerProcess,
) -> None:
    room = server.create_room(bots=[None, None, "easy", "easy", "easy"])
    tokens = [
        server.claim(room["code"], seat, name).json()["token"] for seat, name in ((0, "Ana"), (1, "Budi"))
    ]
    reply = httpx.put(
        f"{server.url}/api/rooms/{room['code']}/chat",
        json={"muted": {"1": True}},
        headers={"Authorization": "Bearer wrong"},
        timeout=10,
    )
    assert reply.status_code == 403
    reply = httpx.put(
        f"{server.url}/api/rooms/{room['code']}/chat",
        json={"spectators": "yes"},
        headers={"Authorization": f"Bearer {room['host_token']}"},
        timeout=10,
    )
    assert reply.status_code == 422  # a bad body changes nothing

    async def again(url: str, started: float) -> tuple[int, float]:
        """Ana on a new socket sends 5 more lines: how many the room took, and the seconds since
        the first line."""
        async with websockets.connect(url) as ana:
            await ana.send(json.dumps({"type": "hello", "token": tokens[0]}))
            await _until(ana, "chat_log")
            for n in range(5):
                await ana.send(json.dumps({"type": "chat", "text": f"again {n}"}))
            elapsed = time.monotonic() - started
            taken = refused = 0
            async with asyncio.timeout(60):
                while taken + refused < 5:
                    frame = json.loads(await ana.recv())
                    if frame["type"] == "chat" and frame["line"]["text"].startswith("again"):
                        taken += 1
                    elif frame["type"] == "error":
                        assert frame["code"] == "chat_too_fast", frame
                        refused += 1
            return taken, elapsed

    async def main() -> tuple[list[dict[str, Any]], list[dict[str, Any]], int, float]:
        url = f"{server.ws_base}/ws/rooms/{room['code']}"
        async with websockets.connect(url) as ana, websockets.connect(url) as budi:
            for ws, token in ((ana, tokens[0]), (budi, tokens[1])):
                await ws.send(json.dumps({"type": "hello", "token": token}))
            seen_ana = await _until(ana, "chat_log")
            await _until(budi, "chat_log")
            started = time.monotonic()
            for n in range(8):
                await ana.send(json.dumps({"type": "chat", "text": f"line {n}"}))
            seen_ana += await _until(ana, "error")
            seen_budi = await _until(budi, "chat", count=5)
        # the allowance is the seat's, not the socket's: a new socket does not refill it
        taken, elapsed = await again(url, started)
        return seen_ana, seen_budi, taken, elapsed

    seen_ana, seen_budi, taken, elapsed = asyncio.run(main())
    # 5 lines at once, then one more per 2 s (5 per 10 s); a fresh allowance would take all 5
    assert taken <= int(elapsed / 2) + 1 and taken < 5, (taken, elapsed)
    log = next(f for f in seen_ana if f["type"] == "chat_log")
    assert log["lines"] == [] and log["rules"] == {"spectators": False, "muted": [], "muted_spectators": []}
    error = next(f for f in seen_ana if f["type"] == "error")
    assert error["code"] == "chat_too_fast"
    assert [f["line"]["text"] for f in seen_budi if f["type"] == "chat"][:5] == [
        f"line {n}" for n in range(5)
    ]


def test_a_spectator_muted_over_http_stays_muted_on_a_new_socket(server: ServerProcess) -> None:
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"])
    code, api = room["code"], f"{server.url}/api/rooms/{room['code']}/chat"
    host_auth = {"Authorization": f"Bearer {room['host_token']}"}
    assert httpx.put(api, json={"spectators": True}, headers=host_auth, timeout=10).status_code == 200
    url = f"{server.ws_base}/ws/rooms/{code}"

    async def spectator(key: str | None = None) -> tuple[Any, dict[str, Any]]:
        ws = await websockets.connect(url)
        await ws.send(json.dumps({"type": "hello", "watcher": key} if key else {"type": "hello"}))
        welcome = (await _until(ws, "welcome"))[-1]
        await _until(ws, "chat_log")
        return ws, welcome

    async def say(ws: Any, text: str) -> dict[str, Any]:
        """The answer to a line: its ``chat`` frame, or the ``error``."""
        await ws.send(json.dumps({"type": "chat", "text": text}))
        async with asyncio.timeout(60):
            while True:
                frame: dict[str, Any] = json.loads(await ws.recv())
                if frame["type"] in ("chat", "error"):
                    return frame

    async def first() -> tuple[str, str]:
        ws, welcome = await spectator()
        line = (await say(ws, "boo"))["line"]
        assert line["watcher"] == welcome["tag"] and line["seat"] is None
        await ws.close()
        return welcome["watcher"], welcome["tag"]

    key, tag = asyncio.run(first())
    wrong = {"Authorization": "Bearer wrong"}
    assert (
        httpx.put(api, json={"muted_spectators": {tag: True}}, headers=wrong, timeout=10).status_code == 403
    )
    bad = httpx.put(api, json={"muted_spectators": {"<b>": True}}, headers=host_auth, timeout=10)
    assert bad.status_code == 422  # not a tag: nothing changes
    reply = httpx.put(api, json={"muted_spectators": {tag: True}}, headers=host_auth, timeout=10)
    assert reply.status_code == 200 and reply.json()["muted_spectators"] == [tag]

    async def later() -> None:
        back, welcome = await spectator(key)  # the key its browser kept: the same spectator
        assert (welcome["watcher"], welcome["tag"]) == (key, tag)
        assert (await say(back, "boo again"))["code"] == "chat_muted"
        fresh, _ = await spectator()  # a new key from the same address (a private window): the same person
        assert (await say(fresh, "hello"))["code"] == "chat_muted"
        for ws in (back, fresh):
            await ws.close()
        broken = await websockets.connect(url)  # a key out of form breaks the protocol
        await broken.send(json.dumps({"type": "hello", "watcher": "<script>"}))
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await _until(broken, "welcome")
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1007

    asyncio.run(later())


def test_a_chat_line_is_known_by_its_number_in_its_room(server: ServerProcess) -> None:
    """A security tester saw two fresh rooms' first lines carry ids 42 and 43: the database's
    counter of every room's lines, which tells anyone how much chat the whole server holds. Each
    room's lines are numbered 1, 2, … in it, and a socket that joins later gets the same numbers."""
    ids: list[list[int]] = []
    for _ in range(2):
        room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"])
        claim = server.claim(room["code"], 0, "Ana")
        assert claim.status_code == 201, claim.text
        ana = Client(server, room["code"], claim.json()["token"])
        try:
            ana.wait_for(lambda m: m["type"] == "chat_log")
            for text in ("hi", "anyone?"):
                ana.send({"type": "chat", "text": text})
                said = ana.wait_for(lambda m, text=text: m["type"] == "chat" and m["line"]["text"] == text)
            late = Client(server, room["code"])
            log = late.wait_for(lambda m: m["type"] == "chat_log")
            late.close()
        finally:
            ana.close()
        assert said["line"]["id"] == 2
        ids.append([line["id"] for line in log["lines"]])
    assert ids == [[1, 2], [1, 2]]


async def _until(ws: Any, kind: str, count: int = 1) -> list[dict[str, Any]]:
    """Frames from ``ws`` until ``count`` of type ``kind`` have come (bounded in time)."""
    seen: list[dict[str, Any]] = []
    async with asyncio.timeout(60):
        while sum(1 for f in seen if f["type"] == kind) < count:
            seen.append(json.loads(await ws.recv()))
    return seen


def test_an_open_table_is_listed_while_it_waits_with_someone_there(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        async def set_open(on: bool) -> None:
            async def run(room: Room) -> None:
                host.check_host(room, table.host_token)
                await host.set_open(room, on)

            await table.room.call(run)

        assert table.hub.open_tables() == []
        _, ana = await table.sit(0, "Ana")
        assert table.hub.open_tables() == []  # closed (the default): only its link opens it
        version = table.room.version
        await set_open(True)
        assert table.room.version == version + 1 and (await table.stored()).open_table is True
        assert ana.last_state["room"]["open"] is True
        await table.clock.advance(table.room, 90.0)
        (listed,) = table.hub.open_tables()
        assert listed == {
            "code": table.room.code,
            "variant": "domeng",
            "seats": 5,
            "pairs": False,
            "free": 2,
            "people": ["Ana"],
            "here": 1,
            "bots": ["greedy", "greedy"],
            "turn_timer_s": 0.0,
            "waiting_s": 90.0,
        }
        table.room.disconnect(ana)  # the room empties: it leaves the list
        await table.room.settled()
        assert table.hub.open_tables() == []
        budi, ana = await table.sit(1, "Budi")
        assert [t["people"] for t in table.hub.open_tables()] == [["Ana", "Budi"]]
        again = await reopen(table)  # the choice is stored: listed again once someone is there
        assert again.room.open_table is True and again.hub.open_tables() == []
        watcher = await again.watch()
        assert again.hub.open_tables() == []  # a spectator alone does not list it
        await again.watch(budi)
        assert len(again.hub.open_tables()) == 1
        again.room.disconnect(watcher)
        await again.start()
        assert again.hub.open_tables() == []  # started: no longer waiting for players
        with pytest.raises(RoomError) as late:
            await again.room.call(lambda r: host.set_open(r, False))
        assert late.value.code == "already_started"

    run_table(tmp_path, body, bots=[None, None, None, "greedy", "greedy"])


def _public_tag_collision(code: str) -> tuple[str, str]:
    """Two spectator keys whose tags collide under a tag a client could compute itself (8 hex
    digits of SHA-256 over the room's code and the key): by the birthday bound, about 80 000
    keys. (One key with a given spectator's tag takes about 2**32: minutes on a GPU.)"""
    seen: dict[str, str] = {}
    for n in range(1 << 21):
        key = f"forged-key-{n:08d}"
        tag = hashlib.sha256(f"{code}:{key}".encode()).hexdigest()[:8]
        if tag in seen:
            return seen[tag], key
        seen[tag] = key
    raise AssertionError("no collision in 2**21 keys")


def test_a_spectators_tag_cannot_be_forged_from_the_code_and_a_key(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        await table.sit(0, "Ana")
        await _rules(table, spectators=True)
        victim_key, forged_key = _public_tag_collision(table.room.code)
        victim, _, victim_tag = await _spectate(table, victim_key)
        forger, _, forged_tag = await _spectate(table, forged_key)
        # a key found offline from the code alone is another spectator, with a tag of its own:
        # it neither writes under the victim's tag nor drags the victim into its own mute
        assert forged_tag != victim_tag
        await _say(table, forger, "boo")
        await _rules(table, watchers={forged_tag: True})
        assert await _refused(table, forger, "boo again") == "chat_muted"
        await _say(table, victim, "hello")

    run_table(tmp_path, body, bots=BOTS4)


def test_carried_chat_copies_every_field_and_shares_the_lines() -> None:
    """Play again's chat (`ChatRoom.carried`): equal to the old match's in every field, each
    container its own (a mute added in the new match leaves the old one's as it was), the recent
    lines the same deque, which carry on."""
    old = chat.ChatRoom(
        spectators=True,
        muted={1},
        muted_spectators={"tag:aa"},
        clients={"c1": chat.MutedClient({"tag:aa"}, {"bb"})},
        speakers={"tag:aa": "c1"},
        seat_clients={1: "c2"},
        removed={"tag:cc"},
        removed_clients={"c3": {"tag:dd"}},
        seat_people={1: ("Ana", "tag:ee")},
        left={"tag:ee": "Ana"},
        seat_tags={1: "tag:ee"},
    )
    old.lines.append({"text": "hi", "match": 1})
    new = old.carried()
    assert new == old
    assert new.lines is old.lines
    for name in chat.ChatRoom.__dataclass_fields__:
        if name not in ("spectators", "lines"):
            assert getattr(new, name) is not getattr(old, name), name
    new.clients["c1"].by.add("tag:zz")
    new.removed_clients["c3"].add("tag:yy")
    new.muted.add(2)
    assert old.clients["c1"].by == {"tag:aa"} and old.removed_clients["c3"] == {"tag:dd"}
    assert old.muted == {1}
