"""Typed scores (`engine.score`): each variant's score gives exactly the JSON views always sent."""

from __future__ import annotations

import random

import pytest

from app.admin.queries import result_of
from engine.actions import Pass
from engine.core import Phase, shared_places
from engine.rules.domeng import domeng_standings
from engine.score import DomengScore, KozelScore
from engine.views import outcome_agrees, outcome_to_json, player_view
from tests.conftest import PASSEBUNGE_HANDS, PASSEBUNGE_UNUSED, deal, play, position, run
from tests.conftest import domeng as domeng_rules
from tests.kozelkit import kozel, kozel_position

pytestmark = pytest.mark.engine  # the engine's scores, checked against the admin's reading of them


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
        "received": [0, 0, 0, 0, 0],
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


def test_every_settlement_a_view_shows_says_what_its_receiver_got_D5() -> None:
    """The client reads ``received``; it must be ``from_table`` plus every payer's share."""
    rules = domeng_rules()
    rng = random.Random("received")
    seen = 0
    for _ in range(30):
        state = rules.new_match()
        state.start_round(rules.deal(rng))
        while state.phase is Phase.PLAYING:
            state.apply(rng.choice(state.legal_actions()))
        view = player_view(state, 0).to_json()
        settlements = [e["settlement"] for e in view["log"] if e["type"] == "passed" and e["settlement"]]
        settlements.append(view["outcome"]["settlement"])
        for s in settlements:
            assert s["received"] == s["from_table"] + sum(n for _, n in s["from_payers"])
            seen += 1
    assert seen > 30


def test_a_kozel_outcome_says_who_has_opened_after_it_K8() -> None:
    state = kozel_position(
        ["5-6", "1-4", "0-1 0-2"],
        (2, 5),
        to_act=0,
        last_placer=2,
        bazaar="3-3",
        pending=[0, 10, 0],
        rules=kozel(3),
    )
    state.apply(play(0, "5-6", "R"))
    outcome = player_view(state, None).to_json()["outcome"]
    assert (outcome["points"], outcome["opened"]) == ([0, 15, 0], [False, True, False])


def test_an_outcome_stored_before_the_added_keys_still_agrees() -> None:
    state = position(["0-0 0-1", "0-2 0-4", "5-1 6-6", "4-4 2-6", "1-3"], (3, 5), to_act=2, last_mappano=1)
    run(state, play(2, "5-1", "R"), Pass(3), play(4, "1-3", "R"))
    assert state.outcome is not None
    fresh = outcome_to_json(state.outcome)
    old = {**fresh, "settlement": {k: v for k, v in fresh["settlement"].items() if k != "received"}}
    assert outcome_agrees(state.outcome, fresh) and outcome_agrees(state.outcome, old)
    assert not outcome_agrees(state.outcome, {**old, "winner": 0})
    assert not outcome_agrees(state.outcome, {k: v for k, v in fresh.items() if k != "winner"})


def test_standings_rank_domeng_by_elections_then_stones_received_over_the_match() -> None:
    state = domeng_rules().new_match()
    state.elections[:] = [0, 2, 0, 2, 1]
    state.stones[:] = [0, 0, 0, 0, 0]  # what an election leaves: nobody holds a stone
    state.received[:] = [3, 5, 1, 4, 0]
    assert state.standings() == ((3,), (1,), (4,), (2,), (0,))
    view = player_view(state, None).to_json()
    assert view["standings"] == [[3], [1], [4], [2], [0]]
    assert view["received"] == [3, 5, 1, 4, 0]


def test_a_played_match_counts_every_stone_received_and_ranks_by_it_after_the_election() -> None:
    """After a camat election everybody holds 0 stones (D16): places 2-5 follow the stones each
    seat received over the match (passes and round ends alike), not seat order."""
    for seed in range(200):
        rng = random.Random(seed)
        state = domeng_rules().new_match()
        received = [0] * 5
        while state.phase is not Phase.OVER:
            state.start_round(domeng_rules().deal(rng))
            start = len(state.log)
            while state.phase is Phase.PLAYING:
                state.apply(rng.choice(state.legal_actions()))
            for event in state.log[start:]:
                settlement = getattr(event, "settlement", None) or getattr(
                    getattr(event, "outcome", None), "settlement", None
                )
                if settlement is not None:
                    received[settlement.receiver] += settlement.received
        assert state.stones == [0] * 5 and state.received == received
        order = [side[0] for side in state.standings()]
        champion = state.elections.index(1)
        rest = sorted((s for s in range(5) if s != champion), key=lambda s: (received[s], s))
        assert order == [champion, *rest]
        if order[1:] != [s for s in range(5) if s != champion]:
            return  # this match's places 2-5 are not seat order: the totals decided them
    raise AssertionError("no match in 200 seeds ranked away from seat order")


def test_standings_rank_kozel_sides_by_fewest_points_then_pending_K9_K10() -> None:
    alone = kozel(3).new_match()
    alone.points[:], alone.pending[:] = [40, 0, 0], [0, 7, 3]
    assert alone.standings() == ((2,), (1,), (0,))
    pairs = kozel(4, pairs=True).new_match()
    pairs.points[:] = [14, 105, 14, 105]
    assert player_view(pairs, None).to_json()["standings"] == [[0, 2], [1, 3]]


def test_players_equal_on_both_keys_share_a_place_and_seat_order_breaks_no_tie() -> None:
    """Domeng ranks by most elections, then fewest stones received, and Kozel by fewest points,
    then fewest pending (K9): nothing more, so equal players share a place (1, 1, 3, …) while the
    standings still list them in seat order. The admin's result ranks the stored match alike."""
    state = domeng_rules().new_match()
    state.elections[:] = [1, 1, 0, 0, 0]
    state.received[:] = [4, 4, 6, 2, 2]
    view = player_view(state, None).to_json()
    assert view["standings"] == [[0], [1], [3], [4], [2]]
    assert view["places"] == [1, 1, 3, 3, 5] == list(state.places())
    assert state.standings() == domeng_standings(state.elections, state.received)
    outcomes = [{"stones": [0] * 5, "camat_elected": True, "winner": w, "match_over": True} for w in (0, 1)]
    result = result_of("domeng", outcomes, received=[4, 4, 6, 2, 2])
    assert result is not None and (result.standings, result.places) == ([0, 1, 3, 4, 2], [1, 1, 3, 3, 5])

    alone = kozel(3).new_match()
    alone.points[:], alone.pending[:] = [40, 0, 0], [0, 3, 3]
    assert (alone.standings(), alone.places()) == (((1,), (2,), (0,)), (1, 1, 3))
    pairs = kozel(4, pairs=True).new_match()
    pairs.points[:] = [14, 14, 14, 14]
    assert player_view(pairs, None).to_json()["places"] == [1, 1]
    kozel_result = result_of(
        "kozel", [{"points": [40, 0, 0], "pending": [0, 3, 3], "goat": [], "match_over": False}]
    )
    assert kozel_result is not None and kozel_result.places == [1, 1, 3]
    assert shared_places([]) == ()
