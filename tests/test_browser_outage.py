"""A move made while the network is down: the page says it is sending, says within seconds that the
connection is in trouble, gives the socket up a few seconds later, and after the reconnect its move
is played exactly once, or dropped with the hand free again (static/js/room.js ``settleOutbox``,
static/js/connection.js ``heartbeat``). A silent network is a TCP relay between the browser and the
server that stops passing bytes without closing anything (tests/clusterkit.py ``ThreadedProxy``:
``stall``, then ``flow`` or ``cut``); a lost network is the DevTools protocol's offline emulation
(``Network.emulateNetworkConditions``), which holds a socket's frames rather than closing it. The
page's clock is Playwright's (``page.clock``), held still while the network is silent and moved
forward past the heartbeat's steps; the server is a real process."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.browserkit import DESKTOP, PLAYABLE, catalog_of, hold_clock, open_page, sit_and_start
from tests.clusterkit import ThreadedProxy
from tests.serverkit import ServerProcess

UNANSWERED_MS = 15_000
"""static/js/connection.js's heartbeat: an idle ping unanswered this long is given up."""
MOVE_TROUBLE_MS = 2_000
MOVE_UNANSWERED_MS = 5_000
"""…and the ping that goes with a move: unanswered this long it is said, then given up."""

NO_COVER = {"DOMENG_DISCONNECT_GRACE_S": "600"}
"""No bot covers the absent seat meanwhile: nothing moves the table on but the player (no turn timer),
so the state the page finds after its reconnect has the version its move was sent at."""

WORDS = catalog_of("en")


def _ana_at_her_turn(server: ServerProcess, page: Any) -> str:
    """Ana in seat 0 of a new room of ``server`` with four bots and no turn timer, on ``page`` (its
    clock Playwright's from now on), until her turn; the room's code."""
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    page.clock.install()
    sit_and_start(page, server, room, token)
    page.wait_for_selector(PLAYABLE, timeout=90_000)
    return str(room["code"])


