"""Bots in the browser client: the levels the lobby and the host's seat menu offer, a bot's name and
label in every language (legacy levels too), the rules' Bots section, and the thinking bubble on
the plate of a bot whose turn it is (no layout shift, on a phone and a desktop, still when motion
is reduced)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browserkit import (
    DESKTOP,
    PHONE,
    catalog_of,
    goto,
    languages,
    open_page,
    play_until,
    sit_and_start,
)
from tests.serverkit import ServerProcess

LEVELS = ["easy", "medium", "hard"]


def _label(lang: str, level: str) -> str:
    catalog = catalog_of(lang)
    return str(catalog["seat.bot_level"]).replace("{level}", catalog[f"bot.{level}"])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    # a bot's pause long enough to see its plate think
    process = ServerProcess(
        tmp_path_factory.mktemp("browser-bots"),
        env={"DOMENG_BOT_DELAY_S": "1.2", "DOMENG_ROUND_PAUSE_S": "1", "DOMENG_DISCONNECT_GRACE_S": "30"},
    ).start()
    yield process
    process.stop()


def test_every_language_names_the_levels_and_says_how_each_plays() -> None:
    for lang in languages():
        catalog = catalog_of(lang)
        words = [catalog[f"bot.{level}"] for level in [*LEVELS, "random", "greedy"]]
        assert len(set(words)) == 5, (lang, words)  # five different words, none left in English twice
        for level in LEVELS:
            line = catalog[f"rules.bots.{level}"]
            assert line.lower().startswith(catalog[f"bot.{level}"].lower()), (lang, level, line)
        if lang != "en":
            assert catalog["rules.bots.hard"] != catalog_of("en")["rules.bots.hard"], lang
        for key in ("lobby.seats_hint", "waiting.host_hint"):
            assert catalog["bot.greedy"] not in catalog[key], (lang, key)  # the cover bot is medium


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_the_lobby_offers_the_three_levels_and_starts_bot_seats_at_medium(
    server: ServerProcess, browser: Any, lang: str
) -> None:
    context, page, watch = open_page(browser, PHONE, locale=lang)
    goto(page, f"{server.url}/")
    for seat in range(5):
        options = page.eval_on_selector_all(
            f"#seat-{seat} option", "els => els.map(e => [e.value, e.textContent])"
        )
        assert [value for value, _ in options] == ["person", *LEVELS]
        assert [text for _, text in options[1:]] == [_label(lang, level) for level in LEVELS]
        assert page.input_value(f"#seat-{seat}") == ("person" if seat < 2 else "medium")
    page.select_option("#seat-4", "hard")
    page.click("#create-room")
    page.wait_for_url("**/r/**")
    page.wait_for_selector(".seat-list")
    code = page.url.rstrip("/").rsplit("/", 1)[1]
    levels = [s["bot_level"] for s in server.room(code)["seats"]]
    assert levels == [None, None, "medium", "medium", "hard"]
    page.wait_for_selector(f".seat-row[data-seat='4'] .seat-who.bot:has-text('{_label(lang, 'hard')}')")
    watch.assert_clean()
    context.close()


def test_legacy_levels_still_show_in_the_waiting_room_and_at_the_table(
    server: ServerProcess, browser: Any
) -> None:
    room = server.create_room(bots=[None, "greedy", "random", "easy", "hard"], turn_timer_s=0)
    context, page, watch = open_page(browser, DESKTOP, locale="uk")
    goto(page, f"{server.url}/r/{room['code']}")
    page.evaluate(
        "([key, memory]) => localStorage.setItem(key, memory)",
        [f"domeng:room:{room['code']}", json.dumps({"host_token": room["host_token"]})],
    )
    page.reload()
    page.wait_for_selector(".seat-row[data-seat='1'] select")
    for seat, level in ((1, "greedy"), (2, "random"), (3, "easy"), (4, "hard")):
        assert page.inner_text(f".seat-row[data-seat='{seat}'] .seat-who") == _label("uk", level)
        values = page.eval_on_selector_all(
            f".seat-row[data-seat='{seat}'] select option", "els => els.map(e => e.value)"
        )
        assert values[:4] == ["person", *LEVELS]
        assert page.input_value(f".seat-row[data-seat='{seat}'] select") == level
    assert "greedy" not in page.eval_on_selector_all(
        ".seat-row[data-seat='0'] select option", "els => els.map(e => e.value)"
    )
    token = server.claim(room["code"], 0, "Олена").json()["token"]
    sit_and_start(page, server, room, token)
    named = catalog_of("uk")["seat.bot_named"]
    for seat, level in ((1, "greedy"), (2, "random"), (4, "hard")):
        want = named.replace("{n}", str(seat + 1)).replace("{level}", catalog_of("uk")[f"bot.{level}"])
        page.wait_for_selector(f".plate[data-seat='{seat}'] .plate-name .name-text:text-is('{want}')")
    watch.assert_clean()
    context.close()


_THINKING_JS = """() => {
  const box = (el) => {
    const r = el.getBoundingClientRect();
    return [r.x, r.y, r.width, r.height].map((v) => Math.round(v * 10) / 10);
  };
  const dots = [...document.querySelectorAll('.plate .thinking:not([hidden])')];
  if (dots.length === 0) return null;  // not yet (or no longer)
  if (dots.length !== 1) return { count: dots.length };
  const plate = dots[0].closest('.plate');
  const name = plate.querySelector('.plate-name');
  const thinking = [box(plate), box(name)];
  const bubble = box(dots[0]);
  const animation = [...dots[0].children].map((i) => getComputedStyle(i).animationName);
  plate.classList.remove('acting', 'bot-thinking');
  dots[0].hidden = true;
  const idle = [box(plate), box(name)];
  plate.classList.add('acting', 'bot-thinking');
  dots[0].hidden = false;
  return {
    count: 1, seat: Number(plate.dataset.seat), thinking, idle, bubble, animation,
    label: plate.getAttribute('aria-label'), width: innerWidth, height: innerHeight,
    toAct: window.__domeng.view.to_act, version: window.__domeng.version,
    kinds: window.__domeng.room.seats.map((s) => s.kind),
  };
}"""
"""The plate that thinks, measured in one moment, or null when no plate shows its dots: its seat,
its box and its name's, the same boxes once it stops acting and thinking (the classes removed and
the dots hidden for one measurement, then put back), its dots' box and animation, the viewport,
and whose turn the page holds."""


def _thinking(page: Any, found: list[dict[str, Any]]) -> bool:
    """Whether a plate thinks now (`_THINKING_JS`), its measure then added to ``found``: measured in
    the moment the page is looked at, as a bot's thinking is over in a second or two. Called by
    `play_until` at each state, which plays our turns meanwhile (a wait in the page alone could
    outlast the bots' turns and wait on ours)."""
    seen = page.evaluate(_THINKING_JS)
    if seen is not None:
        found.append(dict(seen))
    return seen is not None


@pytest.mark.parametrize(
    ("viewport", "motion"),
    [(PHONE, "reduce"), (DESKTOP, "reduce"), (DESKTOP, "no-preference")],
    ids=["phone", "desktop", "desktop-motion"],
)
def test_a_bots_plate_shows_it_thinking_without_moving_anything(
    server: ServerProcess, browser: Any, viewport: dict[str, int], motion: str
) -> None:
    room = server.create_room(bots=[None, "easy", "medium", "hard", "easy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context = browser.new_context(viewport=viewport, locale="en-US", reduced_motion=motion)
    page = context.new_page()
    page.set_default_timeout(30_000)
    sit_and_start(page, server, room, token)
    dots = ".plate .thinking:not([hidden])"
    found: list[dict[str, Any]] = []
    play_until(page, lambda: _thinking(page, found), timeout=60)
    seen = found[-1]
    assert seen["count"] == 1
    assert seen["seat"] == seen["toAct"] and seen["kinds"][seen["seat"]] == "bot"
    assert seen["label"].endswith(", to play, thinking")
    (x, y, width, height) = seen["bubble"]
    assert x >= 0 and y >= 0 and x + width <= seen["width"] and y + height <= seen["height"]
    assert seen["thinking"] == seen["idle"]  # the turn coming to a bot moves neither plate nor name
    assert set(seen["animation"]) == {"none" if motion == "reduce" else "think"}
    # the bot plays: its dots go, and come back only on the plate of whoever thinks next
    page.wait_for_function(
        "([seat, version]) => window.__domeng.version > version &&"
        " document.querySelector(`.plate[data-seat='${seat}'] .thinking`).hidden",
        arg=[seen["seat"], seen["version"]],
    )
    assert page.locator(dots).count() <= 1
    context.close()


def test_the_rules_page_says_how_each_level_plays(server: ServerProcess, browser: Any) -> None:
    context, page, watch = open_page(browser, PHONE, locale="hu")
    goto(page, f"{server.url}/rules")
    catalog = catalog_of("hu")
    assert page.inner_text("#bots h2") == catalog["rules.bots.h"]
    lines = page.eval_on_selector_all("#bots .bot-levels li", "els => els.map(e => e.textContent)")
    assert lines == [catalog[f"rules.bots.{level}"] for level in LEVELS]
    assert page.locator("nav.toc a[href='#bots']").count() == 1
    watch.assert_clean()
    context.close()


def test_a_seat_a_bot_covers_shows_it_thinking_on_the_players_own_plate(
    server: ServerProcess, browser: Any
) -> None:
    """Ana lets her turn timer run out: the medium bot that plays that turn for her (a stand-in: one
    timeout costs one turn) thinks on her plate."""
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=5)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, PHONE)
    sit_and_start(page, server, room, token)
    # read in the same frame as the dots (the stand-in's turn ends with its move)
    shown = page.wait_for_function(
        """() => document.querySelector('.plate-me .thinking:not([hidden])') &&
            {seat: window.__domeng.room.seats[0],
             label: document.querySelector('.plate-me').getAttribute('aria-label')}""",
        timeout=120_000,
    ).json_value()
    seat, label = shown["seat"], shown["label"] or ""
    assert seat["kind"] == "human" and seat["stand_in"] is True and seat["covered"] is False
    assert label.endswith(", to play, thinking"), label
    watch.assert_clean()
    context.close()
