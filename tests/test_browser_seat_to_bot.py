"""A player whose seat the host gives to a bot, in Chromium (the socket's 4007): the page said
"This seat is open in another window" with "Play here", the words for a seat another tab of the
same person took. It says plainly that the host gave the seat to a bot (the banner, the table's
status line, the chat), offers no "Play here", and offers to watch the table or go to the lobby;
Watch the table watches on as a spectator."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.browserkit import PHONE, catalog_of, open_page, screenshot, sit_and_start, switch_language
from tests.serverkit import ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path_factory.mktemp("browser-seat-to-bot"), env={"DOMENG_BOT_DELAY_S": "0.1"}
    ).start()
    yield process
    process.stop()


_SHOWN_JS = """() => {
    const banner = document.querySelector('.banner');
    const notice = document.querySelector('.chat-notice');
    return {banner: banner.hidden ? '' : banner.querySelector('span').textContent,
            buttons: [...banner.querySelectorAll('button, a')].map((b) => b.textContent),
            lobby: banner.querySelectorAll("a[href='/']").length,
            status: document.querySelector('.table-screen .status').textContent,
            chat: notice.hidden ? '' : notice.textContent};
}"""


def test_a_player_whose_seat_the_host_gave_to_a_bot_is_told_so_and_may_watch(
    server: ServerProcess, browser: Any
) -> None:
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
    code = room["code"]
    token = server.claim(code, 0, "Budi").json()["token"]
    context, page, watch = open_page(browser, PHONE, "ru-RU")
    sit_and_start(page, server, room, token)
    reply = httpx.put(
        f"{server.url}/api/rooms/{code}/seats/0/bot",
        json={"level": "easy"},
        headers={"Authorization": f"Bearer {room['host_token']}"},
        timeout=10,
    )
    assert reply.status_code == 200, reply.text
    page.wait_for_selector(".banner:not([hidden])")
    for lang in ("ru", "en"):
        switch_language(page, lang)
        words = catalog_of(lang)
        said = words["room.seat_to_bot"]
        shown = page.evaluate(_SHOWN_JS)
        assert shown == {
            "banner": said,
            "buttons": [words["room.watch_table"], words["room.back_lobby"]],  # never "Play here"
            "lobby": 1,
            "status": said,
            "chat": said,
        }, lang
    assert page.evaluate("() => window.__domeng.socket.parked && window.__domeng.socket.ws === null")
    held = page.evaluate(f"() => JSON.parse(localStorage.getItem('domeng:room:{code}'))")
    assert held.get("token") is None  # a reload watches: the token opens nothing now
    screenshot(page, "seat-to-bot-390")

    page.click(".banner .watch-table")  # watches on as a spectator
    page.wait_for_function("() => window.__domeng.socket.online && window.__domeng.seat === null")
    page.wait_for_selector(".banner", state="hidden")
    page.wait_for_selector(".table-screen.spectating")
    assert page.evaluate(_SHOWN_JS)["chat"] != catalog_of("en")["room.seat_to_bot"]
    watch.assert_clean()
    context.close()
