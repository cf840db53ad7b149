"""The table never traps a player (issue 12), end to end: a real server, Debian's Chromium.

- The round-end panel opens when a round ends and gets out of the way by itself when the next round
  is dealt or the turn is the player's: the test never closes it, and a watcher in the page checks
  on every animation frame that no dialog is open and the hand is reachable (a hit test on a
  playable tile) whenever this player's turn timer runs.
- A timeout costs one turn: the bot's move is marked in the feed and the next turn is the player's
  own, with its timer shown; two in a row and a bot covers the seat until "I'm back".
- A seated player can leave the seat before the start; the host confirms before giving a present
  player's seat to a bot.
- An open feed drawer (a phone's, a tablet's) covers the stones on the move between the plates and
  their "+4": they drew over it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.adminkit import SECRET, close_live_rooms
from tests.browserkit import (
    DESKTOP,
    PANEL,
    PHONE,
    PLAYABLE,
    catalog_of,
    close_panel,
    goto,
    hold_seat,
    open_page,
    play_turn,
    screenshot,
    start_match,
    take_seat,
    version_of,
    wait_for_a_tile_to_place,
    wait_for_version,
)
from tests.serverkit import ServerProcess

CATALOG: dict[str, str] = catalog_of("en")
VIEWPORTS = pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390x844", "1280x800"])

# Installed in every page: on each animation frame, while this player's turn timer runs, no dialog
# may be open and a playable tile's centre must hit that tile (nothing lies over the hand).
WATCH_THE_HAND = """
window.__handWatch = {frames: 0, timed: 0, violations: [],
                      coveredTurns: 0, coveredStatus: [], coveredTimer: 0};
// A covered turn (a bot covers the seat and it is its turn): what does the player read? Looked at
// after every change of the status line too, not only on frames (a loaded renderer skips frames,
// and a covering bot's turn lasts as long as its short pause).
const lookCovered = () => {
  const c = window.__domeng, w = window.__handWatch;
  const turn = c && c.room && c.room.turn;
  const covered = c && c.seat !== null && turn && turn.seat === c.seat && c.room.seats[c.seat].covered &&
    c.view && c.view.phase === 'playing';
  if (!covered) return;
  w.coveredTurns += 1;
  const text = document.querySelector('.me .status').textContent;
  if (!w.coveredStatus.includes(text)) w.coveredStatus.push(text);
  if (!document.querySelector('.me .turn-timer').hidden) w.coveredTimer += 1;
};
let observed = null;
const look = () => {
  const c = window.__domeng, w = window.__handWatch;
  w.frames += 1;
  const turn = c && c.room && c.room.turn;
  const mine = c && c.seat !== null && turn && turn.seat === c.seat && turn.deadline_ms &&
    c.view && c.view.phase === 'playing' && !(c.screen && c.screen.pending);
  const status = document.querySelector('.me .status');
  if (status && status !== observed) {  // the table's status line (a new one if the table is built again)
    observed = status;
    new MutationObserver(lookCovered).observe(status, {childList: true, characterData: true, subtree: true});
  }
  lookCovered();
  if (mine) {
    w.timed += 1;
    const open = document.querySelector('dialog[open]');
    if (open) w.violations.push('a dialog is open during the turn timer: ' + open.className);
    const tile = document.querySelector('.hand-tile.playable');
    if (tile) {
      const r = tile.getBoundingClientRect();
      const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
      if (!hit || !tile.contains(hit)) {
        w.violations.push('the hand is covered by ' + (hit ? hit.className || hit.tagName : 'nothing'));
      }
    }
  }
  requestAnimationFrame(look);
};
requestAnimationFrame(look);
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path_factory.mktemp("browser-table"),
        env={
            "DOMENG_BOT_DELAY_S": "0.05",
            "DOMENG_ROUND_PAUSE_S": "1.5",
            "DOMENG_DISCONNECT_GRACE_S": "60",
            "DOMENG_ADMIN_TOKEN": SECRET,  # to close each test's tables (close_live_rooms)
        },
    ).start()
    yield process
    process.stop()


