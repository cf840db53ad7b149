"""The game server over real sockets: rooms, seats, play, resync, errors (issue 3)."""

from __future__ import annotations

import concurrent.futures
import contextlib
import hashlib
import json
import re
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import httpx
import pytest
from pydantic import ValidationError
from websockets.exceptions import ConnectionClosed, InvalidStatus

from app.edge.protocol import (
    CLOSE_INVALID,
    ActionMessage,
    HelloMessage,
    ProtocolError,
    parse_client_message,
)
from app.rooms.moves import refusal_message
from app.rooms.presence import CONNECTION_PATTERN
from app.web.documents import render_document
from app.web.settings import Settings
from engine.hashing import commitment_of
from engine.variants import make_rules
from tests.serverkit import Client, ServerProcess, closed_with, live, my_turn_to_place


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    env = {"DOMENG_TURN_TIMER_S": "0", "DOMENG_HELLO_TIMEOUT_S": "2"}
    proc = ServerProcess(tmp_path_factory.mktemp("server"), env=env).start()
    yield proc
    proc.stop()


def _room_with_one_human(server: ServerProcess, name: str = "Ana") -> tuple[str, str, str]:
    room = server.create_room(bots=[None, "greedy", "greedy", "greedy", "greedy"], turn_timer_s=0)
    claim = server.claim(room["code"], 0, name)
    assert claim.status_code == 201, claim.text
    started = server.start_match(room["code"], room["host_token"])
    assert started.status_code == 200, started.text
    return room["code"], claim.json()["token"], room["host_token"]


def test_create_room_gives_an_unguessable_code_and_a_share_link(server: ServerProcess) -> None:
    room = server.create_room()
    assert len(room["code"]) >= 22  # 16 random bytes, base64url
    assert room["url"].endswith(f"/r/{room['code']}")
    public = server.room(room["code"])
    assert public["status"] == "waiting"
    assert [s["kind"] for s in public["seats"]] == ["empty"] * 5
    assert httpx.get(f"{server.url}/api/rooms/nope", timeout=5).status_code == 404


def test_join_claims_a_seat_and_the_socket_shows_only_that_hand(server: ServerProcess) -> None:
    code, token, _ = _room_with_one_human(server)
    client = Client(server, code, token)
    welcome = client.recv()
    assert welcome == {"type": "welcome", "protocol": 1, "seat": 0, "connection": welcome["connection"]}
    assert re.fullmatch(CONNECTION_PATTERN, welcome["connection"])  # hello.resume's, docs/protocol.md
    state = client.recv()
    assert state["type"] == "state" and state["view"]["seat"] == 0
    assert len(state["view"]["hand"]) == 5 or state["view"]["phase"] != "playing" or state["view"]["log"]
    assert state["room"]["seats"][0] == {
        "seat": 0,
        "kind": "human",
        "name": "Ana",
        "bot_level": None,
        "connected": True,
        "covered": False,
        "stand_in": False,
        "ready": True,
    }
    assert len(state["room"]["round"]["commitment"]) == 64
    client.close()


def test_seat_race_has_exactly_one_winner(server: ServerProcess) -> None:
    room = server.create_room()
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        replies = list(pool.map(lambda i: server.claim(room["code"], 2, f"P{i}"), range(8)))
    assert sorted(r.status_code for r in replies) == [201] + [409] * 7
    loser = next(r for r in replies if r.status_code == 409)
    assert loser.json()["detail"]["code"] == "seat_taken"


def test_an_ipv6_client_is_one_client_per_64_for_rooms_and_sockets(tmp_path: Path) -> None:
    """Behind a trusted proxy, every address of one IPv6 /64 counts as one client for the room
    creation limit and the sockets per address (`app.addresses`); the next /64 is another."""
    env = {
        "DOMENG_FORWARDED_ALLOW_IPS": "127.0.0.1",  # a reverse proxy on this host says who the client is
        "DOMENG_ROOM_CREATE_LIMIT": "2 per minute",
        "DOMENG_MAX_SOCKETS_PER_ADDRESS": "2",
    }
    limited = ServerProcess(tmp_path, env=env).start()
    try:

        def create(client: str) -> httpx.Response:
            return httpx.post(
                f"{limited.url}/api/rooms", json={}, headers={"X-Forwarded-For": client}, timeout=5
            )

        assert [create(f"2001:db8:1:2::{i}").status_code for i in (1, 2)] == [201, 201]
        refused = create("2001:db8:1:2:ffff::9")  # a fresh address of the same /64
        assert refused.status_code == 429 and refused.json()["detail"]["code"] == "too_many_rooms"
        code = create("2001:db8:1:3::1").json()["code"]  # the next /64

        def watch(client: str) -> Client:
            return Client(limited, code, headers={"X-Forwarded-For": client})

        watchers = [watch(f"2001:db8:7:7::{i}") for i in (1, 2)]
        for watcher in watchers:
            watcher.wait_for(lambda m: m["type"] == "state")
        with pytest.raises(ConnectionClosed) as closed:
            watch("2001:db8:7:7:abcd::3").recv(timeout=5)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
        other = watch("2001:db8:7:8::1")
        assert other.wait_for(lambda m: m["type"] == "state")["room"]["code"] == code
        for watcher in [*watchers, other]:
            watcher.close()
    finally:
        limited.stop()


@pytest.mark.parametrize(
    ("name", "status", "code"),
    [
        ("Bot 4", 422, "name_reserved"),  # the table's label of seat 4's bot
        ("бот 2", 422, "name_reserved"),  # Russian and Ukrainian tables say "Бот 2"
        ("Seat 5", 422, "name_reserved"),  # an empty seat
        ("  ANA ", 409, "name_taken"),  # Ana sits at seat 0
        ("Ａｎａ", 409, "name_taken"),  # fullwidth letters are the same name (NFKC)
        ("Bot 3\ufe0f", 422, "name_reserved"),  # a variation selector shows nothing
        ("Bot 3\u115f", 422, "name_reserved"),  # nor does a Hangul filler
        ("Ana\u2800", 409, "name_taken"),  # nor a Braille blank
        ("Ána", 409, "name_taken"),  # an accent decorates the same name
        ("B\u043et 2", 422, "name_reserved"),  # a Cyrillic о looks like "Bot 2" (UTS #39 skeleton)
        ("\u0410na", 409, "name_taken"),  # a Cyrillic А looks like Ana
        ("x" * 33, 422, "name_too_long"),  # 33 user-perceived characters
        ("Ana\u202e", 422, "name_invisible"),  # a right-to-left override
        ("", 422, "name_empty"),
    ],
)
def test_a_name_that_would_pass_for_another_seat_is_refused(
    server: ServerProcess, name: str, status: int, code: str
) -> None:
    room = server.create_room(bots=[None, None, "greedy", "greedy", "greedy"])
    assert server.claim(room["code"], 0, "Ana").status_code == 201
    refused = server.claim(room["code"], 1, name)
    assert refused.status_code == status and refused.json()["detail"]["code"] == code
    assert server.room(room["code"])["seats"][1]["kind"] == "empty"  # nothing changed
    assert server.claim(room["code"], 1, "Botak").status_code == 201  # a name may start like one


