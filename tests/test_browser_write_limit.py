"""The host's page in Chromium when its address has spent its room changes (``DOMENG_WRITE_LIMIT``,
docs/protocol.md): a refused change is said in the host's language, not as an English message
inside the general words."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.browserkit import DESKTOP, catalog_of, goto, hold_host, hold_seat, open_page
from tests.serverkit import ServerProcess

WRITES = 3
"""The test server's allowance of room changes a minute, spent over the API before the page acts."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    env = {"DOMENG_WRITE_LIMIT": f"{WRITES} per minute"}
    process = ServerProcess(tmp_path_factory.mktemp("browser-writes"), env=env).start()
    yield process
    process.stop()


@pytest.mark.parametrize("lang", ["et"])
def test_a_refused_change_is_said_in_the_hosts_language(
    server: ServerProcess, browser: Any, lang: str
) -> None:
    room = server.create_room(variant="kozel", seats=2, bots=[None, "easy"], turn_timer_s=0)
    code, host = room["code"], {"Authorization": f"Bearer {room['host_token']}"}
    token = server.claim(code, 0, "Ana").json()["token"]  # one change
    for n in range(WRITES - 1):  # the rest of the minute's
        reply = httpx.put(f"{server.url}/api/rooms/{code}/open", json={"open": n % 2 == 0}, headers=host)
        assert reply.status_code == 200, reply.text
    context, page, watch = open_page(browser, DESKTOP, locale=f"{lang}-{lang.upper()}")
    try:
        goto(page, f"{server.url}/r/{code}")
        hold_seat(page, code, token, 0)
        hold_host(page, code, room["host_token"])
        page.reload()
        page.wait_for_selector("#open-table")
        page.click("#open-table")
        said = page.locator("#toasts .toast-error", has_text=catalog_of(lang)["error.too_many_writes"])
        said.wait_for(state="visible")
        # the browser logs the refused request itself; nothing else went wrong
        assert all("status of 429" in error for error in watch.errors), watch.errors
        assert watch.dialogs == []
    finally:
        context.close()
