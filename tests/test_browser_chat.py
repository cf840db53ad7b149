"""The table's chat in Chromium (issue 14): two people at a table, one on a phone in Russian and one
on a desktop in English. A message and a reaction reach the other (the reaction on the sender's
plate too), a hostile message shows as text, the phone's feed button counts what is unread, the
host mutes a seat that then cannot chat, and the admin match page shows what was said. A phone's
drawer keeps its head in view while it scrolls, and an empty chat says so; it stays open, with
what the player is writing, when their turn comes. The first match's waiting room has the chat
too (a new user's report: only the next match's had it): the host and a friend talk there before
the start."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.adminkit import SECRET
from tests.browserkit import (
    DESKTOP,
    PANEL,
    PHONE,
    SocketPlayer,
    catalog_of,
    describe,
    goto,
    hold_host,
    hold_seat,
    languages,
    open_page,
    play_until,
    screenshot,
    sit_and_start,
    switch_language,
    take_seat,
    version_of,
    wait_for_a_tile_to_place,
    wait_for_version,
)
from tests.serverkit import Client, ServerProcess, my_turn_to_place

HOSTILE = '<img src=x onerror="window.__pwned=1"><b>bold</b>'


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path_factory.mktemp("browser-chat"),
        env={"DOMENG_ADMIN_TOKEN": SECRET, "DOMENG_BOT_DELAY_S": "0.3", "DOMENG_ROUND_PAUSE_S": "1"},
    ).start()
    yield process
    process.stop()


def _chat_texts(page: Any) -> list[str]:
    return list(
        page.eval_on_selector_all(".chat-list .chat-line .said", "els => els.map((e) => e.textContent)")
    )


def test_two_players_chat_react_and_the_host_mutes_a_seat(server: ServerProcess, browser: Any) -> None:
    ru, en = catalog_of("ru"), catalog_of("en")
    room = server.create_room(bots=[None, None, "easy", "easy", "easy"], turn_timer_s=0)
    code = room["code"]
    tokens = [server.claim(code, seat, name).json()["token"] for seat, name in ((0, "Ana"), (1, "Budi"))]
    ana_ctx, ana, ana_watch = open_page(browser, PHONE, "ru-RU")
    budi_ctx, budi, budi_watch = open_page(browser, DESKTOP, "en-US")
    try:
        for page, seat in ((ana, 0), (budi, 1)):
            goto(page, f"{server.url}/r/{code}")
            hold_seat(page, code, tokens[seat], seat)
        hold_host(ana, code, room["host_token"])
        assert server.start_match(code, room["host_token"]).status_code == 200
        for page in (ana, budi):
            page.reload()
            page.wait_for_selector(".table-screen")
        # the table waits for a person (no turn timer): Ana's turn or Budi's. Her feed drawer would
        # step aside when her turn comes (room.js, clearTheHand), so it comes before she opens it
        ana.wait_for_function("() => [0, 1].includes(window.__domeng?.view?.to_act)")

        # Budi writes while Ana's panel is closed: her feed button counts it
        budi.fill(".chat-input", "good luck, everyone")
        budi.press(".chat-input", "Enter")
        ana.wait_for_selector(".feed-toggle .unread-badge:not([hidden])")
        assert ana.text_content(".feed-toggle .unread-badge") == "1"
        ana.click(".feed-toggle")
        ana.wait_for_selector(".feed-toggle .unread-badge[hidden]", state="attached")
        assert _chat_texts(ana) == ["good luck, everyone"]

        # Ana answers with a hostile line: both see it as the text it is
        ana.fill(".chat-input", HOSTILE)
        ana.click(".chat-send")
        budi.wait_for_function("() => document.querySelectorAll('.chat-list .chat-line').length === 2")
        assert _chat_texts(budi)[-1] == HOSTILE
        assert budi.locator(".chat-list img, .chat-list b").count() == 0
        assert budi.evaluate("() => window.__pwned") is None

        # a reaction: in words and on the sender's plate
        budi.click(".chat-reactions [data-reaction='well_played']")
        ana.wait_for_selector(".plate[data-seat='1'] .reaction-bubble")
        assert ru["reaction.well_played"] in ana.text_content(".plate[data-seat='1'] .reaction-bubble")
        assert ru["reaction.well_played"] in _chat_texts(ana)[-1]
        screenshot(ana, "chat-390x844-ru")
        screenshot(budi, "chat-1280x800-en")

        # the host mutes Budi: he is told so, and the server refuses what he still sends
        ana.click(".chat-mute[data-seat='1']")
        budi.wait_for_selector(".chat-notice:not([hidden])")
        assert budi.text_content(".chat-notice") == en["chat.muted"]
        assert budi.locator(".chat-form").is_hidden()
        budi.evaluate("() => window.__domeng.socket.send({type: 'chat', text: 'can you hear me'})")
        budi.wait_for_selector(f".toast:has-text('{en['error.chat_muted']}')")
        assert "can you hear me" not in _chat_texts(ana)
        ana_watch.assert_clean()
        budi_watch.assert_clean()
    finally:
        ana_ctx.close()
        budi_ctx.close()

    # the admin reads what was said, beside the play
    admin_ctx, admin, admin_watch = open_page(browser, PHONE)
    try:
        admin.goto(f"{server.url}/admin/login")
        admin.wait_for_selector("body[data-ready] #admin-secret")
        admin.fill("#admin-secret", SECRET)
        admin.click("#admin-login")
        admin.wait_for_url("**/admin/matches")
        match_id = server_match_id(server, code)
        admin.goto(f"{server.url}/admin/matches/{match_id}")
        admin.wait_for_selector("#chat-log .chat-table")
        said = admin.eval_on_selector_all("#chat-log .chat-text", "els => els.map((e) => e.textContent)")
        assert said == ["good luck, everyone", HOSTILE, "[reaction] Well played"]
        assert admin.locator("#chat-log img, #chat-log b").count() == 0
        assert "muted: Budi" in admin.text_content("#chat-log")
        admin_watch.assert_clean()
    finally:
        admin_ctx.close()


def server_match_id(server: ServerProcess, code: str) -> int:
    """The stored match id of room ``code`` (the admin API's list)."""
    reply = httpx.get(
        f"{server.url}/api/admin/matches",
        params={"player": "Budi", "per_page": 200},
        headers={"Authorization": f"Bearer {SECRET}"},
        timeout=20,
    )
    assert reply.status_code == 200, reply.text
    items = [m for m in reply.json()["items"] if m["code"] == code]
    assert len(items) == 1, reply.json()
    return int(items[0]["id"])


def _host_at_waiting_room(page: Any, server: ServerProcess, room: dict[str, Any]) -> str:
    """Claim seat 0 as Ana and open the waiting room ``room`` on ``page`` as its host would, seat
    and host tokens kept (`hold_seat`, `hold_host`); the room's code."""
    code: str = room["code"]
    token = server.claim(code, 0, "Ana").json()["token"]
    goto(page, f"{server.url}/r/{code}")
    hold_seat(page, code, token, 0)
    hold_host(page, code, room["host_token"])
    page.reload()
    return code


def test_a_listed_table_with_no_seat_for_a_person_tells_the_host_the_lobby_hides_it(
    server: ServerProcess, browser: Any
) -> None:
    """A host who lists a table whose seats are all taken (people and bots) is told that the lobby
    does not show it (it lists only tables with a free seat) and how to free one; the hint goes once
    a seat waits for a person again, and the table shows in the lobby."""
    en = catalog_of("en")
    room = server.create_room(variant="kozel", seats=2, bots=[None, "easy"], turn_timer_s=0)
    host_ctx, host, host_watch = open_page(browser, DESKTOP, "en-US")
    guest_ctx, guest, guest_watch = open_page(browser, DESKTOP, "en-US")
    try:
        code = _host_at_waiting_room(host, server, room)
        host.wait_for_selector("#open-table")
        assert host.locator(".open-unseen").count() == 0  # not listed: nothing to say
        host.check("#open-table")
        host.wait_for_selector(".open-unseen")
        said = host.text_content(".open-unseen")
        assert said == en["waiting.open_no_free_seat"].replace("{person}", en["lobby.seat_person"])
        goto(guest, f"{server.url}/")
        guest.wait_for_selector("#open-tables[data-loaded]")
        assert guest.locator(f".open-table[data-code='{code}']").count() == 0
        host.select_option(".seat-select[data-seat='1']", "person")
        host.wait_for_selector(".open-unseen", state="detached")
        guest.wait_for_selector(f".open-table[data-code='{code}']")  # the lobby refreshes by itself
        host_watch.assert_clean()
        guest_watch.assert_clean()
    finally:
        host_ctx.close()
        guest_ctx.close()


def test_an_open_table_shows_in_another_browsers_lobby_and_is_joined_from_there(
    server: ServerProcess, browser: Any
) -> None:
    uk = catalog_of("uk")
    room = server.create_room(variant="kozel", seats=3, bots=[None, None, "hard"], turn_timer_s=0)
    host_ctx, host, host_watch = open_page(browser, DESKTOP, "en-US")
    guest_ctx, guest, guest_watch = open_page(browser, PHONE, "uk-UA")
    try:
        code = _host_at_waiting_room(host, server, room)
        host.wait_for_selector("#open-table")
        goto(guest, f"{server.url}/")
        guest.wait_for_selector("#open-tables[data-loaded]")
        assert guest.locator(f".open-table[data-code='{code}']").count() == 0  # closed by default
        host.check("#open-table")
        guest.wait_for_selector(f".open-table[data-code='{code}']")  # the lobby refreshes by itself
        listed = guest.text_content(f".open-table[data-code='{code}']")
        assert uk["variant.kozel"] in listed and "Ana" in listed
        assert uk["open.free"].replace("{free}", "1").replace("{seats}", "3") in listed
        assert guest.evaluate("() => document.documentElement.scrollWidth <= innerWidth")
        screenshot(guest, "open-tables-390x844-uk")
        guest.click(f".open-table[data-code='{code}'] .open-join")
        guest.wait_for_selector(".seat-list")
        guest.fill("#player-name", "Oksana")
        guest.click(".sit[data-seat='1']")
        guest.wait_for_selector(".seat-row.mine[data-seat='1']")
        host.wait_for_function("() => window.__domeng.room.seats[1].name === 'Oksana'")
        # full now: it leaves the list
        lobby_ctx, lobby, lobby_watch = open_page(browser, DESKTOP, "en-US")
        try:
            goto(lobby, f"{server.url}/")
            lobby.wait_for_selector("#open-tables[data-loaded]")
            assert lobby.locator(f".open-table[data-code='{code}']").count() == 0
            # on a desktop the list sits beside the form, under the hero: in the first screen
            top = lobby.evaluate("() => document.querySelector('#open-tables').getBoundingClientRect().top")
            assert top < DESKTOP["height"] * 0.75, top
            screenshot(lobby, "lobby-1280x800-en")
            lobby_watch.assert_clean()
        finally:
            lobby_ctx.close()
        host_watch.assert_clean()
        guest_watch.assert_clean()
    finally:
        host_ctx.close()
        guest_ctx.close()


def test_join_on_a_table_that_filled_meanwhile_says_the_page_only_watches(
    server: ServerProcess, browser: Any
) -> None:
    """The lobby lists a table with one free seat; someone else takes it before this browser's Join
    is pressed. The server shows the room to anyone (200, every seat taken), so the page says the
    table filled and that it watches, with the way back to the open tables, rather than a waiting
    room without a Sit button; once the match starts, that it started. The mark of the lobby's Join
    leaves the address (a reload or a shared link says nothing)."""
    ru = catalog_of("ru")
    room = server.create_room(variant="kozel", seats=2, bots=[None, None], turn_timer_s=0)
    host_ctx, host, host_watch = open_page(browser, DESKTOP, "en-US")
    guest_ctx, guest, guest_watch = open_page(browser, PHONE, "ru-RU")
    try:
        code = _host_at_waiting_room(host, server, room)
        host.check("#open-table")
        goto(guest, f"{server.url}/")
        join = guest.locator(f".open-table[data-code='{code}'] .open-join")
        join.wait_for()
        href = join.get_attribute("href")
        assert server.claim(code, 1, "Budi").status_code == 201  # the last free seat goes meanwhile
        assert server.room(code)["status"] == "waiting"
        guest.goto(f"{server.url}{href}")  # the Join pressed on the list as it was
        guest.wait_for_selector(".room-notice[data-kind='full']")
        assert guest.text_content(".room-notice span") == ru["open.full"]
        assert guest.locator(".sit").count() == 0 and guest.locator("#player-name").count() == 0
        assert guest.text_content(".room-notice a") == ru["open.find_other"]
        assert guest.evaluate("() => location.search") == ""
        screenshot(guest, "open-table-full-390x844-ru")
        guest.click(".room-notice .notice-close")  # read: it goes, the page watches on
        guest.wait_for_selector(".room-notice", state="hidden")
        # the match starts before the Join: said so at the table
        assert server.start_match(code, room["host_token"]).status_code == 200
        guest.goto(f"{server.url}{href}")
        guest.wait_for_selector(".table-screen")
        guest.wait_for_selector(".room-notice[data-kind='started']")
        assert guest.text_content(".room-notice span") == ru["open.started"]
        notice = guest.locator(".room-notice").bounding_box()
        bar = guest.locator(".table-screen .bar").bounding_box()
        assert notice is not None and bar is not None and notice["y"] + notice["height"] <= bar["y"]
        screenshot(guest, "open-table-started-390x844-ru")
        guest.click(".room-notice a")
        guest.wait_for_selector("#open-tables[data-loaded]")
        host_watch.assert_clean()
        guest_watch.assert_clean()
    finally:
        host_ctx.close()
        guest_ctx.close()


def test_a_short_feed_drawer_scrolls_and_draws_nothing_over_the_hand(
    server: ServerProcess, browser: Any
) -> None:
    """A small phone on its own turn leaves the drawer little height above the hand: the drawer
    scrolls as a whole (its play-by-play keeps a few lines), and its chat form is reached inside it
    instead of being drawn over the turn banner and the hand. Near its 200 characters the chat box
    shows its count."""
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
    code = room["code"]
    token = server.claim(code, 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, {"width": 360, "height": 640}, "ru-RU")
    try:
        sit_and_start(page, server, room, token)
        wait_for_a_tile_to_place(page)  # no timer: the table waits on Ana
        page.click(".feed-toggle")
        page.wait_for_selector(".table-screen.feed-open .feed .chat-form")
        shown = page.evaluate(
            """() => {
                const feed = document.querySelector('.table-screen.feed-open .feed');
                const form = feed.querySelector('.chat-form');
                form.scrollIntoView({block: 'nearest'});
                const box = feed.getBoundingClientRect(), f = form.getBoundingClientRect();
                const list = feed.querySelector('.feed-list').getBoundingClientRect();
                return {inside: f.top >= box.top - 0.5 && f.bottom <= box.bottom + 0.5,
                        scrolls: feed.scrollHeight > feed.clientHeight, list: list.height,
                        hand: document.querySelector('.hand').getBoundingClientRect().top,
                        bottom: box.bottom};
            }"""
        )
        screenshot(page, "chat-drawer-360x640-ru")
        assert shown["inside"], shown
        assert shown["bottom"] <= shown["hand"] + 0.5, shown  # the drawer ends above the hand
        assert shown["list"] >= 40, shown  # a few lines of the play-by-play stay
        # a long line: the box shows how much of its 200 characters is used, once near the limit
        assert page.locator(".chat-count").is_hidden()
        page.fill(".chat-input", "ж" * 170)
        page.wait_for_selector(".chat-count:not([hidden])")
        assert page.text_content(".chat-count") == "170/200"
        page.fill(".chat-input", "ж" * 250)  # a paste past the limit is cut at 200: the count says so
        page.wait_for_selector(".chat-count.full")
        assert page.text_content(".chat-count") == "200/200"
        page.press(".chat-input", "Enter")
        page.wait_for_selector(".chat-count[hidden]", state="attached")
        page.wait_for_function("() => document.querySelectorAll('.chat-list .chat-line').length === 1")
        # Escape closes the drawer (from its chat box too) and gives the focus back to its button
        page.press(".chat-input", "Escape")
        page.wait_for_selector(".table-screen:not(.feed-open)")
        assert page.evaluate("() => document.activeElement.classList.contains('feed-toggle')")
        assert page.get_attribute(".feed-toggle", "aria-expanded") == "false"
        watch.assert_clean()
    finally:
        context.close()


def test_a_hosts_chat_with_four_people_fits_the_desktop_side_panel(
    server: ServerProcess, browser: Any
) -> None:
    """The host's chat lists a mute button per person: with four others, one of them with a long
    name, in Indonesian at 1280x800, the side panel keeps everything inside the page (the page
    never scrolls) and the long name's button shortens on one line."""
    room = server.create_room(bots=[None, None, None, None, None], turn_timer_s=0)
    code = room["code"]
    names = ["Alya", "Budi", "Csaba", "Kristóf Szentgyörgyi-Nagy", "Dewi"]
    tokens = [server.claim(code, seat, name).json()["token"] for seat, name in enumerate(names)]
    context, page, watch = open_page(browser, DESKTOP, "id-ID")
    try:
        sit_and_start(page, server, room, tokens[0], host=True)
        page.wait_for_selector(".table-screen .chat-mute[data-seat='4']")
        shown = page.evaluate(
            """() => {
                const box = document.querySelector('.chat-box').getBoundingClientRect();
                const long = document.querySelector(".chat-mute[data-seat='3']");
                return {page: document.documentElement.scrollHeight, view: innerHeight,
                        box: box.bottom, oneLine: long.getBoundingClientRect().height < 40,
                        title: long.title};
            }"""
        )
        screenshot(page, "chat-host-1280x800-id")
        assert shown["page"] <= shown["view"] and shown["box"] <= shown["view"] + 0.5, shown
        assert shown["oneLine"] and "Kristóf Szentgyörgyi-Nagy" in shown["title"], shown
        watch.assert_clean()
    finally:
        context.close()


@contextlib.contextmanager
def _host_and_two_spectators(server: ServerProcess, browser: Any) -> Iterator[tuple[Any, Any, Any, str]]:
    """Ana hosts from her seat on a desktop in English and lets spectators write; two spectators
    watch on phones in Russian, their chat in the feed's drawer, and the first writes rudely: the
    three pages and the rude one's tag. Each page's console is clean after the block; the
    pages are closed."""
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
    code = room["code"]
    token = server.claim(code, 0, "Ana").json()["token"]
    server.let_spectators_chat(code, room["host_token"])
    ana_ctx, ana, ana_watch = open_page(browser, DESKTOP, "en-US")
    rude_ctx, rude, rude_watch = open_page(browser, PHONE, "ru-RU")
    kind_ctx, kind, kind_watch = open_page(browser, PHONE, "ru-RU")
    try:
        sit_and_start(ana, server, room, token, host=True)
        for page in (rude, kind):
            goto(page, f"{server.url}/r/{code}")
            page.wait_for_selector(".table-screen")
            page.click(".feed-toggle")  # a phone's chat is in the feed's drawer
        rude.fill(".chat-input", "you all play badly")
        rude.press(".chat-input", "Enter")
        yield ana, rude, kind, rude.evaluate("() => window.__domeng.watcherTag")
        for watch in (ana_watch, rude_watch, kind_watch):
            watch.assert_clean()
    finally:
        for context in (ana_ctx, rude_ctx, kind_ctx):
            context.close()


def test_the_host_mutes_one_spectator_who_stays_muted_after_a_reload(
    server: ServerProcess, browser: Any
) -> None:
    """Ana hosts from her seat on a desktop in English; two spectators watch on phones in Russian.
    One writes rudely: Ana mutes that spectator alone (named by their tag), who is told so and
    stays muted after a reload; the other, heard before the mute, still writes (all three come from
    one address here, as two people behind one home router would: the mute spares whom the host
    had heard); Ana unmutes, and the first may write again."""
    ru, en = catalog_of("ru"), catalog_of("en")
    with _host_and_two_spectators(server, browser) as (ana, rude, kind, tag):
        assert tag and tag != kind.evaluate("() => window.__domeng.watcherTag")
        mute = f".chat-mute[data-watcher='{tag}']"
        ana.wait_for_selector(mute)
        kind.fill(".chat-input", "hello all")
        kind.press(".chat-input", "Enter")
        ana.wait_for_function("() => document.querySelectorAll('.chat-list .chat-line').length === 2")
        who = en["chat.spectator_tag"].replace("{tag}", tag)
        assert ana.locator(".chat-list .chat-line .who").first.text_content() == who
        assert ana.text_content(mute) == en["chat.mute"].replace("{name}", who)
        ana.click(mute)
        rude.wait_for_selector(".chat-notice:not([hidden])")
        assert rude.text_content(".chat-notice") == ru["chat.muted"]
        assert rude.locator(".chat-form").is_hidden()
        screenshot(rude, "chat-spectator-muted-390x844-ru")
        screenshot(ana, "chat-spectator-mute-1280x800-en")

        rude.reload()  # the same spectator (the key this browser keeps): still muted
        rude.wait_for_selector(".table-screen")
        rude.wait_for_function("() => !!window.__domeng.chat")
        assert rude.evaluate("() => window.__domeng.watcherTag") == tag
        assert rude.locator(".chat-notice").text_content() == ru["chat.muted"]
        rude.evaluate("() => window.__domeng.socket.send({type: 'chat', text: 'can you hear me'})")
        rude.wait_for_selector(f".toast:has-text('{ru['error.chat_muted']}')")
        kind.fill(".chat-input", "good game so far")
        kind.press(".chat-input", "Enter")
        ana.wait_for_function("() => document.querySelectorAll('.chat-list .chat-line').length === 3")
        assert "can you hear me" not in _chat_texts(ana)

        ana.click(mute)  # unmuted
        ana.wait_for_selector(f"{mute}[aria-pressed='false']")
        rude.click(".feed-toggle")
        rude.wait_for_selector(".chat-form:not([hidden])")
        rude.fill(".chat-input", "sorry")
        rude.press(".chat-input", "Enter")
        ana.wait_for_function("() => document.querySelectorAll('.chat-list .chat-line').length === 4")
        assert _chat_texts(ana) == ["you all play badly", "hello all", "good game so far", "sorry"]


_EMOJI_SHOWN_JS = """async (langs) => {
    // a character a system draws as an emoji by default (a font without emoji shows an empty box),
    // or the variation selector that asks for one
    const emoji = /[\\p{Emoji_Presentation}\\uFE0F]/u;
    const found = (text) => [...(text || '')].filter((ch) => emoji.test(ch))
        .map((ch) => ch.codePointAt(0).toString(16));
    const kinds = ['aria-label', 'title', 'placeholder', 'alt'];
    const named = [...document.querySelectorAll(kinds.map((a) => `[${a}]`).join(', '))];
    const names = named.flatMap((el) => kinds.map((a) => el.getAttribute(a)));
    const catalogs = {};
    for (const lang of langs) {
        const words = await (await fetch(`/static/i18n/${lang}.json`)).json();
        catalogs[lang] = found(JSON.stringify(words));
    }
    return {page: found(document.body.textContent + document.title), names: names.flatMap(found), catalogs};
}"""


def test_the_page_shows_no_emoji_so_a_system_without_an_emoji_font_shows_no_empty_boxes(
    server: ServerProcess, browser: Any
) -> None:
    """On Debian without fonts-noto-color-emoji the reactions read as empty boxes before their
    words (👍, 😅, ⏳, 👏, 👋, 🙏). Each is now a drawn icon before its words: nothing the page
    shows itself (buttons, the chat's lines, a reaction on a plate, names and titles, the words of
    every language) is an emoji, and each reaction button is named by its words alone."""
    en = catalog_of("en")
    room = server.create_room(bots=[None, None, "easy", "easy", "easy"], turn_timer_s=0)
    code = room["code"]
    tokens = [server.claim(code, seat, name).json()["token"] for seat, name in ((0, "Ana"), (1, "Budi"))]
    context, page, watch = open_page(browser, DESKTOP, "en-US")
    budi = Client(server, code, tokens[1])
    try:
        sit_and_start(page, server, room, tokens[0], host=True)
        page.wait_for_selector(".chat-reactions [data-reaction='nice']")
        reactions = ("nice", "oops", "hurry", "well_played", "hello", "thanks")
        for at, reaction in enumerate(reactions):  # every reaction, in the chat's lines and on a plate
            if at % 2:  # half of them Budi's (a seat writes at most 5 lines in 10 s), half Ana's own
                budi.send({"type": "chat", "reaction": reaction})
            else:
                page.click(f".chat-reactions [data-reaction='{reaction}']")
            budi.wait_for(lambda m, r=reaction: m["type"] == "chat" and m["line"]["reaction"] == r)
        page.wait_for_function(
            f"() => document.querySelectorAll('.chat-list .chat-line').length === {len(reactions)}"
        )
        page.wait_for_selector(".plate[data-seat='1'] .reaction-bubble")
        shown = page.evaluate(_EMOJI_SHOWN_JS, languages())
        assert shown == {"page": [], "names": [], "catalogs": {lang: [] for lang in languages()}}, shown
        for reaction in reactions:
            words = en[f"reaction.{reaction}"]
            chip = page.get_by_role("button", name=words, exact=True)
            assert chip.count() == 1, words
            assert chip.locator("svg.icon").count() == 1, words
        screenshot(page, "chat-reactions-1280x800-en")
        watch.assert_clean()
    finally:
        budi.close()
        context.close()


def test_the_host_removes_a_spectator_who_is_told_why_and_the_other_watches_on(
    server: ServerProcess, browser: Any
) -> None:
    """Ana hosts from her seat on a desktop in English; two spectators watch on phones in Russian.
    One writes rudely: beside the mute, Ana's chat offers to remove that spectator (named by their
    tag). She does: the spectator's page says the host removed them, in their language, with the
    way back to the lobby, and does not come back by itself; the other spectator watches on and
    still writes, and the removed one leaves Ana's list."""
    ru, en = catalog_of("ru"), catalog_of("en")
    with _host_and_two_spectators(server, browser) as (ana, rude, kind, tag):
        remove = f".chat-remove[data-watcher='{tag}']"
        ana.wait_for_selector(remove)
        who = en["chat.spectator_tag"].replace("{tag}", tag)
        assert ana.text_content(remove) == en["chat.remove_short"]
        assert ana.get_attribute(remove, "aria-label") == en["chat.remove"].replace("{name}", who)
        ana.click(remove)
        rude.wait_for_selector(".banner:not([hidden])")
        assert ru["room.removed"] in rude.text_content(".banner")
        assert rude.locator(".banner a[href='/']").count() == 1
        assert rude.evaluate("() => window.__domeng.socket.parked")  # no retry of its own
        ana.wait_for_selector(remove, state="detached")
        kind.fill(".chat-input", "hello all")
        kind.press(".chat-input", "Enter")
        ana.wait_for_function("() => document.querySelectorAll('.chat-list .chat-line').length === 2")
        assert _chat_texts(ana) == ["you all play badly", "hello all"]
        assert rude.evaluate("() => window.__domeng.socket.ws") is None  # still gone
        screenshot(rude, "chat-spectator-removed-390x844-ru")


def test_a_muted_spectators_new_window_says_so_before_anything_is_sent(
    server: ServerProcess, browser: Any
) -> None:
    """A new user's report: a muted person who opened a new window (another key and tag, the same
    address) saw the chat box there and learned of the mute only when a line was refused. The
    server tells a window on connect whether a mute holds it (``you_muted``: its own state alone):
    the new window shows the muted notice in the box's place, in its language, until the host
    unmutes, when the box comes back."""
    ru = catalog_of("ru")
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
    code = room["code"]
    token = server.claim(code, 0, "Ana").json()["token"]
    server.let_spectators_chat(code, room["host_token"])
    ana_ctx, ana, ana_watch = open_page(browser, DESKTOP, "en-US")
    rude_ctx, rude, rude_watch = open_page(browser, DESKTOP, "en-US")
    try:
        sit_and_start(ana, server, room, token, host=True)
        goto(rude, f"{server.url}/r/{code}")
        rude.wait_for_selector(".table-screen")
        rude.fill(".chat-input", "you all play badly")
        rude.press(".chat-input", "Enter")
        tag = rude.evaluate("() => window.__domeng.watcherTag")
        mute = f".chat-mute[data-watcher='{tag}']"
        ana.wait_for_selector(mute)
        ana.click(mute)
        rude.wait_for_selector(".chat-notice:not([hidden])")
        # a new window: a browser context of its own (no key kept), from the same address
        new_ctx, new, new_watch = open_page(browser, DESKTOP, "ru-RU")
        try:
            goto(new, f"{server.url}/r/{code}")
            new.wait_for_selector(".table-screen")
            new.wait_for_function("() => !!window.__domeng.chat")
            assert new.evaluate("() => window.__domeng.watcherTag") not in (None, tag)
            notice = new.locator(".chat-notice")
            notice.wait_for()
            assert notice.text_content() == ru["chat.muted"]
            assert new.locator(".chat-form").is_hidden() and new.locator(".chat-reactions").is_hidden()
            screenshot(new, "chat-muted-new-window-1280x800-ru")
            ana.click(mute)  # unmuted: the new window's box comes back
            new.wait_for_selector(".chat-form:not([hidden])")
            assert notice.is_hidden()
            new_watch.assert_clean()
        finally:
            new_ctx.close()
        for watch in (ana_watch, rude_watch):
            watch.assert_clean()
    finally:
        for context in (ana_ctx, rude_ctx):
            context.close()


def test_a_spectator_names_itself_and_the_players_page_shows_its_lines_under_that_name(
    server: ServerProcess, browser: Any
) -> None:
    """Ana hosts from her seat on a desktop in English; Dewi watches on a phone in Russian and
    gives her name in the chat: Ana reads her lines as "Dewi (spectator)", with her tag on the
    mute button. A name the table refuses ("Bot 3") is said under the box, and Dewi's lines keep
    her name; after a reload her browser gives it again. Named as Ana herself, her line still
    reads as a spectator's."""
    ru, en = catalog_of("ru"), catalog_of("en")
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
    code = room["code"]
    token = server.claim(code, 0, "Ana").json()["token"]
    server.let_spectators_chat(code, room["host_token"])
    ana_ctx, ana, ana_watch = open_page(browser, DESKTOP, "en-US")
    dewi_ctx, dewi, dewi_watch = open_page(browser, PHONE, "ru-RU")
    lines = ".chat-list .chat-line .who"

    def name(typed: str) -> None:
        dewi.fill(".chat-name-input", typed)
        dewi.click(".chat-name-save")

    def said(text: str, refused: bool = False) -> None:  # what the page says under the name box
        selector = ".chat-name-said.field-error" if refused else ".chat-name-said:not(.field-error)"
        dewi.wait_for_function(
            "([sel, text]) => document.querySelector(sel)?.textContent === text", arg=[selector, text]
        )

    def say(text: str, count: int) -> None:
        dewi.fill(".chat-input", text)
        dewi.press(".chat-input", "Enter")
        ana.wait_for_function(f"() => document.querySelectorAll('{lines}').length === {count}")

    try:
        sit_and_start(ana, server, room, token, host=True)
        goto(dewi, f"{server.url}/r/{code}")
        dewi.wait_for_selector(".table-screen")
        dewi.click(".feed-toggle")  # a phone's chat is in the feed's drawer
        tag = dewi.evaluate("() => window.__domeng.watcherTag")
        name("  Dewi  ")
        as_dewi = ru["chat.named_as"].replace("{name}", ru["chat.spectator_named"].replace("{name}", "Dewi"))
        said(as_dewi)
        say("halo", 1)
        who = ana.locator(lines).last
        assert who.text_content() == en["chat.spectator_named"].replace("{name}", "Dewi")
        assert who.get_attribute("title") == en["chat.spectator_tag"].replace("{tag}", tag)
        named = en["chat.spectator_named_tag"].replace("{name}", "Dewi").replace("{tag}", tag)
        assert ana.text_content(f".chat-mute[data-watcher='{tag}']") == en["chat.mute"].replace(
            "{name}", named
        )
        screenshot(ana, "chat-spectator-named-1280x800-en")

        name("Bot 3")
        said(ru["join.name_reserved"], refused=True)
        assert dewi.input_value(".chat-name-input") == "Bot 3"  # there to correct
        screenshot(dewi, "chat-spectator-name-refused-390x844-ru")
        say("still me", 2)
        assert ana.locator(lines).last.text_content() == en["chat.spectator_named"].replace("{name}", "Dewi")

        dewi.reload()  # this browser keeps the name and gives it again
        dewi.wait_for_selector(".table-screen")
        dewi.click(".feed-toggle")
        said(as_dewi)
        assert dewi.input_value(".chat-name-input") == "Dewi"
        say("back again", 3)
        assert ana.locator(lines).last.text_content() == en["chat.spectator_named"].replace("{name}", "Dewi")

        name("Ana")  # Ana's own name: still a spectator's line, never her seat's
        said(ru["chat.named_as"].replace("{name}", ru["chat.spectator_named"].replace("{name}", "Ana")))
        say("it is me", 4)
        last = ana.locator(".chat-list .chat-line").last
        assert last.get_attribute("data-seat") == ""
        assert last.locator(".who").text_content() == en["chat.spectator_named"].replace("{name}", "Ana")
        for watch in (ana_watch, dewi_watch):
            watch.assert_clean()
    finally:
        for context in (ana_ctx, dewi_ctx):
            context.close()


def test_a_saved_spectator_name_the_table_refuses_now_is_forgotten(
    server: ServerProcess, browser: Any
) -> None:
    """A name this browser kept from an earlier visit that the table refuses now (its check grew
    stricter: "Budi (spectator)" reads as a spectator's mark) was sent, and refused, after every
    reconnect for ever. It is refused once, said under the name box, and forgotten: the next visit
    sends no name."""
    en = catalog_of("en")
    room = server.create_room(bots=["easy"] * 5, turn_timer_s=0)
    code = room["code"]
    server.let_spectators_chat(code, room["host_token"])
    assert server.start_match(code, room["host_token"]).is_success
    context, page, watch = open_page(browser, DESKTOP, "en-US")
    kept = "() => localStorage.getItem('domeng:spectator-name')"
    try:
        goto(page, f"{server.url}/r/{code}")
        page.wait_for_selector(".table-screen")
        page.evaluate("() => localStorage.setItem('domeng:spectator-name', 'Budi (spectator)')")
        page.reload()
        page.wait_for_selector(".chat-name-said.field-error")
        assert page.text_content(".chat-name-said.field-error") == en["join.name_marked"]
        page.wait_for_function(f"() => ({kept})() === null")
        page.reload()
        page.wait_for_function("() => window.__domeng?.watcherTag")
        page.wait_for_selector(".chat-name-input")
        assert page.evaluate(kept) is None
        assert page.locator(".chat-name-said.field-error").count() == 0
        watch.assert_clean()
    finally:
        context.close()


# The phone's feed drawer, scrolled to its chat: the list's height, its lines and which are whole,
# the drawer's title, and each mute button against the chat's box (its words' width too).
_DRAWER_CHAT_JS = """() => {
    const feed = document.querySelector('.table-screen.feed-open .feed');
    const list = feed.querySelector('.chat-list');
    list.scrollIntoView({block: 'nearest'});
    const l = list.getBoundingClientRect(), f = feed.getBoundingClientRect();
    const lines = [...list.querySelectorAll('.chat-line')].map((e) => e.getBoundingClientRect());
    const whole = lines.filter((r) => r.top >= l.top - 0.5 && r.bottom <= l.bottom + 0.5).length;
    const title = feed.querySelector('.feed-head h2'), t = title.getBoundingClientRect();
    const box = feed.querySelector('.chat-box').getBoundingClientRect();
    const mutes = [...feed.querySelectorAll('.chat-mute')].map((b) => {
        const r = b.getBoundingClientRect(), words = b.querySelector('.chat-mute-words') || b;
        return {inside: r.left >= box.left - 0.5 && r.right <= box.right + 0.5,
                fits: words.getBoundingClientRect().right <= r.right + 0.5
                    && b.scrollWidth <= b.clientWidth + 1,
                cut: words.scrollWidth > words.clientWidth + 1,
                title: b.title, label: b.getAttribute('aria-label'), oneLine: r.height < 44};
    });
    return {height: l.height, lineHeight: lines.length ? lines[0].height : 0, lines: lines.length, whole,
            lastWhole: lines.length > 0 && lines[lines.length - 1].bottom <= l.bottom + 0.5,
            listShown: l.top >= f.top - 0.5 && l.bottom <= f.bottom + 0.5,
            title: title.textContent,
            titleWhole: title.scrollWidth <= title.clientWidth + 1
                && title.scrollHeight <= title.clientHeight + 1 && t.left >= 0 && t.right <= innerWidth,
            mutes};
}"""

# A feed line for a move a bot made for seat 3 after a hint, drawn as the feed draws it (narrate.js):
# whether its tags stay inside the feed's list.
_NAMING_TAGS_JS = """async () => {
    const narrate = await import('/static/js/narrate.js');
    const c = window.__domeng;
    const room = {...c.room, round: {...c.room.round, by_bot: [0], hints: [{at: 0, seat: 3}]}};
    const log = [{type: 'placed', seat: 3, tile: '6-6', end: null, ends: [6, 6], mappakuling: false}];
    const list = document.querySelector('.feed-open .feed .feed-list');
    const [line] = narrate.feedLines(log, room, c.seat);
    list.append(line);
    const box = list.getBoundingClientRect();
    const tags = [...line.querySelectorAll('.tag')].map((t) => t.getBoundingClientRect());
    line.remove();
    const inside = tags.every((r) => r.left >= box.left - 0.5 && r.right <= box.right + 0.5);
    return {tags: tags.length, inside};
}"""

LONG_NAME = "Wolfeschlegelsteinhausenbergerdo"  # 32 characters, no space
EMOJI_NAME = "\U0001f600" * 30


_DRAWER_STATE_JS = """() => {
    const screen = document.querySelector('.table-screen'), form = document.querySelector('.feed .chat-form');
    return {lang: document.documentElement.lang, screens: document.querySelectorAll('.table-screen').length,
            feedOpen: !!screen && screen.classList.contains('feed-open'), form: !!form && !form.hidden,
            notice: document.querySelector('.feed .chat-notice')?.textContent ?? null,
            panel: !!window.__domeng?.panel,
            banner: document.querySelector('.banner:not([hidden])')?.textContent ?? null};
}"""
"""The feed drawer's own state, beside what `tests.browserkit.describe` says of the page."""


def _wait_for_open_drawer(page: Any, selector: str) -> None:
    """Wait until ``selector`` shows in the open feed drawer; past 30 s, fail with the drawer's
    state (drawer, chat form, notice, panel, banner) and the page's (`describe`: seat, phase,
    turn, legal actions, connection), to tell why."""
    try:
        page.wait_for_selector(f".table-screen.feed-open .feed {selector}", timeout=30_000)
    except PlaywrightTimeoutError:
        drawer = page.evaluate(_DRAWER_STATE_JS)
        raise AssertionError(
            f"the drawer's {selector} is not shown: {drawer}; the page: {describe(page)}"
        ) from None


def test_on_ones_turn_a_phones_drawer_shows_several_chat_lines_and_whole_mute_buttons(
    server: ServerProcess, browser: Any
) -> None:
    """A phone (390x844) on its own turn: the hand leaves the feed drawer about 400 px, and the chat's
    list was cut to one line (35 px) under the reactions, the form and the host's mute buttons. It
    shows several lines there, its latest line whole though the lines came while the drawer was
    closed, the drawer's title is whole in every language, and each mute button keeps inside the
    chat with a long name shortened (a 32-letter word, 30 emoji), whole in its title and label."""
    room = server.create_room(bots=[None, None, "easy", None, "easy"], turn_timer_s=0)
    code = room["code"]
    token = server.claim(code, 0, "Szilvia Kovácsné").json()["token"]
    long_token = server.claim(code, 1, LONG_NAME).json()["token"]
    assert server.claim(code, 3, EMOJI_NAME).status_code == 201
    context, page, watch = open_page(browser, PHONE)
    player = None
    try:
        sit_and_start(page, server, room, token, host=True)
        client = Client(server, code, long_token)
        for i in range(5):
            client.send({"type": "chat", "text": f"line {i + 1} from the other end of the table"})
        player = SocketPlayer(client)  # then plays its turns
        page.wait_for_function("() => document.querySelectorAll('.chat-list .chat-line').length === 5")
        wait_for_a_tile_to_place(page)  # no timer: the table waits on Ana
        page.click(".feed-toggle")
        _wait_for_open_drawer(page, ".chat-mute[data-seat='3']")
        for lang in languages():
            switch_language(page, lang)
            _wait_for_open_drawer(page, ".chat-mute[data-seat='3']")
            shown = page.evaluate(_DRAWER_CHAT_JS)
            assert shown["title"] == catalog_of(lang)["table.feed"] and shown["titleWhole"], (lang, shown)
            assert shown["listShown"] and shown["whole"] >= 3 and shown["lastWhole"], (lang, shown)
            for name, mute in zip((LONG_NAME, EMOJI_NAME), shown["mutes"], strict=True):
                words = catalog_of(lang)["chat.mute"].replace("{name}", name)
                assert mute["inside"] and mute["fits"] and mute["oneLine"], (lang, mute)
                assert mute["title"] == mute["label"] == words, (lang, mute)
            assert shown["mutes"][1]["cut"], (lang, shown)  # 30 emoji never fit a phone: shortened
        screenshot(page, "chat-drawer-my-turn-390x844")
        # the feed's tags that name someone ("bot for …", "… used a hint") stay inside its lines
        tags = page.evaluate(_NAMING_TAGS_JS)
        assert tags["tags"] == 2 and tags["inside"], tags
        assert page.evaluate("() => window.__domeng.view.to_act") == 0  # still our turn: the hand below
        watch.assert_clean()
    finally:
        if player:
            player.stop()
        context.close()


def test_a_refused_chat_line_stays_in_the_box_to_send_again(server: ServerProcess, browser: Any) -> None:
    """A line the server takes leaves the box once it comes back; one it refuses (here: past the
    chat's allowance of 5 lines at once) stays there, with the refusal said, to send again."""
    en = catalog_of("en")
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, DESKTOP, "en-US")
    try:
        sit_and_start(page, server, room, token)
        for n in range(1, 6):  # the allowance: each line is taken, and leaves the box
            page.fill(".chat-input", f"line {n}")
            page.press(".chat-input", "Enter")
            page.wait_for_function(f"() => document.querySelectorAll('.chat-list .chat-line').length === {n}")
            page.wait_for_function("() => document.querySelector('.chat-input').value === ''")
        page.fill(".chat-input", "one line too many")
        page.press(".chat-input", "Enter")
        page.wait_for_selector(f".toast-error:has-text('{en['error.chat_too_fast']}')")
        assert page.input_value(".chat-input") == "one line too many"
        assert "one line too many" not in _chat_texts(page)
        watch.assert_clean()
    finally:
        context.close()


