"""The table with the keyboard alone, in Chromium: the hand is one Tab stop whose arrow keys move
between the tiles that can be played (the WAI-ARIA toolbar's roving tabindex), Enter picks a tile,
the arrow keys move between the two end targets of a tile that fits both ends, Enter places it and
Escape takes the choice back. Escape closes the innermost thing open: a term's tooltip before the
feed's drawer it is in."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browserkit import PHONE, close_panel, goto, open_page, play_until, sit_and_start
from tests.serverkit import Client, ServerProcess, my_turn_to_place


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path_factory.mktemp("browser-keys"),
        env={"DOMENG_BOT_DELAY_S": "0.1", "DOMENG_ROUND_PAUSE_S": "1"},
    ).start()
    yield process
    process.stop()


# Our turn with a tile that fits both ends (the page asks which end): that tile, as the hand names
# it ("3-5"), or null.
_BOTH_ENDS_JS = """() => {
    const c = window.__domeng, v = c && c.view;
    if (!v || v.phase !== 'playing' || v.to_act !== c.seat) return null;
    if (document.querySelector('dialog[open]')) return null;
    const ends = {};
    for (const a of v.legal || []) {
        if (typeof a.play !== 'string' || !a.end) continue;
        const key = a.play.split('-').map(Number).sort((x, y) => x - y).join('-');
        (ends[key] = ends[key] || new Set()).add(a.end);
    }
    return Object.keys(ends).find((key) => ends[key].has('L') && ends[key].has('R')) || null;
}"""

_FOCUSED_JS = """() => {
    const el = document.activeElement;
    return {tile: el?.classList.contains('hand-tile') ? el.dataset.tile : null,
            end: el?.classList.contains('end-target') ? el.dataset.end : null};
}"""


def _focused(page: Any) -> dict[str, str | None]:
    focused: dict[str, str | None] = page.evaluate(_FOCUSED_JS)
    return focused


def test_the_keyboard_alone_places_a_tile_on_the_right_end(server: ServerProcess, browser: Any) -> None:
    """Found by a tester: ArrowLeft/ArrowRight did nothing at the end targets, and every tile in
    the hand was a Tab stop of its own."""
    room = server.create_room(variant="kozel", seats=2, bots=[None, "random"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, PHONE)
    try:
        sit_and_start(page, server, room, token)
        play_until(page, lambda: page.evaluate(_BOTH_ENDS_JS) is not None, timeout=240, keyboard=True)
        tile = page.evaluate(_BOTH_ENDS_JS)
        playable = page.eval_on_selector_all(".hand-tile.playable", "els => els.map((e) => e.dataset.tile)")

        # Tab into the hand from the top of the page: it is one stop, whichever tile holds it
        page.evaluate("() => document.activeElement?.blur()")
        for _ in range(40):
            page.keyboard.press("Tab")
            if _focused(page)["tile"]:
                break
        first = _focused(page)["tile"]
        assert first in playable, (first, playable)
        page.keyboard.press("Tab")
        assert _focused(page)["tile"] is None  # out of the hand in one Tab, not through every tile
        page.keyboard.press("Shift+Tab")
        assert _focused(page)["tile"] == first

        # the arrow keys go round the whole hand: a tile that cannot be played is a stop too
        # (aria-disabled), so a blind player hears every tile held
        hand = page.eval_on_selector_all(".hand-tile", "els => els.map((e) => e.dataset.tile)")
        at = hand.index(first)
        page.keyboard.press("ArrowRight")
        assert _focused(page)["tile"] == hand[(at + 1) % len(hand)]
        page.keyboard.press("ArrowLeft")
        assert _focused(page)["tile"] == first
        for _ in range((hand.index(tile) - at) % len(hand)):
            page.keyboard.press("ArrowRight")
        assert _focused(page)["tile"] == tile

        # Enter asks for an end (the left one focused); Escape takes the choice back to the tile
        page.keyboard.press("Enter")
        page.wait_for_selector(".end-target:not([hidden])")
        assert _focused(page)["end"] == "L"
        page.keyboard.press("Escape")
        page.wait_for_selector(".end-target:not([hidden])", state="hidden")
        assert _focused(page)["tile"] == tile

        # again, and the right end with ArrowRight (ArrowLeft goes back): Enter places it there
        version, round_ = page.evaluate("() => [window.__domeng.version, window.__domeng.view.round]")
        page.keyboard.press("Enter")
        page.wait_for_selector(".end-target:not([hidden])")
        page.keyboard.press("ArrowRight")
        assert _focused(page)["end"] == "R"
        page.keyboard.press("ArrowLeft")
        assert _focused(page)["end"] == "L"
        page.keyboard.press("ArrowRight")
        page.keyboard.press("Enter")
        page.wait_for_function("(v) => window.__domeng.version > v", arg=version)
        # the round's log, where that move may have ended it: the next round may be dealt by now
        placed = page.evaluate(
            """([seat, round]) => { const c = window.__domeng;
                const view = c.view.round === round ? c.view
                    : c.roundEnd?.round === round ? c.roundEnd.view : null;
                return view.log.filter((e) => e.type === 'placed' && e.seat === seat)
                    .map((e) => ({tile: String(e.tile).split('-').map(Number).sort((x, y) => x - y).join('-'),
                                  end: e.end})).pop(); }""",
            [0, round_],
        )
        assert placed == {"tile": tile, "end": "R"}, placed
        watch.assert_clean()
    finally:
        context.close()


def test_escape_closes_a_terms_tooltip_before_the_drawer_it_is_in(
    server: ServerProcess, browser: Any
) -> None:
    """Found by a tester: on a phone, Escape on a term's tooltip in the feed's drawer (a round's
    end says "first cappu") closed the tooltip and the drawer at once. The first Escape closes the
    tooltip alone, the second the drawer."""
    room = server.create_room(  # no camat target: the match cannot end before round 2
        bots=[None, "greedy", "greedy", "greedy", "greedy"], options={"camat_target": 0}, turn_timer_s=0
    )
    ana = Client(server, room["code"], server.claim(room["code"], 0, "Ana").json()["token"])
    context, page, watch = open_page(browser, PHONE)
    try:
        goto(page, f"{server.url}/r/{room['code']}")
        assert server.start_match(room["code"], room["host_token"]).status_code == 200
        while True:  # Ana plays until her turn in round 2: there the room waits for her
            turn = ana.wait_for(my_turn_to_place, timeout=30)
            if turn["view"]["round"] >= 2:
                break
            action = {k: v for k, v in turn["view"]["legal"][0].items() if k != "seat"}
            ana.send({"type": "action", "version": turn["version"], "action": action})
        page.wait_for_function(f"() => window.__domeng.version === {turn['version']}")
        close_panel(page)
        # the drawer opened from the keyboard, and a term of round 1's end focused in it
        page.focus(".feed-toggle")
        page.keyboard.press("Enter")
        page.wait_for_selector(".table-screen.feed-open .feed-end .term")
        page.evaluate(
            """() => new Promise((done) => {
                const term = document.querySelector('.feed-end .term');
                term.scrollIntoView({block: 'center'});
                // the scroll is reported a frame later (and closes a tooltip): focus after it
                requestAnimationFrame(() => requestAnimationFrame(() => { term.focus(); done(); }));
            })"""
        )
        page.wait_for_selector("#tooltip:not([hidden])")
        page.keyboard.press("Escape")
        page.wait_for_selector("#tooltip", state="hidden")
        assert page.locator(".table-screen.feed-open").count() == 1  # the drawer stays open
        page.keyboard.press("Escape")
        page.wait_for_selector(".table-screen:not(.feed-open)")
        watch.assert_clean()
    finally:
        ana.close()
        context.close()


_FEED_JS = """(changes) => { const c = window.__domeng;
    const view = {...c.view, ...changes, phase: 'playing'};
    c.onState({type: 'state', version: c.version + 1, room: c.room, view, events: []}); }"""

_STOPS_JS = """() => [...document.querySelectorAll('.hand-tile')].filter((el) => el.tabIndex === 0)
    .map((el) => el.dataset.tile)"""


def test_a_focused_tile_keeps_the_hands_tab_stop_when_the_turn_comes(
    server: ServerProcess, browser: Any
) -> None:
    """Found by a keyboard trial: a focused tile that cannot be played lost the hand's Tab stop to
    a playable one as the turn came, keeping the focus: Tab then stepped through the hand. The
    focused tile keeps the one stop."""
    room = server.create_room(variant="kozel", seats=2, bots=[None, None], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    server.claim(room["code"], 1, "Boris")
    context, page, watch = open_page(browser, PHONE)
    try:
        sit_and_start(page, server, room, token)
        page.wait_for_selector(".hand-tile")
        # the page's states from here are fed to it; what it would send is kept
        page.evaluate("() => { window.__domeng.sendAction = () => true; }")
        page.evaluate(_FEED_JS, {"to_act": 1, "legal": []})
        hand = page.eval_on_selector_all(".hand-tile", "els => els.map((e) => e.dataset.tile)")
        page.focus(f".hand-tile[data-tile='{hand[-1]}']")
        page.evaluate(_FEED_JS, {"to_act": 0, "legal": [{"play": hand[0], "end": "L"}]})
        page.wait_for_selector(f".hand-tile.playable[data-tile='{hand[0]}']")
        assert page.evaluate(_STOPS_JS) == [hand[-1]]
        assert _focused(page)["tile"] == hand[-1]
        page.keyboard.press("Shift+Tab")  # out of the hand in one Tab
        assert _focused(page)["tile"] is None
        watch.assert_clean()
    finally:
        context.close()