def test_host_commands_need_the_host_token(server: ServerProcess) -> None:
    room = server.create_room()
    claim = server.claim(room["code"], 0, "Ana").json()
    for token in (None, claim["token"], "x" * 43):
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        reply = httpx.post(f"{server.url}/api/rooms/{room['code']}/start", headers=headers, timeout=5)
        assert reply.status_code == 403 and reply.json()["detail"]["code"] == "not_host"
    reply = httpx.put(
        f"{server.url}/api/rooms/{room['code']}/seats/3/bot",
        json={"level": "random"},
        headers={"Authorization": f"Bearer {room['host_token']}"},
        timeout=5,
    )
    assert reply.status_code == 200 and reply.json()["seats"][3]["bot_level"] == "random"


def test_play_to_the_round_end_with_the_fair_deal_revealed(server: ServerProcess) -> None:
    code, token, _ = _room_with_one_human(server)
    client = Client(server, code, token)
    seen_hands: list[list[str]] = []
    while True:
        message = client.wait_for(lambda m: m["type"] == "state" and m["view"] is not None)
        view = message["view"]
        if view["phase"] != "playing":
            break
        if message["view"]["round"] == 1 and view["hand"] is not None and not seen_hands:
            seen_hands.append(list(view["hand"]))
        if view["legal"]:
            client.send(
                {"type": "action", "version": message["version"], "action": _payload(view["legal"][0])}
            )
    outcome = view["outcome"]
    assert outcome["end"] in {"out", "ceki", "pollo", "block"}
    room = message["room"]
    seed, commitment = room["round"]["seed"], room["round"]["commitment"]
    assert hashlib.sha256(seed.encode()).hexdigest() == commitment
    deal = make_rules("domeng").deal_from_seed(seed)
    assert [str(t) for t in deal.hands[0]] == seen_hands[0]
    verify = httpx.get(
        f"{server.url}/api/deals/verify", params={"seed": seed, "commitment": commitment}, timeout=5
    )
    assert verify.json()["matches"] is True
    assert verify.json()["hands"] == [[str(t) for t in h] for h in deal.hands]
    client.close()


def test_updates_rebuild_the_whole_view_that_sync_sends(server: ServerProcess) -> None:
    """Updates carry the view without its log and only the new events; a client that keeps the
    log (`Client.recv`) holds, version by version, exactly the whole state that `sync` sends."""
    code, token, _ = _room_with_one_human(server)
    client = Client(server, code, token)
    previous: dict[str, Any] | None = None
    updates = compared = acted = 0
    while compared < 4:
        message = client.recv(timeout=20)
        if message["type"] != "state" or message["view"] is None:
            continue
        view = message["view"]
        if client.whole:
            assert message["events"] == [] and message["from"] == len(view["log"])
            if previous is not None and previous["version"] == message["version"]:
                assert view == previous["view"]
                compared += 1
        else:
            assert message["from"] + len(message["events"]) == len(view["log"])
            updates += 1
            if updates % 5 == 0 or view["phase"] != "playing":
                client.send({"type": "sync"})
        if view["legal"] and message["version"] > acted:  # whole states can bring the turn too
            acted = message["version"]
            client.send({"type": "action", "version": acted, "action": _payload(view["legal"][0])})
        previous = message
    client.close()


def _payload(action: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in action.items() if k != "seat"}


def test_stale_and_duplicate_actions_are_refused_and_change_nothing(server: ServerProcess) -> None:
    code, token, _ = _room_with_one_human(server)
    client = Client(server, code, token)
    message = client.wait_for(my_turn_to_place)
    version, legal = message["version"], message["view"]["legal"]
    client.send({"type": "action", "version": version - 1, "action": _payload(legal[0])})
    error = client.wait_for(lambda m: m["type"] == "error")
    assert error["code"] == "stale_version" and error["version"] == version
    assert "version" not in error["message"]  # a player's words; the numbers go to the log
    client.send({"type": "action", "version": version, "action": _payload(legal[0])})
    applied = client.wait_for(lambda m: m["type"] == "state" and m["version"] == version + 1)
    assert applied["events"][0]["seat"] == 0
    client.send({"type": "action", "version": version, "action": _payload(legal[0])})  # a duplicate
    error = client.wait_for(lambda m: m["type"] == "error")
    assert error["code"] in {"stale_version", "round_over"}
    client.close()


def test_illegal_action_gets_an_error_only_for_the_sender(server: ServerProcess) -> None:
    code, token, _ = _room_with_one_human(server)
    watcher = Client(server, code)
    client = Client(server, code, token)
    message = client.wait_for(my_turn_to_place)
    hand = message["view"]["hand"]
    legal_tiles = {a.get("play") for a in message["view"]["legal"]}
    bad = next((t for t in hand if t not in legal_tiles), None)
    action = {"play": bad, "end": "L"} if bad else {"play": "9-9"}
    client.send({"type": "action", "version": message["version"], "action": action})
    error = client.wait_for(lambda m: m["type"] == "error")
    assert error["code"] in {"does_not_fit", "wrong_opening_tile", "invalid_tile", "invalid_action"}
    assert error["version"] == message["version"]
    with pytest.raises(TimeoutError):
        watcher.wait_for(lambda m: m["type"] == "error", timeout=0.5)
    assert server.room(code)["version"] == message["version"]
    watcher.close()
    client.close()


_MISSHAPEN_ACTIONS = [
    {"pass": True, "end": "L"},  # a pass has no end: it was dropped unseen
    {"draw": True, "end": "R"},
    {"play": ["6-6", "5-5"], "end": "L"},  # two lempas go each on the end showing its number
    {"play": "6-6", "pass": True},
    {"play": "6-6", "end": None},  # an end is "L" or "R", or left out
    {"pass": False},
    {"play": ["6-6"]},
    {},
]


def test_an_action_of_no_shape_of_the_protocol_closes_the_socket_and_changes_nothing(
    server: ServerProcess,
) -> None:
    """docs/protocol.md: an action is one of its four shapes and nothing more; an extra field (an
    ``end`` beside a pass) is not dropped but breaks the protocol (1007), at the player's turn too."""
    code, token, _ = _room_with_one_human(server)
    turn = None
    for action in _MISSHAPEN_ACTIONS:
        client = Client(server, code, token)
        turn = client.wait_for(my_turn_to_place)
        client.send({"type": "action", "version": turn["version"], "action": action})
        with pytest.raises(ConnectionClosed) as closed:
            client.wait_for(lambda m: m["type"] == "error", timeout=10)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1007, action
    assert turn is not None and server.room(code)["version"] == turn["version"]


@pytest.mark.parametrize("action", _MISSHAPEN_ACTIONS)
def test_an_action_is_one_shape_alone(action: dict[str, Any]) -> None:
    frame = json.dumps({"type": "action", "version": 3, "action": action})
    with pytest.raises(ProtocolError) as broken:
        parse_client_message(frame)
    assert broken.value.close_code == CLOSE_INVALID