def test_a_paste_too_long_for_one_line_is_cut_and_the_player_told(
    server: ServerProcess, browser: Any
) -> None:
    """The chat box takes 200 characters: a longer paste is cut there, and a note says so until the
    line is shortened or sent."""
    en = catalog_of("en")
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, DESKTOP, "en-US")
    try:
        sit_and_start(page, server, room, token)
        assert page.locator(".chat-cut").is_hidden()
        page.fill(".chat-input", "Lorem ipsum dolor " * 300)  # 5,400 characters at once
        assert len(page.input_value(".chat-input")) == 200
        page.wait_for_selector(".chat-cut:not([hidden])")
        assert page.text_content(".chat-cut") == en["chat.cut"]["other"].replace("{n}", "200")
        page.press(".chat-input", "Backspace")  # shorter than the limit: nothing is cut any more
        page.wait_for_selector(".chat-cut", state="hidden")
        page.fill(".chat-input", "")
        context.grant_permissions(["clipboard-read", "clipboard-write"])
        page.evaluate("() => navigator.clipboard.writeText('x'.repeat(250))")
        page.focus(".chat-input")
        page.keyboard.press("Control+V")  # a real paste
        page.wait_for_selector(".chat-cut:not([hidden])")
        assert page.input_value(".chat-input") == "x" * 200
        page.press(".chat-input", "Enter")  # sent and taken: the box and the note are cleared
        page.wait_for_function("() => document.querySelector('.chat-input').value === ''")
        assert page.locator(".chat-cut").is_hidden()
        assert _chat_texts(page) == ["x" * 200]
        watch.assert_clean()
    finally:
        context.close()


