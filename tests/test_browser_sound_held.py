"""Sound after a reload, in Chromium with autoplay restricted: the player turned sound on before
(remembered in localStorage), and after a reload the browser holds the page's audio until a tap or a
key (its autoplay policy: the AudioContext starts suspended). The speaker says it waits for a tap,
in the player's language; the first tap or key anywhere lets the audio play, and a tap on the
speaker itself does the same without turning sound off. A phone's speaker is in the closed feed
drawer: the drawer's button shows the speaker's gold dot meanwhile, and its label says it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browserkit import (
    DESKTOP,
    PHONE,
    catalog_of,
    open_page,
    screenshot,
    sit_and_start,
    wait_for_a_tile_to_place,
)
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


def _drawer_button(page: Any) -> dict[str, Any]:
    """The feed drawer's button: its label, and the held-sound dot's box against the button's and
    the unread count's (None while the dot is not shown)."""
    shown: dict[str, Any] = page.evaluate(
        """() => {
            const button = document.querySelector('.feed-toggle');
            const dot = button.querySelector('.held-dot'), badge = button.querySelector('.unread-badge');
            const box = (e) => {
                const r = e.getBoundingClientRect();
                return [r.left, r.top, r.right, r.bottom];
            };
            const b = box(button), d = dot?.getClientRects().length ? box(dot) : null;
            const u = badge.getClientRects().length ? box(badge) : null;
            return {label: button.getAttribute('aria-label'), shown: !!button.getClientRects().length,
                    dot: d && {width: d[2] - d[0],
                               inside: d[0] >= b[0] && d[1] >= b[1] && d[2] <= b[2] && d[3] <= b[3],
                               clearOfBadge: !u || d[2] <= u[0] || d[3] <= u[1] || d[0] >= u[2]
                                   || d[1] >= u[3],
                               seen: document.elementFromPoint((d[0] + d[2]) / 2, (d[1] + d[3]) / 2)
                                   === dot}};
        }"""
    )
    return shown


def _reload_with_sound_on(page: Any) -> None:
    page.evaluate("() => localStorage.setItem('domeng:sound', 'on')")
    page.reload()
    page.wait_for_function("() => window.__domeng && window.__domeng.view !== null")
    # our turn with a tile to place, drawn: the bots wait for us (no turn timer), so no move,
    # flight or round's panel comes over the page between Playwright's check of a click's target
    # and the click itself (a forced pass would be played for us after a moment)
    wait_for_a_tile_to_place(page)


@pytest.mark.parametrize(
    ("viewport", "locale"),
    [(DESKTOP, "en-US"), (PHONE, "uk-UA"), ({"width": 360, "height": 740}, "hu-HU")],
    ids=["desktop-en", "phone-uk", "phone360-hu"],
)
def test_sound_remembered_on_waits_for_a_tap_then_plays(
    server: ServerProcess, browser: Any, viewport: dict[str, int], locale: str
) -> None:
    catalog = catalog_of(locale[:2])
    held = {
        "audio": "held",
        "pressed": "true",
        "title": catalog["alerts.sound_held"],
        "said": catalog["alerts.sound"],  # one fixed name with aria-pressed; the title says it waits
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
        phone = viewport != DESKTOP
        _reload_with_sound_on(page)
        assert _speaker(page) == held
        # a phone's speaker is in the closed drawer: the drawer's button has its dot, and says it
        button = _drawer_button(page)
        if phone:
            assert button["label"] == f"{catalog['table.feed']} · {catalog['alerts.sound_waiting']}", button
            assert button["dot"] == {"width": 8, "inside": True, "clearOfBadge": True, "seen": True}, button
        else:  # the speaker is on screen (the drawer's button is not)
            assert not button["shown"] and button["dot"] is None, button
        screenshot(page, f"sound-held-{viewport['width']}x{viewport['height']}-{locale[:2]}")
        # a tap: on a phone, opening the feed (the speaker is in its head there), on a desktop
        # on nothing in particular
        page.click(".feed-toggle" if phone else ".feed-head h2")
        page.wait_for_function("() => window.__domengAudio() === 'running'")
        assert _speaker(page) == playing
        button = _drawer_button(page)  # the dot and the words go with the hold
        assert button["label"] == catalog["table.feed"] and button["dot"] is None, button

        _reload_with_sound_on(page)  # a key does it too
        assert _speaker(page) == held
        page.keyboard.press("Tab")
        page.wait_for_function("() => window.__domengAudio() === 'running'")
        assert _speaker(page) == playing

        if not phone:  # the speaker itself, while it waits: the sound stays on, and is heard
            _reload_with_sound_on(page)
            assert _speaker(page) == held
            page.evaluate("() => { window.__domengSounds = []; }")
            # a press held while the browser lets the audio go (a finger rests on the glass): the
            # speaker is painted again under it, and the press is still the speaker's click
            box = page.locator(".sound-toggle:visible").bounding_box()
            assert box is not None
            page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            page.mouse.down()
            page.wait_for_function("() => window.__domengAudio() === 'running'")
            page.wait_for_selector(".sound-toggle[data-audio='on']:visible")
            page.mouse.up()
            page.wait_for_function("() => window.__domengSounds.length > 0")
            assert _speaker(page) == playing
            assert page.evaluate("() => localStorage.getItem('domeng:sound')") == "on"
            assert page.evaluate("() => window.__domengSounds") == [{"kind": "place", "on": True}]
            page.locator(".sound-toggle:visible").click()  # and then it turns sound off, as ever
            assert _speaker(page)["audio"] == "off"
        watch.assert_clean()
    finally:
        context.close()
