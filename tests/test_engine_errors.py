"""Every `IllegalActionError` the Domeng engine raises: its code, a message that quotes the action
and the position, and a state left exactly as it was."""

from __future__ import annotations

import pickle

import pytest

from engine.actions import Action, Draw, Pass, Play, PlayLempas
from engine.core import State
from engine.errors import EngineError, IllegalActionError, InvalidActionError, RecordError
from engine.rules.domeng import DomengState
from tests.conftest import (
    ORDERED_HANDS,
    PASSEBUNGE_HANDS,
    deal,
    domeng,
    fingerprint,
    new_round,
    play,
    position,
    run,
    tiles,
)


def rejects(state: State, action: Action, code: str) -> IllegalActionError:
    """Assert that ``state`` refuses ``action`` with ``code``, naming the position, and is unchanged."""
    before = fingerprint(state)
    where = state.position()
    with pytest.raises(IllegalActionError) as caught:
        state.apply(action)
    error = caught.value
    assert error.code == code
    assert where in error.message
    assert fingerprint(state) == before
    return error


def mid_round() -> DomengState:
    """P1 to act on [3|5] holding 3-5 (fits both ends) and 1-1 (fits neither)."""
    return position(["0-0 0-1", "3-5 1-1", "2-2 2-4", "1-2 0-2", "1-4 4-4"], (3, 5), to_act=1, last_mappano=0)


def test_wrong_seat() -> None:
    state = mid_round()
    error = rejects(state, Pass(2), "wrong_seat")
    assert error.message.startswith("P2 passes: it is P1's turn")


def test_tile_not_in_hand() -> None:
    state = mid_round()
    error = rejects(state, play(1, "0-3"), "tile_not_in_hand")
    assert str(play(1, "0-3")) in error.message  # "P1 plays 0-3"


def test_does_not_fit_anywhere() -> None:
    state = mid_round()
    error = rejects(state, play(1, "1-1"), "does_not_fit")
    assert error.message.startswith("P1 plays 1-1: does not fit anywhere")


def test_does_not_fit_on_the_end_named() -> None:
    state = position(["0-0", "1-5 1-1", "2-2", "0-2", "1-4"], (3, 5), to_act=1, last_mappano=0)
    error = rejects(state, play(1, "1-5", "L"), "does_not_fit")
    assert error.message.startswith("P1 plays 1-5 on L: does not fit on L")


def test_end_required_D13() -> None:
    state = mid_round()
    error = rejects(state, play(1, "3-5"), "end_required")
    assert str(play(1, "3-5")) in error.message


def test_voluntary_pass_mid_round_D12() -> None:
    state = mid_round()
    error = rejects(state, Pass(1), "voluntary_pass")
    assert str(Pass(1)) in error.message  # "P1 passes"


def test_voluntary_pass_at_the_opening_D12() -> None:
    state = new_round(*PASSEBUNGE_HANDS)  # P0 leads with 6-6
    error = rejects(state, Pass(0), "voluntary_pass")
    assert str(Pass(0)) in error.message


def test_voluntary_pass_at_the_opening_by_a_leader_without_5_or_6_D12() -> None:
    """Engine bug: the opening pass is checked against the ends [5|6] (``_FIT_MASKS[-8]``), so a
    leader holding no 5 and no 6 gets past the check and trips an ``assert`` (AssertionError)."""
    state = new_round(
        "4-4 0-1 0-2 0-3 1-2",  # P0: the highest lempa dealt, and no 5 and no 6
        "0-5 0-6 1-5 1-6 2-5",
        "1-1 0-4 1-3 1-4 2-2",
        "2-3 2-4 2-6 3-3 3-6",
        "0-0 3-4 3-5 4-5 4-6",
    )  # 5-5, 5-6 and 6-6 are unused
    assert (state.to_act, state.legal_actions()) == (0, [play(0, "4-4")])
    error = rejects(state, Pass(0), "voluntary_pass")
    assert str(Pass(0)) in error.message


def test_wrong_opening_tile_D11() -> None:
    state = new_round(*ORDERED_HANDS)  # P4 must open with 4-4
    error = rejects(state, play(4, "3-5"), "wrong_opening_tile")
    assert error.message.startswith("P4 plays 3-5: this round must open with 4-4")


def test_round_over_before_any_deal() -> None:
    state = domeng().new_match()
    error = rejects(state, play(0, "0-0"), "round_over")
    assert str(play(0, "0-0")) in error.message


def test_round_over_after_the_round_ended() -> None:
    state = position(
        ["0-0", "1-1", "2-2", "3-3", "1-3"],
        (3, 5),
        to_act=4,
        last_mappano=3,
        table=10,
        stones=[3, 3, 3, 3, 3],
    )
    run(state, play(4, "1-3"))
    error = rejects(state, Pass(0), "round_over")
    assert str(Pass(0)) in error.message


def test_round_over_when_dealing_during_a_round() -> None:
    state = new_round(*ORDERED_HANDS)
    before = fingerprint(state)
    with pytest.raises(IllegalActionError) as caught:
        state.start_round(deal(*PASSEBUNGE_HANDS))
    assert caught.value.code == "round_over"
    assert fingerprint(state) == before


def test_match_over() -> None:
    state = position(
        ["0-0", "1-1", "2-2", "3-3 0-1", "4-4"],
        (4, 4),
        to_act=4,
        last_mappano=3,
        table=2,
        stones=[5, 7, 4, 6, 1],
    )
    run(state, play(4, "4-4"))  # pollo into camat: the match ends (camat_target 1)
    error = rejects(state, play(4, "0-1"), "match_over")
    assert str(play(4, "0-1")) in error.message
    with pytest.raises(IllegalActionError) as caught:
        state.start_round(deal(*ORDERED_HANDS))
    assert caught.value.code == "match_over"


def test_draw_not_allowed_in_domeng() -> None:
    state = mid_round()
    error = rejects(state, Draw(1), "draw_not_allowed")
    assert str(Draw(1)) in error.message  # "P1 draws"


def test_not_two_lempas_in_domeng() -> None:
    state = mid_round()
    action = PlayLempas(1, (tiles("1-1")[0], tiles("3-3")[0]))
    error = rejects(state, action, "not_two_lempas")
    assert str(action) in error.message  # "P1 plays 1-1 and 3-3"


def test_seat_is_checked_before_the_move() -> None:
    state = mid_round()
    rejects(state, Draw(3), "wrong_seat")
    rejects(state, Play(0, tiles("0-0")[0]), "wrong_seat")


def test_every_engine_error_crosses_a_process_boundary_whole() -> None:
    """A worker process's error reaches the server as the same error (pickled with its fields):
    an error that fails to unpickle would break the whole process pool."""
    for error in (
        EngineError("invalid_start", "no match reaches this score"),
        IllegalActionError("not_your_turn", "P2 plays 3-4 on L: it is P1's turn"),
        InvalidActionError("invalid_tile", "'7-7' is not a tile"),
        RecordError("unfinished_round", "a round is reviewed only after it has ended", 3, None),
    ):
        back = pickle.loads(pickle.dumps(error))
        assert type(back) is type(error)
        assert (back.code, back.message, str(back)) == (error.code, error.message, str(error))
        if isinstance(error, RecordError):
            assert isinstance(back, RecordError) and (back.round, back.action) == (error.round, error.action)