# A phone's open drawer: its empty-chat line (shown or not, its words, inside the chat box under its
# heading), and, the drawer scrolled to its end, its head against the drawer's top edge and whether
# the Close button is on top at its centre (nothing scrolled over it).
_DRAWER_HEAD_JS = """() => {
    const feed = document.querySelector('.table-screen.feed-open .feed');
    const box = (e) => e.getBoundingClientRect();
    const empty = feed.querySelector('.chat-empty'), chat = feed.querySelector('.chat-box');
    const shown = !!empty && empty.getClientRects().length > 0;
    const e = shown && box(empty), c = box(chat), h3 = box(chat.querySelector('h3'));
    feed.scrollTop = feed.scrollHeight;
    const f = box(feed), head = box(feed.querySelector('.feed-head'));
    const close = feed.querySelector('.feed-close'), x = box(close);
    return {scrolled: feed.scrollTop, headTop: head.top - f.top - feed.clientTop,
            closeOnTop: document.elementFromPoint((x.left + x.right) / 2, (x.top + x.bottom) / 2) === close,
            closeInside: x.top >= f.top && x.bottom <= f.bottom,
            lines: feed.querySelectorAll('.chat-line').length,
            empty: shown && {text: empty.textContent, whole: empty.scrollWidth <= empty.clientWidth + 1,
                             inside: e.left >= c.left - 0.5 && e.right <= c.right + 0.5
                                 && e.top >= h3.bottom - 0.5}};
}"""


