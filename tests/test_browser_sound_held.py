"""Sound after a reload, in Chromium with autoplay restricted: the player turned sound on before
(remembered in localStorage), and after a reload the browser holds the page's audio until a tap or a
key (its autoplay policy: the AudioContext starts suspended). The speaker says it waits for a tap,
in the player's language; the first tap or key anywhere lets the audio play, and a tap on the
speaker itself does the same without turning sound off."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browserkit import DESKTOP, PHONE, catalog_of, open_page, screenshot, sit_and_start
from tests.serverkit import ServerProcess

BROWSER_ARGS = ["--autoplay-policy=document-user-activation-required"]
"""Chromium's own autoplay restriction (the desktop browser's default policy)."""

HELD_AUDIO = """
(() => {
  const Real = window.AudioContext;
  if (!Real) return;
  let activated = null; // when the page last had a user activation (a trusted press), ms
  const press = (event) => {
    if (!event.isTrusted) return;
    if (event.type === "keydown" && event.key === "Escape") return;
    if (event.type === "pointerup" && event.pointerType === "mouse") return;
    activated = performance.now();
  };
  for (const type of ["keydown", "mousedown", "pointerdown", "pointerup", "touchend"]) {
    window.addEventListener(type, press, { capture: true });
  }
  const isActive = () => activated !== null && performance.now() - activated < 5000;
  window.AudioContext = class extends Real {
    constructor(...args) {
      super(...args);
      this.held = activated === null;
      if (this.held) super.suspend();
    }
    get state() { return this.held ? "suspended" : super.state; }
    resume() {
      if (this.held && !isActive()) return new Promise(() => {});
      this.held = false;
      return super.resume();
    }
  };
})();
"""
"""Chromium's autoplay policy for a page's audio, made sure of in the page: an AudioContext made
before the page's first user activation starts suspended, and its resume() waits for an activation
(a trusted key press other than Escape, a mouse press, a touch or pen lifted; transient for 5 s).
Headless Chromium lets every page's audio play whatever ``--autoplay-policy`` says (checked on
Chromium 156, its headless shell and new headless alike), and ``navigator.userActivation`` cannot
be read here: Playwright evaluates its scripts as user gestures, which activate the page."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path_factory.mktemp("browser-sound-held"),
        env={"DOMENG_BOT_DELAY_S": "0.3", "DOMENG_ROUND_PAUSE_S": "1"},
    ).start()
    yield process
    process.stop()


def _speaker(page: Any) -> dict[str, Any]:
    """The speakers' state and words (the top bar's and the feed's are painted alike; a phone shows
    the feed's) and the AudioContext's state."""
    found: list[dict[str, Any]] = page.evaluate(
        """() => [...document.querySelectorAll('.sound-toggle')].map((b) => ({
            audio: b.dataset.audio, pressed: b.getAttribute('aria-pressed'), title: b.title,
            said: b.querySelector('.sr-only').textContent,
            context: window.__domengAudio?.() ?? 'unknown'}))"""
    )
    assert found and all(each == found[0] for each in found), found
    return found[0]


def _reload_with_sound_on(page: Any) -> None:
    page.evaluate("() => localStorage.setItem('domeng:sound', 'on')")
    page.reload()
    page.wait_for_function("() => window.__domeng && window.__domeng.view !== null")
    # our turn drawn: the bots wait for us (no turn timer), so no move, flight or round's panel
    # comes over the page between Playwright's check of a click's target and the click itself
    page.wait_for_selector(".table-screen[data-my-turn='true']")


@pytest.mark.parametrize(
    ("viewport", "locale"), [(DESKTOP, "en-US"), (PHONE, "uk-UA")], ids=["desktop-en", "phone-uk"]
)
def test_sound_remembered_on_waits_for_a_tap_then_plays(
    server: ServerProcess, browser: Any, viewport: dict[str, int], locale: str
) -> None:
    catalog = catalog_of(locale[:2])
    held = {
        "audio": "held",
        "pressed": "true",
        "title": catalog["alerts.sound_held"],
        "said": catalog["alerts.sound_waiting"],
        "context": "suspended",
    }
    playing = {
        "audio": "on",
        "pressed": "true",
        "title": catalog["alerts.sound_off"],
        "said": catalog["alerts.sound"],
        "context": "running",
    }
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, viewport, locale)
    page.add_init_script(HELD_AUDIO)
    try:
        sit_and_start(page, server, room, token)
        phone = viewport == PHONE
        _reload_with_sound_on(page)
        assert _speaker(page) == held
        screenshot(page, f"sound-held-{viewport['width']}x{viewport['height']}-{locale[:2]}")
        # a tap: on a phone, opening the feed (the speaker is in its head there), on a desktop
        # on nothing in particular
        page.click(".feed-toggle" if phone else ".feed-head h2")
        page.wait_for_function("() => window.__domengAudio() === 'running'")
        assert _speaker(page) == playing

        _reload_with_sound_on(page)  # a key does it too
        assert _speaker(page) == held
        page.keyboard.press("Tab")
        page.wait_for_function("() => window.__domengAudio() === 'running'")
        assert _speaker(page) == playing

        if not phone:  # the speaker itself, while it waits: the sound stays on, and is heard
            _reload_with_sound_on(page)
            assert _speaker(page) == held
            page.evaluate("() => { window.__domengSounds = []; }")
            page.locator(".sound-toggle:visible").click()
            page.wait_for_function("() => window.__domengAudio() === 'running'")
            assert _speaker(page) == playing
            assert page.evaluate("() => localStorage.getItem('domeng:sound')") == "on"
            assert page.evaluate("() => window.__domengSounds") == [{"kind": "place", "on": True}]
            page.locator(".sound-toggle:visible").click()  # and then it turns sound off, as ever
            assert _speaker(page)["audio"] == "off"
        watch.assert_clean()
    finally:
        context.close()
