"""`engine.views.shared_view_json` gives the very JSON bytes of the view's shared part (issue 15).

The server builds the shared part of every update straight from the state (`shared_view_json`) and
joins it to each recipient's `private_view_json` as bytes (`app.rooms.frames.send_updates`); what
it sends must be what ``player_view(state, seat).to_json()`` says, key order included, in every
variant, phase and round of random matches (Domeng's camat and stones, Kozel's points, pairs'
sides, the round-end reveal, a match over).
"""

from __future__ import annotations

import random

import orjson
import pytest

from engine.core import Phase, State
from engine.rules.base import Rules
from engine.variants import make_rules
from engine.views import PRIVATE_KEYS, player_view, private_view_json, shared_view_json

RULES: tuple[tuple[str, dict[str, object], int | None], ...] = (
    ("domeng", {}, None),
    ("domeng", {"camat_target": 2}, None),
    ("kozel", {}, 2),
    ("kozel", {}, 3),
    ("kozel", {}, 4),
    ("kozel", {"pairs": True}, 4),
    ("kozel", {"two_lempas": False}, 4),
)


def _states(rules: Rules, rng: random.Random, count: int) -> list[State]:
    """``count`` states of random play, matches one after another: new matches, rounds being
    played, rounds just ended (their reveal) and matches over among them."""
    states: list[State] = []
    state = rules.new_match()
    states.append(state.fork())
    while len(states) < count:
        if state.phase is Phase.OVER:
            state = rules.new_match()
        elif state.phase is not Phase.PLAYING:
            state.start_round(rules.deal(rng))
        else:
            state.apply(rng.choice(state.legal_actions()))
        states.append(state.fork())
    return states


def _reference(state: State) -> bytes:
    """The shared part as the whole view gives it: ``player_view(...).to_json()`` less the
    recipient's keys and the log."""
    view = player_view(state, None).to_json(log=False)
    for key in PRIVATE_KEYS:
        del view[key]
    return orjson.dumps(view)


@pytest.mark.parametrize(("variant", "options", "seats"), RULES)
def test_shared_view_json_is_the_views_bytes(
    variant: str, options: dict[str, object], seats: int | None
) -> None:
    rng = random.Random(f"{variant}{options}{seats}")
    rules = make_rules(variant, options, seats)
    phases: set[Phase] = set()
    for state in _states(rules, rng, 1500):
        phases.add(state.phase)
        assert orjson.dumps(shared_view_json(state)) == _reference(state), state.position()
    assert {Phase.PLAYING, Phase.OVER} <= phases


def test_an_update_frame_is_the_whole_view() -> None:
    """The private part joined to the shared one, as `send_updates` joins their bytes, is every
    recipient's whole view (without its log), key for key."""
    rng = random.Random(15)
    rules = make_rules("domeng", {}, None)
    for state in _states(rules, rng, 400)[::7]:
        shared = b"," + orjson.dumps(shared_view_json(state))[1:]
        for seat in (*range(state.seats), None):
            joined = orjson.loads(orjson.dumps(private_view_json(state, seat))[:-1] + shared)
            assert joined == player_view(state, seat).to_json(log=False)
