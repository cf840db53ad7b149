"""Driving the browser client with Playwright and Debian's Chromium: pages, seats, turns, checks.

Every helper works through the page the way a player does (the lobby form, the seat buttons, the
tiles in the hand, the end targets on the chain), and reads what the page shows or holds
(``window.__domeng`` is the room controller with the last ``state``). `PageWatch` records console
errors, page errors and dialogs so a test can assert that none happened.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

try:
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
except ImportError:  # the browser tests skip (conftest.browser); the helpers are never called then
    PlaywrightError = RuntimeError  # type: ignore[misc, assignment]
    PlaywrightTimeoutError = TimeoutError  # type: ignore[misc, assignment]

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
HEADLESS_SHELL = Path("/usr/bin/chromium-headless-shell")
"""Debian's build of Chromium's headless shell (package chromium-headless-shell): the same Blink and
V8 without the desktop browser around them, what Playwright itself runs for headless tests. A page
costs a third of the CPU to open there (0.2 s against 0.6 s, on this 2-core machine), which the
suite does a few hundred times; it lacks what only the desktop browser does (installing a site,
notifications), and tests of that ask for `CHROMIUM` (``FULL_CHROMIUM = True`` in their module)."""
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
CATALOGS = ROOT / "static" / "i18n"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}

PANEL = "dialog.round-end[open]"
PLAYABLE = ".hand-tile.playable"
END_TARGET = ".end-target:not([hidden])"


def catalog_of(lang: str) -> dict[str, Any]:
    """The client's words in ``lang`` (static/i18n/<lang>.json): key → text (or plural forms)."""
    words: dict[str, Any] = json.loads((CATALOGS / f"{lang}.json").read_text(encoding="utf-8"))
    return words


def languages() -> list[str]:
    """The language codes the client offers (static/i18n/index.json)."""
    index = json.loads((CATALOGS / "index.json").read_text(encoding="utf-8"))
    return [lang["code"] for lang in index["languages"]]


def launch(playwright: Any, full: bool = False, extra_args: Sequence[str] = ()) -> Any:
    """Chromium from Debian (never a downloaded browser): its headless shell (`HEADLESS_SHELL`), or
    the desktop browser (`CHROMIUM`) when ``full`` or when the shell is not installed, with
    `LAUNCH_ARGS` and ``extra_args`` (a module's ``BROWSER_ARGS``, tests/conftest.py). Skips when
    the browser needed is not installed."""
    executable = CHROMIUM if full or not HEADLESS_SHELL.exists() else HEADLESS_SHELL
    if not executable.exists():
        pytest.skip(f"{executable} is not installed: the browser tests need Debian's Chromium")
    return playwright.chromium.launch(executable_path=str(executable), args=[*LAUNCH_ARGS, *extra_args])


@dataclass
class PageWatch:
    """Console errors (Content-Security-Policy violations among them), uncaught page errors and
    dialogs seen on one page."""

    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def attach(self, page: Any) -> None:
        # the Content-Security-Policy (app.web.middleware.security_headers) must never block the client
        page.add_init_script(
            """document.addEventListener('securitypolicyviolation', (e) =>
                console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI}`));"""
        )
        page.on(
            "console", lambda msg: self.errors.append(f"console: {msg.text}") if msg.type == "error" else None
        )
        page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))

        def on_dialog(dialog: Any) -> None:
            self.dialogs.append(dialog.message)
            dialog.dismiss()

        page.on("dialog", on_dialog)

    def assert_clean(self) -> None:
        assert self.errors == [], self.errors
        assert self.dialogs == [], self.dialogs


def open_page(
    browser: Any, viewport: dict[str, int] = DESKTOP, locale: str = "en-US"
) -> tuple[Any, Any, PageWatch]:
    """A fresh context (its own localStorage) and page; animations reduced for stable screenshots."""
    context = browser.new_context(viewport=viewport, locale=locale, reduced_motion="reduce")
    page = context.new_page()
    page.set_default_timeout(90_000)  # generous: the suite must hold on a busy 2-core machine
    watch = PageWatch()
    watch.attach(page)
    return context, page, watch


def goto(page: Any, url: str) -> None:
    """Open ``url`` and wait until the client has loaded its texts and drawn the page."""
    page.goto(url)
    page.wait_for_selector("body[data-ready]")


def switch_language(page: Any, lang: str) -> None:
    """Switch the open page to ``lang`` the way the header's language menu does (static/js/i18n.js
    ``setLanguage``: the catalog loads and the page is drawn again in it, a room's table and open
    round-end panel too), and wait until it is drawn. Much cheaper than a fresh browser context per
    language (~0.6 s of CPU each), for tests that look at one page in every language."""
    page.evaluate("(code) => import('/static/js/i18n.js').then((i18n) => i18n.setLanguage(code))", lang)
    page.wait_for_function("(code) => document.documentElement.lang === code", arg=lang)


