"""What a new user's trial found at the table, in Chromium: on a phone (390x844) the feed drawer's chat
box is in view whenever the drawer is open, however long the score sheet, the play-by-play and the
chat; a long name without spaces (32 letters) is shortened with an ellipsis, whole in its title, in
the score sheet, the plates and the feed, on a desktop and on a phone; and while an end of the chain
is chosen, neither end's target covers a tile of the chain, wherever the chain ends on the felt."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browserkit import (
    DESKTOP,
    PHONE,
    SocketPlayer,
    describe,
    open_page,
    play_until,
    screenshot,
    sit_and_start,
    wait_for_a_tile_to_place,
)
from tests.serverkit import Client, ServerProcess

LANDSCAPE = {"width": 844, "height": 390}
LONG = "W" * 32  # a name of 32 letters without a space (the longest a name may be)
SMALL = {"width": 320, "height": 568}

# A line of play of 24 tiles (each "a-b" as it lies, left to right), doubles among them: the test
# lays out every part of it of each length, opened at its first, middle and last tile.
LINE = [f"{a}-{b}" for a, b in zip("665544332211006420531625", "655443322110064205316251", strict=True)]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path_factory.mktemp("browser-table-fit"),
        env={"DOMENG_BOT_DELAY_S": "0.05", "DOMENG_ROUND_PAUSE_S": "600"},
    ).start()
    yield process
    process.stop()


def _my_turn(
    server: ServerProcess, browser: Any, viewport: dict[str, int], name: str = "Ana", variant: str = "domeng"
) -> tuple[Any, Any, Any, dict[str, Any]]:
    """A page at a Domeng table of five (or a Kozel table of four), ``name`` against bots, on its
    turn with a tile to place (no timer: the table waits on it); with the room's reply."""
    seats = 5 if variant == "domeng" else 4
    room = server.create_room(
        variant=variant, seats=seats, bots=[None] + ["easy"] * (seats - 1), turn_timer_s=0
    )
    token = server.claim(room["code"], 0, name).json()["token"]
    context, page, watch = open_page(browser, viewport)
    sit_and_start(page, server, room, token)
    wait_for_a_tile_to_place(page)
    return context, page, watch, room


# The phone's open drawer, scrolled to its top, then to its end: whether the chat's box to write in
# is whole inside the drawer and on top at its centre (nothing drawn over it), each time; the
# drawer's bottom and the top of the section of the hand (one's turn: the drawer ends above it).
DRAWER_INPUT = """async () => {
    const frame = () => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
    for (let i = 0; i < 60 && document.getAnimations().some((a) => a.playState === 'running'
        && a.effect?.target?.closest?.('.feed')); i += 1) await frame();
    const feed = document.querySelector('.table-screen.feed-open .feed');
    const input = feed.querySelector('.chat-input');
    const seen = [];
    for (const top of [0, feed.scrollHeight]) {
        feed.scrollTop = top;
        await frame();
        const f = feed.getBoundingClientRect(), r = input.getBoundingClientRect();
        seen.push({scrolled: feed.scrollTop,
                   whole: r.height > 0 && r.top >= f.top - 0.5 && r.bottom <= f.bottom + 0.5,
                   onTop: document.elementFromPoint((r.left + r.right) / 2, (r.top + r.bottom) / 2)
                       === input});
    }
    return {seen, scrolls: feed.scrollHeight > feed.clientHeight + 1,
            bottom: feed.getBoundingClientRect().bottom,
            me: document.querySelector('.me').getBoundingClientRect().top};
}"""