def test_a_phones_drawer_keeps_its_head_in_view_and_says_when_nobody_has_written(
    server: ServerProcess, browser: Any
) -> None:
    """On a 360x740 phone, on one's own turn (the drawer ends above the hand and scrolls as a whole),
    the drawer's title, speaker and Close stay at its top however far it is scrolled: they scrolled
    away with a long chat. An empty chat showed nothing at all under its heading: it says "No
    messages yet", in every language, until someone writes."""
    room = server.create_room(bots=[None, None, None, "easy", "easy"], turn_timer_s=0)
    code = room["code"]
    token = server.claim(code, 0, "Ana").json()["token"]
    people = ((1, "Budi"), (2, "Citra"))
    clients = [Client(server, code, server.claim(code, seat, name).json()["token"]) for seat, name in people]
    players = [SocketPlayer(client) for client in clients]  # they play their turns (and say nothing yet)
    context, page, watch = open_page(browser, {"width": 360, "height": 740})
    try:
        sit_and_start(page, server, room, token)
        wait_for_a_tile_to_place(page)  # no timer: the table waits on Ana
        page.click(".feed-toggle")
        _wait_for_open_drawer(page, ".chat-form")
        for lang in languages():
            switch_language(page, lang)
            _wait_for_open_drawer(page, ".chat-form")
            shown = page.evaluate(_DRAWER_HEAD_JS)
            assert shown["lines"] == 0, shown
            said = catalog_of(lang)["chat.empty"]
            assert shown["empty"] == {"text": said, "whole": True, "inside": True}, (lang, shown)
            assert shown["headTop"] == 0 and shown["closeOnTop"] and shown["closeInside"], (lang, shown)
        screenshot(page, "chat-drawer-empty-360x740")
        for i in range(8):  # a long chat: Budi and Citra write (the table still waits for Ana)
            text = f"line {i + 1}: the table is long and so is this chat"
            clients[i % 2].send({"type": "chat", "text": text})  # four each: within a seat's five at once
        page.wait_for_function("() => document.querySelectorAll('.chat-list .chat-line').length === 8")
        for lang in ("en", "hu", "ru"):
            switch_language(page, lang)
            _wait_for_open_drawer(page, ".chat-line")
            shown = page.evaluate(_DRAWER_HEAD_JS)
            assert shown["lines"] == 8 and shown["empty"] is False, (lang, shown)
            assert shown["scrolled"] > 0 and shown["headTop"] == 0, (lang, shown)
            assert shown["closeOnTop"] and shown["closeInside"], (lang, shown)
            screenshot(page, f"chat-drawer-scrolled-360x740-{lang}")
        assert page.evaluate("() => window.__domeng.view.to_act") == 0  # still our turn: the hand below
        watch.assert_clean()
    finally:
        for player in players:
            player.stop()
        context.close()