@pytest.mark.parametrize("play", [["1-1"], ["1-1", "2-2", "3-3"], ["1-1", 2], 5, {"tile": "1-1"}])
def test_a_play_of_neither_shape_is_told_what_a_play_is(play: object) -> None:
    """A ``play`` that is neither one tile nor two lempas gets the protocol's words in the close
    reason, not pydantic's message for its union ("constrained-str Input should be a valid string")."""
    frame = json.dumps({"type": "action", "version": 3, "action": {"play": play}})
    with pytest.raises(ProtocolError) as broken:
        parse_client_message(frame)
    assert broken.value.close_code == CLOSE_INVALID
    assert "play is one tile" in broken.value.reason and "constrained" not in broken.value.reason


@pytest.mark.parametrize(
    "action",
    [{"play": "3-6"}, {"play": "6-3", "end": "L"}, {"play": ["2-2", "5-5"]}, {"pass": True}, {"draw": True}],
)
def test_each_shape_of_an_action_parses(action: dict[str, Any]) -> None:
    message = parse_client_message(json.dumps({"type": "action", "version": 3, "action": action}))
    assert isinstance(message, ActionMessage)
    assert message.action.model_dump(by_alias=True, exclude_none=True) == action


def _log_lines(server: ServerProcess, event: str, count: int) -> list[str]:
    """The server log's first ``count`` lines of ``event``, waiting for them (its writes are the
    server's own, after the answer that the test has already read)."""
    deadline = time.monotonic() + 20
    while True:
        lines = [line for line in server.log().splitlines() if f'"{event}"' in line]
        if len(lines) >= count or time.monotonic() > deadline:
            return lines
        time.sleep(0.05)


def test_a_refused_move_says_why_in_a_players_words_and_logs_the_detail(server: ServerProcess) -> None:
    """A refusal carries the rule's stable code and a plain message (`app.rooms.moves.REFUSALS`),
    never the engine's developer words ("round 1, action 8, chain [4|2]"); those go to the
    server's log with the code, and the seat's token never does."""
    code, token, _ = _room_with_one_human(server)
    client = Client(server, code, token)
    message = client.wait_for(my_turn_to_place)
    hand = message["view"]["hand"]
    legal_tiles = {a.get("play") for a in message["view"]["legal"]}
    bad = next((t for t in hand if t not in legal_tiles), None)
    tries = [{"play": "9-9"}, {"play": "x"}, {"pass": True}] + ([{"play": bad, "end": "L"}] if bad else [])
    for action in tries:
        client.send({"type": "action", "version": message["version"], "action": action})
        error = client.wait_for(lambda m: m["type"] == "error")
        assert error["message"] == refusal_message(error["code"]), error
        assert not re.search(r"round \d|action \d|chain|\[|P\d|9-9", error["message"]), error
    logged = _log_lines(server, "action_refused", len(tries))
    mine = [json.loads(line) for line in logged if code in line]
    assert len(mine) == len(tries), logged
    assert any(line["code"] == "voluntary_pass" and "chain" in line["detail"] for line in mine), mine
    assert token not in server.log()
    client.close()


def test_reconnect_regains_the_seat_and_a_second_socket_replaces_the_first(server: ServerProcess) -> None:
    code, token, _ = _room_with_one_human(server)
    first = Client(server, code, token)
    before = first.wait_for(my_turn_to_place)
    second = Client(server, code, token)
    again = second.wait_for(lambda m: m["type"] == "state")
    assert again["view"]["hand"] == before["view"]["hand"]
    assert again["version"] == before["version"]
    with pytest.raises(ConnectionClosed) as closed:
        first.wait_for(lambda m: False, timeout=5)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4001
    second.close()


def _welcome(client: Client) -> dict[str, Any]:
    return client.wait_for(lambda m: m["type"] == "welcome")


def test_an_automatic_reconnect_does_not_take_the_seat_from_a_later_window(server: ServerProcess) -> None:
    """Window A's network drops; meanwhile the player opens window B, which takes the seat. A's
    automatic reconnect (``hello.resume``: the connection its welcome named) is closed as replaced,
    with the usual reason, and B keeps the seat; "Play here" (a fresh hello) takes it back."""
    code, token, _ = _room_with_one_human(server)
    first = Client(server, code, token)
    connection = _welcome(first)["connection"]
    first.wait_for(lambda m: m["type"] == "state")
    first.close()  # A's network drops
    window = Client(server, code, token)  # the player opens window B
    assert _welcome(window)["seat"] == 0
    window.wait_for(lambda m: m["type"] == "state")
    retry = Client(server, code, token, resume=connection)  # A's network is back: its retry
    assert closed_with(retry) == (4001, "this seat was opened in another window")
    live(window)  # B still holds the seat, and plays on
    here = Client(server, code, token)  # "Play here" in A: a fresh hello takes the seat
    assert _welcome(here)["seat"] == 0
    assert closed_with(window)[0] == 4001
    here.close()


def _seat_connected(connected: bool) -> Any:
    """A predicate: a ``presence`` frame telling that seat 0 is (or is not) connected."""
    return lambda m: m["type"] == "presence" and m["seats"][0]["connected"] is connected


def test_an_automatic_reconnect_gets_the_seat_back_once_the_later_window_closed(
    server: ServerProcess,
) -> None:
    """Window A's network drops; the player opens window B, then closes it. A's automatic
    reconnect (``hello.resume``) takes the seat back: only a later window still connected keeps it."""
    code, token, _ = _room_with_one_human(server)
    spectator = Client(server, code)  # sees the seat's connections come and go
    spectator.wait_for(lambda m: m["type"] == "state")
    first = Client(server, code, token)
    connection = _welcome(first)["connection"]
    first.wait_for(lambda m: m["type"] == "state")
    spectator.wait_for(_seat_connected(True))
    first.close()  # A's network drops
    spectator.wait_for(_seat_connected(False))
    window = Client(server, code, token)  # the player opens window B...
    assert _welcome(window)["seat"] == 0
    spectator.wait_for(_seat_connected(True))
    window.close()  # ...and closes it
    spectator.wait_for(_seat_connected(False))
    retry = Client(server, code, token, resume=connection)  # A's network is back: its retry
    welcome = _welcome(retry)
    assert welcome["seat"] == 0 and welcome["connection"] != connection
    retry.wait_for(lambda m: m["type"] == "state")
    live(retry)
    retry.close()
    spectator.close()


def test_an_automatic_reconnect_with_no_other_window_gets_the_seat_back(server: ServerProcess) -> None:
    """A reconnect that follows the seat's latest connection takes the seat: its old socket still
    open (a network that died without a word, not noticed yet) is replaced, and one reconnect after
    another each follows the one before."""
    code, token, _ = _room_with_one_human(server)
    first = Client(server, code, token)
    before = first.wait_for(my_turn_to_place)
    connection = first.messages[0]["connection"]
    retry = Client(server, code, token, resume=connection)  # while the server still holds the old socket
    welcome = _welcome(retry)
    assert welcome["seat"] == 0 and welcome["connection"] != connection
    assert retry.wait_for(lambda m: m["type"] == "state")["view"]["hand"] == before["view"]["hand"]
    assert closed_with(first)[0] == 4001
    retry.close()  # the network drops again, and nobody else said hello for the seat
    again = Client(server, code, token, resume=welcome["connection"])
    assert _welcome(again)["seat"] == 0
    assert again.wait_for(my_turn_to_place)["view"]["hand"] == before["view"]["hand"]
    live(again)
    again.close()