def create_room_in_lobby(page: Any, base: str, seats: list[str], timer_s: int = 0) -> str:
    """Fill the lobby form (seat choices: "person", "easy", "medium", "hard") and create the room;
    returns its code once the room page has loaded."""
    goto(page, f"{base}/")
    for seat, choice in enumerate(seats):
        page.select_option(f"#seat-{seat}", choice)
    page.fill("#turn-timer", str(timer_s))
    return submit_lobby(page)


def submit_lobby(page: Any) -> str:
    """Press the lobby's Create button; the new room's code once its page has loaded."""
    page.click("#create-room")
    page.wait_for_url("**/r/**")
    page.wait_for_selector(".seat-list")
    return str(page.url.rstrip("/").rsplit("/", 1)[1])


def hold_seat(page: Any, code: str, token: str, seat: int) -> None:
    """Put a seat token claimed over the API where the client keeps it (localStorage, static/js/api.js
    ``remember``), as if this browser had taken ``seat``: the next load of the room page plays it."""
    page.evaluate(
        "([key, memory]) => localStorage.setItem(key, memory)",
        [f"domeng:room:{code}", json.dumps({"token": token, "seat": seat})],
    )


def hold_host(page: Any, code: str, host_token: str) -> None:
    """Keep ``host_token`` where the client keeps it (beside a seat token `hold_seat` put there), as
    if this browser had created the room: the next load of the room page shows the host's controls."""
    page.evaluate(
        "([key, token]) => { const m = JSON.parse(localStorage.getItem(key) || '{}'); m.host_token = token;"
        " localStorage.setItem(key, JSON.stringify(m)); }",
        [f"domeng:room:{code}", host_token],
    )


def open_as_host(page: Any, server: Any, room: dict[str, Any]) -> None:
    """Open ``room``'s waiting room on ``server`` holding its host token (`hold_host`) and no seat,
    as the host who watches, and wait for the host's start box."""
    goto(page, f"{server.url}/r/{room['code']}")
    hold_host(page, room["code"], room["host_token"])
    page.reload()
    page.wait_for_selector(".start-box")


def open_seated(page: Any, server: Any, room: dict[str, Any], token: str, seat: int = 0) -> None:
    """Open ``room``'s waiting room on ``server`` holding ``token`` for ``seat`` (`hold_seat`), and
    wait until the page shows that seat as its own."""
    goto(page, f"{server.url}/r/{room['code']}")
    hold_seat(page, room["code"], token, seat)
    page.reload()
    page.wait_for_selector(".seat-row.mine")


def sit_and_start(
    page: Any, server: Any, room: dict[str, Any], token: str, seat: int = 0, host: bool = False
) -> None:
    """Open ``room``'s page on ``server`` (a `tests.serverkit.ServerProcess`) holding ``token`` for
    ``seat`` (`hold_seat`) and, with ``host``, the room's host token (`hold_host`), have the host
    start the match over the API, and wait for the table."""
    goto(page, f"{server.url}/r/{room['code']}")
    hold_seat(page, room["code"], token, seat)
    if host:
        hold_host(page, room["code"], room["host_token"])
    assert server.start_match(room["code"], room["host_token"]).status_code == 200
    page.reload()
    page.wait_for_selector(".table-screen")


def take_seat(page: Any, seat: int, name: str) -> None:
    """Type a name and sit in ``seat`` in the waiting room."""
    page.fill("#player-name", name)
    page.click(f".sit[data-seat='{seat}']")
    page.wait_for_selector(f".seat-row.mine[data-seat='{seat}']")


def start_match(page: Any) -> None:
    """Press the host's Start button and wait for the table."""
    page.click(".start-box .btn")
    page.wait_for_selector(".table-screen")


def held(page: Any) -> dict[str, Any]:
    """What the page holds: the last state's view and room, the seat and version, the round end."""
    result: dict[str, Any] = page.evaluate(
        """() => {
            const c = window.__domeng;
            return c && {view: c.view, room: c.room, seat: c.seat, version: c.version,
                         roundEnd: c.roundEnd && {round: c.roundEnd.round, view: c.roundEnd.view,
                                                  seed: c.roundEnd.seed, commitment: c.roundEnd.commitment}};
        }"""
    )
    return result


