"""The feed's drawer on a phone, by keyboard, in Chromium: opened from the top bar, the focus goes
through it in the order it shows (under the bar, above the hand on one's turn), never to what it
covers; Shift+Tab from its top goes back to the bar, Tab past its end to the hand below it; closed
(Escape, Close), the focus is back on its button and the drawer out of the way."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browserkit import PHONE, open_page, sit_and_start, wait_for_a_tile_to_place
from tests.serverkit import ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    env = {"DOMENG_BOT_DELAY_S": "0.05", "DOMENG_ROUND_PAUSE_S": "600", "DOMENG_TURN_TIMER_S": "0"}
    process = ServerProcess(tmp_path_factory.mktemp("browser-drawer-focus"), env=env).start()
    yield process
    process.stop()


# The focused element: where it is (the feed's drawer, the bar, the hand, elsewhere), whether the
# open drawer covers its middle, and a name for messages.
FOCUSED = """() => {
    const el = document.activeElement;
    if (!el || el === document.body) return {where: 'body', covered: false, name: 'body'};
    const feed = document.querySelector('.feed'), open = !!document.querySelector('.table-screen.feed-open');
    const where = feed.contains(el) ? 'feed' : el.closest('.bar') ? 'bar'
        : el.closest('.hand') ? 'hand' : 'other';
    const r = el.getBoundingClientRect(), f = feed.getBoundingClientRect();
    const x = r.left + r.width / 2, y = r.top + r.height / 2;
    const covered = open && where !== 'feed' && x >= f.left && x <= f.right && y >= f.top && y <= f.bottom;
    return {where, covered, name: `${el.tagName.toLowerCase()}.${el.className}`};
}"""


def _tab_through(page: Any, key: str, limit: int = 40) -> list[dict[str, Any]]:
    """Press ``key`` until the focus leaves the drawer (at most ``limit`` times); each focus seen."""
    seen = []
    for _ in range(limit):
        page.keyboard.press(key)
        focused = page.evaluate(FOCUSED)
        seen.append(focused)
        if focused["where"] != "feed":
            break
    return seen


def _round_the_page(page: Any, limit: int = 80) -> list[dict[str, Any]]:
    """From the drawer's heading, Tab once round the page (past its end, through the bar) until
    the focus is in the drawer again; each focus seen."""
    page.focus(".feed-head h2")
    seen: list[dict[str, Any]] = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        seen.append(page.evaluate(FOCUSED))
        if seen[-1]["where"] == "feed" and any(f["where"] == "body" for f in seen):
            return seen
    raise AssertionError(f"the focus never came back to the drawer: {seen}")


def _open_drawer(page: Any) -> None:
    """Open the drawer the keyboard's way (its button in the bar, Enter): the focus on its heading."""
    page.focus(".feed-toggle")
    page.keyboard.press("Enter")
    page.wait_for_selector(".table-screen.feed-open")
    assert page.evaluate("() => document.activeElement === document.querySelector('.feed-head h2')")


def test_the_phone_drawers_tab_order_is_the_order_it_shows(server: ServerProcess, browser: Any) -> None:
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, PHONE)
    try:
        sit_and_start(page, server, room, token)
        wait_for_a_tile_to_place(page)  # no turn timer: the table waits for Ana, the hand shows
        _open_drawer(page)
        # forward: every stop of the drawer, then the hand below it (one's turn: the drawer ends above it)
        forward = _tab_through(page, "Tab")
        assert len(forward) > 3 and all(f["where"] == "feed" for f in forward[:-1]), forward
        assert forward[-1]["where"] == "hand" and not forward[-1]["covered"], forward
        # backward from its heading: the bar above it, never the hand or what the drawer covers
        page.focus(".feed-head h2")
        back = _tab_through(page, "Shift+Tab")
        assert back[-1]["where"] == "bar", back
        # round the page once: nothing the drawer covers takes the focus
        stops = _round_the_page(page)
        assert not [f for f in stops if f["covered"] or f["where"] == "other"], stops
        # closed by Escape from inside: the focus back on its button, the drawer after the hand again
        page.focus(".feed-close")
        page.keyboard.press("Escape")
        page.wait_for_selector(".table-screen:not(.feed-open)")
        assert page.evaluate("() => document.activeElement?.classList.contains('feed-toggle')")
        assert page.evaluate(
            "() => !document.querySelector('.felt').inert && !document.querySelector('.me').inert"
        )
        # and by its Close button
        _open_drawer(page)
        page.focus(".feed-close")
        page.keyboard.press("Enter")
        page.wait_for_selector(".table-screen:not(.feed-open)")
        assert page.evaluate("() => document.activeElement?.classList.contains('feed-toggle')")
        watch.assert_clean()
    finally:
        context.close()