def test_a_spectators_welcome_names_no_connection(server: ServerProcess) -> None:
    code, _, _ = _room_with_one_human(server)
    spectator = Client(server, code)
    assert "connection" not in _welcome(spectator)
    spectator.close()


def test_reconnect_after_missed_versions_gets_what_it_missed(server: ServerProcess) -> None:
    """``hello.since``: a client that comes back gets only the events it missed while the server
    still has them (an update from where its log stopped), else the whole state; either way its
    view is then the server's (docs/protocol.md)."""
    room = server.create_room(bots=[None, "greedy", "greedy", "greedy", "greedy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    server.start_match(room["code"], room["host_token"])
    client = Client(server, room["code"], token)
    first = client.wait_for(lambda m: m["type"] == "state")
    client.close()
    # bots and forced passes move on while the player is away
    spectator = Client(server, room["code"])
    spectator.wait_for(lambda m: m["type"] == "state")
    back = Client(server, room["code"], hello=False)
    back.state = first  # what the client kept of the room
    back.send({"type": "hello", "protocol": 1, "token": token, "since": first["version"]})
    state = back.wait_for(lambda m: m["type"] == "state")
    assert state["version"] >= first["version"]
    assert state["view"]["seat"] == 0 and state["view"]["hand"] is not None
    if state["view"]["round"] == first["view"]["round"]:
        assert not back.whole and state["from"] <= len(state["view"]["log"])
    back.send({"type": "sync"})
    synced = back.wait_for(lambda m: m["type"] == "state" and back.whole)
    assert synced["version"] >= state["version"]
    if synced["version"] == state["version"]:
        assert synced["view"] == state["view"]
    spectator.close()
    back.close()


def test_spectator_sees_no_hand(server: ServerProcess) -> None:
    code, _, _ = _room_with_one_human(server)
    spectator = Client(server, code)
    assert spectator.recv()["seat"] is None
    state = spectator.wait_for(lambda m: m["type"] == "state")
    assert state["view"]["hand"] is None and state["view"]["legal"] == []
    spectator.close()


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        (b"\x00\x01", 1003),
        ("not json", 1007),
        ('{"type": "dance"}', 1007),
        ('{"type": "hello", "since": "3"}', 1007),  # a field of the wrong JSON type is not converted
        ('{"type": "hello", "token": 12345}', 1007),
        ('{"type": "hello", "protocol": true}', 1007),  # not the integer 1, though it equals 1
        ('{"type": "hello", "token": "x", "resume": "not a connection"}', 1007),
        ('{"type": "action", "version": 0, "action": {"play": "1-2"}}', 1008),  # before hello
        ("x" * 10_000, 1009),
    ],
)
def test_hostile_first_frames_close_the_socket(server: ServerProcess, frame: str | bytes, code: int) -> None:
    room = server.create_room()
    client = Client(server, room["code"], hello=False)
    client.ws.send(frame)
    with pytest.raises(ConnectionClosed) as closed:
        client.recv(timeout=5)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == code


@pytest.mark.parametrize(
    "frame",
    [
        '{"type": "action", "version": "1", "action": {"play": "1-2"}}',
        '{"type": "action", "version": true, "action": {"play": "1-2"}}',
        '{"type": "action", "version": 1.0, "action": {"play": "1-2"}}',
        '{"type": "action", "version": 1, "action": {"pass": 1}}',
        '{"type": "chat", "text": 5}',
        '{"type": "hello", "protocol": true}',
        '{"type": "hello", "protocol": 1.0}',
        '{"type": "hello", "protocol": "1"}',
        '{"type": "hello", "protocol": 2}',
        '{"type": "hello", "resume": 12345}',
        '{"type": "hello", "resume": ""}',
        '{"type": "hello", "resume": "9F3AC1D2E4B5A697"}',  # lowercase hex only
        '{"type": "hello", "resume": "9f3ac1d2e4b5a6970"}',  # 16 digits exactly
        '{"type": "hello", "resume": "9f3ac1d2e4b5a69"}',
    ],
)
def test_a_field_of_the_wrong_json_type_breaks_the_protocol(frame: str) -> None:
    """docs/protocol.md: a field with the wrong shape closes the socket with 1007; a string, a bool
    or a float where an integer belongs is not converted."""
    with pytest.raises(ProtocolError) as broken:
        parse_client_message(frame)
    assert broken.value.close_code == CLOSE_INVALID
    assert parse_client_message('{"type": "action", "version": 1, "action": {"pass": true}}')
    assert parse_client_message('{"type": "hello", "protocol": 1}')
    resumed = parse_client_message('{"type": "hello", "token": "kq1", "resume": "9f3ac1d2e4b5a697"}')
    assert isinstance(resumed, HelloMessage) and resumed.resume == "9f3ac1d2e4b5a697"


def test_a_socket_that_never_says_hello_is_closed(server: ServerProcess) -> None:
    room = server.create_room()
    client = Client(server, room["code"], hello=False)
    with pytest.raises(ConnectionClosed) as closed:
        client.recv(timeout=8)  # the fixture's server waits 2 s for hello
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
    assert "hello" in closed.value.rcvd.reason


def test_one_address_holds_a_bounded_number_of_sockets(tmp_path: Path) -> None:
    """DOMENG_MAX_SOCKETS_PER_ADDRESS: one socket past the cap is closed with 1008 and a reason;
    when one closes, its place is free again."""
    capped = ServerProcess(tmp_path, env={"DOMENG_MAX_SOCKETS_PER_ADDRESS": "3"}).start()
    try:
        code = capped.create_room()["code"]
        watchers = [Client(capped, code) for _ in range(3)]
        for watcher in watchers:
            watcher.wait_for(lambda m: m["type"] == "state")
        with pytest.raises(ConnectionClosed) as closed:
            Client(capped, code).recv(timeout=5)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
        assert "too many connections" in closed.value.rcvd.reason
        watchers.pop().close()
        deadline = time.monotonic() + 10  # the server counts the close when its handler ends
        while True:
            try:  # a socket refused at once may be closed before its hello goes out: inside the try
                again = Client(capped, code)
                assert again.wait_for(lambda m: m["type"] == "state", timeout=5)["room"]["code"] == code
                break
            except ConnectionClosed:
                assert time.monotonic() < deadline, "the closed socket's place never came free"
                time.sleep(0.1)
        for watcher in [*watchers, again]:
            watcher.close()
    finally:
        capped.stop()


def test_bad_token_and_flood_close_the_socket_and_leave_the_room_alone(server: ServerProcess) -> None:
    code, token, _ = _room_with_one_human(server)
    player = Client(server, code, token)
    before = player.wait_for(lambda m: m["type"] == "state")
    intruder = Client(server, code, "forged-token-forged-token")
    with pytest.raises(ConnectionClosed) as closed:
        intruder.recv(timeout=5)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4004
    flooder = Client(server, code)
    with pytest.raises(ConnectionClosed) as closed:
        for _ in range(200):
            flooder.send({"type": "ping"})
        flooder.wait_for(lambda m: False, timeout=5)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
    player.send({"type": "ping"})
    assert player.wait_for(lambda m: m["type"] == "pong")
    assert server.room(code)["version"] >= before["version"]
    player.close()


