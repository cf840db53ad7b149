"""After a match, in Chromium: a friend is never trapped (issue: the host left after the match),
Play again is on the table itself, and the round-end panel stays open while it is being read.

- Budi plays a short Domeng match with three bots while the host watches from another tab; the
  host closes the tab; Budi's final panel "Back to the table" leaves him at the table with Play
  again and New table on it; Play again puts him in match 2's waiting room, which says the host is
  away and, past the host's grace, gives him the Start button: match 2 starts.
- A spectator rests the mouse on the round-end panel (and scrolls it): the next round is dealt and
  the panel stays, saying the round has started; the mouse leaves and the panel goes by itself.
- A spectator's page loaded on a phone (the feed a closed drawer) and then widened: the feed
  follows new moves, keeps still while the reader has scrolled up, follows again once they are back
  at its end, and keeps following when the list gets shorter between the page's scroll to a new
  line and the report of that scroll (a frame later; the window's height settling after its width
  did that, about one run in three): the page's own scroll never counts as the reader's.
- On a phone (a touch screen, no hover: a new user's report), the round-end panel stays past the
  next deal for its reading time (static/js/roundend.js ``readingTime``) and then goes by itself;
  touched, it is the reader's until they close it, past that time and their own turn, which it
  says; closed, the turn is theirs to play, and the bar's "Round results" opens it again. With a
  turn timer, the panel (untouched, or touched) gives way the moment the player's timed turn
  comes in the next round: their timer is in view, nothing over it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.adminkit import SECRET, close_live_rooms
from tests.browserkit import (
    DESKTOP,
    PANEL,
    PHONE,
    PageWatch,
    PlaywrightTimeoutError,
    catalog_of,
    describe,
    goto,
    open_as_host,
    open_page,
    open_seated,
    play_turn,
    play_until,
    screenshot,
    sit_and_start,
    version_of,
    wait_for_version,
)
from tests.serverkit import ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path_factory.mktemp("browser-host-away"),
        env={
            "DOMENG_ADMIN_TOKEN": SECRET,
            "DOMENG_BOT_DELAY_S": "0.1",
            "DOMENG_ROUND_PAUSE_S": "3",
            "DOMENG_DISCONNECT_GRACE_S": "2",
        },
    ).start()
    yield process
    process.stop()


@pytest.fixture(autouse=True)
def _tables_closed_after_each_test(server: ServerProcess) -> Iterator[None]:
    yield
    close_live_rooms(server)


def _match_over(page: Any) -> bool:
    return bool(page.evaluate("() => !!window.__domeng?.view?.match_over"))


_FEED_AFTER = """(version) => { const l = document.querySelector('.feed-list');
    return window.__domeng.version >= version && l.scrollHeight > l.clientHeight + 60
      && l.scrollHeight - l.scrollTop - l.clientHeight < 40; }"""
"""Whether the page has reached ``version``, the feed is longer than its panel, and its end is in
view (less than 40 px below what the list shows)."""

_READER_SCROLLS = """async (toEnd) => { const l = document.querySelector('.feed-list');
    const to = toEnd ? l.scrollHeight - l.clientHeight : 0;
    l.scrollTop = to;
    await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
    return l.scrollTop === to; }"""
"""The reader scrolls the feed to its top (or its end); true when the page has heard that scroll
(two frames later) with no move in between putting the list elsewhere."""


def _widen(page: Any) -> None:
    """Give the page the desktop's window and wait until it has it (width and height)."""
    page.set_viewport_size(DESKTOP)
    page.wait_for_function(
        "([w, h]) => innerWidth === w && innerHeight === h", arg=[DESKTOP["width"], DESKTOP["height"]]
    )


def _widened_spectator(server: ServerProcess, browser: Any) -> tuple[Any, Any, PageWatch]:
    """A spectator of a bots' match that plays on (no camat target: moves keep coming), its page
    loaded on a phone (the feed a closed drawer), reloaded, then widened to the desktop's window."""
    bots = ["easy", "greedy", "random", "easy", "greedy"]
    room = server.create_room(bots=bots, options={"camat_target": 0})
    assert server.start_match(room["code"], room["host_token"]).status_code == 200
    context, page, watch = open_page(browser, PHONE)
    goto(page, f"{server.url}/r/{room['code']}")  # a spectator: the turn is never theirs
    page.wait_for_selector(".table-screen")
    page.reload()
    page.wait_for_selector(".table-screen")
    _widen(page)
    return context, page, watch


