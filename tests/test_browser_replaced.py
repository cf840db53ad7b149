"""A window whose seat another window took (the socket's 4001, the room's ``connection.replaced``),
in Chromium: it follows the table no more, and says so rather than looking live.

Ana plays at a phone; Budi, beside her at the table, leaves and a bot covers his seat ("bot
covering" on his plate). Ana opens her seat in a second window: the first kept showing "bot
covering" after Budi came back, and a chat box that took lines it could no longer send. It shows
neither who is away or covered nor whose turn it is, dims the table it still shows, and its chat
takes no line, saying where the chat goes on; "Play here" brings all of it back.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.browserkit import (
    PANEL,
    PHONE,
    catalog_of,
    close_panel,
    goto,
    hold_host,
    hold_seat,
    languages,
    open_page,
    play_turn,
    screenshot,
    sit_and_start,
    switch_language,
    wait_for_a_tile_to_place,
)
from tests.serverkit import Client, ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    # a bot covers a seat 1 s after its person's socket closes
    process = ServerProcess(
        tmp_path_factory.mktemp("browser-replaced"),
        env={"DOMENG_BOT_DELAY_S": "0.1", "DOMENG_ROUND_PAUSE_S": "1", "DOMENG_DISCONNECT_GRACE_S": "1"},
    ).start()
    yield process
    process.stop()


_SHOWN_JS = """() => {
    const shown = (sel) => [...document.querySelectorAll(sel)].filter((el) => el.checkVisibility());
    const form = document.querySelector('.chat-form'), input = document.querySelector('.chat-input');
    const notice = document.querySelector('.chat-notice');
    return {covered: shown('.tag-covered, .tag-offline, .thinking, .plate.acting, .plate-timer').length,
            chat: !form.hidden && !input.disabled,
            reactions: !document.querySelector('.chat-reactions').hidden,
            notice: notice.hidden ? '' : notice.textContent,
            dimmed: document.querySelector('.table-screen').classList.contains('replaced')
                && Number(getComputedStyle(document.querySelector('.plate')).opacity) < 0.6};
}"""


def test_a_window_that_lost_its_seat_shows_nothing_live(server: ServerProcess, browser: Any) -> None:
    room = server.create_room(bots=[None, None, "easy", "easy", "easy"], turn_timer_s=0)
    code = room["code"]
    token = server.claim(code, 0, "Ana").json()["token"]
    budi_token = server.claim(code, 1, "Budi").json()["token"]
    budi = Client(server, code, budi_token)
    context, page, watch = open_page(browser, PHONE)
    sit_and_start(page, server, room, token, host=True)
    budi.close()  # Budi leaves: a bot covers his seat
    page.wait_for_selector(".plate[data-seat='1'] .tag-covered")
    wait_for_a_tile_to_place(page)  # no turn timer: the table waits for Ana
    page.click(".feed-toggle")  # a phone's chat is in the drawer
    page.wait_for_selector(".table-screen.feed-open .chat-form:not([hidden])")

    other = context.new_page()  # Ana's seat in a second window
    goto(other, page.url)
    other.wait_for_selector(".hand-tile")
    page.wait_for_selector(".banner[data-kind='replaced']")
    budi = Client(server, code, budi_token)  # Budi is back: the second window hears it
    other.wait_for_selector(".plate[data-seat='1'] .tag-covered", state="detached")
    for lang in [*languages(), "en"]:
        switch_language(page, lang)
        words = catalog_of(lang)
        said = words["chat.replaced"].replace("{button}", words["room.use_here"])
        shown = page.evaluate(_SHOWN_JS)
        live = {"covered": 0, "chat": False, "reactions": False}
        assert shown == {**live, "notice": said, "dimmed": True}, lang
    assert page.locator(".chat-input").is_disabled()
    screenshot(page, "replaced-window-390")

    other.close()
    page.click(".banner[data-kind='replaced'] button")  # "Play here": the table and its chat again
    page.wait_for_function("() => window.__domeng.seat === 0")
    page.wait_for_selector(".table-screen:not(.replaced)")
    wait_for_a_tile_to_place(page)
    page.wait_for_selector(".chat-form:not([hidden])", state="attached")  # the drawer open or not
    shown = page.evaluate(_SHOWN_JS)
    assert shown["chat"] and shown["reactions"] and shown["notice"] == "" and not shown["dimmed"], shown
    assert page.locator(".plate[data-seat='1'] .tag-covered").count() == 0  # Budi is here
    budi.close()
    watch.assert_clean()
    context.close()


_WAITING_CHAT_JS = """() => {
    const box = document.querySelector('.waiting-chat');
    const notice = box.querySelector('.chat-notice');
    return {chat: !box.querySelector('.chat-form').hidden && !box.querySelector('.chat-input').disabled,
            reactions: !box.querySelector('.chat-reactions').hidden,
            host: !box.querySelector('.chat-host').hidden,
            notice: notice.hidden ? '' : notice.textContent};
}"""


def test_the_next_matchs_waiting_room_of_a_window_that_lost_its_seat_has_no_live_chat(
    server: ServerProcess, browser: Any
) -> None:
    """The same in the waiting room of a room's next match (Play again), which has the chat box too:
    the window Ana left takes no line there, nor shows the host's mute list, until "Play here"."""
    # a no-limit match the host ends at once: its one round played by the bots (one covering Ana,
    # who is not here yet), then Play again
    room = server.create_room(
        bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0, options={"camat_target": 0}
    )
    code, host_token = room["code"], room["host_token"]
    auth = {"Authorization": f"Bearer {host_token}"}
    token = server.claim(code, 0, "Ana").json()["token"]
    # spectators may write: a window left without its seat (a spectator's) took lines it could not send
    server.let_spectators_chat(code, host_token)
    fan = Client(server, code)
    assert server.start_match(code, host_token).status_code == 200
    stop = httpx.put(f"{server.url}/api/rooms/{code}/stop", json={"stop": True}, headers=auth, timeout=10)
    assert stop.status_code == 200, stop.text
    fan.wait_for(lambda m: m["type"] == "state" and m["view"] and m["view"]["match_over"], timeout=120)
    fan.close()
    context, page, watch = open_page(browser, PHONE)
    goto(page, f"{server.url}/r/{code}")
    hold_seat(page, code, token, 0)
    hold_host(page, code, host_token)
    page.reload()  # at the table of the match just ended (a page that loads in the next one's
    page.wait_for_selector(".table-screen")  # waiting room knows no match before it and has no chat)
    again = httpx.post(f"{server.url}/api/rooms/{code}/again", headers=auth, timeout=10)
    assert again.status_code == 200 and again.json()["match"] == 2, again.text
    page.wait_for_selector(".seat-row.mine[data-seat='0']")
    if page.locator(PANEL).count():
        close_panel(page)
    page.wait_for_selector(".waiting-chat .chat-form:not([hidden])", state="attached")
    assert page.evaluate(_WAITING_CHAT_JS) == {"chat": True, "reactions": True, "host": True, "notice": ""}

    other = context.new_page()  # Ana's seat in a second window
    goto(other, page.url)
    other.wait_for_selector(".seat-row.mine[data-seat='0']")
    page.wait_for_selector(".banner[data-kind='replaced']")
    for lang in [*languages(), "en"]:
        switch_language(page, lang)
        words = catalog_of(lang)
        said = words["chat.replaced"].replace("{button}", words["room.use_here"])
        shown = page.evaluate(_WAITING_CHAT_JS)
        assert shown == {"chat": False, "reactions": False, "host": False, "notice": said}, lang
    assert page.locator(".waiting-chat .chat-input").is_disabled()
    page.locator(".waiting-chat").scroll_into_view_if_needed()
    screenshot(page, "replaced-waiting-room-390")

    other.close()
    page.click(".banner[data-kind='replaced'] button")  # "Play here": the chat takes lines again
    page.wait_for_function("() => window.__domeng.seat === 0")
    page.wait_for_selector(".waiting-chat .chat-form:not([hidden])", state="attached")
    assert page.evaluate(_WAITING_CHAT_JS) == {"chat": True, "reactions": True, "host": True, "notice": ""}
    watch.assert_clean()
    context.close()


