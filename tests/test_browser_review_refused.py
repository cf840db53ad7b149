"""A round's review the server gives up on, in Chromium: its review took longer than
``DOMENG_REVIEW_TIMEOUT_S`` (503 ``review_timeout``, docs/protocol.md). A new user's report: the
panel said "The review is not available now:" in the page's language and then the server's English
sentence; it says why in the page's language, and offers to ask again."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browserkit import PANEL, PHONE, catalog_of, open_page, play_until, sit_and_start
from tests.serverkit import ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    env = {"DOMENG_BOT_DELAY_S": "0.05", "DOMENG_ROUND_PAUSE_S": "600", "DOMENG_REVIEW_TIMEOUT_S": "0.001"}
    process = ServerProcess(tmp_path_factory.mktemp("browser-review-refused"), env=env).start()
    yield process
    process.stop()


def test_a_review_that_took_too_long_is_said_in_the_pages_language(
    server: ServerProcess, browser: Any
) -> None:
    catalog = catalog_of("uk")
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, PHONE, "uk-UA")
    try:
        sit_and_start(page, server, room, token)
        play_until(page, lambda: page.locator(PANEL).count() > 0, timeout=180)
        page.locator(f"{PANEL} .review-button").click()
        failed = page.locator(f"{PANEL} .review-failed")
        failed.wait_for(state="visible", timeout=60_000)
        assert failed.text_content() == catalog["review.failed"].replace(
            "{reason}", catalog["error.review_timeout"]
        )
        assert page.locator(f"{PANEL} .review-body button", has_text=catalog["review.retry"]).count() == 1
        # the browser logs the refused request itself; nothing else went wrong
        assert all("status of 503" in error for error in watch.errors), watch.errors
        assert watch.dialogs == []
    finally:
        context.close()