def _feed_follows(page: Any) -> None:
    """Three more moves, and the feed shows its latest line. The page scrolls to a new line in the
    frame after its state (once for all the states of a frame, before it is drawn), so this looks
    until it is there: moves keep coming, and a list that does not follow falls further back with
    every line and is never there."""
    version = page.evaluate("() => window.__domeng.version")
    try:
        page.wait_for_function(_FEED_AFTER, arg=version + 3, timeout=30_000)
    except PlaywrightTimeoutError:
        left = page.evaluate(
            "() => { const l = document.querySelector('.feed-list');"
            " return l.scrollHeight - l.scrollTop - l.clientHeight; }"
        )
        raise AssertionError(
            f"the feed does not follow the moves: its end is {left} px below the list"
        ) from None


def _reader_scrolls(page: Any, to_end: bool) -> None:
    """Scroll the feed as its reader does (to its top, or back to its end); a move arriving in the
    same frame (the page then puts the list at the end) makes the reader scroll again."""
    for _ in range(20):
        if page.evaluate(_READER_SCROLLS, to_end):
            return
    raise AssertionError("every scroll of the feed met a move in the same frame")


@pytest.mark.parametrize("viewport", [PHONE], ids=["390x844"])
def test_a_friend_plays_again_and_starts_when_the_host_has_left(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    words = catalog_of("en")
    room = server.create_room(bots=[None, "easy", "greedy", "random", "easy"], options={"camat_target": 1})
    code = room["code"]
    token = server.claim(code, 0, "Budi").json()["token"]
    host_ctx, host_page, host_watch = open_page(browser, DESKTOP)
    budi_ctx, budi, budi_watch = open_page(browser, viewport)
    open_as_host(host_page, server, room)  # the host watches, holding no seat
    open_seated(budi, server, room, token)
    host_page.click(".start-box .btn-gold")
    budi.wait_for_selector(".table-screen")

    deadline = time.monotonic() + 600
    while True:
        seen = version_of(budi)  # before looking: a state that comes meanwhile ends the wait below
        if _match_over(budi):
            break
        assert time.monotonic() < deadline, describe(budi)
        if budi.locator(PANEL).count():
            budi.locator(f"{PANEL} .panel-foot .btn-gold").click()  # a round's panel: back to the table
        elif not play_turn(budi):
            wait_for_version(budi, seen)
    host_watch.assert_clean()
    host_ctx.close()  # the host leaves after the match

    # the final panel's "Back to the table": the table itself offers Play again and New table
    if not budi.locator(PANEL).count():  # closed by the loop as the match ended: open it again
        budi.evaluate("() => window.__domeng.openRoundEnd()")
    budi.wait_for_selector(f"{PANEL} .play-again")
    budi.click(f"{PANEL} .panel-foot .btn-gold")
    budi.wait_for_selector(PANEL, state="detached")
    budi.wait_for_selector(".over-actions .play-again")
    assert budi.text_content(".over-actions .play-again") == words["panel.play_again"]
    assert budi.locator(".over-actions a.new-table[href='/']").count() == 1
    assert budi.locator(".over-actions").bounding_box()["width"] <= viewport["width"]
    # the phone shows how the match ended whole, and nothing is wider than the screen
    assert budi.evaluate(
        "() => { const t = document.querySelector('.ticker'); return t.scrollHeight <= t.clientHeight; }"
    )
    wide = budi.evaluate(
        """() => [...document.querySelectorAll('body *')]
                 .filter((e) => e.getBoundingClientRect().right > innerWidth + 0.5)
                 .map((e) => e.className + ' ' + e.getBoundingClientRect().right).slice(0, 5)"""
    )
    assert budi.evaluate("() => document.documentElement.scrollWidth") <= viewport["width"], wide
    screenshot(budi, "host-away-table-over-390")
    budi.click(".over-actions .play-again")

    # match 2's waiting room: the host is away, and past their grace Budi may start
    budi.wait_for_selector(".again-box")
    budi.wait_for_selector(".start-box .start-match")
    assert budi.text_content(".deputy-hint") == words["waiting.deputy_you"]
    assert budi.locator(".open-toggle").count() == 0 and budi.locator(".seat-select").count() == 0
    budi.check("#opt-hints")  # the next match's options have "Allow hints", as the lobby's form
    budi.wait_for_function("() => window.__domeng.room.hints === true")
    screenshot(budi, "host-away-deputy-390")
    budi.click(".start-box .start-match")
    budi.wait_for_selector(".table-screen")
    assert budi.evaluate("() => window.__domeng.room.match") == 2
    budi_watch.assert_clean()
    budi_ctx.close()


def test_the_round_end_panel_stays_open_while_it_is_read(server: ServerProcess, browser: Any) -> None:
    context, page, watch = _widened_spectator(server, browser)
    _feed_follows(page)  # the feed follows new moves (more in test_the_feed_follows_moves_...)
    # reading: scrolling the panel, the mouse resting on it. On a loaded machine the next round may
    # be dealt (closing an unread panel) before the mouse gets there: then read the next one.
    for _ in range(6):
        page.wait_for_selector(PANEL)
        ended = page.evaluate("() => window.__domeng.roundEnd?.round ?? null")
        box = page.locator(f"{PANEL} .panel-body").bounding_box()
        if box is None:
            continue
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + min(box["height"] / 2, 80))
        page.mouse.wheel(0, 120)
        if page.evaluate(
            "(r) => !!document.querySelector('dialog.round-end[open]')"
            " && window.__domeng.roundEnd?.round === r",
            ended,
        ):
            break
        page.mouse.move(2, 2)
    else:
        raise AssertionError("no round-end panel could be read before its next round was dealt")
    # the next round is dealt and the panel is still open, saying so (one look: bots play fast)
    page.wait_for_function(
        """(text) => { const c = window.__domeng;
                       const note = document.querySelector('dialog.round-end[open] .panel-note');
                       return c.view.round > c.roundEnd.round && note?.textContent === text; }""",
        arg=catalog_of("en")["panel.next_started"],
    )
    page.mouse.move(2, 2)  # done reading: the mouse leaves the panel, and it goes by itself
    page.wait_for_function(
        "() => !document.querySelector('dialog.round-end[open]') && !window.__domeng.panel"
    )
    watch.assert_clean()
    context.close()