def test_a_page_opened_in_the_next_matchs_waiting_room_has_the_tables_chat(
    server: ServerProcess, browser: Any
) -> None:
    """A friend who opens the link (or reloads) once Play again has begun the next match lands in
    its waiting room: the chat box is there, with what was said at the table. (The page read the
    room over HTTP before its first state, took it for a first match's waiting room, and showed no
    chat at all.)"""
    room = server.create_room(
        bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0, options={"camat_target": 0}
    )
    code, host_token = room["code"], room["host_token"]
    auth = {"Authorization": f"Bearer {host_token}"}
    server.claim(code, 0, "Ana")  # Ana is not here: a bot covers her, so the bots play it out
    server.let_spectators_chat(code, host_token)
    fan = Client(server, code)
    assert server.start_match(code, host_token).status_code == 200
    fan.send({"type": "chat", "text": "good game all"})
    fan.wait_for(lambda m: m["type"] == "chat" and m["line"]["text"] == "good game all")
    stop = httpx.put(f"{server.url}/api/rooms/{code}/stop", json={"stop": True}, headers=auth, timeout=10)
    assert stop.status_code == 200, stop.text
    fan.wait_for(lambda m: m["type"] == "state" and m["view"] and m["view"]["match_over"], timeout=240)
    again = httpx.post(f"{server.url}/api/rooms/{code}/again", headers=auth, timeout=10)
    assert again.status_code == 200 and again.json()["match"] == 2, again.text
    fan.close()
    context, page, watch = open_page(browser, PHONE)
    try:
        goto(page, f"{server.url}/r/{code}")  # a spectator, in match 2's waiting room
        page.wait_for_selector(".waiting-page")
        page.wait_for_selector(".waiting-chat .chat-line", state="attached")
        assert "good game all" in page.locator(".waiting-chat").inner_text()
        watch.assert_clean()
    finally:
        context.close()


