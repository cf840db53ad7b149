"""Sound, notifications and the installable app (issue 14) in Chromium: the web app manifest and its
icons as Chromium reads them (no installability error), the sound switch (off on a first visit,
remembered), the sounds of a turn and a tile placed, and a notification when the player's turn
comes while the tab is hidden; on a phone and a desktop, in more than one language."""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.browserkit import (
    DESKTOP,
    PHONE,
    PLAYABLE,
    catalog_of,
    goto,
    languages,
    open_page,
    play_turn,
    sit_and_start,
    switch_language,
)
from tests.serverkit import ServerProcess, lan_address

FULL_CHROMIUM = True
"""Installing a site and notifications are the desktop browser's: Chromium's headless shell (the
other browser tests') checks no installability and has no Notification to send."""

# The tab is "hidden" while window.__hidden is true (Chromium shows every headless page), and every
# Notification the page creates is kept in window.__notices (a test cannot see the system's).
HIDDEN_TAB = """
Object.defineProperty(document, 'hidden', {configurable: true, get: () => !!window.__hidden});
Object.defineProperty(document, 'visibilityState', {configurable: true,
    get: () => (window.__hidden ? 'hidden' : 'visible')});
if ('Notification' in window) {
  const Real = window.Notification;
  window.Notification = class extends Real {
    constructor(title, options) {
      super(title, options);
      (window.__notices ||= []).push({title, body: options && options.body, tag: options && options.tag});
    }
  };
}
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path_factory.mktemp("browser-alerts"),
        env={"DOMENG_BOT_DELAY_S": "0.2", "DOMENG_ROUND_PAUSE_S": "1"},
    ).start()
    yield process
    process.stop()


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_the_manifest_and_its_icons_make_the_site_installable(server: ServerProcess, browser: Any) -> None:
    reply = httpx.get(f"{server.url}/manifest.webmanifest", timeout=10)
    assert reply.status_code == 200
    assert reply.headers["content-type"].startswith("application/manifest+json")
    manifest = reply.json()
    assert manifest["start_url"] == "/" and manifest["display"] == "standalone"
    purposes = set()
    for entry in manifest["icons"]:
        icon = httpx.get(f"{server.url}{entry['src']}", timeout=10)
        assert icon.status_code == 200, entry
        if entry["type"] == "image/png":
            width, height = _png_size(icon.content)
            assert f"{width}x{height}" == entry["sizes"], entry
            purposes.add((entry["purpose"], width))
    assert {("any", 192), ("any", 512), ("maskable", 512)} <= purposes

    context, page, watch = open_page(browser, PHONE)
    warnings: list[str] = []
    page.on("console", lambda msg: warnings.append(msg.text) if msg.type == "warning" else None)
    try:
        goto(page, f"{server.url}/")
        # a new user's report: every page warned that the apple-only meta tag is deprecated
        assert page.locator("meta[name='mobile-web-app-capable'][content='yes']").count() == 1
        assert not [w for w in warnings if "mobile-web-app-capable" in w], warnings
        cdp = context.new_cdp_session(page)
        read = cdp.send("Page.getAppManifest")
        assert read["url"].endswith("/manifest.webmanifest") and read["errors"] == [], read["errors"]
        assert json.loads(read["data"])["name"] == "Domeng Online"
        errors = cdp.send("Page.getInstallabilityErrors")["installabilityErrors"]
        # a Playwright context is an incognito profile, which Chromium never installs from; every
        # other check (manifest, icons, start URL, display) passed when that is the only error
        assert [e["errorId"] for e in errors] == ["in-incognito"], errors
        watch.assert_clean()
    finally:
        context.close()


@pytest.mark.parametrize(
    ("viewport", "locale"), [(PHONE, "ru-RU"), (DESKTOP, "en-US")], ids=["phone-ru", "desktop-en"]
)
def test_sounds_are_off_until_turned_on_and_a_hidden_tab_is_notified_of_its_turn(
    server: ServerProcess, browser: Any, viewport: dict[str, int], locale: str
) -> None:
    lang = locale[:2]
    catalog = catalog_of(lang)
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, viewport, locale)
    context.grant_permissions(["notifications"], origin=server.url)
    page.add_init_script(HIDDEN_TAB)
    try:
        sit_and_start(page, server, room, token)
        # our turn first: nothing moves until we play, so a phone's feed opened now stays open (the
        # page closes it when our turn comes, static/js/room.js)
        page.wait_for_selector(PLAYABLE, timeout=90_000)
        toggle = page.locator(".sound-toggle:visible").first
        if not toggle.count():  # on a phone the switches are in the feed's head
            page.click(".feed-toggle")
            toggle = page.locator(".sound-toggle:visible").first
        assert toggle.get_attribute("aria-pressed") == "false"  # quiet on a first visit
        assert toggle.get_attribute("title") == catalog["alerts.sound_on"]
        toggle.click()
        assert toggle.get_attribute("aria-pressed") == "true"
        page.reload()  # remembered
        page.wait_for_selector(".table-screen")
        # the page has its state again (welcome) before the tab hides: a turn drawn only now would
        # sound as if it had come while hidden, with nothing played before it
        page.wait_for_function("() => window.__domeng && window.__domeng.view !== null")
        assert {t.get_attribute("aria-pressed") for t in page.locator(".sound-toggle").all()} == {"true"}
        # allowed already: the bell shows them on, and turns them off (both bars' bells, a phone's too)
        bells = page.locator(".notify-toggle")
        assert {b.get_attribute("aria-pressed") for b in bells.all()} == {"true"}
        assert bells.first.get_attribute("title") == catalog["alerts.notify_off"]
        assert page.evaluate("() => document.documentElement.scrollWidth <= innerWidth")  # nothing pushed off

        # hide the tab; if the turn is ours already, play it: the next one comes while hidden
        page.evaluate("() => { window.__hidden = true; window.__domengSounds = []; window.__notices = []; }")
        play_turn(page)
        page.wait_for_function("() => (window.__notices || []).length > 0", timeout=90_000)
        notice = page.evaluate("() => window.__notices[0]")
        assert notice["title"] == "Domeng Online"
        assert notice["body"] == catalog["alerts.turn_body"].replace("{code}", room["code"])
        sounds = page.evaluate("() => window.__domengSounds")
        assert {"kind": "turn", "on": True} in sounds
        # the bots' moves before our turn (a tile each, or a pass when a bot has none to play)
        assert any(s["kind"] in ("place", "pass") for s in sounds), sounds

        page.evaluate("() => { window.__hidden = false; window.__domengSounds = []; }")
        page.wait_for_selector(PLAYABLE)  # the notice came with a tile to choose
        assert play_turn(page)
        page.wait_for_function("() => window.__domengSounds.some((s) => s.kind === 'place')")
        # the bell turns them off, remembered: a hidden tab is no longer notified. Wait for our turn
        # first: nothing moves until we play, so a phone's feed opened now is not closed under the click
        # by our turn coming (static/js/room.js)
        page.wait_for_selector(PLAYABLE, timeout=90_000)
        if not page.locator(".notify-toggle:visible").count():
            page.click(".feed-toggle")
        page.locator(".notify-toggle:visible").first.click()
        assert {b.get_attribute("aria-pressed") for b in bells.all()} == {"false"}
        assert page.evaluate("() => localStorage.getItem('domeng:notify')") == "off"
        page.reload()
        page.wait_for_function("() => window.__domeng && window.__domeng.view !== null")
        assert {b.get_attribute("aria-pressed") for b in page.locator(".notify-toggle").all()} == {"false"}
        page.evaluate("() => { window.__hidden = true; window.__notices = []; window.__domengSounds = []; }")
        page.wait_for_selector(PLAYABLE)  # still our turn after the reload
        assert play_turn(page)  # the next turn comes while hidden
        page.wait_for_function("() => window.__domengSounds.some((s) => s.kind === 'turn')", timeout=90_000)
        assert page.evaluate("() => window.__notices.length") == 0
        watch.assert_clean()
    finally:
        context.close()


def test_the_bell_is_off_until_notifications_are_allowed(server: ServerProcess, browser: Any) -> None:
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, DESKTOP)
    try:
        sit_and_start(page, server, room, token)
        permission = page.evaluate("() => Notification.permission")
        bell = page.locator(".notify-toggle:visible")
        assert bell.count() == 1  # to ask, or (where this Chromium decided already) to say so
        assert bell.get_attribute("aria-pressed") == "false"
        assert permission in ("default", "denied")
        assert page.locator(".sound-toggle:visible").get_attribute("aria-pressed") == "false"
        watch.assert_clean()
    finally:
        context.close()


DENIED = "Object.defineProperty(Notification, 'permission', {configurable: true, get: () => 'denied'});"
"""The browser's answer "blocked" (this Chromium cannot be told to refuse a permission)."""


