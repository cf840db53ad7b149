"""The host's stop of a match without an end of its own (docs/rules.md, "Match end (room option)":
"play to N elections or until the host stops it"), in the engine and in records: `State.stop`
ends a no-limit Domeng match between rounds, never in one; a record says so with ``ended_by``
(docs/record.md) and ``domeng replay`` replays it as a finished match."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from engine.core import Phase, State
from engine.errors import IllegalActionError
from engine.events import RoundEnded
from engine.narration import describe_outcome
from engine.record import build_record, read_record, replay, write_record
from engine.rules.domeng import DomengState
from engine.variants import make_rules
from engine.views import player_view
from tests.conftest import (
    PASSEBUNGE_HANDS,
    PASSEBUNGE_PLAY,
    SEATS,
    deal,
    domeng,
    domeng_cli,
    finish_with_first_legal,
    run,
)


def no_limit_match(rounds: int) -> State:
    """A no-limit match (``camat_target`` 0) with ``rounds`` rounds played to their ends."""
    state = domeng(camat_target=0).new_match()
    for index in range(rounds):
        state.start_round(domeng().deal_from_seed(f"stop-{index}") if index else deal(*PASSEBUNGE_HANDS))
        if not index:
            run(state, *PASSEBUNGE_PLAY)
        finish_with_first_legal(state)
        assert state.phase is Phase.READY
    return state


def stopped_record(rounds: int = 3) -> dict[str, Any]:
    """A no-limit match's record as the server writes it once the host stopped it."""
    state = no_limit_match(rounds)
    doc = write_record(state, SEATS)
    doc["ended_by"] = "host"
    parsed: dict[str, Any] = json.loads(json.dumps(doc))
    return parsed


def test_only_a_no_limit_domeng_match_is_the_hosts_to_stop() -> None:
    assert domeng(camat_target=0).host_stops
    assert not domeng().host_stops and not domeng(camat_target=3).host_stops
    assert not make_rules("kozel", {}, 3).host_stops  # K9: the goat ends it


def test_stop_ends_the_match_between_rounds_with_its_standings() -> None:
    state = no_limit_match(2)
    assert isinstance(state, DomengState)
    standings, received = state.standings(), list(state.received)
    state.stop()
    assert state.phase is Phase.OVER
    assert state.standings() == standings and state.received == received  # nothing settles anew
    with pytest.raises(IllegalActionError) as raised:
        state.start_round(domeng().deal_from_seed("after"))
    assert raised.value.code == "match_over"
    with pytest.raises(IllegalActionError) as again:
        state.stop()
    assert again.value.code == "match_over"


def test_the_last_outcome_says_the_match_ended_with_it_once_stopped() -> None:
    state = no_limit_match(2)
    before = state.outcome
    assert before is not None and not before.match_over  # the match was going on
    parent = state.fork()
    state.stop()
    outcome = state.outcome
    assert outcome is not None and outcome.match_over
    assert outcome == replace(before, match_over=True)  # nothing else about the round changes
    assert state.history[-1].outcome == outcome and state.round_log() == state.history[-1]
    assert state.log[-1] == RoundEnded(outcome)  # the round's end among its events says so too
    for seat in (0, None):  # what every seat and a spectator see
        view = player_view(state, seat).to_json()
        assert view["match_over"] is True and view["outcome"]["match_over"] is True
    # a fork stopped leaves its parent as it was (a room stores the stop before adopting it)
    assert parent.outcome == before and parent.log[-1] == RoundEnded(before)
    assert parent.history[-1].outcome == before and parent.phase is Phase.READY


def test_stop_never_cuts_a_round_in_play() -> None:
    state = domeng(camat_target=0).new_match()
    state.start_round(deal(*PASSEBUNGE_HANDS))
    run(state, *PASSEBUNGE_PLAY[:3])
    with pytest.raises(IllegalActionError) as raised:
        state.stop()
    assert raised.value.code == "round_in_play"
    assert state.phase is Phase.PLAYING  # unchanged: the round plays on
    finish_with_first_legal(state)
    state.stop()
    assert state.phase is Phase.OVER


