"""RULES.md's Domeng worked examples 1-7, played move by move with exact stones and outcomes."""

from __future__ import annotations

from engine.actions import Pass
from engine.core import Phase
from engine.events import Passed, Placed, Reason, Settlement, Termination
from tests.conftest import (
    ORDERED_HANDS,
    PASSEBUNGE_HANDS,
    PASSEBUNGE_PLAY,
    PASSEBUNGE_UNUSED,
    deal,
    domeng,
    outcome,
    play,
    position,
    run,
    tiles,
)


def test_example_1_ceki_pays_the_cucuq_who_passed_D2_D4() -> None:
    """Ends [3|5]; P2 plays 5-1, P3 passes (1 stone), P4 goes out with 1-3 on the 1 end: ceki."""
    state = position(["0-0 0-1", "0-2 0-4", "5-1 6-6", "4-4 2-6", "1-3"], (3, 5), to_act=2, last_mappano=1)

    placed = run(state, play(2, "5-1", "R"))
    assert placed == [Placed(2, tiles("1-5")[0], "R", (3, 1), mappakuling=False)]

    passed = run(state, Pass(3))
    assert passed == [Passed(3, passebunge=False, settlement=Settlement(Reason.PASS, 3, 1, 1, ((2, 0),), 0))]
    assert (state.table, state.stones) == (24, [0, 0, 0, 1, 0])

    run(state, play(4, "1-3", "R"))
    assert state.ends == (3, 3)
    result = outcome(state)
    assert result.end is Termination.CEKI
    assert (result.winner, result.first_cappu, result.cucuq) == (4, 4, 3)
    assert (result.manguno, result.mattikkeng) == (None, ())
    assert result.settlement == Settlement(
        Reason.CEKI, receiver=3, owed=3, from_table=3, from_payers=((4, 0),), cancelled=0
    )
    assert (result.table, result.stones) == (21, (0, 0, 0, 4, 0))
    assert (state.table, state.stones) == (21, [0, 0, 0, 4, 0])
    assert (result.camat_elected, result.camat) == (False, None)
    assert result.next_leader == 4


def test_example_1_winner_leads_the_next_round_with_any_tile_D11() -> None:
    state = position(["0-0 0-1", "0-2 0-4", "5-1 6-6", "4-4 2-6", "1-3"], (3, 5), to_act=2, last_mappano=1)
    run(state, play(2, "5-1", "R"), Pass(3), play(4, "1-3", "R"))
    assert state.phase is Phase.READY

    state.start_round(deal(*ORDERED_HANDS))
    assert state.to_act == 4
    # P4 holds 4-4, but only a match's first round must open with a lempa.
    assert state.legal_actions() == [play(4, t) for t in ORDERED_HANDS[4].split()]


def test_example_2_every_passebunge_costs_two_then_a_pass_costs_one_D3_D4() -> None:
    """Match start, T=25: P0 leads 6-6; P1 passes twice before placing (2 + 2), then once after (1)."""
    state = domeng().new_match()
    state.start_round(deal(*PASSEBUNGE_HANDS, unused=PASSEBUNGE_UNUSED))
    assert state.legal_actions() == [play(0, "6-6")]

    first_pass = run(state, *PASSEBUNGE_PLAY[:2])[-1]
    assert first_pass == Passed(
        1, passebunge=True, settlement=Settlement(Reason.PASSEBUNGE, 1, 2, 2, ((0, 0),), 0)
    )
    assert (state.table, state.stones) == (23, [0, 2, 0, 0, 0])

    second_pass = run(state, *PASSEBUNGE_PLAY[2:7])[-1]
    assert state.ends == (5, 4)
    assert second_pass == Passed(
        1, passebunge=True, settlement=Settlement(Reason.PASSEBUNGE, 1, 2, 2, ((0, 0),), 0)
    )
    assert (state.table, state.stones) == (21, [0, 4, 0, 0, 0])

    run(state, *PASSEBUNGE_PLAY[7:12])
    assert state.has_placed(1)
    events = run(state, *PASSEBUNGE_PLAY[12:])
    assert state.ends == (6, 5)
    assert events[-2:] == [
        Passed(0, passebunge=False, settlement=Settlement(Reason.PASS, 0, 1, 1, ((4, 0),), 0)),
        Passed(1, passebunge=False, settlement=Settlement(Reason.PASS, 1, 1, 1, ((4, 0),), 0)),
    ]
    assert (state.table, state.stones) == (19, [1, 5, 0, 0, 0])
    assert state.phase is Phase.PLAYING


