"""The host's chat controls list every spectator watching, in Chromium: the host could mute or
remove only the spectators who had written a line, so a silent one was out of reach. Now each
spectator present shows, by the name it gave or its tag, with Mute and Remove, and leaves the list
when it goes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

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