def test_the_feed_follows_moves_unless_the_reader_scrolled_up(server: ServerProcess, browser: Any) -> None:
    context, page, watch = _widened_spectator(server, browser)
    _feed_follows(page)

    # the reader scrolls up to read: new moves leave the list where they put it
    _reader_scrolls(page, to_end=False)
    version = page.evaluate("() => window.__domeng.version")
    page.wait_for_function("(v) => window.__domeng.version >= v", arg=version + 3)
    assert page.evaluate("() => document.querySelector('.feed-list').scrollTop") == 0
    # back at its end, the feed follows again
    _reader_scrolls(page, to_end=True)
    _feed_follows(page)

    # the list gets shorter (a long chat line arrives) after the page scrolled to a new line and
    # before that scroll is reported (the listener here hears it first): the page's own scroll,
    # reported late, must not count as the reader's; the feed keeps following
    shorter = page.evaluate(
        """() => new Promise((done) => { const l = document.querySelector('.feed-list');
             const seen = new MutationObserver(() => {  // after the task that added the line and scrolled
               seen.disconnect();
               const first = (event) => {
                 if (event.target !== l) return;
                 document.removeEventListener('scroll', first, true);
                 const before = l.clientHeight;
                 window.__domeng.onChat({type: 'chat', line: {seat: null, name: '', reaction: null,
                                                                text: 'good game, well played '.repeat(8)}});
                 done(before - l.clientHeight);
               };
               document.addEventListener('scroll', first, true);  // capture: before the page's listener
             });
             seen.observe(l, {childList: true}); })"""
    )
    assert shorter >= 40, shorter
    _feed_follows(page)
    watch.assert_clean()
    context.close()


