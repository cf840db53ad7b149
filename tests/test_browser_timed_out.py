"""A turn that timed out, in Chromium: the player whose turn timer ran out is told on their own
page, in words and to a screen reader, what the bot played for them; a spectator is not told it
as if it were theirs (they see the feed's "bot for …" tag). Screenshots go to
artifacts/screenshots/."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browserkit import (
    PHONE,
    catalog_of,
    goto,
    languages,
    open_page,
    screenshot,
    sit_and_start,
    switch_language,
)
from tests.serverkit import ServerProcess

NOTE = ".timed-out-note"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    # a short turn timer for every room made without one (the shortest one takes); the bots'
    # pauses (each drawn 0.5x to 1.6x the delay) keep Ana's next timeout (which hands her seat to
    # a covering bot and hides the note: the cover note says more) at least 4 x 3 + 5 = 17 s off,
    # about 29 s as a rule: time for six languages on a busy machine
    env = {"DOMENG_TURN_TIMER_S": "5", "DOMENG_BOT_DELAY_S": "6", "DOMENG_ROUND_PAUSE_S": "600"}
    process = ServerProcess(tmp_path_factory.mktemp("browser-timed-out"), env=env).start()
    yield process
    process.stop()


def _timed_out_move(page: Any) -> dict[str, Any]:
    """The page's seat's first event in the round's log that a bot made for it (``by_bot``)."""
    move: dict[str, Any] = page.evaluate(
        """() => { const c = window.__domeng, bot = new Set(c.room.round.by_bot);
            return c.view.log.find((e, i) => bot.has(i) && e.seat === c.seat); }"""
    )
    return move


def test_a_player_whose_time_ran_out_is_told_what_the_bot_played(server: ServerProcess, browser: Any) -> None:
    """A new user's report: when their time ran out, a bot played for them and only the feed's
    small "bot for Ana" tag, in a phone's closed drawer, said so. Ana, on a phone, does not move:
    her page says "Time's up — a bot played 0–6 for you." (the tile as the feed writes it) in a
    live region, in every language; a spectator's page says nothing of the kind."""
    room = server.create_room(bots=[None, "greedy", "greedy", "greedy", "greedy"])
    assert server.room(room["code"])["turn_timer_s"] == 5
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, PHONE)
    other, spectator, other_watch = open_page(browser, PHONE)
    try:
        sit_and_start(page, server, room, token)
        goto(spectator, f"{server.url}/r/{room['code']}")
        spectator.wait_for_selector(".table-screen.spectating")
        note = page.locator(NOTE)
        assert note.get_attribute("role") == "status" and note.get_attribute("aria-live") == "polite"
        page.wait_for_selector(f"{NOTE} .timed-out-text", timeout=120_000)  # 4 bots first, then 5 s
        move = _timed_out_move(page)
        assert move["type"] == "placed", move  # Domeng's passes are forced: the server's, not a bot's
        a, b = move["tile"].split("-")
        en = catalog_of("en")
        assert page.text_content(f"{NOTE} .timed-out-text") == en["table.timed_out_played"].replace(
            "{tile}", f"{a}–{b}"
        )
        box = note.bounding_box()
        assert note.is_visible() and box is not None and box["y"] + box["height"] <= PHONE["height"], box
        screenshot(page, "timed-out-390x844-en")
        # the spectator sees the move in the feed (tagged), and no note as if it were theirs
        spectator.wait_for_function(
            "() => (window.__domeng.room.round?.by_bot || []).length > 0", timeout=30_000
        )
        assert spectator.locator(f"{NOTE} .timed-out-text").count() == 0
        for lang in languages():
            switch_language(page, lang)
            words = catalog_of(lang)
            text = page.text_content(f"{NOTE} .timed-out-text")
            assert text == words["table.timed_out_played"].replace("{tile}", f"{a}–{b}"), (lang, text)
        page.click(f"{NOTE} button")
        page.wait_for_selector(f"{NOTE} .timed-out-text", state="detached")
        watch.assert_clean()
        other_watch.assert_clean()
    finally:
        context.close()
        other.close()


def test_a_screen_reader_is_told_when_the_turns_time_is_nearly_up(
    server: ServerProcess, browser: Any
) -> None:
    """Found by a screen-reader trial: the turn timer's bar and seconds were silent, and the first
    a blind player heard of the timer was that a bot had played for them. Near the end of the turn
    (half of this 5 s timer) a live region says so, once."""
    words = catalog_of("en")
    room = server.create_room(variant="kozel", seats=2, bots=[None, "easy"])
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, PHONE)
    try:
        sit_and_start(page, server, room, token)
        said = page.wait_for_function(
            """(text) => [...document.querySelectorAll('[aria-live]')].find(
                (el) => el.textContent === text && el.closest('.table-screen'))""",
            arg=words["table.time_nearly_up"],
            timeout=120_000,
        )
        assert said.evaluate("(el) => el.getAttribute('aria-live')") == "assertive"
        watch.assert_clean()
    finally:
        context.close()
