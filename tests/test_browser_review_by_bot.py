"""A round a bot played all of for the player, at its round-end panel in Chromium: the page knows it
(the round's public ``by_bot``: every one of the seat's moves in the log is a bot's), so the panel
says at once that there is nothing of theirs to review, in the player's language, and offers no
"Review my round" for the server to answer with ``all_by_bot``. A round with one move of their own
still offers the review."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browserkit import (
    PANEL,
    PHONE,
    catalog_of,
    languages,
    open_page,
    play_until,
    sit_and_start,
    switch_language,
)
from tests.serverkit import ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    env = {"DOMENG_BOT_DELAY_S": "0.05", "DOMENG_ROUND_PAUSE_S": "600", "DOMENG_TURN_TIMER_S": "0"}
    process = ServerProcess(tmp_path_factory.mktemp("browser-review-by-bot"), env=env).start()
    yield process
    process.stop()


# The round the page kept as it ended, its ``by_bot`` made the seat's moves (all of them, or all
# but its first): as the room would send it had a bot made them for the player. The panel drawn
# again from it, as the bar's "Round results" draws it.
AS_IF_BY_BOT = """(allButFirst) => {
    const c = window.__domeng, log = c.roundEnd.view.log;
    const moves = ['placed', 'passed', 'drew'];
    const mine = log.flatMap((e, i) => (e.seat === c.seat && moves.includes(e.type) ? [i] : []));
    const byBot = allButFirst ? mine.slice(1) : mine;
    const round = {...c.roundEnd.room.round, by_bot: byBot};
    c.roundEnd = {...c.roundEnd, room: {...c.roundEnd.room, round}};
    c.openRoundEnd({asked: true});
    return mine.length;
}"""

SECTION = f"{PANEL} .review-section"


def test_a_round_a_bot_played_all_of_says_so_without_offering_a_review(
    server: ServerProcess, browser: Any
) -> None:
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, PHONE)
    try:
        sit_and_start(page, server, room, token)
        play_until(page, lambda: page.locator(PANEL).count() > 0, timeout=180)
        # Ana played her round: the review is offered
        assert page.locator(f"{SECTION} .review-button").count() == 1
        assert page.locator(f"{SECTION} .review-all-by-bot").count() == 0

        # a bot made every move of hers: said up front, no button
        assert page.evaluate(AS_IF_BY_BOT, False) > 0  # the panel is drawn again as it returns
        assert page.locator(f"{SECTION} .review-button").count() == 0
        assert page.locator(f"{SECTION} .review-all-by-bot").count() == 1
        for lang in languages():
            switch_language(page, lang)  # the open panel is drawn again in it
            text = page.text_content(f"{SECTION} .review-all-by-bot")
            assert text == catalog_of(lang)["review.all_by_bot"], (lang, text)
            assert page.locator(f"{SECTION} .review-button").count() == 0, lang
        switch_language(page, "en")

        # one move of her own: there is something to review
        page.evaluate(AS_IF_BY_BOT, True)
        assert page.locator(f"{SECTION} .review-button").count() == 1
        assert page.locator(f"{SECTION} .review-all-by-bot").count() == 0
        watch.assert_clean()
    finally:
        context.close()