def test_the_bell_says_where_notifications_are_blocked(server: ServerProcess, browser: Any) -> None:
    """Pressed where the browser blocks notifications, the bell did nothing visible, and was gone
    after a reload: it stays, off, and says how to allow them. Before it is pressed too (a new
    user's report: its title offered to notify them): it says they are blocked, in every
    language."""
    catalog = catalog_of("en")
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, DESKTOP)
    page.add_init_script(DENIED)
    try:
        sit_and_start(page, server, room, token)
        bell = page.locator(".notify-toggle:visible")
        assert bell.get_attribute("aria-pressed") == "false"
        assert bell.get_attribute("data-notify") == "blocked"
        for lang in languages():
            switch_language(page, lang)
            assert bell.get_attribute("title") == catalog_of(lang)["alerts.notify_blocked"], lang
        switch_language(page, "en")
        bell.click()
        toast = page.wait_for_selector("#toasts .toast")
        assert toast.text_content() == catalog["alerts.notify_blocked"]
        assert bell.get_attribute("aria-pressed") == "false"
        watch.assert_clean()
    finally:
        context.close()


def test_over_plain_http_from_a_lan_address_the_bell_says_notifications_need_https(
    browser: Any, tmp_path: Path
) -> None:
    """A table opened as http://192.168.1.20:8000 (a LAN address, plain http) is no secure context:
    Chromium still has Notification but refuses it without asking, whatever the site settings. The
    bell said to allow notifications in the site settings, which cannot help; it now says they
    need https, in every language, and turns nothing on."""
    address = lan_address()
    if address is None:
        pytest.skip("this machine has no address but loopback")
    process = ServerProcess(tmp_path, env={"DOMENG_BOT_DELAY_S": "0.2"}, host=address).start()
    context, page, watch = open_page(browser, DESKTOP)
    try:
        assert process.url.startswith(f"http://{address}:")
        room = process.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
        token = process.claim(room["code"], 0, "Ana").json()["token"]
        sit_and_start(page, process, room, token)
        assert page.evaluate("() => [window.isSecureContext, 'Notification' in window]") == [False, True]
        bell = page.locator(".notify-toggle:visible")
        for lang in languages():
            switch_language(page, lang)
            said = catalog_of(lang)["alerts.notify_insecure"]
            assert bell.get_attribute("data-notify") == "insecure", lang
            assert bell.get_attribute("title") == said and bell.get_attribute("aria-pressed") == "false"
        bell.click()
        toast = page.wait_for_selector("#toasts .toast")
        assert toast.text_content() == catalog_of(languages()[-1])["alerts.notify_insecure"]
        assert page.evaluate("() => localStorage.getItem('domeng:notify')") is None
        assert bell.get_attribute("aria-pressed") == "false"
        # Chromium says (as an error) that it ignores the Cross-Origin-Opener-Policy header on an
        # untrustworthy origin; nothing else may go wrong
        ignored = "Cross-Origin-Opener-Policy header has been ignored"
        watch.errors = [e for e in watch.errors if ignored not in e]
        watch.assert_clean()
    finally:
        context.close()
        process.stop()


