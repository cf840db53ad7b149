"""A friend who opens the room's link after the match has started, in Chromium: the table says they
watch and how they come to play (a free seat or a bot's when the host starts the next match), in
every language; at the match's end the final panel says it too, and once the host presses Play
again that panel's Take a seat leads to the next match's waiting room, the name box ready, where
they sit down and play. Screenshots go to artifacts/screenshots/."""

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
    hold_seat,
    languages,
    open_page,
    screenshot,
    switch_language,
)
from tests.serverkit import ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path_factory.mktemp("browser-watch"),
        env={"DOMENG_BOT_DELAY_S": "0.02", "DOMENG_ROUND_PAUSE_S": "0.3"},
    ).start()
    yield process
    process.stop()


LANDSCAPE = {"width": 740, "height": 360}

# The note ``selector`` names: its text, whether it is shown within the window and whether its
# words are whole (not cut by its line limit).
NOTE_SHOWN = """(selector) => {
    const note = document.querySelector(selector), r = note.getBoundingClientRect();
    return {text: note.textContent, box: [r.left, r.top, r.right, r.bottom],
            shown: r.width > 0 && r.height > 0 && r.top >= 0 && r.bottom <= innerHeight,
            whole: note.scrollHeight <= note.clientHeight + 1 && note.scrollWidth <= note.clientWidth + 1};
}"""


def _shown_text(page: Any, selector: str) -> str | None:
    """The text of ``selector`` when it is shown (None when hidden or absent)."""
    found = page.locator(selector)
    return str(found.text_content()) if found.count() and found.is_visible() else None


def test_a_late_friend_is_told_how_to_play_and_takes_a_seat_when_the_host_plays_again(
    server: ServerProcess, browser: Any
) -> None:
    """Five bots play a one-election match; Dewi opens the link once it has started. Her table
    said only "You are watching. … is playing."; now a note under it says that she can take a
    free seat or a bot's when the host starts the next match, in every language, and her final
    panel says so in place of "Thanks for playing!", on a phone upright and on its side too, whole
    (a phone's final panel dropped that line as a player's thanks). The host presses Play again:
    the panel says match 2 is being set up and offers Take a seat, which closes it on the waiting
    room with the name box focused; Enter sits her down in a bot's seat, and match 2 deals her a
    hand."""
    en = catalog_of("en")
    room = server.create_room(bots=["easy"] * 5, turn_timer_s=0, options={"camat_target": 1})
    code, host_token = room["code"], room["host_token"]
    assert server.start_match(code, host_token).status_code == 200
    context, page, watch = open_page(browser, PHONE)
    try:
        goto(page, f"{server.url}/r/{code}")
        page.wait_for_selector(".table-screen")
        for lang in languages():
            switch_language(page, lang)
            page.wait_for_selector(".table-screen .watch-note")
            assert _shown_text(page, ".watch-note") == catalog_of(lang)["table.watch_next"], lang
        switch_language(page, "en")
        screenshot(page, "watch-note-390x844-en")
        page.wait_for_selector(f"{PANEL} .standings", timeout=600_000)  # the bots played match 1 out
        assert page.text_content(f"{PANEL} .panel-note") == en["table.watch_next"]
        # and shown whole, as the table shows it: a phone's final panel dropped its note line
        for viewport in (PHONE, LANDSCAPE):
            page.set_viewport_size(viewport)
            for lang in [*languages(), "en"]:
                switch_language(page, lang)
                page.wait_for_function("(w) => innerWidth === w", arg=viewport["width"])
                note = page.evaluate(NOTE_SHOWN, f"{PANEL} .panel-note")
                assert note["text"] == catalog_of(lang)["table.watch_next"], (viewport, lang, note)
                assert note["shown"] and note["whole"], (viewport, lang, note)
            screenshot(page, f"watch-final-panel-{viewport['width']}x{viewport['height']}-en")
        page.set_viewport_size(PHONE)
        assert page.locator(f"{PANEL} .play-again").count() == 0  # only the host or a seat asks that
        assert _shown_text(page, ".watch-note") == en["table.watch_next"]  # at the table behind it too

        reply = httpx.post(
            f"{server.url}/api/rooms/{code}/again",
            headers={"Authorization": f"Bearer {host_token}"},
            timeout=20,
        )
        assert reply.status_code == 200, reply.text
        page.wait_for_selector(".again-box", state="attached")
        assert page.text_content(f"{PANEL} .panel-note") == en["panel.next_match"].replace("{n}", "2")
        offer = page.locator(f"{PANEL} .take-seat")
        assert offer.text_content() == en["panel.take_seat"]
        screenshot(page, "watch-take-seat-390x844-en")
        offer.click()
        page.wait_for_selector(PANEL, state="detached")
        page.wait_for_function("() => document.activeElement?.id === 'player-name'")
        page.keyboard.type("Dewi")
        page.keyboard.press("Enter")
        page.wait_for_function("() => window.__domeng.seat !== null")
        seat = page.evaluate("() => window.__domeng.seat")
        page.wait_for_selector(f".seat-row.mine[data-seat='{seat}'] .seat-name")
        assert page.text_content(f".seat-row.mine[data-seat='{seat}'] .seat-name") == "Dewi"

        assert server.start_match(code, host_token).status_code == 200
        page.wait_for_selector(".table-screen")
        page.wait_for_function("() => window.__domeng.view?.hand?.length > 0")
        assert _shown_text(page, ".watch-note") is None  # she plays now
        watch.assert_clean()
    finally:
        context.close()


