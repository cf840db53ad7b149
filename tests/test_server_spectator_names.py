"""A spectator's name in the chat, through a real server's sockets: a spectator names itself with a
``name`` message, checked as a seated player's name is, and its lines carry the name beside its
tag; a refused name leaves the one it had; a seat names itself only when it is claimed."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.browserkit import catalog_of, languages
from tests.serverkit import Client, ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("spectator-names")).start()
    yield process
    process.stop()


def _say(client: Client, text: str) -> dict[str, Any]:
    """The line ``client`` said, as the room sent it back (or the ``error`` that refused it)."""
    client.send({"type": "chat", "text": text})
    found = client.wait_for(
        lambda m: m["type"] == "error" or (m["type"] == "chat" and m["line"]["text"] == text)
    )
    return found["line"] if found["type"] == "chat" else found


def _name(client: Client, name: str | None) -> dict[str, Any]:
    """The room's answer to ``client`` taking ``name``: ``named`` or an ``error``."""
    client.send({"type": "name", "name": name})
    return client.wait_for(lambda m: m["type"] in ("named", "error"))


@pytest.fixture
def table(server: ServerProcess) -> Iterator[tuple[dict[str, Any], Client, Client, str]]:
    """A waiting room whose host lets spectators write: Ana at seat 0, a spectator (and its tag)."""
    room = server.create_room(bots=[None, None, "easy", "easy", "easy"])
    code = room["code"]
    token = server.claim(code, 0, "Ana").json()["token"]
    server.let_spectators_chat(code, room["host_token"])
    ana = Client(server, code, token)
    ana.wait_for(lambda m: m["type"] == "chat_log")
    watcher = Client(server, code)
    tag = watcher.wait_for(lambda m: m["type"] == "welcome")["tag"]
    watcher.wait_for(lambda m: m["type"] == "chat_log")
    try:
        yield room, ana, watcher, tag
    finally:
        ana.close()
        watcher.close()


def test_a_spectators_lines_carry_the_name_it_gave_beside_its_tag(table: Any) -> None:
    """Unnamed, a spectator's line has no name (as before); named, every line after carries the
    name, even the name of the seated player (the tag and the null seat still say a spectator)."""
    _, ana, watcher, tag = table
    assert _say(watcher, "hello")["name"] == ""
    assert _name(watcher, "Dewi") == {"type": "named", "name": "Dewi"}
    watcher.send({"type": "chat", "text": "halo"})
    line = ana.wait_for(lambda m: m["type"] == "chat" and m["line"]["text"] == "halo")["line"]
    assert (line["seat"], line["name"], line["watcher"]) == (None, "Dewi", tag)
    assert _name(watcher, "ana")["name"] == "ana"  # Ana's name, but never her seat
    line = _say(watcher, "it is me")
    assert (line["seat"], line["name"], line["watcher"]) == (None, "ana", tag)
    assert _name(watcher, None) == {"type": "named", "name": None}  # back to the tag alone
    assert _say(watcher, "bye")["name"] == ""


def test_a_spectators_welcome_says_the_server_takes_names(server: ServerProcess, table: Any) -> None:
    """A spectator's welcome carries ``name`` (null on a new socket): the page sends the name it
    keeps only when it is there, as a server from before ``name`` closes the socket on one (the page
    would reconnect and send it again, over and over). A seat's welcome has none."""
    room, _, _, _ = table
    watcher = Client(server, room["code"])
    try:
        welcome = watcher.wait_for(lambda m: m["type"] == "welcome")
        assert "name" in welcome and welcome["name"] is None
    finally:
        watcher.close()
    token = server.claim(room["code"], 1, "Budi").json()["token"]
    budi = Client(server, room["code"], token)
    try:
        assert "name" not in budi.wait_for(lambda m: m["type"] == "welcome")
    finally:
        budi.close()


def test_a_refused_name_says_why_and_keeps_the_name_held(table: Any) -> None:
    _, _, watcher, _ = table
    assert _name(watcher, "Dewi")["name"] == "Dewi"
    refused = {
        "   ": "name_empty",
        "D" * 33: "name_too_long",
        "\u202eDewi": "name_invisible",
        "Bot 3": "name_reserved",
        "Dewi (you)": "name_marked",
        "Dewi (spectator 3fa9c1d2)": "name_marked",  # "Dewi (spectator 3fa9c1d2) (spectator)"
        "Penonton 3fa9c1d2": "name_marked",  # how another spectator's lines read, unnamed
    }
    for name, code in refused.items():
        answer = _name(watcher, name)
        assert (answer["type"], answer["code"]) == ("error", code), name
    assert _say(watcher, "still me")["name"] == "Dewi"