def test_example_3_shortfall_is_paid_by_the_last_mappano_D5() -> None:
    """T=1, S(P2)=3, P2 just placed: P3's pass empties the table, P4's pass is paid by P2."""
    state = position(
        ["0-6 1-1", "2-2 3-3", "0-1 1-2", "0-0 1-3", "2-3 4-5"],
        (6, 6),
        to_act=3,
        last_mappano=2,
        table=1,
        stones=[10, 11, 3, 0, 0],
    )
    events = run(state, Pass(3), Pass(4))
    assert events == [
        Passed(
            3, settlement=Settlement(Reason.PASS, 3, owed=1, from_table=1, from_payers=((2, 0),), cancelled=0)
        ),
        Passed(
            4, settlement=Settlement(Reason.PASS, 4, owed=1, from_table=0, from_payers=((2, 1),), cancelled=0)
        ),
    ]
    assert (state.table, state.stones) == (0, [10, 11, 2, 1, 1])
    assert state.to_act == 0


def test_what_nobody_can_pay_is_cancelled_D5() -> None:
    state = position(
        ["0-6 1-1", "2-2 3-3", "0-1 1-2", "0-0 1-3", "2-3 4-5"],
        (6, 6),
        to_act=3,
        last_mappano=2,
        table=0,
        stones=[12, 13, 0, 0, 0],
    )
    assert run(state, Pass(3)) == [
        Passed(
            3, settlement=Settlement(Reason.PASS, 3, owed=1, from_table=0, from_payers=((2, 0),), cancelled=1)
        )
    ]
    assert (state.table, state.stones) == (0, [12, 13, 0, 0, 0])


def test_example_4_pollo_into_camat_D16_D17() -> None:
    """T=2, S(P4)=1, ends [4|4]: P4's last tile 4-4 is pollo; P3 is owed 5 and gets 3."""
    state = position(
        ["0-0", "1-1", "2-2", "3-3 0-1", "4-4"],
        (4, 4),
        to_act=4,
        last_mappano=3,
        table=2,
        stones=[5, 7, 4, 6, 1],
    )
    events = run(state, play(4, "4-4"))
    assert events[0] == Placed(4, tiles("4-4")[0], "L", (4, 4), mappakuling=True)
    result = outcome(state)
    assert result.end is Termination.POLLO
    assert (result.winner, result.cucuq, result.manguno, result.mattikkeng) == (4, 3, None, ())
    assert result.settlement == Settlement(
        Reason.POLLO, receiver=3, owed=5, from_table=2, from_payers=((4, 1),), cancelled=2
    )
    assert (result.camat_elected, result.camat) == (True, 4)
    assert (result.table, result.stones) == (25, (0, 0, 0, 0, 0))
    assert (state.table, state.stones, state.camat, state.elections) == (25, [0] * 5, 4, [0, 0, 0, 0, 1])
    assert result.next_leader == 4


def test_example_5_block_with_three_mattikkeng_D7_D8() -> None:
    """T=10: P1 makes [2|2]; P2, P3, P4, P0 pass (1 each); P1 (12) is manguno; P2 wins."""
    state = position(
        ["3-3 1-5", "2-5 6-6", "4-5 1-1", "3-6 4-4", "5-6"],
        (2, 5),
        to_act=1,
        last_mappano=0,
        table=10,
        stones=[3, 3, 3, 3, 3],
    )
    events = run(state, play(1, "2-5", "R"), Pass(2), Pass(3), Pass(4), Pass(0))
    passes = [e for e in events if isinstance(e, Passed)]
    assert [(p.seat, p.settlement) for p in passes] == [
        (seat, Settlement(Reason.PASS, seat, 1, 1, ((1, 0),), 0)) for seat in (2, 3, 4, 0)
    ]
    result = outcome(state)
    assert state.legal_actions() == []
    assert result.end is Termination.BLOCK
    assert (result.manguno, result.mattikkeng, result.winner) == (1, (2, 4, 0), 2)
    assert (result.cucuq, result.first_cappu) == (None, None)
    assert result.pip_sums == (12, 12, 11, 17, 11)
    assert result.settlement == Settlement(
        Reason.MATTIKKENG_SHARED,
        receiver=1,
        owed=1,
        from_table=1,
        from_payers=((2, 0), (4, 0), (0, 0)),
        cancelled=0,
    )
    assert (result.table, result.stones) == (5, (4, 4, 4, 4, 4))
    assert (result.camat_elected, result.camat, result.next_leader) == (False, None, 2)


