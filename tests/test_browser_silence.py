"""A browser whose server stops answering (a process stopped with SIGSTOP, a dead network): the
page's heartbeat (static/js/connection.js) finds its ping unanswered and reconnects at once, without
waiting for a closing handshake the stopped server would never answer. The page's clock is
Playwright's (``page.clock``), moved forward as a laptop lid closed for a while would; the server is
a real process, stopped and resumed with signals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.browserkit import DESKTOP, PLAYABLE, hold_clock, open_page, sit_and_start
from tests.serverkit import ServerProcess

PING_EVERY_MS = 10_000
UNANSWERED_MS = 15_000
"""static/js/connection.js's heartbeat."""


def _ana_at_her_turn(server: ServerProcess, page: Any) -> None:
    """Ana in seat 0 of a new room of ``server``, with four bots and no turn timer, on ``page``
    (its clock Playwright's from now on), until her turn: the room waits on her."""
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    page.clock.install()
    sit_and_start(page, server, room, token)
    page.wait_for_selector(PLAYABLE, timeout=90_000)


def test_an_unanswered_ping_leaves_a_stopped_server_for_a_new_socket(tmp_path: Path, browser: Any) -> None:
    server = ServerProcess(tmp_path / "stalled").start()
    context, page, watch = open_page(browser, DESKTOP)
    try:
        _ana_at_her_turn(server, page)
        with server.paused():
            page.clock.fast_forward(PING_EVERY_MS + 1_000)  # a ping goes out, and nothing answers it
            assert page.locator(".banner[data-kind='reconnecting']").count() == 0
            page.clock.fast_forward(UNANSWERED_MS + 1_000)  # still unanswered: the page gives it up
            page.wait_for_selector(".banner[data-kind='reconnecting']", timeout=10_000)
        page.wait_for_function("() => window.__domeng.socket.online", timeout=60_000)
        page.wait_for_selector(".banner[data-kind='reconnecting']", state="hidden")
        page.wait_for_selector(PLAYABLE)  # and the turn is there again
        watch.assert_clean()
    finally:
        context.close()
        server.stop()


MOVE_TROUBLE_MS = 2_000
"""static/js/connection.js: a ping that went with a move, unanswered this long, is said."""


def test_a_message_heard_in_the_millisecond_a_ping_goes_is_not_its_answer(
    tmp_path: Path, browser: Any
) -> None:
    """A frame heard in the same millisecond as a ping went out (under a clock held still, every
    one is) came before the ping could be answered: the ping still waits, and a silent server is
    said within `MOVE_TROUBLE_MS`. Before, the heartbeat compared times (``lastHeard <
    pingSent``): the ping counted as answered and the page never said anything (the CI's flaky
    tests/test_browser_outage.py)."""
    server = ServerProcess(tmp_path / "same_ms").start()
    context, page, watch = open_page(browser, DESKTOP)
    socket = "window.__domeng.socket"
    try:
        _ana_at_her_turn(server, page)
        page.wait_for_function(f"() => {socket}.online")
        hold_clock(page)
        with server.paused():
            # in one turn of the page's loop: a frame heard (a pong), then a move's ping out
            page.evaluate(f"s => {{ {socket}.receive(s); {socket}.ping(true); }}", '{"type": "pong"}')
            page.clock.fast_forward(MOVE_TROUBLE_MS + 500)
            page.wait_for_selector(".banner[data-kind='trouble']", timeout=10_000)
        page.clock.resume()
        page.wait_for_selector(".banner", state="hidden", timeout=60_000)
        page.wait_for_selector(PLAYABLE)
        watch.assert_clean()
    finally:
        context.close()
        server.stop()


BACKOFF_CAP_MS = 3_000 * 1.3
"""The longest wait between two tries after a drop: static/js/connection.js's last backoff step
plus its 30% at random."""


def test_a_restarted_server_is_found_again_within_a_few_seconds(tmp_path: Path, browser: Any) -> None:
    """The server goes away (its process ended, as by Ctrl+C) and comes back on the same port: the
    page tries again at least every ``BACKOFF_CAP_MS`` of its clock however long it was gone (the
    steps once grew to 8 s, so a player waited about 10 s after a restart), and at once when the
    tab is shown again (a phone woken up)."""
    data = tmp_path / "restarted"
    server = ServerProcess(data).start()
    context, page, watch = open_page(browser, DESKTOP)
    try:
        _ana_at_her_turn(server, page)
        port = int(server.url.rsplit(":", 1)[1])
        server.stop()
        page.wait_for_selector(".banner[data-kind='reconnecting']", timeout=30_000)
        socket = "window.__domeng.socket"
        for _ in range(8):  # past the last step: every try is refused, and the next one waits
            page.wait_for_function(f"() => {socket}.retrying", timeout=30_000)
            tried = page.evaluate(f"() => {socket}.attempt")
            page.clock.fast_forward(int(BACKOFF_CAP_MS) + 50)
            page.wait_for_function(f"n => {socket}.attempt > n", arg=tried, timeout=30_000)
        page.wait_for_function(f"() => {socket}.retrying", timeout=30_000)
        # the browser logs each refused try itself, and nothing else went wrong meanwhile
        assert watch.errors and all("ERR_CONNECTION_REFUSED" in e for e in watch.errors), watch.errors
        watch.errors.clear()
        server = ServerProcess(data, port=port).start()
        # the tab is shown again (a phone woken up): it tries now, not at its next step
        page.evaluate("() => document.dispatchEvent(new Event('visibilitychange'))")
        page.wait_for_function(f"() => {socket}.online", timeout=60_000)
        page.wait_for_selector(".banner[data-kind='reconnecting']", state="hidden")
        page.wait_for_selector(PLAYABLE)  # the turn is there again, with the same seat
        watch.assert_clean()
    finally:
        context.close()
        server.stop()
