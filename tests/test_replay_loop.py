"""The one replay loop (`engine.replay.replay_rounds`) against recorded bot matches of both games."""

from __future__ import annotations

import json
from functools import cache

import pytest

from engine.core import Phase, State
from engine.deal_json import deal_to_json
from engine.errors import RecordError
from engine.record import RecordRound, build_record, read_record, write_record
from engine.replay import replay_rounds
from engine.rules.base import Rules
from engine.simulate import Simulation
from tests.conftest import domeng
from tests.kozelkit import kozel


@cache
def recorded_matches(variant: str) -> tuple[State, ...]:
    """Bot matches of ``variant``, the last one cut short in the middle of nowhere in particular."""
    rules: Rules = domeng(camat_target=1) if variant == "domeng" else kozel(4, pairs=True)
    matches: list[State] = []
    simulation = Simulation(rules, ["random", "greedy"], seed=f"replay-{variant}", on_match=matches.append)
    simulation.run(40)
    simulation.finish()
    return tuple(matches)


def stored_rounds(state: State) -> list[tuple[dict[str, object], list[dict[str, object]]]]:
    """``state``'s rounds as a server stores them: deal JSON under ``rest``, action JSON."""
    logs = list(state.history)
    if state.phase is Phase.PLAYING:
        current = state.round_log()
        assert current is not None
        logs.append(current)
    return [(deal_to_json(log.deal), [a.to_json() for a in log.actions]) for log in logs]


@pytest.mark.parametrize("variant", ["domeng", "kozel"])
def test_replaying_stored_rounds_rebuilds_every_recorded_match(variant: str) -> None:
    matches = recorded_matches(variant)
    assert any(m.phase is Phase.OVER for m in matches)
    for original in matches:
        rounds = stored_rounds(original)
        state = original.rules.new_match()
        steps = list(replay_rounds(state, rounds))
        assert len(steps) == sum(1 + len(actions) for _, actions in rounds)
        assert [s.round for s in steps if s.action is None] == list(range(len(rounds)))
        seats = [f"P{i}" for i in range(state.seats)]
        assert write_record(state, seats) == write_record(original, seats)
        assert (state.phase, state.score(), state.outcome) == (
            original.phase,
            original.score(),
            original.outcome,
        )


def test_each_step_shows_the_state_after_its_action() -> None:
    original = recorded_matches("kozel")[0]
    deal, actions = stored_rounds(original)[0]
    state = original.rules.new_match()
    seen = []
    for step in replay_rounds(state, [(deal, actions)]):
        seen.append(len(state.actions))
        if step.action is not None:
            assert step.played is not None and step.played.to_json() == actions[step.action]
            assert step.events and list(step.events) == state.log[-len(step.events) :]
    assert seen == list(range(len(actions) + 1))


def test_a_record_reads_through_the_same_loop() -> None:
    for original in recorded_matches("domeng") + recorded_matches("kozel"):
        seats = [f"P{i}" for i in range(original.seats)]
        doc = json.loads(json.dumps(write_record(original, seats)))
        assert read_record(doc).state.score() == original.score()


def test_a_round_after_the_match_is_over_is_refused_with_its_index() -> None:
    over = next(m for m in recorded_matches("kozel") if m.phase is Phase.OVER)
    rounds = stored_rounds(over)
    with pytest.raises(RecordError) as caught:
        for _ in replay_rounds(over.rules.new_match(), [*rounds, rounds[0]]):
            pass
    assert (caught.value.code, caught.value.round, caught.value.action) == ("match_over", len(rounds), None)


def test_an_illegal_stored_action_is_refused_with_its_round_and_index() -> None:
    original = recorded_matches("domeng")[0]
    deal, actions = stored_rounds(original)[0]
    broken = [*actions[:3], actions[2]]  # the same seat acts twice
    with pytest.raises(RecordError) as caught:
        for _ in replay_rounds(original.rules.new_match(), [(deal, broken)]):
            pass
    assert (caught.value.round, caught.value.action) == (0, 3)
    assert caught.value.code in {"wrong_seat", "tile_not_in_hand"}


def test_one_writer_makes_a_stored_match_into_a_record_with_seeds_byte_for_byte() -> None:
    """What a server exports: the store's deal JSON and actions, each round's seed and commitment."""
    original = recorded_matches("kozel")[0]
    rounds = [
        RecordRound(deal, actions, seed=f"seed{i}", commitment=f"c{i}")
        for i, (deal, actions) in enumerate(stored_rounds(original))
    ]
    doc = build_record(original.rules, ["A", "B", "C", "D"], rounds)
    expected = write_record(original, ["A", "B", "C", "D"])
    for index, stored in enumerate(expected["rounds"]):
        stored |= {"seed": f"seed{index}", "commitment": f"c{index}"}
    assert json.dumps(doc, indent=1) == json.dumps(expected, indent=1)
    assert list(doc["rounds"][0]) == ["hands", "bazaar", "actions", "seed", "commitment"]
