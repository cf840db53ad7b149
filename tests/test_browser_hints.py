"""Hints in Chromium (issue 16): the lobby offers them (off by default); at a table that allows
them, a player on their turn asks, the hard bot's choice is raised on their hand and said in words,
and the round-end panel tells every hint used; what the hint says covers no plate. A phone in Russian
and a desktop in English."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.adminkit import SECRET, admin_client
from tests.browserkit import (
    DESKTOP,
    END_TARGET,
    PANEL,
    PHONE,
    catalog_of,
    goto,
    open_page,
    play_until,
    screenshot,
    sit_and_start,
)
from tests.serverkit import ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path_factory.mktemp("browser-hints"),
        env={"DOMENG_ADMIN_TOKEN": SECRET, "DOMENG_BOT_DELAY_S": "0.1", "DOMENG_ROUND_PAUSE_S": "600"},
    ).start()
    yield process
    process.stop()


def _move(play: str | list[str]) -> str:
    """A placement's tiles as one text, whatever the order of a tile's numbers or of two lempas:
    ``"3-5"`` for ``"5-3"``, ``"3-3+5-5"`` for ``["5-5", "3-3"]``."""
    tiles = [play] if isinstance(play, str) else play
    return "+".join(sorted("-".join(sorted(tile.split("-"))) for tile in tiles))


# The hint's note while a hint holds (the Hint button shows it again should its 4 s have run out on
# a loaded machine): its box, and the boxes of the plates shown, the felt and the hand.
_NOTE_JS = """() => {
    if (!window.__domeng.screen.currentHint()) return null;
    const note = document.querySelector('.hint-note');
    if (note.hidden) document.querySelector('.hint-btn').click();
    const box = (el) => el.getBoundingClientRect().toJSON();
    const r = box(note);
    const seen = note.contains(document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2));
    return {box: r, text: note.textContent, seen,
            onScreen: r.left >= 0 && r.top >= 0 && r.right <= innerWidth && r.bottom <= innerHeight,
            plates: [...document.querySelectorAll('.plate')]
                .filter((p) => p.getClientRects().length).map(box),
            felt: box(document.querySelector('.felt')), hand: box(document.querySelector('.hand'))};
}"""

# A click on the note's close button (nothing over it) hides the note; shown again first if it went.
_DISMISS_JS = """() => {
    const note = document.querySelector('.hint-note');
    if (note.hidden) document.querySelector('.hint-btn').click();
    const close = note.querySelector('.hint-note-close'), r = close.getBoundingClientRect();
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2) === close;
    close.click();
    return {hit, hidden: note.hidden};
}"""


def _meet(a: dict[str, float], b: dict[str, float]) -> bool:
    """Whether two boxes overlap (touching edges do not)."""
    across = a["left"] < b["right"] - 0.5 and b["left"] < a["right"] - 0.5
    return across and a["top"] < b["bottom"] - 0.5 and b["top"] < a["bottom"] - 0.5


def _turn_with_a_choice(page: Any, server: ServerProcess, tables: int = 5) -> dict[str, Any]:
    """Seat Ana in a new 2-seat Kozel room with hints (against a medium bot) and play her turns
    until her turn with a choice in the first round, where the Hint button shows and the table
    waits for her; the room. The deal may give her no choice in that round (about one in a
    thousand): the next round comes only after the server's long pause, so a new room deals anew,
    ``tables`` of them at most."""
    button, panel = page.locator(".hint-btn"), page.locator(PANEL)
    for _ in range(tables):
        room = server.create_room(variant="kozel", seats=2, bots=[None, "medium"], turn_timer_s=0, hints=True)
        token = server.claim(room["code"], 0, "Ana").json()["token"]
        sit_and_start(page, server, room, token)
        play_until(page, lambda: button.is_visible() or panel.count() > 0, timeout=120)
        if button.is_visible():
            return room
        # the round ended first (its panel is open): another table
    raise AssertionError(f"no turn with a choice in the first round of {tables} tables")


@pytest.mark.parametrize(
    ("viewport", "locale"), [(PHONE, "ru-RU"), (DESKTOP, "en-US")], ids=["phone-ru", "desktop-en"]
)
def test_a_hint_is_raised_on_the_hand_and_told_at_the_round_end(
    server: ServerProcess, browser: Any, viewport: dict[str, int], locale: str
) -> None:
    catalog = catalog_of(locale[:2])
    context, page, watch = open_page(browser, viewport, locale)
    try:
        goto(page, f"{server.url}/")
        box = page.locator("#allow-hints")
        assert box.count() == 1 and not box.is_checked()  # off by default
        assert catalog["lobby.hints"] in page.inner_text("label:has(#allow-hints)")

        room = _turn_with_a_choice(page, server)
        button = page.locator(".hint-btn")
        # its own icon, a light bulb: the bell is the notifications' (a new user's report)
        assert page.locator(".hint-btn svg[data-icon='bulb']").count() == 1
        assert page.locator(".notify-toggle svg[data-icon^='bell']").count() >= 1
        button.click()
        # a tile is raised, or for two lempas (K4) the two-lempas button, as one lempa alone would be
        # another move
        raised = page.wait_for_selector(".hand-tile.hinted, .two-lempas.hinted", timeout=60_000)
        # her legal moves read now, at the turn the hint is for: the button can still show for a
        # moment after her last move, and the state read then, the bot's turn, lists none
        legal = page.evaluate("() => window.__domeng.view.legal")
        lempas = page.locator(".two-lempas.hinted").count() == 1
        if lempas:
            hinted = _move(page.evaluate("() => window.__domeng.screen.currentHint().play"))
            assert page.locator(".hand-tile.hinted").count() == 0
        else:
            hinted = raised.get_attribute("data-tile")
        assert hinted in {_move(a["play"]) for a in legal if "play" in a}
        # the hint is said in the table's flow, above the turn's status: whole on screen, over no
        # plate, the chain's felt or the hand, and a click on its close button sends it away
        note = page.wait_for_function(_NOTE_JS).json_value()
        assert note["text"].startswith(catalog["hint.shown"].split("{")[0].strip()), note
        assert note["plates"] and not [p for p in note["plates"] if _meet(p, note["box"])], note
        assert not _meet(note["box"], note["felt"]) and not _meet(note["box"], note["hand"]), note
        assert note["onScreen"] and note["seen"], note
        screenshot(page, f"hint-{locale}-{viewport['width']}x{viewport['height']}")
        assert page.wait_for_function(_DISMISS_JS).json_value() == {"hit": True, "hidden": True}

        end = page.evaluate("() => window.__domeng.screen.currentHint()?.end ?? null")
        page.click(".two-lempas.hinted" if lempas else ".hand-tile.hinted")  # follow the hint
        if page.locator(END_TARGET).count():  # the tile fits both ends: the page asks which
            page.click(f"{END_TARGET}[data-end='{end or 'L'}']")
        # the feed's line of that move says a hint was used, as every seat's feed does
        tag = page.wait_for_selector(".feed-list .feed-hinted .tag-hint", state="attached")
        assert tag.text_content() == catalog["hint.used"].replace("{name}", "Ana")
        # to the round's end (the hint's move may have ended it: its panel is open already)
        play_until(page, lambda: page.locator(PANEL).count() > 0, timeout=180)
        told = page.text_content(f"{PANEL} .hints-used")
        assert told is not None and "Ana" in told and "(1)" in told
        assert told.startswith(catalog["hint.round_end"].split("{")[0])
        watch.assert_clean()

        # the history keeps it: the admin's match page lists the hint, who and what
        with admin_client(server) as admin:
            found = admin.get("/api/admin/matches", params={"player": "Ana"}).json()["items"]
            detail = admin.get(
                f"/api/admin/matches/{next(m['id'] for m in found if m['code'] == room['code'])}"
            )
            (used,) = detail.json()["hints_used"]
            assert detail.json()["hints"] is True
            assert (used["round"], used["seat"]) == (0, 0)
            assert _move(used["action"]["play"]) == hinted
    finally:
        context.close()