@pytest.fixture(autouse=True)
def _tables_closed_after_each_test(server: ServerProcess) -> Iterator[None]:
    """A table left behind has a bot covering Ana and no camat target: it would play on at bot
    speed for the rest of the module, taking the CPU the next test's timers run on."""
    yield
    close_live_rooms(server)


def _seated_page(
    browser: Any, server: ServerProcess, viewport: dict[str, int], timer_s: float, camat_target: int = 0
) -> Any:
    """Ana at seat 0 of a new Domeng table with four bots and a ``timer_s`` turn timer, started
    (by default with no camat target: the match does not end while a covering bot plays at bot
    speed)."""
    room = server.create_room(
        bots=[None, "greedy", "greedy", "greedy", "greedy"],
        turn_timer_s=timer_s,
        options={"camat_target": camat_target},
    )
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, viewport)
    page.add_init_script(WATCH_THE_HAND)
    goto(page, f"{server.url}/r/{room['code']}")
    hold_seat(page, room["code"], token, 0)
    assert server.start_match(room["code"], room["host_token"]).status_code == 200
    page.reload()
    page.wait_for_selector(".table-screen")
    return context, page, watch, room


def _hand_watch(page: Any) -> dict[str, Any]:
    result: dict[str, Any] = page.evaluate("() => window.__handWatch")
    return result


