"""Play again in Chromium (issue 14): two people, one on a phone and one on a desktop, each in
their own language, play a whole Domeng match (the shortest the rules allow: the first camat
election ends it; the bots quick), both press Play again at its end, see who is ready, and play
the second match in the same seats while the bots keep their levels. The admin's match page links
the room's two matches. In the next match's waiting room the ready count counts the people who are
here (a new user's report: the host's browser closed, it still counted them): an absent one's
seat says "away", counted apart. Screenshots go to artifacts/screenshots/."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.adminkit import SECRET
from tests.browserkit import (
    DESKTOP,
    PANEL,
    PHONE,
    SocketPlayer,
    catalog_of,
    close_panel,
    describe,
    goto,
    hold_host,
    hold_seat,
    open_page,
    play_turn,
    screenshot,
    switch_language,
    version_of,
    wait_for_version,
)
from tests.serverkit import Client, ServerProcess

BOTS = ["easy", "greedy", "random"]
CASES = [
    # both sizes and two languages in one match (a whole match takes minutes on a 2-core machine)
    pytest.param((PHONE, "ru"), (DESKTOP, "en"), id="ana-390x844-ru+budi-1280x800-en"),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path_factory.mktemp("browser-again"),
        env={"DOMENG_ADMIN_TOKEN": SECRET, "DOMENG_BOT_DELAY_S": "0.02", "DOMENG_ROUND_PAUSE_S": "0.3"},
    ).start()
    yield process
    process.stop()


def _match_over(page: Any) -> bool:
    return bool(page.evaluate("() => !!window.__domeng?.view?.match_over"))


def _play_both(pages: list[Any], done: Any, timeout: float = 600.0) -> list[int]:
    """Both people play their turns (a round's panel closed when it is in the way, never the
    match's) until ``done(moves)`` (the moves each made so far); the moves each made."""
    moves = [0] * len(pages)
    deadline = time.monotonic() + timeout
    while True:
        seen = version_of(pages[0])  # before looking: a state that comes meanwhile ends the wait below
        if done(moves):
            break
        if time.monotonic() > deadline:
            raise TimeoutError(f"not done after {moves} moves; {describe(pages[0])}")
        moved = False
        for i, page in enumerate(pages):
            if page.locator(PANEL).count() and not _match_over(page):
                close_panel(page)
            if play_turn(page):
                moves[i] += 1
                moved = True
        if not moved:
            wait_for_version(pages[0], seen)
    return moves


def _room(page: Any) -> dict[str, Any]:
    room: dict[str, Any] = page.evaluate("() => window.__domeng.room")
    return room


@pytest.mark.parametrize(("ana_at", "budi_at"), CASES)
def test_two_people_play_again_in_the_same_seats(
    server: ServerProcess,
    browser: Any,
    ana_at: tuple[dict[str, int], str],
    budi_at: tuple[dict[str, int], str],
) -> None:
    (ana_view, ana_lang), (budi_view, budi_lang) = ana_at, budi_at
    words = {"ana": catalog_of(ana_lang), "budi": catalog_of(budi_lang)}
    room = server.create_room(bots=[None, None, *BOTS], turn_timer_s=0, options={"camat_target": 1})
    code = room["code"]
    tokens = [server.claim(code, seat, name).json()["token"] for seat, name in ((0, "Ana"), (1, "Budi"))]
    ana_ctx, ana, ana_watch = open_page(browser, ana_view, ana_lang)
    budi_ctx, budi, budi_watch = open_page(browser, budi_view, budi_lang)
    try:
        for page, seat in ((ana, 0), (budi, 1)):
            goto(page, f"{server.url}/r/{code}")
            hold_seat(page, code, tokens[seat], seat)
        hold_host(ana, code, room["host_token"])
        for page in (ana, budi):
            page.reload()
            page.wait_for_selector(".seat-list")
        ana.click(".start-box .btn-gold")  # Ana hosts: she starts the first match
        for page in (ana, budi):
            page.wait_for_selector(".table-screen")

        # match 1, played to its end: both see its final panel with Play again beside New table
        first = _play_both([ana, budi], lambda _: _match_over(ana) and _match_over(budi))
        assert all(first), first
        for page, who in ((ana, "ana"), (budi, "budi")):
            page.wait_for_selector(f"{PANEL} .play-again")
            assert page.text_content(f"{PANEL} .play-again") == words[who]["panel.play_again"]
            # the election ends the match: no word of rounds the camat would lead
            ending = words[who]["outcome.camat_final"].split("{name}")[-1]
            assert (page.text_content(f"{PANEL} .camat-note") or "").endswith(ending)
            assert page.locator(f"{PANEL} a[href='/']").count() == 1  # New table stays
        # on the phone the match's three buttons take two rows (they took three, 190 px of 844)
        foot = ana.locator(f"{PANEL} .panel-foot").bounding_box()
        button = ana.locator(f"{PANEL} .play-again").bounding_box()
        assert foot is not None and button is not None
        assert foot["height"] < 3 * button["height"] + 20, (foot, button)

        screenshot(budi, f"again-panel-{budi_lang}-{budi_view['width']}")
        # Budi asks first: both are in match 2's waiting room, Budi ready, Ana not yet; Ana was
        # still reading match 1's results, which stay open until she closes them
        budi.click(f"{PANEL} .play-again")
        for page in (ana, budi):
            page.wait_for_selector(".again-box[data-ready='1'][data-people='2']", state="attached")
        budi.wait_for_selector(PANEL, state="detached")
        assert ana.locator(f"{PANEL} .standings").is_visible()
        told = words["ana"]["panel.next_match"].replace("{n}", "2")
        assert ana.text_content(f"{PANEL} .panel-note") == told  # and that match 2 is being set up
        # the page drawn again in another language keeps that panel as it was
        other = "et" if ana_lang != "et" else "hu"
        switch_language(ana, other)
        told_there = catalog_of(other)["panel.next_match"].replace("{n}", "2")
        ana.wait_for_function(
            "([sel, text]) => document.querySelector(sel)?.textContent === text",
            arg=[f"{PANEL} .panel-note", told_there],
        )
        switch_language(ana, ana_lang)
        ana.wait_for_function(
            "([sel, text]) => document.querySelector(sel)?.textContent === text",
            arg=[f"{PANEL} .panel-note", told],
        )
        assert ana.locator(f"{PANEL} .play-again").count() == 1
        close_panel(ana)
        assert ana.text_content("h1") == words["ana"]["again.heading"].replace("{n}", "2")
        assert ana.locator(".seat-row[data-seat='1'] .ready-tag[data-ready='true']").count() == 1
        assert ana.locator(".seat-row[data-seat='0'] .ready-tag[data-ready='false']").count() == 1
        assert budi.text_content(".again-box .you-ready") == words["budi"]["again.you_ready"]
        expected = words["budi"]["again.ready_count"].replace("{n}", "1").replace("{total}", "2")
        assert budi.text_content(".again-box .ready-count") == expected
        screenshot(ana, f"again-waiting-{ana_lang}-{ana_view['width']}")
        ana.click(".again-box .last-match")  # the last match's result is still at hand
        ana.wait_for_selector(f"{PANEL} .standings")
        switch_language(ana, other)
        ana.wait_for_selector(f"{PANEL} .standings")  # still that panel, with no Play again
        assert ana.locator(f"{PANEL} .play-again").count() == 0
        switch_language(ana, ana_lang)
        close_panel(ana)
        ana.click(".again-box .ready-button")
        budi.wait_for_selector(".again-box[data-ready='2']")
        # the host makes match 2 longer and gives it a turn timer: stored, then both see it
        ana.select_option("#opt-camat-target", "2")
        budi.wait_for_function("() => window.__domeng.room.options.camat_target === 2")
        ana.fill("#opt-turn-timer", "90")
        ana.press("#opt-turn-timer", "Enter")
        ana.locator("#opt-camat-target").focus()  # the timer box's change is sent as it loses focus
        budi.wait_for_function("() => window.__domeng.room.turn_timer_s === 90")
        screenshot(ana, f"again-options-{ana_lang}-{ana_view['width']}")
        screenshot(budi, f"again-ready-{budi_lang}-{budi_view['width']}")

        # the host starts match 2: the same people in the same seats, the bots at their levels
        ana.click(".start-box .btn-gold")
        for page in (ana, budi):
            page.wait_for_selector(".table-screen")
        second = _play_both([ana, budi], lambda moves: min(moves) >= 2, timeout=300)
        assert min(second) >= 2
        for page in (ana, budi):
            shown = _room(page)
            assert (shown["match"], shown["options"], shown["turn_timer_s"]) == (2, {"camat_target": 2}, 90)
            assert [(s["kind"], s["name"], s["bot_level"]) for s in shown["seats"]] == [
                ("human", "Ana", None),
                ("human", "Budi", None),
                *[("bot", None, level) for level in BOTS],
            ]
        ana_watch.assert_clean()
        budi_watch.assert_clean()
    finally:
        ana_ctx.close()
        budi_ctx.close()

    # the admin: match 2's page links match 1 of the same room, and back
    listed = httpx.get(
        f"{server.url}/api/admin/matches",
        params={"player": "Budi", "per_page": 200},
        headers={"Authorization": f"Bearer {SECRET}"},
        timeout=20,
    ).json()["items"]
    mine = sorted((m["room_match"], m["id"]) for m in listed if m["code"] == code)
    assert [n for n, _ in mine] == [1, 2]
    admin_ctx, admin, admin_watch = open_page(browser, ana_view)
    try:
        admin.goto(f"{server.url}/admin/login")
        admin.wait_for_selector("body[data-ready] #admin-secret")
        admin.fill("#admin-secret", SECRET)
        admin.click("#admin-login")
        admin.wait_for_url("**/admin/matches")
        admin.goto(f"{server.url}/admin/matches/{mine[1][1]}")
        admin.wait_for_selector(".room-matches")
        admin.click("a.room-match[data-number='1']")
        admin.wait_for_url(f"**/admin/matches/{mine[0][1]}")
        admin.wait_for_selector("a.room-match[data-number='2']")
        admin_watch.assert_clean()
    finally:
        admin_ctx.close()


def test_the_last_matchs_panel_kept_while_read_folds_away_once_the_next_match_is_dealt(
    server: ServerProcess, browser: Any
) -> None:
    """A spectator reads match 1's final panel while the host presses Play again: it stays over
    match 2's waiting room, saying so (`newMatch`). Once match 2 is dealt it folds away as a round's
    panel does: not while the reader's mouse rests on it (it then says the match has started and
    offers no Play again), at once when they look away. The bar's "last match" opens it again."""
    en = catalog_of("en")
    room = server.create_room(bots=[None, *["easy"] * 4], turn_timer_s=0, options={"camat_target": 1})
    code, host = room["code"], {"Authorization": f"Bearer {room['host_token']}"}
    # Ana plays match 1 through the protocol, then stays without a word: match 2 waits at her first
    # tile to place (no turn timer), so its first round cannot end while the test looks at it
    ana = SocketPlayer(Client(server, code, server.claim(code, 0, "Ana").json()["token"]))
    context, page, watch = open_page(browser, DESKTOP, "en-US")
    try:
        goto(page, f"{server.url}/r/{code}")
        assert server.start_match(code, room["host_token"]).status_code == 200
        page.wait_for_selector(f"{PANEL} .standings", timeout=600_000)  # match 1 played out
        ana.done.set()
        ana.thread.join(10)
        reply = httpx.post(f"{server.url}/api/rooms/{code}/again", headers=host, timeout=20)
        assert reply.status_code == 200, reply.text
        page.wait_for_selector(".again-box", state="attached")
        assert page.text_content(f"{PANEL} .panel-note") == en["panel.next_match"].replace("{n}", "2")
        # the reader's mouse rests on the panel as match 2 is dealt
        box = page.locator(f"{PANEL} .panel-body").bounding_box()
        assert box is not None
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 10)
        assert server.start_match(code, room["host_token"]).status_code == 200
        page.wait_for_selector(".table-screen")
        started = en["panel.next_match_started"].replace("{n}", "2")
        page.wait_for_function(
            "([sel, text]) => document.querySelector(sel)?.textContent === text",
            arg=[f"{PANEL} .panel-note", started],
        )
        assert page.locator(f"{PANEL} .play-again").count() == 0
        # the mouse leaves it (the backdrop is outside the panel): it folds away for the table
        page.mouse.move(2, 2)
        page.wait_for_selector(PANEL, state="detached")
        screenshot(page, "again-dealt-table-1280-en")
        # the bar's button opens the last match's result again, until this match's first round ends
        button = page.locator(".last-round-btn[data-opens='match']")
        assert button.text_content() == en["table.last_match"]
        button.click()
        page.wait_for_selector(f"{PANEL} .standings")
        page.wait_for_function("() => window.__domeng.view?.to_act === 0")  # the bots played up to Ana
        assert page.locator(f"{PANEL} .standings").is_visible()  # asked for at the table: it stays
        close_panel(page)
        watch.assert_clean()
    finally:
        context.close()
        ana.stop()


