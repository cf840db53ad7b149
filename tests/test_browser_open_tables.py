"""The lobby's open tables in Chromium: each listed table shows how many seated people are there
now (``here``, what the list ranks by) as a people icon and a number, read out whole in the page's
language with its plural forms, and kept fresh as people come and go."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.browserkit import DESKTOP, PHONE, catalog_of, goto, open_page, screenshot, switch_language
from tests.serverkit import Client, ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("browser-open-tables"), env={"DOMENG_TURN_TIMER_S": "0"})
    process.start()
    yield process
    process.stop()


def _listed(server: ServerProcess, **options: Any) -> dict[str, Any]:
    """A new room its host listed in the lobby: the create reply. By default three free seats and
    two bots; ``options`` are `ServerProcess.create_room`'s instead."""
    room = server.create_room(
        **(options or {"bots": [None, None, None, "greedy", "greedy"], "turn_timer_s": 0})
    )
    reply = httpx.put(
        f"{server.url}/api/rooms/{room['code']}/open",
        json={"open": True},
        headers={"Authorization": f"Bearer {room['host_token']}"},
        timeout=10,
    )
    assert reply.status_code == 200, reply.text
    return room


def _seated(server: ServerProcess, code: str, seat: int, name: str) -> Client:
    """``name`` claims ``seat`` of room ``code`` and holds a socket on it."""
    claim = server.claim(code, seat, name)
    assert claim.status_code == 201, claim.text
    client = Client(server, code, claim.json()["token"])
    client.wait_for(lambda m: m["type"] == "state")
    return client


def _here(page: Any, code: str, count: int) -> dict[str, Any]:
    """What the table ``code``'s count shows once it is ``count``: its spoken words, its tooltip,
    the number shown, and whether the icon and the number are hidden from a screen reader."""
    badge = f".open-table[data-code='{code}'] .open-here[data-here='{count}']"
    page.wait_for_selector(badge)  # the list refreshes by itself
    shown: dict[str, Any] = page.eval_on_selector(
        badge,
        """(el) => ({
            said: el.querySelector('.sr-only').textContent,
            title: el.title,
            number: el.querySelector('[aria-hidden=true]:not(svg)').textContent,
            quiet: el.querySelector('svg').getAttribute('aria-hidden') === 'true',
        })""",
    )
    return shown


def test_each_open_table_shows_how_many_people_are_there(server: ServerProcess, browser: Any) -> None:
    ru, en = catalog_of("ru"), catalog_of("en")
    lively, quiet = _listed(server), _listed(server)
    ana = _seated(server, lively["code"], 0, "Ana")
    budi = _seated(server, lively["code"], 1, "Budi")
    host = Client(server, quiet["code"], host=quiet["host_token"])  # listed, nobody seated there
    host.wait_for(lambda m: m["type"] == "state")
    context, page, watch = open_page(browser, PHONE, "ru-RU")
    try:
        goto(page, f"{server.url}/")
        two = ru["open.here"]["few"].replace("{n}", "2")
        assert _here(page, lively["code"], 2) == {"said": two, "title": two, "number": "2", "quiet": True}
        nobody = ru["open.here"]["many"].replace("{n}", "0")
        assert _here(page, quiet["code"], 0) == {
            "said": nobody,
            "title": nobody,
            "number": "0",
            "quiet": True,
        }
        codes = page.eval_on_selector_all(".open-table", "els => els.map((e) => e.dataset.code)")
        assert codes.index(lively["code"]) < codes.index(quiet["code"])  # the livelier table first
        assert page.evaluate("() => document.documentElement.scrollWidth <= innerWidth")
        page.locator("#open-tables").scroll_into_view_if_needed()
        screenshot(page, "open-tables-here-390x844-ru")
        budi.close()  # one left
        assert _here(page, lively["code"], 1)["said"] == ru["open.here"]["one"].replace("{n}", "1")
        switch_language(page, "en")
        assert _here(page, lively["code"], 1)["said"] == en["open.here"]["one"].replace("{n}", "1")
        assert _here(page, quiet["code"], 0)["said"] == en["open.here"]["other"].replace("{n}", "0")
        watch.assert_clean()
    finally:
        context.close()
        for client in (ana, budi, host):
            client.close()


