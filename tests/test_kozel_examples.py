"""RULES.md's Kozel worked examples 1-6, played move by move with exact points and outcomes.

Hand-made positions with an empty bazaar respect RULES.md's parity note: a number shows an odd
number of times among the hands exactly when it shows at one open end.
"""

from __future__ import annotations

import pytest

from engine.actions import Draw, Pass
from engine.core import Phase
from engine.errors import IllegalActionError
from engine.events import Drew, KozelOutcome, Placed, RoundEnded, Termination
from tests.conftest import play, run, tiles
from tests.kozelkit import kozel, kozel_outcome, kozel_position, kozel_round


def test_example_1_holder_of_the_highest_dealt_lempa_opens_with_it_K2() -> None:
    """3 players; 6-6 is in the bazaar; P0 holds 5-5, P1 holds 4-4 → P0 must open with 5-5."""
    state = kozel_round(
        "5-5 0-1 0-2 0-3 1-2", "4-4 0-4 1-3 1-4 2-3", "3-3 0-5 1-5 2-4 2-5", bazaar="6-6", rules=kozel(3)
    )
    assert state.bazaar[0] == tiles("6-6")[0]
    assert (state.to_act, state.opening) == (0, tiles("5-5")[0])
    assert state.legal_actions() == [play(0, "5-5")]
    with pytest.raises(IllegalActionError) as caught:
        state.apply(play(0, "1-2"))
    assert caught.value.code == "wrong_opening_tile"
    with pytest.raises(IllegalActionError) as caught:
        state.apply(play(1, "4-4"))
    assert caught.value.code == "wrong_seat"
    run(state, play(0, "5-5"))
    assert (state.ends, state.to_act) == ((5, 5), 1)


def test_example_2_draw_until_a_tile_fits_then_play_it_K3() -> None:
    """Ends [5|3], P2 holds {6-6, 1-2}, bazaar top 1-1 then 0-3: P2 draws 1-1 (no fit), draws 0-3
    and plays it → [5|0]; P2 keeps {6-6, 1-2, 1-1}."""
    state = kozel_position(
        ["2-2 4-4", "0-0 2-4", "6-6 1-2"],
        (5, 3),
        to_act=2,
        last_placer=1,
        bazaar="1-1 0-3 2-6",
        rules=kozel(3),
    )
    assert state.legal_actions() == [Draw(2)]

    assert run(state, Draw(2)) == [Drew(2, tiles("1-1")[0])]
    assert state.to_act == 2, "a seat that drew keeps the turn"
    assert state.legal_actions() == [Draw(2)]

    assert run(state, Draw(2)) == [Drew(2, tiles("0-3")[0])]
    assert state.legal_actions() == [play(2, "0-3", "R")]
    with pytest.raises(IllegalActionError) as caught:
        state.apply(Draw(2))
    assert caught.value.code == "draw_not_allowed"  # the drawn tile fits: it must be played

    run(state, play(2, "0-3", "R"))
    assert state.ends == (5, 0)
    assert state.hand(2) == tiles("1-1 1-2 6-6")
    assert (state.to_act, len(state.bazaar)) == (0, 1)


def test_example_3_with_an_empty_bazaar_the_only_legal_action_is_pass_K3() -> None:
    """2 players, bazaar [2-2], ends [6|5], P1 {1-1, 3-3}: draws 2-2, no fit, bazaar empty → pass."""
    state = kozel_position(
        ["4-6 4-5", "1-1 3-3"], (6, 5), to_act=1, last_placer=0, bazaar="2-2", rules=kozel(2)
    )
    assert state.legal_actions() == [Draw(1)]
    with pytest.raises(IllegalActionError) as caught:
        state.apply(Pass(1))
    assert caught.value.code == "voluntary_pass"  # the bazaar still has a tile

    run(state, Draw(1))
    assert state.hand(1) == tiles("1-1 2-2 3-3") and state.bazaar == []
    assert state.phase is Phase.PLAYING  # P0 can still place: no fish
    assert state.legal_actions() == [Pass(1)]
    with pytest.raises(IllegalActionError) as caught:
        state.apply(Draw(1))
    assert caught.value.code == "draw_not_allowed"

    run(state, Pass(1))
    assert state.to_act == 0
    assert state.legal_actions() == [play(0, "4-5", "R"), play(0, "4-6", "L")]


def test_example_4_fish_lowest_hand_writes_zero_and_leads_K5_K6_K7() -> None:
    """3 players, bazaar empty; P1 places the last 4 (1-4 on [4|1] → [4|4]). P0 {6-6}=12,
    P1 {5-5, 0-0}=10, P2 {1-1, 3-3}=8 → P2 writes 0 and leads; P0 adds 12, P1 adds 10."""
    state = kozel_position(["6-6", "5-5 0-0 1-4", "1-1 3-3"], (4, 1), to_act=1, last_placer=0, rules=kozel(3))
    events = run(state, play(1, "1-4", "R"))
    assert state.ends == (4, 4)
    assert [type(e) for e in events] == [Placed, RoundEnded]
    result = kozel_outcome(state)
    assert result == KozelOutcome(
        end=Termination.FISH,
        winner=2,
        hand_values=(12, 10, 8),  # 0-0 is not alone: it counts 0
        written=(12, 10, 0),
        points=(0, 0, 0),  # nobody has reached 13 yet (K8)
        pending=(12, 10, 0),
        goat=(),
        next_leader=2,
        match_over=False,
    )
    assert (state.phase, state.leader) == (Phase.READY, 2)


def test_example_5_points_are_recorded_from_13_on_K8() -> None:
    """P1's unrecorded points 10 → +5 = 15 → recorded 15; then +4 → recorded 19."""
    first = kozel_position(
        ["5-6", "1-4", "0-1 0-2"],
        (2, 5),
        to_act=0,
        last_placer=2,
        bazaar="3-3",
        pending=[0, 10, 0],
        rules=kozel(3),
    )
    run(first, play(0, "5-6", "R"))
    result = kozel_outcome(first)
    assert (result.end, result.winner, result.written) == (Termination.OUT, 0, (0, 5, 3))
    assert (result.points, result.pending) == ((0, 15, 0), (0, 0, 3))
    assert first.is_opened(1) and not first.is_opened(2)

    second = kozel_position(
        ["5-6", "1-3", "0-1 0-2"],
        (2, 5),
        to_act=0,
        last_placer=2,
        bazaar="3-3",
        points=[0, 15, 0],
        rules=kozel(3),
    )
    run(second, play(0, "5-6", "R"))
    result = kozel_outcome(second)
    assert (result.written, result.points, result.pending) == ((0, 4, 3), (0, 19, 0), (0, 0, 3))


def test_example_6_first_total_of_101_makes_the_goat_and_ends_the_match_K9() -> None:
    """P2 has 96 recorded and adds 7 → 103 → P2 is the goat; the match ends."""
    state = kozel_position(
        ["5-6", "0-1", "3-4"],
        (2, 5),
        to_act=0,
        last_placer=2,
        bazaar="3-3",
        points=[0, 0, 96],
        rules=kozel(3),
    )
    run(state, play(0, "5-6", "R"))
    result = kozel_outcome(state)
    assert (result.written, result.points, result.pending) == ((0, 1, 7), (0, 0, 103), (0, 1, 0))
    assert (result.goat, result.match_over) == ((2,), True)
    assert state.phase is Phase.OVER
    with pytest.raises(IllegalActionError) as caught:
        state.start_round(kozel(3).deal_from_seed(1))
    assert caught.value.code == "match_over"
