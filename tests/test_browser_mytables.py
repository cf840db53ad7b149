"""The lobby's "Your tables" in Chromium: a host back in the lobby finds the rooms this browser holds
a host's or a seat's token for (localStorage, static/js/api.js), each a link with its game and
whether its match waits, is played or is over, in every language; a room the server no longer
knows is forgotten, and no token goes to the server with the look-ups. Screenshots go to
artifacts/screenshots/."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest

from tests.browserkit import (
    DESKTOP,
    PHONE,
    catalog_of,
    create_room_in_lobby,
    goto,
    hold_host,
    hold_seat,
    languages,
    open_page,
    screenshot,
    switch_language,
)
from tests.serverkit import ServerProcess

GONE = "NoSuchRoomAnyMore0000a"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("browser-mytables")).start()
    yield process
    process.stop()


def _rows(page: Any) -> list[dict[str, str]]:
    rows: list[dict[str, str]] = page.evaluate(
        """() => [...document.querySelectorAll('#my-tables .my-table')].map((li) => ({
            code: li.dataset.code, status: li.dataset.status, text: li.textContent,
            href: li.querySelector('a').getAttribute('href')}))"""
    )
    return rows


def _lobby(page: Any, url: str) -> None:
    goto(page, url)
    page.wait_for_selector("#my-tables[data-loaded]", state="attached")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280x800", "390x844"])
def test_a_host_back_in_the_lobby_finds_their_tables(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    """The browser created one room (the host's token) and sat in another (a seat's token); it
        also holds a token for a room the server has forgotten. The lobby lists the two it knows,
        latest first, with the game, the state and the role, and drops the third from the browser's
        memory; once the host's match starts, the list says so. One status read looks them all up, and
    carries no token."""
    en = catalog_of("en")
    context, page, watch = open_page(browser, viewport)
    looked_up: list[dict[str, str]] = []
    urls: list[str] = []
    page.on(
        "request",
        lambda r: (looked_up.append(r.headers), urls.append(r.url)) if "/api/rooms/" in r.url else None,
    )
    try:
        _lobby(page, f"{server.url}/")
        assert page.locator("#my-tables").is_hidden()  # nothing held yet
        page.evaluate(
            "(key) => localStorage.setItem(key, JSON.stringify({host_token: 'x'.repeat(43), at: 1}))",
            f"domeng:room:{GONE}",
        )
        seated = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
        hold_seat(page, seated["code"], server.claim(seated["code"], 0, "Ana").json()["token"], 0)
        hosted = create_room_in_lobby(page, server.url, ["person", "easy", "easy", "easy", "easy"])
        looked_up.clear()
        urls.clear()
        _lobby(page, f"{server.url}/")
        # one status read for them all, which loads no room on the server (GET /api/rooms/{code} would)
        assert len(urls) == 1 and urls[0].startswith(
            f"{server.url}/api/rooms/status?codes={hosted},{seated['code']}"
        )
        rows = _rows(page)
        assert [r["code"] for r in rows] == [hosted, seated["code"]], rows
        assert [r["status"] for r in rows] == ["waiting", "waiting"]
        assert rows[0]["href"] == f"/r/{hosted}"
        assert en["mine.host"] in rows[0]["text"] and en["mine.waiting"] in rows[0]["text"]
        assert en["variant.domeng"] in rows[0]["text"]
        assert en["seat.label"].replace("{n}", "1") in rows[1]["text"] and "Ana" in rows[1]["text"]
        assert en["mine.host"] not in rows[1]["text"]
        assert page.evaluate(f"() => localStorage.getItem('domeng:room:{GONE}')") is None
        assert looked_up and all("authorization" not in headers for headers in looked_up), looked_up
        if viewport == DESKTOP:  # beside the form, under the hero, as the open tables are
            mine = page.locator("#my-tables").bounding_box()
            form = page.locator(".new-table-card").bounding_box()
            assert mine is not None and form is not None and mine["x"] + mine["width"] <= form["x"]
        screenshot(page, f"my-tables-{viewport['width']}x{viewport['height']}-en")

        host_token = page.evaluate(
            f"() => JSON.parse(localStorage.getItem('domeng:room:{hosted}')).host_token"
        )
        assert server.start_match(hosted, host_token).status_code == 200
        _lobby(page, f"{server.url}/")
        row = page.locator(f"#my-tables .my-table[data-code='{hosted}']")
        assert row.get_attribute("data-status") == "playing"
        assert en["mine.playing"].replace("{n}", "1") in str(row.text_content())
        for lang in languages():
            switch_language(page, lang)
            page.wait_for_selector("#my-tables[data-loaded]:not([hidden])")
            words = catalog_of(lang)
            assert page.text_content("#my-tables h2") == words["mine.heading"], lang
            assert (
                page.text_content(f"#my-tables .my-table[data-code='{hosted}'] .my-open")
                == words["mine.open"]
            )
        page.click(f"#my-tables .my-table[data-code='{hosted}'] a")
        page.wait_for_url(f"**/r/{hosted}")
        page.wait_for_selector(".table-screen")
        # the forgotten room's 404 is the browser's own line in the console, and the only one
        watch.errors = [e for e in watch.errors if "status of 404" not in e]
        watch.assert_clean()
    finally:
        context.close()


def test_kozel_tables_say_their_seats_and_pairs(server: ServerProcess, browser: Any) -> None:
    """A new user's report: every Kozel row read "Kozel · match 1 in play", whether its table
    seats 2, 3 or 4, or plays in pairs. Each row names its game as Domeng's does, with its seats
    (plural forms in Russian) and, in pairs, says so."""
    context, page, watch = open_page(browser, DESKTOP)
    try:
        _lobby(page, f"{server.url}/")
        tables = {}
        for seats, pairs in ((2, False), (3, False), (4, False), (4, True)):
            room = server.create_room(
                variant="kozel",
                seats=seats,
                options={"pairs": pairs},
                bots=[None, *["greedy"] * (seats - 1)],
                turn_timer_s=0,
            )
            hold_seat(page, room["code"], server.claim(room["code"], 0, "Anna").json()["token"], 0)
            tables[room["code"]] = (seats, pairs)
        for lang in ("en", "ru"):
            words = catalog_of(lang)
            switch_language(page, lang)
            _lobby(page, f"{server.url}/")
            for code, (seats, pairs) in tables.items():
                text = str(page.locator(f"#my-tables .my-table[data-code='{code}'] b").text_content())
                if pairs:
                    assert text == words["mine.kozel_pairs"], (lang, text)
                else:
                    forms = words["mine.kozel_seats"]
                    assert text in {form.replace("{n}", str(seats)) for form in forms.values()}, (lang, text)
                    assert str(seats) in text
            shown = [page.locator(f"#my-tables .my-table[data-code='{c}'] b").text_content() for c in tables]
            assert len(set(shown)) == 4, shown  # four tables, four names
        screenshot(page, "my-tables-kozel-1280x800-ru")
        watch.assert_clean()
    finally:
        context.close()


def test_rows_of_one_game_tell_apart_and_show_the_whole_name_on_a_phone(
    server: ServerProcess, browser: Any
) -> None:
    """A new user's report: on a phone two rows read identically ("Domeng (5 players) · match 1
    is over") and the player's name was cut to "Al…" though there was room. Each row says when
    this browser last opened its room (today at 14:05, yesterday at 09:12: "today 2:05 PM",
    "yesterday 9:12 AM" in English, in each language its own way), and the role and the name
    are whole, wrapping if they must."""
    name = "Alexandra Kowalczyk"
    context, page, watch = open_page(browser, PHONE)
    try:
        # the page's day at 18:00, so that "today at 14:05" has passed whenever the test runs (run
        # after midnight, that row was in the future, and the room opened now never the latest)
        page.clock.install(time=datetime.now().replace(hour=18, minute=0, second=0, microsecond=0))
        _lobby(page, f"{server.url}/")
        codes = []
        for _ in range(2):
            room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
            hold_seat(page, room["code"], server.claim(room["code"], 0, name).json()["token"], 0)
            hold_host(page, room["code"], room["host_token"])
            codes.append(room["code"])
        page.evaluate(
            """([today, yesterday]) => {
                const at = (days, hour, minute) => {
                    const d = new Date(); d.setDate(d.getDate() - days); d.setHours(hour, minute, 0, 0);
                    return d.getTime(); };
                for (const [code, when] of [[today, at(0, 14, 5)], [yesterday, at(1, 9, 12)]]) {
                    const key = `domeng:room:${code}`;
                    const memory = JSON.parse(localStorage.getItem(key));
                    localStorage.setItem(key, JSON.stringify({...memory, at: when}));
                } }""",
            codes,
        )
        page.reload()
        page.wait_for_selector("#my-tables[data-loaded]:not([hidden])")
        for lang in languages():
            switch_language(page, lang)
            page.wait_for_selector("#my-tables[data-loaded]:not([hidden])")
            rows = _rows(page)
            shown = {r["code"]: r["text"] for r in rows}
            assert shown[codes[0]] != shown[codes[1]], (lang, shown)
            said = catalog_of(lang)["mine.opened_at"].split("{when}")[0]
            whens = [page.text_content(f"#my-tables .my-table[data-code='{c}'] .my-when") for c in codes]
            whens = [w or "" for w in whens]
            assert all(w.startswith(said) for w in whens), (lang, whens)
            # the clock as the language writes it: 14:05, 2:05 PM, 14.05
            assert re.search(r"[:.]05\b", whens[0]) and re.search(r"[:.]12\b", whens[1]), (lang, whens)
            assert "⟦" not in "".join(whens), (lang, whens)
            if lang == "en":
                assert "today" in whens[0] and "yesterday" in whens[1], whens
            cut = page.evaluate(
                """() => [...document.querySelectorAll('#my-tables .open-who')]
                    .filter((el) => el.scrollWidth > el.clientWidth + 1).map((el) => el.textContent)"""
            )
            assert cut == [], (lang, cut)
            assert all(name in r["text"] for r in rows if r["code"] in codes), lang
            screenshot(page, f"my-tables-when-390x844-{lang}")
        # opening yesterday's room makes it the latest, opened today; a room only watched leaves
        # nothing in the browser
        switch_language(page, "en")
        goto(page, f"{server.url}/r/{codes[1]}")
        page.wait_for_selector(".seat-row.mine")
        watched = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
        goto(page, f"{server.url}/r/{watched['code']}")
        page.wait_for_function("() => window.__domeng?.watcherTag")
        assert page.evaluate(f"() => localStorage.getItem('domeng:room:{watched['code']}')") is None
        _lobby(page, f"{server.url}/")
        assert [r["code"] for r in _rows(page)][:2] == [codes[1], codes[0]]
        assert "today" in str(page.text_content(f"#my-tables .my-table[data-code='{codes[1]}'] .my-when"))
        watch.assert_clean()
    finally:
        context.close()