_WRITING_JS = """() => { const input = document.querySelector('.feed .chat-input');
    return {open: document.querySelector('.table-screen').classList.contains('feed-open'),
            focused: document.activeElement === input, text: input.value,
            mine: window.__domeng.view.to_act === 0, round: window.__domeng.view.round}; }"""


def test_a_phones_drawer_stays_open_for_a_line_being_written_when_the_turn_comes(
    server: ServerProcess, browser: Any
) -> None:
    """The feed drawer steps aside when one's turn comes, but not from a player writing in its
    chat: it closed under their fingers (a phone's keyboard went with it). It stays, ending above
    the hand, with the line and the focus where they were, and the line is sent from there."""
    room = server.create_room(bots=[None, None, "easy", "easy", "easy"], turn_timer_s=0)
    code = room["code"]
    token = server.claim(code, 0, "Ana").json()["token"]
    budi = Client(server, code, server.claim(code, 1, "Budi").json()["token"])
    waiting: list[dict[str, Any]] = []  # the state in which Budi (no timer) holds the table

    def budi_holds_the_table() -> bool:
        with contextlib.suppress(TimeoutError):
            while not waiting:
                message = budi.recv(timeout=0.05)
                if my_turn_to_place(message):
                    waiting.append(message)
        return bool(waiting) and version_of(page) == waiting[0]["version"]

    context, page, watch = open_page(browser, PHONE)
    try:
        sit_and_start(page, server, room, token)
        for _ in range(20):  # Budi holds the table on his turn while Ana begins a line
            play_until(page, budi_holds_the_table)
            if not page.evaluate(_WRITING_JS)["open"]:
                page.click(".feed-toggle")
            page.fill(".feed .chat-input", "good game, every")  # focused, half written
            before = page.evaluate(_WRITING_JS)
            assert before["open"] and before["focused"] and not before["mine"], before
            while True:  # Budi plays, then the bots: Ana's turn, unless the round ends first
                if budi_holds_the_table():
                    assert budi.answer(waiting.pop())
                seen = version_of(page)
                now = page.evaluate(_WRITING_JS)
                if now["mine"] or now["round"] != before["round"] or page.locator(PANEL).count():
                    break
                wait_for_version(page, seen)
            if now["mine"] and now["round"] == before["round"] and not page.locator(PANEL).count():
                break  # the turn came to a line being written
        else:
            raise AssertionError("Ana's turn never came in a round she began to write in")
        page.wait_for_selector(".table-screen[data-my-turn='true']")
        shown = page.evaluate(_WRITING_JS)
        assert shown["open"] and shown["focused"] and shown["text"] == "good game, every", shown
        screenshot(page, "chat-drawer-writing-on-my-turn-390x844")
        page.press(".feed .chat-input", "Enter")
        page.wait_for_function("() => document.querySelectorAll('.chat-list .chat-line').length === 1")
        watch.assert_clean()
    finally:
        budi.close()
        context.close()


