"""A room full of spectators (``DOMENG_MAX_SPECTATORS``), in Chromium. A new user's report: one
spectator too many saw "Connection lost. Reconnecting…" for as long as the room stayed full, with
no word of why. The server closes that socket with its own code (4008, docs/protocol.md); the page
says the table has as many spectators as it can take, in its language, and starts watching by
itself once a place frees."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browserkit import PHONE, catalog_of, goto, open_page
from tests.serverkit import Client, ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    env = {"DOMENG_MAX_SPECTATORS": "1"}
    process = ServerProcess(tmp_path_factory.mktemp("browser-spectators-full"), env=env).start()
    yield process
    process.stop()


def test_one_spectator_too_many_is_told_why_and_watches_once_a_place_frees(
    server: ServerProcess, browser: Any
) -> None:
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
    code = room["code"]
    first = Client(server, code)  # the room's one spectator
    first.wait_for(lambda m: m["type"] == "state")
    catalog = catalog_of("hu")
    context, page, watch = open_page(browser, PHONE, locale="hu-HU")
    try:
        goto(page, f"{server.url}/r/{code}")
        banner = page.locator(".banner[data-kind='full']")
        banner.wait_for(state="visible", timeout=30_000)
        assert banner.text_content() == catalog["room.spectators_full"]
        assert page.locator(".banner[data-kind='reconnecting']").count() == 0
        first.close()  # a place frees: the page watches by itself
        page.wait_for_function("() => window.__domeng?.connection?.online === true", timeout=60_000)
        assert page.locator(".banner").is_hidden()
        assert [error for error in watch.errors if error.startswith("pageerror")] == []
        assert watch.dialogs == []
    finally:
        context.close()
        first.close()
