"""The host ends a no-limit match, in Chromium (docs/rules.md, "Match end": "play to N elections
or until the host stops it").

Budi plays a no-limit Domeng match on a phone with three bots, the host watches from a desktop tab
(holding no seat) and a spectator from a third. On Budi's turn the host presses the bar's End
match, is asked to confirm above the hand and confirms: everyone sees "Last round" (the host with
Keep playing) and a notice, and the round plays on; when Budi's play ends it, everyone gets the
final panel (the standings, the note that the host ended the match), the host and Budi with Play
again, and nobody gets another round. The lobby and the waiting room say, in every language, that
the host ends a match with "No limit".
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browserkit import (
    DESKTOP,
    PANEL,
    PHONE,
    catalog_of,
    describe,
    goto,
    hold_host,
    languages,
    open_as_host,
    open_page,
    open_seated,
    play_until,
    screenshot,
    switch_language,
)
from tests.serverkit import ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    env = {"DOMENG_BOT_DELAY_S": "0.1", "DOMENG_ROUND_PAUSE_S": "1", "DOMENG_TURN_TIMER_S": "0"}
    process = ServerProcess(tmp_path_factory.mktemp("browser-stop"), env=env).start()
    yield process
    process.stop()


def _budis_turn(page: Any) -> bool:
    """Budi has a tile to place (the room waits for him: no turn timer)."""
    return bool(
        page.evaluate(
            "() => { const v = window.__domeng?.view; return !!v && v.phase === 'playing'"
            " && v.to_act === window.__domeng.seat && v.legal.some((a) => a.play); }"
        )
    )


def _over(page: Any) -> bool:
    return bool(page.evaluate("() => !!window.__domeng?.view?.match_over"))


def test_the_host_ends_a_no_limit_match_and_everyone_sees_the_final_panel(
    server: ServerProcess, browser: Any
) -> None:
    words = catalog_of("en")
    room = server.create_room(bots=[None, "easy", "greedy", "random", "easy"], options={"camat_target": 0})
    code = room["code"]
    token = server.claim(code, 0, "Budi").json()["token"]
    host_ctx, host, host_watch = open_page(browser, DESKTOP)
    budi_ctx, budi, budi_watch = open_page(browser, PHONE)
    fan_ctx, fan, fan_watch = open_page(browser, DESKTOP)
    open_as_host(host, server, room)  # the host watches, holding no seat
    open_seated(budi, server, room, token)
    goto(fan, f"{server.url}/r/{code}")
    host.click(".start-box .btn-gold")
    for page in (host, budi, fan):
        page.wait_for_selector(".table-screen")

    # nobody but the host is offered End match; the host is, at a table in play
    host.wait_for_selector(".stop-btn:not([hidden])")
    assert (
        budi.locator(".stop-btn:not([hidden])").count() == 0
        and fan.locator(".stop-btn:not([hidden])").count() == 0
    )
    play_until(budi, lambda: _budis_turn(budi), timeout=120)
    at_round = budi.evaluate("() => window.__domeng.view.round")

    host.click(".stop-btn")  # the confirm step: nothing is asked yet
    host.wait_for_selector(".stop-note .stop-confirm")
    assert host.text_content(".stop-note > span") == words["stop.ask"]
    assert host.evaluate("() => window.__domeng.room.host_stop") is False
    switch_language(host, "ru")  # the table is drawn again: the step stays asked, in its words
    assert host.text_content(".stop-note > span") == catalog_of("ru")["stop.ask"]
    switch_language(host, "en")
    assert host.text_content(".stop-note > span") == words["stop.ask"]
    host.click(".stop-note .stop-cancel")  # Cancel takes the step back
    host.wait_for_selector(".stop-note", state="hidden")
    host.click(".stop-btn")
    host.click(".stop-note .stop-confirm")

    for page in (host, budi, fan):
        page.wait_for_function("() => window.__domeng.room.host_stop === true")
        page.wait_for_selector(".stop-note:not([hidden])")
        assert words["stop.note"] in page.text_content(".stop-note"), describe(page)
    budi.wait_for_selector(f".toast:has-text('{words['stop.note']}')")  # the notice
    host.wait_for_selector(".stop-note .stop-undo")  # the host may take it back
    assert budi.locator(".stop-note button").count() == 0 and fan.locator(".stop-note button").count() == 0
    assert host.locator(".stop-btn:not([hidden])").count() == 0
    assert budi.evaluate("() => window.__domeng.view.phase") == "playing"  # the round is not cut
    screenshot(budi, "stop-last-round-390")
    for lang in [*languages(), "en"]:  # the note says it whole on a phone, in every language
        switch_language(host, lang)
        switch_language(budi, lang)
        assert budi.text_content(".stop-note > span") == catalog_of(lang)["stop.note"]
        assert host.text_content(".stop-note .stop-undo") == catalog_of(lang)["stop.undo"]
        assert budi.evaluate("() => document.documentElement.scrollWidth <= innerWidth"), lang
        assert (
            host.evaluate("() => window.__i18nMissing") == [] == budi.evaluate("() => window.__i18nMissing")
        )

    play_until(budi, lambda: _over(budi), timeout=180)
    for page in (host, budi, fan):
        page.wait_for_function("() => !!window.__domeng?.view?.match_over")
        page.wait_for_selector(f"{PANEL} .standings")  # the final panel, with the standings
        # the host and the player are thanked; the spectator is told how to play the next match
        note = words["table.watch_next" if page is fan else "panel.host_stopped"]
        assert page.text_content(f"{PANEL} .panel-note") == note, describe(page)
        kicker = words["panel.host_ended"].replace("{n}", str(at_round))
        assert page.text_content(f"{PANEL} .panel-kicker") == kicker, describe(page)
        assert page.evaluate("() => [window.__domeng.view.round, window.__domeng.room.status]") == [
            at_round,
            "finished",
        ]
        assert page.locator(".stop-note:not([hidden])").count() == 0
    for page in (host, budi):
        assert page.locator(f"{PANEL} .play-again").count() == 1
    assert fan.locator(f"{PANEL} .play-again").count() == 0  # a spectator may not ask
    screenshot(fan, "stop-final-panel-desktop")

    budi.click(f"{PANEL} .play-again")  # as after any match: the next one's waiting room
    budi.wait_for_selector(".again-box")
    assert budi.evaluate("() => [window.__domeng.room.match, window.__domeng.room.host_stop]") == [2, False]
    for watch in (host_watch, budi_watch, fan_watch):
        watch.assert_clean()
    for context in (host_ctx, budi_ctx, fan_ctx):
        context.close()


@pytest.fixture(scope="module")
def slow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server whose next round is not dealt for ten minutes: a round's end is there to look at."""
    env = {"DOMENG_BOT_DELAY_S": "0", "DOMENG_ROUND_PAUSE_S": "600", "DOMENG_TURN_TIMER_S": "0"}
    process = ServerProcess(tmp_path_factory.mktemp("browser-stop-slow"), env=env).start()
    yield process
    process.stop()