def test_example_6_one_mattikkeng_with_an_equal_sum_pays_one_D8() -> None:
    """Manguno P1 (12); only P4 also has 12 -> award(P1, 1, P4); P4 wins. T=0: payers pay."""
    state = position(
        ["3-3 1-5 0-3", "2-5 6-6", "4-5 4-6", "3-6 4-4", "5-6 0-1"],
        (2, 5),
        to_act=1,
        last_mappano=0,
        table=0,
        stones=[5, 4, 5, 5, 6],
    )
    run(state, play(1, "2-5", "R"), Pass(2), Pass(3), Pass(4), Pass(0))
    result = outcome(state)
    assert result.pip_sums == (15, 12, 19, 17, 12)
    assert (result.end, result.manguno, result.mattikkeng, result.winner) == (Termination.BLOCK, 1, (4,), 4)
    assert result.cucuq is None
    assert result.settlement == Settlement(
        Reason.MATTIKKENG_SHARED, receiver=1, owed=1, from_table=0, from_payers=((4, 1),), cancelled=0
    )
    assert (result.table, result.stones) == (0, (6, 1, 6, 6, 6))
    assert (result.camat_elected, result.next_leader) == (False, 4)


def test_example_7_zero_sum_mattikkeng_pays_five_D8_D9() -> None:
    """Manguno P1 {1-2}=3, P2 {0-0}=0 (0-0 counts 0), others >= 4 -> award(P1, 5, P2)."""
    state = position(
        ["0-3 1-4", "5-5 1-2", "0-0", "3-4", "1-3"],
        (5, 6),
        to_act=1,
        last_mappano=0,
        table=6,
        stones=[4, 4, 4, 4, 3],
    )
    events = run(state, play(1, "5-5"), Pass(2), Pass(3), Pass(4), Pass(0))
    assert events[0] == Placed(1, tiles("5-5")[0], "L", (5, 6), mappakuling=False)
    result = outcome(state)
    assert result.pip_sums == (8, 3, 0, 7, 4)
    assert (result.end, result.manguno, result.mattikkeng, result.winner) == (Termination.BLOCK, 1, (2,), 2)
    assert result.cucuq is None
    assert result.settlement == Settlement(
        Reason.MATTIKKENG, receiver=1, owed=5, from_table=2, from_payers=((2, 3),), cancelled=0
    )
    assert (result.table, result.stones) == (0, (5, 9, 2, 5, 4))
    assert (result.camat_elected, result.camat, result.next_leader) == (False, None, 2)


def test_block_without_mattikkeng_pays_the_cucuq_and_the_manguno_wins_D7() -> None:
    """Manguno P1 holds 0-0 (0 pips): nobody is at or below it, so P0 (cucuq) gets 1 from P1."""
    state = position(
        ["1-1", "2-5 0-0", "4-5", "3-6", "5-6"],
        (2, 5),
        to_act=1,
        last_mappano=0,
        table=0,
        stones=[5, 5, 5, 5, 5],
    )
    run(state, play(1, "2-5", "R"), Pass(2), Pass(3), Pass(4), Pass(0))
    result = outcome(state)
    assert (result.end, result.manguno, result.mattikkeng) == (Termination.BLOCK, 1, ())
    assert (result.winner, result.cucuq, result.next_leader) == (1, 0, 1)
    assert result.settlement == Settlement(
        Reason.MANGUNO, receiver=0, owed=1, from_table=0, from_payers=((1, 1),), cancelled=0
    )
    # D18: the table is empty and the manguno holds nothing, yet a manguno never becomes camat.
    assert (result.table, result.stones) == (0, (7, 0, 6, 6, 6))
    assert (result.camat_elected, result.camat, state.camat) == (False, None, None)
