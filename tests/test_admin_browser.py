"""The admin area in Debian's Chromium (Playwright) against a real server: an admin signs in
(the Secure, HttpOnly, SameSite=Strict cookie is kept on http://127.0.0.1), opens a match played
by bots in the test, steps through a round's replay, exports the match, and the export replays
to the stored results with the real ``domeng replay --json``. Screenshots go to
artifacts/screenshots/."""

from __future__ import annotations

import contextlib
import json
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.admin.auth import DEVICE_COOKIE, DEVICE_TTL_S
from tests.adminkit import COOKIE, SECRET, assert_replay_reproduces, play_bot_match, replay_export
from tests.browserkit import DESKTOP, PHONE, PLAYABLE, catalog_of, open_page, screenshot, sit_and_start
from tests.kozelkit import assert_kozel_words
from tests.serverkit import Client, ServerProcess, my_turn_to_place


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path_factory.mktemp("admin-browser"),
        env={
            "DOMENG_ADMIN_TOKEN": SECRET,
            "DOMENG_BOT_DELAY_S": "0.01",
            "DOMENG_ROUND_PAUSE_S": "0.05",
            "DOMENG_REVIEW_SAMPLES": "30",
        },
    ).start()
    yield process
    process.stop()


def _api(server: ServerProcess, path: str) -> Any:
    reply = httpx.get(
        f"{server.url}/api/admin{path}", headers={"Authorization": f"Bearer {SECRET}"}, timeout=20
    )
    assert reply.status_code == 200, reply.text
    return reply.json()


def _step(page: Any) -> int:
    return int(page.get_attribute("#replay", "data-step"))


def _shown_hands(page: Any) -> list[list[str]]:
    hands: list[list[str]] = page.eval_on_selector_all(
        ".rp-seat", "els => els.map(e => [...e.querySelectorAll('.rp-tile')].map(t => t.dataset.tile))"
    )
    return hands


