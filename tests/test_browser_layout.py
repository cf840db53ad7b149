"""The table's layout by screen in Chromium: a phone on its side (844×390, 740×360) shows the hand,
the chain and every plate without scrolling, and its moves are played there (the end targets on
the chain included); a tablet held upright (768×1024) gives the felt and the hand the screen's
width; the language menus of the bar and of the pages' header show "Bahasa Indonesia" whole; a
phone upright keeps every button of the bar on the screen; a tablet's chain grows with its felt,
and fits it; a phone on its side seats a table of two, three or four around the felt, and its toasts
leave the felt in view; the bar is fitted again when a web font arrives late."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.browserkit import (
    DESKTOP,
    PANEL,
    PHONE,
    PLAYABLE,
    PageWatch,
    PlaywrightTimeoutError,
    catalog_of,
    close_panel,
    goto,
    held,
    languages,
    open_page,
    play_until,
    round_ended,
    screenshot,
    sit_and_start,
    switch_language,
    wait_for_a_tile_to_place,
)
from tests.serverkit import Client, ServerProcess

LANDSCAPE = [{"width": 844, "height": 390}, {"width": 740, "height": 360}]
TABLET = {"width": 768, "height": 1024}
BOTS = ["easy", "easy", "easy", "easy"]

# Every part of the table a player needs, as {name: [left, top, right, bottom]}, with the page's
# scroll sizes: what lies outside the window is cut or needs scrolling.
PARTS = """() => {
    const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
    const parts = {bar: box(document.querySelector('.bar')), felt: box(document.querySelector('.felt')),
                   hand: box(document.querySelector('.hand'))};
    document.querySelectorAll('.plate').forEach((el, i) => { parts[`plate${i}`] = box(el); });
    document.querySelectorAll('.hand-tile').forEach((el, i) => { parts[`tile${i}`] = box(el); });
    document.querySelectorAll('.chain-tile').forEach((el, i) => { parts[`chain${i}`] = box(el); });
    const page = document.documentElement;
    return {parts, scrollW: page.scrollWidth, scrollH: page.scrollHeight, w: innerWidth, h: innerHeight};
}"""

# PARTS once the page has drawn its latest update: the chain reads its board's size when the page
# is laid out for a frame (chain.js's ResizeObserver, before the frame is painted), so a measure
# taken between an update that resized the board and that frame sees the chain drawn for the old
# size, which no player ever sees. And the chain's tiles glide to their places (a CSS transition,
# 0.01 ms with reduced motion, but it starts from the old place and size until the next frame): a
# bot's move that arrives just before the measure leaves the tiles it moved where they were, beside
# the new ones, in a picture no player sees either (stop 38's CI, at 740x360). So the measure is
# taken in a task where no chain tile's transition runs, waiting a frame at a time (at most 60).
SETTLED_PARTS = """async () => {
    const frame = () => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
    const moving = () => document.getAnimations().some(
        (a) => a.playState === 'running' && a.effect?.target?.closest?.('.chain-tile'));
    await frame();
    for (let i = 0; i < 60; i += 1) {
        document.body.getBoundingClientRect();  // the styles of the latest update, its transitions started
        if (!moving()) break;
        await frame();
    }
    return (PARTS)();
}""".replace("PARTS", PARTS)

# Each language menu shown on the page: its width, and the width it takes when nothing limits it
# (a copy in the same place without the limit): narrower than that, the language's name is cut.
MENUS = """() => [...document.querySelectorAll('.lang-select')].filter((s) => s.offsetWidth > 0).map((s) => {
    const free = s.cloneNode(true);
    Object.assign(free.style, {maxWidth: 'none', minWidth: '0', width: 'auto'});
    Object.assign(free.style, {position: 'absolute', visibility: 'hidden'});
    s.parentElement.append(free);
    const whole = free.getBoundingClientRect().width;
    free.remove();
    return {shown: s.options[s.selectedIndex].text, width: s.getBoundingClientRect().width, whole};
})"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path_factory.mktemp("browser-layout"),
        env={"DOMENG_BOT_DELAY_S": "0.05", "DOMENG_ROUND_PAUSE_S": "1"},
    ).start()
    yield process
    process.stop()


def _seated(
    server: ServerProcess, browser: Any, viewport: dict[str, int], locale: str
) -> tuple[Any, Any, Any]:
    """A page at a five-seat Domeng table, one person against four bots, on its first turn."""
    room = server.create_room(bots=[None, *BOTS], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, viewport, locale)
    sit_and_start(page, server, room, token)
    page.wait_for_selector(PLAYABLE)
    return context, page, watch


def _outside(shown: dict[str, Any]) -> dict[str, list[float]]:
    """The parts that reach past the window's edges (a pixel of rounding allowed)."""
    w, h = shown["w"], shown["h"]
    return {
        name: box
        for name, box in shown["parts"].items()
        if box[0] < -1 or box[1] < -1 or box[2] > w + 1 or box[3] > h + 1
    }


# Show the bar's last round button, with the label given, as after a round (without playing one
# out): until the next state or presence draws the bar again.
SHOW_LAST_ROUND = """(label) => { const b = document.querySelector('.last-round-btn'); b.hidden = false;
    b.querySelector('.lbl').textContent = label; }"""


def _show_last_round(page: Any) -> None:
    """The bar with every button it may show: the last round's too, as after a round (without
    playing one out: the language menu is looked at before the next state draws the bar again)."""
    page.evaluate(SHOW_LAST_ROUND, catalog_of("id")["table.last_round"])


def _chain_length(page: Any) -> int:
    return int(page.evaluate("() => window.__domeng.view?.chain.length ?? 0"))