def _say_waiting(page: Any, text: str) -> None:
    page.fill(".waiting-chat .chat-input", text)
    page.press(".waiting-chat .chat-input", "Enter")


def _waiting_lines(page: Any) -> list[str]:
    return list(
        page.eval_on_selector_all(".waiting-chat .chat-line .said", "els => els.map((e) => e.textContent)")
    )


def test_the_host_and_a_friend_talk_in_the_first_waiting_room(server: ServerProcess, browser: Any) -> None:
    room = server.create_room(bots=[None, None, "easy", "easy", "easy"], turn_timer_s=0)
    code = room["code"]
    host_ctx, host, host_watch = open_page(browser, DESKTOP)
    friend_ctx, friend, friend_watch = open_page(browser, PHONE)
    try:
        goto(host, f"{server.url}/r/{code}")
        hold_host(host, code, room["host_token"])
        host.reload()
        host.wait_for_selector(".start-box")
        take_seat(host, 0, "Ana")
        goto(friend, f"{server.url}/r/{code}")
        take_seat(friend, 1, "Budi")
        for page in (host, friend):
            page.wait_for_selector(".waiting-chat .chat-input")
        _say_waiting(host, "hi, one more friend is coming")
        friend.wait_for_function("() => document.querySelectorAll('.waiting-chat .chat-line').length === 1")
        _say_waiting(friend, "great, I'll wait")
        for page in (host, friend):  # the friend's own line comes back to it from the server too
            page.wait_for_function("() => document.querySelectorAll('.waiting-chat .chat-line').length === 2")
        assert (
            _waiting_lines(host)
            == _waiting_lines(friend)
            == ["hi, one more friend is coming", "great, I'll wait"]
        )
        screenshot(host, "chat-waiting-chat-1280x800")
        friend.locator(".waiting-chat").scroll_into_view_if_needed()
        screenshot(friend, "chat-waiting-chat-390x844")
        for watch in (host_watch, friend_watch):
            watch.assert_clean()
    finally:
        host_ctx.close()
        friend_ctx.close()


