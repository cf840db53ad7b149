"""What shows over the table in Chromium, measured: a toast (a long line, in the catalog whose line
is the longest, with names of 32 characters) covers no tile of the chain and no part of the hand, on
a desktop, a phone upright and a phone on its side, with a chain of 28 tiles filling the felt; the
connection banner (reconnecting, replaced, closed) covers no plate on a tablet held upright; on a
phone on its side, the banner and two long toasts leave the turn's line and the hand free."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browserkit import (
    DESKTOP,
    PHONE,
    PLAYABLE,
    catalog_of,
    languages,
    open_page,
    screenshot,
    sit_and_start,
)
from tests.serverkit import ServerProcess
from tests.test_browser_layout import LONGEST

# the longest name a seat may take (app/rooms/names.py: MAX_NAME_GRAPHEMES)
LONG_NAME = "Aleksandra-Anastasiya Kovalenko-"

# What lies over the table and what it must not cover, once the page has drawn it and the chain's
# tiles are at rest (no transition on a tile, a frame at a time, at most 60): the boxes
# [left, top, right, bottom] of the toasts shown, of the banner (null when hidden), of the chain's
# tiles, of the hand and of the plates; and whether the board shows the chain it was given.
COVERED = """async (chain) => {
    const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
    const frame = () => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
    const moving = () => document.getAnimations().some(
        (a) => a.playState === 'running' && a.effect?.target?.closest?.('.chain-tile'));
    await frame();
    for (let i = 0; i < 60; i += 1) {
        document.body.getBoundingClientRect();
        if (!moving()) break;
        await frame();
    }
    const banner = document.querySelector('.banner');
    const board = window.__domeng.screen.chain;
    const toasts = [...document.querySelectorAll('#toasts .toast')].filter((t) => t.getClientRects().length);
    return {toasts: toasts.map(box), banner: banner.hidden ? null : box(banner), kind: banner.dataset.kind,
            chain: [...document.querySelectorAll('.chain-tile')].map(box),
            hand: box(document.querySelector('.hand')),
            plates: [...document.querySelectorAll('.plate')].map(box),
            ours: chain === null || board.chain.join() === chain.join(), w: innerWidth, h: innerHeight};
}"""

# The chain of 28 tiles on the board, opened in its middle, as the page draws a state's.
SHOW_CHAIN = "(chain) => window.__domeng.screen.chain.update(chain, null, null, 14)"

# A toast (dom.js's, as the page shows one) for a minute.
SHOW_TOAST = """async (text) => {
    const { toast } = await import('/static/js/dom.js');
    document.querySelectorAll('#toasts .toast').forEach((el) => el.remove());
    toast(text, 'info', 60000);
}"""


def _apart(a: list[float], b: list[float]) -> bool:
    """Two boxes that do not overlap (touching edges, or a pixel of rounding, allowed)."""
    return a[2] <= b[0] + 1 or b[2] <= a[0] + 1 or a[3] <= b[1] + 1 or b[3] <= a[1] + 1


def _longest(key: str) -> tuple[str, str]:
    """The catalog whose ``key`` is the longest, and its words there."""
    lang = max(languages(), key=lambda code: len(str(catalog_of(code).get(key, ""))))
    return lang, str(catalog_of(lang)[key])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path_factory.mktemp("browser-overlays"),
        env={"DOMENG_BOT_DELAY_S": "0.05", "DOMENG_ROUND_PAUSE_S": "1"},
    ).start()
    yield process
    process.stop()


def _seated(
    server: ServerProcess, browser: Any, viewport: dict[str, int], locale: str
) -> tuple[Any, Any, Any]:
    """A page at a five-seat Domeng table, a person of the longest name against four bots, on its
    first turn (nothing comes while the room waits on it)."""
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, LONG_NAME).json()["token"]
    context, page, watch = open_page(browser, viewport, locale)
    sit_and_start(page, server, room, token)
    page.wait_for_selector(PLAYABLE)
    return context, page, watch


def _covered_with_chain(page: Any) -> dict[str, Any]:
    """`COVERED` with the chain of 28 tiles on the board: shown again (and read again) if a state
    or a presence drew the real chain meanwhile."""
    for _ in range(20):
        page.evaluate(SHOW_CHAIN, LONGEST)
        shown: dict[str, Any] = page.evaluate(COVERED, LONGEST)
        if shown["ours"]:
            return shown
    raise AssertionError("the page kept drawing its own chain")


@pytest.mark.parametrize(
    "viewport",
    [DESKTOP, PHONE, {"width": 844, "height": 390}, {"width": 740, "height": 360}],
    ids=["1280x800", "390x844", "844x390", "740x360"],
)
def test_a_long_toast_covers_no_chain_tile_and_not_the_hand(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    """Found by a tester: a long toast (a camat's line with long names, in Ukrainian) came down from
    the bar over the top of a chain that filled the felt, for the 4 s it shows. The chain keeps
    clear of it (a chain already clear stays where it is), and it never reaches the hand."""
    lang, words = _longest("outcome.camat")
    text = words.replace("[[", "").replace("]]", "").replace("{name}", LONG_NAME)
    context, page, watch = _seated(server, browser, viewport, f"{lang}-XX")
    try:
        alone = _covered_with_chain(page)
        assert alone["chain"] and not alone["toasts"], alone
        page.evaluate(SHOW_TOAST, text)
        shown = _covered_with_chain(page)
        assert shown["toasts"] and len(shown["chain"]) == len(LONGEST), shown
        for toast in shown["toasts"]:
            assert [tile for tile in shown["chain"] if not _apart(toast, tile)] == [], (toast, shown)
            assert _apart(toast, shown["hand"]), (toast, shown)
        screenshot(page, f"toast-over-chain-{viewport['width']}x{viewport['height']}-{lang}")
        watch.assert_clean()
    finally:
        context.close()


# The banner of a connection in the state given (room.js's `updateBanner`, as the socket's news
# draws it), or none again with null.
SHOW_BANNER = """(kind) => {
    const c = window.__domeng;
    c.connection = {...c.connection, reconnecting: kind === 'reconnecting', replaced: kind === 'replaced',
                    closed: kind === 'closed'};
    c.updateBanner();
}"""


@pytest.mark.parametrize(
    "viewport",
    [{"width": 768, "height": 1024}, {"width": 820, "height": 1180}, PHONE],
    ids=["768x1024", "820x1180", "390x844"],
)
def test_the_banner_covers_no_plate_on_a_tablet_held_upright(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    """Found by a tester: on a tablet held upright the connection banner, under the bar, covered the
    names of the plates in the row below it (nor is the upper-left corner free there, where a
    desktop shows it). It shows over the felt's top, the chain (28 tiles, filling the felt) clear of
    it, in the language whose words are the longest."""
    lang, _ = _longest("room.replaced")
    context, page, watch = _seated(server, browser, viewport, f"{lang}-XX")
    try:
        for kind in ["reconnecting", "replaced", "closed"]:
            page.evaluate(SHOW_BANNER, kind)
            page.wait_for_selector(f'.banner[data-kind="{kind}"]:not([hidden])')
            shown = _covered_with_chain(page)
            banner = shown["banner"]
            assert banner and shown["kind"] == kind, shown
            assert [plate for plate in shown["plates"] if not _apart(banner, plate)] == [], (kind, shown)
            assert [tile for tile in shown["chain"] if not _apart(banner, tile)] == [], (kind, shown)
            assert banner[0] >= 0 and banner[2] <= shown["w"], (kind, shown)
            screenshot(page, f"banner-{kind}-{viewport['width']}x{viewport['height']}-{lang}")
        page.evaluate(SHOW_BANNER, None)
        page.wait_for_selector(".banner", state="hidden")
        watch.assert_clean()
    finally:
        context.close()


# Two toasts (dom.js's, as the page shows them) for a minute: the older one first.
SHOW_TWO_TOASTS = """async ([older, newer]) => {
    const { toast } = await import('/static/js/dom.js');
    document.querySelectorAll('#toasts .toast').forEach((el) => el.remove());
    toast(older, 'error', 60000);
    toast(newer, 'info', 60000);
}"""

# Wait until the toasts are placed for the banner as it is: the box of the toasts and theirs the
# same three frames running (at most 60). The banner's height is heard from the layout (room.js, a
# ResizeObserver) a frame after it shows, and Chromium places the box of the toasts for the banner
# shown or gone (its `:has()` rule) only some frames later: read at once, the box still has the
# other's place and height.
TOASTS_PLACED = """async () => {
    const at = () => JSON.stringify([...document.querySelectorAll('#toasts, #toasts .toast')]
        .map((el) => { const r = el.getBoundingClientRect(); return [r.top, r.bottom]; }));
    let last = at(), same = 0;
    for (let i = 0; i < 60 && same < 3; i += 1) {
        await new Promise((done) => requestAnimationFrame(done));
        const now = at();
        same = now === last ? same + 1 : 0;
        last = now;
    }
}"""

# The boxes [left, top, right, bottom] of the toasts shown (older first), of the hand's section
# (the turn's status line, one's plate and the hand) and of the hand itself, once the toasts are
# placed (`TOASTS_PLACED`).
OVER_THE_HAND = """async () => {
    await (TOASTS_PLACED)();
    const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
    const shown = [...document.querySelectorAll('#toasts .toast')].filter((t) => t.checkVisibility());
    return {toasts: shown.map(box), texts: shown.map((t) => t.textContent),
            me: box(document.querySelector('.me')), hand: box(document.querySelector('.hand')),
            status: box(document.querySelector('.me-status'))};
}""".replace("TOASTS_PLACED", TOASTS_PLACED)


@pytest.mark.parametrize(
    "viewport", [{"width": 740, "height": 360}, {"width": 844, "height": 390}], ids=["740x360", "844x390"]
)
def test_toasts_and_the_banner_leave_the_hand_free_on_a_phone_on_its_side(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    """On a phone on its side the reconnecting banner sits over the felt's top and the toasts come
    under it: two long ones (an error, then a camat's line with long names) came down over the
    turn's status line and the hand. With the banner up only the newest toast shows (the older
    comes back if it still stands when the newest goes), scrolling if it is longer, and the toasts
    end above the hand's section whatever their length; the newest stays in view."""
    lang, words = _longest("outcome.camat")
    newer = words.replace("[[", "").replace("]]", "").replace("{name}", LONG_NAME)
    older = str(catalog_of(lang)["error.generic"]).replace("{message}", newer)
    context, page, watch = _seated(server, browser, viewport, f"{lang}-XX")
    try:
        page.evaluate(SHOW_BANNER, "reconnecting")
        page.wait_for_selector('.banner[data-kind="reconnecting"]:not([hidden])')
        page.evaluate(SHOW_TWO_TOASTS, [older, newer])
        shown = _covered_with_chain(page)
        over = page.evaluate(OVER_THE_HAND)
        screenshot(page, f"toasts-banner-{viewport['width']}x{viewport['height']}-{lang}")
        assert over["texts"] and over["texts"][-1] == newer, over  # the newest shows
        assert len(over["toasts"]) == 1, over  # the banner up: the newest alone
        for toast in over["toasts"]:
            assert _apart(toast, over["me"]), (toast, over)
            assert _apart(toast, shown["banner"]), (toast, shown)
        # the banner gone, the older one shows again, above the hand too
        page.evaluate(SHOW_BANNER, None)
        page.wait_for_selector(".banner", state="hidden")
        over = page.evaluate(OVER_THE_HAND)
        assert len(over["toasts"]) == 2 and over["texts"][-1] == newer, over
        for toast in over["toasts"]:
            assert _apart(toast, over["me"]), (toast, over)
        screenshot(page, f"toasts-{viewport['width']}x{viewport['height']}-{lang}")
        watch.assert_clean()
    finally:
        context.close()


# The newest toast's text, read whole: its first line and, scrolled to its end if the toast scrolls,
# its last line, each [left, top, right, bottom], with the toast's box, the box of the toasts (which
# clips them) and the screen's size; whether the toast scrolls, and how many toasts show; once the
# toasts are where they stay (as `OVER_THE_HAND` waits).
READ_WHOLE = """async () => {
    await (TOASTS_PLACED)();
    const box = (r) => [r.left, r.top, r.right, r.bottom];
    const shown = [...document.querySelectorAll('#toasts .toast')].filter((t) => t.checkVisibility());
    const toast = shown[shown.length - 1];
    const range = document.createRange();
    range.selectNodeContents(toast);
    const scrolls = ['auto', 'scroll'].includes(getComputedStyle(toast).overflowY);
    toast.scrollTop = 0;
    const first = box(range.getClientRects()[0]);
    if (scrolls) toast.scrollTop = toast.scrollHeight;
    const rects = range.getClientRects();
    const last = box(rects[rects.length - 1]);
    const outer = toast.getBoundingClientRect(), style = getComputedStyle(toast);
    const top = outer.top + toast.clientTop + parseFloat(style.paddingTop);  // the box its text shows in
    const bottom = outer.top + toast.clientTop + toast.clientHeight - parseFloat(style.paddingBottom);
    return {first, last, toast: [outer.left, top, outer.right, bottom], scrolls, shown: shown.length,
            clip: box(document.getElementById('toasts').getBoundingClientRect()),
            text: toast.textContent, w: innerWidth, h: innerHeight};
}""".replace("TOASTS_PLACED", TOASTS_PLACED)

# The shorter of the other two: an older toast, one line
OLDER = "Bot 3 plays 6-6"


def _longest_toast(lang: str) -> str:
    """The longest of ``lang``'s words a table says in a toast (a refusal, an error, a note)."""
    words = catalog_of(lang)
    toasts = [k for k in words if k.startswith(("error.", "join.", "alerts.", "stop.", "room.", "chat."))]
    text = max((str(words[k]) for k in toasts if isinstance(words[k], str)), key=len)
    for name in ("{name}", "{message}", "{button}"):
        text = text.replace(name, LONG_NAME)
    return text.replace("[[", "").replace("]]", "")


def _read_whole(shown: dict[str, Any]) -> list[Any]:
    """What of the toast's text cannot be read: a first or last line outside the toast's inner box,
    outside the box of the toasts or off the screen (a pixel of rounding allowed)."""
    faults = []
    for name, line in (("first", shown["first"]), ("last", shown["last"])):
        for edge, outer in (
            ("toast", shown["toast"]),
            ("toasts", shown["clip"]),
            ("screen", [0, 0, shown["w"], shown["h"]]),
        ):
            if not (
                outer[0] - 1 <= line[0]
                and outer[1] - 1 <= line[1]
                and line[2] <= outer[2] + 1
                and line[3] <= outer[3] + 1
            ):
                faults.append((name, edge, line, outer))
    return faults


@pytest.mark.parametrize(
    "viewport", [{"width": 640, "height": 360}, {"width": 740, "height": 360}], ids=["640x360", "740x360"]
)
def test_a_long_toast_is_read_whole_on_a_phone_on_its_side(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    """Found by a tester: on a phone on its side a toast showed three lines and an ellipsis, and
    the longest words of a refusal (Indonesian, Russian...) were cut. The newest toast shows its
    text whole, or scrolls to its end, inside the screen and above the hand: alone, under an
    older one, and under the connection banner, in every language."""
    context, page, watch = _seated(server, browser, viewport, "en-US")
    try:
        for lang in languages():
            text = _longest_toast(lang)
            for banner in (None, "reconnecting"):
                page.evaluate(SHOW_BANNER, banner)
                page.evaluate(SHOW_TOAST, text)
                alone = page.evaluate(READ_WHOLE)
                assert alone["text"] == text and _read_whole(alone) == [], (lang, banner, alone)
                page.evaluate(SHOW_TWO_TOASTS, [OLDER, text])
                under = page.evaluate(READ_WHOLE)
                assert under["text"] == text and _read_whole(under) == [], (lang, banner, under)
                over = page.evaluate(OVER_THE_HAND)
                assert all(_apart(toast, over["me"]) for toast in over["toasts"]), (lang, banner, over)
                screenshot(page, f"toast-whole-{viewport['width']}x{viewport['height']}-{lang}-{banner}")
        page.evaluate(SHOW_BANNER, None)
        watch.assert_clean()
    finally:
        context.close()