@pytest.mark.parametrize("viewport", LANDSCAPE, ids=["844x390", "740x360"])
def test_a_phone_on_its_side_shows_the_hand_and_the_chain_without_scrolling(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    context, page, watch = _seated(server, browser, viewport, "id-ID")
    try:
        for _ in range(2):  # on the first turn, then with a chain of several tiles on the felt
            shown = page.evaluate(SETTLED_PARTS)
            assert (shown["scrollW"], shown["scrollH"]) == (viewport["width"], viewport["height"]), shown
            assert _outside(shown) == {}, shown
            felt = shown["parts"]["felt"]
            # the felt is the table's middle, not a strip: it keeps well over a third of the height
            assert felt[3] - felt[1] > 0.4 * viewport["height"], felt
            chain = [box for name, box in shown["parts"].items() if name.startswith("chain")]
            assert all(
                felt[0] <= b[0] and b[2] <= felt[2] and felt[1] <= b[1] and b[3] <= felt[3] for b in chain
            ), (felt, chain)
            # the hand's tiles are played by a tap (and an end target on the chain, when asked)
            play_until(page, lambda: _chain_length(page) >= 8 or page.locator("dialog[open]").count() > 0)
        screenshot(page, f"table-{viewport['width']}x{viewport['height']}-id")
        watch.assert_clean()
    finally:
        context.close()


def test_a_tablet_held_upright_gives_the_felt_and_the_hand_the_screens_width(
    server: ServerProcess, browser: Any
) -> None:
    context, page, watch = _seated(server, browser, TABLET, "id-ID")
    try:
        shown = page.evaluate(SETTLED_PARTS)
        assert _outside(shown) == {}, shown
        felt, hand = shown["parts"]["felt"], shown["parts"]["hand"]
        width = TABLET["width"]
        assert felt[2] - felt[0] > 0.9 * width, felt  # it had a 320 px column between the plates
        assert hand[2] - hand[0] > 0.6 * width, hand
        plates = [box for name, box in shown["parts"].items() if name.startswith("plate")][
            :-1
        ]  # not one's own
        assert len(plates) == 4 and all(b[3] <= felt[1] for b in plates), plates  # in a row above the felt
        screenshot(page, "table-768x1024-id")
        _show_last_round(page)
        for menu in page.evaluate(MENUS):
            assert menu["shown"] == "Bahasa Indonesia" and menu["width"] >= menu["whole"] - 0.5, menu
        watch.assert_clean()
    finally:
        context.close()


# The table's parts (PARTS) when the connection banner shows, taken as it shows (the banner is
# gone again once the page reconnects), with the top bar's controls that it covers, the names on
# the plates that it covers, and whether its words are cut.
BANNER_SHOWN = """() => new Promise((done) => {
    const banner = document.querySelector('.banner');
    const seen = new MutationObserver(() => {
        if (banner.hidden) return;
        seen.disconnect();
        const shown = (PARTS)();
        const b = banner.getBoundingClientRect();
        const under = (selector) => [...document.querySelectorAll(selector)]
            .map((el) => el.getBoundingClientRect())
            .filter((r) => r.width && r.left < b.right && b.left < r.right)
            .filter((r) => r.top < b.bottom && b.top < r.bottom).length;
        shown.covered = under('.bar .round-label, .bar .pile, .bar-actions > *');
        shown.names = under('.plate .plate-name');
        shown.cut = banner.scrollWidth > banner.clientWidth || banner.scrollHeight > banner.clientHeight;
        shown.kind = banner.dataset.kind;
        done(shown);
    });
    seen.observe(banner, {attributes: true, attributeFilter: ['hidden']});
    window.__domeng.socket.ws.close();
})""".replace("PARTS", PARTS)


@pytest.mark.parametrize(
    ("viewport", "locale"), [(TABLET, "en-US"), (DESKTOP, "hu-HU")], ids=["768x1024", "1280x800-hu"]
)
def test_a_tablets_table_stays_in_place_under_the_reconnecting_banner(
    server: ServerProcess, browser: Any, viewport: dict[str, int], locale: str
) -> None:
    """Found by a tester: on a tablet the "reconnecting" banner took a strip of its own above the
    table, and every part of the table jumped down 40 px as the connection dropped (and back up as it
    came back). The banner shows over the table (over the felt's top), and nothing of the table moves.
    Found by another: on a desktop the banner, centred there, covered the names on the plates
    across; it sits in the table's empty upper-left corner, its words (Hungarian's, the longest)
    whole. A tablet held upright has its four plates in that row: no corner is free there."""
    context, page, watch = _seated(server, browser, viewport, locale)
    try:
        before = page.evaluate(SETTLED_PARTS)
        during = page.evaluate(BANNER_SHOWN)
        assert during["kind"] == "reconnecting", during
        moved = {
            name: (box, during["parts"].get(name))
            for name, box in before["parts"].items()
            if any(abs(a - b) > 0.5 for a, b in zip(box, during["parts"].get(name, []), strict=True))
        }
        assert moved == {}, moved
        assert during["covered"] == 0 and during["scrollH"] <= during["h"], during
        assert not during["cut"], during
        if viewport == DESKTOP:
            assert during["names"] == 0, during
        page.wait_for_selector(".banner", state="hidden")  # and the page is back
        watch.assert_clean()
    finally:
        context.close()


# A toast shown now (dom.js's, as the page shows one: "Not connected: your move was not sent."), and
# once the page has drawn it: the boxes of the bar, the banner (null when hidden) and the toasts.
TOAST_SHOWN = """async (text) => {
    const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
    const { toast } = await import('/static/js/dom.js');
    toast(text, 'error');
    const banner = document.querySelector('.banner');
    const measure = () => ({bar: box(document.querySelector('.bar')),
                            banner: banner.hidden ? null : box(banner),
                            toasts: [...document.querySelectorAll('#toasts .toast')].map(box)});
    // a few frames at most for the page to place them (the banner's height is heard from the
    // layout, static/js/room.js): a run beside other work once read them before it had
    let shown = measure();
    for (let frame = 0; frame < 30; frame++) {
        await new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
        shown = measure();
        const under = shown.banner ? shown.banner[3] : shown.bar[3];
        if (shown.toasts.length && shown.toasts.every((t) => t[1] >= under)) break;
    }
    return shown;
}"""


@pytest.mark.parametrize(
    ("viewport", "locale"), [(PHONE, "uk-UA"), (LANDSCAPE[1], "en-US")], ids=["390x844-uk", "740x360"]
)
def test_a_toast_at_the_table_shows_below_the_reconnecting_banner(
    server: ServerProcess, browser: Any, viewport: dict[str, int], locale: str
) -> None:
    """Found by a tester: at the table toasts came 64 px from the top, where the "reconnecting"
    banner floats over the table below its bar, and the toast said by a move made meanwhile ("Not
    connected") covered the banner. The toasts come below the bar, and below the banner while it
    shows."""
    context, page, watch = _seated(server, browser, viewport, locale)
    blocked = [True]

    def socket(ws: Any) -> None:  # the page's new connections fail while blocked, the old one lives
        if blocked[0]:
            ws.close()
        else:
            ws.connect_to_server()

    try:
        text = catalog_of(locale[:2])["room.offline_action"]
        alone = page.evaluate(TOAST_SHOWN, text)
        assert alone["banner"] is None and alone["toasts"], alone
        assert all(_apart(toast, alone["bar"]) for toast in alone["toasts"]), alone
        page.evaluate("() => document.querySelectorAll('#toasts .toast').forEach((el) => el.remove())")
        page.route_web_socket("**/ws/rooms/**", socket)
        page.evaluate("() => window.__domeng.socket.ws.close()")
        page.wait_for_selector('.banner[data-kind="reconnecting"]')
        shown = page.evaluate(TOAST_SHOWN, text)
        assert shown["banner"] and shown["toasts"], shown
        for toast in shown["toasts"]:
            assert _apart(toast, shown["banner"]) and _apart(toast, shown["bar"]), shown
            assert toast[1] >= shown["banner"][3], shown  # below it, not above it over the bar
        screenshot(page, f"toast-under-banner-{viewport['width']}x{viewport['height']}-{locale}")
        blocked[0] = False
        page.evaluate("() => window.__domeng.socket.reconnectNow()")
        page.wait_for_selector(".banner", state="hidden")  # and the page is back
        watch.assert_clean()
    finally:
        context.close()


# Toasts shown now (dom.js's, oldest first, each for a minute), then, once the page has laid them
# out for the viewport it has: the felt's box, and each toast's box (null when it is not shown) and
# whether its words are cut.
TOASTS_SHOWN = """async (texts) => {
    const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
    const { toast } = await import('/static/js/dom.js');
    document.querySelectorAll('#toasts .toast').forEach((el) => el.remove());
    texts.forEach((text, i) => toast(text, i % 2 ? 'info' : 'error', 60000));
    await new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
    return {felt: box(document.querySelector('.felt')),
            toasts: [...document.querySelectorAll('#toasts .toast')].map((el) => ({
                box: el.getClientRects().length ? box(el) : null,
                cut: el.scrollWidth > el.clientWidth || el.scrollHeight > el.clientHeight}))};
}"""


def test_toasts_on_a_phone_on_its_side_leave_the_felt_in_view(server: ServerProcess, browser: Any) -> None:
    """Found by a tester: on a phone on its side four toasts (notices, then an error) stacked down
    from the bar over the whole felt, and the chain under them. The newest shows whole, the one
    before it on one line, older ones not: they keep to the felt's upper half, in Ukrainian (long
    words) at 844x390 and at 740x360."""
    words = catalog_of("uk")
    keys = ["alerts.notify_insecure", "alerts.notify_blocked", "room.seat_lost", "room.offline_action"]
    context, page, watch = _seated(server, browser, LANDSCAPE[0], "uk-UA")
    try:
        for viewport in LANDSCAPE:
            page.set_viewport_size(viewport)
            page.wait_for_function("(w) => innerWidth === w", arg=viewport["width"])
            shown = page.evaluate(TOASTS_SHOWN, [words[key] for key in keys])
            toasts, felt = shown["toasts"], shown["felt"]
            assert len(toasts) == len(keys), shown  # none lost: hidden ones show once the newer go
            newest = toasts[-1]
            assert newest["box"] and not newest["cut"], shown
            boxes = [toast["box"] for toast in toasts if toast["box"]]
            assert len(boxes) <= 2, shown
            line = newest["box"][3] - newest["box"][1]  # "Not connected: …", one line
            assert all(b[3] - b[1] <= line + 1 for b in boxes), shown  # the one before it too
            middle = (felt[1] + felt[3]) / 2
            assert max(b[3] for b in boxes) <= middle, (viewport, shown)
            screenshot(page, f"toasts-{viewport['width']}x{viewport['height']}-uk")
        watch.assert_clean()
    finally:
        context.close()


@pytest.mark.parametrize(
    "viewport", [DESKTOP, LANDSCAPE[0], {"width": 600, "height": 900}], ids=["1280x800", "844x390", "600x900"]
)
def test_the_language_menus_show_bahasa_indonesia_whole(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    """In the header of the lobby (and every page with it) and in the table's bar, where the menu
    shows its language's name (a phone upright shows the globe alone, the menu opening over it)."""
    context, page, watch = _seated(server, browser, viewport, "id-ID")
    try:
        _show_last_round(page)
        at_table = page.evaluate(MENUS)
        goto(page, f"{server.url}/")
        switch_language(page, "id")
        in_header = page.evaluate(MENUS)
        assert len(in_header) == 1, in_header
        for menu in at_table + in_header:
            assert menu["shown"] == "Bahasa Indonesia" and menu["width"] >= menu["whole"] - 0.5, menu
        watch.assert_clean()
    finally:
        context.close()


@pytest.mark.parametrize(
    "viewport",
    [TABLET, {"width": 1024, "height": 768}, {"width": 800, "height": 600}],
    ids=["768x1024", "1024x768", "800x600"],
)
def test_a_tablets_feed_drawer_opens_on_the_right_below_the_bar(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    """From 760 to 1099 px the play-by-play is a drawer 360 px wide on the right, as the wide
    screen's column is, and it leaves the bar whole (the phone's rule put it on the left)."""
    context, page, watch = _seated(server, browser, viewport, "en-US")
    try:
        page.click(".feed-toggle")
        page.wait_for_selector(".table-screen.feed-open .feed")
        drawer = page.evaluate(
            """() => { const f = document.querySelector('.feed').getBoundingClientRect();
                       const b = document.querySelector('.bar').getBoundingClientRect();
                       return {left: f.left, right: f.right, top: f.top, width: f.width,
                               bar: b.bottom, w: innerWidth}; }"""
        )
        screenshot(page, f"feed-drawer-{viewport['width']}x{viewport['height']}")
        assert abs(drawer["width"] - 360) <= 1, drawer
        assert drawer["w"] - 16 <= drawer["right"] <= drawer["w"], drawer
        assert drawer["left"] > drawer["w"] / 2 - 360, drawer
        assert drawer["top"] >= drawer["bar"] - 1, drawer
        watch.assert_clean()
    finally:
        context.close()


def _apart(a: list[float], b: list[float]) -> bool:
    """Two boxes [left, top, right, bottom] that do not overlap (a pixel of rounding allowed)."""
    return a[2] <= b[0] + 1 or b[2] <= a[0] + 1 or a[3] <= b[1] + 1 or b[3] <= a[1] + 1


@pytest.mark.parametrize("viewport", LANDSCAPE, ids=["844x390", "740x360"])
def test_a_phone_on_its_side_centres_a_three_seat_tables_opponents_beside_the_felt(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    """At a Kozel table of three on a phone on its side, the two opponents' plates sat at the foot
    of their columns beside the felt, the upper half of each column empty: each now sits in the
    middle of its column, clear of the felt, the chain and the hand, on the first turn and with a
    chain of several tiles."""
    room = server.create_room(variant="kozel", seats=3, bots=[None, "easy", "easy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, viewport, "en-US")
    try:
        sit_and_start(page, server, room, token)
        page.wait_for_selector(".hand-tile")
        for _ in range(2):
            shown = page.evaluate(SETTLED_PARTS)
            assert (shown["scrollW"], shown["scrollH"]) == (viewport["width"], viewport["height"]), shown
            assert _outside(shown) == {}, shown
            parts = shown["parts"]
            felt, hand = parts["felt"], parts["hand"]
            plates = [parts["plate0"], parts["plate1"]]  # the opponents' (one's own is the last)
            middle = (felt[1] + felt[3]) / 2
            for plate in plates:
                assert abs((plate[1] + plate[3]) / 2 - middle) <= 0.1 * (felt[3] - felt[1]), (plate, felt)
                assert _apart(plate, felt) and _apart(plate, hand), (plate, felt, hand)
                chain = [box for name, box in parts.items() if name.startswith("chain")]
                assert all(_apart(plate, box) for box in chain), (plate, chain)
            assert plates[0][2] <= felt[0] and felt[2] <= plates[1][0], (plates, felt)  # left and right of it
            play_until(page, lambda: _chain_length(page) >= 6 or page.locator("dialog[open]").count() > 0)
        screenshot(page, f"kozel3-{viewport['width']}x{viewport['height']}")
        watch.assert_clean()
    finally:
        context.close()


# Every part of a phone's bar (the round, the pile and the round buttons), as [left, right].
BAR = """() => [...document.querySelectorAll('.bar .round-label, .bar .pile, .bar-actions > *')]
    .filter((el) => el.getClientRects().length > 0)
    .map((el) => { const r = el.getBoundingClientRect(); return [el.className, r.left, r.right]; })"""


@pytest.mark.parametrize(
    ("viewport", "locale"),
    [({"width": 360, "height": 780}, "en-US"), ({"width": 390, "height": 844}, "ru-RU")],
    ids=["360x780-en", "390x844-ru"],
)
def test_a_phones_bar_keeps_every_button_on_the_screen(
    server: ServerProcess, browser: Any, viewport: dict[str, int], locale: str
) -> None:
    """The host of a no-limit match after a round has the most buttons in the bar (End match, the
    last round, the feed, the link, the rules): on a phone upright they all stay on the screen
    (they ran 30 px past a 360 px phone's edge, which made the whole page scroll sideways)."""
    room = server.create_room(bots=[None, *BOTS], options={"camat_target": 0}, turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, viewport, locale)
    try:
        sit_and_start(page, server, room, token, host=True)
        # Ana's turn, a tile to place and no turn timer: the table waits on her, so no state draws
        # the bar again meanwhile (a bot's move did, and hid the button shown by hand); and the
        # button is shown and the bar measured in one go, with nothing drawn in between
        wait_for_a_tile_to_place(page)
        page.wait_for_selector(".stop-btn:not([hidden])")
        shown = page.evaluate(
            f"(label) => {{ ({SHOW_LAST_ROUND})(label);"
            f" return {{parts: ({BAR})(), scrollW: document.documentElement.scrollWidth}}; }}",
            catalog_of("id")["table.last_round"],
        )
        parts = shown["parts"]
        assert len(parts) == 7, parts  # the round, the pile and five buttons
        assert all(left >= 0 and right <= viewport["width"] + 0.5 for _, left, right in parts), parts
        assert shown["scrollW"] == viewport["width"], shown
        screenshot(page, f"bar-{viewport['width']}-{locale}")
        watch.assert_clean()
    finally:
        context.close()


# All 28 tiles of the set in one line (more than any round of Domeng, 25, or of Kozel places): the
# longest chain a felt must hold.
LONGEST = [
    f"{a}-{b}" for a, b in zip("0665546352615044332413022110", "6655463526150443324130221100", strict=True)
]

# Wait until the chain's tiles are at rest: no animation on a tile, and the board and its tiles
# where they were a frame before. A tile's transitions (its place, its width and height) read their
# start until they have started, which may take frames (a tile that has just turned a corner is
# read as wide as it was in its row), and a board resized is drawn again by its ResizeObserver only
# in the next frame.
SETTLE = """async () => {
    const frame = () => new Promise((done) => requestAnimationFrame(() => done()));
    const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
    let last = null;
    for (;;) {
        await frame();
        const tiles = [...document.querySelectorAll('.chain-tile')];
        const moving = tiles.flatMap((el) => el.getAnimations({subtree: true}));
        if (moving.length) {
            await Promise.allSettled(moving.map((a) => a.finished));
            last = null;
            continue;
        }
        const now = JSON.stringify([box(document.querySelector('.chain-board')), ...tiles.map(box)]);
        if (now === last) return;
        last = now;
    }
}"""

# The chain's tiles at rest, the board and the plates, with the unit the board drew at and whether
# it scrolls.
CHAIN = (
    """async () => {
    await ("""
    + SETTLE
    + """)();
    const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
    const board = document.querySelector('.chain-board');
    return {unit: parseFloat(getComputedStyle(board).getPropertyValue('--unit')),
            overflowing: board.classList.contains('overflowing'), board: box(board),
            tiles: [...board.querySelectorAll('.chain-tile')].map(box),
            plates: [...document.querySelectorAll('.plate')].map(box),
            hand: document.querySelector('.hand-tile') && box(document.querySelector('.hand-tile'))};
}"""
)

# Every chain of one to 28 tiles of `LONGEST`, opened at its first, middle and last tile, drawn on
# the board: [length, opening, what `CHAIN` reads once its tiles are at rest] for each. A chain the
# page drew meanwhile (a state or a presence, the real chain) is drawn and read again.
SWEEP = (
    """async (longest) => {
    const board = window.__domeng.screen.chain;
    const swept = [];
    for (let n = 1; n <= longest.length; n += 1) {
        for (const opening of new Set([0, Math.floor(n / 2), n - 1])) {
            for (;;) {
                const chain = longest.slice(0, n);
                board.update(chain, null, null, opening);
                const shown = await ("""
    + CHAIN
    + """)();
                if (board.chain !== chain) continue;
                swept.push([n, opening, shown]);
                break;
            }
        }
    }
    return swept;
}"""
)


def _chain_faults(shown: dict[str, Any]) -> list[Any]:
    """What is wrong with the chain as drawn: a tile outside the board (a pixel of rounding allowed)
    or over a plate, the board scrolling. Empty when the chain fits."""
    board = shown["board"]
    faults: list[Any] = ["overflowing"] if shown["overflowing"] else []
    for tile in shown["tiles"]:
        if not (
            board[0] - 1 <= tile[0]
            and tile[2] <= board[2] + 1
            and board[1] - 1 <= tile[1]
            and tile[3] <= board[3] + 1
        ):
            faults.append(("outside", tile, board))
        faults.extend(("over a plate", tile, plate) for plate in shown["plates"] if not _apart(tile, plate))
    return faults


@pytest.mark.parametrize(
    "viewport",
    [TABLET, {"width": 1024, "height": 768}, {"width": 1099, "height": 700}],
    ids=["768x1024", "1024x768", "1099x700"],
)
def test_a_tablets_chain_grows_with_its_felt_and_every_chain_fits_at_rest(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    """From 760 to 1099 px the chain's tiles kept a phone's cap (44 px a side) on a felt twice as
    big: a short chain now takes tiles as large as the felt gives, up to a tile of the hand. Every
    chain of a round played out (looked at on each of our turns) and every chain of one to 28 tiles
    fits the board once its tiles are at rest: inside it, clear of the plates, without scrolling.
    (c2f6b4b's test could read a tile whose width had not yet begun to glide: one that had just
    turned a corner, still as wide as in its row, past the board's edge; drawn, it is inside.)"""
    context, page, watch = _seated(server, browser, viewport, "en-US")
    try:
        lengths: set[int] = set()
        # the round of our first turn: the one before may have ended with no turn of ours to play
        first = held(page)["view"]["round"]

        def looked() -> bool:
            shown = page.evaluate(CHAIN)
            assert _chain_faults(shown) == [], shown
            lengths.add(len(shown["tiles"]))
            return round_ended(page, first)  # not its panel, which may come and go between two looks

        play_until(page, looked, timeout=120)
        assert max(lengths) >= 5, lengths
        # then, at the next round's first turn of ours (nothing comes while the room waits on it),
        # a chain of every length: a short one as large as the felt gives, up to a tile of the hand
        close_panel(page)
        page.wait_for_selector(PLAYABLE)
        swept = page.evaluate(SWEEP, LONGEST)
        assert len(swept) == 28 * 3 - 3, len(swept)  # one opening for one tile, two for two
        assert [(n, opening) for n, opening, shown in swept if len(shown["tiles"]) != n] == []
        faults = [(n, opening, _chain_faults(shown)) for n, opening, shown in swept]
        assert [fault for fault in faults if fault[2]] == []
        shown = next(shown for n, opening, shown in swept if (n, opening) == (3, 1))
        board, hand = shown["board"], shown["hand"][2] - shown["hand"][0]
        room = min((board[2] - board[0]) / 10.5, (board[3] - board[1]) / 5)  # what the felt gives a tile
        assert shown["unit"] > 44 and min(room, hand) - 1.5 <= shown["unit"] <= hand + 0.5, shown
        screenshot(page, f"chain-longest-{viewport['width']}x{viewport['height']}")
        watch.assert_clean()
    finally:
        context.close()


# The felt's height and the opponents' plates' boxes, with the across plate's turn timer shown (as
# when that seat's turn runs on a clock), then hidden again.
TIMER_SHOWN = """() => {
    const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
    const felt = document.querySelector('.felt'), timer = document.querySelector('.plate-o23 .plate-timer');
    const was = timer.hidden;
    timer.hidden = true;  // measured without the timer, then with it, in one go: no update between
    const hidden = {felt: box(felt), across: box(timer.closest('.plate'))};
    timer.hidden = false;
    const shown = {felt: box(felt), across: box(timer.closest('.plate')), timer: box(timer), hidden};
    timer.hidden = was;
    return shown;
}"""
"""The felt and the across plate without and with the across plate's turn timer shown, measured in
one evaluation (a move landing between two measurements changes the hand, and so the felt)."""


# The felt, the hand, one's own plate and the two lempas button (Kozel K4, a gold button above the
# hand when the move is legal) without and with that button shown, in one evaluation.
LEMPAS_SHOWN = """() => {
    const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
    const felt = document.querySelector('.felt'), lempas = document.querySelector('.lempas-choice');
    const was = lempas.hidden, kept = [...lempas.childNodes];
    lempas.hidden = true;
    const hidden = {felt: box(felt)};
    const button = document.createElement('button');
    button.className = 'btn btn-gold two-lempas';
    button.textContent = 'Play 6-6 and 3-3 together';
    lempas.replaceChildren(button);
    lempas.hidden = false;
    const shown = {felt: box(felt), buttons: [box(button)], hand: box(document.querySelector('.hand')),
                   plate: box(document.querySelector('.plate-me')), hidden, w: innerWidth, h: innerHeight};
    lempas.replaceChildren(...kept);
    lempas.hidden = was;
    return shown;
}"""

# The same parts with the match's end buttons (New table, Play again) that the table shows.
OVER_SHOWN = """() => {
    const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
    const over = document.querySelector('.over-actions');
    return {felt: box(document.querySelector('.felt')), hand: box(document.querySelector('.hand')),
            plate: box(document.querySelector('.plate-me')), shown: !over.hidden,
            buttons: [...over.querySelectorAll('.btn')].map(box), w: innerWidth, h: innerHeight};
}"""


def _assert_beside_the_hand(shown: dict[str, Any], viewport: dict[str, int]) -> None:
    """A phone on its side: buttons shown with the hand take no height from the felt (kept at 38% of
    the window's), and stand clear of the hand and one's own plate, inside the window."""
    felt = shown["felt"]
    assert felt[3] - felt[1] > 0.38 * viewport["height"], shown
    if "hidden" in shown:
        assert felt == shown["hidden"]["felt"], shown
    assert shown["buttons"], shown
    for button in shown["buttons"]:
        assert _apart(button, shown["hand"]) and _apart(button, shown["plate"]), shown
        assert _apart(button, felt), shown
        assert button[0] >= 0 and button[1] >= 0 and button[2] <= shown["w"] and button[3] <= shown["h"], (
            shown
        )


@pytest.mark.parametrize("viewport", LANDSCAPE, ids=["844x390", "740x360"])
def test_a_phone_on_its_side_seats_a_four_seat_tables_opponents_left_across_and_right(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    """At a Kozel table of four on a phone on its side, the one across sat in the upper half of the
    left column, above the one on the left, and the right column's upper half stood empty: the one
    across now sits above the felt, centred, and the two beside it in the middle of their columns,
    clear of the felt, the chain, the hand and each other, on the first turn and with a chain of
    several tiles. The felt keeps most of its height, and keeps it when the across plate shows its
    turn timer (on the plate's one line)."""
    room = server.create_room(variant="kozel", seats=4, bots=[None, "easy", "easy", "easy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, viewport, "en-US")
    try:
        sit_and_start(page, server, room, token)
        page.wait_for_selector(".hand-tile")
        for _ in range(2):
            shown = page.evaluate(SETTLED_PARTS)
            assert (shown["scrollW"], shown["scrollH"]) == (viewport["width"], viewport["height"]), shown
            assert _outside(shown) == {}, shown
            parts = shown["parts"]
            bar, felt, hand = parts["bar"], parts["felt"], parts["hand"]
            left, across, right = parts["plate0"], parts["plate1"], parts["plate2"]  # one's own is the last
            # the felt keeps most of the height, later in the round too (it had 99 px of 360 at
            # 740x360 once the two lempas button, or the match's end buttons, took a row of their own)
            assert felt[3] - felt[1] > 0.38 * viewport["height"], (felt, shown)
            middle = (felt[1] + felt[3]) / 2
            for plate in (left, right):
                assert abs((plate[1] + plate[3]) / 2 - middle) <= 0.1 * (felt[3] - felt[1]), (plate, felt)
            assert left[2] <= felt[0] and felt[2] <= right[0], (left, right, felt)  # beside the felt
            assert bar[3] <= across[1] and across[3] <= felt[1], (bar, across, felt)  # above it
            assert abs((across[0] + across[2]) / 2 - (felt[0] + felt[2]) / 2) <= 1, (across, felt)
            chain = [box for name, box in parts.items() if name.startswith("chain")]
            others = [felt, hand, *chain]
            for plate in (left, across, right):
                assert all(_apart(plate, box) for box in others), (plate, others)
            assert _apart(left, across) and _apart(across, right), (left, across, right)
            play_until(page, lambda: _chain_length(page) >= 6 or page.locator("dialog[open]").count() > 0)
        timed = page.evaluate(TIMER_SHOWN)
        hidden = timed["hidden"]
        assert timed["felt"] == hidden["felt"] and timed["across"][1:4:2] == hidden["across"][1:4:2], timed
        assert timed["timer"][2] - timed["timer"][0] >= 50, timed  # the timer's bar is there to read
        _assert_beside_the_hand(page.evaluate(LEMPAS_SHOWN), viewport)
        screenshot(page, f"kozel4-{viewport['width']}x{viewport['height']}")
        watch.assert_clean()
    finally:
        context.close()


@pytest.mark.parametrize("viewport", LANDSCAPE, ids=["844x390", "740x360"])
def test_a_phone_on_its_side_seats_a_two_seat_tables_opponent_across(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    """At a Kozel table of two on a phone on its side, the only opponent sat in the upper-left
    corner, beside the felt, the rest of the left column and the whole right one empty: it now sits
    across, above the felt and centred over it (as the one across at a table of four), clear of the
    felt, the chain, the hand and one's own plate, on the first turn and with a chain of several
    tiles; the felt keeps a good share of the height, and keeps it when that plate shows its turn
    timer."""
    room = server.create_room(variant="kozel", seats=2, bots=[None, "easy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, viewport, "en-US")
    try:
        sit_and_start(page, server, room, token)
        page.wait_for_selector(".hand-tile")
        for _ in range(2):
            shown = page.evaluate(SETTLED_PARTS)
            assert (shown["scrollW"], shown["scrollH"]) == (viewport["width"], viewport["height"]), shown
            assert _outside(shown) == {}, shown
            parts = shown["parts"]
            bar, felt, hand = parts["bar"], parts["felt"], parts["hand"]
            across, mine = parts["plate0"], parts["plate1"]  # one's own is the last
            # twelve tiles keep one row (test_browser_kozel: a hand grown from the bazaar); a hand
            # that drew more wraps, and the felt gives it the room
            if len([name for name in parts if name.startswith("tile")]) <= 12:
                assert felt[3] - felt[1] > 0.38 * viewport["height"], felt
            assert bar[3] <= across[1] and across[3] <= felt[1], (bar, across, felt)  # above it
            assert abs((across[0] + across[2]) / 2 - (felt[0] + felt[2]) / 2) <= 1, (across, felt)
            chain = [box for name, box in parts.items() if name.startswith("chain")]
            assert all(
                felt[0] <= b[0] and b[2] <= felt[2] and felt[1] <= b[1] and b[3] <= felt[3] for b in chain
            ), (felt, chain)
            for box in (felt, hand, mine, *chain):
                assert _apart(across, box), (across, box)
            play_until(page, lambda: _chain_length(page) >= 6 or page.locator("dialog[open]").count() > 0)
        timed = page.evaluate(TIMER_SHOWN)
        hidden = timed["hidden"]
        assert timed["felt"] == hidden["felt"] and timed["across"][1:4:2] == hidden["across"][1:4:2], timed
        assert timed["timer"][2] - timed["timer"][0] >= 50, timed  # the timer's bar is there to read
        screenshot(page, f"kozel2-{viewport['width']}x{viewport['height']}")
        watch.assert_clean()
    finally:
        context.close()


# The open panel's parts: its height, its header's, its footer's and its body's (what shows of it)
# and the tallest button of its footer.
PANEL_PARTS = """(sel) => {
    const height = (part) => document.querySelector(`${sel} ${part}`).getBoundingClientRect().height;
    const buttons = [...document.querySelectorAll(`${sel} .panel-foot .btn`)]
        .map((b) => b.getBoundingClientRect());
    return {panel: height(''), head: height('.panel-head'), foot: height('.panel-foot'),
            body: document.querySelector(`${sel} .panel-body`).clientHeight,
            buttons: buttons.length, button: Math.max(...buttons.map((r) => r.height)),
            rows: new Set(buttons.map((r) => Math.round(r.top))).size};
}"""


def _in_round(page: Any, n: int) -> bool:
    """Our turn to place a tile in round ``n`` (no turn timer: the table waits for us)."""
    return bool(
        page.evaluate(
            "(n) => { const c = window.__domeng, v = c?.view; return !!v && v.round === n"
            " && v.phase === 'playing' && v.to_act === c.seat && v.legal.some((a) => a.play); }",
            n,
        )
    )


@pytest.mark.parametrize("locale", ["en-US", "id-ID"])
def test_a_phone_on_its_side_reads_the_round_and_the_final_panel_above_a_one_row_footer(
    server: ServerProcess, browser: Any, locale: str
) -> None:
    """Found by a tester: on a phone on its side (740x360) the footer of a round's panel and of the
    match's final panel took two rows and left about 170 px of the 344 to what the panel says. Its
    note and its buttons take one row, and the body keeps most of the panel."""
    room = server.create_room(bots=[None, *BOTS], turn_timer_s=0, options={"camat_target": 0})
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, LANDSCAPE[1], locale)
    try:
        sit_and_start(page, server, room, token)
        play_until(page, lambda: _in_round(page, 2), timeout=240)
        close_panel(page)
        page.click(".last-round-btn")  # round 1's panel, asked for: it stays while we read it
        page.wait_for_selector(f"{PANEL} .panel-foot")
        shown = {"round": page.evaluate(PANEL_PARTS, PANEL)}
        screenshot(page, f"round-panel-740x360-{locale}")
        close_panel(page)
        # the host ends the match as round 2 ends: its final panel, with New table and Play again
        reply = httpx.put(
            f"{server.url}/api/rooms/{room['code']}/stop",
            json={"stop": True},
            headers={"Authorization": f"Bearer {room['host_token']}"},
            timeout=10,
        )
        assert reply.status_code == 200, reply.text
        play_until(page, lambda: page.locator(f"{PANEL} .play-again").count() > 0, timeout=240)
        shown["final"] = page.evaluate(PANEL_PARTS, PANEL)
        screenshot(page, f"final-panel-740x360-{locale}")
        for which, parts in shown.items():
            assert parts["rows"] == 1 and parts["foot"] < parts["button"] + 30, (which, parts)
            assert parts["body"] >= 0.55 * parts["panel"], (which, parts)
        assert shown["final"]["buttons"] == 3, shown
        watch.assert_clean()
    finally:
        context.close()


def test_a_phone_on_its_side_keeps_the_felt_when_the_match_ends(server: ServerProcess, browser: Any) -> None:
    """Found in the four-seat test above: at the end of a Kozel match on a phone on its side
    (740x360) the table's New table and Play again took a row above the hand, and the felt, where
    the last chain lies, shrank from 145 px to 99. They stand beside the hand."""
    room = server.create_room(variant="kozel", seats=4, bots=[None, "easy", "easy", "easy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    viewport = LANDSCAPE[1]
    context, page, watch = open_page(browser, viewport, "ru-RU")
    try:
        sit_and_start(page, server, room, token)
        play_until(page, lambda: page.evaluate("() => !!window.__domeng?.view?.match_over"), timeout=600)
        close_panel(page)
        page.wait_for_selector(".over-actions .play-again")
        shown = page.evaluate(OVER_SHOWN)
        assert shown["shown"] and len(shown["buttons"]) == 2, shown
        _assert_beside_the_hand(shown, viewport)
        screenshot(page, "kozel4-over-740x360-ru")
        watch.assert_clean()
    finally:
        context.close()


# The tile in our hand that fits both ends of the chain on our turn (its key, "a-b"), when one
# does: a tap on it asks which end (the Left end, Right end, Cancel row above the hand).
BOTH_ENDS = """() => {
    const s = window.__domeng?.screen;
    if (!s || s.pending || !s.isMyTurn()) return null;
    for (const [key, actions] of s.legalByTile()) {
        const ends = new Set(actions.map((a) => a.end));
        if (ends.has('L') && ends.has('R')) return key;
    }
    return null;
}"""

# No tile of the chain gliding to a new place or size (its CSS transitions, which a page with
# reduced motion still runs): a box measured meanwhile is neither where it was nor where it goes.
CHAIN_AT_REST = """() => [...document.querySelectorAll('.chain-tile')]
    .every((el) => !el.getAnimations().length)"""


# The end-choice row's buttons, the status line above the hand and every plate: their boxes,
# whether a button's words overflow it, and the lines each button's words take.
CHOICE_SHOWN = """() => {
    const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
    const lines = (el) => { const r = document.createRange(); r.selectNodeContents(el);
                            return new Set([...r.getClientRects()].filter((b) => b.width)
                                                                  .map((b) => Math.round(b.bottom))).size; };
    const buttons = [...document.querySelectorAll('.choice:not(.lempas-choice) .btn')];
    return {buttons: buttons.map(box), cut: buttons.filter((b) => b.scrollWidth > b.clientWidth
                                                             || b.scrollHeight > b.clientHeight).length,
            words: buttons.map((b) => [b.textContent, lines(b)]),
            status: box(document.querySelector('.me-status')),
            plates: [...document.querySelectorAll('.plate')].map(box)};
}"""


@pytest.mark.parametrize(
    ("viewport", "locale"), [(LANDSCAPE[0], "en-US"), (LANDSCAPE[1], "ru-RU")], ids=["844x390", "740x360-ru"]
)
def test_a_phone_on_its_side_keeps_the_felt_still_while_an_end_is_chosen(
    server: ServerProcess, browser: Any, viewport: dict[str, int], locale: str
) -> None:
    """Found by a tester: on a phone on its side, a tap on a tile that fits both ends showed the
    Left end, Right end and Cancel row above the hand, 46 px taken from the felt: the felt shrank
    and the chain was laid out anew while the player chose an end on it. The buttons stand beside
    the hand, clear of the status line and the plates, and nothing on the felt moves. Their words
    take at most two lines (Russian's "Правый конец (5) ▶" took three), in every language there."""
    # a match without a limit (camat_target 0): the turn with such a tile comes before its end
    room = server.create_room(bots=[None, *BOTS], turn_timer_s=0, options={"camat_target": 0})
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, viewport, locale)
    try:
        sit_and_start(page, server, room, token)
        play_until(page, lambda: page.evaluate(BOTH_ENDS) is not None, timeout=300)
        key = page.evaluate(BOTH_ENDS)
        page.wait_for_function(CHAIN_AT_REST)  # the tile played before our turn has glided to its place
        before = page.evaluate(SETTLED_PARTS)
        page.click(f'.hand-tile[data-tile="{key}"]')
        page.wait_for_selector(".choice:not(.lempas-choice):not([hidden]) .end-btn")
        page.wait_for_function(CHAIN_AT_REST)
        during = page.evaluate(SETTLED_PARTS)
        assert page.evaluate("() => window.__domeng.screen.choosing") == key  # still choosing
        on_felt = {name: box for name, box in before["parts"].items() if name.startswith(("felt", "chain"))}
        moved = {
            name: (box, during["parts"][name])
            for name, box in on_felt.items()
            if any(abs(a - b) > 0.5 for a, b in zip(box, during["parts"][name], strict=True))
        }
        assert moved == {}, moved
        assert _outside(during) == {}, during
        choice = page.evaluate(CHOICE_SHOWN)
        assert len(choice["buttons"]) == 3 and choice["cut"] == 0, choice
        assert all(lines <= 2 for _, lines in choice["words"]), choice
        parts = during["parts"]
        for button in choice["buttons"]:
            clear = [parts["hand"], parts["felt"], choice["status"], *choice["plates"]]
            assert all(_apart(button, other) for other in clear), (button, clear)
            assert min(button[:2]) >= 0 and button[2] <= during["w"] and button[3] <= during["h"], button
        screenshot(page, f"choose-end-{viewport['width']}x{viewport['height']}-{locale}")
        if viewport == LANDSCAPE[1]:  # the narrowest: the same choice in every language
            for lang in languages():
                switch_language(page, lang)  # the table drawn again, the choice gone with it
                page.click(f'.hand-tile.playable[data-tile="{key}"]')
                page.wait_for_selector(".choice:not(.lempas-choice):not([hidden]) .end-btn")
                choice = page.evaluate(CHOICE_SHOWN)
                assert choice["cut"] == 0 and all(lines <= 2 for _, lines in choice["words"]), (lang, choice)
        watch.assert_clean()
    finally:
        context.close()


# A chain board of its own on the page, 420x300 px, that ``chain`` grows on one tile at a time, as
# a round's does, until a tile placed makes the rows wrap at other tiles (the chain takes a new
# size): a tile that stood upright at a corner then lies along a row, or the other way. Two frames
# later, each tile whose side turned: its look ("a-b-v" or "-h") and the shape of its box.
CHAIN_TURNS = """async (chain) => {
    const { ChainBoard } = await import('/static/js/chain.js');
    const frame = () => new Promise((done) => requestAnimationFrame(() => done()));
    const box = document.createElement('div');
    Object.assign(box.style, {position: 'fixed', left: '0', top: '0', width: '420px', height: '300px'});
    document.body.append(box);
    const labels = () => ({chain: '', empty: '', left: '', right: ''});
    const board = new ChainBoard({onEnd: () => {}, labels});
    box.append(board.el);
    const tiles = () => [...board.el.querySelectorAll('.chain-tile')];
    await frame();  // the board's size is heard
    for (let n = 1; n <= chain.length; n += 1) {
        const before = new Map(tiles().map((el) => [el.dataset.tile, el.dataset.look.slice(-1)]));
        board.update(chain.slice(0, n), [0, 0], null, 0);
        await frame();
        await frame();
        const turned = tiles().filter((el) => before.has(el.dataset.tile)
                                              && el.dataset.look.slice(-1) !== before.get(el.dataset.tile));
        if (turned.length) return {n, turned: turned.map((el) => {
            const r = el.getBoundingClientRect();
            return {tile: el.dataset.tile, look: el.dataset.look, shape: r.width / r.height};
        })};
    }
    return {turned: []};
}"""


def test_a_chain_tile_that_turns_a_corner_keeps_its_shape(server: ServerProcess, browser: Any) -> None:
    """Found by a tester: a tile at a corner of the chain squashed and stretched as it moved there.
    A tile turns its side when the chain's rows wrap elsewhere (its board's size changed, or the
    chain took a new size as it grew): its face changed at once, but its box glided from one shape
    to the other (a tile 2:1 drawn in a box on its way to 1:2). It takes its new shape at once, and
    its new place too (a chain laid out anew is drawn at once: tests/test_browser_chain_refit.py)."""
    chain = ["1-2", "2-3", "3-4", "4-5", "5-6", "6-0", "0-2", "2-4", "4-6", "6-1", "1-3", "3-5", "5-0"]
    context = browser.new_context(viewport=DESKTOP, locale="en-US")  # with the page's animations
    page = context.new_page()
    watch = PageWatch()
    watch.attach(page)
    try:
        goto(page, f"{server.url}/")
        turned = page.evaluate(CHAIN_TURNS, chain)
        assert turned["turned"], "no tile turned its side: the case tests nothing"
        for tile in turned["turned"]:
            want = 0.5 if tile["look"].endswith("-v") else 2.0
            assert abs(tile["shape"] - want) < 0.05, turned
        watch.assert_clean()
    finally:
        context.close()


# Each button and language menu the bar shows, as the player sees it: a button's words are whole
# (`cut`: its label is narrower than its text), or it is its icon alone, named by its hidden words
# and with a tooltip.
BAR_CONTROLS = """() => [...document.querySelectorAll('.bar-actions > .icon-btn')]
    .filter((b) => b.offsetWidth > 0).map((b) => {
        const lbl = b.querySelector('.lbl'); const r = lbl?.getBoundingClientRect() ?? {width: 0};
        return {cls: b.className, words: lbl?.textContent ?? '', iconOnly: r.width <= 1,
                cut: r.width > 1 && lbl.scrollWidth > Math.ceil(r.width) + 0.5,
                title: b.getAttribute('title'),
                name: b.getAttribute('aria-label') || b.textContent,
                right: b.getBoundingClientRect().right}; })"""


def test_the_bar_keeps_the_language_menu_whole_after_a_round(server: ServerProcess, browser: Any) -> None:
    """After a round the bar's "Round results" (and the host's End match in a no-limit match) joins
    Copy link, Rules and the language menu: in Ukrainian the menu was squeezed to "Украї…" at
    1280x800 (73 px against English's 165). Now the buttons give up their words for their icon
    (with a tooltip) before the menu narrows, in every language and size; a button shown as its icon
    alone (always on a phone's and a tablet's bar) has a tooltip."""
    room = server.create_room(bots=[None, *BOTS], turn_timer_s=0, options={"camat_target": 0})
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, DESKTOP, "en-US")
    try:
        sit_and_start(page, server, room, token, host=True)
        play_until(page, lambda: round_ended(page), timeout=180)
        close_panel(page)
        page.wait_for_selector(".last-round-btn[data-opens='round']:not([hidden])")
        for viewport in (DESKTOP, {"width": 1024, "height": 768}, PHONE):
            page.set_viewport_size(viewport)
            for lang in languages():
                switch_language(page, lang)
                page.wait_for_function("() => !document.querySelector('.stop-btn').hidden")
                size = f"{viewport['width']}x{viewport['height']}"
                for menu in page.evaluate(MENUS):
                    assert menu["width"] >= menu["whole"] - 0.5, (size, lang, menu)
                controls = page.evaluate(BAR_CONTROLS)
                for control in controls:
                    assert not control["cut"], (size, lang, control)
                    assert control["right"] <= viewport["width"] + 1, (size, lang, control)
                    assert control["name"].strip(), (size, lang, control)
                    if control["iconOnly"]:
                        assert control["title"], (size, lang, control)
                if lang in ("en", "uk"):
                    screenshot(page, f"bar-after-round-{size}-{lang}", always=True)
        watch.assert_clean()
    finally:
        context.close()


# A web font that arrives late: the bar's words in "LateWide" (the machine's DejaVu Sans, or another
# font it has, half as large again), first drawn in the fallback while the font is not there, then
# the font added and loaded as a web font's download ends. Says whether one of them loaded.
LATE_FONT = """async () => {
    const bar = document.querySelector('.bar');
    bar.style.fontFamily = 'LateWide, system-ui, sans-serif';  // not there yet: the fallback
    await new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
    for (const name of ['DejaVu Sans', 'Liberation Sans', 'Noto Sans', 'FreeSans']) {
        const face = new FontFace('LateWide', `local('${name}')`, {sizeAdjust: '150%'});
        document.fonts.add(face);  // loaded as the page's own: as a stylesheet's @font-face is
        try { await face.load(); } catch { document.fonts.delete(face); continue; }
        await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));  // drawn
        return true;
    }
    return false;
}"""

# The bar's language menu: its width, and the width it takes where nothing squeezes it (its own
# max-width still holding: in a font half as large again "Українська" is wider than that allows).
BAR_MENU = """() => { const s = document.querySelector('.bar .lang-select');
    const free = s.cloneNode(true);
    Object.assign(free.style, {minWidth: '0', width: 'auto', position: 'absolute', visibility: 'hidden'});
    s.parentElement.append(free);
    const room = free.getBoundingClientRect().width;
    free.remove();
    return {width: s.getBoundingClientRect().width, room}; }"""

# Whether the bar shows every button whole (its words, or its icon alone) and its language menu as
# wide as it may be, inside the bar.
BAR_WHOLE = f"""() => {{ const bar = document.querySelector('.bar');
    const controls = ({BAR_CONTROLS})(), menu = ({BAR_MENU})();
    return bar.scrollWidth <= bar.clientWidth && controls.every((c) => !c.cut)
        && menu.width >= menu.room - 0.5; }}"""


def test_the_bar_is_fitted_again_when_a_web_font_arrives_late(server: ServerProcess, browser: Any) -> None:
    """The bar's buttons give up their words before the language menu narrows (table.js fitBar),
    measured when what the bar holds or its width changes. A web font that arrives after that
    measure made the words wider in the same bar: in Ukrainian at 1280x800 they then needed 1,002
    px of its 942, and the menu was squeezed, as before that fit. The bar is fitted again when the
    fonts have loaded (document.fonts' loadingdone)."""
    context, page, watch = _seated(server, browser, DESKTOP, "uk-UA")
    try:
        page.wait_for_function(BAR_WHOLE)
        assert page.evaluate("() => document.querySelector('.bar').dataset.tight") == "0"
        if not page.evaluate(LATE_FONT):
            pytest.skip("no font to load as a web font (DejaVu Sans, Liberation Sans, Noto Sans, FreeSans)")
        try:
            page.wait_for_function(BAR_WHOLE, timeout=20_000)
        except PlaywrightTimeoutError:
            raise AssertionError(f"the bar was not fitted again: {page.evaluate(BAR_MENU)}") from None
        for control in page.evaluate(BAR_CONTROLS):
            assert control["right"] <= DESKTOP["width"] + 1, control
            if control["iconOnly"]:
                assert control["title"], control
        screenshot(page, "bar-late-font-1280x800-uk")
        watch.assert_clean()
    finally:
        context.close()


BIG = {"width": 1920, "height": 1080}

# The hand's first tile, a chain tile's cap, the text sizes of an opponent's plate, the turn's
# status and the bar, and whether every part of the table is inside the window.
SIZES = """() => {
    const px = (sel) => parseFloat(getComputedStyle(document.querySelector(sel)).fontSize);
    const tile = document.querySelector('.hand-tile').getBoundingClientRect();
    const board = document.querySelector('.chain-board');
    return {tile: tile.width, cap: parseFloat(getComputedStyle(board).getPropertyValue('--chain-cap')),
            plate: px('.plate-o1 .plate-name, .plate-o1'), status: px('.me-status'), bar: px('.round-label'),
            w: innerWidth, h: innerHeight,
            fits: document.documentElement.scrollWidth <= innerWidth
                && document.documentElement.scrollHeight <= innerHeight};
}"""


def test_a_big_screens_table_grows_its_tiles_and_words_with_the_felt(
    server: ServerProcess, browser: Any
) -> None:
    """At 1920×1080 the table looked small: tiles of about 65 px on a big empty felt, words of a
    laptop's size. From 1600×900 the hand's tiles, the chain's cap and the table's words grow with
    the screen (a laptop's 1280×800 and a phone keep theirs), and the table still fits the window."""
    sizes = {}
    for viewport in (DESKTOP, BIG):
        context, page, watch = _seated(server, browser, viewport, "en-US")
        try:
            sizes[viewport["width"]] = page.evaluate(SIZES)
            screenshot(page, f"table-{viewport['width']}x{viewport['height']}")
            watch.assert_clean()
        finally:
            context.close()
    laptop, big = sizes[DESKTOP["width"]], sizes[BIG["width"]]
    assert big["fits"] and laptop["fits"], sizes
    assert big["tile"] >= 88 and big["tile"] >= 1.25 * laptop["tile"], sizes
    assert big["cap"] >= big["tile"] * 0.9, sizes  # the chain's tiles may grow as large as the hand's
    for words in ("plate", "status", "bar"):
        assert big[words] >= 1.15 * laptop[words], (words, sizes)


# A notice shown now (dom.js's, as the page shows "Last round…"), and once the page has drawn it:
# each toast's box and each seat's plate (its name, its stones, its tiles), as [left, top, right, bottom].
NOTICE_SHOWN = """async (text) => {
    const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
    const { toast } = await import('/static/js/dom.js');
    document.querySelectorAll('#toasts .toast').forEach((el) => el.remove());
    toast(text, 'info', 60000);
    const frame = () => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
    for (let i = 0; i < 3; i++) await frame();
    const live = document.getElementById('toasts');
    return {toasts: [...live.querySelectorAll('.toast')].map(box),
            live: [...live.querySelectorAll('.toast')].map((el) => el.getAttribute('role')),
            plates: [...document.querySelectorAll('.plate')].filter((el) => el.offsetWidth).map(box),
            hand: box(document.querySelector('.hand')), w: innerWidth, h: innerHeight};
}"""


@pytest.mark.parametrize(
    "viewport", [{"width": 1366, "height": 768}, DESKTOP, PHONE], ids=["1366x768", "1280x800", "390x844"]
)
def test_a_notice_at_the_table_covers_no_seats_name_or_stones(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    """Found by a new user: toasts ("Last round…", "Link copied") were drawn under the bar over the
    opponents' plates at the top of the table, and on a phone over the whole top row. A notice
    shows clear of every seat's plate (its name and its stones), on the screen, announced (a
    ``status``), and of the hand's tiles."""
    context, page, watch = _seated(server, browser, viewport, "en-US")
    try:
        shown = page.evaluate(NOTICE_SHOWN, catalog_of("en")["room.seat_lost"])
        screenshot(page, f"notice-{viewport['width']}x{viewport['height']}")
        assert shown["toasts"] and shown["live"] == ["status"], shown
        assert len(shown["plates"]) == 5, shown
        for toast in shown["toasts"]:
            assert toast[0] >= 0 and toast[1] >= 0, shown
            assert toast[2] <= shown["w"] and toast[3] <= shown["h"], shown
            for plate in shown["plates"]:
                assert _apart(toast, plate), (toast, plate, shown)
            assert _apart(toast, shown["hand"]), shown
        watch.assert_clean()
    finally:
        context.close()


# The host's chat as shown (a phone's in its open drawer, scrolled to it): the height of a chat line
# of one row, and how much of the list shows, below the "Chat" heading and inside the panel (its
# top not scrolled away out of the chat's box); each spectator's Mute and Remove, in
# one row (their tops, their bottoms) and inside the chat's box.
HOST_CHAT = """async () => {
    const frame = () => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
    const box = document.querySelector('.table-screen .chat-box');
    const list = box.querySelector('.chat-list');
    // a phone's drawer slides open: measured once nothing in it moves (at most 60 frames)
    for (let i = 0; i < 60 && document.getAnimations().some(
        (a) => a.playState === 'running' && a.effect?.target?.closest?.('.feed')); i += 1) await frame();
    list.scrollIntoView({block: 'nearest'});
    list.scrollTop = list.scrollHeight;
    await frame();
    const r = (el) => el.getBoundingClientRect();
    const l = r(list), b = r(box), head = r(box.querySelector('h3')), feed = r(box.closest('.feed'));
    const top = Math.max(l.top, b.top, head.bottom, feed.top);
    const bottom = Math.min(l.bottom, b.bottom, feed.bottom, innerHeight);
    const lines = [...list.querySelectorAll('.chat-line')].map(r);
    const rows = [...box.querySelectorAll('.chat-remove')].map((remove) => {
        const mute = box.querySelector(`.chat-mute[data-watcher='${remove.dataset.watcher}']`);
        const m = r(mute), x = r(remove);
        return {mute: [m.left, m.top, m.right, m.bottom], remove: [x.left, x.top, x.right, x.bottom],
                inside: m.left >= b.left - 0.5 && x.right <= b.right + 0.5};
    });
    return {lines: lines.length, line: Math.min(...lines.map((e) => e.height)), shown: bottom - top,
            under: l.top >= head.bottom - 0.5 && l.top >= b.top - 0.5, rows,
            page: document.documentElement.scrollHeight, view: innerHeight};
}"""


@pytest.mark.parametrize(
    "viewport", [{"width": 1366, "height": 768}, DESKTOP, PHONE], ids=["1366x768", "1280x800", "390x844"]
)
def test_a_hosts_chat_with_spectators_writing_keeps_five_lines_and_one_row_per_person(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    """Found by a new user at 1366x768: once the host let spectators write, the host's chat (a Mute
    and a Remove per spectator) shrank to a line and a half, its first line cut under the "Chat"
    heading, and a Remove wrapped alone onto a line of its own. Each person's controls are one row
    (Mute with the name, then Remove) and at least five lines of the chat show whole, below the
    heading, at 1366x768, 1280x800 and on a phone (its drawer open)."""
    room = server.create_room(bots=[None, *BOTS], turn_timer_s=0)
    code = room["code"]
    token = server.claim(code, 0, "Ana").json()["token"]
    server.let_spectators_chat(code, room["host_token"])
    context, page, watch = open_page(browser, viewport, "en-US")
    spectators = []
    try:
        sit_and_start(page, server, room, token, host=True)
        page.wait_for_selector(PLAYABLE)
        for name in ("Dewi", "Kristóf Szentgyörgyi-Nagy", None):
            client = Client(server, code)
            client.wait_for(lambda m: m["type"] == "chat_log")
            if name is not None:
                client.send({"type": "name", "name": name})
                client.wait_for(lambda m: m["type"] == "named")
            spectators.append(client)
        for i in range(8):
            client = spectators[i % 2]
            client.send({"type": "chat", "text": f"line {i + 1}"})
            client.wait_for(lambda m, i=i: m["type"] == "chat" and m["line"].get("text") == f"line {i + 1}")
        if viewport is PHONE:
            page.click(".feed-toggle")
            page.wait_for_selector(".table-screen.feed-open .feed .chat-box")
        count = "(s) => document.querySelectorAll(`.table-screen .chat-box ${s}`).length"
        page.wait_for_function(f"() => ({count})('.chat-line') === 8")
        page.wait_for_function(f"() => ({count})('.chat-remove') === 3")
        shown = page.evaluate(HOST_CHAT)
        screenshot(page, f"host-chat-spectators-{viewport['width']}x{viewport['height']}")
        assert shown["shown"] >= 5 * shown["line"] - 1 and shown["under"], shown  # five lines of one row
        for row in shown["rows"]:
            mute, remove = row["mute"], row["remove"]
            assert abs(mute[1] - remove[1]) <= 2 and abs(mute[3] - remove[3]) <= 2, shown  # one row
            assert row["inside"], shown
        if viewport is not PHONE:
            assert shown["page"] <= shown["view"], shown
        watch.assert_clean()
    finally:
        for client in spectators:
            client.close()
        context.close()