def test_a_check_box_sits_beside_its_label_in_the_lobby(server: ServerProcess, browser: Any) -> None:
    context, page, watch = open_page(browser, DESKTOP)
    goto(page, f"{server.url}/")
    box = page.locator("#allow-hints").bounding_box()
    text = page.locator("label:has(#allow-hints) span").bounding_box()
    assert abs((box["y"] + box["height"] / 2) - (text["y"] + text["height"] / 2)) < 4, (box, text)
    assert text["x"] > box["x"] + box["width"]  # beside it, not under it
    watch.assert_clean()
    context.close()


_SCROLL_AS_A_MOVE_LANDS = """async () => { const l = document.querySelector('.feed-list');
    l.scrollTop = l.scrollHeight - l.clientHeight;
    const line = document.createElement('li');
    line.style.height = '80px';
    l.append(line);
    await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
    line.remove();
    return window.__domeng.screen.feedFollow; }"""
"""The reader scrolls the feed to its end, and before the page hears that scroll the list grows by
80 px (two lines), as when a move (a new round's heading and first line) lands in that frame;
whether the feed follows again."""


def test_a_scroll_to_the_end_follows_though_a_move_lands_before_the_page_hears_it(
    server: ServerProcess, browser: Any
) -> None:
    context, page, watch = _widened_spectator(server, browser)
    _feed_follows(page)
    _reader_scrolls(page, to_end=False)
    assert page.evaluate("() => window.__domeng.screen.feedFollow") is False
    assert page.evaluate(_SCROLL_AS_A_MOVE_LANDS) is True
    _feed_follows(page)
    watch.assert_clean()
    context.close()


def _phone(browser: Any) -> tuple[Any, Any]:
    """A phone's context (a touch screen, no hover) and page."""
    context = browser.new_context(
        viewport=PHONE, locale="en-US", reduced_motion="reduce", has_touch=True, is_mobile=True
    )
    page = context.new_page()
    page.set_default_timeout(90_000)
    return context, page


_DEALT_BEHIND = """() => { const c = window.__domeng;
    return !!c.view && !!c.roundEnd && c.view.round > c.roundEnd.round; }"""
"""Whether the round after the panel's is dealt."""

_PANEL_NOTE = "() => document.querySelector('dialog.round-end[open] .panel-note')?.textContent ?? null"


def _to_round_end(page: Any) -> int:
    """Play our turns until a round-end panel is open; the round it tells."""
    play_until(page, lambda: page.locator(PANEL).count() > 0, timeout=180)
    return int(page.evaluate("() => window.__domeng.roundEnd.round"))