def test_admin_signs_in_replays_a_bot_match_and_exports_it(
    server: ServerProcess, browser: Any, tmp_path: Path
) -> None:
    room = play_bot_match(server)
    match_id = next(m["id"] for m in _api(server, "/matches")["items"] if m["code"] == room["code"])
    context, page, watch = open_page(browser, DESKTOP)

    # anonymous: the admin pages send the browser to the sign-in form
    page.goto(f"{server.url}/admin/matches")
    page.wait_for_url("**/admin/login?next=%2Fadmin%2Fmatches")
    page.wait_for_selector("body[data-ready] #admin-secret")
    page.fill("#admin-secret", "not-the-secret-at-all")
    page.click("#admin-login")
    page.wait_for_selector(".admin-login [data-error='wrong_secret']")
    assert [e for e in watch.errors if "401" not in e] == []  # the refused login is the only error
    watch.errors.clear()
    screenshot(page, "admin-login-1280x800")
    page.fill("#admin-secret", SECRET)
    page.click("#admin-login")
    page.wait_for_url("**/admin/matches")
    page.wait_for_selector(f".match-row[data-match-id='{match_id}']")

    # the browser keeps the Secure cookie on http://127.0.0.1, and scripts cannot read it
    (cookie,) = [c for c in context.cookies() if c["name"] == COOKIE]
    assert cookie["secure"] and cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert cookie["path"] == "/" and cookie["expires"] > 0 and cookie["value"] != SECRET
    assert COOKIE not in page.evaluate("() => document.cookie")
    # and the device cookie (app.admin.auth: this browser has known the secret) alike, for 90 days
    (device,) = [c for c in context.cookies() if c["name"] == DEVICE_COOKIE]
    assert device["secure"] and device["httpOnly"] and device["sameSite"] == "Strict"
    assert device["path"] == "/" and device["value"].count(".") == 2
    assert device["expires"] > time.time() + DEVICE_TTL_S - 3600 and SECRET not in device["value"]
    assert "null" not in page.inner_text("body").split()  # nothing unset printed as text
    screenshot(page, "admin-matches-1280x800")

    # the match: chart drawn by Chart.js, every round with its deal and transfers
    page.click(f".match-row[data-match-id='{match_id}'] a")
    page.wait_for_url(f"**/admin/matches/{match_id}")
    page.wait_for_selector("#stones-chart")
    detail = _api(server, f"/matches/{match_id}")
    drawn = page.evaluate(
        "() => { const c = Chart.getChart('stones-chart'); return c.data.datasets.map(d => d.data); }"
    )
    assert drawn[:5] == [s["values"] for s in detail["chart"]["series"]]
    assert drawn[5] == detail["chart"]["table"]
    assert page.locator(".round-card").count() == len(detail["rounds"])
    screenshot(page, "admin-match-1280x800")

    # the replay of the first round: forward, back, keyboard, jump to the end
    frames = _api(server, f"/matches/{match_id}/rounds/0/replay")["frames"]
    page.locator(".round-card[data-round='0'] summary").first.click()
    page.click(".round-card[data-round='0'] .open-replay")
    page.wait_for_selector("#replay:not([hidden]) .rp-seat")
    assert _step(page) == 0 and _shown_hands(page) == [[_key(t) for t in h] for h in frames[0]["hands"]]
    assert page.locator("#replay .rp-seat .tile-svg .pip").count() > 0  # the table's own tiles
    for expected in (1, 2, 3):
        page.click("#replay .rp-next")
        assert _step(page) == expected
    page.click("#replay .rp-prev")
    assert _step(page) == 2
    assert _shown_hands(page) == [[_key(t) for t in h] for h in frames[2]["hands"]]
    assert page.locator("#replay .rp-chain .rp-tile").count() == len(frames[2]["chain"])
    page.focus("#replay")
    page.keyboard.press("ArrowRight")
    assert _step(page) == 3
    page.locator("#replay .rp-slider").fill(str(len(frames) // 2))
    assert _step(page) == len(frames) // 2
    screenshot(page, "admin-replay-1280x800")
    page.click("#replay .rp-last")
    last = len(frames) - 1
    assert _step(page) == last and page.inner_text("#replay .rp-step") == f"action {last} of {last}"
    assert _shown_hands(page) == [[_key(t) for t in h] for h in frames[-1]["hands"]]
    assert frames[-1]["outcome"]["end"].upper() in page.inner_text("#replay .rp-text")

    # the review a player sees, for any seat, under the replay
    page.click("#replay .rp-review-seat[data-seat='2']")
    page.wait_for_selector("#replay .rp-review .review-summary", timeout=120_000)
    review = _api(server, f"/matches/{match_id}/rounds/0/review?seat=2")
    assert page.locator("#replay .rp-review .review-decision").count() == len(review["decisions"])
    assert page.locator("#replay .rp-review .review-decision.marked").count() == review["marked"]
    assert "⟦" not in page.inner_text("#replay .rp-review")  # every word found
    # about the seat reviewed, by its name, never "you": the admin is not that player
    said = page.inner_text("#replay .rp-review-body").lower()
    name = page.inner_text("#replay .rp-review-seat[data-seat='2']").lower()
    assert " you" not in said and "your" not in said and name in said, said

    # export: a download that replays to exactly the stored results
    with page.expect_download() as download:
        page.click("#export-record")
    path = tmp_path / "export.json"
    download.value.save_as(path)
    day = detail["created_at"][:10]
    assert download.value.suggested_filename == f"domeng-{day}-{room['code']}-match1-id{match_id}.json"
    assert_replay_reproduces(replay_export(path), detail)

    # players and live rooms, then sign out
    page.goto(f"{server.url}/admin/players")
    page.wait_for_selector(".player-row")
    screenshot(page, "admin-players-1280x800")
    page.goto(f"{server.url}/admin/rooms")
    page.wait_for_selector(f".room-row[data-code='{room['code']}']")
    screenshot(page, "admin-rooms-1280x800")
    page.click("#admin-logout")
    page.wait_for_url("**/admin/login")
    page.goto(f"{server.url}/admin/matches")
    page.wait_for_url("**/admin/login?next=%2Fadmin%2Fmatches")
    watch.assert_clean()
    context.close()


def _key(tile: str) -> str:
    """A tile as the viewer names it (as the server wrote it: hands are low-high)."""
    return tile


def _sign_in(page: Any, server: ServerProcess, listed: bool = True) -> None:
    """Sign ``page`` in with the secret on the form, and wait for the matches (with ``listed``,
    for their rows too)."""
    page.goto(f"{server.url}/admin/login")
    page.wait_for_selector("body[data-ready] #admin-secret")
    page.fill("#admin-secret", SECRET)
    page.click("#admin-login")
    page.wait_for_url("**/admin/matches")
    if listed:
        page.wait_for_selector("body[data-ready] .match-row")


def test_the_sign_in_form_sends_an_admin_already_signed_in_to_the_admin_area(
    server: ServerProcess, browser: Any
) -> None:
    """/admin/login opened by an admin already signed in (a bookmark, the back button) goes to the
    matches (303), not to a second sign-in form; signed out, the form is back."""
    context, page, watch = open_page(browser, DESKTOP)
    _sign_in(page, server, listed=False)
    page.goto(f"{server.url}/admin/login")
    page.wait_for_url("**/admin/matches")
    page.wait_for_selector("body[data-ready] #admin-logout")
    assert page.locator("#admin-secret").count() == 0
    page.click("#admin-logout")
    page.wait_for_url("**/admin/login")
    page.goto(f"{server.url}/admin/login")
    page.wait_for_selector("body[data-ready] #admin-secret")
    assert page.url.endswith("/admin/login")
    watch.assert_clean()
    context.close()


def test_signing_in_leads_back_to_the_admin_page_asked_for(server: ServerProcess, browser: Any) -> None:
    """An anonymous visitor sent from an admin page to the sign-in form lands, once signed in, on
    the page they asked for (it went to the matches), and Back does not return to the form; a
    ``?next=`` naming anything but an admin page (another site) leads to the matches."""
    asked = "/admin/players"
    context, page, watch = open_page(browser, DESKTOP)
    page.goto(f"{server.url}/rules")
    page.goto(f"{server.url}{asked}")
    page.wait_for_url("**/admin/login?next=*")
    page.wait_for_selector("body[data-ready] #admin-secret")
    page.fill("#admin-secret", SECRET)
    page.click("#admin-login")
    page.wait_for_url(f"**{asked}")
    assert "?" not in page.url
    page.wait_for_selector("body[data-ready] #admin-logout")
    page.go_back()  # the form's entry was replaced by the page: Back leads to the page before
    page.wait_for_url("**/rules")
    # signed in, a form's ?next= still leads there; another site's address never
    page.goto(f"{server.url}/admin/login?next=%2Fadmin%2Frooms")
    page.wait_for_url("**/admin/rooms")
    for evil in ("%2F%2Fevil.example%2Fadmin", "https%3A%2F%2Fevil.example%2Fadmin", "%2Fadmin%2F..%2Fapi"):
        page.goto(f"{server.url}/admin/login?next={evil}")
        page.wait_for_url("**/admin/matches")
    page.click("#admin-logout")
    page.wait_for_url("**/admin/login")
    page.goto(f"{server.url}/admin/login?next=%2F%2Fevil.example%2F")
    page.wait_for_selector("body[data-ready] #admin-secret")
    page.fill("#admin-secret", SECRET)
    page.click("#admin-login")
    page.wait_for_url("**/admin/matches")
    watch.assert_clean()
    context.close()


def _fits(page: Any) -> bool:
    return bool(page.evaluate("() => document.documentElement.scrollWidth <= innerWidth"))


def test_on_a_phone_the_admin_pages_fit_and_the_match_list_honours_its_address(
    server: ServerProcess, browser: Any
) -> None:
    room = play_bot_match(server)
    waiting = [server.create_room(bots=[None, "greedy", "greedy", "random", "random"]) for _ in range(2)]
    total = _api(server, "/matches")["total"]
    assert total >= 3
    context, page, watch = open_page(browser, PHONE)
    _sign_in(page, server)
    # the header's brand, links and sign-out sit in at most two tidy rows, inside the screen
    header = page.locator(".admin-header").bounding_box()
    assert header is not None and header["height"] < 110 and _fits(page)
    screenshot(page, "admin-matches-390x844")

    # per_page in the address is honoured, with the page
    page.goto(f"{server.url}/admin/matches?per_page=2&page=2")
    page.wait_for_selector("body[data-ready]")
    pages = -(-total // 2)
    assert page.inner_text(".pager span") == f"page 2 of {pages}"
    assert page.locator(".match-row").count() == min(2, total - 2)
    assert "No match passes" not in page.inner_text("main")
    older = page.locator(".pager a", has_text="Newer").get_attribute("href")
    assert older is not None and "per_page=2" in older and "page=1" in older
    # a page past the last shows the last one and says so
    page.goto(f"{server.url}/admin/matches?per_page=2&page=99")
    page.wait_for_selector("body[data-ready]")
    assert page.inner_text(".pager span") == f"page {pages} of {pages}"
    assert f"no page 99: showing page {pages}" in page.inner_text(".pager-note")
    assert page.locator(".match-row").count() >= 1 and f"page={pages}" in page.url

    # a match's page fits the screen
    match_id = next(m["id"] for m in _api(server, "/matches")["items"] if m["code"] == room["code"])
    page.goto(f"{server.url}/admin/matches/{match_id}")
    page.wait_for_selector("body[data-ready] #stones-chart")
    assert _fits(page)
    names = page.eval_on_selector_all(
        ".admin-table.seats tbody td:nth-child(2)", "els => els.map(e => e.textContent)"
    )
    assert names == ["Bot 1 (greedy)", "Bot 2 (random)", "Bot 3 (greedy)", "Bot 4 (random)", "Bot 5 (greedy)"]
    screenshot(page, "admin-match-390x844")

    # live rooms: the code column, found from a pasted /r/ link
    code = waiting[1]["code"]
    page.goto(f"{server.url}/admin/rooms?code=/r/{code}")
    page.wait_for_selector("body[data-ready]")
    assert page.locator(".room-row").count() == 1
    assert page.inner_text(".room-row .room-code") == code
    assert page.inner_text(".room-row .room-state") == "waiting"
    page.fill("#room-code", "")
    assert page.locator(".room-row").count() == len(_api(server, "/rooms")["rooms"])
    page.fill("#room-code", f"{server.url}/r/{waiting[0]['code']}")
    assert page.locator(".room-row").count() == 1
    assert _fits(page)
    screenshot(page, "admin-rooms-390x844")

    # every room is a stack of labelled lines inside the screen, its Close button included
    page.fill("#room-code", "")
    cards = page.evaluate(_ROOM_CARDS_JS)
    assert cards and all(c["inside"] for c in cards), cards
    assert {c["label"] for c in cards} >= {"Code", "State", "Seats", "Close room"}, cards

    # players: no doubled parentheses for bots
    page.goto(f"{server.url}/admin/players")
    page.wait_for_selector("body[data-ready] .player-row")
    assert ") (" not in page.inner_text("main") and _fits(page)
    screenshot(page, "admin-players-390x844")
    watch.assert_clean()
    context.close()


_ROOM_CARDS_JS = """() => [...document.querySelectorAll('.room-row td')].map((td) => {
    const box = td.getBoundingClientRect();
    const label = getComputedStyle(td, '::before').content.replace(/^"|"$/g, '');
    return {label: label === 'none' ? td.innerText : label, inside: box.left >= 0 && box.right <= innerWidth};
})"""

_COLUMNS_JS = """(selector) => [...document.querySelectorAll(selector)].map((table) => {
    const cells = [...table.querySelectorAll('th, td')];
    const cut = cells.filter((c) => c.getBoundingClientRect().right > innerWidth + 0.5);
    return {table: table.className, cut: cut.map((c) => c.textContent)};
})"""


_LAYOUT_JS = """() => [...document.querySelectorAll('main, .round-card, .deal, .deal tr:first-child > *')]
    .map((e) => `${e.tagName}.${e.className} ${e.getBoundingClientRect().left}+${e.offsetWidth}`)"""


def test_on_a_phone_a_long_name_never_pushes_a_column_off_the_admin_pages(
    server: ServerProcess, browser: Any
) -> None:
    """A 32-character name with no space (the longest a seat takes): on a phone the match page's
    seats and deal tables wrap it inside its cell and keep "Kind" on screen, and the live-rooms
    table shows each room as labelled lines; at 1280x800 the rooms are a table again."""
    name = "W" * 32
    room = server.create_room(bots=[None, "greedy", "greedy", "random", "random"], turn_timer_s=0)
    assert server.claim(room["code"], 0, name).status_code == 201
    assert server.start_match(room["code"], room["host_token"]).status_code == 200
    match_id = next(m["id"] for m in _api(server, "/matches")["items"] if m["code"] == room["code"])
    context, page, watch = open_page(browser, PHONE)
    _sign_in(page, server)
    page.goto(f"{server.url}/admin/matches/{match_id}")
    page.wait_for_selector("body[data-ready] .admin-table.deal")
    from playwright.sync_api import TimeoutError as PlaywrightTimeout  # noqa: PLC0415 - browser tests only

    with contextlib.suppress(PlaywrightTimeout):  # the layout settles (tiles sized): then measure it
        page.wait_for_function(
            f"(s) => ({_COLUMNS_JS})(s).every((t) => t.cut.length === 0)",
            arg=".admin-table.seats, .admin-table.deal",
            timeout=30_000,  # generous: on a busy machine the tiles are sized late
        )
    tables = page.evaluate(_COLUMNS_JS, ".admin-table.seats, .admin-table.deal")
    assert len(tables) >= 2 and all(t["cut"] == [] for t in tables), (tables, page.evaluate(_LAYOUT_JS))
    assert page.inner_text(".admin-table.seats tbody tr:first-child td.name").replace("\n", "") == name
    assert page.locator(".admin-table.seats thead th", has_text="Kind").is_visible() and _fits(page)
    screenshot(page, "admin-match-long-name-390x844")
    page.goto(f"{server.url}/admin/rooms?code={room['code']}")
    page.wait_for_selector("body[data-ready] .room-row")
    cards = page.evaluate(_ROOM_CARDS_JS)
    assert all(c["inside"] for c in cards) and _fits(page), cards
    assert "Seats" in {c["label"] for c in cards}
    assert page.locator(".room-row td", has_text=name).is_visible()
    screenshot(page, "admin-rooms-long-name-390x844")
    page.set_viewport_size(DESKTOP)
    shown = page.evaluate("() => getComputedStyle(document.querySelector('.room-row td')).display")
    assert shown == "table-cell"
    assert page.locator(".admin-table.rooms thead th", has_text="Seats").is_visible()
    screenshot(page, "admin-rooms-long-name-1280x800")
    watch.assert_clean()
    context.close()


def test_room_state_and_kozel_results_say_everything_once(server: ServerProcess, browser: Any) -> None:
    context, page, watch = open_page(browser, DESKTOP)
    page.goto(f"{server.url}/static/i18n/index.json")  # a page of the server where no script runs
    shown = page.evaluate(
        """async () => {
            const rooms = await import('/static/js/admin/rooms.js');
            const matches = await import('/static/js/admin/matches.js');
            const seats = [0, 1, 2].map((s) => ({seat: s, kind: "bot", display_name: `Bot ${s + 1}`}));
            const result = {points: [14, 0, 0], pending: [0, 5, 0], goat: [], match_over: false};
            return {
                playing: rooms.stateText({status: "playing", phase: "playing", round: 5}),
                between: rooms.stateText({status: "playing", phase: "ready", round: 1}),
                waiting: rooms.stateText({status: "waiting", phase: null, round: null}),
                finished: rooms.stateText({status: "finished", phase: "over", round: 7}),
                codes: ["Ab3_x", "/r/Ab3_x", "https://a.example/r/Ab3_x/?l=en", " Ab3_x "].map(rooms.codeOf),
                kozel: matches.resultText({status: "playing", seats, result}),
            };
        }"""
    )
    assert shown["playing"] == "playing · round 6"
    assert shown["between"] == "playing · between rounds · round 2"
    assert shown["waiting"] == "waiting" and shown["finished"] == "finished · round 8"
    assert shown["codes"] == ["Ab3_x"] * 4
    # the goat apart from the points, so nobody after it reads as a goat too
    points = "Bot 1 14 points, Bot 2 0 points (+5 pending), Bot 3 0 points"
    assert shown["kozel"] == f"no goat yet · points: {points}"
    assert [e for e in watch.errors if e.startswith("pageerror")] == []  # (a JSON page has no favicon)
    context.close()


_CARDS_JS = """(selector) => {
    const rows = [...document.querySelectorAll(selector)];
    const wraps = [...document.querySelectorAll('.table-wrap')];
    return {
        rows: rows.length,
        // every cell of every row is a labelled line inside the screen, not a column
        cells: rows.flatMap((tr) => [...tr.querySelectorAll('td[data-label]')]).map((td) => ({
            display: getComputedStyle(td).display,
            lines: getComputedStyle(td).gridTemplateRows.split(' ').length,  // label and value side by side
            label: getComputedStyle(td, '::before').content.replace(/^"|"$/g, ''),
            inside: td.getBoundingClientRect().left >= 0
                && td.getBoundingClientRect().right <= innerWidth + 0.5,
        })),
        // nothing scrolls sideways inside a table's box either
        scrolled: wraps.filter((w) => w.scrollWidth > w.clientWidth + 1).map((w) => w.className),
        heads: [...document.querySelectorAll('.admin-table thead')].filter((t) => t.offsetHeight > 2).length,
    };
}"""


def _assert_cards(page: Any, selector: str, labels: set[str]) -> None:
    shown = page.evaluate(_CARDS_JS, selector)
    assert shown["rows"] > 0 and shown["scrolled"] == [], shown
    assert all(c["display"] == "grid" and c["inside"] and c["lines"] == 1 for c in shown["cells"]), shown
    assert {c["label"] for c in shown["cells"]} >= labels, shown
    assert _fits(page)


def test_on_a_phone_match_list_players_and_match_pages_are_labelled_cards_with_words(
    server: ServerProcess, browser: Any
) -> None:
    """At 390x844 the match list, the players' totals and a match's points are cards of labelled
    lines (no sideways scrolling, on the page or in a table's box); a Kozel match shows its points
    (not "no stones moved"), options are words, counts have their plural, and the Domeng result
    ranks by camat elections, then stones received, with both totals."""
    domeng = play_bot_match(server)
    kozel = server.create_room(variant="kozel", seats=3, bots=["greedy", "random", "greedy"], turn_timer_s=0)
    assert server.start_match(kozel["code"], kozel["host_token"]).status_code == 200
    watcher = Client(server, kozel["code"])
    deadline = time.monotonic() + 90
    items = _api(server, "/matches?per_page=200")["items"]
    kozel_id = next(m["id"] for m in items if m["code"] == kozel["code"])
    while not _api(server, f"/matches/{kozel_id}")["result"]:  # one finished round is enough
        assert time.monotonic() < deadline, "no Kozel round finished"
        time.sleep(0.2)
    watcher.close()
    domeng_detail = _api(server, f"/matches/{next(m['id'] for m in items if m['code'] == domeng['code'])}")
    result = domeng_detail["result"]
    assert result["standings"][0] in result["leaders"] and sorted(result["standings"]) == [0, 1, 2, 3, 4]
    assert result["received"] == [
        sum(t["received"] for r in domeng_detail["rounds"] for t in r["tallies"] if t["seat"] == s)
        for s in range(5)
    ]

    pairs = server.create_room(
        variant="kozel", seats=4, options={"pairs": True}, bots=["greedy"] * 4, turn_timer_s=0
    )
    assert server.start_match(pairs["code"], pairs["host_token"]).status_code == 200
    watcher = Client(server, pairs["code"])
    listed = _api(server, "/matches?per_page=200")["items"]
    pairs_id = next(m["id"] for m in listed if m["code"] == pairs["code"])
    deadline = time.monotonic() + 90
    while not _api(server, f"/matches/{pairs_id}")["result"]:  # one finished round is enough
        assert time.monotonic() < deadline, "no Kozel round finished in pairs"
        time.sleep(0.2)
    watcher.close()

    context, page, watch = open_page(browser, PHONE)
    _sign_in(page, server)
    _assert_cards(page, ".match-row", {"Match", "Status", "Seats", "Result"})
    # the list says each Kozel match's table: its seats, or pairs (K10)
    variant = ".match-row[data-match-id='{}'] td[data-label='Variant']"
    assert page.locator(variant.format(pairs_id)).inner_text() == "kozel, 4 in pairs"
    assert page.locator(variant.format(kozel_id)).inner_text() == "kozel, 3 seats"
    row = page.locator(f".match-row[data-match-id='{domeng_detail['id']}'] .result").inner_text()
    first = domeng_detail["seats"][result["standings"][0]]["display_name"]
    assert row.startswith("final · 1. " + first) and " received" in row
    assert "1 camat election," in row and "(s)" not in page.inner_text("main")
    screenshot(page, "admin-matches-cards-390x844")

    # partners share their pair's points (K10): the second line of each pair is dotted, not hidden
    page.goto(f"{server.url}/admin/matches/{pairs_id}")
    page.wait_for_selector("body[data-ready] #stones-chart")
    lines = page.evaluate(
        "() => Chart.getChart('stones-chart').data.datasets.map((d) => [d.data, d.borderDash || null])"
    )
    assert lines[0][0] == lines[2][0] and lines[1][0] == lines[3][0], lines
    assert [dash is not None for _, dash in lines] == [False, False, True, True], lines

    page.goto(f"{server.url}/admin/players")
    page.wait_for_selector("body[data-ready] .player-row")
    _assert_cards(page, ".player-row", {"Matches", "Stones received", "Camat elections"})
    screenshot(page, "admin-players-cards-390x844")

    page.goto(f"{server.url}/admin/matches/{kozel_id}")
    page.wait_for_selector("body[data-ready] .round-card[data-round='0']")
    if page.get_attribute(".round-card[data-round='0']", "open") is None:
        page.click(".round-card[data-round='0'] > summary")  # the first round, finished
    page.wait_for_selector(".round-card[data-round='0'] .admin-table.points")
    text = page.inner_text("main")
    assert "No stones moved" not in text and "Transfers" not in text
    assert "{" not in page.inner_text(".facts") and "two lempas in one move allowed" in page.inner_text(
        ".facts"
    )
    _assert_cards(
        page, ".round-card[open] .admin-table.points tbody tr", {"Hand", "Written", "Points", "Pending"}
    )
    screenshot(page, "admin-kozel-match-390x844")

    page.goto(f"{server.url}/admin/matches/{domeng_detail['id']}")
    page.wait_for_selector("body[data-ready] .round-card")
    assert "ends at the first camat election" in page.inner_text(".facts") and _fits(page)
    transfers = (
        page.inner_text(".round-card[open] .transfers")
        if page.locator(".round-card[open] .transfers").count()
        else ""
    )
    assert "because" not in transfers and "+" not in transfers
    assert transfers and " takes " in transfers
    watch.assert_clean()
    context.close()


def test_the_match_page_marks_the_moves_a_bot_made_for_a_player(server: ServerProcess, browser: Any) -> None:
    """Ana's turn timer runs out (a socket holds her seat and never acts): the bot's move for her
    is stored as ``timer`` and the match page says so in words and marks it."""
    room = server.create_room(bots=[None, "greedy", "greedy", "greedy", "greedy"], turn_timer_s=5)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    ana = Client(server, room["code"], token)
    assert server.start_match(room["code"], room["host_token"]).status_code == 200
    ana.wait_for(
        lambda m: m["type"] == "state" and bool(m["room"]["round"]) and bool(m["room"]["round"]["by_bot"]),
        timeout=90,
    )
    match_id = next(m["id"] for m in _api(server, "/matches")["items"] if m["code"] == room["code"])
    detail = _api(server, f"/matches/{match_id}")
    assert "timer" in detail["rounds"][0]["actors"]
    context, page, watch = open_page(browser, DESKTOP)
    _sign_in(page, server, listed=False)
    page.goto(f"{server.url}/admin/matches/{match_id}")
    page.wait_for_selector(".round-card[data-round='0']")
    marked = page.locator(".round-card[data-round='0'] li[data-actor='timer']").first
    assert marked.locator(".by-bot-tag").count() == 1
    assert "turn timer ran out" in (marked.text_content() or "")  # (in a closed <details>)
    ana.close()
    watch.assert_clean()
    context.close()


def _on_anas_turn(
    server: ServerProcess, browser: Any, viewport: dict[str, int], **options: Any
) -> tuple[str, Any, Any, Any]:
    """A five-seat Domeng table (``options`` as `ServerProcess.create_room` takes them), Ana in
    seat 0 against four easy bots, open on a page at ``viewport`` on her turn: the room's code,
    the page's context, the page and its watch."""
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], **options)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, viewport)
    sit_and_start(page, server, room, token)
    page.wait_for_selector(f"[data-my-turn='true'] {PLAYABLE}", timeout=60_000)
    return room["code"], context, page, watch


