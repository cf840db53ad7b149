"""The lobby in Chromium when the server refuses a new table: the address already has as many
unfinished tables as ``DOMENG_MAX_ROOMS_PER_ADDRESS`` allows (429 ``too_many_open_rooms``,
docs/protocol.md). A new user's report: the lobby said "Could not create the table:" in the page's
language and then the server's English sentence; it says the whole refusal in the page's language,
with what to do."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browserkit import PHONE, catalog_of, goto, open_page
from tests.serverkit import ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    env = {"DOMENG_MAX_ROOMS_PER_ADDRESS": "1"}
    process = ServerProcess(tmp_path_factory.mktemp("browser-create-refused"), env=env).start()
    # the address's one unfinished table: the browser's, from the same 127.0.0.1, is one too many
    process.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
    yield process
    process.stop()


@pytest.mark.parametrize("lang", ["ru", "id"])
def test_a_refused_table_is_said_in_the_lobbys_language(
    server: ServerProcess, browser: Any, lang: str
) -> None:
    context, page, watch = open_page(browser, PHONE, locale=f"{lang}-{lang.upper()}")
    try:
        goto(page, f"{server.url}/")
        page.click("#create-room")
        catalog = catalog_of(lang)
        said = page.locator("#toasts .toast-error").first
        said.wait_for(state="visible")
        expected = catalog["lobby.error"].replace("{message}", catalog["error.too_many_open_rooms"])
        assert said.text_content() == expected
        assert "/r/" not in page.url  # still in the lobby, the form ready to send again
        assert page.locator("#create-room").is_enabled()
        # the browser logs the refused request itself; nothing else went wrong
        assert all("status of 429" in error for error in watch.errors), watch.errors
        assert watch.dialogs == []
    finally:
        context.close()