def test_between_rounds_the_rounds_panel_becomes_the_final_one(
    slow_server: ServerProcess, browser: Any
) -> None:
    words = catalog_of("en")
    room = slow_server.create_room(
        bots=["easy", "greedy", "random", "easy", "greedy"], options={"camat_target": 0}
    )
    code = room["code"]
    context, host, watch = open_page(browser, PHONE)
    goto(host, f"{slow_server.url}/r/{code}")
    hold_host(host, code, room["host_token"])
    host.reload()
    host.click(".start-box .btn-gold")
    host.wait_for_selector(f"{PANEL}")  # round 1 ended; the next is not dealt yet
    assert host.locator(f"{PANEL} .standings").count() == 0
    host.click(f"{PANEL} .panel-foot .btn-gold")  # back to the table
    host.wait_for_selector(PANEL, state="detached")
    # between rounds the stop ends the match at once, and its confirm step asks just that (not "when
    # this round ends": that round is over), in every language (the table is drawn again in each)
    # (and it stays asked while the table is drawn again in another language)
    host.click(".stop-btn")
    for lang in [*languages(), "en"]:
        switch_language(host, lang)
        host.wait_for_selector(".stop-note .stop-confirm")
        assert host.text_content(".stop-note > span") == catalog_of(lang)["stop.ask_now"], lang
    host.click(".stop-note .stop-confirm")
    host.wait_for_selector(f"{PANEL} .standings")  # at once: the round's panel, now the final one
    assert host.text_content(f"{PANEL} .panel-note") == words["panel.host_stopped"]
    assert host.evaluate("() => [window.__domeng.view.round, window.__domeng.room.status]") == [1, "finished"]
    assert host.locator(f"{PANEL} .play-again").count() == 1
    watch.assert_clean()
    context.close()


