"""Kozel in words (engine.narration, what the admin's replay and history show): every line in
Kozel's own terms, never a Domeng word such as mappakuling (RULES.md glossary), and no stray
separator. Hand-made moves are told exactly (a placement that leaves equal ends, two lempas K4, a
fish K5, an out, the goat K9); seeded random play checks every line of thousands of actions.
"""

from __future__ import annotations

import random

import pytest

from engine.actions import PlayLempas
from engine.core import Phase
from engine.events import Placed
from engine.narration import describe_events
from engine.tiles import Tile
from engine.views import event_to_json
from tests.conftest import play, position, run
from tests.kozelkit import KOZEL_SEATS, assert_kozel_words, kozel, kozel_position


def test_a_placement_that_leaves_equal_ends_says_no_mappakuling_K3() -> None:
    """2-5 on the R of [2|5] leaves [2|2]: Domeng calls that mappakuling (D14), Kozel says nothing
    of it, in the event (also as the clients get it) and in words."""
    state = kozel_position(
        ["2-5 6-6", "1-1 0-3", "4-4 0-1"], (2, 5), to_act=0, last_placer=2, bazaar="3-3", rules=kozel(3)
    )
    events = run(state, play(0, "2-5", "R"))
    (placed,) = events
    assert isinstance(placed, Placed) and placed.ends == (2, 2)
    assert not placed.mappakuling and event_to_json(placed)["mappakuling"] is False
    text = describe_events(events, KOZEL_SEATS[:3])
    assert text == "Anna plays 2-5 on R → [2|2]"
    assert_kozel_words(text)

    # the same placement in Domeng is a mappakuling and says so
    same = position(["2-5 6-6", "1-1", "0-3", "4-4", "0-1"], (2, 5), to_act=0, last_mappano=4)
    domeng_events = run(same, play(0, "2-5", "R"))
    assert describe_events(domeng_events, "ABCDE") == "A plays 2-5 on R → [2|2] (mappakuling)"


def test_two_lempas_are_one_move_in_one_sentence_K4() -> None:
    state = kozel_position(
        ["2-2 5-5 1-3", "1-1 0-3", "4-4 0-1"], (2, 5), to_act=0, last_placer=2, bazaar="3-3", rules=kozel(3)
    )
    move = PlayLempas(0, (Tile.parse("2-2"), Tile.parse("5-5")))
    assert move in state.legal_actions()
    text = describe_events(run(state, move), KOZEL_SEATS[:3])
    assert text == "Anna plays two lempas, 2-2 on L and 5-5 on R → [2|5]"
    assert_kozel_words(text)


def test_going_out_with_two_lempas_tells_the_out_and_the_points_K4_K7_K8() -> None:
    state = kozel_position(
        ["2-2 5-5", "1-3 0-4", "6-6 0-1"], (2, 5), to_act=0, last_placer=2, bazaar="3-3", rules=kozel(3)
    )
    named = PlayLempas(0, (Tile.parse("5-5"), Tile.parse("2-2")))  # either order may be named
    text = describe_events(run(state, named), KOZEL_SEATS[:3])
    assert text == (
        "Anna plays two lempas, 5-5 on R and 2-2 on L → [2|5]"
        " · OUT: Anna placed the last tile"
        " · hands: Anna 0 pips → +0, Boris 8 pips → +8, Vera 13 pips → +13"
        " · points: Anna not opened (0 pending), Boris not opened (8 pending), Vera 13"
        " · next leader Anna"
    )
    assert_kozel_words(text)


def test_a_fish_on_equal_ends_is_told_in_kozels_words_example_4_K5_K7() -> None:
    state = kozel_position(["6-6", "5-5 0-0 1-4", "1-1 3-3"], (4, 1), to_act=1, last_placer=0, rules=kozel(3))
    text = describe_events(run(state, play(1, "1-4", "R")), KOZEL_SEATS[:3])
    assert text == (
        "Boris plays 1-4 on R → [4|4]"
        " · FISH: bazaar empty and nobody can place; Vera has the lowest hand"
        " · hands: Anna 12 pips → +12, Boris 10 pips → +10, Vera 8 pips → +0"
        " · points: Anna not opened (12 pending), Boris not opened (10 pending), Vera not opened (0 pending)"
        " · next leader Vera"
    )
    assert_kozel_words(text)


def test_the_goat_ends_the_match_in_words_example_6_K9() -> None:
    state = kozel_position(
        ["5-6", "0-1", "3-4"],
        (2, 5),
        to_act=0,
        last_placer=2,
        bazaar="3-3",
        points=[0, 0, 96],
        rules=kozel(3),
    )
    text = describe_events(run(state, play(0, "5-6", "R")), KOZEL_SEATS[:3])
    assert text == (
        "Anna plays 5-6 on R → [2|6]"
        " · OUT: Anna placed the last tile"
        " · hands: Anna 0 pips → +0, Boris 1 pip → +1, Vera 7 pips → +7"
        " · points: Anna not opened (0 pending), Boris not opened (1 pending), Vera 103"
        " · GOAT: Vera (101 or more); the match is over"
    )
    assert_kozel_words(text)


@pytest.mark.parametrize(("seats", "options"), [(2, {}), (3, {}), (4, {}), (4, {"pairs": True})])
def test_every_line_of_random_kozel_play_is_in_kozels_words(seats: int, options: dict[str, object]) -> None:
    """Seeded random play, 300 rounds per table: every action's line (plays, draws, passes, two
    lempas, out, fish, goat) is free of Domeng's words and stray separators, and each kind of
    line was seen."""
    rules = kozel(seats, **options)
    rng = random.Random(f"kozel-narration-{seats}-{options}")
    names = KOZEL_SEATS[:seats]
    state = rules.new_match()
    seen: set[str] = set()
    for _ in range(300):
        if state.phase is Phase.OVER:
            state = rules.new_match()
        state.start_round(rules.deal(rng))
        while state.phase is Phase.PLAYING:
            action = rng.choice(state.legal_actions())
            text = describe_events(state.apply(action), names)
            assert_kozel_words(text)
            seen.add(type(action).__name__)
            seen.update(word for word in ("OUT", "FISH", "GOAT") if f"· {word}" in text)
            if any(type(e) is Placed and e.ends[0] == e.ends[1] and e.end for e in state.log[-2:]):
                seen.add("equal ends")
    assert seen >= {"Play", "Draw", "Pass", "PlayLempas", "OUT", "FISH", "GOAT", "equal ends"}, seen
