"""A message the page says beside a field (a refused turn timer, a refused name) after the player
switches the page's language, in Chromium: it still stands, beside what was typed, in the new
language (the page is drawn again in it: static/js/i18n.js ``setLanguage``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browserkit import (
    DESKTOP,
    PHONE,
    catalog_of,
    create_room_in_lobby,
    goto,
    languages,
    open_page,
    screenshot,
    switch_language,
)
from tests.serverkit import ServerProcess

BOTS = ["person", "medium", "easy", "hard", "easy"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("browser-relabel")).start()
    yield process
    process.stop()


def _timer_invalid(lang: str) -> str:
    return str(catalog_of(lang)["lobby.timer_invalid"]).replace("{min}", "5").replace("{max}", "600")


def test_the_waiting_rooms_refused_timer_is_said_again_in_the_language_switched_to(
    server: ServerProcess, browser: Any
) -> None:
    """Found by a tester: the host typed a turn timer the server refuses (3 s), then switched the
    page's language: the reason beside the box stayed in the old language (or went, with what was
    typed). It stays, in each language switched to, the box keeping "3" marked invalid; a good value
    clears it as before."""
    context, page, watch = open_page(browser, DESKTOP)
    try:
        code = create_room_in_lobby(page, server.url, BOTS)
        box, error = page.locator("#opt-turn-timer"), page.locator("#opt-turn-timer-error")
        box.fill("3")
        box.press("Tab")
        error.wait_for(state="visible")
        assert error.inner_text() == _timer_invalid("en")
        for lang in [*languages(), "en"]:
            switch_language(page, lang)
            assert error.is_visible() and error.inner_text() == _timer_invalid(lang), lang
            assert box.input_value() == "3" and box.get_attribute("aria-invalid") == "true", lang
        screenshot(page, "waiting-timer-refused-relabelled-1280-en")
        box.fill("20")
        box.press("Enter")
        page.wait_for_function("() => window.__domeng?.room?.turn_timer_s === 20")
        error.wait_for(state="hidden")
        assert server.room(code)["turn_timer_s"] == 20
        watch.assert_clean()
    finally:
        context.close()


def test_the_lobbys_refused_timer_is_said_again_in_the_language_switched_to(
    server: ServerProcess, browser: Any
) -> None:
    """The lobby's timer box, refused when Create is pressed: after a switch of language the
    reason is said in the new language, beside the value still typed; the rest of the form keeps
    what was chosen too (Kozel for 3, a hard bot in seat 2)."""
    context, page, watch = open_page(browser, PHONE)
    try:
        goto(page, f"{server.url}/")
        page.select_option("#variant", "kozel")
        page.select_option("#kozel-seats", "3")
        page.select_option("#seat-2", "hard")
        page.fill("#turn-timer", "601")
        page.click("#create-room")
        error = page.locator("#turn-timer-error")
        error.wait_for(state="visible")
        for lang in [*languages(), "en"]:
            switch_language(page, lang)
            assert error.is_visible() and error.inner_text() == _timer_invalid(lang), lang
            assert page.input_value("#turn-timer") == "601", lang
            chosen = [page.input_value(f"#{field}") for field in ("variant", "kozel-seats", "seat-2")]
            assert chosen == ["kozel", "3", "hard"] and page.locator(".seat-choice").count() == 3, lang
        watch.assert_clean()
    finally:
        context.close()


def test_a_refused_name_is_said_again_in_the_language_switched_to(
    server: ServerProcess, browser: Any
) -> None:
    """A name the server refused (a bot's label, ``name_reserved``) is said beside the name box;
    after a switch of language it is said in the new language, the name still typed."""
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"])
    context, page, watch = open_page(browser, PHONE)
    try:
        goto(page, f"{server.url}/r/{room['code']}")
        page.fill("#player-name", "Bot 3")
        page.click(".sit[data-seat='0']")
        error = page.locator("#player-name-error")
        error.wait_for(state="visible")
        for lang in [*languages(), "en"]:
            switch_language(page, lang)
            wanted = str(catalog_of(lang)["join.name_reserved"])
            assert error.is_visible() and error.inner_text() == wanted, lang
            assert page.input_value("#player-name") == "Bot 3", lang
        screenshot(page, "waiting-name-refused-relabelled-390-en")
        # the server's refusal (its 422 is logged by the browser) and nothing else
        assert [e for e in watch.errors if "status of 422" not in e] == [] and watch.dialogs == []
    finally:
        context.close()


def test_the_chats_line_and_refused_name_stay_in_the_language_switched_to(
    server: ServerProcess, browser: Any
) -> None:
    """A spectator in the waiting room's chat (the host lets spectators write) was half through a
    line and had a name refused ("Bot 3", ``name_reserved``): after a switch of language the line
    was gone and the refusal with it. Both stay: the line in its box, the name in its box with the
    reason in the new language."""
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"])
    server.claim(room["code"], 0, "Ana")
    server.let_spectators_chat(room["code"], room["host_token"])
    context, page, watch = open_page(browser, DESKTOP)
    try:
        goto(page, f"{server.url}/r/{room['code']}")
        page.wait_for_selector(".chat-name:not([hidden])")
        page.fill(".chat-name-input", "Bot 3")
        page.click(".chat-name-save")
        page.wait_for_selector(".chat-name-said.field-error")
        page.fill(".chat-input", "half a li")
        for lang in [*languages(), "en"]:
            switch_language(page, lang)
            said = page.locator(".chat-name-said")
            assert said.text_content() == catalog_of(lang)["join.name_reserved"], lang
            assert "field-error" in (said.get_attribute("class") or ""), lang
            assert page.input_value(".chat-name-input") == "Bot 3", lang
            assert page.input_value(".chat-input") == "half a li", lang
        watch.assert_clean()
    finally:
        context.close()