def test_a_spectators_name_is_cleaned_and_limited_as_a_players(server: ServerProcess, table: Any) -> None:
    """What a spectator's name becomes is what the same typed name becomes at a seat: white space
    folded, 32 user-perceived characters at most (a joined emoji is one)."""
    room, _, watcher, _ = table
    for typed in ("  Dewi \t  Lestari ", "👩🏽‍💻" * 32):
        claimed = server.claim(room["code"], 1, typed)
        assert claimed.status_code == 201, claimed.text
        seated = httpx.get(f"{server.url}/api/rooms/{room['code']}").json()["seats"][1]["name"]
        assert _name(watcher, typed)["name"] == seated
        leave = f"{server.url}/api/rooms/{room['code']}/seats/1"
        auth = {"Authorization": f"Bearer {claimed.json()['token']}"}
        assert httpx.delete(leave, headers=auth).is_success
    assert _name(watcher, "👩🏽‍💻" * 33)["code"] == "name_too_long"


def _names_burst(clients: list[Client], names: int) -> tuple[int, float]:
    """Each client sends ``names`` names at once: how many the room took (each is answered,
    ``named`` or ``name_too_fast``), and the seconds the burst took."""
    started = time.monotonic()
    for n, client in enumerate(clients):
        for k in range(names):
            client.send({"type": "name", "name": f"Dewi {n}.{k}"})
    taken = 0
    for client in clients:
        for _ in range(names):
            answer = client.wait_for(lambda m: m["type"] in ("named", "error"))
            if answer["type"] == "named":
                taken += 1
            else:
                assert answer["code"] == "name_too_fast", answer
    return taken, time.monotonic() - started


def test_names_sent_too_fast_are_refused_apart_from_the_chats_allowance(
    server: ServerProcess, table: Any
) -> None:
    """Each name is checked in the room's task (look-alike skeletons and all): a spectator's are
    held to an allowance as its chat lines are, its own (10 at once, one more a second), and its
    address's across its sockets (20), apart from the chat's. (Any number went through: each
    socket's 10 messages a second, 32 sockets an address.)"""
    room, _, watcher, _ = table
    taken, elapsed = _names_burst([watcher], 15)
    assert 10 <= taken <= 10 + int(elapsed) + 1 and taken < 15, (taken, elapsed)
    assert _say(watcher, "my lines still go")["name"].startswith("Dewi 0.")  # the chat's own allowance
    others = [Client(server, room["code"]) for _ in range(3)]  # one address: new tags share its 20
    try:
        for other in others:
            other.wait_for(lambda m: m["type"] == "chat_log")
        taken, elapsed = _names_burst(others, 10)
        assert taken <= 20 - 10 + int(elapsed) + 1 and taken < 30, (taken, elapsed)
    finally:
        for other in others:
            other.close()


def test_a_seat_is_not_renamed_by_a_name_message(table: Any) -> None:
    _, ana, _, _ = table
    answer = _name(ana, "Queen")
    assert (answer["type"], answer["code"]) == ("error", "not_spectator")
    assert _say(ana, "still Ana")["name"] == "Ana"


def _bot_looks() -> dict[str, list[str]]:
    """Per language, names that read as a bot at its table: the tag of a bot's plate alone, in
    other cases and in brackets, and with each level after it in brackets or before it."""
    looks: dict[str, list[str]] = {}
    for lang in languages():
        words = catalog_of(lang)
        bot = str(words["seat.bot"])
        levels = [str(words[f"bot.{level}"]) for level in ("easy", "medium", "hard")]
        looks[lang] = [bot, bot.upper(), f"({bot.lower()})"]
        looks[lang] += [f"{bot} ({level})" for level in levels] + [
            f"{level.title()} {bot}" for level in levels
        ]
    return looks


def test_a_name_that_reads_as_a_bot_is_refused_at_a_seat_and_in_the_chat(
    table: Any, server: ServerProcess
) -> None:
    """A person named "Bot", "Bot (hard)" or "Hard bot" (or so in any of the client's languages)
    showed at the table as one of its bots: a seat's claim over HTTP and a spectator's ``name`` are
    refused with ``name_reserved``, and names that only start like it are taken. (The chat takes
    10 names per 10 s from a spectator: it is asked one of each language's, a different form each.)"""
    room, _, watcher, _ = table
    for n, (lang, names) in enumerate(_bot_looks().items()):
        for name in names:
            claimed = server.claim(room["code"], 1, name)
            refused = (claimed.status_code, claimed.json()["detail"]["code"])
            assert refused == (422, "name_reserved"), (lang, name)
        answer = _name(watcher, names[n * 2 % len(names)])
        assert (answer["type"], answer.get("code")) == ("error", "name_reserved"), (lang, answer)
    for name in ("Botak", "Bot Budi"):
        claimed = server.claim(room["code"], 1, name)
        assert claimed.status_code == 201, claimed.text
        auth = {"Authorization": f"Bearer {claimed.json()['token']}"}
        assert httpx.delete(f"{server.url}/api/rooms/{room['code']}/seats/1", headers=auth).is_success
    assert _name(watcher, "Botak") == {"type": "named", "name": "Botak"}
