"""Typed scores (`engine.score`): each variant's score gives exactly the JSON views always sent."""

from __future__ import annotations

from engine.score import DomengScore, KozelScore
from engine.views import player_view
from tests.conftest import PASSEBUNGE_HANDS, PASSEBUNGE_UNUSED, deal, position
from tests.conftest import domeng as domeng_rules
from tests.kozelkit import kozel, kozel_position


def test_domeng_score_is_the_stones_table_camat_elections_and_cycle_D5_D16() -> None:
    state = position(
        ["0-6 1-1", "2-2 3-3", "0-1 1-2", "0-0 1-3", "2-3 4-5"],
        (6, 6),
        to_act=3,
        last_mappano=2,
        table=1,
        stones=[10, 11, 3, 0, 0],
    )
    score = state.score()
    assert isinstance(score, DomengScore)
    assert (score.unit, score.seat_figure(1)) == ("stones", 11)
    assert score.to_json() == {
        "table": 1,
        "stones": [10, 11, 3, 0, 0],
        "elections": [0, 0, 0, 0, 0],
        "cycle": state.cycle,
    }
    assert state.public_score() == score.fields()
    assert (
        position(["0-0", "0-1", "0-2", "0-3", "0-4"], (0, 0), to_act=0, last_mappano=0, camat=2)
        .score()
        .to_json()["camat"]
        == 2
    )
    view = player_view(state, None).to_json()
    assert {key: view[key] for key in score.to_json()} == score.to_json()


def test_kozel_score_is_the_bazaar_points_pending_and_who_opened_K8() -> None:
    state = kozel_position(
        ["5-6", "1-4", "0-1 0-2"],
        (2, 5),
        to_act=0,
        last_placer=2,
        bazaar="3-3 4-4",
        points=[0, 15, 0],
        pending=[4, 0, 0],
        rules=kozel(3),
    )
    score = state.score()
    assert isinstance(score, KozelScore)
    assert (score.unit, score.seat_figure(1)) == ("points", 15)
    assert score.to_json() == {
        "bazaar": 2,
        "points": [0, 15, 0],
        "pending": [4, 0, 0],
        "opened": [False, True, False],
    }
    assert state.public_score() == score.fields()
    view = player_view(state, 0).to_json()
    assert {key: view[key] for key in score.to_json()} == score.to_json()


def test_kozel_views_carry_the_goal_and_the_sides_K9_K10() -> None:
    pairs = player_view(kozel(4, pairs=True).new_match(), None).to_json()
    assert (pairs["goal"], pairs["sides"]) == (101, [[0, 2], [1, 3]])
    alone = player_view(kozel(3).new_match(), None).to_json()
    assert (alone["goal"], alone["sides"]) == (101, [[0], [1], [2]])


def test_domeng_views_carry_no_kozel_facts() -> None:
    view = player_view(
        position(["0-0", "0-1", "0-2", "0-3", "0-4"], (0, 0), to_act=0, last_mappano=0), None
    ).to_json()
    assert "goal" not in view and "sides" not in view and "bazaar" not in view


def test_the_rest_of_the_tiles_is_named_and_counted_by_the_state_D10_K1() -> None:
    state = kozel_position(
        ["5-6", "1-4", "0-1 0-2"], (2, 5), to_act=0, last_placer=2, bazaar="3-3 4-4", rules=kozel(3)
    )
    assert (state.rest_name, [str(t) for t in state.rest()]) == ("bazaar", ["3-3", "4-4"])
    domeng = position(["0-0", "0-1", "0-2", "0-3", "0-4"], (0, 0), to_act=0, last_mappano=0)
    assert domeng.rest_name == "unused" and domeng.rules.rest_name == "unused"
    dealt = domeng_rules().new_match()
    dealt.start_round(deal(*PASSEBUNGE_HANDS, unused=PASSEBUNGE_UNUSED))
    assert " ".join(str(t) for t in dealt.rest()) == PASSEBUNGE_UNUSED
