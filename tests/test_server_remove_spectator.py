"""The host removes a spectator, through a real server's sockets: by the tag its chat lines carry,
every socket of that spectator closes with 4006 and a reason the page shows; other spectators and
the seats watch on; only the host may, and a spectator who is gone, or a tag that is none, is
refused with nothing closed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed

from app.rooms.chat import SPARED_PER_ADDRESS
from tests.serverkit import Client, ServerProcess, closed_with, live


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("remove-spectator")).start()
    yield process
    process.stop()


def _remove(server: ServerProcess, code: str, tag: str, token: str | None) -> httpx.Response:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    return httpx.delete(f"{server.url}/api/rooms/{code}/spectators/{tag}", headers=headers, timeout=10)


def _watching(server: ServerProcess, code: str, key: str | None = None) -> tuple[Client, str, str]:
    """A spectator's socket in room ``code`` (with the spectator ``key`` an earlier welcome gave),
    once admitted: the client, its tag and its key."""
    client = Client(server, code)
    if key is not None:  # the hello again, with the key: the same spectator in another tab
        client.close()
        client = Client(server, code, hello=False)
        client.send({"type": "hello", "protocol": 1, "token": None, "watcher": key})
    welcome = client.wait_for(lambda m: m["type"] == "welcome")
    client.wait_for(lambda m: m["type"] == "chat_log")
    return client, welcome["tag"], welcome["watcher"]


@pytest.fixture
def table(server: ServerProcess) -> Iterator[tuple[str, str, str, Client]]:
    """A waiting room: its code, host token, Ana's seat token at seat 0 and her socket."""
    room = server.create_room(bots=[None, None, "easy", "easy", "easy"])
    code = room["code"]
    token = server.claim(code, 0, "Ana").json()["token"]
    ana = Client(server, code, token)
    ana.wait_for(lambda m: m["type"] == "chat_log")
    yield code, room["host_token"], token, ana
    ana.close()


def test_the_host_removes_one_spectator_whose_every_tab_closes_with_the_reason(
    server: ServerProcess, table: Any
) -> None:
    code, host, _, ana = table
    rude, tag, key = _watching(server, code)
    rude_again, same_tag, _ = _watching(server, code, key)  # the same spectator's second tab
    assert same_tag == tag
    kind, kind_tag, _ = _watching(server, code)
    assert kind_tag != tag
    reply = _remove(server, code, tag, host)
    assert reply.status_code == 200 and reply.json() == {"removed": 2}, reply.text
    for removed in (rude, rude_again):
        assert closed_with(removed) == (4006, "the host removed you from this room")
    live(kind)  # another spectator, and the seat, watch on
    live(ana)
    # gone already: nothing more to remove
    again = _remove(server, code, tag, host)
    assert again.status_code == 404 and again.json()["detail"]["code"] == "no_such_spectator", again.text
    kind.close()


def test_only_the_host_removes_a_spectator_by_a_tag(server: ServerProcess, table: Any) -> None:
    code, host, seat_token, _ = table
    watcher, tag, _ = _watching(server, code)
    for token in (None, seat_token, "not-the-host"):
        refused = _remove(server, code, tag, token)
        assert refused.status_code == 403 and refused.json()["detail"]["code"] == "not_host", refused.text
    for bad in ("3FA9C1D2", "3fa9c1d", "xyz"):
        reply = _remove(server, code, bad, host)
        assert reply.status_code == 422 and reply.json()["detail"]["code"] == "bad_spectator", reply.text
    live(watcher)  # nothing closed
    watcher.close()