@pytest.mark.parametrize("options", [{}, {"camat_target": 2}])
def test_a_match_with_a_target_cannot_be_stopped(options: dict[str, object]) -> None:
    state = domeng(**options).new_match()
    with pytest.raises(IllegalActionError) as raised:
        state.stop()
    assert raised.value.code == "not_stoppable"
    assert state.phase is Phase.READY


def test_a_stopped_record_replays_as_a_finished_match() -> None:
    doc = stopped_record()
    result = read_record(doc)
    assert result.ended_by == "host" and result.state.phase is Phase.OVER
    report = replay(doc)
    assert report["match_over"] is True and report["ended_by"] == "host"
    assert [r["end"] for r in report["rounds"]] == [
        log.outcome.end.value for log in result.rounds if log.outcome
    ]
    assert len(report["rounds"]) == 3
    again = build_record(result.rules, SEATS, [], options=result.rules.options(), ended_by="host")
    assert list(again)[-1] == "ended_by"  # written after the rounds


def test_a_record_without_ended_by_is_unchanged_and_an_unknown_word_is_ignored() -> None:
    doc = stopped_record()
    del doc["ended_by"]
    assert replay(doc)["match_over"] is False and "ended_by" not in replay(doc)
    doc["ended_by"] = "meteor"  # a later writer's word: a reader ignores what it does not know
    assert replay(doc) == {"rounds": replay(doc)["rounds"], "match_over": False}


def test_replay_refuses_a_stop_that_cuts_a_round_or_a_match_with_a_target(tmp_path: Path) -> None:
    doc = stopped_record(1)
    doc["rounds"][0]["actions"] = doc["rounds"][0]["actions"][:4]
    path = tmp_path / "cut.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    done = domeng_cli("replay", path, "--json")
    assert done.returncode == 2
    assert json.loads(done.stdout)["error"] | {"message": ""} == {
        "round": 0,
        "action": None,
        "code": "unfinished_round",
        "message": "",
    }
    doc = stopped_record(1)
    doc["options"] = {"camat_target": 5}
    path.write_text(json.dumps(doc), encoding="utf-8")
    done = domeng_cli("replay", path, "--json")
    assert done.returncode == 2 and json.loads(done.stdout)["error"]["code"] == "not_stoppable"


def test_domeng_replay_tells_the_host_ended_the_match(tmp_path: Path) -> None:
    path = tmp_path / "stopped.json"
    path.write_text(json.dumps(stopped_record()), encoding="utf-8")
    done = domeng_cli("replay", path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("Round ") == 3
    assert done.stdout.endswith("Match over: the host ended it after this round.\n")
    last = done.stdout.split("Round 3 ")[1]
    assert "next leader" not in last  # nobody leads after the stop: no round follows
    assert done.stdout.count("next leader") == 2  # rounds 1 and 2 each had one
    as_json = domeng_cli("replay", path, "--json")
    assert as_json.returncode == 0 and json.loads(as_json.stdout)["ended_by"] == "host"


def test_a_stopped_record_narrates_its_last_round_as_the_end() -> None:
    result = read_record(stopped_record())
    last = result.rounds[-1].outcome
    assert last is not None and last.match_over  # the round the host's stop ended the match with
    assert [log.outcome.match_over for log in result.rounds if log.outcome] == [False, False, True]
    lines = describe_outcome(last, SEATS)
    assert not any(line.startswith("next leader") for line in lines)
    earlier = result.rounds[0].outcome
    assert earlier is not None
    assert describe_outcome(earlier, SEATS)[-1] == f"next leader {SEATS[earlier.next_leader]}"
    # RECORD.md's report keeps its fields: every round still has its next_leader
    report = result.report()
    assert report["rounds"][-1]["next_leader"] == last.next_leader and report["match_over"] is True