def close_panel(page: Any, timeout: float = 90.0) -> None:
    """Close the round-end panel if it is open. The page also folds it away by itself (the next
    round dealt, or our turn): a panel that went while we clicked is closed just the same."""
    deadline = time.monotonic() + timeout
    while page.locator(PANEL).count():
        if time.monotonic() > deadline:
            raise TimeoutError(f"the round-end panel stays open; the page: {describe(page)}")
        with contextlib.suppress(PlaywrightTimeoutError):  # gone (or not yet clickable): look again
            page.locator(f"{PANEL} .panel-foot .btn-gold").click(timeout=2000)
            page.wait_for_selector(PANEL, state="detached", timeout=5000)


def wait_for_a_tile_to_place(page: Any, timeout_s: float = 90) -> None:
    """Wait until it is the page's seat's turn with a tile to place (not a forced pass, which the
    server plays for the seat after a moment, nor a Kozel draw, the page's own). Without a turn
    timer the table then waits on this page: nothing moves until it plays. A test that waited only
    for ``to_act`` could be on a forced pass: the turn left and came back (a phone's feed drawer
    steps aside when a turn comes) while the test looked."""
    page.wait_for_function(
        """() => { const c = window.__domeng, v = c?.view;
            return !!v && v.phase === 'playing' && v.to_act === c.seat
                && (v.legal || []).some((a) => a.play !== undefined); }""",
        timeout=timeout_s * 1000,
    )
    page.wait_for_selector(".table-screen[data-my-turn='true']")  # the table has drawn the turn


def play_turn(page: Any, keyboard: bool = False, at_version: int | None = None) -> bool:
    """Play one of the raised (legal) tiles if it is our turn; choose an end when the page asks.

    With ``keyboard``, the tile is focused and played with Enter, and so is the end target (the page
    moves focus to the left end when an end must be chosen). With ``at_version``, only a turn the
    page had at that version is played (a caller looked at that state). Returns whether a move was
    sent.
    """
    # the version first: a state that comes after it (the round ending as we look) then satisfies
    # the wait below, where reading it after finding the tile could wait for a move never made
    version = version_of(page)
    if at_version is not None and version != at_version:
        return False  # a state came after the caller's look: it looks again first
    tile = page.locator(PLAYABLE).first
    if not tile.count():
        return False
    try:  # 5 s: under load, Playwright's checks before a click took over a second
        if keyboard:
            tile.focus(timeout=5000)
            page.keyboard.press("Enter")
        else:
            tile.click(timeout=5000)
    except Exception:  # the turn moved on between looking and clicking
        return False
    if page.locator(END_TARGET).count():
        if keyboard:
            page.keyboard.press("Enter")
        else:
            page.locator(END_TARGET).last.click()
    try:
        page.wait_for_function(f"() => window.__domeng.version > {version}", timeout=30_000)
    except PlaywrightTimeoutError:
        # no new state: the click was not taken as a move, or the move was refused (the page says
        # why and stays at its version). A player looks again; a page stuck with its move pending
        # shows no playable tile, so the caller's own deadline still catches that.
        if version_of(page) == version and page.locator(PLAYABLE).count():
            print(f"play_turn: no new state 30 s after a move at version {version}: {describe(page)}")
            return False
        raise
    return True


def play_until(page: Any, done: Callable[[], bool], timeout: float = 60.0, keyboard: bool = False) -> int:
    """Play our turns until ``done()``; closes round-end panels that are in the way unless ``done``
    is already true. Returns the number of moves made."""
    moves = 0
    deadline = time.monotonic() + timeout
    while True:
        seen = version_of(page)  # before looking: a state that comes meanwhile ends the wait below
        if done():
            break
        if time.monotonic() > deadline:
            raise TimeoutError(f"condition not reached after {moves} moves; the page: {describe(page)}")
        if page.locator(PANEL).count():
            if done():  # the panel opened after the look above: it may be what ``done`` waits for
                break
            close_panel(page)
            continue
        # only the turn ``done`` looked at: a state that came since (our turn, say with a choice,
        # drawn in one update with everything ``done`` may look at) is looked at before it is played
        if play_turn(page, keyboard=keyboard, at_version=seen):
            moves += 1
        else:
            wait_for_version(page, seen)
    return moves


def round_ended(page: Any, since: int = 1) -> bool:
    """Whether the page has seen round ``since`` (of its match) or a later one end: the controller's
    ``roundEnd``, set as a round ends. A `play_until` that waits for the round-end panel instead
    (``PANEL``) can miss it: the panel folds away by itself when the next round is dealt,
    ``DOMENG_ROUND_PAUSE_S`` later (a second in many modules), and a test slowed by a busy machine
    may look only before it opened and after it went, then play on, round after round, to the
    match's end (whose final panel stays)."""
    return bool(page.evaluate("(since) => (window.__domeng?.roundEnd?.round ?? 0) >= since", since))