_SAID_JS = """(sel) => {
    const el = document.querySelector(sel), style = getComputedStyle(el);
    const lines = Math.round(el.getBoundingClientRect().height / parseFloat(style.lineHeight));
    return {text: el.textContent, lines, fits: document.documentElement.scrollWidth <= innerWidth};
}"""


def _as_shown(message: str, **params: str) -> str:
    """A catalog message as the page shows it: terms as their words, the parameters filled in."""
    text = re.sub(r"\[\[([^\]|]+)(?:\|([^\]]+))?\]\]", lambda m: m.group(2) or m.group(1), message)
    for name, value in params.items():
        text = text.replace(f"{{{name}}}", value)
    return text


def test_the_lobby_and_the_waiting_room_say_the_host_ends_a_no_limit_match(
    server: ServerProcess, browser: Any
) -> None:
    """The lobby's match length offered "No limit" and said only "The match ends after this many
    camat elections": its hint now names the choice and says the host ends such a match, in a few
    lines on a 360 px phone in every language; the waiting room of such a match says it too."""
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], options={"camat_target": 0})
    context, page, watch = open_page(browser, {"width": 360, "height": 740})
    goto(page, f"{server.url}/")
    for lang in languages():
        switch_language(page, lang)
        words = catalog_of(lang)
        page.wait_for_selector("#camat-target + .hint")
        label = page.text_content("#camat-target option[value='0']")
        said = page.evaluate(_SAID_JS, "#camat-target + .hint")
        assert label == words["lobby.no_limit"] and label in said["text"], (lang, said)
        assert said["text"] == _as_shown(words["lobby.match_length_hint"], no_limit=label), (lang, said)
        assert said["fits"] and said["lines"] <= 4, (lang, said)
        assert page.get_attribute("#camat-target", "aria-describedby") == "camat-target-hint"
    screenshot(page, "lobby-no-limit-hint-360")
    goto(page, f"{server.url}/r/{room['code']}")
    for lang in languages():
        switch_language(page, lang)
        words = catalog_of(lang)
        page.wait_for_selector(".seat-list")
        said = page.evaluate(_SAID_JS, "h1 + .lead")
        variant = words["variant.domeng"]
        assert said["text"] == _as_shown(words["waiting.variant_nolimit"], variant=variant), (lang, said)
        assert said["fits"] and said["lines"] <= 3, (lang, said)
    assert "the host ends the match" in _as_shown(catalog_of("en")["waiting.variant_nolimit"], variant="")
    watch.assert_clean()
    context.close()


_BAR_OVER_DRAWER_JS = """() => {
    const bar = document.querySelector('.bar').getBoundingClientRect();
    const feed = document.querySelector('.table-screen.feed-open .feed').getBoundingClientRect();
    const shown = [...document.querySelectorAll('.bar .round-label, .bar .pile, .bar-actions > *')]
        .map((el) => [el, el.getBoundingClientRect()]).filter(([, r]) => r.width && r.height);
    const onTop = ([el, r]) => el.contains(document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2));
    const covered = shown.filter((item) => !onTop(item)).map(([el]) => el.className);
    const firstRowEnd = Math.min(...shown.map(([, r]) => r.bottom));
    return {wrapped: shown.some(([, r]) => r.top >= firstRowEnd), barBottom: bar.bottom,
            feedTop: feed.top, covered};
}"""


