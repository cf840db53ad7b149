"""Kozel in the browser: the lobby creates Kozel tables (2-4 seats, two lempas, pairs), one person
plays a round with bots to its end while the client draws for them, and the round-end panel and the
score sheet show exactly the server's points; the table never shows a bazaar tile."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator
from typing import Any

import pytest

from engine.variants import make_rules
from engine.views import player_view
from tests.browserkit import (
    DESKTOP,
    PANEL,
    PHONE,
    PlaywrightTimeoutError,
    catalog_of,
    close_panel,
    goto,
    held,
    languages,
    open_page,
    open_seated,
    play_until,
    round_ended,
    screenshot,
    sit_and_start,
    start_match,
    switch_language,
    take_seat,
    text_of,
    wait_for_a_tile_to_place,
)
from tests.serverkit import Client, ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    # a round-end panel stays until the next deal (then it folds away by itself): 5 s to read it
    process = ServerProcess(
        tmp_path_factory.mktemp("browser-kozel"),
        env={"DOMENG_BOT_DELAY_S": "0.05", "DOMENG_ROUND_PAUSE_S": "5", "DOMENG_DISCONNECT_GRACE_S": "30"},
    ).start()
    yield process
    process.stop()


def create_kozel_room(page: Any, base: str, seats: int, choices: list[str], pairs: bool = False) -> str:
    """Fill the lobby for Kozel with ``seats`` players and create the room; returns its code."""
    goto(page, f"{base}/")
    page.select_option("#variant", "kozel")
    page.select_option("#kozel-seats", str(seats))
    assert page.locator(".lobby-seats li").count() == seats
    assert page.is_hidden("#camat-target")
    if pairs:
        page.check("#pairs")
    for seat, choice in enumerate(choices):
        page.select_option(f"#seat-{seat}", choice)
    page.fill("#turn-timer", "0")
    page.click("#create-room")
    page.wait_for_url("**/r/**")
    page.wait_for_selector(".seat-list")
    return str(page.url.rstrip("/").rsplit("/", 1)[1])


def test_lobby_offers_kozel_with_its_options(server: ServerProcess, browser: Any) -> None:
    context, page, watch = open_page(browser, PHONE)
    goto(page, f"{server.url}/")
    page.select_option("#variant", "kozel")
    page.select_option("#kozel-seats", "3")
    assert page.is_disabled("#pairs") and page.is_checked("#two-lempas")
    page.select_option("#kozel-seats", "4")
    assert page.is_enabled("#pairs")
    code = create_kozel_room(page, server.url, 4, ["person", "medium", "easy", "hard"], pairs=True)
    room = server.room(code)
    assert (room["variant"], len(room["seats"]), room["options"]) == (
        "kozel",
        4,
        {"two_lempas": True, "pairs": True},
    )
    text = text_of(page)
    assert "Kozel" in text and "101" in text and "⟦" not in text
    watch.assert_clean()
    context.close()


def test_lobby_keeps_the_pairs_tick_through_fewer_players(server: ServerProcess, browser: Any) -> None:
    """Pairs need 4 players (K10): 3 players turn the box off and leave it unticked, and going back to
    4 brings back the player's tick (it was lost silently before); the table made is in pairs."""
    context, page, watch = open_page(browser, PHONE)
    goto(page, f"{server.url}/")
    page.select_option("#variant", "kozel")
    page.check("#pairs")
    page.select_option("#kozel-seats", "3")
    assert page.is_disabled("#pairs") and not page.is_checked("#pairs")
    page.select_option("#kozel-seats", "4")
    assert page.is_enabled("#pairs") and page.is_checked("#pairs")
    # the same through another game and back
    page.select_option("#variant", "domeng")
    page.select_option("#variant", "kozel")
    assert page.is_checked("#pairs")
    # and through the form drawn again in another language while 3 players turn the box off
    page.select_option("#kozel-seats", "3")
    switch_language(page, "ru")
    switch_language(page, "en")
    assert page.is_disabled("#pairs") and not page.is_checked("#pairs")
    page.select_option("#kozel-seats", "4")
    assert page.is_checked("#pairs")
    for seat, choice in enumerate(["person", "easy", "easy", "easy"]):
        page.select_option(f"#seat-{seat}", choice)
    page.fill("#turn-timer", "0")
    page.click("#create-room")
    page.wait_for_url("**/r/**")
    page.wait_for_selector(".seat-list")
    code = str(page.url.rstrip("/").rsplit("/", 1)[1])
    assert server.room(code)["options"] == {"two_lempas": True, "pairs": True}
    watch.assert_clean()
    context.close()


