"""A frame over the server's size limit, in Chromium: the server keeps its protection (it closes the
socket with 1009, docs/protocol.md), and the page says why in the player's language before it
reconnects, rather than only "Connection lost. Reconnecting…" (a trial sent a 5,000-character chat
line past the box's 200-character limit)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browserkit import DESKTOP, catalog_of, languages, open_page, sit_and_start, switch_language
from tests.serverkit import ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("browser-frame-limit")).start()
    yield process
    process.stop()


# The chat line, sent on the page's socket as the chat box would send a short one; the close code
# the page's socket hears.
SEND_HUGE = """() => new Promise((done) => {
    const ws = window.__domeng.socket.ws;
    ws.addEventListener('close', (event) => done(event.code));
    ws.send(JSON.stringify({type: 'chat', text: 'x'.repeat(5000)}));
})"""


def test_a_frame_too_large_is_said_and_the_page_reconnects(server: ServerProcess, browser: Any) -> None:
    room = server.create_room(variant="kozel", seats=2, bots=[None, "easy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, DESKTOP)
    try:
        sit_and_start(page, server, room, token)
        for lang in ["en", "ru"]:  # said in the page's language
            switch_language(page, lang)
            page.wait_for_function("() => !!window.__domeng.socket.ws && window.__domeng.connection.online")
            assert page.evaluate(SEND_HUGE) == 1009  # the server's protection stays
            said = page.locator("#toasts .toast-error", has_text=catalog_of(lang)["error.frame_too_big"])
            said.wait_for(state="visible")
            # and it reconnects as after any other close: the table is live again
            page.wait_for_function("() => !!window.__domeng.connection.online")
            page.wait_for_selector(".banner", state="hidden")
        assert all(lang in languages() for lang in ("en", "ru"))
        watch.assert_clean()
    finally:
        context.close()