def _phone_host_after_round_one(server: ServerProcess, browser: Any) -> tuple[Any, Any, Any]:
    """The host's phone (context, page, console watch) at the panel of round 1 of a no-limit match
    of five bots, whose next round is not dealt for ten minutes (``slow_server``)."""
    room = server.create_room(
        bots=["easy", "greedy", "random", "easy", "greedy"], options={"camat_target": 0}
    )
    code = room["code"]
    context, host, watch = open_page(browser, PHONE)
    goto(host, f"{server.url}/r/{code}")
    hold_host(host, code, room["host_token"])
    host.reload()
    host.click(".start-box .btn-gold")
    host.wait_for_selector(PANEL)
    return context, host, watch


def test_a_phones_drawer_starts_below_a_bar_of_two_rows(slow_server: ServerProcess, browser: Any) -> None:
    """The host's phone between rounds of a no-limit match: End match and Last round wrap the bar
    to two rows. The open feed drawer, at a fixed 60 px from the top, covered the second row (Last
    round, the feed's own button, the share link); it starts below the bar, whatever its height."""
    context, host, watch = _phone_host_after_round_one(slow_server, browser)
    host.click(f"{PANEL} .panel-foot .btn-gold")
    host.wait_for_selector(PANEL, state="detached")
    host.wait_for_selector(".stop-btn:not([hidden])")
    host.wait_for_selector(".last-round-btn:not([hidden])")
    host.click(".feed-toggle")
    host.wait_for_selector(".table-screen.feed-open .feed .chat-box")
    host.wait_for_function("() => document.getAnimations().every((a) => a.playState !== 'running')")
    shown = host.evaluate(_BAR_OVER_DRAWER_JS)
    screenshot(host, "drawer-below-two-row-bar-390")
    assert shown["wrapped"], shown  # the case this test is about
    assert shown["feedTop"] >= shown["barBottom"] and shown["covered"] == [], shown
    host.click(".feed-close")  # the bar's buttons take clicks: the drawer closes by its own button
    host.wait_for_selector(".table-screen:not(.feed-open)")
    host.click(".feed-toggle")
    host.wait_for_selector(".table-screen.feed-open")
    host.locator(".last-round-btn").click(trial=True)  # nothing over it takes the click
    watch.assert_clean()
    context.close()


def test_a_phones_final_panel_says_the_host_ended_the_match(slow_server: ServerProcess, browser: Any) -> None:
    """The host ends a no-limit match between rounds on a phone. Its final panel said so only in
    the foot's note, which a phone hides (its buttons take the room): the panel's top says the host
    ended the match, shown, in every language."""
    context, host, watch = _phone_host_after_round_one(slow_server, browser)
    round_over = catalog_of("en")["panel.round_over"].replace("{n}", "1")
    assert host.text_content(f"{PANEL} .panel-kicker") == round_over
    host.click(f"{PANEL} .panel-foot .btn-gold")
    host.wait_for_selector(PANEL, state="detached")
    host.click(".stop-btn")
    host.click(".stop-note .stop-confirm")
    host.wait_for_selector(f"{PANEL} .standings")
    for lang in [*languages(), "en"]:
        switch_language(host, lang)
        kicker = host.locator(f"{PANEL} .panel-kicker")
        assert kicker.text_content() == catalog_of(lang)["panel.host_ended"].replace("{n}", "1"), lang
        assert kicker.is_visible(), lang
        assert host.evaluate("() => window.__i18nMissing") == []
    screenshot(host, "final-panel-host-ended-390")
    watch.assert_clean()
    context.close()
