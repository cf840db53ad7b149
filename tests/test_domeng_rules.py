"""Domeng's leader, end, mappakuling, camat and match-end rules (D11, D13-D18), scripted."""

from __future__ import annotations

import random

import pytest

from engine.actions import Pass
from engine.bots import make_bot
from engine.core import Phase
from engine.errors import IllegalActionError
from engine.events import DomengOutcome, Placed, Reason, Settlement, Termination
from engine.simulate import play_round
from tests.conftest import ORDERED_HANDS, deal, domeng, new_round, outcome, play, position, run

# -- D11: who leads --------------------------------------------------------------------------------


# 4-4 with P0, 5-5 with P2, 3-3 with P3, 6-6 with P4; 0-0, 4-6 and 5-6 are unused.
LEMPA_HANDS = (
    "4-4 0-1 0-2 0-3 0-4",
    "0-5 0-6 1-1 1-2 1-3",
    "5-5 1-4 1-5 1-6 2-2",
    "3-3 2-3 2-4 2-5 2-6",
    "6-6 3-4 3-5 3-6 4-5",
)


def set_aside(*lempas: str) -> list[str]:
    """LEMPA_HANDS with each of ``lempas`` swapped for one of the unused tiles."""
    spare = ["0-0", "4-6", "5-6"]
    hands = [hand.split() for hand in LEMPA_HANDS]
    for lempa in lempas:
        for hand in hands:
            if lempa in hand:
                hand[hand.index(lempa)] = spare.pop()
    return [" ".join(hand) for hand in hands]


@pytest.mark.parametrize(
    ("unused_lempas", "leader", "lempa"),
    [
        ((), 4, "6-6"),
        (("6-6",), 2, "5-5"),
        (("6-6", "5-5"), 0, "4-4"),
        (("6-6", "5-5", "4-4"), 3, "3-3"),
    ],
)
def test_first_round_opens_with_the_highest_dealt_lempa_D11(
    unused_lempas: tuple[str, ...], leader: int, lempa: str
) -> None:
    state = new_round(*set_aside(*unused_lempas))
    assert state.deal is not None and {str(t) for t in state.deal.rest} >= set(unused_lempas)
    assert state.to_act == leader
    assert state.legal_actions() == [play(leader, lempa)]


def test_first_round_rejects_any_other_opening_tile_D11() -> None:
    state = new_round(*ORDERED_HANDS)  # P4 holds 4-4, the highest lempa dealt
    with pytest.raises(IllegalActionError) as caught:
        state.apply(play(4, "3-5"))
    assert caught.value.code == "wrong_opening_tile"
    events = state.apply(play(4, "4-4"))
    assert events == [Placed(4, play(4, "4-4").tile, None, (4, 4), mappakuling=False)]


def test_start_leader_opens_the_first_round_with_any_tile_D11() -> None:
    state = new_round(*ORDERED_HANDS, start={"leader": 1})
    assert state.to_act == 1
    assert state.legal_actions() == [play(1, t) for t in ORDERED_HANDS[1].split()]


def test_camat_from_start_leads_with_any_tile_D11() -> None:
    start = {"table": 20, "stones": [1, 1, 1, 1, 1], "camat": 2, "leader": None}
    state = new_round(*ORDERED_HANDS, start=start)
    assert (state.to_act, state.camat) == (2, 2)
    assert state.legal_actions() == [play(2, t) for t in ORDERED_HANDS[2].split()]


def test_opening_tile_is_laid_as_written() -> None:
    state = new_round(*ORDERED_HANDS, start={"leader": 4})
    run(state, play(4, "6-3"))
    assert state.ends == (6, 3)
    run(state, play(0, "0-3", "R"))
    assert state.ends == (6, 0)


# -- D13, D14, D15: placing and going out ----------------------------------------------------------

BOTH_ENDS = ["0-0 0-1", "3-5 1-1", "2-2 2-4", "1-2 0-2", "1-4 4-4"]


def test_tile_fitting_both_ends_differently_needs_an_end_D13() -> None:
    state = position(BOTH_ENDS, (3, 5), to_act=1, last_mappano=0)
    with pytest.raises(IllegalActionError) as caught:
        state.apply(play(1, "3-5"))
    assert caught.value.code == "end_required"
    run(state, play(1, "3-5", "R"))
    assert state.ends == (3, 3)


def test_tile_on_equal_ends_may_omit_the_end_D13() -> None:
    state = position(BOTH_ENDS, (3, 3), to_act=1, last_mappano=0)
    assert state.legal_actions() == [play(1, "3-5", "L")]
    events = run(state, play(1, "3-5"))
    assert events == [Placed(1, play(1, "3-5").tile, "L", (5, 3), mappakuling=False)]