def _play_out(pages: list[Any]) -> None:
    """Both players play their turns until the match is over on both pages."""
    deadline = time.monotonic() + 180
    while not all(p.evaluate("() => !!window.__domeng?.view?.match_over") for p in pages):
        moved = False
        for p in pages:
            if p.locator(PANEL).count() == 0 and not p.evaluate("() => !!window.__domeng?.view?.match_over"):
                moved = play_turn(p) or moved
        assert time.monotonic() < deadline, "the match did not end"
        if not moved:
            wait_for_version(pages[0], pages[0].evaluate("() => window.__domeng.version"))


def test_the_ready_count_counts_who_is_here(server: ServerProcess, browser: Any) -> None:
    room = server.create_room(
        bots=[None, None, "greedy", "greedy", "greedy"], turn_timer_s=0, options={"camat_target": 0}
    )
    code, host_token = room["code"], room["host_token"]
    tokens = [server.claim(code, seat, name).json()["token"] for seat, name in ((0, "Ana"), (1, "Budi"))]
    host_ctx, host, _ = open_page(browser, DESKTOP)
    budi_ctx, budi, budi_watch = open_page(browser, PHONE)
    try:
        for page, seat in ((host, 0), (budi, 1)):
            goto(page, f"{server.url}/r/{code}")
            hold_seat(page, code, tokens[seat], seat)
        hold_host(host, code, host_token)
        assert server.start_match(code, host_token).status_code == 200
        auth = {"Authorization": f"Bearer {host_token}"}
        assert (
            httpx.put(
                f"{server.url}/api/rooms/{code}/stop", json={"stop": True}, headers=auth, timeout=10
            ).status_code
            == 200
        )
        for page in (host, budi):
            page.reload()
            page.wait_for_selector(".table-screen")
        _play_out([host, budi])
        for token in tokens:  # both are in for match 2
            reply = httpx.post(
                f"{server.url}/api/rooms/{code}/again",
                headers={"Authorization": f"Bearer {token}"},
                timeout=10,
            )
            assert reply.status_code == 200, reply.text
        budi.wait_for_selector(".again-box[data-ready='2'][data-people='2']")
        host_ctx.close()  # the host's browser closes
        budi.wait_for_selector(".seat-row[data-seat='0'] .conn.off")
        box = budi.locator(".again-box")  # Budi alone is here, and ready
        assert (box.get_attribute("data-ready"), box.get_attribute("data-people")) == ("1", "1")
        count = budi.text_content(".ready-count")
        words = catalog_of("en")
        expected = f"{words['again.ready_count']} {words['again.away_count']}".format(n=1, total=1)
        assert count == expected, count
        assert budi.text_content(".seat-row[data-seat='0'] .ready-tag") == words["again.away"]
        if budi.locator(PANEL).count():
            budi.locator(f"{PANEL} .panel-foot .btn-gold").click()
        screenshot(budi, "again-ready-away-390x844")
        budi_watch.assert_clean()
    finally:
        budi_ctx.close()
        if host_ctx.pages:
            host_ctx.close()