def test_a_phones_open_drawer_shows_the_chats_input(server: ServerProcess, browser: Any) -> None:
    """Found by a new user on a phone (390x844) at a Kozel table: the drawer opened on the score
    sheet and a few lines of the play-by-play, the chat's box to write in below its visible edge,
    reached only by scrolling the drawer. It stays at the drawer's bottom edge while the rest
    scrolls, the drawer still ending above the hand on one's turn."""
    context, page, watch, _room = _my_turn(server, browser, PHONE, variant="kozel")
    try:
        page.click(".feed-toggle")
        page.wait_for_selector(".table-screen.feed-open .feed .chat-input")
        for n in range(1, 6):  # a few lines (a seat's five at once), written from the drawer
            page.fill(".feed .chat-input", f"line {n} from Ana")
            page.press(".feed .chat-input", "Enter")
            page.wait_for_function(
                f"() => document.querySelectorAll('.feed .chat-list .chat-line').length === {n}"
            )
        shown = page.evaluate(DRAWER_INPUT)
        screenshot(page, "drawer-input-kozel-390x844")
        assert shown["scrolls"], shown  # the case this test is about: the drawer is taller than it shows
        assert all(s["whole"] and s["onTop"] for s in shown["seen"]), shown
        assert shown["bottom"] <= shown["me"] + 0.5, shown
        assert page.evaluate("() => document.activeElement.classList.contains('chat-input')")
        watch.assert_clean()
    finally:
        context.close()


# The page's own tile is being placed (its end asked, as a tile that fits both ends asks) while the
# board shows each part of ``line`` ({chain, opening} each), drawn in turn: for each, the end
# targets that cover a chain tile, or reach past the board's edges ([chain, opening, end, what]).
# Each is measured once the board's tiles and targets are at rest (with reduced motion every change
# of style is still a transition of 0.01 ms, which a measure before the next frame sees at its
# start), and drawn again if a state of the table's own drew its chain meanwhile.
TARGETS_CLEAR = """async (chains) => {
    const s = window.__domeng.screen;
    const frame = () => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
    const moving = () => document.getAnimations().some(
        (a) => a.playState === 'running' && a.effect?.target?.closest?.('.chain-board'));
    const key = [...s.handButtons].find(([, b]) => b.classList.contains('playable'))[0];
    s.choosing = key;
    s.update();
    await frame();
    await frame();  // the felt resized for the question above the hand: the board heard it
    const bad = [];
    const box = (el) => el.getBoundingClientRect();
    const cut = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 0.5
        && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 0.5;
    for (const {chain, opening} of chains) {
        const ends = [chain[0].split('-')[0], chain[chain.length - 1].split('-')[1]];
        do {
            s.chain.update(chain, ends, key, opening);
            await frame();
            for (let i = 0; i < 30 && moving(); i += 1) await frame();
        } while (s.chain.chain.join() !== chain.join());
        const board = box(s.chain.el);
        const tiles = [...document.querySelectorAll('.chain-tile')].map(box);
        const targets = [...document.querySelectorAll('.end-target:not([hidden])')];
        if (targets.length !== 2) bad.push([chain.join(' '), opening, null, `${targets.length} targets`]);
        for (const target of targets) {
            const t = box(target);
            const covered = tiles.filter((tile) => cut(t, tile)).length;
            const out = t.left < board.left - 0.5 || t.right > board.right + 0.5 || t.top < board.top - 0.5;
            const what = covered ? `covers ${covered}` : 'out';
            if (covered || out) bad.push([chain.join(' '), opening, target.dataset.end, what]);
        }
        const [l, r] = targets.map(box);
        if (l && r && cut(l, r)) bad.push([chain.join(' '), opening, 'both', 'targets overlap']);
    }
    s.choosing = null;
    s.update();
    return bad;
}"""