def test_tile_fitting_one_end_goes_there_without_naming_it_D13() -> None:
    state = position(BOTH_ENDS, (6, 5), to_act=1, last_mappano=0)
    events = run(state, play(1, "3-5"))
    assert events == [Placed(1, play(1, "3-5").tile, "R", (6, 3), mappakuling=False)]


def test_opening_lempa_is_never_mappakuling_D14() -> None:
    state = new_round(*ORDERED_HANDS)
    [placed] = run(state, play(4, "4-4"))
    assert isinstance(placed, Placed)
    assert (placed.ends, placed.mappakuling) == ((4, 4), False)


@pytest.mark.parametrize(
    ("ends", "after", "mappakuling"),
    [((4, 4), (4, 4), True), ((4, 2), (4, 2), False), ((2, 4), (2, 4), False)],
)
def test_lempa_is_mappakuling_only_when_both_ends_show_its_number_D14(
    ends: tuple[int, int], after: tuple[int, int], mappakuling: bool
) -> None:
    state = position(["0-0", "4-4 1-1", "0-1", "0-2", "1-2"], ends, to_act=1, last_mappano=0)
    [placed] = run(state, play(1, "4-4"))
    assert isinstance(placed, Placed)
    assert (placed.ends, placed.mappakuling) == (after, mappakuling)


@pytest.mark.parametrize(
    ("ends", "tile", "end", "termination", "owed"),
    [
        ((4, 2), "4-4", "L", Termination.OUT, 1),  # a lempa that leaves [4|2] is a plain out
        ((4, 4), "4-4", "L", Termination.POLLO, 5),
        ((4, 2), "2-4", "L", Termination.CEKI, 3),  # 2-4 on the 4 end: [2|2]
        ((4, 2), "2-4", "R", Termination.CEKI, 3),  # 2-4 on the 2 end: [4|4]
        ((4, 1), "1-3", "R", Termination.OUT, 1),
    ],
)
def test_last_placement_decides_the_kind_of_out_D15(
    ends: tuple[int, int], tile: str, end: str, termination: Termination, owed: int
) -> None:
    state = position(
        ["0-0", "1-1", "0-2", "3-3", tile], ends, to_act=4, last_mappano=3, table=20, stones=[1, 1, 1, 1, 1]
    )
    run(state, play(4, tile, "L" if end == "L" else "R"))
    result = outcome(state)
    assert (result.end, result.winner, result.cucuq) == (termination, 4, 3)
    assert result.settlement == Settlement(Reason(termination.value), 3, owed, owed, ((4, 0),), 0)
    assert (result.table, result.stones) == (20 - owed, (1, 1, 1, 1 + owed, 1))


# -- D16-D18: camat -----------------------------------------------------------------------------------


def test_first_cappu_holding_stones_on_an_empty_table_is_not_camat_D17() -> None:
    """The table is empty, but P4 still holds stones after paying: nobody is elected."""
    state = position(
        ["0-0", "1-1", "2-2", "3-3", "1-3"],
        (3, 5),
        to_act=4,
        last_mappano=3,
        table=0,
        stones=[5, 5, 5, 7, 3],
    )
    run(state, play(4, "1-3"))
    result = outcome(state)
    assert (result.end, result.winner) == (Termination.OUT, 4)
    assert result.settlement == Settlement(Reason.OUT, 3, 1, 0, ((4, 1),), 0)
    assert (result.table, result.stones) == (0, (5, 5, 5, 8, 2))
    assert (result.camat_elected, result.camat, state.camat) == (False, None, None)
    assert state.phase is Phase.READY  # an empty table alone ends nothing


def test_first_cappu_without_stones_is_not_camat_while_the_table_has_stones_D16() -> None:
    state = position(
        ["0-0", "1-1", "2-2", "3-3", "1-3"],
        (3, 5),
        to_act=4,
        last_mappano=3,
        table=5,
        stones=[5, 5, 5, 5, 0],
    )
    run(state, play(4, "1-3"))
    result = outcome(state)
    assert (result.table, result.stones) == (4, (5, 5, 5, 6, 0))
    assert (result.camat_elected, result.camat) == (False, None)


def test_winning_mattikkeng_is_never_camat_D18() -> None:
    """Block: P2 (0 pips) wins and ends with no stones on an empty table, but only a first cappu
    can become camat."""
    state = position(
        ["0-3 1-4", "5-5 1-2", "0-0", "3-4", "1-3"],
        (5, 6),
        to_act=1,
        last_mappano=0,
        table=0,
        stones=[5, 5, 0, 5, 10],
    )
    run(state, play(1, "5-5"), Pass(2), Pass(3), Pass(4), Pass(0))
    result = outcome(state)
    assert (result.end, result.winner, result.mattikkeng) == (Termination.BLOCK, 2, (2,))
    assert result.settlement == Settlement(Reason.MATTIKKENG, 1, 5, 0, ((2, 1),), 4)
    assert (result.table, result.stones) == (0, (6, 2, 0, 6, 11))
    assert (result.camat_elected, result.camat) == (False, None)