def describe(page: Any) -> str:
    """What a failing test needs to know about the page: the seat, version, phase, turn, whether a
    move is pending, the tile being placed, the playable tiles and the toasts on screen. Also saves
    a screenshot (artifacts/screenshots/failure-*.png)."""
    try:
        state = page.evaluate(
            """() => {
                const c = window.__domeng, s = c && c.screen, v = c && c.view;
                return {seat: c && c.seat, version: c && c.version, phase: v && v.phase,
                        turn: v && v.to_act, legal: v && v.legal, room_turn: c && c.room && c.room.turn,
                        connection: c && c.connection, pending: s && s.pending, choosing: s && s.choosing,
                        playable: document.querySelectorAll('.hand-tile.playable').length,
                        toasts: [...document.querySelectorAll('.toast')].map((e) => e.textContent)};
            }"""
        )
        screenshot(page, f"failure-{int(time.time() * 1000)}", always=True)
        return json.dumps(state)
    except Exception as error:  # the page itself is gone: say so rather than hide the first error
        return f"(could not read the page: {error})"


def shown_stones(page: Any) -> dict[str, Any]:
    """In one tick: the stones each seat's plate shows, the table pile, and the page's view."""
    result: dict[str, Any] = page.evaluate(
        """() => {
            const plates = {};
            for (const el of document.querySelectorAll('.plate-stones[data-seat-stones]')) {
                plates[el.dataset.seatStones] = Number(el.querySelector('.count').textContent);
            }
            const v = window.__domeng.view;
            return {plates, pile: Number(document.querySelector('.pile-count').textContent),
                    stones: v.stones, table: v.table};
        }"""
    )
    return result


def text_of(page: Any) -> str:
    """All visible text of the page, open dialogs included."""
    return str(page.evaluate("() => document.body.innerText"))


def screenshot(page: Any, name: str, always: bool = False) -> Path | None:
    """Save a screenshot as artifacts/screenshots/NAME.png (git-ignored) and return its path, when
    ``DOMENG_SCREENSHOTS`` is set (``DOMENG_SCREENSHOTS=1 scripts/test`` keeps every page a test
    shows) or ``always``; None otherwise. A shot costs the browser 0.1–0.3 s of CPU, and nothing
    reads most of them, so by default only the tests that check shots and failures take them."""
    if not always and not os.environ.get("DOMENG_SCREENSHOTS"):
        return None
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def hold_clock(page: Any, tries: int = 6) -> None:
    """Stop ``page``'s clock (installed with ``page.clock.install``) where it is, give or take a
    few ms: its timers run only as the test moves it on. Playwright pauses only at a time still to
    come, and a busy machine may spend any margin between reading the page's time and pausing
    it: each try that finds its time past asks for a margin 4 times longer (50 ms, then 200…).
    Raises Playwright's error after ``tries`` such tries, or at once for any other."""
    ahead_ms = 50
    for left in range(tries - 1, -1, -1):
        now_ms = page.evaluate("() => Date.now()")
        try:
            page.clock.pause_at((now_ms + ahead_ms) / 1000)  # Playwright's number: seconds
            return
        except PlaywrightError as error:
            if not left or "to the past" not in str(error):
                raise
            ahead_ms *= 4


def version_of(page: Any) -> int | None:
    """The version of the last state the page holds (None before its first)."""
    version: int | None = page.evaluate("() => window.__domeng ? window.__domeng.version : null")
    return version


def wait_for_version(page: Any, seen: int | None, timeout_s: float = 1.0) -> None:
    """Wait until the page holds a state past version ``seen`` (`version_of`, read before the
    caller looked at the page), or at most ``timeout_s`` seconds: what a player could act on comes
    with a new state, and anything else (presence, timers) is looked at again after the timeout.
    The page checks (every 50 ms, inside the renderer); a look from here costs ~4 ms of CPU in
    three processes, so loops wait here instead of polling."""
    with contextlib.suppress(PlaywrightTimeoutError):
        page.wait_for_function(
            "(seen) => !window.__domeng || window.__domeng.version !== seen",
            arg=seen,
            polling=50,
            timeout=timeout_s * 1000,
        )


class SocketPlayer:
    """A person at ``seat`` played by a WebSocket client in a thread: it takes the first legal
    action of every turn (through the protocol, like any client), until `stop`."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.done = threading.Event()
        self.moves = 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.done.is_set():
            try:
                message = self.client.recv(timeout=0.3)
            except TimeoutError:
                continue
            except Exception:  # the socket closed
                return
            if self.client.answer(message):
                self.moves += 1

    def stop(self) -> None:
        self.done.set()
        self.thread.join(5)
        self.client.close()