@pytest.mark.parametrize(
    "viewport", [PHONE, SMALL, LANDSCAPE, DESKTOP], ids=["390x844", "320x568", "844x390", "1280x800"]
)
def test_an_end_target_never_covers_a_chain_tile(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    """Found by a new user on a phone: the right end's "▶ 0", centred where the next tile would lie,
    covered the last tile where the chain reached the felt's edge. Each target stands beside its end
    then (past it, above or below it), on the board, and clear of the other target."""
    context, page, watch, _room = _my_turn(server, browser, viewport)
    try:
        chains = [
            {"chain": LINE[start : start + n], "opening": opening}
            for n in range(1, len(LINE) + 1)
            for start in range(0, len(LINE) - n + 1, 3)
            for opening in sorted({0, n // 2, n - 1})
        ]
        bad = page.evaluate(TARGETS_CLEAR, chains)
        assert bad == [], (len(bad), len(chains), bad[:10], describe(page))
        watch.assert_clean()
    finally:
        context.close()


# Each element that shows ``name`` in the score sheet, the feed (the drawer's, or the side column's)
# and on the plates: where, its title, the lines it takes, whether it reaches past its box (the
# sheet's, the feed's list, the plate) and whether its words are cut (an ellipsis).
NAMES_SHOWN = """(name) => {
    const shown = [];
    const places = [['sheet', '.sheet-box .score-sheet .who', '.sheet-box'],
                    ['feed', '.feed-list .who', '.feed-list'], ['plate', '.plate .name-text', '.plate']];
    for (const [where, selector, within] of places) {
        for (const el of document.querySelectorAll(selector)) {
            if (el.textContent !== name) continue;
            // a plate's name is clamped by its box (an opponent's on a phone: two lines, then cut)
            const clip = where === 'plate' ? el.closest('.plate-name') : el;
            const r = clip.getBoundingClientRect(), box = el.closest(within).getBoundingClientRect();
            const lines = Math.round(r.height / parseFloat(getComputedStyle(clip).lineHeight));
            shown.push({where, title: el.getAttribute('title'), lines, height: r.height,
                        inside: r.left >= box.left - 0.5 && r.right <= box.right + 0.5,
                        cut: clip.scrollWidth > clip.clientWidth + 1
                            || clip.scrollHeight > clip.clientHeight + 1
                            || el.scrollWidth > el.clientWidth + 1});
        }
    }
    return shown;
}"""


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280x800", "390x844"])
def test_a_long_name_without_spaces_is_cut_with_an_ellipsis(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    """Found by a new user: a 32-letter name without spaces wrapped over four lines in the score
    sheet, and over two in the feed ("bot for" and the name in pieces). It keeps to one line there,
    cut with an ellipsis, whole in its title; on the plates too (an opponent's on a phone: two)."""
    room = server.create_room(variant="kozel", seats=4, bots=[None, None, "easy", "easy"], turn_timer_s=0)
    code = room["code"]
    token = server.claim(code, 0, "Ana").json()["token"]
    player = SocketPlayer(Client(server, code, server.claim(code, 1, LONG).json()["token"]))
    context, page, watch = open_page(browser, viewport)
    try:
        sit_and_start(page, server, room, token)
        # a line of the feed names them, and the table waits on Ana (a phone's drawer stays open)
        ready = """(name) => { const c = window.__domeng, v = c.view;
            return [...document.querySelectorAll('.feed-list .who')].some((w) => w.textContent === name)
                && v.phase === 'playing' && v.to_act === c.seat
                && (v.legal || []).some((a) => a.play !== undefined)
                && !!document.querySelector('.table-screen[data-my-turn="true"]'); }"""
        play_until(page, lambda: bool(page.evaluate(ready, LONG)), timeout=120)
        if viewport is PHONE:
            page.click(".feed-toggle")
            page.wait_for_selector(".table-screen.feed-open .feed .sheet-box")
        shown = page.evaluate(NAMES_SHOWN, LONG)
        screenshot(page, f"long-name-{viewport['width']}x{viewport['height']}")
        assert {s["where"] for s in shown} == {"sheet", "feed", "plate"}, shown
        for s in shown:
            assert s["title"] == LONG and s["inside"] and s["cut"], s
            assert s["lines"] <= (2 if s["where"] == "plate" else 1), s
        watch.assert_clean()
    finally:
        player.stop()
        context.close()