def test_a_removed_spectator_who_reloads_is_refused_with_the_same_close(
    server: ServerProcess, table: Any
) -> None:
    code, host, _, ana = table
    kind, _, kind_key = _watching(server, code)  # watching from the same address before: spared
    rude, tag, key = _watching(server, code)
    assert _remove(server, code, tag, host).status_code == 200
    assert closed_with(rude) == (4006, "the host removed you from this room")
    for hello_key in (key, None):  # a reload with its key, a private window with none
        back = Client(server, code, hello=False)
        back.send({"type": "hello", "protocol": 1, "token": None, "watcher": hello_key})
        assert closed_with(back) == (4006, "the host removed you from this room")
    kind.close()
    kind_again, _, _ = _watching(server, code, kind_key)  # the spared spectator comes back
    live(kind_again)
    live(ana)
    kind_again.close()


def test_a_removed_spectator_cannot_come_back_by_claiming_a_seat(server: ServerProcess, table: Any) -> None:
    code, host, _, ana = table
    kind, _, kind_key = _watching(server, code)  # watching from the same address before: spared
    rude, tag, key = _watching(server, code)
    assert _remove(server, code, tag, host).status_code == 200
    assert closed_with(rude) == (4006, "the host removed you from this room")
    claim = f"{server.url}/api/rooms/{code}/seats/1"
    for body in ({"name": "Rude", "watcher": key}, {"name": "Rude"}):  # its key, or a new window's none
        refused = httpx.post(claim, json=body, timeout=10)
        assert refused.status_code == 403, refused.text
        assert refused.json()["detail"]["code"] == "spectator_removed", refused.text
    seats = httpx.get(f"{server.url}/api/rooms/{code}", timeout=10).json()["seats"]
    assert seats[1]["kind"] == "empty"  # nothing changed
    taken = httpx.post(claim, json={"name": "Kind", "watcher": kind_key}, timeout=10)  # spared
    assert taken.status_code == 201, taken.text
    live(ana)
    kind.close()


def test_a_removed_spectator_cannot_come_back_through_the_keys_they_made_heard_before(
    server: ServerProcess, table: Any
) -> None:
    """A spectator's key is whatever its browser sends: one person can have many of them heard in
    the chat beforehand. The removal spares a household at its address, no more
    (`app.rooms.chat.SPARED_PER_ADDRESS`): the spectators watching then first, then those heard
    latest; every other key known from there stays out (before, each of them came back)."""
    code, host, _, ana = table
    server.let_spectators_chat(code, host)
    hosting = Client(server, code, host=host)
    made: list[str] = []  # keys the rude one made heard, one line each, then closed
    for n in range(SPARED_PER_ADDRESS + 1):
        spare, spare_tag, spare_key = _watching(server, code)
        spare.send({"type": "chat", "text": f"line {n}"})
        spare.wait_for(lambda m, t=spare_tag: m["type"] == "chat" and m["line"]["watcher"] == t)
        spare.close()
        made.append(spare_key)
    kind, kind_tag, kind_key = _watching(server, code)  # a housemate watching at the removal
    rude, tag, _ = _watching(server, code)
    watching = [{"tag": kind_tag, "name": "", "muted": False}, {"tag": tag, "name": "", "muted": False}]
    hosting.wait_for(lambda m: m["type"] == "spectators" and m["spectators"] == watching)
    assert _remove(server, code, tag, host).status_code == 200
    assert closed_with(rude) == (4006, "the host removed you from this room")
    live(kind)
    kind.close()
    kind_again, _, _ = _watching(server, code, kind_key)  # the housemate reloads: still spared
    came_back = []
    for key in made:
        back = Client(server, code, hello=False)
        back.send({"type": "hello", "protocol": 1, "token": None, "watcher": key})
        try:
            back.wait_for(lambda m: m["type"] == "welcome")
        except ConnectionClosed as closed:
            assert closed.rcvd is not None and closed.rcvd.code == 4006
            continue
        came_back.append(key)
        back.close()
    # the housemate, then the keys heard latest, up to the household
    assert came_back == made[-(SPARED_PER_ADDRESS - 1) :]
    live(kind_again)
    live(ana)
    kind_again.close()
    hosting.close()