def test_an_open_kozel_table_in_pairs_says_so(server: ServerProcess, browser: Any) -> None:
    """The card of a Kozel pairs table said "Kozel · 1 of 4 seats free · …" like any Kozel table:
    it says it is played in pairs (K10), in the page's language; a table without pairs does not."""
    rooms = {}
    for pairs in (True, False):
        rooms[pairs] = _listed(
            server,
            variant="kozel",
            seats=4,
            options={"pairs": pairs},
            bots=[None, "greedy", None, "greedy"],
            turn_timer_s=0,
        )
    hosts = [Client(server, room["code"], host=room["host_token"]) for room in rooms.values()]
    for host in hosts:
        host.wait_for(lambda m: m["type"] == "state")
    context, page, watch = open_page(browser, PHONE, "ru-RU")
    try:
        goto(page, f"{server.url}/")
        for lang in ("ru", "en"):
            switch_language(page, lang)
            said = catalog_of(lang)["open.pairs"]
            card = f".open-table[data-code='{rooms[True]['code']}'] .open-facts"
            page.wait_for_function(
                "([card, said]) => document.querySelector(card)?.textContent.includes(said)", arg=[card, said]
            )
            other = page.text_content(f".open-table[data-code='{rooms[False]['code']}'] .open-facts") or ""
            assert said not in other, other
        assert page.evaluate("() => document.documentElement.scrollWidth <= innerWidth")
        watch.assert_clean()
    finally:
        context.close()
        for host in hosts:
            host.close()


def _in_view(page: Any, selector: str) -> bool:
    """Whether the top of ``selector``'s element is on the screen now (not scrolled past or below)."""
    return bool(
        page.eval_on_selector(
            selector,
            "(el) => { const r = el.getBoundingClientRect(); return r.top >= 0 && r.top < innerHeight; }",
        )
    )


def test_on_a_phone_the_lobby_leads_to_the_open_tables_from_the_top(
    server: ServerProcess, browser: Any
) -> None:
    """On a phone the open tables come below the whole create-room form: the hero's link, in view
    as the lobby opens, leads down to them and their Join; on a desktop they sit beside the form,
    in view already, and the link is not shown."""
    room = _listed(server)
    ana = _seated(server, room["code"], 0, "Ana")  # a table is listed while someone is there
    en = catalog_of("en")
    context, page, watch = open_page(browser, PHONE)
    try:
        goto(page, f"{server.url}/")
        page.wait_for_selector(f".open-table[data-code='{room['code']}']")
        assert not _in_view(page, "#open-tables")  # below the form
        link = page.locator(".hero .to-open-tables a")
        assert link.inner_text() == en["lobby.to_open_tables"]
        assert link.is_visible() and _in_view(page, ".hero .to-open-tables a")
        screenshot(page, "lobby-top-390x844")
        link.click()
        page.wait_for_function("() => location.hash === '#open-tables'")
        page.wait_for_function(
            "() => { const r = document.getElementById('open-tables').getBoundingClientRect();"
            " return r.top >= 0 && r.top < innerHeight; }"
        )
        assert _in_view(page, f".open-table[data-code='{room['code']}'] .open-join")
        screenshot(page, "lobby-open-tables-link-390x844")
        watch.assert_clean()
    finally:
        context.close()
    context, page, watch = open_page(browser, DESKTOP)
    try:
        goto(page, f"{server.url}/")
        page.wait_for_selector(f".open-table[data-code='{room['code']}']")
        assert _in_view(page, "#open-tables") and _in_view(page, ".new-table-card")  # side by side
        assert not page.locator(".hero .to-open-tables a").is_visible()
        watch.assert_clean()
    finally:
        context.close()
        ana.close()