def _offline(context: Any, page: Any, offline: bool) -> Any:
    """Cut (or give back) ``page``'s network as DevTools does; the DevTools session."""
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    conditions = {"offline": offline, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
    cdp.send("Network.emulateNetworkConditions", conditions)
    return cdp


def _play_offline(context: Any, page: Any) -> tuple[int, str | None, Any]:
    """Cut ``page``'s network (`_offline`) and at once play its first playable tile (at an end,
    when asked); the version and tile the move was made at, and the DevTools session."""
    version = page.evaluate("() => window.__domeng.version")
    tile = page.locator(PLAYABLE).first.get_attribute("data-tile")
    cdp = _offline(context, page, True)
    page.locator(PLAYABLE).first.click()
    if page.locator(".end-target:not([hidden])").count():
        page.locator(".end-target:not([hidden])").last.click()
    return version, tile, cdp


def _play(page: Any) -> tuple[int, str | None]:
    """Play ``page``'s first playable tile (at an end, when asked) and wait until its status says
    the move is being sent; the version and tile the move was made at."""
    version: int = page.evaluate("() => window.__domeng.version")
    tile = page.locator(PLAYABLE).first.get_attribute("data-tile")
    page.locator(PLAYABLE).first.click()
    if page.locator(".end-target:not([hidden])").count():
        page.locator(".end-target:not([hidden])").last.click()
    page.wait_for_function(
        "(text) => document.querySelector('.status').textContent === text", arg=WORDS["table.sending"]
    )
    return version, tile


def _ana_through(proxy: ThreadedProxy, server: ServerProcess, page: Any) -> str:
    """`_ana_at_her_turn`, the page reaching ``server`` through ``proxy`` (the test's calls do not)."""
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    page.clock.install()
    sit_and_start(page, SimpleNamespace(url=proxy.url, start_match=server.start_match), room, token)
    page.wait_for_selector(PLAYABLE, timeout=90_000)
    return str(room["code"])


def _wait_until_server_lost(server: ServerProcess, code: str, timeout: float = 30.0) -> None:
    """Wait until the server no longer counts seat 0 connected: its socket is gone."""
    deadline = time.monotonic() + timeout
    while server.room(code)["seats"][0]["connected"]:
        assert time.monotonic() < deadline, "the server still holds the socket"
        time.sleep(0.2)


def _placed_by_ana(page: Any, tile: str) -> int:
    """How many times the logs of the rounds the page keeps (the match's first here: the round
    of the move, and the next if the move ended it and the next was dealt before the test looked)
    say seat 0 placed ``tile`` (either way round). Raises AssertionError, with the last events
    the page holds, when it is not exactly once."""
    count: int = page.evaluate(
        """(tile) => { const key = (t) => t.split('-').sort().join('-');
            return [...window.__domeng.rounds.values()].flatMap((r) => r.log).filter((e) =>
                e.type === 'placed' && e.seat === 0 && key(e.tile) === key(tile)).length; }""",
        tile,
    )
    if count != 1:
        log = page.evaluate("() => JSON.stringify(window.__domeng.view.log.slice(-8))")
        raise AssertionError(f"{tile} placed by seat 0 {count} times; the page's last events: {log}")
    return count


@pytest.mark.parametrize("outage", ["held", "lost"])
def test_a_move_into_a_silent_network_is_given_up_within_seconds_and_played_once(
    tmp_path: Path, browser: Any, outage: str
) -> None:
    """The user's lock-up: the network goes silent (nothing passes, nothing is closed: wifi gone)
    and the player moves at once. Within `MOVE_TROUBLE_MS` the page says the connection is
    unsteady, and after `MOVE_UNANSWERED_MS` it gives the socket up and says it is reconnecting
    (before: unsteady after 4 s, given up only after 15 s, the move seeming to vanish meanwhile).
    When the network is back the move is played exactly once: ``held``, the relay lets the held
    bytes go (the first copy may arrive as well as the one sent again on the new socket: the
    second is refused ``stale_version``, quietly); ``lost``, the connections died with the outage
    (the move with them; before, a page whose socket died with its move kept it "pending" for
    ever under "Your turn", and the others waited on it until a reload)."""
    server = ServerProcess(tmp_path / "silent", env=NO_COVER).start()
    context, page, watch = open_page(browser, DESKTOP)
    with ThreadedProxy(server.url) as proxy:
        try:
            code = _ana_through(proxy, server, page)
            welcomes = page.evaluate("() => window.__domeng.socket.welcomes")
            hold_clock(page)
            proxy.stall()
            version, tile = _play(page)
            page.clock.fast_forward(MOVE_TROUBLE_MS + 500)
            page.wait_for_selector(".banner[data-kind='trouble']")
            page.clock.fast_forward(MOVE_UNANSWERED_MS - MOVE_TROUBLE_MS)
            page.wait_for_selector(".banner[data-kind='reconnecting']")
            assert page.locator(f".hand-tile[data-tile='{tile}']").count() == 1  # not played yet
            if outage == "lost":
                proxy.cut()  # both ends closed: the server loses the socket, and the move held in it
                _wait_until_server_lost(server, code)
                proxy.mend()
            proxy.flow()
            page.clock.resume()
            page.wait_for_function(f"() => window.__domeng.version > {version}", timeout=30_000)
            page.wait_for_function("() => !window.__domeng.outbox")
            page.wait_for_selector(".banner", state="hidden")
            assert page.evaluate("() => window.__domeng.socket.welcomes") > welcomes
            assert _placed_by_ana(page, str(tile)) == 1
            assert page.locator(f".hand-tile[data-tile='{tile}']").count() == 0
            assert page.locator(".status").text_content() != WORDS["table.sending"]
            # a socket given up while it was still connecting, or cut, says so in the console
            watch.errors[:] = [e for e in watch.errors if "WebSocket connection to" not in e]
            watch.assert_clean()
        finally:
            context.close()
            server.stop()


def test_a_move_into_a_stalled_server_says_it_is_sending_and_that_the_connection_is_unsteady(
    tmp_path: Path, browser: Any
) -> None:
    """The server stops answering (its process stopped; the browser still thinks itself online): the
    status says the move is being sent, the banner says the connection is unsteady after
    `MOVE_TROUBLE_MS` of an unanswered ping, before the socket is given up; when the server answers
    again the move is played on the same socket, once, and both go."""
    server = ServerProcess(tmp_path / "stalled").start()
    context, page, watch = open_page(browser, DESKTOP)
    try:
        _ana_at_her_turn(server, page)
        version = page.evaluate("() => window.__domeng.version")
        welcomes = page.evaluate("() => window.__domeng.socket.welcomes")
        tile = page.locator(PLAYABLE).first.get_attribute("data-tile")
        hold_clock(page)
        with server.paused():
            _play(page)
            assert page.locator(".hand-tile.playable").count() == 0
            page.clock.fast_forward(MOVE_TROUBLE_MS + 500)
            page.wait_for_selector(".banner[data-kind='trouble']")
            assert page.locator(".banner").text_content() == WORDS["room.trouble"]
        page.clock.resume()
        page.wait_for_function(f"() => window.__domeng.version > {version}", timeout=30_000)
        page.wait_for_selector(".banner", state="hidden")
        assert page.evaluate("() => window.__domeng.socket.welcomes") == welcomes  # never reconnected
        assert _placed_by_ana(page, str(tile)) == 1
        watch.assert_clean()
    finally:
        context.close()
        server.stop()


def test_a_move_lost_in_a_server_restart_is_sent_again_after_the_whole_state(
    tmp_path: Path, browser: Any
) -> None:
    """The move goes into a socket whose server then stops (its process ended, as by Ctrl+C) and
    comes back on the same port while the page is offline: the room is loaded again from the
    store, and the reconnect's answer has the version the move was made at. The move is sent
    again and played once; before, the page held it "pending" under "Your turn" for ever."""
    data = tmp_path / "restarted"
    server = ServerProcess(data, env=NO_COVER).start()
    context, page, watch = open_page(browser, DESKTOP)
    try:
        _ana_at_her_turn(server, page)
        version, tile, cdp = _play_offline(context, page)
        port = int(server.url.rsplit(":", 1)[1])
        server.stop()
        server = ServerProcess(data, env=NO_COVER, port=port).start()
        page.clock.fast_forward(UNANSWERED_MS + 2_000)
        page.wait_for_selector(".banner[data-kind='reconnecting']")
        # the versions of the states the page is sent from now on
        page.evaluate(
            """() => { const on = window.__domeng.socket.on, state = on.state; window.__versions = [];
                on.state = (m) => { window.__versions.push(m.version); state(m); }; }"""
        )
        online = {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
        cdp.send("Network.emulateNetworkConditions", online)
        page.wait_for_function(f"() => window.__domeng.version > {version}", timeout=30_000)
        page.wait_for_function("() => !window.__domeng.outbox")
        assert page.evaluate("() => window.__versions")[0] == version  # the reconnect's answer
        assert _placed_by_ana(page, str(tile)) == 1
        watch.errors[:] = [e for e in watch.errors if "ERR_INTERNET_DISCONNECTED" not in e]
        watch.assert_clean()
    finally:
        context.close()
        server.stop()


PING_EVERY_MS = 10_000
WELCOME_MS = 45_000
"""static/js/connection.js: a ping every 10 s; a socket not welcomed within 45 s of its opening is
given up."""


@pytest.mark.parametrize("noticed", ["heartbeat", "online"])
def test_a_socket_opened_into_a_dead_network_path_is_given_up_and_opened_again(
    tmp_path: Path, browser: Any, noticed: str
) -> None:
    """A phone whose network flaps: the socket goes silent, the heartbeat gives it up, and the new
    socket's handshake goes out on a path that dies with the outage (the phone's address changed,
    a NAT forgot it): nothing ever reaches the page on it again, not even nginx closing it. The
    network back, the page gives that handshake up after `WELCOME_MS` and opens another, which is
    welcomed (``heartbeat``); or, told the network is back (the ``online`` event), gives it up at
    once and opens another. Before, the heartbeat looked only at welcomed sockets, and a socket
    given up while it connected was left to finish (a browser opens one socket to a server at a
    time: the next waited behind it): the page said "reconnecting" until the browser's own
    handshake timeout (240 s in Chromium), or TCP's retries for a hello sent, however long the
    network had been back."""
    server = ServerProcess(tmp_path / "flapping", env=NO_COVER).start()
    context, page, watch = open_page(browser, DESKTOP)
    with ThreadedProxy(server.url) as proxy:
        try:
            _ana_through(proxy, server, page)
            welcomes = page.evaluate("() => window.__domeng.socket.welcomes")
            hold_clock(page)
            proxy.stall()
            page.clock.fast_forward(PING_EVERY_MS + 1_000)  # a ping goes out, and nothing answers it
            page.clock.fast_forward(UNANSWERED_MS + 1_000)  # given up
            page.wait_for_selector(".banner[data-kind='reconnecting']")
            page.clock.fast_forward(1_000)  # the first retry's backoff: a new socket, held
            page.wait_for_function("() => window.__domeng.socket.ws?.readyState === WebSocket.CONNECTING")
            proxy.forget()  # the network is back; the handshake held stays lost
            if noticed == "heartbeat":
                page.clock.fast_forward(WELCOME_MS + 1_000)
            else:
                page.evaluate("() => window.dispatchEvent(new Event('online'))")
            page.clock.resume()
            page.wait_for_function(
                f"() => window.__domeng.socket.online && window.__domeng.socket.welcomes > {welcomes}",
                timeout=30_000,
            )
            page.wait_for_selector(".banner", state="hidden")
            page.wait_for_selector(PLAYABLE)  # and her turn is there again
            watch.errors[:] = [e for e in watch.errors if "WebSocket connection to" not in e]
            watch.assert_clean()
        finally:
            context.close()
            server.stop()
