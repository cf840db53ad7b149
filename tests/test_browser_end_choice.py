"""Choosing the end a tile goes to on a small phone, in Chromium: while the question, its Left end,
Right end and Cancel and the chain's two end targets show, nothing scrolls the page, and all of them
are on the screen (320x568, 360x640)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browserkit import (
    END_TARGET,
    languages,
    open_page,
    play_turn,
    screenshot,
    sit_and_start,
    switch_language,
    wait_for_a_tile_to_place,
)
from tests.serverkit import ServerProcess

# The page's turn, its first playable tile given both ends (the legal moves of a tile that fits
# both, as the server lists them: the same move with "end" L and with R), drawn again; from then on
# every scroll of the page or of a box in it (not the chain's board, which scrolls a long chain
# inside itself) is noted in window.__scrolled. Returns the tile's key.
BOTH_ENDS = """() => {
    const c = window.__domeng, v = c.view;
    const move = v.legal.find((a) => typeof a.play === 'string');
    v.legal = [...v.legal.filter((a) => a.play !== move.play), {...move, end: 'L'}, {...move, end: 'R'}];
    c.screen.update([]);
    window.__scrolled = [];
    const note = (event) => {
        const el = event.target === document ? document.scrollingElement : event.target;
        if (el.closest?.('.chain-board')) return;
        window.__scrolled.push([el.className || el.tagName, el.scrollLeft, el.scrollTop]);
    };
    addEventListener('scroll', note, {capture: true});
    const [a, b] = move.play.split('-').map(Number);
    return `${Math.min(a, b)}-${Math.max(a, b)}`;
}"""

# Once the choice is drawn and a few frames have passed: the page's scroll and scrollable size, the
# screen, the scrolls noted, and the boxes [left, top, right, bottom] of the question, its buttons
# and the end targets.
SHOWN = """async () => {
    for (let i = 0; i < 3; i += 1) await new Promise((done) => requestAnimationFrame(done));
    const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
    const page = document.scrollingElement;
    const parts = [document.querySelector('.me-status'),
                   ...document.querySelectorAll('.choice:not([hidden]) button'),
                   ...document.querySelectorAll('.end-target:not([hidden])')];
    return {x: scrollX, y: scrollY, wide: page.scrollWidth, high: page.scrollHeight, w: innerWidth,
            h: innerHeight, scrolled: window.__scrolled, focused: document.activeElement.className,
            felt: document.querySelector('.felt').clientHeight, parts: parts.map(box)};
}"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path_factory.mktemp("browser-end-choice"),
        env={"DOMENG_BOT_DELAY_S": "0.05", "DOMENG_ROUND_PAUSE_S": "1"},
    ).start()
    yield process
    process.stop()


@pytest.mark.parametrize(
    "viewport", [{"width": 320, "height": 568}, {"width": 360, "height": 640}], ids=["320x568", "360x640"]
)
def test_choosing_an_end_scrolls_nothing_and_shows_the_whole_choice(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    """Found on a phone 320 px wide: tapping a tile that fits both ends made the page jump (the
    focus moved to the left end's target, which the browser scrolled into view) and the choice's
    buttons went below the screen's edge. Tapped in each language, then chosen with the keyboard:
    the page does not scroll, and the question, Left end, Right end, Cancel and both end targets
    are inside the screen."""
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, viewport)
    try:
        sit_and_start(page, server, room, token)
        wait_for_a_tile_to_place(page)
        if not page.evaluate("() => window.__domeng.view.chain.length"):
            assert play_turn(page)  # the opening has no end to choose: the next turn has
            wait_for_a_tile_to_place(page)
        for lang, how in [(lang, "tap") for lang in languages()] + [("en", "keyboard")]:
            switch_language(page, lang)
            # a player scrolls to their hand when the page is taller than the screen
            page.evaluate("() => scrollTo(0, document.scrollingElement.scrollHeight)")
            key = page.evaluate(BOTH_ENDS)
            tile = page.locator(f".hand-tile[data-tile='{key}']")
            if how == "tap":
                tile.click()
            else:
                tile.focus()
                page.keyboard.press("Enter")
            page.wait_for_selector(END_TARGET)
            shown = page.evaluate(SHOWN)
            screenshot(page, f"end-choice-{how}-{viewport['width']}x{viewport['height']}-{lang}")
            assert shown["focused"].startswith("end-target"), (lang, shown)
            assert (shown["x"], shown["y"], shown["scrolled"]) == (0, 0, []), (lang, shown)
            assert shown["wide"] <= shown["w"] and shown["high"] <= shown["h"], (lang, shown)
            assert len(shown["parts"]) == 6, (lang, shown)
            for part in shown["parts"]:
                assert part[0] >= 0 and part[1] >= 0, (lang, part, shown)
                assert part[2] <= shown["w"] and part[3] <= shown["h"], (lang, part, shown)
            page.keyboard.press("Escape")
            page.wait_for_selector(END_TARGET, state="detached")
        watch.assert_clean()
    finally:
        context.close()