def test_a_phone_keeps_the_round_end_panel_while_it_is_read(server: ServerProcess, browser: Any) -> None:
    room = server.create_room(
        bots=[None, "greedy", "greedy", "greedy", "greedy"], turn_timer_s=0, options={"camat_target": 0}
    )
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page = _phone(browser)
    try:
        sit_and_start(page, server, room, token)
        assert page.evaluate("() => matchMedia('(any-hover: hover)').matches") is False

        # untouched: the next round is dealt behind it, and it stays (on the old page it went then)
        ended = _to_round_end(page)
        page.wait_for_function(_DEALT_BEHIND)
        assert page.locator(PANEL).count() == 1, "the panel went at the next deal, unread"
        assert page.evaluate("() => window.__domeng.roundEnd.round") == ended
        assert page.evaluate(_PANEL_NOTE) in (
            catalog_of("en")["panel.next_started"],
            catalog_of("en")["panel.next_your_turn"],
        )
        # ... until it has been open its reading time: then it goes by itself
        page.wait_for_selector(PANEL, state="detached")

        # touched: it is the reader's until they close it, past its reading time and their turn
        ended = _to_round_end(page)
        page.locator(f"{PANEL} .panel-head h2").tap()
        page.wait_for_function(_DEALT_BEHIND)
        until = page.evaluate("() => window.__domeng.panel.readUntil()")
        page.wait_for_function("(t) => performance.now() > t + 1500", arg=until)
        page.wait_for_function(f"() => ({_PANEL_NOTE})() === {catalog_of('en')['panel.next_your_turn']!r}")
        assert (
            page.locator(PANEL).count() == 1
            and page.evaluate("() => window.__domeng.roundEnd.round") == ended
        )
        assert page.locator(f"{PANEL} .panel-note.attention").is_visible()
        screenshot(page, "host-away-panel-your-turn-390x844")
        page.locator(f"{PANEL} .panel-foot .btn-gold").tap()  # Close
        page.wait_for_selector(PANEL, state="detached")
        page.wait_for_selector(".table-screen[data-my-turn='true']")
        screenshot(page, "host-away-round-results-390x844")  # the bar's "Round results" reopens it
        assert page.locator(".last-round-btn").is_visible()
        seen = page.evaluate("() => window.__domeng.version")
        assert play_turn(page, at_version=seen), "the turn could not be played after the panel"
        page.set_viewport_size(DESKTOP)
        page.locator(".last-round-btn").tap()  # the bar's "Round results": the panel again
        page.wait_for_selector(PANEL)
        screenshot(page, "host-away-round-results-1280x800")
    finally:
        context.close()


_NEXT_TIMED_TURN = """() => { const c = window.__domeng;
    return !!(c.roundEnd && c.view.round > c.roundEnd.round && c.myTimerRuns()); }"""
"""The round after the panel's is dealt and this player's turn timer runs (looked at every 20 ms)."""

# Then: whether a round-end panel is open, and what is drawn at the middle of the player's own turn
# timer (its class and whether it is inside the hand's section) and its box.

_TIMED_TURN_AFTER_THE_PANEL = """() => {
    const timer = document.querySelector('.me .turn-timer');
    const r = timer.getBoundingClientRect();
    const at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return {panel: !!document.querySelector('dialog.round-end[open]'), hidden: timer.hidden,
            inMe: !!at?.closest('.me'), box: [r.left, r.top, r.right, r.bottom], h: innerHeight};
}"""

_WHERE_THE_TABLE_IS = """() => { const c = window.__domeng; return {round: c.view?.round,
    ended: c.roundEnd?.round, over: c.view?.match_over, toAct: c.view?.to_act, seat: c.seat,
    covered: c.room?.seats?.[c.seat]?.covered, deadline: c.deadline}; }"""


def test_a_phones_round_end_panel_gives_way_to_the_players_timed_turn(
    server: ServerProcess, browser: Any
) -> None:
    """A phone's panel stays its reading time (up to 45 s) past the next deal, and for good once
    touched; with a turn timer that would hide the player's own timer while it runs out. The
    panel gives way when their timed turn comes, untouched or touched. (A guard: the page has done
    so since the reading time came, room.js ``clearTheHand``.) A Kozel table of two: the player's
    turn comes at once in every round."""
    room = server.create_room(variant="kozel", seats=2, bots=[None, "greedy"], turn_timer_s=30)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page = _phone(browser)
    try:
        sit_and_start(page, server, room, token)
        for touched in (False, True):
            _to_round_end(page)
            if touched:
                page.locator(f"{PANEL} .panel-head h2").tap()
            try:  # the page's own check, in the same task as the look below (the timer may not wait)
                page.wait_for_function(_NEXT_TIMED_TURN, polling=20, timeout=120_000)
            except PlaywrightTimeoutError:
                raise AssertionError(f"no timed turn: {page.evaluate(_WHERE_THE_TABLE_IS)}") from None
            shown = page.evaluate(_TIMED_TURN_AFTER_THE_PANEL)
            assert not shown["panel"], (touched, shown)
            assert not shown["hidden"] and shown["inMe"] and shown["box"][3] <= shown["h"], (touched, shown)
        screenshot(page, "host-away-timed-turn-after-the-panel-390x844")
    finally:
        context.close()
