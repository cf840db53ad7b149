"""The table bar's results button in a room's second match (Play again), in Chromium: a page opened
in the middle of its first round offers "Previous match" (match 1's final panel); once that round
has ended, a page reloaded or opened in the middle of the next one offers "Round results", match
2's round 1 (from what the tab kept, or the whole state's ``round_before``), never the last match's
results as if they were this one's. The whole state a seat gets holds only what everyone may see
of that round. Screenshots go to artifacts/screenshots/."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.browserkit import DESKTOP, PANEL, catalog_of, close_panel, goto, open_page, screenshot
from tests.serverkit import Client, ServerProcess, my_turn_to_place


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    env = {"DOMENG_BOT_DELAY_S": "0.02", "DOMENG_ROUND_PAUSE_S": "0.3", "DOMENG_TURN_TIMER_S": "0"}
    process = ServerProcess(tmp_path_factory.mktemp("browser-again-results"), env=env).start()
    yield process
    process.stop()


def _play_until(ana: Client, done: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """Ana plays every turn of hers until a state for which ``done`` holds (that turn left to her:
    no turn timer runs, so the round waits for her); that state."""
    while True:
        message = ana.recv(timeout=60)
        assert message["type"] != "error", message
        if message["type"] == "state" and done(message):
            return message
        ana.answer(message)


def _at_round(n: int) -> Callable[[dict[str, Any]], bool]:
    """Ana's turn to place a tile in round ``n`` of the match in play."""
    return lambda m: my_turn_to_place(m) and m["view"]["round"] == n


def _whole(ana: Client) -> dict[str, Any]:
    """A whole state for Ana (``sync``), the room waiting for her move."""
    ana.send({"type": "sync"})
    return ana.wait_for(lambda m: m["type"] == "state" and ana.whole)


def _bar_button(page: Any) -> dict[str, Any]:
    """The bar's results button: whether it is shown, what it opens, its label."""
    return dict(
        page.evaluate(
            "() => { const b = document.querySelector('.last-round-btn');"
            " return {shown: !!b && !b.hidden, opens: b?.dataset.opens ?? null,"
            " label: b?.getAttribute('aria-label') || b?.textContent.trim() || null}; }"
        )
    )


def _open_at_round(page: Any, n: int) -> None:
    """Wait until ``page`` shows round ``n`` of match 2 in play."""
    page.wait_for_function(
        "(n) => { const d = window.__domeng; return !!d && d.match === 2 && d.view?.round === n"
        " && d.view.phase === 'playing' && !!document.querySelector('.table-screen'); }",
        arg=n,
    )


def test_mid_round_in_match_two_the_bar_offers_this_matchs_round_not_the_last_match(
    server: ServerProcess, browser: Any
) -> None:
    en = catalog_of("en")
    room = server.create_room(
        bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0, options={"camat_target": 0}
    )
    code, host_token = room["code"], room["host_token"]
    token = server.claim(code, 0, "Ana").json()["token"]
    assert server.start_match(code, host_token).status_code == 200
    # match 1: one round (the host ends the no-limit match when it ends), then Play again
    host = {"Authorization": f"Bearer {host_token}"}
    reply = httpx.put(f"{server.url}/api/rooms/{code}/stop", json={"stop": True}, headers=host, timeout=20)
    assert reply.status_code == 200, reply.text
    ana = Client(server, code, token)
    try:
        _play_until(ana, lambda m: bool(m["view"] and m["view"]["match_over"]))
        reply = httpx.post(
            f"{server.url}/api/rooms/{code}/again", headers={"Authorization": f"Bearer {token}"}, timeout=20
        )
        assert reply.status_code == 200, reply.text
        assert server.start_match(code, host_token).status_code == 200

        # match 2, round 1 in play: a page opened now offers the last match's results
        turn = _play_until(ana, _at_round(1))
        assert _whole(ana)["round_before"] is None  # match 1's last round is not this match's
        context, page, watch = open_page(browser, DESKTOP)
        goto(page, f"{server.url}/r/{code}")
        _open_at_round(page, 1)
        assert _bar_button(page)["shown"] and _bar_button(page)["opens"] == "match", _bar_button(page)
        page.click(".last-round-btn")
        page.wait_for_selector(f"{PANEL} .standings")  # match 1's final panel
        close_panel(page)

        # round 1 ends (this page sees it), round 2 is in play
        assert ana.answer(turn)
        _play_until(ana, _at_round(2))
        before = _whole(ana)["round_before"]  # round 1 as everyone saw it end: no seat's hand
        assert before["room"]["match"] == 2 and before["room"]["round"]["seed"], before["room"]
        assert (
            before["view"]["round"] == 1 and before["view"]["seat"] is None and before["view"]["hand"] is None
        )
        assert before["view"]["outcome"] and before["view"]["reveal"] and before["view"]["log"]
        _open_at_round(page, 2)
        if page.locator(PANEL).count():
            close_panel(page)
        assert _bar_button(page)["opens"] == "round", _bar_button(page)

        # reloaded mid-round: the round it saw end, never the last match as if it were this one's
        page.reload()
        page.wait_for_selector("body[data-ready]")
        _open_at_round(page, 2)
        shown = _bar_button(page)
        assert shown["shown"] and shown["opens"] == "round", shown
        page.click(".last-round-btn")
        page.wait_for_selector(PANEL)
        kicker = page.text_content(f"{PANEL} .panel-kicker")
        assert kicker == en["panel.round_over"].replace("{n}", "1"), kicker
        assert page.locator(f"{PANEL} .standings").count() == 0  # not a final panel
        screenshot(page, "again-results-reloaded-1280x800-en")
        close_panel(page)

        # another browser, opened mid-round: the whole state's round_before (docs/protocol.md) is
        # this match's round 1 as it ended, which its bar offers; never the last match
        other_ctx, other, other_watch = open_page(browser, DESKTOP)
        goto(other, f"{server.url}/r/{code}")
        _open_at_round(other, 2)
        shown = _bar_button(other)
        assert shown["shown"] and shown["opens"] == "round", shown
        other.click(".last-round-btn")
        other.wait_for_selector(f"{PANEL} .panel-kicker")
        kicker = other.text_content(f"{PANEL} .panel-kicker")
        assert kicker == en["panel.round_over"].replace("{n}", "1"), kicker
        assert other.locator(f"{PANEL} .standings").count() == 0
        close_panel(other)
        other_watch.assert_clean()
        other_ctx.close()
        watch.assert_clean()
        context.close()
    finally:
        ana.close()
