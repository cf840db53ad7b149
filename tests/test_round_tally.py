"""A finished round's tally (`engine.tally.round_tally`), checked on RULES.md's worked examples."""

from __future__ import annotations

import pytest

from engine.actions import Pass
from engine.tally import RoundTally, SeatTally, round_settlements, round_tally
from tests.conftest import play, position, run
from tests.kozelkit import kozel, kozel_position


def test_example_1_the_cucuq_receives_one_for_the_pass_and_three_for_the_ceki_D2_D4() -> None:
    state = position(["0-0 0-1", "0-2 0-4", "5-1 6-6", "4-4 2-6", "1-3"], (3, 5), to_act=2, last_mappano=1)
    run(state, play(2, "5-1", "R"), Pass(3))
    with pytest.raises(ValueError, match="no round has just finished"):
        round_tally(state)
    run(state, play(4, "1-3", "R"))
    tally = round_tally(state)
    assert [s.reason.value for s in round_settlements(state)] == ["pass", "ceki"]
    assert tally == RoundTally(
        outcome=state.outcome,  # type: ignore[arg-type]
        table=21,
        seats=(
            SeatTally(0, received=0, paid=0, stones=0, points=None, pending=None),
            SeatTally(1, received=0, paid=0, stones=0, points=None, pending=None),
            SeatTally(2, received=0, paid=0, stones=0, points=None, pending=None),
            SeatTally(3, received=4, paid=0, stones=4, points=None, pending=None),
            SeatTally(4, received=0, paid=0, stones=0, points=None, pending=None),
        ),
        match_over=False,
    )


def test_example_3_a_shortfall_paid_by_the_last_mappano_shows_as_paid_D5() -> None:
    """Example 3's passes (P2 pays P4's stone), then P0 goes out: its cucuq P4 is owed 1 more and,
    with the table empty, P0 pays it (D5)."""
    state = position(
        ["0-6", "2-2 3-3", "0-1 1-2", "0-0 1-3", "2-3 4-5"],
        (6, 6),
        to_act=3,
        last_mappano=2,
        table=1,
        stones=[10, 11, 3, 0, 0],
    )
    run(state, Pass(3), Pass(4), play(0, "0-6", "R"))
    tally = round_tally(state)
    assert [(s.received, s.paid) for s in tally.seats] == [(0, 1), (0, 0), (0, 1), (1, 0), (2, 0)]
    assert tally.table == state.table and [s.stones for s in tally.seats] == list(state.stones)


def test_kozel_example_4_a_fish_reports_points_and_nothing_received_K5_K6_K7() -> None:
    state = kozel_position(["6-6", "5-5 0-0 1-4", "1-1 3-3"], (4, 1), to_act=1, last_placer=0, rules=kozel(3))
    run(state, play(1, "1-4", "R"))
    tally = round_tally(state)
    assert (tally.table, tally.match_over, round_settlements(state)) == (None, False, [])
    assert tally.seats == (
        SeatTally(0, received=0, paid=0, stones=None, points=0, pending=12),
        SeatTally(1, received=0, paid=0, stones=None, points=0, pending=10),
        SeatTally(2, received=0, paid=0, stones=None, points=0, pending=0),
    )