def _closed_by_the_admin(server: ServerProcess, page: Any, code: str) -> None:
    """The admin closes room ``code`` (the API, with the secret); ``page`` shows the closed
    banner and that it is nobody's turn there."""
    reply = httpx.post(
        f"{server.url}/api/admin/rooms/{code}/close",
        headers={"Authorization": f"Bearer {SECRET}"},
        timeout=20,
    )
    assert reply.status_code == 200, reply.text
    page.wait_for_selector(".banner[data-kind='closed']")
    page.wait_for_selector("[data-my-turn='false']")


def test_a_table_closed_by_the_admin_stops_inviting_a_move(server: ServerProcess, browser: Any) -> None:
    """Closed mid-round, on the player's turn: besides the banner, the table no longer says it is
    their turn, raises no tile and offers no hint; its status says the table was closed."""
    code, context, page, watch = _on_anas_turn(server, browser, PHONE, turn_timer_s=0, hints=True)
    _closed_by_the_admin(server, page, code)
    assert page.locator(PLAYABLE).count() == 0 and page.locator(".hint-btn").is_hidden()
    assert page.inner_text(".me .status") == "This table was closed."
    screenshot(page, "closed-by-admin-390x844")
    watch.assert_clean()
    context.close()


def test_a_table_closed_by_the_admin_shows_nobody_acting_and_no_clock(
    server: ServerProcess, browser: Any
) -> None:
    """Closed on the player's turn at a table with a turn timer: no plate says whose turn it is, no
    bot's dots, and no countdown goes on (nothing will move any more)."""
    code, context, page, watch = _on_anas_turn(server, browser, DESKTOP, turn_timer_s=60)
    page.wait_for_selector(".plate.acting")
    page.wait_for_selector(".me-status .turn-timer:not([hidden])")
    _closed_by_the_admin(server, page, code)
    page.evaluate("() => window.__domeng.screen.tick()")  # the clock's next tick, at once
    assert page.locator(".plate.acting, .plate.bot-thinking").count() == 0
    assert page.locator(".plate-timer:not([hidden]), .turn-timer:not([hidden])").count() == 0
    watch.assert_clean()
    context.close()


