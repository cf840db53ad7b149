"""A room page whose first read of the room is answered 503 with ``Retry-After``: the room moving
between server processes while one of them stops (docs/deploy.md, "Adding and removing a process";
tests/test_topology_scale.py met it through nginx, every process answering 503 for an instant).
The page asks again after it, as its socket reconnects after a close, and shows the room; it used
to stop there, with nothing drawn."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browserkit import open_page
from tests.serverkit import ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(Path(tmp_path_factory.mktemp("browser-first-read"))).start()
    yield process
    process.stop()


def test_a_room_page_reads_its_room_again_after_a_503(server: ServerProcess, browser: Any) -> None:
    code = server.create_room()["code"]
    refused: list[str] = []

    def once(route: Any) -> None:  # the first read meets the room on its way to another process
        if refused:
            route.continue_()
            return
        refused.append(route.request.url)
        detail = {"code": "room_elsewhere", "message": "this room is hosted by another server; try again"}
        route.fulfill(status=503, headers={"Retry-After": "1"}, json={"detail": detail})

    context, page, _ = open_page(browser)
    try:
        page.route(f"**/api/rooms/{code}", once)
        page.goto(f"{server.url}/r/{code}")
        page.wait_for_selector(".seat-list", timeout=30_000)
        page.wait_for_selector("body[data-ready]")
        assert len(refused) == 1
    finally:
        context.close()