def _truth(spectator: Client, round_no: int) -> dict[str, Any]:
    """The server's view of the end of round ``round_no``, from a spectator socket."""

    def ended(message: dict[str, Any]) -> bool:
        view = message.get("view") if message["type"] == "state" else None
        return (
            bool(view) and view["round"] == round_no and view["phase"] != "playing" and bool(view["outcome"])
        )

    for message in spectator.messages:
        if ended(message):
            return dict(message["view"])
    return dict(spectator.wait_for(ended, timeout=30)["view"])


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_one_person_plays_a_kozel_round_to_the_round_end_panel(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    context, page, watch = open_page(browser, viewport)
    code = create_kozel_room(page, server.url, 3, ["person", "medium", "easy"])
    spectator = Client(server, code)
    take_seat(page, 0, "Anna")
    start_match(page)
    assert page.locator(".plate").count() == 3
    page.wait_for_selector("#table-bazaar")
    shown = page.evaluate(
        "() => [Number(document.querySelector('.bazaar-count').textContent), window.__domeng.view.bazaar]"
    )
    assert shown[0] == shown[1] <= 13

    play_until(page, lambda: round_ended(page), timeout=120)
    # the panel read below is the one asked for from the bar ("Round results"), which stays until
    # closed: the one that opened by itself folds away when the next round is dealt (the round
    # pause, 5 s here), sooner than a busy machine may take to read it
    close_panel(page)
    page.click(".last-round-btn")
    page.wait_for_selector(PANEL)
    state = held(page)
    round_end = state["roundEnd"]
    truth = _truth(spectator, round_end["round"])
    outcome = truth["outcome"]
    assert round_end["view"]["outcome"] == outcome
    # the score sheet after the round: each seat's recorded and pending points, as the server has them
    rows = page.locator(f"{PANEL} .score-sheet .sheet-row").all()
    assert [int(r.get_attribute("data-points") or -1) for r in rows] == outcome["points"]
    assert [int(r.get_attribute("data-pending") or -1) for r in rows] == outcome["pending"]
    # every hand with its value and what it wrote; what was left of the bazaar
    hands = page.locator(f"{PANEL} .reveal-row").all()
    assert [int(r.get_attribute("data-value") or -1) for r in hands] == outcome["hand_values"]
    assert [int(r.get_attribute("data-written") or -1) for r in hands] == outcome["written"]
    assert page.locator(f"{PANEL} .reveal-rest .mini-tile").count() == len(truth["reveal"]["rest"])
    page.wait_for_selector(f"{PANEL} .fair-result[data-ok='true']")
    # the feed told every draw: one line per run of draws, counting them
    draws = sum(1 for e in truth["log"] if e["type"] == "drew")
    told = page.eval_on_selector_all(".feed-drew", "els => els.map(e => Number(e.dataset.draws))")
    assert sum(told) >= draws  # the page's feed also holds earlier rounds' lines
    assert "⟦" not in text_of(page)
    assert page.evaluate("() => document.documentElement.scrollWidth <= innerWidth")
    spectator.close()
    watch.assert_clean()
    context.close()


def test_the_client_draws_by_itself_and_never_shows_a_bazaar_tile(
    server: ServerProcess, browser: Any
) -> None:
    room = server.create_room(variant="kozel", seats=2, bots=[None, "random"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Anna").json()["token"]
    context, page, watch = open_page(browser, DESKTOP)
    sit_and_start(page, server, room, token)

    def drew_myself() -> bool:  # a round can end before seat 0 ever needs to draw: then play on
        view = held(page)["view"]
        return any(e["type"] == "drew" and e["seat"] == 0 for e in view["log"])

    play_until(page, drew_myself, timeout=120)
    view = held(page)["view"]
    mine = [e["tile"] for e in view["log"] if e["type"] == "drew" and e["seat"] == 0]
    theirs = [e["tile"] for e in view["log"] if e["type"] == "drew" and e["seat"] == 1]
    assert all(mine) and not any(theirs)
    assert page.locator(".feed-drew[data-seat='0']").count() >= 1
    # no tile of the bazaar or of the bot's hand is anywhere on the page while the round is played
    # (the view and the page read in one tick: an update between two reads would move both)
    now = page.evaluate(
        """() => ({view: window.__domeng.view,
                   shown: [...document.querySelectorAll('[data-tile]')].map((e) => e.dataset.tile)})"""
    )
    if now["view"]["phase"] == "playing":
        hand = set(now["view"]["hand"]) | set(now["view"]["chain"])
        shown = set(now["shown"])
        assert shown <= {t if int(t[0]) <= int(t[2]) else f"{t[2]}-{t[0]}" for t in hand} | hand
    watch.assert_clean()
    context.close()


def _seated_page(
    server: ServerProcess,
    browser: Any,
    viewport: dict[str, int] = DESKTOP,
    seats: int = 2,
    options: dict[str, object] | None = None,
    variant: str = "kozel",
) -> tuple[Any, Any, Any, dict[str, Any]]:
    """A table of ``seats`` people (Kozel, unless ``variant`` says domeng with its 5; nothing
    moves until someone acts), opened at seat 0."""
    room = server.create_room(
        variant=variant, seats=seats, options=options or {}, bots=[None] * seats, turn_timer_s=0
    )
    token = server.claim(room["code"], 0, "Anna").json()["token"]
    for seat, name in enumerate(["Boris", "Vera", "Gleb", "Dewi"][: seats - 1], start=1):
        server.claim(room["code"], seat, name)
    context, page, watch = open_page(browser, viewport)
    sit_and_start(page, server, room, token)
    # catch what the page sends instead of sending it
    page.evaluate(
        "() => { window.__sent = []; window.__domeng.sendAction = (a) => (window.__sent.push(a), true); }"
    )
    return context, page, watch, room


def _show(page: Any, changes: dict[str, Any]) -> None:
    """Feed the page a state like the last one, with ``changes`` to its view and a new version."""
    page.evaluate(
        """(changes) => {
            const c = window.__domeng;
            const view = {...c.view, ...changes, phase: "playing", to_act: 0};
            c.onState({type: "state", version: c.version + 1, room: c.room, view, events: []});
        }""",
        changes,
    )


# The felt's and the hand's boxes and each hand tile's, once the page has drawn its latest state.
_HAND_AND_FELT = """async () => {
    await new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
    const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
    return {felt: box(document.querySelector('.felt')), hand: box(document.querySelector('.hand')),
            tiles: [...document.querySelectorAll('.hand-tile')].map(box)};
}"""


@pytest.mark.parametrize(
    "viewport", [{"width": 844, "height": 390}, {"width": 740, "height": 360}], ids=["844x390", "740x360"]
)
def test_a_hand_grown_from_the_bazaar_keeps_one_row_on_a_phone_on_its_side(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    """A two-seat Kozel hand that drew from the bazaar (K3) to twelve tiles wrapped past eight to a
    second row on a phone on its side, and the felt fell to 100 px of 360 (seen in stop 38's
    layout test): the tiles shrink and close up to keep one row, the felt its share of the height.
    A hand of seven keeps its tiles' full size."""
    context, page, watch, _ = _seated_page(server, browser, viewport)
    try:
        hand = [f"{a}-{b}" for a in range(7) for b in range(a, 7)][:12]
        sizes: dict[int, float] = {}
        for count in (7, 12):
            _show(page, {"hand": hand[:count], "hand_counts": [count, 7], "legal": []})
            page.wait_for_function(f"() => document.querySelectorAll('.hand-tile').length === {count}")
            drawn = page.evaluate(_HAND_AND_FELT)
            felt, box, tiles = drawn["felt"], drawn["hand"], drawn["tiles"]
            assert len({round(t[1]) for t in tiles}) == 1, (count, tiles)  # one row
            assert all(box[0] <= t[0] and t[2] <= box[2] for t in tiles), (count, box, tiles)
            assert felt[3] - felt[1] > 0.38 * viewport["height"], (count, felt)
            sizes[count] = tiles[0][2] - tiles[0][0]
        hand_w = min(max(30, 0.094 * viewport["height"]), 44)  # --hand-w here: clamp(30px, 9.4vh, 44px)
        assert sizes[12] >= 0.6 * hand_w - 0.5 and sizes[7] >= sizes[12], (sizes, hand_w)
        screenshot(page, f"kozel-long-hand-{viewport['width']}x{viewport['height']}")
        watch.assert_clean()
    finally:
        context.close()


def test_the_two_lempas_move_is_one_button_that_sends_both_tiles(server: ServerProcess, browser: Any) -> None:
    context, page, watch, _ = _seated_page(server, browser)
    legal = [
        {"seat": 0, "play": "3-3", "end": "R"},
        {"seat": 0, "play": "5-5", "end": "L"},
        {"seat": 0, "play": ["5-5", "3-3"]},
    ]
    _show(page, {"hand": ["1-2", "3-3", "5-5"], "chain": ["5-2", "2-3"], "ends": [5, 3], "legal": legal})
    button = page.locator(".lempas-choice .two-lempas")
    button.wait_for()
    assert "5-5" in button.inner_text() and "3-3" in button.inner_text()
    assert page.locator(".hand-tile.playable").count() == 2
    button.click()
    assert page.evaluate("() => window.__sent") == [{"play": ["5-5", "3-3"]}]
    watch.assert_clean()
    context.close()


def test_with_nothing_to_place_the_page_draws_once_per_state(server: ServerProcess, browser: Any) -> None:
    context, page, watch, _ = _seated_page(server, browser)
    _show(
        page,
        {
            "hand": ["1-2"],
            "chain": ["5-6"],
            "ends": [5, 6],
            "legal": [{"seat": 0, "draw": True}],
            "bazaar": 9,
        },
    )
    page.wait_for_function("() => window.__sent.length === 1")
    assert page.evaluate("() => window.__sent") == [{"draw": True}]
    assert "bazaar" in page.locator(".status").inner_text()
    page.wait_for_timeout(700)
    assert page.evaluate("() => window.__sent.length") == 1, "one draw per state, never a second one"
    _show(page, {"hand": ["1-2", "0-0"], "legal": [{"seat": 0, "draw": True}], "bazaar": 8})
    page.wait_for_function("() => window.__sent.length === 2")
    # a pass with an empty bazaar is the server's: the page sends nothing
    _show(page, {"hand": ["1-2", "0-0"], "legal": [{"seat": 0, "pass": True}], "bazaar": 0})
    page.wait_for_timeout(700)
    assert page.evaluate("() => window.__sent.length") == 2
    assert "bazaar is empty" in page.locator(".status").inner_text()
    watch.assert_clean()
    context.close()


_HAND_JS = """() => {
    const hand = document.querySelector('.hand'), box = hand.getBoundingClientRect();
    const tiles = [...hand.querySelectorAll('.hand-tile')];
    const probe = document.createElement('div');  // a tile's full width here (--hand-w, app.css)
    probe.style.width = 'var(--hand-w)';
    document.body.append(probe);
    const full = probe.getBoundingClientRect().width;
    probe.remove();
    return {
        full,
        tops: tiles.map((t) => t.offsetTop),
        widths: tiles.map((t) => t.getBoundingClientRect().width),
        heights: tiles.map((t) => t.getBoundingClientRect().height),
        inside: tiles.every((t) => { const r = t.getBoundingClientRect();
            return r.left >= box.left && r.right <= box.right; }),
        fits: document.documentElement.scrollWidth <= innerWidth,
    };
}"""


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280x800", "390x844"])
def test_a_two_seat_hand_of_seven_tiles_lies_in_one_row(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    """Kozel deals 7 tiles to each of 2 seats: they share one row of the hand (a little smaller than
    a 5-tile hand's, never less than three quarters), and a hand of 5 keeps the tiles' full size."""
    context, page, watch, _ = _seated_page(server, browser, viewport)
    page.wait_for_function("() => document.querySelectorAll('.hand .hand-tile').length === 7")
    dealt = page.evaluate(_HAND_JS)
    screenshot(page, f"kozel-hand-7-{viewport['width']}x{viewport['height']}")
    assert len(set(dealt["tops"])) == 1, dealt
    assert dealt["inside"] and dealt["fits"], dealt
    assert all(0.75 * dealt["full"] - 0.5 <= w <= dealt["full"] + 0.5 for w in dealt["widths"]), dealt
    assert all(abs(h - 2 * w) <= 1 for w, h in zip(dealt["widths"], dealt["heights"], strict=True)), dealt
    hand = ["0-0", "1-2", "2-4", "3-5", "4-6"]
    _show(page, {"hand": hand, "legal": [{"seat": 0, "play": t} for t in hand]})
    page.wait_for_function("() => document.querySelectorAll('.hand .hand-tile').length === 5")
    five = page.evaluate(_HAND_JS)
    assert len(set(five["tops"])) == 1 and all(abs(w - five["full"]) <= 0.5 for w in five["widths"]), five
    watch.assert_clean()
    context.close()


_DRAW_JS = """async (seat) => {
    // seat draws a tile from the bazaar: the badge bumps and "+1" rises on that seat's plate
    const c = window.__domeng;
    const counts = [...c.view.hand_counts];
    counts[seat] += 1;
    const view = {...c.view, hand_counts: counts, bazaar: c.view.bazaar - 1};
    c.onState({type: "state", version: c.version + 1, room: c.room, view, events: [{type: "drew", seat}]});
    const badge = document.querySelector('#table-bazaar');
    const bumps = document.getAnimations().filter((a) => badge.contains(a.effect.target));
    bumps.forEach((a) => a.pause());
    while (!document.querySelector('.burst')) await new Promise(requestAnimationFrame);
    const burst = document.querySelector('.burst');
    const moving = [...bumps, ...burst.getAnimations()];
    moving.forEach((a) => a.pause());
    const box = (el) => el.getBoundingClientRect();
    const meet = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
    const label = document.querySelector('.round-label');
    const count = document.querySelector(`.plate[data-seat='${seat}'] .plate-tiles .count`);
    const found = [];
    for (const f of [0, 0.2, 0.4, 0.6, 0.8, 0.99]) {
        for (const a of moving) a.currentTime = f * a.effect.getComputedTiming().duration;
        const parts = [badge, ...badge.querySelectorAll('*')];
        if (parts.some((el) => meet(box(el), box(label)))) found.push(`bazaar at ${f}`);
        if (meet(box(burst), box(count))) found.push(`+1 at ${f}`);
    }
    moving.forEach((a) => a.finish());
    return {found, bumps: bumps.length, burst: burst.textContent, count: count.textContent};
}"""


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390x844", "1280x800"])
def test_a_draw_covers_neither_the_round_label_nor_the_hand_count(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    """A draw bumps the bazaar badge beside the round label and shows "+1" on the drawing seat's
    plate: at every moment of both animations the label and the plate's tile count stay clear."""
    context, page, watch, _ = _seated_page(server, browser, viewport)
    page.emulate_media(reduced_motion="no-preference")
    shown = page.evaluate(_DRAW_JS, 1)
    assert shown["bumps"] >= 1 and shown["burst"] == "+1", shown
    assert shown["found"] == [], shown
    assert shown["count"] == "×8"
    screenshot(page, f"kozel-draw-{viewport['width']}x{viewport['height']}")
    watch.assert_clean()
    context.close()


_DRAWS_JS = """async ([seat, draws]) => {
    // seat draws ``draws`` tiles in a row from the bazaar, one state each
    const c = window.__domeng;
    for (let i = 0; i < draws; i += 1) {
        const counts = [...c.view.hand_counts];
        counts[seat] += 1;
        const view = {...c.view, hand_counts: counts, bazaar: c.view.bazaar - 1};
        const events = [{type: "drew", seat}];
        c.onState({type: "state", version: c.version + 1, room: c.room, view, events});
        await new Promise(requestAnimationFrame);
    }
    return [...document.querySelectorAll('.burst')].map((b) => b.textContent);
}"""


def test_draws_in_a_row_count_up_in_one_label(server: ServerProcess, browser: Any) -> None:
    """Three draws of one seat in a row piled three "+1" labels over its plate's name; they are one
    label counting "+3"."""
    context, page, watch, _ = _seated_page(server, browser, DESKTOP)
    page.emulate_media(reduced_motion="no-preference")
    assert page.evaluate(_DRAWS_JS, [1, 3]) == ["+3"]
    watch.assert_clean()
    context.close()


# Each draw (``[seat, tile]``, tile null for another seat's) comes in a state of its own, the
# round's log one event longer; then the lines said to a screen reader (the hidden live log).
_DRAWS_SAID_JS = """async (draws) => {
    const c = window.__domeng;
    for (const [seat, tile] of draws) {
        const event = tile ? {type: "drew", seat, tile} : {type: "drew", seat};
        const view = {...c.view, log: [...c.view.log, event], bazaar: c.view.bazaar - 1};
        c.onState({type: "state", version: c.version + 1, room: c.room, view, events: [event]});
        await new Promise(requestAnimationFrame);
    }
    return [...document.querySelectorAll('.moves-said p')].map((p) => p.textContent);
}"""


def test_a_run_of_draws_is_said_one_draw_at_a_time(server: ServerProcess, browser: Any) -> None:
    """A new-user trial with a screen reader: the hidden live log said a growing run of draws again
    whole with each draw ("You draw 3 tiles…: 0–1, 1–1, 1–6", then "4 tiles…", then "5 tiles…")
    while the feed shows one line. Each draw is said once, only what it added; the feed's line still
    counts the whole run."""
    context, page, watch, _ = _seated_page(server, browser, DESKTOP)
    said = page.evaluate(_DRAWS_SAID_JS, [[0, "0-1"], [0, "1-1"], [0, "1-6"], [1, None], [1, None]])
    assert said == [
        "You draw 0–1 from the bazaar",
        "You draw 1–1 from the bazaar",
        "You draw 1–6 from the bazaar",
        "Boris draws a tile from the bazaar",
        "Boris draws a tile from the bazaar",
    ], said
    feed = page.locator(".feed-list .feed-drew")
    assert feed.count() == 2
    assert feed.nth(0).text_content() == "You draw 3 tiles from the bazaar: 0–1, 1–1, and 1–6"
    assert feed.nth(1).text_content() == "Boris draws 2 tiles from the bazaar"
    watch.assert_clean()
    context.close()


_PLATE_POINTS_JS = """() => [...document.querySelectorAll('.plate')].map((plate) => {
    const box = plate.getBoundingClientRect();
    const points = plate.querySelector('.plate-points');
    const within = (r) => r.left >= box.left - 0.5 && r.right <= box.right + 0.5
        && r.bottom <= box.bottom + 0.5;
    const inside = [...plate.querySelectorAll('.plate-row *')].filter((el) => el.getClientRects().length)
        .every((el) => within(el.getBoundingClientRect()));
    return {seat: Number(points.dataset.seatPoints), text: points.textContent, title: points.title,
            unit: points.querySelector('.unit')?.textContent ?? null, inside};
})"""


_POINTS_DRAWN_JS = """(points) => [...document.querySelectorAll('.plate-points')]
    .every((e) => e.dataset.points === String(points[e.dataset.seatPoints]))"""


@pytest.mark.parametrize("pairs", [False, True], ids=["seats", "pairs"])
def test_a_plates_points_say_what_they_count_and_fit_a_phone_in_every_language(
    server: ServerProcess, browser: Any, pairs: bool
) -> None:
    """A plate's number is labelled ("37 pts"; in pairs "37 pts (pair)", K10), with the full words
    in its title, and on a 360 px phone the label, the pending points and the hand stay inside
    every plate in every language (the side plates are the narrowest)."""
    seats = 4 if pairs else 3
    options = {"pairs": True} if pairs else {}
    context, page, watch, _ = _seated_page(server, browser, {"width": 360, "height": 740}, seats, options)
    points, pending = ([37, 0, 37, 0], [0, 12, 0, 12]) if pairs else ([1, 0, 100], [0, 12, 0])
    sides = [[0, 2], [1, 3]] if pairs else [[0], [1], [2]]
    unit_key = "plate.pair_points_unit" if pairs else "plate.points_unit"
    for lang in languages():
        switch_language(page, lang)
        _show(page, {"points": points, "pending": pending, "sides": sides, "hand_counts": [5] * seats})
        page.wait_for_function(_POINTS_DRAWN_JS, arg=points)
        screenshot(page, f"kozel-plates-{'pairs' if pairs else 'seats'}-{lang}-360x740")
        plates = sorted(page.evaluate(_PLATE_POINTS_JS), key=lambda p: p["seat"])
        units = set(catalog_of(lang)[unit_key].values())
        for plate in plates:
            n = points[plate["seat"]]
            more = f"+{pending[plate['seat']]}" if not n else ""
            assert plate["unit"] in units and plate["text"] == f"{n} {plate['unit']} {more}", (lang, plate)
            assert plate["inside"] and "⟦" not in plate["title"] + plate["text"], (lang, plate)
        assert page.evaluate("() => document.documentElement.scrollWidth <= innerWidth"), lang
        if lang == "en":
            said = {p["seat"]: (p["unit"], p["title"]) for p in plates}
            if pairs:
                assert said[0] == ("pts (pair)", "the pair's 37 points")
                assert said[1] == ("pts (pair)", "the pair has not opened yet: 12 points pending")
            else:
                assert said[0] == ("pt", "1 point") and said[2] == ("pts", "100 points")
                assert said[1] == ("pts", "not opened yet: 12 points pending")
    watch.assert_clean()
    context.close()


def _long_chain(length: int, seed: int) -> dict[str, Any]:
    """A chain of ``length`` tiles as a view has it: the tiles left to right ("a-b" as they lie),
    the ends, and a log of placements (seats taking turns) growing it from a random opening tile,
    whose L placements put the opening tile where the page will look for it. The tiles are a
    stretch of a seeded walk through the whole set (every number shows on 8 halves, so one walk
    uses all 28 tiles)."""
    rng = random.Random(seed)
    tiles = [(a, b) for a in range(7) for b in range(a, 7)]
    ways: dict[int, list[int]] = {n: [] for n in range(7)}
    for i, (a, b) in enumerate(tiles):
        ways[a].append(i)
        if a != b:
            ways[b].append(i)
    for choices in ways.values():
        rng.shuffle(choices)
    used: set[int] = set()
    stack, walk = [rng.randrange(7)], []
    while stack:  # Hierholzer: a closed walk over every tile
        n = stack[-1]
        while ways[n] and ways[n][-1] in used:
            ways[n].pop()
        if ways[n]:
            i = ways[n].pop()
            used.add(i)
            stack.append(tiles[i][1] if tiles[i][0] == n else tiles[i][0])
        else:
            walk.append(stack.pop())
    chain = [f"{walk[k]}-{walk[k + 1]}" for k in range(length)]
    opening = rng.randrange(length)
    sides = ["L"] * opening + ["R"] * (length - 1 - opening)
    rng.shuffle(sides)
    ends = [walk[0], walk[length]]
    log: list[dict[str, Any]] = [{"type": "placed", "seat": 0, "tile": chain[opening], "end": None}]
    left, right = opening, opening
    for end in sides:
        left, right = (left - 1, right) if end == "L" else (left, right + 1)
        tile = chain[left] if end == "L" else chain[right]
        log.append({"type": "placed", "seat": len(log) % 2, "tile": tile, "end": end})
    for event in log:
        event.update(ends=ends, mappakuling=False)
    return {"chain": chain, "ends": ends, "log": log}


# Rects in units, in chain order: the largest gap between two tiles that follow each other (a
# corner leaves 0.3 of a unit), tiles that overlap, and tiles outside [0, width].
_CHAIN_GAPS = """(rects, width) => {
    const gap = (a, b) => Math.max(0, b.x - (a.x + a.w), a.x - (b.x + b.w),
                                   b.y - (a.y + a.h), a.y - (b.y + b.h));
    const cross = (a, b) => Math.max(0, Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x))
                          * Math.max(0, Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y));
    let widest = 0, overlaps = 0, outside = 0;
    rects.forEach((r, i) => {
        if (i) widest = Math.max(widest, gap(rects[i - 1], r));
        for (let j = 0; j < i; j += 1) if (cross(rects[j], r) > 0.01) overlaps += 1;
        if (r.x < -0.01 || r.x + r.w > width + 0.01) outside += 1;
    });
    return {widest, overlaps, outside};
}"""


def test_the_chain_layout_turns_every_row_through_a_corner(server: ServerProcess, browser: Any) -> None:
    """Pure layout, many board widths and lempa patterns (the board's end targets included): each
    tile touches the one before it (along a row, or under/beside a corner tile), none overlap, all
    stay on the board. A tile that jumped to the next row on its own would leave a gap of 1.3."""
    context, page, watch, _ = _seated_page(server, browser)
    rng = random.Random(101)
    cases = []
    for length in (9, 16, 25, 30):  # 28 tiles at most, and the two end targets
        for _ in range(40):
            cases.append([rng.random() < 0.25 for _ in range(length)])
    worst = page.evaluate(
        """async (cases) => {
            const { layoutChain } = await import('/static/js/chain.js');
            const gaps = GAPS;
            const worst = {widest: 0, overlaps: 0, outside: 0};
            cases.forEach((lempas, n) => {
                for (let cols = 10.5; cols < 32; cols += 0.37) {
                    const items = lempas.map((lempa) => ({ lempa }));
                    const found = gaps(layoutChain(items, cols, n % lempas.length), cols);
                    worst.widest = Math.max(worst.widest, found.widest);
                    worst.overlaps += found.overlaps;
                    worst.outside += found.outside;
                }
            });
            return worst;
        }""".replace("GAPS", _CHAIN_GAPS),
        cases,
    )
    assert worst["widest"] <= 0.31 and worst["overlaps"] == 0 and worst["outside"] == 0, worst
    watch.assert_clean()
    context.close()


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390x844", "1280x800"])
def test_long_chains_read_as_one_line_on_the_felt(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    """Domeng's longest chains (25 tiles) and a 2-seat Kozel's (28) as the page draws them."""
    context, page, watch, _ = _seated_page(server, browser, viewport)
    size = f"{viewport['width']}x{viewport['height']}"
    for length, seed in ((25, 3), (25, 4), (28, 5), (28, 6)):
        shown = _long_chain(length, seed)
        _show(page, {**shown, "hand": ["1-2"], "hand_counts": [1, 1], "legal": []})
        # tiles of the last chain glide to their new places: measure once they are there
        page.wait_for_function(
            f"""() => document.querySelectorAll('.chain-tile').length === {length}
                      && document.getAnimations().every((a) => a.playState !== 'running')"""
        )
        drawn = page.evaluate(
            """() => {
                const board = document.querySelector('.chain-board').getBoundingClientRect();
                const el = document.querySelector('.chain-board');
                const unit = parseFloat(el.style.getPropertyValue('--unit'));
                const tiles = [...document.querySelectorAll('.chain-tile')]
                    .sort((a, b) => Number(a.dataset.index) - Number(b.dataset.index));
                const rects = tiles.map((tile) => {
                    const r = tile.getBoundingClientRect();
                    return {x: (r.x - board.x) / unit, y: (r.y - board.y) / unit,
                            w: r.width / unit, h: r.height / unit};
                });
                return {rects, width: board.width / unit, order: tiles.map((el) => el.dataset.tile)};
            }"""
        )
        assert drawn["order"] == [_key(t) for t in shown["chain"]]
        found = page.evaluate(
            f"([rects, width]) => ({_CHAIN_GAPS})(rects, width)", [drawn["rects"], drawn["width"]]
        )
        assert found["widest"] <= 0.35 and found["overlaps"] == 0 and found["outside"] == 0, (
            length,
            seed,
            found,
        )
        screenshot(page, f"chain-{length}-{seed}-{size}")
    watch.assert_clean()
    context.close()


_END_TARGETS_JS = """() => {
    const unit = parseFloat(document.querySelector('.chain-board').style.getPropertyValue('--unit'));
    const tiles = [...document.querySelectorAll('.chain-tile')];
    const centre = (r) => ({x: r.x + r.width / 2, y: r.y + r.height / 2});
    const at = (index) => tiles.find((t) => Number(t.dataset.index) === index).getBoundingClientRect();
    const board = document.querySelector('.chain-board').getBoundingClientRect();
    return ['L', 'R'].map((end) => {
        const target = document.querySelector(`.end-target[data-end="${end}"]`);
        const c = centre(target.getBoundingClientRect());
        const tile = at(end === 'L' ? 0 : tiles.length - 1);
        const t = centre(tile);
        // how far the target's centre is from its end's tile, and whether it is on another tile
        const off = Math.max(0, tile.left - c.x, c.x - tile.right, tile.top - c.y, c.y - tile.bottom) / unit;
        const covers = tiles.filter((el) => { const r = el.getBoundingClientRect();
            return c.x > r.left + 1 && c.x < r.right - 1 && c.y > r.top + 1 && c.y < r.bottom - 1; }).length;
        return {end, arrow: target.querySelector('.end-arrow').textContent, way: Math.sign(c.x - t.x),
                off, covers, onBoard: c.x > board.left && c.x < board.right};
    });
}"""


@pytest.mark.parametrize(
    ("variant", "seats", "viewport"),
    [("kozel", 2, PHONE), ("kozel", 2, DESKTOP), ("domeng", 5, PHONE)],
    ids=["kozel-390x844", "kozel-1280x800", "domeng-390x844"],
)
def test_each_ends_target_sits_at_its_tile_and_points_the_way_a_tile_goes(
    server: ServerProcess, browser: Any, variant: str, seats: int, viewport: dict[str, int]
) -> None:
    """Once the chain snakes, its left end may run rightwards along its row and its right end
    leftwards: each end's target ("◀ 1") sits by that end's tile, on no tile, and its arrow
    points from the tile to where the next tile goes (it said ◀ for the left end wherever it was).
    Domeng draws its chain with the same code and is checked the same way."""
    context, page, watch, _ = _seated_page(server, browser, viewport, seats, variant=variant)
    longest = 28 if variant == "kozel" else 25
    ways: set[tuple[str, str]] = set()
    for length, seed in ((1, 1), (5, 2), (12, 3), (16, 4), (20, 5), (longest, 6), (longest, 7)):
        shown = _long_chain(length, seed)
        tile = "{}-{}".format(*shown["ends"])
        legal = [{"seat": 0, "play": tile, "end": end} for end in ("L", "R")]
        _show(page, {**shown, "hand": [tile], "hand_counts": [1] * seats, "legal": legal})
        page.wait_for_function(f"() => document.querySelectorAll('.chain-tile').length === {length}")
        page.click(".hand-tile")
        page.wait_for_selector(".end-target[data-end='R']:not([hidden])")
        page.wait_for_function("() => document.getAnimations().every((a) => a.playState !== 'running')")
        for target in page.evaluate(_END_TARGETS_JS):
            arrow = {"◀": -1, "▶": 1}[target["arrow"]]
            assert target["way"] == arrow, (length, seed, target)
            assert target["off"] <= 1.4 and target["covers"] == 0 and target["onBoard"], (
                length,
                seed,
                target,
            )
            ways.add((target["end"], target["arrow"]))
        screenshot(page, f"chain-ends-{variant}-{length}-{seed}-{viewport['width']}x{viewport['height']}")
        page.keyboard.press("Escape")
        page.wait_for_selector(".end-target[data-end='R']", state="hidden")
    # snaking chains were among them: each end ran both ways
    assert ways == {("L", "◀"), ("L", "▶"), ("R", "◀"), ("R", "▶")}, ways
    watch.assert_clean()
    context.close()


def _key(tile: str) -> str:
    low, high = sorted(tile.split("-"))
    return f"{low}-{high}"


def test_each_language_renders_a_kozel_table_and_round_end(server: ServerProcess, browser: Any) -> None:
    room = server.create_room(
        variant="kozel",
        seats=4,
        options={"pairs": True},
        bots=["greedy", "random", "greedy", "random"],
        turn_timer_s=0,
    )
    assert server.start_match(room["code"], room["host_token"]).status_code == 200
    context, page, watch = open_page(browser, PHONE)
    goto(page, f"{server.url}/r/{room['code']}")
    for lang in languages():
        switch_language(page, lang)  # one page, drawn again in each language
        page.wait_for_selector("#table-bazaar")
        page.wait_for_selector(PANEL, timeout=30_000)
        assert page.evaluate("() => document.documentElement.lang") == lang
        assert "⟦" not in text_of(page), lang
        assert page.evaluate("() => window.__i18nMissing") == [], lang
        assert page.evaluate("() => document.documentElement.scrollWidth <= innerWidth"), lang
        assert page.locator(f"{PANEL} .score-sheet .sheet-row").count() == 2  # one row per pair
    watch.assert_clean()
    context.close()


def facts(seats: int, **options: object) -> dict[str, Any]:
    """The rule facts a Kozel view carries (``goal``, ``sides``), as the engine gives them: a
    page that has no view yet (the match not started) gets them from here."""
    view = player_view(make_rules("kozel", options, seats).new_match(), None).to_json()
    return {"goal": view["goal"], "sides": view["sides"]}


def standings(outcome: dict[str, Any], **options: object) -> list[list[int]]:
    """The view's ``standings`` after ``outcome`` (its points and pending), as the engine ranks them."""
    state = make_rules("kozel", options, len(outcome["points"])).new_match()
    state.points[:], state.pending[:] = outcome["points"], outcome["pending"]
    ranked: list[list[int]] = player_view(state, None).to_json()["standings"]
    return ranked


_PANEL_JS = """async ([outcome, matchOver, facts, standings]) => {
    const { roundEndPanel } = await import('/static/js/roundend.js');
    const room = {...window.__domeng.room, ...facts};
    const view = {round: 3, match_over: matchOver, outcome, log: [], standings,
                  reveal: {hands: [["1-2"], ["2-3"], ["0-4"], ["3-5"]], rest: []}};
    const dialog = roundEndPanel({view, room, seed: null, commitment: null, round: 3},
                                 {onClose: () => {}, mySeat: null, nextStarted: false});
    document.body.append(dialog);
    const text = (sel) => dialog.querySelector(sel)?.textContent ?? null;
    const rows = [...dialog.querySelectorAll('.kozel-standings tbody tr')].map((r) => r.textContent);
    const winners = [...dialog.querySelectorAll('.reveal-row')]
        .filter((r) => r.querySelector('.tag-win')).map((r) => Number(r.dataset.seat));
    return {title: text('#round-end-title'), written: text('.panel-summary p'), rows, winners};
}"""


_TABLE_SHEET_JS = """async ([outcome, facts]) => {
    const { scoreSheet } = await import('/static/js/scoresheet.js');
    const view = {points: outcome.points, pending: outcome.pending, opened: outcome.opened, outcome};
    const sheet = scoreSheet({...window.__domeng.room, ...facts}, view, null, true);
    const count = (selector) => sheet.querySelectorAll(selector).length;
    return {goats: count('.tag-goat'), to_go: count('.tag-warn')};
}"""


def _fish(written: list[int], points: list[int], pending: list[int], goat: list[int]) -> dict[str, Any]:
    return {
        "end": "fish",
        "winner": 0,
        "hand_values": [3, 5, 4, 8],
        "written": written,
        "points": points,
        "pending": pending,
        "opened": [p > 0 for p in points],
        "goat": goat,
        "next_leader": 0,
        "match_over": bool(goat),
    }


def test_the_pairs_round_end_says_each_pairs_points_once_and_what_is_only_pending(
    server: ServerProcess, browser: Any
) -> None:
    room = server.create_room(
        variant="kozel", seats=4, options={"pairs": True}, bots=["greedy"] * 4, turn_timer_s=0
    )
    context, page, watch = open_page(browser, PHONE)
    goto(page, f"{server.url}/r/{room['code']}")
    for lang in languages():
        switch_language(page, lang)  # one page, drawn again in each language
        # the pair of seats 2 and 4 wrote 12 together, and has not opened: it is only pending
        pairs = facts(4, pairs=True)
        pending = page.evaluate(
            _PANEL_JS, [_fish([0, 12, 0, 12], [20, 0, 20, 0], [0, 12, 0, 12], []), False, pairs, []]
        )
        # the same pair has opened: its 12 are written, once for the pair
        written = page.evaluate(
            _PANEL_JS, [_fish([0, 12, 0, 12], [0, 30, 0, 30], [5, 0, 5, 0], []), False, pairs, []]
        )
        # the match is over: final standings, fewest points first, the goat marked
        goat = _fish([0, 12, 0, 12], [14, 105, 14, 105], [0, 0, 0, 0], [1, 3])
        over = page.evaluate(_PANEL_JS, [goat, True, pairs, standings(goat, pairs=True)])
        title = pending["title"]
        assert title[0].isupper(), (lang, title)  # "Fish: nobody can place…", capitalised
        assert "+12" in written["written"] and written["written"].count("+12") == 1, (lang, written)
        assert pending["written"].count("+12") == 1 and "13" in pending["written"], (lang, pending)
        assert len(over["rows"]) == 2 and "105" in over["rows"][1], (lang, over)
        assert "⟦" not in str([pending, written, over]), lang
        assert pending["winners"] == [0, 2], (lang, pending)  # the round is the pair's (K10)
        assert page.evaluate("() => window.__i18nMissing") == [], lang
        if lang == "en":
            assert title == "Fish: nobody can place; Bot 1 + Bot 3 have the lower hand"  # the pair (K10)
            assert written["written"] == "Written: Bot 2 + Bot 4: +12."
            assert pending["written"] == (
                "Not opened yet, so only pending: Bot 2 + Bot 4: +12 (now 12 of 13)."
            )
            assert over["rows"] == ["1Bot 1 + Bot 3140", "2Bot 2 + Bot 4 goat1050"]
            # the table's own sheet at match over: the goat from the view's last outcome, no "-4 to go"
            sheet = page.evaluate(
                _TABLE_SHEET_JS, [_fish([0, 12, 0, 12], [14, 105, 14, 105], [0, 0, 0, 0], [1, 3]), pairs]
            )
            assert sheet == {"goats": 1, "to_go": 0}
    watch.assert_clean()
    context.close()


_GOAT_JS = """async ([outcome, facts]) => {
    const { roundEndPanel } = await import('/static/js/roundend.js');
    const { feedLines } = await import('/static/js/narrate.js');
    const room = {...window.__domeng.room, ...facts};
    const view = {round: 3, match_over: true, outcome, log: [], standings: [[0], [1], [2], [3]],
                  reveal: {hands: [["1-2"], ["2-3"], ["0-4"], ["3-5"]], rest: []}};
    const dialog = roundEndPanel({view, room, seed: null, commitment: null, round: 3},
                                 {onClose: () => {}, mySeat: null, nextStarted: false});
    const feed = feedLines([{type: "round_ended", outcome}], room, null)[0];
    return {panel: dialog.querySelector('.goat-note').textContent,
            feed: feed.querySelector('.feed-goat').textContent};
}"""


def test_the_goat_is_told_with_its_points_and_the_goal(server: ServerProcess, browser: Any) -> None:
    """Kozel's goat (K9) is said with the points it has, not "reached 101" whatever it has: "Bot 2
    reached 160 points (101 or more)", on the final panel and in the feed; a goat pair (K10) is
    named as the pair, its points once. A view without its ``goal`` (views carry it) is said
    without it (the client holds no rule fact), never with an empty "( or more)" nor "undefined"."""
    room = server.create_room(variant="kozel", seats=4, bots=["greedy"] * 4, turn_timer_s=0)
    context, page, watch = open_page(browser, PHONE)
    goto(page, f"{server.url}/r/{room['code']}")
    alone = _fish([0, 120, 0, 0], [14, 160, 40, 30], [0, 0, 0, 0], [1])
    pair = _fish([0, 12, 0, 12], [14, 105, 14, 105], [0, 0, 0, 0], [1, 3])
    pairs = {**facts(4, pairs=True), "options": {"pairs": True}}
    for lang in languages():
        switch_language(page, lang)  # one page, drawn again in each language
        said = page.evaluate(_GOAT_JS, [alone, facts(4)])
        said_pair = page.evaluate(_GOAT_JS, [pair, pairs])
        no_goal = {**facts(4), "goal": None}  # over the page's room: no goal at all
        said_bare = page.evaluate(_GOAT_JS, [alone, no_goal])
        for text in (*said.values(), *said_pair.values()):
            assert "101" in text and "⟦" not in text and "undefined" not in text, (lang, text)
        bare = catalog_of(lang)["kozel.goat_no_goal"]
        for text in said_bare.values():
            assert "160" in text and "101" not in text and "()" not in text and "( " not in text, (lang, text)
            assert "undefined" not in text and "⟦" not in text, (lang, text)
        assert said_bare["panel"] == said_bare["feed"], (lang, said_bare)
        assert any(form.split("{points}")[1][:6] in said_bare["panel"] for form in bare.values()), (
            lang,
            said_bare,
        )
        assert said["panel"] == said["feed"] and "160" in said["panel"], (lang, said)
        assert said_pair["panel"] == said_pair["feed"] and said_pair["panel"].count("105") == 1, (
            lang,
            said_pair,
        )
        assert page.evaluate("() => window.__i18nMissing") == [], lang
        if lang == "en":
            assert (
                said["panel"] == "Bot 2 reached 160 points (101 or more) and is the goat: the match is over."
            )
            assert said_pair["panel"] == (
                "Bot 2 + Bot 4 reached 105 points (101 or more) and are the goat: the match is over."
            )
    watch.assert_clean()
    context.close()


_SHEET_TAGS_JS = """async ([outcome, facts]) => {
    const { roundEndPanel } = await import('/static/js/roundend.js');
    const view = {round: 3, match_over: false, outcome, log: [],
                  reveal: {hands: [["1-2"], ["2-3"], ["0-4"]], rest: []}};
    const room = {...window.__domeng.room, ...facts};
    const dialog = roundEndPanel({view, room, seed: null, commitment: null, round: 3},
                                 {onClose: () => {}, mySeat: 0, nextStarted: false});
    document.body.append(dialog);
    dialog.showModal();
    dialog.querySelector('.score-sheet').scrollIntoView();
    const lines = (el) => { const r = document.createRange(); r.selectNodeContents(el);
                            return new Set([...r.getClientRects()].filter((b) => b.width)
                                                                  .map((b) => Math.round(b.top))).size; };
    const tags = [...dialog.querySelectorAll('.score-sheet .tag')].map((tag) => {
        const cell = tag.closest('th, td').getBoundingClientRect(), box = tag.getBoundingClientRect();
        return {text: tag.innerText, lines: lines(tag), inside: box.right <= cell.right + 0.5};
    });
    return {tags, fits: document.documentElement.scrollWidth <= innerWidth};
}"""


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390x844", "1280x800"])
def test_the_closest_to_101_tag_stays_one_line_in_every_language(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    """The round-end sheet marks the row closest to 101 with a tag: one line inside its cell in
    every language ("closest to 101: 45 points to go" on a desktop, "45 to 101" on a phone)."""
    room = server.create_room(variant="kozel", seats=3, bots=["greedy"] * 3, turn_timer_s=0)
    outcome = {
        "end": "out",
        "winner": 0,
        "hand_values": [0, 17, 9],
        "written": [0, 17, 9],
        "points": [0, 56, 44],
        "pending": [5, 0, 0],
        "opened": [False, True, True],
        "goat": [],
        "next_leader": 0,
        "match_over": False,
    }
    size = f"{viewport['width']}x{viewport['height']}"
    context, page, watch = open_page(browser, viewport)
    goto(page, f"{server.url}/r/{room['code']}")
    for lang in languages():
        switch_language(page, lang)  # one page, drawn again in each language
        shown = page.evaluate(_SHEET_TAGS_JS, [outcome, facts(3)])
        closest = [tag for tag in shown["tags"] if "45" in tag["text"]]
        assert len(closest) == 1 and "101" in closest[0]["text"], (lang, shown)
        assert all(tag["lines"] == 1 and tag["inside"] for tag in shown["tags"]), (lang, shown)
        assert shown["fits"], lang
        screenshot(page, f"kozel-closest-{lang}-{size}")
    watch.assert_clean()
    context.close()


_WHOLE_LABELS_JS = """() => {
    // a header broken inside a word shows more lines than it has words
    const lines = (el) => { const r = document.createRange(); r.selectNodeContents(el);
                            return new Set([...r.getClientRects()].map((b) => Math.round(b.top))).size; };
    const words = (el) => el.textContent.trim().split(/\\s+/).length;
    const broken = [...document.querySelectorAll('.score-sheet thead th')]
        .filter((th) => th.offsetParent && lines(th) > words(th)).map((th) => th.textContent);
    const label = document.querySelector('.round-label');
    const wide = [...document.querySelectorAll('.score-sheet')]
        .filter((t) => t.offsetParent && t.getBoundingClientRect().width > t.parentElement.clientWidth + 1);
    return {broken, roundCut: label.scrollWidth > label.clientWidth + 1, wideSheets: wide.length,
            roundText: label.textContent, fits: document.documentElement.scrollWidth <= innerWidth};
}"""


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390x844", "1280x800"])
def test_sheet_headers_and_the_round_label_are_whole_in_every_language(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    room = server.create_room(
        variant="kozel", seats=4, options={"pairs": True}, bots=["greedy", "random", "greedy", "random"]
    )
    assert server.start_match(room["code"], room["host_token"]).status_code == 200
    size = f"{viewport['width']}x{viewport['height']}"
    # one page, drawn again in each language (the language menu's switch): first the round-end
    # panel (the switch draws an open panel again), then the table's own sheet
    context, page, watch = open_page(browser, viewport)
    goto(page, f"{server.url}/r/{room['code']}")
    for lang in languages():
        switch_language(page, lang)
        page.wait_for_selector(PANEL, timeout=30_000)  # this round's, or the next one's once it was dealt
        shown = page.evaluate(_WHOLE_LABELS_JS)
        assert shown["broken"] == [] and not shown["roundCut"] and shown["fits"], (lang, shown)
        assert shown["wideSheets"] == 0, (lang, shown)
        screenshot(page, f"kozel-round-end-{lang}-{size}")
    for lang in languages():
        switch_language(page, lang)
        close_panel(page)  # a round that ended meanwhile: its panel would cover the feed's button
        if viewport is PHONE and not page.locator(".feed-open").count():
            page.click(".feed-toggle")  # open once: a language chosen meanwhile leaves it open
        page.wait_for_selector(".sheet-box .score-sheet")
        shown = page.evaluate(_WHOLE_LABELS_JS)
        assert shown["broken"] == [] and not shown["roundCut"], (lang, shown)
        screenshot(page, f"kozel-table-{lang}-{size}")
    watch.assert_clean()
    context.close()


_FIRST_TURN_JS = """() => {
    const empty = document.querySelector('.chain-empty');
    return {felt: empty.checkVisibility() ? empty.textContent : '',
            status: document.querySelector('.me-status .status').textContent,
            chain: window.__domeng.view.chain.length, turn: window.__domeng.view.to_act};
}"""


def _first_turn(page: Any, expected: dict[str, Any]) -> dict[str, Any]:
    """`_FIRST_TURN_JS` once it reads ``expected``, or after 10 s as it is then: the table is drawn
    again in the new words after a language change, and a busy machine can be read in between."""
    reads = f"(want) => {{ const got = ({_FIRST_TURN_JS})();"
    reads += " return Object.keys(want).every((k) => got[k] === want[k]); }"
    with contextlib.suppress(PlaywrightTimeoutError):
        page.wait_for_function(reads, arg=expected, timeout=10_000)
    return dict(page.evaluate(_FIRST_TURN_JS))


def test_the_first_turn_says_who_opens_once(server: ServerProcess, browser: Any) -> None:
    """Kozel's first turn on an empty chain: the leader read both "The chain is empty: the leader
    opens." on the felt and "You lead: play a raised tile to open." above the hand. The leader
    reads only the second, the other player only the first (and whose turn it is), in every
    language."""
    room = server.create_room(variant="kozel", seats=2, bots=[None, None], turn_timer_s=0)
    code = room["code"]
    tokens = [server.claim(code, seat, name).json()["token"] for seat, name in enumerate(["Ana", "Budi"])]
    pages = []
    for seat, token in enumerate(tokens):
        context, page, watch = open_page(browser, PHONE)
        open_seated(page, server, room, token, seat)
        pages.append((context, page, watch))
    assert server.start_match(code, room["host_token"]).status_code == 200
    for _, page, _ in pages:
        page.wait_for_function("() => window.__domeng?.view?.phase === 'playing'")
    leader = pages[0][1].evaluate("() => window.__domeng.view.to_act")
    wait_for_a_tile_to_place(pages[leader][1])  # no turn timer: the table waits for the leader
    other = pages[1 - leader][1]
    other.wait_for_function("(seat) => window.__domeng.view.to_act === seat", arg=leader)
    for lang in [*languages(), "en"]:
        words = catalog_of(lang)
        for _, page, _ in pages:
            switch_language(page, lang)
        leads = {"felt": "", "status": words["table.your_turn_open"], "chain": 0, "turn": leader}
        assert _first_turn(pages[leader][1], leads) == leads, lang
        waiting = words["table.waiting_for"].replace("{name}", ["Ana", "Budi"][leader])
        watches = {"felt": words["chain.empty"], "status": waiting, "chain": 0, "turn": leader}
        assert _first_turn(other, watches) == watches, lang
    screenshot(pages[leader][1], "kozel-first-turn-leader-390")
    # once opened, the leader's felt shows the chain, and no sentence over it
    pages[leader][1].locator(".hand-tile.playable").first.click()
    pages[leader][1].wait_for_function("() => window.__domeng.view.chain.length === 1")
    for _, page, watch in pages:
        page.wait_for_function("() => window.__domeng.view.chain.length >= 1")
        assert page.evaluate(_FIRST_TURN_JS)["felt"] == ""
        watch.assert_clean()
    for context, _, _ in pages:
        context.close()


_SHEET_RULE_JS = """async ([outcome, facts, pairs]) => {
    const { roundEndPanel } = await import('/static/js/roundend.js');
    const base = window.__domeng.room;
    const room = {...base, ...facts, options: {...base.options, pairs}};
    const view = {round: 3, match_over: false, outcome, log: [], standings: [],
                  reveal: {hands: [["1-2"], ["2-3"], ["0-4"], ["3-5"]], rest: []}};
    const dialog = roundEndPanel({view, room, seed: null, commitment: null, round: 3},
                                 {onClose: () => {}, mySeat: null, nextStarted: false});
    return dialog.querySelector('.score-sheet').closest('section').querySelector('p.hint').textContent;
}"""


def test_the_rule_under_the_round_end_sheet_is_the_pairs_own_at_a_pairs_table(
    server: ServerProcess, browser: Any
) -> None:
    """The line under the round-end panel's score sheet says the rule the sheet follows: a
    player's points open at 13 and make the goat at 101 (K8, K9); at a pairs table the pair's
    (K10: "points, the 13 opening and the goat are per pair"), never "a player's" there. Every
    language says the two apart."""
    room = server.create_room(
        variant="kozel", seats=4, options={"pairs": True}, bots=["greedy"] * 4, turn_timer_s=0
    )
    context, page, watch = open_page(browser, PHONE)
    goto(page, f"{server.url}/r/{room['code']}")
    outcome = _fish([0, 12, 0, 12], [20, 0, 20, 0], [0, 12, 0, 12], [])
    said: dict[str, dict[bool, str]] = {}
    for lang in languages():
        switch_language(page, lang)  # one page, drawn again in each language
        said[lang] = {
            pairs: page.evaluate(_SHEET_RULE_JS, [outcome, facts(4, pairs=pairs), pairs])
            for pairs in (False, True)
        }
        assert said[lang][True] != said[lang][False], (lang, said[lang])
        assert all("13" in text and "101" in text for text in said[lang].values()), (lang, said[lang])
        assert page.evaluate("() => window.__i18nMissing") == [], lang
    assert said["en"] == {
        False: "Points are recorded once a player's pending points reach 13: they have opened. From then"
        " on every point counts, and at 101 the player is the goat.",
        True: "Points are recorded once a pair's pending points reach 13: the pair has opened. From then"
        " on every point counts, and at 101 the pair is the goat (both partners).",
    }
    watch.assert_clean()
    context.close()
