"""The host's chat controls list every spectator watching, in Chromium: the host could mute or
remove only the spectators who had written a line, so a silent one was out of reach. Now each
spectator present shows, by the name it gave or its tag, with Mute and Remove, and leaves the list
when it goes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed

from tests.browserkit import DESKTOP, catalog_of, goto, hold_host, hold_seat, open_page, screenshot
from tests.serverkit import Client, ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("browser-silent-spectators")).start()
    yield process
    process.stop()


def _spectator(server: ServerProcess, code: str, name: str | None = None) -> tuple[Client, str]:
    """A spectator's socket in room ``code``, named ``name`` in the chat if given: it and its tag.
    It writes nothing."""
    client = Client(server, code)
    tag: str = client.wait_for(lambda m: m["type"] == "welcome")["tag"]
    if name is not None:
        client.send({"type": "name", "name": name})
        client.wait_for(lambda m: m["type"] == "named")
    return client, tag


def test_the_host_mutes_and_removes_spectators_who_never_wrote(server: ServerProcess, browser: Any) -> None:
    en = catalog_of("en")
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"])
    code = room["code"]
    token = server.claim(code, 0, "Ana").json()["token"]
    context, ana, watch = open_page(browser, DESKTOP, "en-US")
    dewi, dewi_tag = _spectator(server, code, "Dewi")
    quiet, quiet_tag = _spectator(server, code)
    try:
        goto(ana, f"{server.url}/r/{code}")  # Ana, seated, is the host: the waiting room's chat
        hold_seat(ana, code, token, 0)
        hold_host(ana, code, room["host_token"])
        ana.reload()
        for tag in (dewi_tag, quiet_tag):
            ana.wait_for_selector(f".waiting-chat .chat-remove[data-watcher='{tag}']")
        labels = ana.eval_on_selector_all(
            ".waiting-chat .chat-mute[data-watcher]",
            "els => els.map((e) => [e.dataset.watcher, e.textContent])",
        )
        named = en["chat.spectator_named_tag"].replace("{name}", "Dewi").replace("{tag}", dewi_tag)
        unnamed = en["chat.spectator_tag"].replace("{tag}", quiet_tag)
        assert labels == [
            [dewi_tag, en["chat.mute"].replace("{name}", named)],
            [quiet_tag, en["chat.mute"].replace("{name}", unnamed)],
        ]
        assert ana.locator(".chat-list .chat-line").count() == 0  # neither wrote
        screenshot(ana, "host-silent-spectators-1280")

        ana.click(f".waiting-chat .chat-mute[data-watcher='{quiet_tag}']")
        rules = quiet.wait_for(lambda m: m["type"] == "chat_rules")
        assert rules["rules"]["muted_spectators"] == [quiet_tag] and rules["you_muted"] is True

        ana.click(f".waiting-chat .chat-remove[data-watcher='{dewi_tag}']")
        with pytest.raises(ConnectionClosed) as closed:
            dewi.wait_for(lambda m: False, timeout=10)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4006
        ana.wait_for_selector(f".chat-mute[data-watcher='{dewi_tag}']", state="detached")
        assert ana.locator(f".chat-mute[data-watcher='{quiet_tag}']").count() == 1
        watch.assert_clean()
    finally:
        quiet.close()
        context.close()


def _ana_muted_leaves_seat_1(server: ServerProcess, chat: dict[str, Any]) -> tuple[str, str, str]:
    """A new room of ``server``: the host, Hosta, in seat 0; Ana in seat 1 from her own address
    (127.0.0.2); the host's chat rules set to ``chat`` (a PUT of /chat: her seat's mute, say);
    then Ana leaves her seat. The room's code, its host token, and Hosta's token."""
    room = server.create_room(bots=[None, None, "easy", "easy", "easy"])
    code, host_token = room["code"], room["host_token"]
    token = server.claim(code, 0, "Hosta").json()["token"]
    with server.http_from("127.0.0.2") as ana_http:  # Ana's own address
        ana_token = ana_http.post(f"/api/rooms/{code}/seats/1", json={"name": "Ana"}).json()["token"]
        muted = httpx.put(
            f"{server.url}/api/rooms/{code}/chat",
            json=chat,
            headers={"Authorization": f"Bearer {host_token}"},
            timeout=10,
        )
        assert muted.status_code == 200
        left = ana_http.delete(f"/api/rooms/{code}/seats/1", headers={"Authorization": f"Bearer {ana_token}"})
        assert left.status_code == 200
    return code, host_token, token


def test_the_host_sees_and_unmutes_a_muted_seats_person_who_left_it_to_another(
    server: ServerProcess, browser: Any
) -> None:
    en = catalog_of("en")
    code, host_token, token = _ana_muted_leaves_seat_1(server, {"spectators": True, "muted": {"1": True}})
    context, page, watch = open_page(browser, DESKTOP, "en-US")
    ana = Client(server, code, source="127.0.0.2")  # she watches on, from her address
    try:
        ana_tag = ana.wait_for(lambda m: m["type"] == "welcome")["tag"]
        ana.wait_for(lambda m: m["type"] == "chat_log")
        goto(page, f"{server.url}/r/{code}")
        hold_seat(page, code, token, 0)
        hold_host(page, code, host_token)
        page.reload()
        page.wait_for_selector(".waiting-chat .allow-spectators:checked")  # the host's controls
        with server.http_from("127.0.0.3") as budi_http:  # another person takes her seat
            assert budi_http.post(f"/api/rooms/{code}/seats/1", json={"name": "Budi"}).status_code == 201
        rules = ana.wait_for(lambda m: m["type"] == "chat_rules")
        assert rules["you_muted"] is True and rules["rules"]["muted"] == [] and "left" not in rules["rules"]
        (tag,) = rules["rules"]["muted_spectators"]
        row = f".waiting-chat .chat-mute[data-watcher='{tag}']"
        page.wait_for_selector(f"{row}[aria-pressed='true']")
        named = en["chat.left_seat"].replace("{name}", "Ana").replace("{tag}", tag)
        assert page.text_content(row) == en["chat.unmute"].replace("{name}", named)
        assert page.locator(".waiting-chat .chat-mute[data-seat='1'][aria-pressed='false']").count() == 1
        # the tab she watches from is muted too (by her address): its row says so, never "Mute"
        assert tag != ana_tag
        watching = f".waiting-chat .chat-mute[data-watcher='{ana_tag}']"
        page.wait_for_selector(f"{watching}[aria-pressed='true']")
        assert page.text_content(watching).startswith(en["chat.unmute"].split("{name}")[0])
        screenshot(page, "host-muted-left-seat-1280")

        page.click(row)  # the host lifts it: Ana chats again, and the row goes
        rules = ana.wait_for(lambda m: m["type"] == "chat_rules")
        assert rules["you_muted"] is False and rules["rules"]["muted_spectators"] == []
        page.wait_for_selector(row, state="detached")
        page.wait_for_selector(f"{watching}[aria-pressed='false']")  # her tab no longer held
        ana.send({"type": "chat", "text": "thanks"})
        ana.wait_for(lambda m: m["type"] == "chat" and m["line"]["text"] == "thanks")
        watch.assert_clean()
    finally:
        ana.close()
        context.close()


def test_a_muted_person_not_watching_is_offered_no_remove(server: ServerProcess, browser: Any) -> None:
    """A muted seat's person who left the seat to another and does not watch is listed for the
    host to unmute ("Ana (left the seat, TAG)"), but with no Remove: there is nobody at the table
    to remove, and the button only answered 404 ``no_such_spectator``. A spectator watching keeps
    both buttons."""
    en = catalog_of("en")
    code, host_token, token = _ana_muted_leaves_seat_1(server, {"muted": {"1": True}})
    with server.http_from("127.0.0.3") as budi_http:  # another person takes her seat
        assert budi_http.post(f"/api/rooms/{code}/seats/1", json={"name": "Budi"}).status_code == 201
    context, page, watch = open_page(browser, DESKTOP, "en-US")
    dewi, dewi_tag = _spectator(server, code, "Dewi")
    try:
        goto(page, f"{server.url}/r/{code}")
        hold_seat(page, code, token, 0)
        hold_host(page, code, host_token)
        page.reload()
        page.wait_for_selector(f".waiting-chat .chat-remove[data-watcher='{dewi_tag}']")
        (tag,) = [
            t
            for t in page.eval_on_selector_all(
                ".waiting-chat .chat-mute[data-watcher][aria-pressed='true']",
                "els => els.map(e => e.dataset.watcher)",
            )
        ]
        named = en["chat.left_seat"].replace("{name}", "Ana").replace("{tag}", tag)
        assert page.text_content(f".waiting-chat .chat-mute[data-watcher='{tag}']") == en[
            "chat.unmute"
        ].replace("{name}", named)
        assert page.locator(f".waiting-chat .chat-remove[data-watcher='{tag}']").count() == 0
        assert page.locator(f".waiting-chat .chat-mute[data-watcher='{dewi_tag}']").count() == 1
        watch.assert_clean()
    finally:
        dewi.close()
        context.close()