# The open round-end panel as a person reads it (once its fair-deal check is done): its note, the
# note's classes, its foot's buttons and every word in it.
PANEL_SHOWN = """(selector) => {
    const panel = document.querySelector(selector), note = panel.querySelector('.panel-note');
    const foot = [...panel.querySelectorAll('.panel-foot > *')];
    return {note: note.textContent, classes: note.className, text: panel.textContent,
            foot: foot.map((e) => e.className + ': ' + e.textContent),
            mine: panel.querySelectorAll('.mine').length};
}"""


def _panel_shown(page: Any) -> dict[str, Any]:
    page.wait_for_selector(f"{PANEL} .fair-result[data-ok]")
    shown: dict[str, Any] = page.evaluate(PANEL_SHOWN, PANEL)
    return shown


def test_a_spectators_last_match_from_the_waiting_room_is_the_panel_shown_at_its_end(
    server: ServerProcess, browser: Any
) -> None:
    """Dewi watches five bots play a one-election match out: its final panel tells her how she
    comes to play, with no Play again. She closes it and the host presses Play again; the waiting
    room's Last match opens that panel again as it was shown (it said "Thanks for playing!", a
    player's thanks, as if she had played), drawn again in another language too, and still so once
    she has taken a seat in match 2 (she held none in match 1: no seat of it is hers)."""
    en = catalog_of("en")
    room = server.create_room(bots=["easy"] * 5, turn_timer_s=0, options={"camat_target": 1})
    code, host_token = room["code"], room["host_token"]
    assert server.start_match(code, host_token).status_code == 200
    context, page, watch = open_page(browser, DESKTOP)
    try:
        goto(page, f"{server.url}/r/{code}")
        page.wait_for_selector(f"{PANEL} .standings", timeout=600_000)  # the bots played match 1 out
        live = _panel_shown(page)
        assert live["note"] == en["table.watch_next"] and "watch-next" in live["classes"], live
        close_panel(page)
        reply = httpx.post(
            f"{server.url}/api/rooms/{code}/again",
            headers={"Authorization": f"Bearer {host_token}"},
            timeout=20,
        )
        assert reply.status_code == 200, reply.text
        page.wait_for_selector(".again-box .last-match")
        page.click(".again-box .last-match")
        page.wait_for_selector(f"{PANEL} .standings")
        assert _panel_shown(page) == live
        screenshot(page, "watch-last-match-1280x800-en")
        switch_language(page, "id")  # drawn again, the panel with it
        page.wait_for_selector(f"{PANEL} .standings")
        assert _panel_shown(page)["note"] == catalog_of("id")["table.watch_next"]
        switch_language(page, "en")
        close_panel(page)
        page.fill("#player-name", "Dewi")
        page.keyboard.press("Enter")
        page.wait_for_function("() => window.__domeng.seat !== null")
        page.click(".again-box .last-match")
        page.wait_for_selector(f"{PANEL} .standings")
        assert _panel_shown(page) == live
        watch.assert_clean()
    finally:
        context.close()


def test_a_seated_player_and_the_host_get_no_spectators_note(server: ServerProcess, browser: Any) -> None:
    """The note is a spectator's only: the seated player's table and the host's (who holds no seat
    here) say nothing of taking a seat."""
    room = server.create_room(bots=[None, *["easy"] * 4], turn_timer_s=0)
    code, host_token = room["code"], room["host_token"]
    token = server.claim(code, 0, "Ana").json()["token"]
    assert server.start_match(code, host_token).status_code == 200
    for who in ("seat", "host"):
        context, page, watch = open_page(browser, PHONE)
        try:
            goto(page, f"{server.url}/")
            if who == "seat":
                hold_seat(page, code, token, 0)
            else:
                hold_host(page, code, host_token)
            goto(page, f"{server.url}/r/{code}")
            page.wait_for_selector(".table-screen .me-status .status")
            page.wait_for_function("() => !!document.querySelector('.me-status .status')?.textContent")
            assert _shown_text(page, ".watch-note") is None, who
            watch.assert_clean()
        finally:
            context.close()


def test_a_friend_at_a_waiting_room_whose_every_seat_is_taken_is_told_so(
    server: ServerProcess, browser: Any
) -> None:
    """Five people hold the five seats before the start; a sixth opens the link. The waiting room
    showed the seats and the chat and said nothing of why there was nowhere to sit: it says every
    seat is taken and that a seat left before the start can be taken, in every language; when one
    of the five leaves, the name box and Sit here show and the note goes."""
    room = server.create_room(bots=[None] * 5, turn_timer_s=0)
    code = room["code"]
    tokens = [
        server.claim(code, seat, name).json()["token"]
        for seat, name in enumerate(("Ana", "Budi", "Cici", "Dodi", "Eka"))
    ]
    context, page, watch = open_page(browser, PHONE)
    try:
        goto(page, f"{server.url}/r/{code}")
        for lang in [*languages(), "en"]:
            switch_language(page, lang)
            page.wait_for_function(
                "(text) => document.querySelector('.waiting-full')?.textContent === text",
                arg=catalog_of(lang)["waiting.full"],
            )
        assert page.locator(".name-box").count() == 0
        screenshot(page, "waiting-room-full-390x844-en")
        left = httpx.delete(
            f"{server.url}/api/rooms/{code}/seats/4",
            headers={"Authorization": f"Bearer {tokens[4]}"},
            timeout=10,
        )
        assert left.is_success, left.text
        page.wait_for_selector(".name-box")
        page.wait_for_selector(".waiting-full", state="detached")
        watch.assert_clean()
    finally:
        context.close()
