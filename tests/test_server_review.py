"""The round review over HTTP (issue 16) through a real server process and sockets: only the seat's
own player, only an ended round; the player's review, the admin's and ``domeng review`` on the
exported record give the same figures; the review is computed in a worker process of its own, and
while a long one is computed another table's moves are applied and sent."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.web.models import RoundReview
from engine.review import review_record
from tests.adminkit import SECRET, admin_client
from tests.conftest import domeng_cli
from tests.serverkit import Client, ServerProcess, children_of

SAMPLES = 40  # worlds per decision in these servers (DOMENG_REVIEW_SAMPLES): quick, and the same below
FAST_CLIENT = "1000 per 1 second"
"""DOMENG_RATE_LIMIT here: the scripted player answers at machine speed against a bot that does not
wait (a two-seat Kozel round can be twenty draws and placements in a second), faster than the
default allowance for a person (20 per 2 seconds) would let it."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path_factory.mktemp("review"),
        env={
            "DOMENG_ADMIN_TOKEN": SECRET,
            "DOMENG_BOT_DELAY_S": "0",
            "DOMENG_ROUND_PAUSE_S": "600",  # the next round waits: the ended one stays on the table
            "DOMENG_REVIEW_SAMPLES": str(SAMPLES),
            "DOMENG_RATE_LIMIT": FAST_CLIENT,
        },
    ).start()
    yield process
    process.stop()