def test_the_previous_matchs_results_survive_a_reload(server: ServerProcess, browser: Any) -> None:
    """A new user's report: after Play again, "Previous match's results" (the next match's waiting
    room) and the bar's "Previous match" (once it is dealt) were gone when the page was reloaded:
    the page kept that match's end in its memory only. The server's whole state brings it back
    (``previous``): the reloaded page opens the same final panel, its standings and hands."""
    en = catalog_of("en")
    room = server.create_room(bots=[None, *["easy"] * 4], turn_timer_s=0, options={"camat_target": 1})
    code, host_token = room["code"], room["host_token"]
    # Ana plays match 1 through the protocol, then stays without a word: match 2 waits at her turn
    ana = SocketPlayer(Client(server, code, server.claim(code, 0, "Ana").json()["token"]))
    context, page, watch = open_page(browser, DESKTOP, "en-US")
    try:
        goto(page, f"{server.url}/r/{code}")
        assert server.start_match(code, host_token).status_code == 200
        page.wait_for_selector(f"{PANEL} .standings", timeout=600_000)  # match 1 played out
        ana.done.set()
        ana.thread.join(10)
        standings = page.text_content(f"{PANEL} .standings")
        host = {"Authorization": f"Bearer {host_token}"}
        reply = httpx.post(f"{server.url}/api/rooms/{code}/again", headers=host, timeout=20)
        assert reply.status_code == 200, reply.text
        page.wait_for_selector(".again-box", state="attached")
        page.reload()
        page.wait_for_selector(".again-box .last-match")
        assert page.text_content(".again-box .last-match") == en["again.last_match"]
        page.click(".again-box .last-match")
        page.wait_for_selector(f"{PANEL} .standings")
        assert page.text_content(f"{PANEL} .standings") == standings
        close_panel(page)
        # match 2 dealt: reloaded at the table, the bar still offers the last match's results
        assert server.start_match(code, host_token).status_code == 200
        page.wait_for_selector(".table-screen")
        page.reload()
        page.wait_for_selector(".table-screen")
        page.wait_for_function("() => window.__domeng.view?.to_act === 0")  # the bots played up to Ana
        button = page.locator(".last-round-btn[data-opens='match']")
        button.wait_for()
        assert button.text_content() == en["table.last_match"]
        button.click()
        page.wait_for_selector(f"{PANEL} .standings")
        assert page.text_content(f"{PANEL} .standings") == standings
        screenshot(page, "again-reloaded-last-match-1280-en")
        watch.assert_clean()
    finally:
        context.close()
        ana.stop()