def test_a_spectator_the_host_removed_is_offered_no_seat_in_the_waiting_room(
    server: ServerProcess, browser: Any
) -> None:
    """A new user's report: a spectator the host removed before the start still saw the waiting
    room's name box and a "Sit here" on every free or bot's seat, before and after a reload, and
    each try was refused (``403 spectator_removed``: a removal holds for the room's matches,
    docs/protocol.md). The page offers no seat then: it says why, with the way to the lobby."""
    en = catalog_of("en")
    room = server.create_room(bots=[None, None, "easy", "easy", "easy"], turn_timer_s=0)
    code = room["code"]
    context, page, watch = open_page(browser, PHONE, "en-US")
    try:
        goto(page, f"{server.url}/r/{code}")
        page.wait_for_selector(".sit[data-seat='0']")  # a spectator, who may sit down
        tag = page.wait_for_function("() => window.__domeng.watcherTag").json_value()
        reply = httpx.delete(
            f"{server.url}/api/rooms/{code}/spectators/{tag}",
            headers={"Authorization": f"Bearer {room['host_token']}"},
            timeout=10,
        )
        assert reply.status_code == 200, reply.text
        for reloaded in (False, True):
            if reloaded:
                page.reload()
                page.wait_for_selector(".seat-list")
            page.wait_for_selector(".banner:not([hidden])")
            assert en["room.removed"] in page.text_content(".banner"), reloaded
            page.wait_for_selector(".sit", state="detached")
            assert page.locator("#player-name:visible").count() == 0, reloaded
        watch.assert_clean()
    finally:
        context.close()
