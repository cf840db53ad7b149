"""The chain re-laid as it grows, frame by frame in Chromium with motion on: a chain that turns a
corner, takes a new row or a smaller tile moves its tiles to their new places, and no two tiles
overlap on any frame on the way (at rest they never did)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browserkit import PHONE, PLAYABLE, PageWatch, sit_and_start
from tests.serverkit import ServerProcess
from tests.test_browser_layout import LONGEST

# The chain of `LONGEST` grown as a round grows it, one tile a move at either end of its opening
# tile (LONGEST[14]), from the opening alone to all 28; after each move, every frame until the
# board is at rest (no animation in it, two frames at least, 120 at most) the tiles' boxes are
# read in a requestAnimationFrame callback (the frame as it is painted): the worst overlap of two
# tiles in px (the smaller of its width and height), with the move and the frame, and the number of
# frames read. A move whose chain the page replaced meanwhile (a state or a presence drew the real
# chain) is drawn again.
GROW = """async (longest) => {
    const board = window.__domeng.screen.chain;
    const frame = () => new Promise((done) => requestAnimationFrame(() => done()));
    const overlap = () => {
        const boxes = [...board.el.querySelectorAll('.chain-tile')].map((el) => el.getBoundingClientRect());
        let worst = 0;
        for (let i = 0; i < boxes.length; i += 1) {
            for (let j = i + 1; j < boxes.length; j += 1) {
                const a = boxes[i], b = boxes[j];
                const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
                const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
                worst = Math.max(worst, Math.min(w, h));
            }
        }
        return worst;
    };
    const moving = () => board.el.getAnimations({subtree: true}).some((a) => a.playState === 'running');
    let worst = {px: 0}, frames = 0, lo = 14, hi = 15;
    while (hi - lo < longest.length) {
        if ((hi - lo) % 2 === 1 && hi < longest.length) hi += 1; else if (lo > 0) lo -= 1; else hi += 1;
        for (let attempt = 0; attempt < 10; attempt += 1) {
            const chain = longest.slice(lo, hi);
            board.update(chain, null, null, 14 - lo);
            let seen = {px: 0};
            for (let i = 0; i < 120; i += 1) {
                await frame();
                frames += 1;
                const px = overlap();
                if (px > seen.px) seen = {px, tiles: hi - lo, frame: i};
                if (i >= 1 && !moving()) break;
            }
            if (board.chain !== chain) continue;
            if (seen.px > worst.px) worst = seen;
            break;
        }
    }
    return {worst, frames};
}"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("browser-chain-refit")).start()
    yield process
    process.stop()


@pytest.mark.parametrize(
    "viewport",
    [PHONE, {"width": 1280, "height": 800}, {"width": 740, "height": 360}],
    ids=["390x844", "1280x800", "740x360"],
)
def test_no_two_tiles_overlap_on_any_frame_while_the_chain_is_re_laid(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    """Found by a tester: after a move that made the chain turn a corner (or take a smaller tile),
    its tiles slid over one another for a moment before they came to rest where they belong. Grown
    tile by tile to all 28, no two tiles overlap by more than a pixel on any frame, with motion on."""
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context = browser.new_context(viewport=viewport, locale="en-US", reduced_motion="no-preference")
    try:
        page = context.new_page()
        page.set_default_timeout(90_000)
        watch = PageWatch()
        watch.attach(page)
        sit_and_start(page, server, room, token)
        page.wait_for_selector(PLAYABLE)  # the room waits on this page's first move: nothing comes
        grown = page.evaluate(GROW, LONGEST)
        assert grown["frames"] > 2 * len(LONGEST), grown  # frames were read while tiles moved
        assert grown["worst"]["px"] <= 1, grown
        watch.assert_clean()
    finally:
        context.close()