def test_health_readiness_and_metrics(server: ServerProcess) -> None:
    assert httpx.get(f"{server.url}/healthz", timeout=5).json() == {"status": "ok"}
    ready = httpx.get(f"{server.url}/readyz", timeout=5)
    assert ready.status_code == 200 and ready.json()["status"] == "ready"
    metrics = httpx.get(f"{server.url}/metrics", timeout=5).text
    for name in (
        "domeng_rooms",
        "domeng_connections",
        "domeng_actions_total",
        "domeng_action_broadcast_seconds",
    ):
        assert name in metrics


@pytest.mark.parametrize("path", ["/", "/r/no-such-room", "/static/js/main.js", "/api/rooms/no", "/admin"])
def test_every_http_response_carries_the_security_headers(server: ServerProcess, path: str) -> None:
    """Pages, assets, API errors and probes alike: only same-origin scripts, styles and sockets,
    never framed, never type-sniffed, and the room link stays on the site (app.web.middleware)."""
    headers = httpx.get(f"{server.url}{path}", timeout=5).headers
    csp = {part.split()[0]: part.split()[1:] for part in headers["content-security-policy"].split("; ")}
    assert csp["default-src"] == csp["script-src"] == csp["style-src"] == csp["connect-src"] == ["'self'"]
    assert csp["frame-ancestors"] == csp["object-src"] == csp["base-uri"] == ["'none'"]
    assert headers["x-frame-options"] == "DENY"
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "same-origin"
    assert headers["cross-origin-opener-policy"] == "same-origin"


def test_serve_uses_the_data_dir_for_sqlite(server: ServerProcess) -> None:
    """The module's server was given only ``--data-dir`` (no database URL): its SQLite file is there."""
    assert (server.data_dir / "domeng.sqlite3").exists()


def test_host_replaces_an_absent_player_with_a_bot(server: ServerProcess) -> None:
    code, token, host = _room_with_one_human(server)
    player = Client(server, code, token)
    player.wait_for(lambda m: m["type"] == "state")
    reply = httpx.put(
        f"{server.url}/api/rooms/{code}/seats/0/bot",
        json={"level": "random"},
        headers={"Authorization": f"Bearer {host}"},
        timeout=5,
    )
    assert reply.status_code == 200
    assert reply.json()["seats"][0] == {
        "seat": 0,
        "kind": "bot",
        "name": None,
        "bot_level": "random",
        "connected": True,
        "covered": False,
        "stand_in": False,
        "ready": True,
    }
    with pytest.raises(ConnectionClosed) as closed:
        player.wait_for(lambda m: False, timeout=5)
    # its own code, not a window's that took the seat (4001, "Play here"): the page says why
    assert closed.value.rcvd is not None
    assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (4007, "the host gave this seat to a bot")
    # the old token no longer opens the seat, and opened later (its person away when it happened)
    # it is told why, as the socket open then was (4007), not refused as a token never known (4004)
    again = Client(server, code, token)
    with pytest.raises(ConnectionClosed) as refused:
        again.recv(timeout=5)
    assert refused.value.rcvd is not None
    assert (refused.value.rcvd.code, refused.value.rcvd.reason) == (4007, "the host gave this seat to a bot")
    unknown = Client(server, code, "forged-token-forged-token")
    with pytest.raises(ConnectionClosed) as refused:
        unknown.recv(timeout=5)
    assert refused.value.rcvd is not None and refused.value.rcvd.code == 4004


def test_the_host_empties_a_present_players_seat_before_the_start(server: ServerProcess) -> None:
    """Not a bot's seat now: the socket closes as a left seat's (4005, the page watches on and may
    sit again), with the host's reason, never "the host gave this seat to a bot" (4007)."""
    room = server.create_room(bots=[None, "greedy", "greedy", "greedy", "greedy"])
    code = room["code"]
    player = Client(server, code, server.claim(code, 0, "Ana").json()["token"])
    player.wait_for(lambda m: m["type"] == "state")
    reply = httpx.put(
        f"{server.url}/api/rooms/{code}/seats/0/bot",
        json={"level": None},
        headers={"Authorization": f"Bearer {room['host_token']}"},
        timeout=5,
    )
    assert reply.status_code == 200 and reply.json()["seats"][0]["kind"] == "empty", reply.text
    with pytest.raises(ConnectionClosed) as closed:
        player.wait_for(lambda m: False, timeout=5)
    assert closed.value.rcvd is not None
    assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (4005, "the host emptied this seat")


def _actors_after(server: ServerProcess, code: str, version: int) -> set[str]:
    """Who made the actions room ``code`` stored past ``version`` (its SQLite file, read beside
    the running server: a write-ahead log lets a reader in)."""
    with contextlib.closing(sqlite3.connect(server.data_dir / "domeng.sqlite3")) as db:
        rows = db.execute(
            "SELECT a.actor FROM actions a JOIN matches m ON m.id = a.match_id"
            " WHERE m.code = ? AND a.version > ?",
            (code, version),
        ).fetchall()
    return {actor for (actor,) in rows}


def test_a_player_replaced_by_a_bot_cannot_act_any_more(tmp_path: Path) -> None:
    """Actions a socket sent around the host's swap are void once its seat is given away, even
    those stamped with the version the swap produced (they would fit the new turn otherwise)."""
    slow_bots = ServerProcess(tmp_path, env={"DOMENG_TURN_TIMER_S": "0", "DOMENG_BOT_DELAY_S": "2.5"}).start()
    try:
        for _ in range(2):
            code, token, host = _room_with_one_human(slow_bots)
            player = Client(slow_bots, code, token)
            turn = player.wait_for(my_turn_to_place, timeout=30)
            version, action = turn["version"], _payload(turn["view"]["legal"][0])

            def swap(code: str = code, host: str = host) -> int:
                reply = httpx.put(
                    f"{slow_bots.url}/api/rooms/{code}/seats/0/bot",
                    json={"level": "random"},
                    headers={"Authorization": f"Bearer {host}"},
                    timeout=5,
                )
                return reply.status_code

            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                swapped = pool.submit(swap)
                for _ in range(60):  # stamped with the swap's version, until the socket is closed
                    try:
                        player.send({"type": "action", "version": version + 1, "action": action})
                    except ConnectionClosed:
                        break
                    time.sleep(0.001)
                assert swapped.result() == 200
            # GET /api/rooms/{code} runs on the room's queue, after every action queued before it
            # (a frame read after the swap is void: its socket is closed): nothing a person did is
            # stored past the swap's version. On a busy machine the bot's 2.5 s delay may have run
            # out meanwhile, so the bot's own move may be stored there.
            room = slow_bots.room(code)
            assert room["version"] >= version + 1 and room["seats"][0]["kind"] == "bot"
            assert "human" not in _actors_after(slow_bots, code, version + 1)
    finally:
        slow_bots.stop()


