"""The room's chat across Play again, in Chromium: two friends watch a table of bots (one on a phone in
Russian holding the host's token, one on a desktop in English), chat while its match is played, and
after Play again find their conversation still there, in the next match's waiting room and at its
table, with a quiet divider where the new match began; a reload brings it back from the server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.browserkit import (
    DESKTOP,
    PANEL,
    PHONE,
    catalog_of,
    close_panel,
    goto,
    hold_host,
    open_page,
    screenshot,
)
from tests.serverkit import ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path_factory.mktemp("browser-chat-again"),
        env={"DOMENG_BOT_DELAY_S": "0.02", "DOMENG_ROUND_PAUSE_S": "0.3"},
    ).start()
    yield process
    process.stop()


def _chat(page: Any, where: str) -> list[str]:
    """The chat's items in ``where``: a line's text, or "--" and the divider's words."""
    return list(
        page.eval_on_selector_all(
            f"{where} .chat-list li",
            "els => els.map((e) => e.classList.contains('chat-divider') ? `-- ${e.textContent}`"
            " : e.querySelector('.said').textContent)",
        )
    )


def _say(page: Any, where: str, text: str) -> None:
    page.fill(f"{where} .chat-input", text)
    page.press(f"{where} .chat-input", "Enter")


def test_the_conversation_carries_on_after_play_again(server: ServerProcess, browser: Any) -> None:
    ru, en = catalog_of("ru"), catalog_of("en")
    room = server.create_room(bots=["easy"] * 5, turn_timer_s=0, options={"camat_target": 1})
    code, host_token = room["code"], room["host_token"]
    auth = {"Authorization": f"Bearer {host_token}"}
    server.let_spectators_chat(code, host_token)
    ana_ctx, ana, ana_watch = open_page(browser, PHONE, "ru-RU")
    budi_ctx, budi, budi_watch = open_page(browser, DESKTOP, "en-US")
    try:
        goto(ana, f"{server.url}/r/{code}")
        hold_host(ana, code, host_token)
        goto(budi, f"{server.url}/r/{code}")
        assert server.start_match(code, host_token).status_code == 200
        for page in (ana, budi):
            page.reload()
            page.wait_for_selector(".table-screen")
        # the bots play the match to its end (seconds); the friends close its panel and talk
        for page in (ana, budi):
            page.wait_for_function("() => !!window.__domeng?.view?.match_over")
            close_panel(page)
        ana.click(".feed-toggle")  # the phone's feed drawer holds the chat
        _say(ana, ".table-screen", "one more?")
        budi.wait_for_function("() => document.querySelectorAll('.chat-list .chat-line').length === 1")
        _say(budi, ".table-screen", "sure!")
        ana.wait_for_function("() => document.querySelectorAll('.chat-list .chat-line').length === 2")
        reply = httpx.post(f"{server.url}/api/rooms/{code}/again", headers=auth, timeout=10)
        assert reply.status_code == 200 and reply.json()["match"] == 2
        began = {
            lang: f"-- {words['chat.match_began']}".replace("{n}", "2")
            for lang, words in (("ru", ru), ("en", en))
        }
        for page in (ana, budi):
            page.wait_for_selector(".waiting-chat .chat-divider")
            if page.locator(PANEL).count():
                close_panel(page)
        assert _chat(budi, ".waiting-chat") == ["one more?", "sure!", began["en"]]
        assert _chat(ana, ".waiting-chat") == ["one more?", "sure!", began["ru"]]
        ana.locator(".waiting-chat").scroll_into_view_if_needed()
        screenshot(ana, "chat-again-waiting-390x844-ru")

        _say(budi, ".waiting-chat", "same seats, here we go")  # the friends talk on while it waits
        ana.wait_for_function("() => document.querySelectorAll('.waiting-chat .chat-line').length === 3")
        assert server.start_match(code, host_token).status_code == 200
        for page in (ana, budi):
            page.wait_for_selector(".table-screen")
        expected = ["one more?", "sure!", began["en"], "same seats, here we go"]
        assert _chat(budi, ".table-screen") == expected
        budi.reload()  # from the server: the room's lines, each with its match
        budi.wait_for_selector(".table-screen .chat-divider")
        assert _chat(budi, ".table-screen") == expected
        if budi.locator(PANEL).count():  # the bots may have played the whole match meanwhile
            close_panel(budi)
        screenshot(budi, "chat-again-table-1280x800-en")
        for watch in (ana_watch, budi_watch):
            watch.assert_clean()
    finally:
        ana_ctx.close()
        budi_ctx.close()
