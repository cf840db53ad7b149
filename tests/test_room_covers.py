"""The covers a move leaves on the seats (`app.rooms.commits`): computed for the move's
transaction without touching the seats, they must be what the room adopts once it is stored
(`Commits.after_move` after `SeatInfo.release` of a seat whose person is back), for every mark a
seat can carry, on a turn that stays or moves on, at a round's end and at the match's."""

from __future__ import annotations

import itertools
import random
from dataclasses import replace

import pytest

from app.rooms.commits import _after_move, _cover_after
from app.rooms.seats import SeatInfo
from engine.core import Phase, State
from engine.variants import make_rules


def _states() -> list[State]:
    """A Domeng round in play (seat ``to_act`` on turn) and one just ended."""
    rules = make_rules("domeng")
    state = rules.new_match()
    state.start_round(rules.deal_from_seed("covers"))
    playing = state.fork()
    choice = random.Random(3)
    while state.phase is Phase.PLAYING:
        state.apply(choice.choice(state.legal_actions()))
    return [playing, state]


def _marks() -> list[SeatInfo]:
    return [
        SeatInfo(seat, kind, covered=covered, stand_in=stand_in, timeouts=timeouts)  # type: ignore[arg-type]
        for seat, kind, covered, stand_in, timeouts in itertools.product(
            range(5), ("human", "bot"), (False, True), (False, True), (0, 1, 2)
        )
    ]


@pytest.mark.parametrize("finished", [False, True])
def test_a_moves_covers_are_those_the_room_adopts_after_it(finished: bool) -> None:
    states = _states()
    assert states[0].phase is Phase.PLAYING and states[1].phase is not Phase.PLAYING
    checked = 0
    for state, info, back in itertools.product(states, _marks(), (False, True)):
        adopted = replace(info)
        if back:
            adopted.release()
        _after_move([adopted], state, finished)
        assert _cover_after(info, state, finished, back) == adopted.cover, (info, state.phase, back)
        checked += 1
    # both states, every seat's marks, back or not
    assert checked == 2 * 5 * 2 * 2 * 2 * 3 * 2