def _equal_ends_step(server: ServerProcess, match_id: int) -> tuple[int, int, list[dict[str, Any]]]:
    """A finished round of a Kozel match with a placement that left equal ends (Domeng would call
    it a mappakuling): (round, step, frames); waits for the bots to play one."""
    deadline = time.monotonic() + 90
    looked: set[int] = set()
    while True:
        rounds = _api(server, f"/matches/{match_id}")["rounds"]
        for r in (r for r in rounds if r["outcome"] and r["index"] not in looked):
            looked.add(r["index"])
            frames = _api(server, f"/matches/{match_id}/rounds/{r['index']}/replay")["frames"]
            for frame in frames:
                placed = [e for e in frame["events"] if e["type"] == "placed" and e["end"]]
                if any(e["ends"][0] == e["ends"][1] for e in placed):
                    return r["index"], frame["step"], frames
        assert time.monotonic() < deadline, "no Kozel placement left equal ends"
        time.sleep(0.2)


def test_a_kozel_replay_speaks_kozel_with_no_stray_separator(server: ServerProcess, browser: Any) -> None:
    """The admin's Kozel replay: a placement that leaves equal ends is not called a mappakuling (a
    Domeng word, RULES.md glossary), no line of the round says a Domeng word, and the bazaar's line
    has no "·" before it (Kozel has no table of stones)."""
    room = server.create_room(variant="kozel", seats=3, bots=["greedy", "random", "greedy"], turn_timer_s=0)
    assert server.start_match(room["code"], room["host_token"]).status_code == 200
    watcher = Client(server, room["code"])
    listed = _api(server, "/matches?per_page=200")["items"]
    match_id = next(m["id"] for m in listed if m["code"] == room["code"])
    index, step, frames = _equal_ends_step(server, match_id)
    watcher.close()
    for frame in frames[1:]:
        assert_kozel_words(frame["text"])

    context, page, watch = open_page(browser, DESKTOP)
    _sign_in(page, server)
    page.goto(f"{server.url}/admin/matches/{match_id}")
    page.wait_for_selector(f"body[data-ready] .round-card[data-round='{index}']")
    if page.get_attribute(f".round-card[data-round='{index}']", "open") is None:
        page.click(f".round-card[data-round='{index}'] > summary")
    page.click(f".round-card[data-round='{index}'] .open-replay")
    page.wait_for_selector("#replay:not([hidden]) .rp-seat")
    assert page.inner_text("#replay .rp-meta") == "bazaar:"  # as dealt: then the bazaar's tiles
    page.locator("#replay .rp-slider").fill(str(step))
    assert _step(page) == step
    text = page.inner_text("#replay .rp-text")
    assert text == frames[step]["text"] and " plays " in text
    assert_kozel_words(text)
    # the bazaar's tiles at that step, or "empty" once the draws took them all (the random bot's
    # draws decide which); the line is a flex row: compare its words
    rest = "bazaar:" if frames[step]["rest"] else "bazaar: empty"
    assert " ".join(page.inner_text("#replay .rp-meta").split()) == rest
    page.click("#replay .rp-last")
    assert_kozel_words(page.inner_text("#replay .rp-text"))
    # the line is a flex row, whose items innerText puts on lines of their own: compare the words
    # (the bazaar is empty at the end or not, as the random bot's draws went)
    meta = " ".join(page.inner_text("#replay .rp-meta").split())
    assert meta in {"bazaar:", "bazaar: empty"}, meta
    screenshot(page, "admin-kozel-replay-1280x800")
    watch.assert_clean()
    context.close()


