"""The keyboard at a match's end, in Chromium: the final panel closed with Escape leaves the focus
on the end-of-match actions (Play again), not on the hand, which has nothing left to play (a
new-user trial: Tab then walked the sound buttons and every glossary term of the feed, and Play
again was reachable only with Shift+Tab)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browserkit import DESKTOP, PANEL, open_page, play_until, sit_and_start
from tests.serverkit import ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path_factory.mktemp("browser-end-focus"),
        env={"DOMENG_BOT_DELAY_S": "0.05", "DOMENG_ROUND_PAUSE_S": "1"},
    ).start()
    yield process
    process.stop()


def _over(page: Any) -> bool:
    return bool(page.evaluate("() => !!window.__domeng?.view?.match_over"))


def test_escape_on_the_final_panel_leaves_the_focus_on_play_again(
    server: ServerProcess, browser: Any
) -> None:
    """The host (seat 0, with four bots) ends the match after its first round and plays that round
    from the keyboard; the final panel opens on Play again, Escape closes it, and the focus is on
    the table's own Play again beside New table."""
    room = server.create_room(
        bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0, options={"camat_target": 0}
    )
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, DESKTOP)
    try:
        sit_and_start(page, server, room, token, host=True)
        page.click(".stop-btn")
        page.click(".stop-note .stop-confirm")
        page.wait_for_function("() => window.__domeng.room.host_stop === true")
        play_until(page, lambda: _over(page), timeout=180, keyboard=True)
        page.wait_for_selector(f"{PANEL} .play-again")
        assert page.evaluate("() => document.activeElement.classList.contains('play-again')")
        page.keyboard.press("Escape")
        page.wait_for_selector(PANEL, state="detached")
        focused = page.evaluate(
            "() => { const el = document.activeElement;"
            " return [el.className, !!el.closest('.over-actions'), !!el.closest('.hand')]; }"
        )
        assert focused == ["btn btn-again play-again", True, False], focused
        watch.assert_clean()
    finally:
        context.close()