@VIEWPORTS
def test_the_round_end_panel_folds_away_for_the_next_round_and_never_covers_a_timed_turn(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    context, page, watch, _ = _seated_page(browser, server, viewport, timer_s=120)
    panels_seen: set[int] = set()
    folded: set[int] = set()
    name = f"{viewport['width']}x{viewport['height']}"
    for _ in range(3000):
        seen = version_of(page)  # before looking: a state that comes meanwhile ends the wait below
        state = page.evaluate(
            "() => { const c = window.__domeng; return {round: c.view && c.view.round,"
            " end: c.roundEnd && c.roundEnd.round, panel: !!c.panel, over: c.view && c.view.match_over}; }"
        )
        if state["panel"]:
            if state["end"] not in panels_seen:
                screenshot(page, f"round-end-panel-{name}")
            panels_seen.add(state["end"])
        elif state["end"] in panels_seen and state["round"] > state["end"]:
            folded.add(state["end"])  # the next round came and the panel went by itself
        if len(folded) >= 2 or state["over"]:
            break
        if page.locator(PLAYABLE).count() and not page.locator(PANEL).count():
            if page.locator(".feed-toggle").is_visible() and not folded:
                page.locator(".feed-toggle").click()  # the feed drawer is open when the turn comes
            play_turn(page)
        else:
            wait_for_version(page, seen)
    assert len(folded) >= 2 or page.evaluate("() => window.__domeng.view.match_over"), (panels_seen, folded)
    # the player never closed a panel: finishing a round cost no click
    seen = _hand_watch(page)
    assert seen["timed"] > 0 and seen["violations"] == [], seen["violations"][:5]
    # on one's own turn the last round's panel cannot be opened over the hand
    page.wait_for_selector(PLAYABLE)
    assert page.evaluate("() => window.__domeng.screen.lastRoundBtn.disabled") is True
    screenshot(page, f"hand-reachable-{name}")
    watch.assert_clean()
    context.close()


def test_without_a_turn_timer_the_last_round_opens_on_ones_own_turn_and_stays(
    server: ServerProcess, browser: Any
) -> None:
    """Nothing hurries an untimed turn, so the last round's panel (its review, its fair-deal check)
    may be read on it: "Last round" opens it, it says the turn is the player's, and it stays
    until they close it; then the hand is theirs again."""
    context, page, watch, _ = _seated_page(browser, server, DESKTOP, timer_s=0)
    state_js = """() => { const c = window.__domeng; return {round: c.view && c.view.round,
        end: c.roundEnd && c.roundEnd.round, mine: !!c.screen?.isMyTurn?.(), panel: !!c.panel}; }"""
    for _ in range(3000):  # to Ana's turn in a round after one that ended
        seen = version_of(page)
        state = page.evaluate(state_js)
        later = state["end"] is not None and state["round"] > state["end"]
        if later and state["mine"] and not state["panel"] and page.locator(PLAYABLE).count():
            break
        if state["panel"]:
            close_panel(page)
        elif page.locator(PLAYABLE).count():
            play_turn(page)
        else:
            wait_for_version(page, seen)
    button = page.locator(".last-round-btn")
    assert button.is_enabled() and page.locator(PLAYABLE).count() > 0
    button.click()
    page.wait_for_selector(PANEL)
    note = catalog_of("en")["panel.next_your_turn"]
    page.wait_for_selector(f"{PANEL} >> text={note}")
    # an update meanwhile (the server's presence, the page's own second look) leaves it open
    page.evaluate("() => window.__domeng.clearTheHand()")
    assert page.locator(PANEL).count() == 1
    close_panel(page)
    assert page.locator(PLAYABLE).count() > 0 and page.evaluate("() => window.__domeng.screen.isMyTurn()")
    watch.assert_clean()
    context.close()


@VIEWPORTS
def test_a_timeout_costs_one_turn_then_two_in_a_row_cover_the_seat_until_im_back(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    context, page, watch, room = _seated_page(browser, server, viewport, timer_s=8)
    name = f"{viewport['width']}x{viewport['height']}"
    # Ana lets her timer run out: the page showed her deadline, then a bot plays that turn
    page.wait_for_function(
        "() => window.__domeng.seat === 0 && window.__domeng.deadline !== null"
        " && window.__domeng.room.turn.seat === 0",
        timeout=60_000,
    )
    page.locator(".me .turn-timer").wait_for(state="visible")
    page.wait_for_selector(".feed-line.feed-by-bot", state="attached", timeout=60_000)
    assert page.evaluate("() => window.__domeng.room.seats[0].covered") is False
    # the next turn is hers again, with its timer; she plays it herself
    page.wait_for_function(
        "() => { const c = window.__domeng; return c.room.turn && c.room.turn.seat === 0 && c.deadline"
        " && document.querySelector('.hand-tile.playable'); }",
        timeout=60_000,
    )
    page.locator(".me .turn-timer").wait_for(state="visible")
    assert page.locator(".cover-note").is_hidden()
    assert play_turn(page)
    # now two timeouts in a row: a bot covers the seat, and says so, until "I'm back"
    page.wait_for_selector(".cover-note[data-kind='covered'] .btn", timeout=90_000)
    screenshot(page, f"covered-{name}")
    assert server.room(room["code"])["seats"][0]["covered"] is True
    # her turns while covered say that the bot plays them unless she does, with no countdown
    page.wait_for_function(
        "(text) => window.__handWatch.coveredStatus.includes(text)",
        arg=CATALOG["table.covered_turn"],
        timeout=60_000,
        polling=100,
    )
    seen = _hand_watch(page)
    # (a turn where nothing fits is passed by the server, and says so)
    assert set(seen["coveredStatus"]) <= {CATALOG["table.covered_turn"], CATALOG["table.must_pass"]}, seen
    assert seen["coveredTimer"] == 0
    page.locator(".cover-note .btn").click()
    # uncovered lasts only until two more timeouts: poll on a timer, not on animation frames,
    # which a loaded renderer may hold back for that long
    page.wait_for_function("() => !window.__domeng.room.seats[0].covered", timeout=60_000, polling=100)
    assert page.locator(".cover-note").is_hidden()
    # her next turn has a deadline the page knows
    page.wait_for_function(
        "() => { const c = window.__domeng; return c.room.turn && c.room.turn.seat === 0 && c.deadline; }",
        timeout=60_000,
    )
    seen = _hand_watch(page)
    assert seen["violations"] == [], seen["violations"][:5]
    watch.assert_clean()
    context.close()


@VIEWPORTS
def test_a_player_leaves_the_seat_and_the_host_confirms_giving_a_present_players_seat_to_a_bot(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    room = server.create_room(bots=[None, None, "greedy", "greedy", "greedy"], turn_timer_s=0)
    code = room["code"]
    context, guest, guest_watch = open_page(browser, viewport)
    goto(guest, f"{server.url}/r/{code}")
    take_seat(guest, 1, "Budi")
    guest.locator(".seat-row.mine .leave").click()  # Budi changes his mind
    guest.wait_for_selector(".sit[data-seat='1']")
    assert server.room(code)["seats"][1]["kind"] == "empty"
    assert guest.evaluate("() => window.__domeng.seat") is None
    take_seat(guest, 1, "Budi")  # and sits down again
    # the host, at the same table, is asked before Budi's seat goes to a bot (a page without
    # PageWatch, which would dismiss every dialog itself)
    host_context = browser.new_context(viewport=viewport, reduced_motion="reduce")
    host = host_context.new_page()
    errors: list[str] = []
    host.on("pageerror", lambda exc: errors.append(str(exc)))
    goto(host, f"{server.url}/r/{code}")
    host.evaluate(
        "([key, memory]) => localStorage.setItem(key, memory)",
        [f"domeng:room:{code}", f'{{"host_token": "{room["host_token"]}"}}'],
    )
    host.reload()
    host.wait_for_selector(".seat-list")
    select = host.locator(".seat-select[data-seat='1']")
    select.wait_for()
    asked: list[str] = []

    def answer(dialog: Any) -> None:
        asked.append(dialog.message)
        dialog.dismiss() if len(asked) == 1 else dialog.accept()

    host.on("dialog", answer)
    select.select_option("easy")  # dismissed: Budi keeps his seat
    host.wait_for_function("() => document.querySelector(\".seat-select[data-seat='1']\").value === 'person'")
    assert server.room(code)["seats"][1]["kind"] == "human"
    select.select_option("easy")  # accepted: the bot takes it
    host.wait_for_function("() => window.__domeng.room.seats[1].kind === 'bot'")
    assert len(asked) == 2 and all("Budi" in message for message in asked)
    # Budi's page says the host gave his seat to a bot (4007) and offers to watch, never "Play here"
    guest.locator(".watch-table").click()
    guest.wait_for_function("() => window.__domeng.seat === null")
    start_match(host)
    assert errors == []
    guest_watch.assert_clean()
    host_context.close()
    context.close()


def test_the_bot_is_playing_for_you_banner_goes_when_the_match_is_over(
    server: ServerProcess, browser: Any
) -> None:
    context, page, watch, room = _seated_page(browser, server, PHONE, timer_s=5, camat_target=1)
    page.wait_for_selector(".cover-note[data-kind='covered']", timeout=120_000)  # two timeouts
    # the covering bot plays on at bot speed to the end of the match
    page.wait_for_function("() => window.__domeng.view.match_over", timeout=300_000)
    page.wait_for_selector(PANEL)  # the final standings stay open: no timer runs any more
    assert page.locator(".cover-note").is_hidden()
    assert page.evaluate("() => window.__domeng.room.seats[0].covered") is False
    assert server.room(room["code"])["seats"][0]["covered"] is False
    screenshot(page, "match-over-after-covering-390x844")
    watch.assert_clean()
    context.close()


# The table's own animation of a settlement (static/js/table.js ``animate``: stones fly from the pile
# and a payer's plate to the receiver's, then "+n" rises there), for a receiver whose plate lies under
# the open drawer. Each flying stone is stopped at points along its flight and, where its centre is
# over the drawer, hit-tested there (made hittable for the look: the layer lets clicks through); then
# the "+n" the same way. Hit testing follows the order things are painted in.
_STONES_UNDER_DRAWER_JS = """async () => {
    const c = window.__domeng, feed = document.querySelector('.table-screen.feed-open .feed');
    const f = feed.getBoundingClientRect();
    const over = (x, y) => x > f.left + 4 && x < f.right - 4 && y > f.top + 4 && y < f.bottom - 4;
    const centre = (e) => {
        const r = e.getBoundingClientRect();
        return [(r.left + r.right) / 2, (r.top + r.bottom) / 2];
    };
    const plates = [...document.querySelectorAll('.plate:not(.plate-me) .plate-stones')];
    const seats = plates.filter((e) => over(...centre(e))).map((e) => Number(e.dataset.seatStones));
    if (seats.length < 1) return {seats};
    // to a plate under the drawer, from another one (under it too where there is one: a phone)
    const receiver = seats[0];
    const payer = seats[1] ?? plates.map((e) => Number(e.dataset.seatStones)).find((s) => s !== receiver);
    const covered = (e) => {
        const [x, y] = centre(e);
        if (!over(x, y)) return null;
        e.style.pointerEvents = 'auto';
        const hit = document.elementFromPoint(x, y);
        e.style.pointerEvents = '';
        if (feed.contains(hit)) return 'drawer';
        return hit.closest('.flights') ? 'stone' : hit.className.baseVal ?? hit.className;
    };
    // the events before this turn are shown once the page stopped reducing motion: a draw's "+1"
    // or a pass's own settlement ("+1": one pass) may still be rising when this starts, or start
    // while it runs (a settlement's burst comes 0.7 s after its stones), so this settlement's
    // burst is the new "+4"
    const earlier = new Set(document.querySelectorAll('.flights .burst'));
    const fresh = () => [...document.querySelectorAll('.flights .burst')]
        .find((b) => !earlier.has(b) && !b.dataset.n && b.textContent === '+4');
    c.screen.animate([{type: 'passed', seat: payer,
                       settlement: {receiver, from_table: 2, from_payers: [[payer, 2]], received: 4}}]);
    const looks = [];
    for (const stone of document.querySelectorAll('.flights .stone.flying')) {
        const flight = stone.getAnimations()[0];
        flight.pause();
        const start = flight.effect.getTiming().delay;
        for (let t = start; t <= start + 750; t += 25) {
            flight.currentTime = t;
            const seen = covered(stone);
            if (seen) looks.push(seen);
        }
        flight.finish();
    }
    await new Promise((done) => {
        const look = () => fresh() ? done() : requestAnimationFrame(look);
        look();
    });
    const burst = fresh();
    return {seats, looks, burst: {text: burst.textContent, seen: covered(burst)}};
}"""


@pytest.mark.parametrize(
    "viewport",
    [PHONE, {"width": 360, "height": 740}, {"width": 800, "height": 1000}],
    ids=["390", "360", "800"],
)
def test_an_open_feed_drawer_covers_the_stones_on_the_move(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    """The stones a settlement moves between the plates (and its "+4") were drawn over the open
    drawer of a phone or a tablet: it covers them now, wherever they fly under it."""
    context, page, watch, _room = _seated_page(browser, server, viewport, timer_s=0)
    page.emulate_media(reduced_motion="no-preference")  # the stones fly only then
    wait_for_a_tile_to_place(page)  # no timer: the table waits on us
    page.click(".feed-toggle")
    page.wait_for_selector(".table-screen.feed-open .feed")
    shown = page.evaluate(_STONES_UNDER_DRAWER_JS)
    screenshot(page, f"stones-under-drawer-{viewport['width']}")
    assert len(shown["seats"]) >= (2 if viewport["width"] < 760 else 1), shown  # plates under the drawer
    assert shown["looks"] and set(shown["looks"]) == {"drawer"}, shown
    assert shown["burst"] == {"text": "+4", "seen": "drawer"}, shown
    watch.assert_clean()
    context.close()