def _review(server: ServerProcess, code: str, round_index: int, token: str | None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    return httpx.get(
        f"{server.url}/api/rooms/{code}/rounds/{round_index}/review", headers=headers, timeout=120
    )


def _play_first_round(client: Client) -> dict[str, Any]:
    """Answer every turn of the client's seat until the first round has ended; that state."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        message = client.recv(timeout=30)
        assert message["type"] != "error", message
        view = message.get("view") if message["type"] == "state" else None
        if view and view["phase"] != "playing" and view.get("reveal"):
            return message
        client.answer(message)
    raise AssertionError("the first round did not end")


def test_a_player_reviews_their_own_ended_round_with_the_figures_domeng_review_prints(
    server: ServerProcess, tmp_path: Path
) -> None:
    room = server.create_room(variant="kozel", seats=2, bots=[None, "medium"], turn_timer_s=0)
    code = room["code"]
    token = server.claim(code, 0, "Reviewer").json()["token"]
    assert server.start_match(code, room["host_token"]).status_code == 200
    client = Client(server, code, token)
    try:
        during = _review(server, code, 0, token)  # the round is in play: nothing to review yet
        assert during.status_code == 409 and during.json()["detail"]["code"] == "round_not_over"
        _play_first_round(client)
    finally:
        client.close()

    for bad in (None, "not-a-seat-token", room["host_token"]):
        refused = _review(server, code, 0, bad)
        assert refused.status_code == 403 and refused.json()["detail"]["code"] == "bad_token", bad
    later = _review(server, code, 1, token)
    assert later.status_code == 409 and later.json()["detail"]["code"] == "round_not_over"
    assert _review(server, "no-such-room-code", 0, token).status_code == 404

    reply = _review(server, code, 0, token)
    assert reply.status_code == 200, reply.text
    review = reply.json()
    assert (review["variant"], review["round"], review["seat"], review["unit"]) == ("kozel", 0, 0, "points")
    assert review["samples"] == SAMPLES and review["decisions"], "a Kozel round gives a seat choices"
    assert _review(server, code, 0, token).json() == review  # cached: the same review again

    with admin_client(server) as admin:
        found = admin.get("/api/admin/matches", params={"player": "Reviewer"}).json()["items"]
        match_id = next(m["id"] for m in found if m["code"] == code)
        doc = admin.get(f"/api/admin/matches/{match_id}/record").json()
        assert (
            admin.get(f"/api/admin/matches/{match_id}/rounds/0/review", params={"seat": 0}).json() == review
        )
        bot_seat = admin.get(f"/api/admin/matches/{match_id}/rounds/0/review", params={"seat": 1})
        assert bot_seat.status_code == 200 and bot_seat.json()["seat"] == 1
        unfinished = admin.get(f"/api/admin/matches/{match_id}/rounds/1/review", params={"seat": 0})
        assert unfinished.status_code == 409 and unfinished.json()["detail"]["code"] == "invalid_round"

    # the same figures from the engine and from the command line, on the exported record
    assert json.loads(json.dumps(review_record(doc, 0, 0, samples=SAMPLES).to_json())) == review
    path = tmp_path / "match.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    printed = domeng_cli("review", path, "--round", "1", "--seat", "0", "--samples", SAMPLES, "--json")
    assert printed.returncode == 0, printed.stderr
    assert json.loads(printed.stdout) == review


def test_reviews_run_in_a_worker_process_of_their_own(server: ServerProcess) -> None:
    """After a review, the server has a review worker beside the bots' worker: its own process, at
    a lower CPU priority than the bots' (niceness +10 against +5), so a review never takes a bot's
    worker and the tables come first on a busy machine. (The test asks for its own review: the
    suite's workers may run the test above on another server.)"""
    room = server.create_room(variant="kozel", seats=2, bots=["medium", "medium"], turn_timer_s=0)
    assert server.start_match(room["code"], room["host_token"]).status_code == 200
    watcher = Client(server, room["code"])  # bots play while someone watches
    try:
        watcher.wait_for(
            lambda m: m["type"] == "state" and m["view"] and m["view"]["phase"] != "playing", timeout=120
        )
    finally:
        watcher.close()
    with admin_client(server) as admin:
        found = admin.get("/api/admin/matches", params={"per_page": 200}).json()["items"]
        match_id = next(m["id"] for m in found if m["code"] == room["code"])
        reviewed = admin.get(f"/api/admin/matches/{match_id}/rounds/0/review", params={"seat": 0})
        assert reviewed.status_code == 200, reviewed.text
    assert server.proc is not None
    base = os.getpriority(os.PRIO_PROCESS, server.proc.pid)  # CI may run the suite under nice
    niceness = sorted(children_of(server.proc.pid).values())
    assert min(base + 5, 19) in niceness and min(base + 10, 19) in niceness, (base, niceness)


@pytest.fixture(scope="module")
def slow_reviews(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server whose reviews take long: 1,000 worlds per decision (seconds of CPU a review; over
    the default timeout of 60 s beside two CPU hogs, as reviews run at a lower priority)."""
    process = ServerProcess(
        tmp_path_factory.mktemp("review-slow"),
        env={
            "DOMENG_BOT_DELAY_S": "0",
            "DOMENG_ROUND_PAUSE_S": "600",
            "DOMENG_REVIEW_SAMPLES": "1000",
            "DOMENG_REVIEW_TIMEOUT_S": "600",
            "DOMENG_RATE_LIMIT": FAST_CLIENT,
        },
    ).start()
    yield process
    process.stop()


def test_a_long_review_never_holds_up_another_tables_play(slow_reviews: ServerProcess) -> None:
    server = slow_reviews
    reviewed = server.create_room(variant="kozel", seats=2, bots=[None, "medium"], turn_timer_s=0)
    token = server.claim(reviewed["code"], 0, "Reviewer").json()["token"]
    assert server.start_match(reviewed["code"], reviewed["host_token"]).status_code == 200
    client = Client(server, reviewed["code"], token)
    try:
        _play_first_round(client)
    finally:
        client.close()
    playing = server.create_room(variant="kozel", seats=2, bots=[None, "medium"], turn_timer_s=0)
    player_token = server.claim(playing["code"], 0, "Player").json()["token"]
    assert server.start_match(playing["code"], playing["host_token"]).status_code == 200
    player = Client(server, playing["code"], player_token)

    results: list[httpx.Response] = []
    asking = threading.Thread(target=lambda: results.append(_review(server, reviewed["code"], 0, token)))
    try:
        asking.start()
        # while the review is being computed, the other table plays: each move it sends is applied
        # and comes back as a new version, with the bot's answer, before the review is done
        moves, sent_at = 0, None
        deadline = time.monotonic() + 120
        while moves < 3 and asking.is_alive() and time.monotonic() < deadline:
            message = player.recv(timeout=30)
            assert message["type"] != "error", message
            if message["type"] != "state" or not message["view"]:
                continue
            if sent_at is not None and message["version"] > sent_at and asking.is_alive():
                moves += 1  # our move was applied and sent back while the review was computed
                sent_at = None
            if message["view"]["phase"] != "playing":
                break  # the round ended: what was played is enough
            if player.answer(message):
                sent_at = message["version"]
        assert moves >= 1, "no move of the other table came back while the review was computed"
    finally:
        asking.join(300)
        player.close()
    assert results and results[0].status_code == 200, results and results[0].text


def test_the_served_review_keeps_every_figure_the_engine_gives_even_an_unknown_margin() -> None:
    """The route's response model passes on what `engine.review.RoundReview.to_json` writes: the
    bot's moves (``by_bot``), each decision's ``margin`` and ``within_noise``, and a ``noise`` and
    ``margin`` of null (worlds that cannot tell: JSON has no infinity), which must not be a 500."""
    option = {"action": {"seat": 0, "play": "3-5", "end": "R"}, "cost": 1.0, "lost": 0.0}
    decision = {
        "at": 2,
        "chosen": {"seat": 0, "play": "2-5", "end": "R"},
        "best": option["action"],
        "options": [option, {**option, "action": {"seat": 0, "play": "2-5", "end": "R"}, "lost": 0.4}],
        "lost": 0.4,
        "noise": None,
        "margin": None,
        "worlds": 1,
        "marked": False,
        "within_noise": True,
        "chain": [[3, 5]],
        "hand": ["2-5", "3-5"],
    }
    review = {
        "variant": "domeng",
        "round": 0,
        "seat": 0,
        "unit": "stones",
        "threshold": 0.25,
        "samples": 8,
        "seed": 0,
        "lost": 0.0,
        "marked": 0,
        "decisions": [decision],
        "by_bot": [4, 7],
        "by_timer": [4],
        "all_by_bot": False,
    }
    assert RoundReview.model_validate(review).model_dump(mode="json") == review
    # a round a bot played all of for the person: the page is told so, as the engine says it
    alone = {**review, "decisions": [], "all_by_bot": True}
    assert RoundReview.model_validate(alone).model_dump(mode="json") == alone