@pytest.mark.parametrize(
    "body",
    [b'{"variant": "domeng", "bots": [NaN]}', b'{"variant": "\\ud800"}', b'{"turn_timer_s": Infinity}'],
)
def test_bodies_json_cannot_echo_get_a_422_not_a_500(server: ServerProcess, body: bytes) -> None:
    reply = httpx.post(
        f"{server.url}/api/rooms", content=body, headers={"Content-Type": "application/json"}, timeout=5
    )
    assert reply.status_code == 422, reply.text
    assert all(set(d) == {"loc", "msg", "type"} for d in reply.json()["detail"])


@pytest.mark.parametrize(
    "body",
    [
        {"options": {"camat_target": "1"}},  # a number as text is not a number
        {"options": {"two_lempas": "yes"}, "variant": "kozel"},  # nor "yes" a yes
        {"options": {"camat_target": True}},  # nor true a count
        {"turn_timer_s": 0.001},  # no time to play: 0 (off) or 5 to 600 s
        {"turn_timer_s": 4.9},
        {"turn_timer_s": 601},
        {"turn_timer_s": 30.5},  # whole seconds: never rounded to another timer
        {"turn_timer_s": 5.000001},
        {"turn_timer_s": "30"},  # numbers are JSON numbers
        {"turn_timer_s": False},
        {"variant": "kozel", "seats": "3"},
        {"variant": "kozel", "seats": 3.0},
    ],
)
def test_room_settings_of_the_wrong_kind_are_refused(server: ServerProcess, body: dict[str, Any]) -> None:
    reply = httpx.post(f"{server.url}/api/rooms", json=body, timeout=5)
    assert reply.status_code == 422, reply.text


def test_timers_of_0_and_5_to_600_seconds_are_accepted(server: ServerProcess) -> None:
    for seconds in (0, 5, 600, 30.0):
        assert server.room(server.create_room(turn_timer_s=seconds)["code"])["turn_timer_s"] == seconds


def test_a_turn_timer_of_a_fraction_of_a_second_is_refused_saying_so(server: ServerProcess) -> None:
    """30.5 s is refused with a clear 422 when a room is made, when its host changes it, and as
    the server's own default (the lobby's form starts from it), rather than kept or rounded."""
    made = httpx.post(f"{server.url}/api/rooms", json={"turn_timer_s": 30.5}, timeout=5)
    assert made.status_code == 422, made.text
    [detail] = made.json()["detail"]
    assert detail["loc"] == ["body", "turn_timer_s"] and "whole seconds" in detail["msg"]
    room = server.create_room()
    headers = {"Authorization": f"Bearer {room['host_token']}"}
    url = f"{server.url}/api/rooms/{room['code']}/options"
    changed = httpx.put(url, json={"turn_timer_s": 30.5}, headers=headers, timeout=5)
    assert changed.status_code == 422 and "whole seconds" in changed.text, changed.text
    assert server.room(room["code"])["turn_timer_s"] == 0  # the module's server: DOMENG_TURN_TIMER_S=0
    for setting in ("30.5", "2", "601"):
        with pytest.raises(ValidationError, match="whole seconds"):
            Settings(turn_timer_s=setting)
    assert Settings(turn_timer_s="45").turn_timer_s == 45


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"options": {"k" * 3000: True}}, "/api/rooms"),
        ({"k" * 3000: 1}, "/api/rooms"),
        ({"bots": ["k" * 3000] * 5}, "/api/rooms"),
        ({"options": {"camat_target": int("9" * 3000)}}, "/api/rooms"),
        ({"name": "Ana", "watcher": "k" * 3000}, "/api/rooms/{code}/seats/0"),
    ],
)
def test_a_refusal_repeats_at_most_a_little_of_a_huge_key_or_value(
    server: ServerProcess, body: dict[str, Any], path: str
) -> None:
    """A 3,000-character key or value is refused (422) with a clear answer that repeats at most
    the start of it (app.web.app.ECHO_CHARS), never the whole of it."""
    room = server.create_room()
    reply = httpx.post(f"{server.url}{path.format(code=room['code'])}", json=body, timeout=5)
    assert reply.status_code == 422, reply.text[:500]
    assert len(reply.text) < 600 and "k" * 41 not in reply.text and "9" * 301 not in reply.text, reply.text


def test_deal_verification_refuses_a_malformed_seed_or_commitment(server: ServerProcess) -> None:
    """A seed is what the server makes (64 lowercase hex digits), a commitment a SHA-256 (64 hex
    digits, either case): anything else is a 422 saying which and what it should be."""
    seed = "0123456789abcdef" * 4

    def verify(seed: str, commitment: str) -> httpx.Response:
        params = {"seed": seed, "commitment": commitment}
        return httpx.get(f"{server.url}/api/deals/verify", params=params, timeout=5)

    good = verify(seed, commitment_of(seed).upper())
    assert good.status_code == 200 and good.json()["matches"] is True, good.text
    for bad_seed in ("00", seed.upper(), seed[:-1], seed + "0", seed[:-1] + "g", " " + seed[1:]):
        reply = verify(bad_seed, commitment_of(seed))
        assert reply.status_code == 422, (bad_seed, reply.text)
        detail = reply.json()["detail"]
        assert detail["code"] == "invalid_seed" and "64 lowercase hex digits" in detail["message"]
    for bad_commitment in ("zz", "", commitment_of(seed)[:-1], commitment_of(seed) + "0", "z" * 64):
        reply = verify(seed, bad_commitment)
        assert reply.status_code == 422, (bad_commitment, reply.text)
        detail = reply.json()["detail"]
        assert detail["code"] == "invalid_commitment" and "64 hex digits" in detail["message"]


def test_a_request_body_over_64_kib_is_refused_unread(server: ServerProcess) -> None:
    """By its Content-Length, and when sent in chunks without one (app.web.middleware.BodyLimit)."""
    huge = b'{"variant": "domeng", "bots": [' + b"null, " * 20_000 + b"null]}"
    declared = httpx.post(
        f"{server.url}/api/rooms", content=huge, headers={"Content-Type": "application/json"}, timeout=5
    )
    chunked = httpx.post(
        f"{server.url}/api/rooms",
        content=(huge[i : i + 4096] for i in range(0, len(huge), 4096)),
        headers={"Content-Type": "application/json"},
        timeout=5,
    )
    for reply in (declared, chunked):
        assert reply.status_code == 413, reply.text
        assert reply.json()["detail"]["code"] == "body_too_large"
        assert "content-security-policy" in reply.headers
    assert "content-length" not in chunked.request.headers


def test_a_name_is_measured_once_its_spaces_are_folded(server: ServerProcess) -> None:
    room = server.create_room()
    assert server.claim(room["code"], 0, "a" + " " * 40 + "b").status_code == 201
    assert server.room(room["code"])["seats"][0]["name"] == "a b"


