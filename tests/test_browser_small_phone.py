"""The table on a small phone (320×568) in Chromium: each opponent's plate holds its name, its
stones or points and its tile count inside its edge (at 320 px the count "×5" was cut at the
plate's edge and "Wayan" broke as "Waya/n"), for a player and a spectator, at a Domeng table of
five and a Kozel table of four."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browserkit import goto, open_page, screenshot, sit_and_start
from tests.serverkit import ServerProcess

SMALL = {"width": 320, "height": 568}
NAMES = ["Ana", "Wayan", "Dénes", "Ketut", "Putu"]

# Each opponent's plate: what of it reaches past its inner edge, and the lines its name takes.
PLATES = """() => [...document.querySelectorAll('.plate:not(.plate-me)')].map((plate) => {
    const edge = plate.getBoundingClientRect();
    const inside = (el) => { const r = el.getBoundingClientRect();
        return r.left >= edge.left && r.right <= edge.right - 1 && r.bottom <= edge.bottom; };
    const parts = [...plate.querySelectorAll('.plate-stones, .plate-points, .plate-tiles .count, .name-text')]
        .filter((el) => el.checkVisibility());
    const name = plate.querySelector('.name-text');
    const tops = [...name.getClientRects()].map((r) => Math.round(r.top));
    return {name: name.textContent, lines: new Set(tops).size,
            out: parts.filter((el) => !inside(el)).map((el) => el.className || el.textContent),
            scrolls: plate.scrollWidth > plate.clientWidth + 1};
})"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path_factory.mktemp("browser-small-phone"),
        env={"DOMENG_BOT_DELAY_S": "0.05", "DOMENG_ROUND_PAUSE_S": "1"},
    ).start()
    yield process
    process.stop()


def _assert_plates_fit(page: Any, seats: int) -> None:
    page.wait_for_function(
        "(n) => [...document.querySelectorAll('.plate:not(.plate-me) .plate-tiles .count')]"
        "  .filter((c) => c.textContent.startsWith('×')).length === n - 1",
        arg=seats,
    )
    plates = page.evaluate(PLATES)
    assert len(plates) == seats - 1, plates
    assert all(p["out"] == [] and not p["scrolls"] for p in plates), plates
    assert all(p["lines"] == 1 for p in plates), plates  # a five-letter name keeps its line


@pytest.mark.parametrize(("variant", "seats"), [("domeng", 5), ("kozel", 4)])
def test_a_small_phones_plates_hold_their_names_and_counts(
    server: ServerProcess, browser: Any, variant: str, seats: int
) -> None:
    room = server.create_room(variant=variant, seats=seats, bots=[None] * seats, turn_timer_s=0)
    tokens = [server.claim(room["code"], s, NAMES[s]).json()["token"] for s in range(seats)]
    context, page, watch = open_page(browser, SMALL)
    sit_and_start(page, server, room, tokens[0])
    _assert_plates_fit(page, seats)
    screenshot(page, f"small-phone-{variant}-player")
    spectator = context.browser.new_context(viewport=SMALL, locale="en-US", reduced_motion="reduce")
    watching = spectator.new_page()
    goto(watching, f"{server.url}/r/{room['code']}")
    watching.wait_for_selector(".table-screen.spectating")
    _assert_plates_fit(watching, seats)
    screenshot(watching, f"small-phone-{variant}-spectator")
    spectator.close()
    watch.assert_clean()
    context.close()
