"""Keyboard focus and screen-reader words in Chromium (a new user's trial): the focus never falls to
the page's body after Hint or after taking a seat with Enter; every Sit here says which seat (and in
Kozel pairs whose partner); the speaker keeps one name with aria-pressed; on one's turn the arrow
keys step through the whole hand, the tiles that cannot be played said so (aria-disabled) and never
played; a final panel starts its focus on Play again, not behind the glossary's terms."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browserkit import (
    DESKTOP,
    PANEL,
    catalog_of,
    goto,
    hold_host,
    open_page,
    play_until,
    sit_and_start,
    version_of,
    wait_for_a_tile_to_place,
)
from tests.serverkit import ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    env = {"DOMENG_BOT_DELAY_S": "0.1", "DOMENG_ROUND_PAUSE_S": "600", "DOMENG_TURN_TIMER_S": "0"}
    process = ServerProcess(tmp_path_factory.mktemp("browser-focus"), env=env).start()
    yield process
    process.stop()


_FOCUSED_JS = """() => { const el = document.activeElement;
    return el === document.body || !el ? 'body'
        : el.className + (el.dataset.tile ? ' ' + el.dataset.tile : ''); }"""


def _as_said(message: str, **params: int) -> str:
    for name, value in params.items():
        message = message.replace(f"{{{name}}}", str(value))
    return message


def test_sit_here_says_which_seat_and_enter_leaves_the_focus_on_ones_seat(
    server: ServerProcess, browser: Any
) -> None:
    words = catalog_of("en")
    pairs = server.create_room(
        variant="kozel", seats=4, options={"pairs": True}, bots=[None, None, "easy", "easy"]
    )
    alone = server.create_room(variant="kozel", seats=3, bots=[None, None, "easy"])
    context, page, watch = open_page(browser, DESKTOP, "en-US")
    try:
        goto(page, f"{server.url}/r/{alone['code']}")
        page.wait_for_selector(".sit[data-seat='1']")
        assert page.get_attribute(".sit[data-seat='1']", "aria-label") == _as_said(
            words["join.sit_seat"], n=2
        )
        goto(page, f"{server.url}/r/{pairs['code']}")
        page.wait_for_selector(".sit[data-seat='3']")
        labels = page.eval_on_selector_all(".sit", "els => els.map((e) => e.getAttribute('aria-label'))")
        assert labels == [
            _as_said(words["join.sit_seat_partner"], n=seat + 1, partner=(seat + 2) % 4 + 1)
            for seat in range(4)
        ]
        page.fill("#player-name", "Ana")
        page.press("#player-name", "Enter")  # the first free seat
        page.wait_for_selector(".seat-row.mine")
        page.wait_for_function("() => document.activeElement !== document.body")
        assert page.evaluate(_FOCUSED_JS) == "seat-row seat-human mine"
        watch.assert_clean()
    finally:
        context.close()


def _my_choice_with_a_tile_that_cannot_be_played(page: Any) -> bool:
    return bool(
        page.locator(".hint-btn").is_visible()
        and page.locator(".hand-tile:not(.playable)").count() > 0
        and page.locator(".hand-tile.playable").count() > 1
    )


def test_the_hand_the_hint_and_the_speaker_from_the_keyboard(server: ServerProcess, browser: Any) -> None:
    words = catalog_of("en")
    room = server.create_room(variant="kozel", seats=2, bots=[None, "medium"], turn_timer_s=0, hints=True)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, DESKTOP, "en-US")
    try:
        sit_and_start(page, server, room, token)
        # the speaker: one name, pressed or not
        speaker = page.locator(".sound-toggle:visible").first
        assert (speaker.get_attribute("aria-pressed"), speaker.locator(".sr-only").text_content()) == (
            "false",
            words["alerts.sound"],
        )
        speaker.click()
        page.wait_for_selector(".sound-toggle[aria-pressed='true']:visible")
        assert speaker.locator(".sr-only").text_content() == words["alerts.sound"]

        play_until(page, lambda: _my_choice_with_a_tile_that_cannot_be_played(page), timeout=180)
        tiles = page.eval_on_selector_all(".hand-tile", "els => els.map((e) => e.dataset.tile)")
        blocked = page.eval_on_selector_all(
            ".hand-tile:not(.playable)",
            "els => els.map((e) => [e.dataset.tile, e.getAttribute('aria-disabled')])",
        )
        assert blocked and all(said == "true" for _, said in blocked), blocked
        # the arrow keys step through every tile of the hand, those that cannot be played too
        page.focus(".hand-tile[tabindex='0']")
        seen = []
        for _ in tiles:
            page.keyboard.press("ArrowRight")
            seen.append(page.evaluate("() => document.activeElement.dataset.tile"))
        assert sorted(seen) == sorted(tiles), (seen, tiles)
        # Enter on a tile that cannot be played plays nothing
        version = version_of(page)
        page.focus(f".hand-tile[data-tile='{blocked[0][0]}']")
        page.keyboard.press("Enter")
        assert version_of(page) == version and page.locator(".hand-tile.playable").count() > 1

        # Hint pressed with Enter: the focus goes to what the hint plays, never to the body
        page.focus(".hint-btn")
        page.keyboard.press("Enter")
        page.wait_for_selector(".hand-tile.hinted, .two-lempas.hinted")
        page.wait_for_function(
            "() => document.activeElement.matches('.hand-tile.hinted, .lempas-choice button')"
        )
        watch.assert_clean()
    finally:
        context.close()


def test_a_final_panel_starts_on_play_again(server: ServerProcess, browser: Any) -> None:
    room = server.create_room(
        bots=["easy", "greedy", "random", "easy", "greedy"], options={"camat_target": 0}
    )
    code = room["code"]
    context, host, watch = open_page(browser, DESKTOP, "en-US")
    try:
        goto(host, f"{server.url}/r/{code}")
        hold_host(host, code, room["host_token"])
        host.reload()
        host.click(".start-box .btn-gold")
        host.wait_for_selector(PANEL)  # round 1 ended; the next waits (DOMENG_ROUND_PAUSE_S)
        host.click(f"{PANEL} .panel-foot .btn-gold")
        host.wait_for_selector(PANEL, state="detached")
        host.click(".stop-btn")
        host.click(".stop-note .stop-confirm")
        host.wait_for_selector(f"{PANEL} .standings")  # the final panel, with its glossary's terms
        assert host.locator(f"{PANEL} .term").count() > 0
        host.wait_for_function("() => document.activeElement.matches('.round-end .play-again')")
        # Escape closes it: the focus goes to the table, not to the page's body (the confirm step
        # that held it when the panel opened is gone); Round results opens it again on Play again
        host.keyboard.press("Escape")
        host.wait_for_selector(PANEL, state="detached")
        assert host.evaluate("() => !!document.activeElement.closest('.table-screen')"), host.evaluate(
            _FOCUSED_JS
        )
        # Enter on Round results, held down: its repeats reach the panel's Play again, and pressed
        # it (found by a keyboard trial, in Kozel: the player was ready for the next match); a
        # repeated key does nothing in the panel
        host.focus(".last-round-btn")
        host.keyboard.down("Enter")
        host.wait_for_function("() => document.activeElement.matches('.round-end .play-again')")
        for _ in range(3):
            host.keyboard.down("Enter")  # the keyboard's repeat (KeyboardEvent.repeat)
        host.keyboard.up("Enter")
        asked = host.evaluate("() => window.__domeng.againAskedIn")  # set as Play again is pressed
        assert asked is None, asked
        assert host.locator(f"{PANEL} .play-again").count() == 1
        # Play again pressed with Enter: the waiting room of the next match takes the focus (found
        # by a keyboard trial: it fell to the page's body with the panel and the table)
        host.keyboard.press("Enter")
        host.wait_for_selector(".start-box")
        host.wait_for_selector(PANEL, state="detached")
        assert host.evaluate("() => document.activeElement.matches('main h1, .seat-row.mine')"), (
            host.evaluate(_FOCUSED_JS)
        )
        watch.assert_clean()
    finally:
        context.close()


# Where the focus is once the table is drawn (the focus is given in the task that draws it): read
# as soon as the page holds the selector given (a MutationObserver's callback runs at the end of the
# task that drew it), as `_FOCUSED_JS` says it, in ``window.__focusOnArrival`` (a promise until
# then). A look from the test after the table is drawn may come after the bots have played on: on a
# busy machine Playwright's next look can take longer than two bots take to play a Kozel round out
# (DOMENG_BOT_DELAY_S 0.1), and the round-end panel then holds the focus, on its Close button ("btn
# btn-gold"), as it should.
_FOCUS_ON_ARRIVAL_JS = """(selector) => { window.__focusOnArrival = new Promise((done) => {
    const seen = new MutationObserver(() => {
        if (!document.querySelector(selector)) return;
        seen.disconnect();
        done((JS)());
    });
    seen.observe(document.body, {childList: true, subtree: true});
}); }""".replace("JS", _FOCUSED_JS)


def test_start_pressed_with_enter_leaves_the_focus_in_ones_hand(server: ServerProcess, browser: Any) -> None:
    """Found by a keyboard trial: Start the match pressed with Enter went with the waiting room,
    and the focus fell to the page's body (a screen reader starts over from the top). It goes to
    the hand's Tab stop."""
    room = server.create_room(variant="kozel", seats=2, bots=[None, "easy"], turn_timer_s=0)
    context, page, watch = open_page(browser, DESKTOP, "en-US")
    try:
        goto(page, f"{server.url}/r/{room['code']}")
        hold_host(page, room["code"], room["host_token"])
        page.reload()
        page.wait_for_selector(".start-box")
        page.fill("#player-name", "Ana")
        page.press("#player-name", "Enter")
        page.wait_for_selector(".seat-row.mine")
        page.evaluate(_FOCUS_ON_ARRIVAL_JS, ".table-screen .hand-tile")
        page.focus(".start-match")
        page.keyboard.press("Enter")
        focused = page.evaluate("() => window.__focusOnArrival")
        assert "hand-tile" in focused.split(), focused
        watch.assert_clean()
    finally:
        context.close()


