"""Names, standings and words in Debian's Chromium (issue 12): joined emoji, 32 characters without
a space and right-to-left names never push anything off screen or cut "(you)", at 390x844 and
1280x800; a refused name is said in the player's language beside the name box; Enter takes the
seat; the final standings rank by camat elections, then stones received, with both totals; and
the plural forms are right in all six languages. Screenshots go to artifacts/screenshots/."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any

import pytest

from engine.core import Phase
from engine.events import DomengOutcome, Reason, Settlement, Termination
from engine.hashing import commitment_of
from engine.variants import make_rules
from engine.views import outcome_to_json, player_view
from tests.adminkit import play_bot_match
from tests.browserkit import (
    DESKTOP,
    PANEL,
    PHONE,
    catalog_of,
    goto,
    hold_host,
    hold_seat,
    languages,
    open_page,
    play_turn,
    screenshot,
    sit_and_start,
    switch_language,
    text_of,
)
from tests.serverkit import Client, ServerProcess

LONG = "W" * 32  # the longest name, without a space
EMOJI = "👩🏽‍💻🇪🇪 Dewi"  # a joined emoji with a skin tone, and a flag
RTL = "نور الهدى"  # right to left


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path_factory.mktemp("browser-words"),
        env={"DOMENG_BOT_DELAY_S": "0.02", "DOMENG_ROUND_PAUSE_S": "0.3", "DOMENG_DISCONNECT_GRACE_S": "1"},
    ).start()
    yield process
    process.stop()


def _fits(page: Any) -> bool:
    return bool(page.evaluate("() => document.documentElement.scrollWidth <= innerWidth"))


# The box a plate shows its name in, and how that box shortens a name too long for it: the name's
# own line (``text-overflow: ellipsis``) or, on a phone's narrow plate, the name's two lines cut at the
# second with an ellipsis (``-webkit-line-clamp: 2`` on the name's inline text's box). Whether the
# name is whole in it, across and down, and its number of lines.
_NAME_BOX_JS = """
const nameBox = (plate) => {
    const text = plate.querySelector('.name-text');
    const box = getComputedStyle(text).display === 'inline' ? text.parentElement : text;
    const style = getComputedStyle(box);
    const ellipsis = style.webkitLineClamp !== 'none' ? `${style.webkitLineClamp} lines`
        : style.textOverflow === 'ellipsis' && style.whiteSpace === 'nowrap' ? 'one line' : 'none';
    const lines = Math.round(box.clientHeight / parseFloat(style.lineHeight));
    const whole = box.scrollWidth <= box.clientWidth + 1 && box.scrollHeight <= box.clientHeight + 1;
    return {box, ellipsis, lines, whole};
};
"""


def _with_name_box(function: str) -> str:
    """``function`` (a page function's text, ``() => …``) with `_NAME_BOX_JS`'s ``nameBox`` in scope."""
    return f"() => {{ {_NAME_BOX_JS} return ({function})(); }}"


_NAMES_JS = """() => [...document.querySelectorAll('.plate')].map((plate) => {
    const box = plate.getBoundingClientRect();
    const name = plate.querySelector('.name-text');
    const shownIn = nameBox(plate);
    const you = plate.querySelector('.plate-name .you');
    const n = name.getBoundingClientRect();
    const y = you.getBoundingClientRect();
    const shown = [...plate.querySelectorAll('.plate-tags .tag')].filter((t) => t.getClientRects().length);
    const tags = shown.map((t) => t.getBoundingClientRect());
    const overlap = tags.some((a, i) => tags.some((b, j) => i < j
        && a.left < b.right - 0.5 && b.left < a.right - 0.5
        && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5));
    return {
        seat: Number(plate.dataset.seat),
        title: name.getAttribute('title'),
        text: name.textContent,
        isolated: getComputedStyle(name).unicodeBidi,
        ellipsis: shownIn.ellipsis,
        shortened: !shownIn.whole,
        nameInside: n.left >= box.left - 0.5 && n.right <= box.right + 0.5,
        you: you.hidden ? null : {text: you.textContent, whole: you.scrollWidth <= you.clientWidth + 1,
            inside: y.left >= box.left - 0.5 && y.right <= box.right + 0.5 && y.right <= innerWidth,
            afterName: y.left >= n.right - 0.5},
        tags: tags.length,
        tagsInside: tags.every((t) => t.left >= box.left - 0.5 && t.right <= box.right + 0.5
            && t.top >= box.top - 0.5 && t.bottom <= box.bottom + 0.5),
        tagsWhole: shown.every(
            (t) => t.scrollWidth <= t.clientWidth + 1 && t.scrollHeight <= t.clientHeight + 1),
        overlap,
        rects: [box, ...tags].map((r) => [r.left, r.top, r.right, r.bottom].map(Math.round).join(',')),
    };
})"""


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390x844", "1280x800"])
def test_long_joined_emoji_and_right_to_left_names_keep_their_place(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    size = f"{viewport['width']}x{viewport['height']}"
    room = server.create_room(bots=[None, None, None, "greedy", "greedy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, LONG).json()["token"]
    for seat, name in ((1, EMOJI), (2, RTL)):
        assert server.claim(room["code"], seat, name).status_code == 201
    context, page, watch = open_page(browser, viewport)

    # the waiting room: each name on its line, "(you)" whole beside the long one, nothing wider
    goto(page, f"{server.url}/r/{room['code']}")
    hold_seat(page, room["code"], token, 0)
    page.reload()
    page.wait_for_selector(".seat-row.mine[data-seat='0'] .you")
    rows = page.evaluate(
        """() => [...document.querySelectorAll('.seat-row')].slice(0, 3).map((row) => {
            const name = row.querySelector('.seat-name'), box = row.getBoundingClientRect();
            const you = row.querySelector('.you');
            return {title: name.getAttribute('title'),
                    inside: name.getBoundingClientRect().right <= box.right + 0.5,
                    you: you && you.getBoundingClientRect().right <= box.right + 0.5
                        && you.scrollWidth <= you.clientWidth + 1};
        })"""
    )
    assert [r["title"] for r in rows] == [LONG, EMOJI, RTL] and all(r["inside"] for r in rows), rows
    assert rows[0]["you"] is True and _fits(page)
    screenshot(page, f"names-waiting-{size}")

    # the table: plates shorten a name with an ellipsis, keep "(you)" whole, isolate direction
    assert server.start_match(room["code"], room["host_token"]).status_code == 200
    page.wait_for_selector(".table-screen")
    for _ in range(3):  # until a tile is on the chain and its placer is tagged last mappano
        if page.locator(".plate .tag-mappano").count():
            break
        page.wait_for_function(
            "() => { const v = window.__domeng.view; return v?.last_placer !== null || v?.to_act === 0 }",
            timeout=60_000,
        )
        play_turn(page)
    page.wait_for_selector(".plate .tag-mappano")
    # Ana's turn with a placer tagged, and the two absent people's seats covered by bots (their
    # grace is 1 s here): the table usually waits for her, but a turn with no tile that fits passes
    # by itself, so an update from the server may replace the view drawn below (hence the redraw)
    page.wait_for_function(
        "() => { const c = window.__domeng, v = c.view; return v?.phase === 'playing' && v.to_act === 0"
        " && v.last_placer !== null && !!document.querySelector('.plate .tag-mappano')"
        " && c.room.seats[1].covered && c.room.seats[2].covered; }",
        timeout=60_000,
    )
    # the most a plate carries: last mappano, camat and elections on one seat (drawn by the client
    # from a view that says so; the server's view is the same shape), drawn again should an update
    # from the server still come in between
    page.wait_for_function(
        """() => {
            if (document.querySelector('.plate .tag-camat')) return true;
            const c = window.__domeng, seat = c.view.last_placer;
            c.view = {...c.view, camat: seat, elections: c.view.elections.map((e, s) => s === seat ? 3 : e)};
            c.render([]);
            return !!document.querySelector('.plate .tag-camat');
        }"""
    )
    plates = {p["seat"]: p for p in page.evaluate(_with_name_box(_NAMES_JS))}
    assert {plates[s]["title"] for s in (0, 1, 2)} == {LONG, EMOJI, RTL}
    me = plates[0]
    assert me["you"] is not None and me["you"]["whole"] and me["you"]["inside"] and me["you"]["afterName"], me
    assert all(
        p["isolated"] == "isolate" and p["ellipsis"] != "none" and p["nameInside"] for p in plates.values()
    )
    if viewport is PHONE:
        assert me["shortened"]  # 32 W's do not fit a phone's plate: the ellipsis shows, the title keeps it
    tagged = max(plates.values(), key=lambda p: p["tags"])
    assert tagged["tags"] >= 2, plates
    screenshot(page, f"names-table-{size}")
    for plate in plates.values():
        shown = (plate["tagsInside"], plate["tagsWhole"], plate["overlap"])
        assert shown == (True, True, False), plate["rects"]
    assert _fits(page)
    watch.assert_clean()
    context.close()


TOO_LONG = {"en": "A name is at most 32 characters long.", "ru": "В имени не больше 32 символов."}


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_enter_takes_a_seat_and_a_refused_name_is_said_in_the_language(
    server: ServerProcess, browser: Any, lang: str
) -> None:
    catalog = catalog_of(lang)
    room = server.create_room(bots=["greedy", None, "greedy", "greedy", "greedy"], turn_timer_s=0)
    context, page, watch = open_page(browser, PHONE, locale=f"{lang}-{lang.upper()}")
    goto(page, f"{server.url}/r/{room['code']}")
    # a look-alike of a bot's label ("Bоt 2", a Cyrillic о): the reason beside the box, still on the form
    page.fill("#player-name", "B\u043et 2")
    page.press("#player-name", "Enter")
    page.wait_for_selector("#player-name-error:not([hidden])")
    assert page.inner_text("#player-name-error") == catalog["join.name_reserved"]
    assert "Value error" not in text_of(page) and page.locator(".seat-row.mine").count() == 0
    assert page.locator("#player-name").is_visible() and page.locator(".sit").count() == 5
    # 33 characters: said as they are typed, with the language's plural of 32
    page.fill("#player-name", "")
    page.type("#player-name", "ж" * 33)
    page.wait_for_selector("#player-name-error:not([hidden])")
    assert page.inner_text("#player-name-error") == TOO_LONG[lang]
    screenshot(page, f"name-refused-{lang}-390x844")
    # Enter with a good name (a joined emoji counts one character) takes the first empty seat,
    # not the host's bot in seat 0
    page.fill("#player-name", EMOJI)
    page.press("#player-name", "Enter")
    page.wait_for_selector(".seat-row.mine[data-seat='1']")
    seats = server.room(room["code"])["seats"]
    assert seats[1]["name"] == EMOJI and seats[0]["kind"] == "bot"
    # leaving watches on (the socket being replaced logs no error); a bot's seat taken and left
    # gets the host's bot back
    page.click(".seat-row.mine .leave")
    page.wait_for_selector(".seat-row.mine", state="detached")
    page.click(".seat-row[data-seat='0'] .sit")
    page.wait_for_selector(".seat-row.mine[data-seat='0']")
    page.click(".seat-row.mine .leave")
    page.wait_for_function(
        "() => window.__domeng.room.seats[0].kind === 'bot' && window.__domeng.seat === null"
    )
    assert server.room(room["code"])["seats"][0]["bot_level"] == "greedy"
    # a socket let go of while it still connects (leaving a seat as the old socket reconnects)
    # closes once open, without the browser's warning "closed before the connection is established"
    said: list[str] = []
    page.on("console", lambda message: said.append(f"{message.type}: {message.text}"))
    page.evaluate(
        """async (code) => {
            const { RoomSocket } = await import('/static/js/connection.js');
            const socket = new RoomSocket(code, null, {});
            socket.start();
            const ws = socket.ws;
            socket.stop();
            await new Promise((done) => ws.addEventListener('close', done));
        }""",
        room["code"],
    )
    assert not [line for line in said if "WebSocket" in line], said
    assert page.locator("#player-name-error:not([hidden])").count() == 0
    assert [e for e in watch.errors if "422" not in e] == []  # the refused claim is the only error
    watch.errors.clear()
    watch.assert_clean()
    context.close()


# The plural forms each language must show (CLDR): Russian and Ukrainian have three.
STONES = {
    "en": {0: "0 stones", 1: "1 stone", 2: "2 stones", 5: "5 stones", 21: "21 stones"},
    "et": {0: "0 kivi", 1: "1 kivi", 2: "2 kivi", 5: "5 kivi", 21: "21 kivi"},
    "hu": {0: "0 kő", 1: "1 kő", 2: "2 kő", 5: "5 kő", 21: "21 kő"},
    "id": {0: "0 batu", 1: "1 batu", 2: "2 batu", 5: "5 batu", 21: "21 batu"},
    "ru": {
        0: "0 камней",
        1: "1 камень",
        2: "2 камня",
        5: "5 камней",
        11: "11 камней",
        21: "21 камень",
        22: "22 камня",
    },
    "uk": {
        0: "0 каменів",
        1: "1 камінь",
        2: "2 камені",
        5: "5 каменів",
        11: "11 каменів",
        21: "21 камінь",
        22: "22 камені",
    },
}
TILES = {
    "ru": {1: "1 костяшка", 3: "3 костяшки", 5: "5 костяшек"},
    "uk": {1: "1 кісточка", 3: "3 кісточки", 5: "5 кісточок"},
    "en": {1: "1 tile", 3: "3 tiles"},
}

_STANDINGS_JS = """() => ({
    rows: [...document.querySelectorAll('dialog.round-end[open] .standings tbody tr')].map((tr) => ({
        seat: Number(tr.dataset.seat), elections: Number(tr.dataset.elections),
        received: Number(tr.dataset.received),
        cells: [...tr.cells].map((td) => td.textContent)})),
    head: [...document.querySelectorAll('dialog.round-end[open] .standings thead th')]
        .map((th) => th.textContent),
    view: {standings: window.__domeng.view.standings, received: window.__domeng.view.received,
           elections: window.__domeng.view.elections},
    transfers: [...document.querySelectorAll('dialog.round-end[open] .transfer')].map((li) => li.textContent),
})"""


_TIED_JS = """async (view) => {
    const { roundEndPanel } = await import('/static/js/roundend.js');
    const dialog = roundEndPanel({view, room: window.__domeng.room, seed: null, commitment: null,
                                  round: view.round}, {onClose: () => {}, mySeat: null, nextStarted: false});
    document.body.append(dialog);
    const rows = [...dialog.querySelectorAll('.standings tbody tr')];
    const shown = {
        places: rows.map((tr) => tr.cells[0].textContent),
        seats: rows.map((tr) => Number(tr.dataset.seat)),
        champions: rows.filter((tr) => tr.classList.contains('champion'))
            .map((tr) => Number(tr.dataset.seat)),
        winner: dialog.querySelector('.standings-winner').textContent,
    };
    dialog.remove();
    return shown;
}"""


def _finished_match(seed: int) -> Any:
    """A Domeng match played to its end by random legal moves (the engine's own state)."""
    rules = make_rules("domeng", {}, 5)
    rng = random.Random(seed)
    state = rules.new_match()
    while state.phase is not Phase.OVER:
        state.start_round(rules.deal(rng))
        while state.phase is Phase.PLAYING:
            state.apply(rng.choice(state.legal_actions()))
    return state


def test_players_tied_in_the_final_standings_share_their_place(server: ServerProcess, browser: Any) -> None:
    """Most camat elections, then fewest stones received, and nothing more: two players equal on
    both share a place (and first place its line), in every language."""
    state = _finished_match(7)
    state.elections[:] = [0, 1, 0, 1, 0]
    state.received[:] = [6, 4, 2, 4, 2]
    view = player_view(state, None).to_json()
    assert view["places"] == [1, 1, 3, 3, 5]
    room = server.create_room(bots=["easy"] * 5, turn_timer_s=0)
    context, page, watch = open_page(browser, PHONE)
    goto(page, f"{server.url}/r/{room['code']}")
    for lang in languages():
        switch_language(page, lang)
        shown = page.evaluate(_TIED_JS, view)
        assert shown["seats"] == [1, 3, 2, 4, 0] and shown["places"] == ["1", "1", "3", "3", "5"], lang
        assert shown["champions"] == [1, 3], lang
        assert "⟦" not in shown["winner"] and page.evaluate("() => window.__i18nMissing") == [], lang
        if lang == "en":
            assert shown["winner"] == "Bot 2 and Bot 4 share first place!"
    # one leader: the usual line; seats 3 and 5 still share second place
    state.elections[:] = [0, 1, 0, 0, 0]
    switch_language(page, "en")
    shown = page.evaluate(_TIED_JS, player_view(state, None).to_json())
    assert shown["places"] == ["1", "2", "2", "4", "5"] and shown["champions"] == [1]
    assert shown["winner"] == "Bot 2 wins the match!", shown
    watch.assert_clean()
    context.close()


_FAIR_JS = """async ([view, seed, commitment, mySeat]) => {
    const { roundEndPanel } = await import('/static/js/roundend.js');
    const dialog = roundEndPanel({view, room: window.__domeng.room, seed, commitment, round: view.round},
                                 {onClose: () => {}, mySeat, nextStarted: false});
    dialog.id = 'fair-check';
    document.body.append(dialog);
    dialog.show();
}"""


def test_the_fair_deal_is_recreated_in_the_panel_with_the_players_own_hand(
    server: ServerProcess, browser: Any
) -> None:
    """The panel's "Re-create the deal on the server" shows the hands the revealed seed deals (GET
    /api/deals/verify) in the panel, the player's own marked, instead of opening raw JSON; a seed
    that does not match its commitment is said to."""
    view = player_view(_finished_match(11), None).to_json()
    seed = "9f2c51d0a7e3b8c4f1e6d2a9b5c8e7f0" * 2  # 64 hex digits, as the server makes them
    deal = make_rules("domeng", {}, 5).deal_from_seed(seed)
    room = server.create_room(bots=["easy"] * 5, turn_timer_s=0)
    context, page, watch = open_page(browser, PHONE)
    goto(page, f"{server.url}/r/{room['code']}")
    for lang, commitment, ok in (("en", commitment_of(seed), "true"), ("ru", "0" * 64, "false")):
        switch_language(page, lang)
        page.evaluate(_FAIR_JS, [view, seed, commitment, 2])
        page.click("#fair-check .fair-recreate")
        page.wait_for_selector(f"#fair-check .fair-server[data-ok='{ok}']")
        rows = page.eval_on_selector_all(
            "#fair-check .fair-row",
            """rows => rows.map((r) => [r.dataset.tiles, r.classList.contains('mine'),
                                       r.querySelectorAll('.mini-tile').length])""",
        )
        dealt = [[" ".join(str(t) for t in hand), seat == 2, 5] for seat, hand in enumerate(deal.hands)]
        assert rows == dealt, lang
        rest = page.get_attribute("#fair-check .fair-rest", "data-tiles")
        assert rest == " ".join(str(t) for t in deal.rest)
        said = page.text_content("#fair-check .fair-server") or ""
        assert said == catalog_of(lang)["fair.server_ok" if ok == "true" else "fair.server_bad"], lang
        assert page.locator("#fair-check .fair-recreate").is_hidden()
        page.locator("#fair-check .fair-hands").scroll_into_view_if_needed()
        screenshot(page, f"fair-deal-{lang}-390x844")
        assert page.evaluate("() => window.__i18nMissing") == [], lang
        page.evaluate("() => document.getElementById('fair-check').remove()")
    watch.assert_clean()
    context.close()


_ACTING_NAMES_JS = """() => [...document.querySelectorAll('.plate')].map((plate) => {
    const name = plate.querySelector('.name-text');
    const shownIn = () => nameBox(plate);
    const box = () => { const r = name.getBoundingClientRect(); return [r.left, r.width].map(Math.round); };
    const acting = plate.classList.contains('acting');
    plate.classList.add('acting');  // each plate as it is on its player's turn, measured at once
    const turn = {box: box(), whole: shownIn().whole};
    plate.classList.remove('acting');
    const idle = box();
    if (acting) plate.classList.add('acting');
    return {seat: Number(plate.dataset.seat), acting, text: name.textContent,
            title: name.getAttribute('title'), ellipsis: shownIn().ellipsis, turn, idle};
})"""

SPECTATED = ["Mihkel", "Dénes", "Katalin", "Андрій", "Maximiliane von Wolkenstein"]
"""Seat 0 (the spectator's own plate, below the chain) and the four narrow plates above it: names
of ordinary length, and one too long for any plate."""


@pytest.mark.parametrize(
    "viewport", [PHONE, {"width": 800, "height": 1000}, DESKTOP], ids=["390", "800", "1280"]
)
def test_a_spectator_reads_the_acting_players_ordinary_name_whole(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    """The ▶ of the player to act took the name's room on a 390 px phone's plate: "Dénes" showed
    as "Dén…" while it was her turn. It now sits over the plate's corner: every ordinary name is
    whole on its player's turn, the turn moves no name, and a long one is still shortened with an
    ellipsis (its title has it whole). The seats' people are connected and never play, so the
    table waits on the first of them to act."""
    room = server.create_room(turn_timer_s=0)
    code = room["code"]
    tokens = [server.claim(code, seat, name).json()["token"] for seat, name in enumerate(SPECTATED)]
    players = [Client(server, code, token) for token in tokens]
    context, page, watch = open_page(browser, viewport)
    try:
        assert server.start_match(code, room["host_token"]).status_code == 200
        goto(page, f"{server.url}/r/{code}")
        page.wait_for_selector(".table-screen .plate.acting")
        plates = page.evaluate(_with_name_box(_ACTING_NAMES_JS))
        assert sorted(p["text"] for p in plates) == sorted(SPECTATED)
        assert sum(p["acting"] for p in plates) == 1, plates
        for plate in plates:
            assert plate["turn"]["box"] == plate["idle"], plate  # the turn coming moves no name
            if plate["text"] == SPECTATED[-1]:
                assert not plate["turn"]["whole"] and plate["ellipsis"] != "none", plate
                assert plate["title"] == SPECTATED[-1]
            else:
                assert plate["turn"]["whole"], (viewport, plate)
        screenshot(page, f"spectator-acting-{viewport['width']}")
        watch.assert_clean()
    finally:
        context.close()
        for player in players:
            player.close()


_TWO_LINES_JS = """() => {
    const plates = [...document.querySelectorAll('.plate:not(.plate-me)')].map((plate) => {
        const r = plate.getBoundingClientRect(), shownIn = nameBox(plate);
        const n = shownIn.box.getBoundingClientRect();
        const text = plate.querySelector('.name-text');
        // each word of the name: on one line (a word broken between two lines has two boxes)
        const words = [];
        for (const match of text.textContent.matchAll(/\\S+/g)) {
            const range = document.createRange();
            range.setStart(text.firstChild, match.index);
            range.setEnd(text.firstChild, match.index + match[0].length);
            const top = Math.round(range.getBoundingClientRect().top - n.top);
            words.push({word: match[0], lines: range.getClientRects().length, top});
        }
        return {name: text.textContent, whole: shownIn.whole, lines: shownIn.lines,
                ellipsis: shownIn.ellipsis,
                inside: n.left >= r.left - 0.5 && n.right <= r.right + 0.5 && n.bottom <= r.bottom + 0.5,
                words, height: Math.round(r.height)};
    });
    const hand = document.querySelector('.hand').getBoundingClientRect();
    return {plates, handShown: hand.bottom <= innerHeight + 0.5,
            fits: document.documentElement.scrollWidth <= innerWidth};
}"""

TWO_LINES = ["Ana", "Alexandra", "Jan Kowalski", "Władysława", "Kristóf"]
"""Seat 0 (this browser's) and four opponents: a single name of nine letters and one of ten, two
words, and a short name."""


@pytest.mark.parametrize("viewport", [{"width": 360, "height": 740}, PHONE], ids=["360x740", "390x844"])
def test_a_long_name_takes_two_lines_on_a_phones_plate(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    """On a phone an opponent's plate cut a name of nine letters or more with an ellipsis
    ("Alexandra" read "Alexan…", "Jan Kowalski" "Jan K…"). A name now takes two lines there: two
    words one on each ("Jan / Kowalski", no word broken), a single long word broken inside it
    ("Alexan / dra"), whole in every language. The plates' row grows from 55 px (one line) to 68 px,
    what it already was beside a bot's two-line name; the hand stays on screen."""
    room = server.create_room(turn_timer_s=0)
    code = room["code"]
    tokens = [server.claim(code, seat, name).json()["token"] for seat, name in enumerate(TWO_LINES)]
    players = [Client(server, code, token) for token in tokens[1:]]  # connected, and never playing
    context, page, watch = open_page(browser, viewport)
    try:
        sit_and_start(page, server, room, tokens[0])
        page.wait_for_selector(".table-screen .plate.acting")
        for lang in languages():
            switch_language(page, lang)
            page.wait_for_selector(".table-screen .plate.acting")
            shown = page.evaluate(_with_name_box(_TWO_LINES_JS))
            plates = {p["name"]: p for p in shown["plates"]}
            assert sorted(plates) == sorted(TWO_LINES[1:]), shown
            for plate in plates.values():
                assert plate["whole"] and plate["inside"] and plate["ellipsis"] == "2 lines", (lang, plate)
                assert plate["height"] <= 70, (lang, plate)  # 55 px with one line, 68 px with two
            jan = plates["Jan Kowalski"]
            assert jan["lines"] == 2 and [w["lines"] for w in jan["words"]] == [1, 1], (lang, jan)
            assert jan["words"][1]["top"] > jan["words"][0]["top"], (lang, jan)  # Kowalski below Jan
            assert plates["Kristóf"]["lines"] == 1, (lang, plates["Kristóf"])
            assert plates["Alexandra"]["lines"] == 2, (lang, plates["Alexandra"])
            assert shown["handShown"] and shown["fits"], (lang, shown)
        screenshot(page, f"plates-two-lines-{viewport['width']}x{viewport['height']}")
        watch.assert_clean()
    finally:
        context.close()
        for player in players:
            player.close()


_BOT_NAMES_JS = """() => [...document.querySelectorAll('.plate.bot')].map((plate) => ({
    text: plate.querySelector('.name-text').textContent, clipped: !nameBox(plate).whole}))"""


def test_a_bots_plate_on_a_phone_shows_its_level_whole_in_every_language(
    server: ServerProcess, browser: Any
) -> None:
    """On a 390 px phone a bot's name ("Bot 2 · keskmine", "Бот 2 · середній") takes two lines and
    its level word is never cut to "keskm…" (a bot's plate has no online dot: the width is its name's);
    the language chosen in the feed drawer leaves the drawer open."""
    room = server.create_room(bots=[None, "medium", "hard", "easy", "medium"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, PHONE)
    goto(page, f"{server.url}/r/{room['code']}")
    hold_seat(page, room["code"], token, 0)
    assert server.start_match(room["code"], room["host_token"]).status_code == 200
    page.reload()
    page.wait_for_selector(".plate.bot .name-text")
    for lang in languages():
        switch_language(page, lang)
        page.wait_for_selector(".plate.bot .name-text")
        names = page.evaluate(_with_name_box(_BOT_NAMES_JS))
        assert len(names) == 4 and not [n for n in names if n["clipped"]], (lang, names)
    # a phone's language menu is in the feed drawer: choosing there keeps the drawer open, focus on it
    page.click(".feed-toggle")
    page.wait_for_selector(".feed-open .feed-lang .lang-select")
    page.select_option(".feed-lang .lang-select", "et")
    page.wait_for_function("() => document.documentElement.lang === 'et'")
    assert page.get_attribute(".feed-toggle", "aria-expanded") == "true"
    assert page.locator(".feed-open").count() == 1
    assert page.evaluate("() => document.activeElement.matches('.feed-lang .lang-select')")
    # the drawer's head keeps its language menu and Close whole in every language (Indonesian's
    # long title squeezed the menu to nothing and pushed "Tutup" off the screen), and its title
    # too (it was cut: "Ход и…", "A ját…", "Jalannya…")
    for lang in languages():
        switch_language(page, lang)
        page.wait_for_selector(".feed-open .feed-lang .lang-select")
        head = page.evaluate(_FEED_HEAD_JS)
        assert head["lang"] >= 40 and head["closeRight"] <= head["width"], (lang, head)
        assert head["titleWhole"] and head["title"] == catalog_of(lang)["table.feed"], (lang, head)
    watch.assert_clean()
    context.close()


_CAMAT_TAGS_JS = """([camat, elections]) => {
    const c = window.__domeng;
    c.view = {...c.view, camat, elections};
    c.render([]);
    return [...document.querySelectorAll('.plate')].map((plate) => ({
        seat: Number(plate.dataset.seat),
        tags: [...plate.querySelectorAll('.plate-tags .tag-camat, .plate-tags .tag-elections')]
            .map((tag) => ({gold: tag.classList.contains('tag-camat'), text: tag.textContent}))}));
}"""


def test_the_camats_plate_says_camat_once(server: ServerProcess, browser: Any) -> None:
    """The camat's plate carries one tag, not "camat" beside "camat ×1": the camat now says
    "camat" (gold), or "camat ×2" from its second election; a seat elected before says its count."""
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, PHONE)
    goto(page, f"{server.url}/r/{room['code']}")
    hold_seat(page, room["code"], token, 0)
    assert server.start_match(room["code"], room["host_token"]).status_code == 200
    page.reload()
    page.wait_for_selector(".plate .name-text")
    page.wait_for_function("() => !!window.__domeng.view?.elections")
    for lang in languages():
        switch_language(page, lang)
        page.wait_for_selector(".plate .name-text")
        catalog = catalog_of(lang)
        word = _filled(catalog["seat.camat"])
        times = {n: _filled(catalog["seat.elections"], n=str(n)) for n in (1, 2)}
        # seat 1 elected once and camat now; seat 3 elected before
        plates = {p["seat"]: p["tags"] for p in page.evaluate(_CAMAT_TAGS_JS, [1, [0, 1, 0, 1, 0]])}
        assert plates[1] == [{"gold": True, "text": word}], (lang, plates)
        assert plates[3] == [{"gold": False, "text": times[1]}], (lang, plates)
        assert plates[0] == plates[2] == plates[4] == [], (lang, plates)
        # seat 3 elected again: camat for the second time
        plates = {p["seat"]: p["tags"] for p in page.evaluate(_CAMAT_TAGS_JS, [3, [0, 1, 0, 2, 0]])}
        assert plates[3] == [{"gold": True, "text": times[2]}], (lang, plates)
        assert plates[1] == [{"gold": False, "text": times[1]}], (lang, plates)
    watch.assert_clean()
    context.close()


_FEED_HEAD_JS = """() => {
    const box = (sel) => document.querySelector(sel).getBoundingClientRect();
    const title = document.querySelector('.feed-head h2');
    return {lang: box('.feed-lang').width, closeRight: box('.feed-close').right,
            width: document.documentElement.clientWidth, title: title.textContent,
            titleWhole: title.scrollWidth <= title.clientWidth + 1
                && title.scrollHeight <= title.clientHeight + 1 && box('.feed-head h2').right <= innerWidth};
}"""


@pytest.mark.parametrize(
    "viewport", [{"width": 360, "height": 740}, {"width": 320, "height": 640}], ids=["360x740", "320x640"]
)
def test_the_feed_drawers_title_reads_whole_on_a_narrow_phone_in_every_language(
    server: ServerProcess, browser: Any, viewport: dict[str, int]
) -> None:
    """On phones narrower than 390 px (a spectator's drawer has the same head) the title takes a
    line of its own above the buttons when it must: never cut, and every button still whole. Ana
    holds a seat with no turn timer, so the table waits for her: a match of bots alone could end,
    its final panel over the drawer's toggle, before the page opens."""
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, viewport)
    sit_and_start(page, server, room, token)
    page.click(".feed-toggle")
    for lang in languages():
        switch_language(page, lang)
        page.wait_for_selector(".feed-open .feed-lang .lang-select")
        head = page.evaluate(_FEED_HEAD_JS)
        assert head["lang"] >= 40 and head["closeRight"] <= head["width"], (lang, head)
        assert head["titleWhole"] and head["title"] == catalog_of(lang)["table.feed"], (lang, head)
    screenshot(page, f"feed-head-{viewport['width']}")
    watch.assert_clean()
    context.close()


def test_final_standings_and_plurals_in_every_language(server: ServerProcess, browser: Any) -> None:
    room = play_bot_match(server, timeout=240)
    context, page, watch = open_page(browser, PHONE)
    goto(page, f"{server.url}/r/{room['code']}")
    for lang in languages():
        catalog = catalog_of(lang)
        switch_language(page, lang)  # one page, drawn again in each language (the panel too)
        page.wait_for_selector(f"{PANEL} .standings tbody tr")
        shown = page.evaluate(_STANDINGS_JS)
        view = shown["view"]
        # ranked by the engine: most camat elections, then fewest stones received over the match
        assert [r["seat"] for r in shown["rows"]] == [side[0] for side in view["standings"]], lang
        keys = [(-view["elections"][s], view["received"][s], s) for s in range(5)]
        assert [r["seat"] for r in shown["rows"]] == [k[2] for k in sorted(keys)], lang
        assert [r["received"] for r in shown["rows"]] == [view["received"][r["seat"]] for r in shown["rows"]]
        assert [r["cells"][3] for r in shown["rows"]] == [str(r["received"]) for r in shown["rows"]]
        assert shown["head"][3] == catalog["standings.received"], lang
        assert shown["rows"][0]["elections"] == 1 and sum(view["received"]) > 0
        # penalties read as penalties: one clause each, no chain of reasons
        for line in shown["transfers"]:
            assert line.count(",") < 8 and "+" not in line, (lang, line)
        # plural forms by the language's rules (Intl.PluralRules), in the page's own catalog
        forms = page.evaluate(
            """async (ns) => { const i18n = await import('/static/js/i18n.js');
                const forms = (n) => [i18n.t('stones.count', {n}), i18n.t('tiles.count', {n})];
                return Object.fromEntries(ns.map((n) => [n, forms(n)])); }""",
            [0, 1, 2, 3, 5, 11, 21, 22],
        )
        for n, text in STONES[lang].items():
            assert forms[str(n)][0] == text, (lang, n, forms[str(n)])
        for n, text in TILES.get(lang, {}).items():
            assert forms[str(n)][1] == text, (lang, n, forms[str(n)])
        # the feed's round-end lines (the match's real ones) say who went out once
        ends = page.eval_on_selector_all(
            ".feed-end",
            """els => els.map((li) => ({text: li.textContent, terms: ['first_cappu', 'ceki', 'pollo']
                .map((term) => li.querySelectorAll(`.term[data-term='${term}']`).length)}))""",
        )
        assert ends and all(max(end["terms"]) <= 1 for end in ends), (lang, ends)
        assert lang != "en" or all(end["text"].count("went out") <= 1 for end in ends), ends
        assert "⟦" not in text_of(page) and page.evaluate("() => window.__i18nMissing") == []
        assert _fits(page), lang
        screenshot(page, f"standings-{lang}-390x844")
    watch.assert_clean()
    context.close()


def _round_end(end: Termination, reason: Reason, owed: int) -> dict[str, Any]:
    """A round_ended event as the server sends it: Citra (seat 2) went out, or is the manguno of a
    block without mattikkeng (she pays); Budi (seat 1), the cucuq, receives ``owed`` stones."""
    block = end is Termination.BLOCK
    settlement = Settlement(reason, 1, owed, 0 if block else owed, ((2, owed),) if block else (), 0)
    outcome = DomengOutcome(
        end, 2, None if block else 2, 1, 2 if block else None, (), (3, 8, 4, 9, 6), settlement,
        False, None, 10, (0, owed, 0, 0, 0), 2, False,
    )  # fmt: skip
    return {"type": "round_ended", "outcome": outcome_to_json(outcome)}


# What the round's title says (a term of the game), which its feed line must not say again.
_ROUND_ENDS = {
    "first_cappu": _round_end(Termination.OUT, Reason.OUT, 1),
    "ceki": _round_end(Termination.CEKI, Reason.CEKI, 3),
    "pollo": _round_end(Termination.POLLO, Reason.POLLO, 5),
    "manguno": _round_end(Termination.BLOCK, Reason.MANGUNO, 1),
}

_FEED_END_JS = """async (events) => {
    const narrate = await import('/static/js/narrate.js');
    const names = ['Ana', 'Budi', 'Citra', 'Dewi', 'Eko'];
    const room = {variant: 'domeng', seats: names.map((name) => ({kind: 'human', name}))};
    const count = (el, selector) => el.querySelectorAll(selector).length;
    const said = (el, term) => ({text: el.textContent, terms: count(el, `.term[data-term='${term}']`),
        winner: count(el, ".who[data-seat='2']"), cucuq: count(el, ".who[data-seat='1']")});
    return Object.fromEntries(Object.entries(events).map(([term, event]) => {
        const o = event.outcome;
        const line = narrate.eventLine(event, room);  // the feed's line: title, then detail
        const panel = narrate.settlementSentence(o.settlement, room, o);  // the panel's transfer, alone
        return [term, {line: said(line, term), detail: said(line.querySelector('.feed-detail'), term),
                       panel: said(panel, term)}];
    }));
}"""


def test_a_round_end_line_in_the_feed_says_its_title_once(server: ServerProcess, browser: Any) -> None:
    """The feed's line for a Domeng round's end is its title ("Citra went out: first cappu") and
    what followed ("Budi, the cucuq, takes 1 stone …"), never who went out (or who is manguno)
    twice, in every language; the round-end panel's transfer list, with no title beside it, keeps
    the whole sentence."""
    context, page, watch = open_page(browser, DESKTOP)
    goto(page, f"{server.url}/")
    for lang in languages():
        switch_language(page, lang)
        shown = page.evaluate(_FEED_END_JS, _ROUND_ENDS)
        for term, said in shown.items():
            assert said["line"]["terms"] == 1 and said["detail"]["terms"] == 0, (lang, term, said)
            assert said["detail"]["cucuq"] == 1 and said["panel"]["terms"] == 1, (lang, term, said)
            if term != "manguno":  # the manguno pays, so the detail names her as the payer
                assert said["line"]["winner"] == 1 and said["panel"]["winner"] == 1, (lang, term, said)
            if lang == "en" and term != "manguno":
                assert said["line"]["text"].count("went out") == 1, said
                assert said["panel"]["text"].count("went out") == 1, said
        if lang == "en":
            details = {term: said["detail"]["text"] for term, said in shown.items()}
            assert details["manguno"].startswith("Nobody is mattikkeng, so Budi, the cucuq, takes"), details
            assert details["first_cappu"].startswith("Budi, the cucuq, takes 1 stone"), details
    assert page.evaluate("() => window.__i18nMissing") == []
    watch.assert_clean()
    context.close()


_BESIDE_JS = """async () => {
    const narrate = await import('/static/js/narrate.js');
    const review = await import('/static/js/review.js');
    const names = ['Ana', 'Budi', 'Citra', 'Dewi', 'Eko'];
    const room = {variant: 'domeng', seats: names.map((name) => ({kind: 'human', name}))};
    const placed = (seat, tile, end, ends) => ({type: 'placed', seat, tile, end, ends, mappakuling: false});
    const lines = (log) => narrate.feedLinesFrom(log, room, null, 0).map((l) => l.el.textContent);
    const words = (action, chain) => {
        const el = document.createElement('span');
        el.append(review.optionText(action, null, review.loneLempa(chain)));
        return el.textContent;
    };
    const play = (tile) => ({seat: 1, play: tile, end: 'L'});
    const decision = {at: 1, chain: [[6, 6]], marked: false, lost: 0, chosen: play('6-3'), best: play('6-3'),
        options: [{action: play('6-3'), cost: 0, lost: 0}, {action: play('6-1'), cost: 1, lost: 1}]};
    const list = review.reviewList(
        {unit: 'stones', marked: 0, lost: 0, threshold: 0.25, decisions: [decision]});
    return {
        // 6-6 opens, Budi passes, Citra plays 6-3 next to it, Dewi 3-1 on the left of the longer chain
        lempa: lines([placed(0, '6-6', null, [6, 6]), {type: 'passed', seat: 1},
                      placed(2, '6-3', 'L', [3, 6]), placed(3, '3-1', 'L', [1, 6])]),
        // a later round opened with 5-3, not a lempa: its ends differ, the sides mean something
        plain: lines([placed(0, '5-3', null, [5, 3]), placed(1, '3-2', 'R', [5, 2])]),
        review: [words(play('6-3'), [[6, 6]]), words(play('6-3'), ['6-6']),
                 words(play('3-1'), [[3, 6], [6, 6]])],
        listed: [...list.querySelectorAll('.review-what')].map((e) => e.textContent),
    };
}"""


_TERM_GAPS_JS = """(selector) => [...document.querySelectorAll(selector)].flatMap((tag) =>
    [...tag.querySelectorAll('.term')].filter((term) => term.nextSibling?.nodeType === Node.TEXT_NODE)
        .map((term) => {
            const range = document.createRange();
            range.selectNodeContents(term.nextSibling);
            return {text: tag.textContent,
                    gap: range.getClientRects()[0].left - term.getBoundingClientRect().right};
        }))"""
"""For each term inside the tags ``selector`` finds that words follow: how far (px) the words start
from the term's end. The catalog's own text (a colon, a space) stands there; a flex box's gap never."""


_MAPPAKULING_JS = """async () => {
    const narrate = await import('/static/js/narrate.js');
    const names = ['Ana', 'Budi', 'Citra', 'Dewi', 'Eko'];
    const room = {variant: 'domeng', seats: names.map((name) => ({kind: 'human', name}))};
    const feed = document.body.appendChild(document.createElement('ul'));
    feed.className = 'feed-list';
    feed.append(narrate.eventLine(
        {type: 'placed', seat: 2, tile: '1-3', end: 'R', ends: [3, 3], mappakuling: true}, room));
}"""


def test_the_feeds_mappakuling_line_has_no_space_before_its_colon(
    server: ServerProcess, browser: Any
) -> None:
    """The feed's tag for a mappakuling reads "MAPPAKULING: both ends show 3" in every language, the
    colon right after the term: the tag's flex gap stood between them ("MAPPAKULING : …")."""
    context, page, watch = open_page(browser, DESKTOP)
    goto(page, f"{server.url}/")
    for lang in languages():
        switch_language(page, lang)
        page.evaluate(_MAPPAKULING_JS)
        gaps = page.evaluate(_TERM_GAPS_JS, ".feed-line .tag")
        said = _filled(catalog_of(lang)["feed.mappakuling"], n="3")
        assert [g["text"] for g in gaps] == [said] and ": " in said, (lang, gaps)
        assert abs(gaps[0]["gap"]) < 0.5, (lang, gaps)
        page.evaluate("() => document.querySelector('.feed-list').remove()")
    assert page.evaluate("() => window.__i18nMissing") == []
    watch.assert_clean()
    context.close()


def _filled(template: str, **values: str) -> str:
    """A catalog's message as the page shows it: its terms by their label, ``{x}`` by ``values``."""
    shown = re.sub(r"\[\[([^\]|]+)(?:\|([^\]]+))?\]\]", lambda m: m.group(2) or m.group(1), template)
    return re.sub(r"\{(\w+)\}", lambda m: values[m.group(1)], shown)


def test_a_tile_played_against_a_lone_lempa_goes_next_to_it_not_on_a_side(
    server: ServerProcess, browser: Any
) -> None:
    """When the chain is a single lempa, both its ends are that one tile: the feed, a hint and the
    review said "Citra plays 6–3 on the left", where "left" meant nothing. They now say "next to
    6–6" in every language; on a longer chain (or one opened with another tile) the sides stay."""
    context, page, watch = open_page(browser, DESKTOP)
    goto(page, f"{server.url}/")
    for lang in languages():
        switch_language(page, lang)
        words = catalog_of(lang)
        shown = page.evaluate(_BESIDE_JS)
        beside = _filled(words["feed.placed_beside"], name="Citra", tile="6–3", lempa="6–6")
        assert shown["lempa"][2:] == [beside, _filled(words["feed.placed_left"], name="Dewi", tile="3–1")], (
            lang,
            shown,
        )
        plain = _filled(words["feed.placed_right"], name="Budi", tile="3–2")
        assert shown["plain"][1] == plain, (lang, shown)
        next_to = _filled(words["review.play_beside"], tile="6–3", lempa="6–6")
        left = _filled(words["review.play_left"], tile="3–1")
        assert shown["review"] == [next_to, next_to, left], (lang, shown)
        assert shown["listed"] == [next_to, _filled(words["review.play_beside"], tile="6–1", lempa="6–6")]
    assert page.evaluate("() => window.__i18nMissing") == []
    watch.assert_clean()
    context.close()


def test_ones_own_long_name_in_the_waiting_room_on_a_phone_is_whole(
    server: ServerProcess, browser: Any
) -> None:
    """At 390 px, "Dewi Sartika Wulandari (kamu)" beside "Tinggalkan kursi" showed as "D… (kamu)":
    the seat's button now goes onto a line of its own before the name is cut, in every language."""
    room = server.create_room(variant="kozel", seats=4, bots=["easy", None, None, "medium"], turn_timer_s=0)
    token = server.claim(room["code"], 2, "Dewi Sartika Wulandari").json()["token"]
    context, page, watch = open_page(browser, PHONE)
    goto(page, f"{server.url}/r/{room['code']}")
    hold_seat(page, room["code"], token, 2)
    page.reload()
    page.wait_for_selector(".seat-row.mine .seat-name")
    for lang in languages():
        switch_language(page, lang)
        name = page.wait_for_selector(".seat-row.mine .seat-name")
        assert name.evaluate("(e) => e.scrollWidth <= e.clientWidth"), (lang, name.bounding_box())
        assert name.text_content() == "Dewi Sartika Wulandari"
    screenshot(page, "waiting-long-name-phone")
    watch.assert_clean()
    context.close()


_OPTIONS_JS = """() => {
    const box = document.querySelector('.options-box').getBoundingClientRect();
    const seats = document.querySelector('.seat-list').getBoundingClientRect();
    const select = document.querySelector('#opt-camat-target');
    const room = select.parentElement.getBoundingClientRect().width;
    const shown = select.getBoundingClientRect().width;
    select.style.maxWidth = 'none';
    const natural = select.getBoundingClientRect().width;
    select.style.maxWidth = '';
    return {box: box.width, seats: seats.width, shown, wanted: Math.min(natural, room)};
}"""


def test_the_hosts_match_options_on_a_phone_take_the_cards_width_in_every_language(
    server: ServerProcess, browser: Any
) -> None:
    """At 390 px in Indonesian the match's options box was 282 px of the card's 332, and its
    match-length menu cut "Sampai 1 kali pemilihan ca…": the box takes the card's width and the
    menu as much of it as its longest choice needs."""
    room = server.create_room(bots=[None, "easy", "medium", "hard", "easy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, PHONE)
    goto(page, f"{server.url}/r/{room['code']}")
    hold_seat(page, room["code"], token, 0)
    hold_host(page, room["code"], room["host_token"])
    page.reload()
    page.wait_for_selector(".options-box #opt-camat-target")
    for lang in languages():
        switch_language(page, lang)
        page.wait_for_selector(".options-box #opt-camat-target")
        sizes = page.evaluate(_OPTIONS_JS)
        assert sizes["box"] >= sizes["seats"] - 1, (lang, sizes)
        assert sizes["shown"] >= sizes["wanted"] - 1, (lang, sizes)
    screenshot(page, "waiting-options-phone")
    watch.assert_clean()
    context.close()


_TERM_GAP_JS = """() => {
    const label = document.querySelector('#opt-two-lempas').closest('label');
    const term = label.querySelector('.term');
    const after = term.nextSibling || term.parentNode.nextSibling;
    const range = document.createRange();
    range.selectNodeContents(after);
    const canvas = document.createElement('canvas').getContext('2d');
    canvas.font = getComputedStyle(term).font;
    return {gap: range.getClientRects()[0].left - term.getBoundingClientRect().right,
            space: canvas.measureText(' ').width, text: label.textContent};
}"""


def test_a_term_in_the_hosts_kozel_options_sits_in_its_sentence(server: ServerProcess, browser: Any) -> None:
    """The host's "Two lempas in one move" box in a Kozel waiting room: the term and the words
    after it are one sentence, a space apart, not two pieces of the row a box's gap apart (the
    lobby's form already reads so)."""
    room = server.create_room(variant="kozel", seats=2, bots=[None, "easy"], turn_timer_s=0)
    token = server.claim(room["code"], 0, "Ana").json()["token"]
    context, page, watch = open_page(browser, PHONE)
    goto(page, f"{server.url}/r/{room['code']}")
    hold_seat(page, room["code"], token, 0)
    hold_host(page, room["code"], room["host_token"])
    page.reload()
    page.wait_for_selector(".options-box #opt-two-lempas")
    shown = page.evaluate(_TERM_GAP_JS)
    assert shown["gap"] <= shown["space"] + 1, shown
    watch.assert_clean()
    context.close()


_ME_STATUS_JS = """() => {
    const box = (sel) => document.querySelector(sel).getBoundingClientRect();
    const text = document.querySelector('.me-status .timer-text');
    const status = box('.me-status .status'), seconds = box('.me-status .timer-text');
    const hint = box('.me-status .hint-btn');
    const lines = Math.round(status.height / parseFloat(getComputedStyle(
        document.querySelector('.me-status .status')).lineHeight));
    return {whole: text.scrollWidth <= text.clientWidth + 0.5, inside: seconds.right <= innerWidth,
            apart: seconds.right <= hint.left, lines, shown: text.textContent};
}"""


def _until_a_turn_with_a_choice(page: Any, tries: int = 1500) -> None:
    """Play on until one's turn has a choice (the Hint button shows only then): forced turns are
    played through. Bounded by a count of looks, not by the clock, so that a busy machine (two CPU
    hogs beside the suite took 120 s once) only makes it slower."""
    for _ in range(tries):
        if page.locator(".me-status .hint-btn:not([hidden])").count():
            return
        if not play_turn(page):
            page.wait_for_timeout(200)  # a bot's move or the next deal is awaited
    raise AssertionError(f"no turn with a choice came in {tries} looks")


@pytest.mark.parametrize("lang", ["id", "hu"])
def test_ones_turn_timer_on_a_phone_shows_its_seconds_whole_beside_the_hint(
    server: ServerProcess, browser: Any, lang: str
) -> None:
    """On one's own turn at 390x844 the status, the timer's bar and seconds and the Hint button
    share a row: the seconds ("10 dtk", "10 mp") stay whole, inside the page, clear of the button,
    and the status keeps to a few lines."""
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=600, hints=True)
    code = room["code"]
    token = server.claim(code, 0, "Budi").json()["token"]
    context, page, watch = open_page(browser, PHONE, locale=f"{lang}-{lang.upper()}")
    try:
        sit_and_start(page, server, room, token)
        _until_a_turn_with_a_choice(page)
        page.wait_for_selector(".me-status .timer-text:not(:empty)")
        shown = page.evaluate(_ME_STATUS_JS)
        screenshot(page, f"turn-timer-390x844-{lang}")
        assert shown["whole"] and shown["inside"] and shown["apart"], shown
        assert shown["lines"] <= 3, shown
        watch.assert_clean()
    finally:
        context.close()


@pytest.mark.parametrize("lang", ["en", "uk"])
def test_a_refused_move_is_said_in_the_pages_own_words(
    server: ServerProcess, browser: Any, lang: str
) -> None:
    """The server refuses a move with a stable code and plain English (docs/protocol.md `error`);
    the page says the refusal in its own language by the code (room.js ``onError``): a pass while
    a tile fits (``voluntary_pass``), a tile that is not in the set (``invalid_tile``)."""
    room = server.create_room(bots=[None, "easy", "easy", "easy", "easy"], turn_timer_s=600, hints=True)
    token = server.claim(room["code"], 0, "Budi").json()["token"]
    context, page, watch = open_page(browser, PHONE, locale=f"{lang}-{lang.upper()}")
    try:
        sit_and_start(page, server, room, token)
        _until_a_turn_with_a_choice(page)
        catalog = catalog_of(lang)
        for action, code in (({"pass": True}, "voluntary_pass"), ({"play": "9-9"}, "invalid_tile")):
            page.evaluate("(action) => window.__domeng.sendAction(action)", action)
            said = page.locator("#toasts .toast-error", has_text=catalog[f"error.{code}"])
            said.wait_for(state="visible")
            said.click()  # dismissed: the next refusal is read alone
        watch.assert_clean()
    finally:
        context.close()
