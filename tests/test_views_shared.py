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


def _room_updates(rules: Rules, rng: random.Random, count: int) -> list[State]:
    """``count`` updates of a room as the server makes them: each a fork of the state before
    (`app.rooms.moves`), one action applied or the next round dealt, its shared view made before
    the next fork (so each state starts with the memo of the one before)."""
    states: list[State] = []
    state = rules.new_match()
    while len(states) < count:
        if state.phase is Phase.OVER:
            state = rules.new_match()
        else:
            state = state.fork()
            if state.phase is Phase.PLAYING:
                state.apply(rng.choice(state.legal_actions()))
            else:
                state.start_round(rules.deal(rng))
        shared_view_json(state)
        states.append(state)
    return states


@pytest.mark.parametrize(("variant", "options", "seats"), RULES)
def test_the_memo_a_fork_carries_is_never_stale(
    variant: str, options: dict[str, object], seats: int | None
) -> None:
    """`shared_view_json` keeps what it made in ``state.view_memo`` and `State.fork` carries it:
    every update of a room (scores changed by passes, draws and round ends; new rounds, new
    matches) gives the view's bytes. So does a sibling fork that took another action, whichever
    memo it holds: its parent's, or the one made for the room's own update."""
    rng = random.Random(f"memo {variant}{options}{seats}")
    rules = make_rules(variant, options, seats)
    before = rules.new_match()
    shared_view_json(before)
    changed = 0
    for state in _room_updates(rules, rng, 1500):
        assert orjson.dumps(shared_view_json(state)) == _reference(state), state.position()
        if before.phase is Phase.PLAYING and state.round_index == before.round_index:
            for action in before.legal_actions()[:3]:
                for memo in (before.view_memo, state.view_memo):
                    sibling = before.fork()
                    sibling.apply(action)
                    sibling.view_memo = memo
                    assert orjson.dumps(shared_view_json(sibling)) == _reference(sibling), action
        changed += before.score() != state.score()
        before = state
    assert changed > 20  # scores changed along the way, so the memo had to be made again


def test_a_stop_and_a_resumed_round_are_not_served_from_the_memo() -> None:
    """The host's stop rewrites the last event and the outcome in place; `Rules.resume_round`
    puts a state between rounds (its memo made) into another round: the views follow both."""
    rng = random.Random(7)
    rules = make_rules("domeng", {"camat_target": 0}, None)
    ended = next(s for s in _room_updates(rules, rng, 400) if s.round_index > 1 and s.phase is Phase.READY)
    stopped = ended.fork()
    stopped.stop()
    assert orjson.dumps(shared_view_json(stopped)) == _reference(stopped)
    playing = next(s for s in _room_updates(rules, rng, 60) if s.phase is Phase.PLAYING and s.ends)
    resumed = ended.fork()
    rules.resume_round(resumed, player_view(playing, playing.to_act), playing.hands)
    assert orjson.dumps(shared_view_json(resumed)) == _reference(resumed)


def test_every_call_returns_lists_of_its_own() -> None:
    """Changing one result changes neither the memo nor the next result."""
    rng = random.Random(9)
    for rules in (make_rules("domeng"), make_rules("kozel", {"pairs": True}, 4)):
        state = next(s for s in _room_updates(rules, rng, 200) if s.round_index > 1 and s.ends)
        spoiled = shared_view_json(state)
        for value in spoiled.values():
            if isinstance(value, list):
                value.append(99)
                for item in value:
                    if isinstance(item, list):
                        item.append(99)
        assert orjson.dumps(shared_view_json(state)) == _reference(state)


def test_a_memo_made_under_other_rules_is_not_used() -> None:
    """Kozel with and without pairs: the same score, other sides and standings."""
    alone, paired = (
        make_rules("kozel", {}, 4).new_match(),
        make_rules("kozel", {"pairs": True}, 4).new_match(),
    )
    for state in (alone, paired):
        state.start_round(make_rules("kozel", {}, 4).deal(random.Random(3)))
    assert alone.score_key() == paired.score_key()
    shared_view_json(alone)
    paired.view_memo = alone.view_memo
    assert orjson.dumps(shared_view_json(paired)) == _reference(paired)