_BOT_PLACED_JS = """(from) => { const c = window.__domeng, log = c?.view?.log || [];
    const e = log.slice(from).filter((e) => e.type === 'placed' && e.seat !== c.seat).pop();
    return e ? String(e.tile) : null; }"""


def test_a_screen_reader_hears_the_other_seats_moves(server: ServerProcess, browser: Any) -> None:
    """Found by a screen-reader trial: the status said whose turn it was, but no live region said
    what was played (the feed's list is none, its one-line ticker is hidden from screen readers).
    A hidden log named like the feed says each new line, the tile by its name."""
    words = catalog_of("en")
    room = server.create_room(variant="kozel", seats=2, bots=[None, "easy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, DESKTOP, "en-US")
    try:
        sit_and_start(page, server, room, token)
        loaded = page.evaluate("() => window.__domeng.view.log.length")
        play_until(
            page, lambda: page.evaluate(_BOT_PLACED_JS, loaded) is not None, timeout=120, keyboard=True
        )
        tile = page.evaluate(_BOT_PLACED_JS, loaded)
        a, b = tile.split("-")
        said = page.get_by_role("log", name=words["table.feed"])
        assert said.count() == 1
        page.wait_for_function(  # said in the update that drew it
            "(names) => [...document.querySelectorAll('[role=log] [role=img]')].some("
            "(el) => names.includes(el.textContent))",
            arg=[f"{a}–{b}", f"{b}–{a}"],
            timeout=5000,
        )
        snapshot = said.aria_snapshot()
        assert f'img "{a}–{b}"' in snapshot or f'img "{b}–{a}"' in snapshot, snapshot
        watch.assert_clean()
    finally:
        context.close()


def test_play_again_from_the_keyboard_leaves_the_focus_on_ones_seat(
    server: ServerProcess, browser: Any
) -> None:
    """Found by a keyboard trial: a seated player who played the round with the keyboard and
    pressed Play again with Enter lost the focus to the page's body (the panel gave it back to a
    tile played since, on a table the waiting room replaced). It goes to one's seat."""
    room = server.create_room(
        bots=[None, "greedy", "greedy", "greedy", "greedy"], options={"camat_target": 0}, turn_timer_s=0
    )
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, DESKTOP, "en-US")
    try:
        sit_and_start(page, server, room, token, host=True)
        play_until(page, lambda: page.locator(PANEL).count() > 0, timeout=180, keyboard=True)
        page.focus(f"{PANEL} .panel-foot .btn-gold")
        page.keyboard.press("Enter")  # back to the table; the next round waits (DOMENG_ROUND_PAUSE_S)
        page.wait_for_selector(PANEL, state="detached")
        page.focus(".stop-btn")
        page.keyboard.press("Enter")
        page.keyboard.press("Enter")  # the confirm step has the focus: the match ends at once
        page.wait_for_selector(f"{PANEL} .standings")
        page.wait_for_function("() => document.activeElement.matches('.round-end .play-again')")
        page.keyboard.press("Enter")
        page.wait_for_selector(".start-box")
        page.wait_for_selector(PANEL, state="detached")
        assert page.evaluate("() => document.activeElement.matches('.seat-row.mine')"), page.evaluate(
            _FOCUSED_JS
        )
        watch.assert_clean()
    finally:
        context.close()


def test_leave_seat_pressed_with_enter_leaves_the_focus_on_the_name_box(
    server: ServerProcess, browser: Any
) -> None:
    """Found by a keyboard trial: Leave seat went with the seat, and the focus fell to the page's
    body. The name box takes it, where Enter takes the first free seat again."""
    room = server.create_room(variant="kozel", seats=2, bots=[None, "easy"])
    context, page, watch = open_page(browser, DESKTOP, "en-US")
    try:
        goto(page, f"{server.url}/r/{room['code']}")
        page.fill("#player-name", "Ana")
        page.press("#player-name", "Enter")
        page.wait_for_selector(".seat-row.mine .leave")
        page.focus(".seat-row.mine .leave")
        page.keyboard.press("Enter")
        page.wait_for_selector(".seat-row.mine", state="detached")  # drawn with the focus in one task
        assert page.evaluate("() => document.activeElement.id === 'player-name'"), page.evaluate(_FOCUSED_JS)
        watch.assert_clean()
    finally:
        context.close()


def test_the_phone_feed_drawer_takes_the_focus_and_gives_it_back(server: ServerProcess, browser: Any) -> None:
    """Found by a keyboard trial (390 px): Play by play opened the drawer with the focus left on
    its button, the drawer after the hand in Tab order. Opened from its button, the drawer takes
    the focus (its heading); closed with Escape or its Close, it gives it back to the button."""
    room = server.create_room(variant="kozel", seats=2, bots=[None, "easy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, {"width": 390, "height": 844}, "en-US")
    try:
        sit_and_start(page, server, room, token)
        wait_for_a_tile_to_place(page)  # no timer: the table waits on Ana (her turn keeps the drawer)
        for close in ("Escape", ".feed-close"):
            page.focus(".feed-toggle")
            page.keyboard.press("Enter")
            page.wait_for_selector(".table-screen.feed-open")
            assert page.evaluate("() => document.activeElement.matches('.feed .feed-head h2')"), (
                page.evaluate(_FOCUSED_JS)
            )
            if close == "Escape":
                page.keyboard.press("Escape")
            else:
                page.keyboard.press("Tab")  # into the drawer's tools, on to its Close
                page.focus(close)
                page.keyboard.press("Enter")
            page.wait_for_selector(".table-screen:not(.feed-open)")
            assert page.evaluate("() => document.activeElement.matches('.feed-toggle')"), page.evaluate(
                _FOCUSED_JS
            )
            assert page.get_attribute(".feed-toggle", "aria-expanded") == "false"
        watch.assert_clean()
    finally:
        context.close()


def test_a_spectating_host_arrives_at_the_table_on_the_chain(server: ServerProcess, browser: Any) -> None:
    """Found by a keyboard trial: a host with no seat who pressed Start with Enter landed on "Bot
    1's tiles, face down" (the hand a spectator follows). The focus goes to the chain, the line of
    play."""
    room = server.create_room(variant="kozel", seats=2, bots=["easy", "easy"], turn_timer_s=0)
    context, page, watch = open_page(browser, DESKTOP, "en-US")
    try:
        goto(page, f"{server.url}/r/{room['code']}")
        hold_host(page, room["code"], room["host_token"])
        page.reload()
        page.wait_for_selector(".start-box .start-match")
        page.evaluate(_FOCUS_ON_ARRIVAL_JS, ".table-screen .chain-board")
        page.focus(".start-match")
        page.keyboard.press("Enter")
        focused = page.evaluate("() => window.__focusOnArrival")
        assert "chain-board" in focused.split(), focused
        watch.assert_clean()
    finally:
        context.close()
