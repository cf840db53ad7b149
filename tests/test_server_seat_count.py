"""The host sets a Kozel table's number of seats before the start (``PUT /api/rooms/{code}/options``
with ``seats``, docs/protocol.md; RULES.md K1: 2 to 4 players): new seats are added empty at the
end, the lobby counts them free, a person's seat never goes; pairs need 4 seats (K10); Domeng's
table stays 5; after Play again the next match may be larger, is stored so (a restart keeps it),
and its record says how many played."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.store import Store, sqlite_url
from tests.conftest import domeng_cli
from tests.serverkit import Client, ServerProcess, play_to_match_over


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    proc = ServerProcess(tmp_path_factory.mktemp("seat-count"), env={"DOMENG_TURN_TIMER_S": "0"}).start()
    yield proc
    proc.stop()


def _put(server: ServerProcess, code: str, body: dict[str, Any], bearer: str) -> httpx.Response:
    headers = {"Authorization": f"Bearer {bearer}"}
    return httpx.put(f"{server.url}/api/rooms/{code}/options", json=body, headers=headers, timeout=10)


def _kinds(room: dict[str, Any]) -> list[tuple[int, str, str | None]]:
    return [(s["seat"], s["kind"], s["name"] or s["bot_level"]) for s in room["seats"]]


def _free(server: ServerProcess, code: str) -> int | None:
    tables = httpx.get(f"{server.url}/api/open-tables", timeout=10).json()["tables"]
    return next((t["free"] for t in tables if t["code"] == code), None)


def test_the_host_grows_a_kozel_table_and_a_new_person_takes_the_new_seat(server: ServerProcess) -> None:
    """3 seats → 4: stored with a new version, every socket gets the 4-seat state, the lobby counts
    one more free seat, the new seat is claimed and the match deals to 4 (K1: 5 tiles each)."""
    room = server.create_room(variant="kozel", seats=3, bots=[None, "easy", None], turn_timer_s=0)
    code, host = room["code"], room["host_token"]
    ana = Client(server, code, server.claim(code, 0, "Ana").json()["token"])
    ana.wait_for(lambda m: m["type"] == "state")
    assert _put(server, code, {"options": {}}, host).status_code == 200  # nothing of the seats said
    assert httpx.put(
        f"{server.url}/api/rooms/{code}/open",
        json={"open": True},
        headers={"Authorization": f"Bearer {host}"},
        timeout=10,
    ).is_success
    before = ana.wait_for(lambda m: m["type"] == "state" and m["room"]["open"])
    assert len(before["room"]["seats"]) == 3 and _free(server, code) == 1

    grown = _put(server, code, {"seats": 4}, host)
    assert grown.status_code == 200, grown.text
    assert _kinds(grown.json()) == [
        (0, "human", "Ana"),
        (1, "bot", "easy"),
        (2, "empty", None),
        (3, "empty", None),
    ]
    told = ana.wait_for(lambda m: m["type"] == "state" and len(m["room"]["seats"]) == 4)
    assert told["version"] == before["version"] + 1
    assert told["room"]["options"] == {"two_lempas": True, "pairs": False}
    assert _free(server, code) == 2

    dewi = server.claim(code, 3, "Dewi")
    assert dewi.status_code == 201, dewi.text
    assert server.start_match(code, host).status_code == 200
    dealt = ana.wait_for(lambda m: m["type"] == "state" and m["view"] is not None)
    assert len(dealt["view"]["hand_counts"]) == 4 and len(dealt["view"]["hand"]) == 5
    assert [s["kind"] for s in server.room(code)["seats"]] == ["human", "bot", "bot", "human"]
    late = _put(server, code, {"seats": 3}, host)
    assert (late.status_code, late.json()["detail"]["code"]) == (409, "already_started")
    ana.close()


def test_a_table_shrinks_past_bots_and_empty_seats_never_past_a_person(server: ServerProcess) -> None:
    """4 seats → 2: the bot and the empty seat at the end go. A person past the new count: 409
    ``seat_taken`` naming their seat, and nothing changes (not the seats, options or version)."""
    room = server.create_room(variant="kozel", seats=4, bots=[None, None, "hard", None], turn_timer_s=0)
    code, host = room["code"], room["host_token"]
    assert server.claim(code, 1, "Budi").status_code == 201
    dewi = server.claim(code, 3, "Dewi").json()["token"]
    before = server.room(code)

    refused = _put(server, code, {"seats": 3, "options": {"two_lempas": False}, "turn_timer_s": 60}, host)
    assert (refused.status_code, refused.json()["detail"]["code"]) == (409, "seat_taken"), refused.text
    assert "seat 3 (Dewi)" in refused.json()["detail"]["message"]
    assert server.room(code) == before

    left = httpx.delete(
        f"{server.url}/api/rooms/{code}/seats/3",
        headers={"Authorization": f"Bearer {dewi}"},
        timeout=10,
    )
    assert left.status_code == 200, left.text
    shrunk = _put(server, code, {"seats": 2}, host)
    assert shrunk.status_code == 200, shrunk.text
    assert _kinds(shrunk.json()) == [(0, "empty", None), (1, "human", "Budi")]
    assert server.claim(code, 2, "Citra").json()["detail"]["code"] == "no_such_seat"


def test_pairs_need_four_seats_and_domeng_stays_five(server: ServerProcess) -> None:
    """A pairs table does not shrink while it keeps pairs (422 ``invalid_options``, K10; the options
    left out are the room's own); with pairs off in the same change it does. Domeng's table is 5
    (D10) and Kozel's 2 to 4 (K1): ``invalid_seats``; only the host or the deputy may."""
    room = server.create_room(variant="kozel", seats=4, options={"pairs": True}, turn_timer_s=0)
    code, host = room["code"], room["host_token"]
    kept = _put(server, code, {"seats": 3}, host)
    assert (kept.status_code, kept.json()["detail"]["code"]) == (422, "invalid_options"), kept.text
    assert "pairs need 4 seats" in kept.json()["detail"]["message"]
    both = _put(server, code, {"seats": 3, "options": {"pairs": True}}, host)
    assert (both.status_code, both.json()["detail"]["code"]) == (422, "invalid_options")
    for seats in (5, 1, 6):
        wrong = _put(server, code, {"seats": seats}, host)
        assert wrong.status_code == 422, wrong.text
    assert _put(server, code, {"seats": 5}, host).json()["detail"]["code"] == "invalid_seats"
    assert len(server.room(code)["seats"]) == 4 and server.room(code)["options"]["pairs"] is True
    token = server.claim(code, 0, "Ana").json()["token"]
    assert _put(server, code, {"seats": 3}, token).json()["detail"]["code"] == "not_host"
    off = _put(server, code, {"seats": 3, "options": {"pairs": False}}, host)
    assert off.status_code == 200, off.text
    assert (len(off.json()["seats"]), off.json()["options"]["pairs"]) == (3, False)

    domeng = server.create_room(turn_timer_s=0)
    for seats in (4, 3):
        refused = _put(server, domeng["code"], {"seats": seats}, domeng["host_token"])
        assert (refused.status_code, refused.json()["detail"]["code"]) == (422, "invalid_seats"), refused.text
        assert "Domeng is played by 5 seats" in refused.json()["detail"]["message"]
    assert len(server.room(domeng["code"])["seats"]) == 5


def test_any_seat_count_a_variant_refuses_gets_its_own_clear_error(server: ServerProcess) -> None:
    """A trial: ``{"variant": "kozel", "seats": 7}`` was answered with pydantic's "Input should be
    less than or equal to 5" while ``"seats": 5`` got ``invalid_seats`` saying Kozel is played by 2,
    3 or 4 seats. Every count a variant refuses, at creation or set by the host, gets that error."""
    for variant, counts, rule in (
        ("kozel", (7, 5, 1, 0, -3, 100), "Kozel is played by 2, 3 or 4 seats"),
        ("domeng", (7, 4, 0, 6), "Domeng is played by 5 seats"),
    ):
        for seats in counts:
            refused = httpx.post(
                f"{server.url}/api/rooms", json={"variant": variant, "seats": seats}, timeout=10
            )
            detail = refused.json()["detail"]
            assert (refused.status_code, detail["code"]) == (422, "invalid_seats"), (
                variant,
                seats,
                refused.text,
            )
            assert detail["message"] == f"{rule}, not {seats}", detail
    room = server.create_room(variant="kozel", seats=3, turn_timer_s=0)
    for seats in (7, -1):
        refused = _put(server, room["code"], {"seats": seats}, room["host_token"])
        assert (refused.status_code, refused.json()["detail"]["code"]) == (422, "invalid_seats"), refused.text
    # a count that is no whole number is still the request's own mistake
    assert (
        httpx.post(f"{server.url}/api/rooms", json={"variant": "kozel", "seats": "3"}, timeout=10).status_code
        == 422
    )
    assert len(server.room(room["code"])["seats"]) == 3


def _record(data_dir: Path, code: str, path: Path) -> dict[str, Any]:
    async def export() -> dict[str, Any]:
        async with Store(sqlite_url(data_dir)) as store:
            return await store.export_record(code)

    record = asyncio.run(export())
    path.write_text(json.dumps(record), encoding="utf-8")
    return record


def test_after_play_again_the_next_match_has_four_seats_kept_by_a_restart_and_its_record(
    tmp_path: Path,
) -> None:
    """Three friends finish a 3-seat match; with Play again the host makes the table 4 seats, the
    server restarts (the room loaded from the store has them), a fourth person takes the new seat,
    the match is played to its goat, and its record (RECORD.md, ``domeng replay``) has 4 seats
    while the first match's keeps its 3."""
    env = {"DOMENG_TURN_TIMER_S": "0", "DOMENG_BOT_DELAY_S": "0", "DOMENG_RATE_LIMIT": "1000 per 1 second"}
    first = ServerProcess(tmp_path, env=env).start()
    try:
        room = first.create_room(variant="kozel", seats=3, bots=[None, "easy", "easy"], turn_timer_s=0)
        code, host = room["code"], room["host_token"]
        ana = first.claim(code, 0, "Ana").json()["token"]
        player, spectator = Client(first, code, ana), Client(first, code)
        assert first.start_match(code, host).status_code == 200
        play_to_match_over([player], spectator)
        early = _put(first, code, {"seats": 4}, host)
        assert (early.status_code, early.json()["detail"]["code"]) == (409, "already_started")
        again = httpx.post(
            f"{first.url}/api/rooms/{code}/again", headers={"Authorization": f"Bearer {host}"}, timeout=10
        )
        assert again.status_code == 200, again.text
        grown = _put(first, code, {"seats": 4}, host)
        assert grown.status_code == 200, grown.text
        version = grown.json()["version"]
        player.close()
        spectator.close()
    finally:
        first.stop()

    second = ServerProcess(tmp_path, env=env).start()
    try:
        loaded = second.room(code)
        assert (loaded["match"], loaded["version"]) == (2, version)
        assert _kinds(loaded) == [
            (0, "human", "Ana"),
            (1, "bot", "easy"),
            (2, "bot", "easy"),
            (3, "empty", None),
        ]
        dewi = second.claim(code, 3, "Dewi").json()["token"]
        players = [Client(second, code, ana), Client(second, code, dewi)]
        spectator = Client(second, code)
        assert second.start_match(code, host).status_code == 200
        dealt = spectator.wait_for(lambda m: m["type"] == "state" and m["view"] is not None)
        assert len(dealt["view"]["hand_counts"]) == 4
        play_to_match_over(players, spectator)
    finally:
        second.stop()

    record = _record(tmp_path, code, tmp_path / "match2.json")
    assert record["seats"][0] == "Ana" and record["seats"][3] == "Dewi" and len(record["seats"]) == 4
    assert all(len(r["hands"]) == 4 for r in record["rounds"])
    replay = domeng_cli("replay", tmp_path / "match2.json", "--json")
    assert replay.returncode == 0, replay.stdout
    report = json.loads(replay.stdout)
    assert report["match_over"] is True and all(len(r["points"]) == 4 for r in report["rounds"])


def test_a_mute_of_a_seat_the_table_sheds_ends_but_its_person_stays_muted(server: ServerProcess) -> None:
    """A muted seat whose person left, removed by a smaller count: the seat's mute ends with it
    (the host's unmute of a seat the table lacks is 404), but not the person's, as when another
    person takes a muted seat: Dewi watching from the address the seat's mute held is still
    muted, the host sees her as a muted spectator named after the seat (``left``) and lifts it."""
    room = server.create_room(variant="kozel", seats=4, bots=[None, None, None, None], turn_timer_s=0)
    code, host = room["code"], room["host_token"]
    bearer = {"Authorization": f"Bearer {host}"}
    ana = Client(server, code, server.claim(code, 0, "Ana").json()["token"])
    ana.wait_for(lambda m: m["type"] == "chat_log")
    dewi_token = server.claim(code, 3, "Dewi").json()["token"]
    chat_url = f"{server.url}/api/rooms/{code}/chat"
    muted = httpx.put(chat_url, json={"spectators": True, "muted": {"3": True}}, headers=bearer, timeout=10)
    assert muted.json()["muted"] == [3], muted.text
    seat_url = f"{server.url}/api/rooms/{code}/seats/3"
    left = httpx.delete(seat_url, headers={"Authorization": f"Bearer {dewi_token}"}, timeout=10)
    assert left.is_success, left.text
    assert _put(server, code, {"seats": 3}, host).status_code == 200
    rules = ana.wait_for(lambda m: m["type"] == "chat_rules" and 3 not in m["rules"]["muted"])
    assert rules["rules"]["muted"] == [] and "left" not in rules["rules"]  # the host's alone
    [tag] = rules["rules"]["muted_spectators"]
    dewi = Client(server, code)  # Dewi watches from the address the seat's mute held
    log = dewi.wait_for(lambda m: m["type"] == "chat_log")
    assert log["you_muted"] is True
    dewi.send({"type": "chat", "text": "still here"})
    refused = dewi.wait_for(lambda m: m["type"] in ("chat", "error"))
    assert refused["type"] == "error" and refused["code"] == "chat_muted", refused
    again = httpx.put(chat_url, json={"muted": {"3": False}}, headers=bearer, timeout=10)
    assert again.status_code == 404  # the seat is gone: nothing to unmute
    seen = httpx.put(chat_url, json={}, headers=bearer, timeout=10).json()
    assert seen["left"] == {tag: "Dewi"} and seen["muted_spectators"] == [tag], seen
    lifted = httpx.put(chat_url, json={"muted_spectators": {tag: False}}, headers=bearer, timeout=10)
    assert lifted.status_code == 200 and lifted.json()["muted_spectators"] == [], lifted.text
    dewi.wait_for(lambda m: m["type"] == "chat_rules" and m["you_muted"] is False)
    dewi.send({"type": "chat", "text": "thanks"})
    said = dewi.wait_for(lambda m: m["type"] in ("chat", "error"))
    assert said["type"] == "chat" and said["line"]["text"] == "thanks", said
    dewi.close()
    ana.close()