def test_a_body_sent_to_a_page_that_does_not_read_it_is_no_error(server: ServerProcess) -> None:
    """The page's reply is chosen before the body arrives: the body limit lets the rest go."""
    before = server.log().count("Exception in ASGI application")
    reply = httpx.request("GET", f"{server.url}/", content=(b"x" * 4096 for _ in range(20)), timeout=5)
    assert reply.status_code == 200 and "content-security-policy" in reply.headers
    time.sleep(0.3)  # the server logs a failed request after it has answered
    assert server.log().count("Exception in ASGI application") == before


def test_too_many_rooms_from_one_address_says_when_to_come_back(tmp_path: Path) -> None:
    limited = ServerProcess(tmp_path, env={"DOMENG_ROOM_CREATE_LIMIT": "2 per minute"}).start()
    try:
        for _ in range(2):
            assert httpx.post(f"{limited.url}/api/rooms", json={}, timeout=5).status_code == 201
        refused = httpx.post(f"{limited.url}/api/rooms", json={}, timeout=5)
        assert refused.status_code == 429 and refused.json()["detail"]["code"] == "too_many_rooms"
        assert 1 <= int(refused.headers["retry-after"]) <= 60
    finally:
        limited.stop()


@pytest.mark.parametrize(
    ("name", "status", "code"),
    [
        ("  Ana   Sari ", 201, None),
        ("👩🏽‍💻 Sari", 201, None),  # a joined emoji with a skin tone
        ("🙂" * 32, 201, None),  # 32 user-perceived characters, 64 UTF-16 units
        ("", 422, "name_empty"),
        ("   ", 422, "name_empty"),
        ("a\u200bb", 422, "name_invisible"),  # zero-width space
        ("\u3164", 422, "name_blank"),  # Hangul filler: printable, shows nothing
        ("\u2800\u2800", 422, "name_blank"),  # Braille blank
        (" \u0301", 422, "name_blank"),  # a lone combining mark
        ("x" * 33, 422, "name_too_long"),
        ("y" * 2000, 422, None),  # far too long to read: refused by the body's schema
    ],
)
def test_seat_names_must_be_visible(server: ServerProcess, name: str, status: int, code: str | None) -> None:
    room = server.create_room()
    reply = server.claim(room["code"], 0, name)
    assert reply.status_code == status, reply.text
    if code is not None:
        # a reason code the client words in the player's language, never a validator's text
        assert reply.json()["detail"]["code"] == code
        assert "Value error" not in reply.text
    if status == 201:
        assert server.room(room["code"])["seats"][0]["name"] == " ".join(name.split())
    else:
        assert server.room(room["code"])["seats"][0]["kind"] == "empty"


def test_room_settings_are_checked_before_anything_is_stored(server: ServerProcess) -> None:
    for body, code in (
        ({"bots": ["god", None, None, None, None]}, "unknown_bot"),
        ({"options": {"camat_target": 10**20}}, "invalid_options"),
        ({"options": {"spinner": True}}, "invalid_options"),
        ({"variant": "poker"}, "unknown_variant"),
    ):
        reply = httpx.post(f"{server.url}/api/rooms", json=body, timeout=5)
        assert reply.status_code == 422, body
        assert reply.json()["detail"]["code"] == code, body


def test_share_link_never_comes_from_the_host_header(server: ServerProcess) -> None:
    # a name the server answers to (DOMENG_ALLOWED_HOSTS: the loopback names) other than its URL's
    reply = httpx.post(f"{server.url}/api/rooms", json={}, headers={"Host": "localhost:9"}, timeout=5)
    assert reply.status_code == 201
    assert reply.json()["url"] == f"/r/{reply.json()['code']}"


def test_the_rules_page_serves_the_rulebook_and_the_record_format(server: ServerProcess) -> None:
    """docs/rules.md and docs/record.md are the repository's own documents, linked from the README
    and served for the rules page; nothing else under that path is."""
    root = Path(__file__).resolve().parents[1]
    for name, marker in (("rules", "**Leader (D11).**"), ("record", '"format": "domeng-record/1"')):
        reply = httpx.get(f"{server.url}/rules/{name}.md", timeout=5)
        assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/markdown")
        document = (root / "docs" / f"{name}.md").read_text(encoding="utf-8")
        assert marker in reply.text and reply.text == document
    # the same documents as pages to read (the rules page links these): rendered, in the site's
    # style, and the source's own markup is shown as text, never passed through
    markers = {"rules": "<strong>Leader (D11).</strong>", "record": "<h1>The match record format"}
    for name, marker in markers.items():
        page = httpx.get(f"{server.url}/rules/{name}", timeout=5)
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert marker in page.text and "/static/css/app.css" in page.text
        assert "<script" not in page.text
    assert "<table>" in httpx.get(f"{server.url}/rules/rules", timeout=5).text  # the rules' tables
    # their links to each other lead to these pages, and none leads to a document not served here
    for name in markers:
        for href in re.findall(r'href="([^"]+)"', httpx.get(f"{server.url}/rules/{name}", timeout=5).text):
            if not href.startswith(("http://", "https://", "#")):
                linked = httpx.get(f"{server.url}{urljoin(f'/rules/{name}', href)}", timeout=5)
                assert linked.status_code == 200, (name, href)
                assert not linked.headers["content-type"].startswith("text/markdown"), (name, href)
    for path in ("/rules/engine.md", "/rules/..%2Fpyproject.md", "/rules/admin.md", "/rules/admin"):
        assert httpx.get(f"{server.url}{path}", timeout=5).status_code == 404
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert "(docs/rules.md)" in readme and "(docs/record.md)" in readme
    assert "--port" in readme  # the quick start says how to pick a port
    for text in (readme, (root / "docs" / "rules.md").read_text(encoding="utf-8")):
        assert "/work/" not in text and "team's" not in text and "seeds/" not in text


DEVELOPER_PHRASES = (
    "use these words in code",
    "engine/",
    "engine.md",
    "tests/",
    "test_",
    "docstring",
    "For developers",
    "camat_target",
    "test positions",
    "developers --",
)
"""What a player reading the whole rulebook (``/rules/rules``) must not meet: notes for the code."""


def test_the_rulebook_page_players_read_holds_no_notes_for_developers(server: ServerProcess) -> None:
    """A player found "The whole rulebook" written for developers ("use these words in code…",
    engine/ paths): the page leaves out what docs/rules.md keeps between its ``developers``
    comments; the Markdown served for tools keeps it, and the page keeps every rule."""
    page = httpx.get(f"{server.url}/rules/rules", timeout=5)
    assert page.status_code == 200
    for phrase in DEVELOPER_PHRASES:
        assert phrase.casefold() not in page.text.casefold(), phrase
    assert "<h2>Glossary</h2>" in page.text and "<h3>Worked examples</h3>" in page.text
    assert "(D11)" in page.text and "(K9)" in page.text and "No limit" in page.text
    source = httpx.get(f"{server.url}/rules/rules.md", timeout=5).text
    assert "use these words in code" in source and "tests/test_kozel_examples.py" in source


def test_a_document_page_leaves_out_notes_for_developers() -> None:
    source = (
        "# T\n\nRule.\n<!-- developers -->\nSee `engine/`.\n<!-- /developers -->\n\n"
        "## A<!-- developers --> (x)<!-- /developers -->\n"
    )
    page = render_document(source, "T")
    assert "engine/" not in page and "(x)" not in page and "developers" not in page
    assert "<p>Rule.</p>" in page and "<h2>A</h2>" in page


