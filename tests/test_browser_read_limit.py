"""A room page in Chromium when its address has spent its public reads (``DOMENG_READ_LIMIT``,
docs/protocol.md): the page says so in the reader's language, with the way back to the lobby,
rather than staying blank."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.browserkit import catalog_of, goto, open_page
from tests.serverkit import ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    env = {"DOMENG_READ_LIMIT": "3 per minute"}
    process = ServerProcess(tmp_path_factory.mktemp("browser-reads"), env=env).start()
    yield process
    process.stop()


def test_a_room_page_says_its_address_read_too_much(server: ServerProcess, browser: Any) -> None:
    room = server.create_room()
    for _ in range(3):  # this address's reads of the minute, spent
        assert httpx.get(f"{server.url}/api/room-defaults", timeout=10).status_code == 200
    context, page, _ = open_page(browser, locale="et-EE")
    try:
        goto(page, f"{server.url}/r/{room['code']}")
        heading = page.wait_for_selector(".not-found h1")
        assert heading is not None
        assert heading.text_content() == catalog_of("et")["error.too_many_reads"]
        assert page.locator(".not-found a[href='/']").count() == 1
    finally:
        context.close()