# Each status word of the match list, as the lines it takes: a word broken inside ("finishe/d")
# takes two.
STATUS_LINES = """() => [...document.querySelectorAll('.match-row .status')].map((s) => {
    const lines = new Set([...s.getClientRects()].map((r) => Math.round(r.top)));
    return [s.textContent, lines.size];
})"""


@pytest.mark.parametrize("width", [700, 1024])
def test_the_match_lists_status_words_never_break(server: ServerProcess, browser: Any, width: int) -> None:
    """A status ("finished", "abandoned") is one word on one line, on a phone's cards and in a
    desktop's table squeezed by its long seat names and results (it broke as "finishe/d")."""
    play_bot_match(server)
    context, page, watch = open_page(browser, {"width": width, "height": 800})
    _sign_in(page, server)
    page.wait_for_selector(".match-row .status-finished")
    shown = page.evaluate(STATUS_LINES)
    screenshot(page, f"admin-status-words-{width}")
    assert shown and all(lines == 1 for _, lines in shown), shown
    watch.assert_clean()
    context.close()


def test_the_match_page_of_a_match_in_play_closes_its_room(server: ServerProcess, browser: Any) -> None:
    """A match still in play has its room's Close button on its page (two clicks, as on the live
    rooms page) and a link to watch its table; closed, the page shows it abandoned and offers
    neither any more. A finished match's page has neither."""
    room = server.create_room(bots=[None, "greedy", "greedy", "greedy", "greedy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    assert server.start_match(room["code"], room["host_token"]).status_code == 200
    ana = Client(server, room["code"], token)
    ana.wait_for(lambda m: m["type"] == "state" and m["view"] is not None)
    ana.close()
    match_id = next(m["id"] for m in _api(server, "/matches")["items"] if m["code"] == room["code"])
    done = play_bot_match(server)
    finished = next(m["id"] for m in _api(server, "/matches")["items"] if m["code"] == done["code"])
    context, page, watch = open_page(browser, DESKTOP)
    _sign_in(page, server, listed=False)
    page.goto(f"{server.url}/admin/matches/{finished}")
    page.wait_for_selector("#export-record")
    assert page.locator(".match-actions .close-room").count() == 0
    assert page.locator("a.watch-table").count() == 0  # a finished match has no table to watch
    page.goto(f"{server.url}/admin/matches/{match_id}")
    # in play: its table opens as a spectator's in a new tab
    assert page.get_attribute("a.watch-table", "href") == f"/r/{room['code']}"
    button = page.locator(".match-actions .close-room")
    button.click()
    assert button.inner_text() == "Confirm: close it"
    with page.expect_navigation():
        button.click()
    page.wait_for_selector("#export-record")
    assert page.locator(".match-actions .close-room, a.watch-table").count() == 0
    assert page.locator("dl.facts dd").first.inner_text().startswith("abandoned")
    assert _api(server, f"/matches/{match_id}")["abandoned_reason"] == "closed"
    watch.assert_clean()
    context.close()


def test_the_live_rooms_page_reads_the_rooms_again_and_keeps_a_close_armed(
    server: ServerProcess, browser: Any
) -> None:
    """The live rooms page refreshes itself (every 5 s while shown): a room created after it
    loaded appears without a reload, and a Close armed before a refresh still asks its confirm
    after it, then closes. Found by its code once it is out of memory, the page links its
    matches in the history."""
    context, page, watch = open_page(browser, DESKTOP)
    _sign_in(page, server, listed=False)
    page.goto(f"{server.url}/admin/rooms")
    page.wait_for_selector(".table-wrap[data-reads='1']")
    room = server.create_room(bots=[None, "greedy", "greedy", "greedy", "greedy"], turn_timer_s=0)
    row = page.locator(f".room-row[data-code='{room['code']}']")
    row.wait_for(timeout=20_000)  # no reload: the page read the rooms again
    row.locator(".close-room").click()
    reads = int(page.get_attribute(".table-wrap", "data-reads") or 0)
    page.wait_for_selector(f".table-wrap[data-reads='{reads + 1}']", timeout=20_000)
    button = page.locator(f".room-row[data-code='{room['code']}'] .close-room")
    assert button.inner_text() == "Confirm: close it"  # still armed after the refresh
    button.click()
    row.wait_for(state="detached")
    assert "Closed room of match #" in page.inner_text("p[role='status']")
    # a code no room in memory has: the page leads to the room's matches in the history
    page.goto(f"{server.url}/admin/rooms?code=/r/{room['code']}")
    page.click("a.room-history")
    page.wait_for_selector(".match-row")
    assert page.locator(".match-row").count() == 1 and page.input_value("input[name='code']") == room["code"]
    watch.assert_clean()
    context.close()


def test_the_page_of_a_match_in_play_shows_new_moves_and_a_finished_one_asks_nothing(
    server: ServerProcess, browser: Any
) -> None:
    """The page of a match in play refreshes itself (every 5 s while shown, reading the match
    again only when it changed): a move made after it loaded shows without a reload, in the
    actions and in the replay viewer open on its round, and so does a chat line; the replay step
    shown and a Close armed by its first click stay as they were. The page of a finished match
    asks the server nothing after it loaded."""
    done = play_bot_match(server)
    finished = next(m["id"] for m in _api(server, "/matches")["items"] if m["code"] == done["code"])
    room = server.create_room(bots=[None, "greedy", "greedy", "greedy", "greedy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    assert server.start_match(room["code"], room["host_token"]).status_code == 200
    ana = Client(server, room["code"], token)
    turn = ana.wait_for(my_turn_to_place)
    match_id = next(m["id"] for m in _api(server, "/matches")["items"] if m["code"] == room["code"])
    if len(_api(server, f"/matches/{match_id}/rounds/0/replay")["frames"]) < 2:  # Ana leads: one step to show
        assert ana.answer(turn)
        turn = ana.wait_for(my_turn_to_place)
    # the finished match's page, open beside the live one: every request it makes is counted
    context_done, page_done, watch_done = open_page(browser, DESKTOP)
    _sign_in(page_done, server)  # the list's rows: its own read is done before the count starts
    asked: list[str] = []
    page_done.on("request", lambda r: asked.append(r.url))
    page_done.goto(f"{server.url}/admin/matches/{finished}")
    page_done.wait_for_selector("#chat-log")  # the last thing the page reads
    context, page, watch = open_page(browser, DESKTOP)
    _sign_in(page, server, listed=False)
    page.goto(f"{server.url}/admin/matches/{match_id}")
    page.wait_for_selector("#chat-log")
    shown = page.locator(".actions-list li").count()
    page.click(".round-card[data-round='0'] .open-replay")
    page.wait_for_selector("#replay:not([hidden]) .rp-seat")
    page.click("#replay .rp-next")
    assert _step(page) == 1
    frames = int(page.get_attribute("#replay", "data-frames"))
    button = page.locator(".match-actions .close-room")
    button.click()
    assert page.get_attribute("#chat-log", "data-lines") == "0"
    assert ana.answer(turn)  # Ana plays: the bots answer, all stored
    ana.send({"type": "chat", "text": "said while the admin watches"})
    page.wait_for_function(
        "n => document.querySelectorAll('.actions-list li').length > n", arg=shown, timeout=30_000
    )
    assert page.locator(".rounds[data-reads='1']").count() == 0  # read again, without a reload
    # the replay viewer reads its round again: the new moves are steps of it, the step stays
    page.wait_for_function(
        "n => Number(document.querySelector('#replay').dataset.frames) > n", arg=frames, timeout=30_000
    )
    assert _step(page) == 1  # the replay stays where the admin left it
    page.click("#replay .rp-last")
    assert _step(page) == int(page.get_attribute("#replay", "data-frames")) - 1 > frames - 1
    page.click("#replay .rp-first")
    # and the chat: the line said after the page loaded shows without a reload
    page.wait_for_selector("#chat-log[data-lines='1']", timeout=30_000)
    assert "said while the admin watches" in page.inner_text("#chat-log")
    assert button.inner_text() == "Confirm: close it"  # still armed
    assert page.get_attribute("a.watch-table", "href") == f"/r/{room['code']}"
    # the live page ticked at least once since the finished one loaded: that one asked nothing
    matches = [url.split("/api/admin", 1)[1] for url in asked if "/api/admin/matches" in url]
    assert sorted(matches) == [f"/matches/{finished}", f"/matches/{finished}/chat"], matches
    ana.close()
    watch.assert_clean()
    watch_done.assert_clean()
    context.close()
    context_done.close()


def test_the_match_list_explains_live_shortens_long_results_and_exports_what_it_lists(
    server: ServerProcess, browser: Any, tmp_path: Path
) -> None:
    """The match list says what "live" means (the catalog's ``admin.live_help``, on the word and
    in a help line), marks a playing match no room hosts as such, keeps a long result to two lines
    (whole on hover, opened by a click) and downloads the records of the list it shows as a zip."""
    done = play_bot_match(server)
    waiting = server.create_room(bots=[None, "greedy", "greedy", "greedy", "greedy"])
    ids = {m["code"]: m["id"] for m in _api(server, "/matches")["items"]}
    catalog = catalog_of("en")
    context, page, watch = open_page(browser, DESKTOP)
    _sign_in(page, server)
    assert page.inner_text(".live-help") == catalog["admin.live_help"]
    live = page.locator(f".match-row[data-match-id='{ids[waiting['code']]}'] .live-word")
    assert live.inner_text() == "live" and live.get_attribute("title") == catalog["admin.live_help"]
    # a playing match no room hosts (its server died): greyed, "not hosted", since when
    stale = page.evaluate(
        """async () => {
            const words = await import('/static/js/admin/words.js');
            const span = document.createElement('span');
            span.append(...words.statusWords({status: 'playing', hosted: false, live: false,
                abandoned_reason: null, last_active_at: '2026-12-05T10:11:12Z'}).flat());
            return {text: span.textContent, title: span.querySelector('.not-hosted').title,
                    stale: span.querySelector('.status').classList.contains('status-stale')};
        }"""
    )
    assert stale == {
        "text": "playing? · not hosted, last activity 2026-12-05 10:11 UTC",
        "title": catalog["admin.not_hosted_help"],
        "stale": True,
    }
    # the finished match's result (five seats' places and totals): two lines, whole on hover
    result = page.locator(f".match-row[data-match-id='{ids[done['code']]}'] .result-text")
    measure = """(el) => ({title: el.title, text: el.textContent, height: el.clientHeight,
        full: el.scrollHeight, line: parseFloat(getComputedStyle(el).lineHeight)})"""
    shut = result.evaluate(measure)
    assert shut["title"] == shut["text"] and shut["text"].startswith("final · 1. ")
    assert shut["height"] <= 2 * shut["line"] + 1 < shut["full"], shut
    result.click()
    opened = result.evaluate(measure)
    assert result.get_attribute("aria-expanded") == "true" and opened["height"] >= shut["full"] - 1, opened
    wide = page.eval_on_selector(".table-wrap", "el => el.scrollWidth - el.clientWidth")
    assert wide <= 1, wide  # no column pushed off the page
    screenshot(page, "admin-match-list-live-help")
    # the list's records, as a zip of replayable documents named by day, room and match
    with page.expect_download() as download:
        page.click("#export-list")
    path = tmp_path / download.value.suggested_filename
    download.value.save_as(path)
    assert path.name.startswith("domeng-matches-") and path.suffix == ".zip"
    with zipfile.ZipFile(path) as archive:
        index = [json.loads(line) for line in archive.read("index.jsonl").decode().splitlines()]
    assert [e["id"] for e in index] == [m["id"] for m in _api(server, "/matches?per_page=200")["items"]]
    assert {e["file"] for e in index} == {
        f"domeng-{e['created_at'][:10]}-{e['code']}-match{e['room_match']}-id{e['id']}.json" for e in index
    }
    watch.assert_clean()
    context.close()


def test_a_list_past_the_export_limit_says_so_instead_of_a_refused_download(
    tmp_path: Path, browser: Any
) -> None:
    """With more matches listed than one bulk export holds (``DOMENG_ADMIN_EXPORT_LIMIT``, 1 here),
    the list offers no download that the server would refuse (422 ``too_many_matches``, a JSON
    file saved as the zip) but says to narrow the filters; narrowed to one match, it exports."""
    env = {"DOMENG_ADMIN_TOKEN": SECRET, "DOMENG_ADMIN_EXPORT_LIMIT": "1"}
    server = ServerProcess(tmp_path / "server", env=env).start()
    try:
        codes = [
            server.create_room(bots=[None, "greedy", "greedy", "greedy", "greedy"])["code"] for _ in range(2)
        ]
        listed = _api(server, "/matches")
        assert listed["total"] == 2 and listed["export_limit"] == 1
        refused = httpx.get(
            f"{server.url}/api/admin/export", headers={"Authorization": f"Bearer {SECRET}"}, timeout=20
        )
        assert refused.status_code == 422 and refused.json()["detail"]["code"] == "too_many_matches"
        context, page, watch = open_page(browser, DESKTOP)
        _sign_in(page, server)
        assert page.inner_text("#export-too-many") == (
            "Too many to export at once (at most 1): narrow the filters."
        )
        assert page.locator("#export-list").count() == 0
        page.goto(f"{server.url}/admin/matches?code={codes[0]}")
        page.wait_for_selector("body[data-ready] .match-row")
        with page.expect_download() as download:
            page.click("#export-list")
        path = tmp_path / download.value.suggested_filename
        download.value.save_as(path)
        with zipfile.ZipFile(path) as archive:
            [entry] = [json.loads(line) for line in archive.read("index.jsonl").decode().splitlines()]
        assert entry["code"] == codes[0]
        assert page.locator("#export-too-many").count() == 0
        watch.assert_clean()
        context.close()
    finally:
        server.stop()


def test_a_chat_line_said_before_the_first_deal_says_so(server: ServerProcess, browser: Any) -> None:
    """A trial: a line said in the waiting room, before the match started, showed on the admin's
    match page as "Round 1, after 0 actions", as if said at the table. It says "Before the first
    deal"; a line said once the round is dealt still says its round and actions."""
    room = server.create_room(bots=[None, "greedy", "greedy", "greedy", "greedy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    ana = Client(server, room["code"], token)
    ana.wait_for(lambda m: m["type"] == "state")
    ana.send({"type": "chat", "text": "hello before the start"})
    ana.wait_for(lambda m: m["type"] == "chat")
    assert server.start_match(room["code"], room["host_token"]).status_code == 200
    turn = ana.wait_for(my_turn_to_place)
    ana.send({"type": "chat", "text": "said at the table"})
    ana.wait_for(lambda m: m["type"] == "chat")
    seq = len(turn["view"]["log"])
    match_id = next(m["id"] for m in _api(server, "/matches")["items"] if m["code"] == room["code"])
    lines = _api(server, f"/matches/{match_id}/chat")["lines"]
    assert [(line["round"], line["text"]) for line in lines] == [
        (0, "hello before the start"),
        (0, "said at the table"),
    ]
    context, page, watch = open_page(browser, DESKTOP)
    try:
        _sign_in(page, server, listed=False)
        page.goto(f"{server.url}/admin/matches/{match_id}")
        page.wait_for_selector("#chat-log[data-lines='2']")
        when = page.eval_on_selector_all(
            ".chat-table tbody tr", "rows => rows.map((r) => r.querySelector('td').textContent)"
        )
        after = f"Round 1, after {seq} action{'' if seq == 1 else 's'}"
        assert when == ["Before the first deal", after], (when, lines)
        watch.assert_clean()
    finally:
        ana.close()
        context.close()
