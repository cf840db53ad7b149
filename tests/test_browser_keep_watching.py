""" "Keep watching?" in Chromium (docs/protocol.md, `keep_watching`): a spectator watches a no-limit
table of five bots; after ``DOMENG_UNATTENDED_ROUNDS`` rounds (1 here) the bots stop dealing and
the table asks, above the hand, "The bots are waiting — keep watching?" with Continue, in every
language; Continue deals the next round and the question goes away."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browserkit import PHONE, catalog_of, goto, languages, open_page, screenshot, switch_language
from tests.serverkit import ServerProcess

ASKED = ".keep-watching:not([hidden])"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path_factory.mktemp("browser-keep-watching"),
        env={"DOMENG_BOT_DELAY_S": "0.02", "DOMENG_ROUND_PAUSE_S": "0.3", "DOMENG_UNATTENDED_ROUNDS": "1"},
    ).start()
    yield process
    process.stop()


def test_a_spectator_is_asked_whether_they_still_watch_and_continue_deals(
    server: ServerProcess, browser: Any
) -> None:
    room = server.create_room(bots=["easy"] * 5, turn_timer_s=0, options={"camat_target": 0})
    code = room["code"]
    context, page, watch = open_page(browser, PHONE)
    try:
        goto(page, f"{server.url}/r/{code}")
        assert server.start_match(code, room["host_token"]).status_code == 200
        page.wait_for_selector(ASKED)
        asked_in = server.room(code)["round"]["index"]
        for lang in languages():
            switch_language(page, lang)
            catalog = catalog_of(lang)
            note = page.locator(ASKED)
            assert note.locator("span").text_content() == catalog["watching.ask"], lang
            assert note.locator("button").text_content() == catalog["watching.continue"], lang
        switch_language(page, "en")
        assert page.locator("dialog.round-end[open]").count() == 0  # nothing covers the question
        screenshot(page, "keep-watching-phone")
        assert server.room(code)["round"]["index"] == asked_in  # no deal while it asks
        page.locator(ASKED).locator("button").click()
        deadline = time.monotonic() + 60
        while server.room(code)["round"]["index"] == asked_in:  # Continue deals the next round
            assert time.monotonic() < deadline, "Continue dealt nothing"
            time.sleep(0.1)
        # and the table asks again once that round ends: one round is the server's setting here
        page.wait_for_function(
            "(n) => document.querySelectorAll('.keep-watching:not([hidden])').length === n", arg=1
        )
        watch.assert_clean()
    finally:
        context.close()
