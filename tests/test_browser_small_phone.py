"""The table on a small phone (320×568) in Chromium: each opponent's plate holds its name, its
stones or points and its tile count inside its edge (at 320 px the count "×5" was cut at the
plate's edge and "Wayan" broke as "Waya/n"), for a player and a spectator, at a Domeng table of
five and a Kozel table of four; and the felt keeps a readable chain while an end is chosen."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browserkit import PLAYABLE, goto, languages, open_page, screenshot, sit_and_start, switch_language
from tests.serverkit import ServerProcess
from tests.test_browser_layout import LONGEST

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


# The player chooses where a playable tile of their hand goes (as a tile that fits both ends asks:
# the question above the hand, Left end, Right end and Cancel under it) while the board shows a
# chain of 28 tiles (opened in its middle) with its two end targets; once the page has drawn it and
# the chain's tiles are at rest (a frame at a time, at most 60): the felt's height, each chain
# tile's box and short side, the board's box and whether it scrolls, and the page's height with the
# bottoms of the hand and the choice's buttons (in the page, scrolled or not). Null when a state
# drew the page's own chain meanwhile.
CHOOSING = """async (chain) => {
    const s = window.__domeng.screen;
    const key = [...s.handButtons].find(([, b]) => b.classList.contains('playable'))[0];
    s.choosing = key;
    s.update();
    s.chain.update(chain, ['0', '0'], key, 14);
    const frame = () => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
    const moving = () => document.getAnimations().some(
        (a) => a.playState === 'running' && a.effect?.target?.closest?.('.chain-tile'));
    await frame();
    for (let i = 0; i < 60 && moving(); i += 1) await frame();
    if (s.chain.chain.join() !== chain.join()) return null;
    const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
    const board = document.querySelector('.chain-board');
    const inPage = (el) => el.getBoundingClientRect().bottom + scrollY;
    return {felt: document.querySelector('.felt').clientHeight,
            tiles: [...document.querySelectorAll('.chain-tile')]
                .map((el) => [...box(el), Math.min(el.offsetWidth, el.offsetHeight)]),
            board: box(board), scrolls: board.scrollHeight > board.clientHeight + 1
                && getComputedStyle(board).overflowY === 'auto',
            boardContent: board.scrollHeight,
            page: document.scrollingElement.scrollHeight,
            bottoms: [inPage(document.querySelector('.hand')),
                      ...[...document.querySelectorAll('.choice:not([hidden]) button')].map(inPage)]};
}"""


def test_a_small_phones_felt_keeps_a_readable_chain_while_an_end_is_chosen(
    server: ServerProcess, browser: Any
) -> None:
    """Found at 320x568: while the player chose an end for a tile (the question in three lines, Left
    end, Right end and Cancel above the hand) the felt fell to a strip 10 px high, its chain drawn
    with tiles 10 px high, most of them outside it, where they were to be chosen on. The felt keeps
    room for the chain at 14 px a tile at least: the page scrolls to the hand and the buttons, and a
    chain longer than the felt then holds scrolls inside it."""
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, NAMES[0]).json()["token"]
    context, page, watch = open_page(browser, SMALL)
    try:
        sit_and_start(page, server, room, token)
        page.wait_for_selector(PLAYABLE)
        for _ in range(20):
            shown = page.evaluate(CHOOSING, LONGEST)
            if shown is not None:
                break
        else:
            raise AssertionError("the page kept drawing its own chain")
        screenshot(page, "small-phone-choosing-an-end")
        assert shown["felt"] >= 90, shown  # no strip
        assert len(shown["tiles"]) == len(LONGEST), shown
        assert all(tile[4] >= 14 for tile in shown["tiles"]), shown  # readable tiles
        left, top, right, _ = shown["board"]
        # every tile in the board's width, and in its height or in what it scrolls to
        for tile in shown["tiles"]:
            assert left - 1 <= tile[0] and tile[2] <= right + 1, (tile, shown)
            assert top - 1 <= tile[1], (tile, shown)
        if not shown["scrolls"]:
            assert all(tile[3] <= shown["board"][3] + 1 for tile in shown["tiles"]), shown
        # the hand and the choice's buttons are on the page (scrolled to, if need be)
        assert all(bottom <= shown["page"] + 1 for bottom in shown["bottoms"]), shown
        watch.assert_clean()
    finally:
        context.close()


def test_the_rules_page_fits_a_small_phone_in_every_language(server: ServerProcess, browser: Any) -> None:
    """Found by a zoom trial (320 CSS px: a small phone, or a desktop at 400 %): the rules' table of
    who receives stones reached 28 to 54 px past the page's edge, its Stones column cut off and
    the page scrolling sideways. A long game word breaks inside its cell now."""
    context, page, watch = open_page(browser, SMALL)
    try:
        goto(page, f"{server.url}/rules")
        for lang in languages():
            switch_language(page, lang)
            page.wait_for_selector(".rules-table")
            sideways = page.evaluate(
                """() => [document.documentElement.scrollWidth - innerWidth,
                    ...[...document.querySelectorAll('.rules-table th, .rules-table td')]
                        .filter((el) => el.getBoundingClientRect().right > innerWidth)
                        .map((el) => el.textContent)]"""
            )
            assert sideways == [0], (lang, sideways)
        watch.assert_clean()
    finally:
        context.close()