def test_camat_keeps_leading_until_the_next_camat_D16() -> None:
    state = position(
        ["0-0", "1-1", "2-2", "3-3", "1-3"],
        (3, 5),
        to_act=4,
        last_mappano=3,
        table=10,
        stones=[3, 3, 3, 3, 3],
        camat=2,
    )
    run(state, play(4, "1-3"))
    result = outcome(state)
    assert (result.winner, result.camat, result.next_leader) == (4, 2, 2)
    state.start_round(deal(*ORDERED_HANDS))
    assert state.to_act == 2


def test_new_camat_replaces_the_old_one_and_resets_the_stones_D16_D17() -> None:
    state = position(
        ["0-0", "1-1", "2-2", "3-3", "1-3"],
        (3, 5),
        to_act=4,
        last_mappano=3,
        table=1,
        stones=[6, 6, 6, 6, 0],
        camat=2,
        rules=domeng(camat_target=0),
    )
    run(state, play(4, "1-3"))
    result = outcome(state)
    assert result.settlement == Settlement(Reason.OUT, 3, 1, 1, ((4, 0),), 0)
    assert (result.camat_elected, result.camat, result.next_leader) == (True, 4, 4)
    assert (result.table, result.stones) == (25, (0, 0, 0, 0, 0))
    assert (state.phase, state.elections) == (Phase.READY, [0, 0, 0, 0, 1])
    state.start_round(deal(*ORDERED_HANDS))
    assert state.legal_actions() == [play(4, t) for t in ORDERED_HANDS[4].split()]


# -- match end (camat_target) -------------------------------------------------------------------------


def _pollo_into_camat(camat_target: int) -> DomengOutcome:
    """RULES.md example 4 under ``camat_target``; returns its outcome."""
    state = position(
        ["0-0", "1-1", "2-2", "3-3 0-1", "4-4"],
        (4, 4),
        to_act=4,
        last_mappano=3,
        table=2,
        stones=[5, 7, 4, 6, 1],
        rules=domeng(camat_target=camat_target),
    )
    run(state, play(4, "4-4"))
    return outcome(state)


def test_match_ends_at_the_first_camat_by_default() -> None:
    state = position(
        ["0-0", "1-1", "2-2", "3-3 0-1", "4-4"],
        (4, 4),
        to_act=4,
        last_mappano=3,
        table=2,
        stones=[5, 7, 4, 6, 1],
    )
    run(state, play(4, "4-4"))
    assert (outcome(state).match_over, state.phase) == (True, Phase.OVER)
    with pytest.raises(IllegalActionError) as caught:
        state.start_round(deal(*ORDERED_HANDS))
    assert caught.value.code == "match_over"


def test_camat_target_zero_never_ends_the_match() -> None:
    assert _pollo_into_camat(0).match_over is False
    assert _pollo_into_camat(1).match_over is True
    assert _pollo_into_camat(2).match_over is False


@pytest.mark.parametrize("camat_target", [1, 2, 3])
def test_match_ends_at_exactly_camat_target_elections(camat_target: int) -> None:
    rules = domeng(camat_target=camat_target)
    rng = random.Random(f"camat-target-{camat_target}")
    bots = [make_bot("greedy" if seat % 2 else "random", random.Random(seat)) for seat in range(5)]
    state = rules.new_match()
    outcomes: list[DomengOutcome] = []
    while state.phase is not Phase.OVER:
        assert len(outcomes) < 1_000, "the match should have ended"
        state.start_round(rules.deal(rng))
        play_round(state, bots)
        outcomes.append(outcome(state))
    elections = [o for o in outcomes if o.camat_elected]
    assert len(elections) == camat_target == sum(state.elections)
    assert outcomes[-1].camat_elected and outcomes[-1].match_over
    assert not any(o.match_over for o in outcomes[:-1])


def test_unlimited_match_plays_on_through_many_elections() -> None:
    rules = domeng(camat_target=0)
    rng = random.Random("no-limit")
    bots = [make_bot("random", random.Random(seat)) for seat in range(5)]
    state = rules.new_match()
    for _ in range(150):
        state.start_round(rules.deal(rng))
        play_round(state, bots)
        assert state.phase is Phase.READY
        assert outcome(state).match_over is False
    assert sum(state.elections) >= 3