def test_a_document_page_shows_markup_in_its_source_as_text() -> None:
    page = render_document("# T\n\n<script>alert(1)</script>\n\n| a | b |\n|---|---|\n| 1 | 2 |\n", "X <y>")
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "<table>" in page and "<title>X &lt;y&gt; · Domeng Online</title>" in page


def test_a_document_page_links_its_siblings_pages_and_never_a_document_not_served() -> None:
    source = "See [r](record.md#x), [*e*](engine.md) and [w](https://e.example/a.md)."
    page = render_document(source, "T", {"record"})
    assert '<a href="/rules/record#x">r</a>' in page  # the page to read, not the Markdown
    assert "<em>e</em> and" in page and "engine.md" not in page  # its words, no link to a 404
    assert '<a href="https://e.example/a.md">w</a>' in page  # elsewhere: as written


def test_a_player_leaves_the_seat_before_the_start_over_http(server: ServerProcess) -> None:
    room = server.create_room(bots=[None, None, "greedy", "greedy", "greedy"], turn_timer_s=0)
    code = room["code"]
    ana = server.claim(code, 0, "Ana").json()["token"]
    budi = server.claim(code, 1, "Budi").json()["token"]
    socket = Client(server, code, ana)
    socket.wait_for(lambda m: m["type"] == "state")

    def leave(seat: int, token: str | None) -> httpx.Response:
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        return httpx.delete(f"{server.url}/api/rooms/{code}/seats/{seat}", headers=headers, timeout=5)

    assert leave(0, None).status_code == 403
    assert leave(0, budi).json()["detail"]["code"] == "not_your_seat"
    reply = leave(0, ana)
    assert reply.status_code == 200 and reply.json()["seats"][0]["kind"] == "empty"
    with pytest.raises(ConnectionClosed) as closed:
        socket.wait_for(lambda m: False, timeout=5)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4005
    assert server.claim(code, 0, "Cita").status_code == 201  # the seat is free again
    assert server.start_match(code, room["host_token"]).status_code == 200
    late = leave(1, budi)
    assert late.status_code == 409 and late.json()["detail"]["code"] == "already_started"
    assert server.room(code)["seats"][1]["kind"] == "human"


def test_play_again_and_options_refuse_what_they_must(server: ServerProcess) -> None:
    """Play again only at a match's end and only for a seat's or the host's token; the options
    only for the host, only before the start, only as the variant allows them (issue 14)."""
    room = server.create_room(bots=[None, "greedy", "greedy", "greedy", "greedy"], turn_timer_s=0)
    code, host = room["code"], room["host_token"]
    token = server.claim(code, 0, "Ana").json()["token"]

    def again(bearer: str) -> httpx.Response:
        headers = {"Authorization": f"Bearer {bearer}"}
        return httpx.post(f"{server.url}/api/rooms/{code}/again", headers=headers, timeout=5)

    def options(body: dict[str, Any], bearer: str = host) -> httpx.Response:
        headers = {"Authorization": f"Bearer {bearer}"}
        return httpx.put(f"{server.url}/api/rooms/{code}/options", json=body, headers=headers, timeout=5)

    for bearer in (token, host):  # the room's first match has not started: nothing to play again
        early = again(bearer)
        assert (early.status_code, early.json()["detail"]["code"]) == (409, "not_started"), early.text
    assert options({"options": {"camat_target": 3}}, token).json()["detail"]["code"] == "not_host"
    refused = options({"options": {"camat_target": -1}})
    assert (refused.status_code, refused.json()["detail"]["code"]) == (422, "invalid_options")
    assert options({"options": {}, "turn_timer_s": 2}).status_code == 422  # 0, or 5 to 600 s
    changed = options({"options": {"camat_target": 3}, "turn_timer_s": 45})
    assert changed.status_code == 200, changed.text
    assert (changed.json()["options"], changed.json()["turn_timer_s"]) == ({"camat_target": 3}, 45)
    assert server.start_match(code, host).status_code == 200
    late = options({"options": {"camat_target": 1}})
    assert (late.status_code, late.json()["detail"]["code"]) == (409, "already_started")
    playing = again(token)
    assert (playing.status_code, playing.json()["detail"]["code"]) == (409, "not_finished")
    stranger = again("not-a-token")
    assert (stranger.status_code, stranger.json()["detail"]["code"]) == (403, "again_refused")
    assert server.room(code)["match"] == 1


@pytest.mark.parametrize(
    "query",
    [
        "",
        "codes=",
        "codes=a,,b",
        "codes=a%20b",
        "codes=a/b",
        "codes=" + ",".join("abcdefghi"),
        "codes=" + "x" * 65,
    ],
    ids=["none", "empty", "empty-code", "space", "slash", "nine", "too-long"],
)
def test_the_status_read_refuses_what_is_not_up_to_8_room_codes(server: ServerProcess, query: str) -> None:
    """``GET /api/rooms/status`` (the lobby's "Your tables") answers 1 to 8 room codes, nothing else."""
    reply = httpx.get(f"{server.url}/api/rooms/status?{query}", timeout=10)
    assert reply.status_code == 422, reply.text


def test_the_status_read_answers_8_codes_and_null_for_the_unknown(server: ServerProcess) -> None:
    room = server.create_room(variant="kozel", seats=3, bots=[None, None, "easy"])
    codes = [room["code"], *"abcdefg"]
    rooms = httpx.get(f"{server.url}/api/rooms/status", params={"codes": ",".join(codes)}, timeout=10).json()
    assert rooms == {"rooms": {**dict.fromkeys(codes), room["code"]: rooms["rooms"][room["code"]]}}
    assert rooms["rooms"][room["code"]] == {
        "code": room["code"],
        "match": 1,
        "variant": "kozel",
        "options": {"two_lempas": True, "pairs": False},  # what "Your tables" names a Kozel row by
        "status": "waiting",
        "seats": [
            {"seat": 0, "kind": "empty", "name": None, "bot_level": None},
            {"seat": 1, "kind": "empty", "name": None, "bot_level": None},
            {"seat": 2, "kind": "bot", "name": None, "bot_level": "easy"},
        ],
    }


def test_a_socket_opened_from_another_sites_page_is_refused(server: ServerProcess) -> None:
    """A page elsewhere cannot make its visitors' browsers open room sockets here (and spend their
    address's socket cap, or fill a room's spectators): a handshake whose ``Origin`` is another
    site gets 403; the server's own pages and clients that send no ``Origin`` are served."""
    room = server.create_room(variant="kozel", seats=2, bots=[None, "easy"])
    with pytest.raises(InvalidStatus) as refused:
        Client(server, room["code"], headers={"Origin": "https://evil.example"})
    assert refused.value.response.status_code == 403
    ours = server.url.replace("http://", "https://")  # the scheme is not compared, host and port are
    for headers in ({"Origin": ours}, None):
        assert (
            Client(server, room["code"], headers=headers).wait_for(lambda m: m["type"] == "welcome")["seat"]
            is None
        )