def test_a_click_dismisses_a_toast_and_the_space_around_it_stays_clickable(
    server: ServerProcess, browser: Any
) -> None:
    context, page, watch = open_page(browser, PHONE)
    goto(page, server.url)
    page.evaluate("async () => (await import('/static/js/dom.js')).toast('Saved', 'ok', 60000)")
    page.wait_for_selector("#toasts .toast-ok")
    # nothing lies over the toast: a real click reaches it (before, the box's pointer-events: none
    # was inherited, and the click went to the page under it)
    page.click("#toasts .toast-ok")
    page.wait_for_selector("#toasts .toast-ok", state="detached")
    watch.assert_clean()
    context.close()


def test_the_pages_answer_head_as_they_answer_get(server: ServerProcess) -> None:
    """A new user's report: ``HEAD /`` answered 405 (a link checker or uptime monitor asks that
    way). Each page answers HEAD with GET's status and headers, and no body."""
    for path in ("/", "/r/someRoomCode", "/rules", "/docs", "/manifest.webmanifest"):
        got = httpx.get(f"{server.url}{path}", timeout=10)
        head = httpx.head(f"{server.url}{path}", timeout=10)
        assert (head.status_code, got.status_code) == (200, 200), path
        assert head.headers["content-type"] == got.headers["content-type"], path
        assert head.headers["content-length"] == got.headers["content-length"], path
        assert head.content == b"", path
