"""A greyed tile of one's hand, clicked or pressed, in Chromium: a new user's click on a tile that
could not be played did nothing at all. A toast says why, in the page's language: another's turn
(named), or a tile that fits neither end of the chain (its ends named) or that no rule lets be
played now."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browserkit import catalog_of, open_page, play_until, sit_and_start, version_of
from tests.serverkit import Client, ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path_factory.mktemp("browser-unplayable"),
        env={"DOMENG_BOT_DELAY_S": "0.05", "DOMENG_ROUND_PAUSE_S": "1"},
    ).start()
    yield process
    process.stop()


def _words(lang: str, key: str, **values: object) -> str:
    text = str(catalog_of(lang)[key])
    for name, value in values.items():
        text = text.replace(f"{{{name}}}", str(value))
    return text


# On one's turn with a tile to place, a chain on the table and a tile in the hand that is not raised:
# that tile's key and the chain's two ends (null otherwise).
GREYED = """() => {
    const c = window.__domeng, v = c?.view;
    if (!v || v.phase !== 'playing' || v.to_act !== c.seat || !v.chain.length || c.outbox) return null;
    if (!(v.legal || []).some((a) => typeof a.play === 'string')) return null;
    if (!document.querySelector('.table-screen[data-my-turn="true"]')) return null;
    const tile = document.querySelector('.hand-tile:not(.playable)');
    return tile && {tile: tile.dataset.tile, ends: v.ends.map(Number), version: c.version};
}"""


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_a_greyed_tile_clicked_on_ones_turn_says_why_it_cannot_be_played(
    server: ServerProcess, browser: Any, lang: str
) -> None:
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, locale={"en": "en-US", "ru": "ru-RU"}[lang])
    try:
        sit_and_start(page, server, room, token)
        play_until(page, lambda: page.evaluate(GREYED) is not None, timeout=120)
        greyed = page.evaluate(GREYED)  # no timer: the table waits on Ana
        # aria-disabled: Playwright takes it for a disabled button and would wait; a finger does not
        page.click(f".hand-tile[data-tile='{greyed['tile']}']", force=True)
        a, b = map(int, greyed["tile"].split("-"))
        left, right = greyed["ends"]
        if {a, b} & {left, right}:
            said = _words(lang, "tile.not_legal", a=a, b=b)
        else:
            said = _words(lang, "tile.fits_neither", a=a, b=b, left=left, right=right)
        toast = page.wait_for_selector(".toast[role='status']")
        assert toast.text_content() == said
        assert version_of(page) == greyed["version"]  # nothing was sent
        page.focus(f".hand-tile[data-tile='{greyed['tile']}']")  # from the keyboard, the same
        page.evaluate("() => document.querySelectorAll('.toast').forEach((t) => t.remove())")
        page.keyboard.press("Enter")
        assert page.wait_for_selector(".toast[role='status']").text_content() == said
        watch.assert_clean()
    finally:
        context.close()


def test_a_tile_clicked_on_anothers_turn_names_whose_turn_it_is(server: ServerProcess, browser: Any) -> None:
    room = server.create_room(bots=[None, None, "easy", "easy", "easy"], turn_timer_s=0)
    code = room["code"]
    token = server.claim(code, 0, "Ana").json()["token"]
    budi = Client(server, code, server.claim(code, 1, "Budi").json()["token"])  # never plays: holds the table
    context, page, watch = open_page(browser)
    try:
        sit_and_start(page, server, room, token)
        holding = "() => { const v = window.__domeng.view; return v.phase === 'playing' && v.to_act === 1; }"
        play_until(page, lambda: bool(page.evaluate(holding)))
        page.locator(".hand-tile").first.click(force=True)  # greyed (aria-disabled): see above
        toast = page.wait_for_selector(".toast[role='status']")
        assert toast.text_content() == _words("en", "tile.not_your_turn", name="Budi")
        watch.assert_clean()
    finally:
        budi.close()
        context.close()
