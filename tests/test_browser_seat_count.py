"""The host sets a Kozel table's number of seats in Chromium (docs/protocol.md, ``seats``; RULES.md
K1): three friends finish a 3-seat match, the host presses Play again and chooses 4 players in the
setup panel, a fourth friend opens the same link and takes the new seat, the host's attempt to go
back to 3 is refused beside the seat count (a person sits there), and the match starts with 4.
Screenshots go to artifacts/screenshots/."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browserkit import (
    DESKTOP,
    PANEL,
    PHONE,
    SocketPlayer,
    catalog_of,
    close_panel,
    goto,
    open_as_host,
    open_page,
    screenshot,
    take_seat,
)
from tests.serverkit import Client, ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path_factory.mktemp("browser-seat-count"),
        env={"DOMENG_TURN_TIMER_S": "0", "DOMENG_BOT_DELAY_S": "0.02", "DOMENG_ROUND_PAUSE_S": "0.3"},
    ).start()
    yield process
    process.stop()


def test_the_host_plays_again_at_four_seats_and_a_fourth_friend_takes_the_new_one(
    server: ServerProcess, browser: Any
) -> None:
    en = catalog_of("en")
    room = server.create_room(variant="kozel", seats=3, bots=[None, None, "easy"], turn_timer_s=0)
    code = room["code"]
    # Ana and Budi play match 1 through the protocol; the host watches it end in the browser
    players = [
        SocketPlayer(Client(server, code, server.claim(code, seat, name).json()["token"]))
        for seat, name in ((0, "Ana"), (1, "Budi"))
    ]
    host_ctx, host, host_watch = open_page(browser, DESKTOP, "en-US")
    dewi_ctx, dewi, dewi_watch = open_page(browser, PHONE, "en-US")
    try:
        open_as_host(host, server, room)
        assert host.locator("#opt-seats").input_value() == "3"
        host.click(".start-box .btn-gold")
        host.wait_for_selector(f"{PANEL} .play-again", timeout=600_000)  # match 1 played out
        host.click(f"{PANEL} .play-again")
        host.wait_for_selector(".again-box", state="attached")
        host.wait_for_selector(PANEL, state="detached")

        # the host makes the next match's table 4 seats: stored, then every page shows the new seat
        host.select_option("#opt-seats", "4")
        host.wait_for_selector(".seat-row[data-seat='3']")
        assert host.evaluate("() => window.__domeng.room.seats.length") == 4
        assert host.locator("#opt-seats").input_value() == "4"
        assert host.locator("#opt-pairs").count() == 1  # pairs may be chosen at 4 seats (K10)
        # the last match's result is still the 3 players'
        host.click(".again-box .last-match")
        host.wait_for_selector(f"{PANEL} .standings")
        assert host.locator(f"{PANEL} .standings tbody tr").count() == 3
        close_panel(host)

        # a fourth friend opens the same link and takes the new seat
        goto(dewi, f"{server.url}/r/{code}")
        take_seat(dewi, 3, "Dewi")
        host.wait_for_selector(".seat-row[data-seat='3'] .seat-name")
        assert host.text_content(".seat-row[data-seat='3'] .seat-name") == "Dewi"

        # going back to 3 seats would take Dewi's: refused, said beside the count, the table kept
        host.select_option("#opt-seats", "3")
        error = host.locator("#opt-seats-error")
        error.wait_for()
        assert error.text_content() == en["waiting.seats_taken"].replace("{seat}", "4").replace(
            "{name}", "Dewi"
        )
        assert host.locator("#opt-seats").input_value() == "4"
        assert host.locator("#opt-seats").get_attribute("aria-invalid") == "true"
        assert host.evaluate("() => window.__domeng.room.seats.length") == 4
        error.scroll_into_view_if_needed()
        screenshot(host, "seat-count-refused-1280-en")
        assert host_watch.errors == [
            "console: Failed to load resource: the server responded with a status of 409 (Conflict)"
        ]
        host_watch.errors.clear()  # the refused request is the only error

        host.click(".start-box .btn-gold")
        for page in (host, dewi):
            page.wait_for_selector(".table-screen")
        shown = host.evaluate("() => window.__domeng.room")
        assert (shown["match"], len(shown["seats"])) == (2, 4)
        assert [(s["kind"], s["name"]) for s in shown["seats"]] == [
            ("human", "Ana"),
            ("human", "Budi"),
            ("bot", None),
            ("human", "Dewi"),
        ]
        dewi.wait_for_function("() => window.__domeng.view?.hand && window.__domeng.view.log")
        # K1: 5 tiles each at 4 seats. Her hand may have grown already: a draw that is her only
        # choice is made for her (K3), as soon as the turn comes to her
        dealt = dewi.evaluate(
            """() => {
                const view = window.__domeng.view;
                const hers = (type) => view.log.filter((e) => e.type === type && e.seat === view.seat).length;
                return view.hand.length - hers("drew") + hers("placed");
            }"""
        )
        assert dealt == 5
        assert dewi.evaluate("() => window.__domeng.view.hand_counts.length") == 4
        screenshot(dewi, "seat-count-four-390-en")
        host_watch.assert_clean()
        dewi_watch.assert_clean()
    finally:
        host_ctx.close()
        dewi_ctx.close()
        for player in players:
            player.stop()