def test_a_window_back_from_a_dropped_network_leaves_the_seat_to_the_window_opened_meanwhile(
    server: ServerProcess, browser: Any
) -> None:
    """Ana's network dropped, she opened her seat in a second window and played
    on there; when the first window's network came back, its reconnect took the seat back and the
    window she was using said another window had it. The reconnect says which connection it
    resumes (``hello.resume``): the server closes it as replaced, the first window shows so, and
    the second plays on; "Play here" in the first is what takes the seat back."""
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, PHONE)
    sit_and_start(page, server, room, token, host=True)
    page.wait_for_selector(".hand-tile")
    offline = [True]

    def socket(ws: Any) -> None:  # the first window's new connections fail while its network is down
        if offline[0]:
            ws.close()
        else:
            ws.connect_to_server()

    page.route_web_socket("**/ws/rooms/**", socket)
    page.evaluate("() => window.__domeng.socket.ws.close()")  # its network drops
    page.wait_for_selector(".banner[data-kind='reconnecting']")

    other = context.new_page()  # Ana goes on in a second window
    goto(other, page.url)
    other.wait_for_selector(".hand-tile")
    other.wait_for_function("() => window.__domeng.seat === 0")

    offline[0] = False  # the first window's network is back: its retry is refused, not served
    page.evaluate("() => window.dispatchEvent(new Event('online'))")
    page.wait_for_selector(".banner[data-kind='replaced']")
    page.wait_for_function("() => window.__domeng.seat === null")
    assert other.evaluate("() => window.__domeng.seat") == 0
    assert other.locator(".banner[data-kind='replaced']").count() == 0
    wait_for_a_tile_to_place(other)  # the second window plays on
    assert play_turn(other)

    page.click(".banner[data-kind='replaced'] button")  # "Play here": the seat comes back
    page.wait_for_function("() => window.__domeng.seat === 0")
    other.wait_for_selector(".banner[data-kind='replaced']")
    page.wait_for_selector(".banner", state="hidden")
    watch.assert_clean()
    context.close()


# The seat each plate shows, the bottom one (one's own) first, and what the table says of it.
_SEATS_JS = """() => ({
    seat: Number(document.querySelector('.plate-me').dataset.seat),
    others: [...document.querySelectorAll('.plate:not(.plate-me)')].map((p) => Number(p.dataset.seat)),
    me: document.querySelector('.plate-me .name-text').textContent,
    mine: document.querySelector('.plate-me').classList.contains('mine'),
    spectating: document.querySelector('.table-screen').classList.contains('spectating')})"""


def test_a_window_that_lost_its_seat_still_shows_the_table_from_that_seat(
    server: ServerProcess, browser: Any
) -> None:
    """Ana sits in the third seat. When her second window takes it, the first showed seat 0's
    player at the bottom, as if that were hers, and her own plate among the others, greyed: it keeps
    her seat at the bottom, hers, and not as a spectator's table, before and after "Play here"."""
    room = server.create_room(bots=["easy", "easy", None, "easy", "easy"], turn_timer_s=0)
    token = server.claim(room["code"], 2, "Ana").json()["token"]
    context, page, watch = open_page(browser, PHONE)
    sit_and_start(page, server, room, token, seat=2, host=True)
    page.wait_for_function("() => window.__domeng.seat === 2")
    ana = {"seat": 2, "others": [3, 4, 0, 1], "me": "Ana", "mine": True, "spectating": False}
    assert page.evaluate(_SEATS_JS) == ana
    other = context.new_page()
    goto(other, page.url)
    other.wait_for_selector(".hand-tile")
    page.wait_for_selector(".banner[data-kind='replaced']")
    screenshot(page, "replaced-window-seat-2-390")
    assert page.evaluate(_SEATS_JS) == ana
    other.close()
    page.click(".banner[data-kind='replaced'] button")
    page.wait_for_function("() => window.__domeng.seat === 2")
    page.wait_for_selector(".table-screen:not(.replaced)")
    assert page.evaluate(_SEATS_JS) == ana
    watch.assert_clean()
    context.close()
