"""Match records (RECORD.md): write, read and replay round trips, the tile notation, and every
`RecordError` code through the real ``domeng replay FILE --json`` console script."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from app.cli.common import MAX_RECORD_BYTES
from engine.core import Phase, State
from engine.errors import RecordError
from engine.events import DomengOutcome, Termination
from engine.record import read_record, replay, round_report, write_record
from engine.rules.domeng import DomengState
from engine.simulate import Simulation
from tests.conftest import (
    ORDERED_HANDS,
    PASSEBUNGE_HANDS,
    PASSEBUNGE_PLAY,
    SEATS,
    deal,
    domeng,
    domeng_cli,
    finish_with_first_legal,
    run,
)

pytestmark = pytest.mark.engine  # the engine's records, and the command line's size limit on them

REPORT_KEYS = {
    "end",
    "winner",
    "cucuq",
    "manguno",
    "mattikkeng",
    "table",
    "stones",
    "camat",
    "camat_elected",
    "next_leader",
}
"""RECORD.md's Domeng round report."""

Doc = dict[str, Any]


@cache
def simulated_matches() -> tuple[State, ...]:
    """Bot matches (camat_target 1: each ends at its camat), the last one cut short unfinished."""
    matches: list[State] = []
    simulation = Simulation(domeng(), ["random", "greedy"], seed="records", on_match=matches.append)
    simulation.run(120)
    simulation.finish()
    return tuple(matches)


def record_of(state: State) -> Doc:
    """``state``'s record as it comes back from JSON text."""
    parsed: Doc = json.loads(json.dumps(write_record(state, SEATS)))
    return parsed


@cache
def _passebunge_record() -> str:
    state = domeng().new_match()
    state.start_round(deal(*PASSEBUNGE_HANDS))
    run(state, *PASSEBUNGE_PLAY)
    finish_with_first_legal(state)
    assert state.phase is Phase.READY
    return json.dumps(write_record(state, SEATS))


def passebunge_record() -> Doc:
    """One finished round: RULES.md example 2's deal, played on to its end (no camat)."""
    doc: Doc = json.loads(_passebunge_record())
    return doc


def camat_record() -> Doc:
    """A simulated match that ended at its camat election."""
    over = [m for m in simulated_matches() if m.phase is Phase.OVER]
    return record_of(over[0])


# -- round trips ----------------------------------------------------------------------------------


def test_simulated_matches_cover_finished_and_cut_matches() -> None:
    phases = [m.phase for m in simulated_matches()]
    assert phases.count(Phase.OVER) >= 3
    assert phases[-1] is Phase.READY  # cut by Simulation.finish


@pytest.mark.parametrize("index", range(4))
def test_record_round_trip_replays_every_outcome(index: int) -> None:
    matches = simulated_matches()
    state = matches[-1] if index == 3 else matches[index]
    doc = record_of(state)
    result = read_record(doc)
    assert result.rounds == state.history
    expected = [round_report(log.outcome) for log in state.history]
    assert result.report() == replay(doc) == {"rounds": expected, "match_over": state.phase is Phase.OVER}
    assert all(set(r) == REPORT_KEYS for r in expected)
    assert isinstance(state, DomengState)
    last = expected[-1]
    assert (last["table"], last["stones"]) == (state.table, state.stones)
    assert write_record(result.state, SEATS) == doc


def test_unfinished_last_round_reports_end_null_and_the_stones_as_they_stand() -> None:
    state = domeng().new_match()
    state.start_round(deal(*PASSEBUNGE_HANDS))
    run(state, *PASSEBUNGE_PLAY[:7])  # two passebunge by P1
    doc = record_of(state)
    assert len(doc["rounds"][0]["actions"]) == 7
    assert replay(doc) == {
        "rounds": [
            {
                "end": None,
                "winner": None,
                "cucuq": None,
                "manguno": None,
                "mattikkeng": [],
                "table": 21,
                "stones": [0, 4, 0, 0, 0],
                "camat": None,
                "camat_elected": False,
                "next_leader": None,
            }
        ],
        "match_over": False,
    }
    assert write_record(read_record(doc).state, SEATS) == doc


def reversed_tile(text: str) -> str:
    low, high = text.split("-")
    return f"{high}-{low}"


def test_tiles_may_be_written_high_low() -> None:
    doc = record_of(simulated_matches()[0])
    flipped = copy.deepcopy(doc)
    for raw in flipped["rounds"]:
        raw["hands"] = [[reversed_tile(t) for t in hand] for hand in raw["hands"]]
        raw["unused"] = [reversed_tile(t) for t in raw["unused"]]
        for action in raw["actions"][1:]:  # the opening tile is laid as written
            if "play" in action:
                action["play"] = reversed_tile(action["play"])
    assert flipped != doc
    assert replay(flipped) == replay(doc)
    assert write_record(read_record(flipped).state, SEATS) == doc


def opening_record(opening: str) -> Doc:
    """P4 leads (``start.leader``) with 3-6 written as ``opening``; P0 answers 0-3 on R."""
    hands = [[*hand.split()] for hand in ORDERED_HANDS]
    return {
        "format": "domeng-record/1",
        "variant": "domeng",
        "options": {"camat_target": 1},
        "seats": list(SEATS),
        "start": {"table": 25, "stones": [0] * 5, "camat": None, "leader": 4},
        "rounds": [
            {
                "hands": hands,
                "unused": ["5-5", "5-6", "6-6"],
                "actions": [{"seat": 4, "play": opening}, {"seat": 0, "play": "0-3", "end": "R"}],
            }
        ],
    }


def test_opening_tile_is_laid_as_written_and_written_as_laid() -> None:
    doc = opening_record("6-3")
    result = read_record(doc)
    assert result.state.ends == (6, 0)
    assert write_record(result.state, SEATS) == doc  # "6-3" stays "6-3"


def test_opening_written_low_high_puts_the_6_on_the_right() -> None:
    with pytest.raises(RecordError) as caught:
        read_record(opening_record("3-6"))  # [3|6]: 0-3 fits the L end only
    error = caught.value
    assert (error.code, error.round, error.action) == ("does_not_fit", 0, 1)


# -- domeng replay --json: errors -------------------------------------------------------------------


def with_actions(doc: Doc, *actions: object, at: int | None = None, round: int = 0) -> Doc:
    """``doc`` with round ``round``'s actions cut at ``at`` and ``actions`` appended there."""
    raw = doc["rounds"][round]
    raw["actions"] = raw["actions"][:at] + list(actions) if at is not None else raw["actions"] + list(actions)
    return doc


def _with_round(doc: Doc, new_round: Doc) -> Doc:
    doc["rounds"].append(new_round)
    return doc


def _set(doc: Doc, path: tuple[str | int, ...], value: object) -> Doc:
    target: Any = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return doc


def _drop(doc: Doc, *path: str | int) -> Doc:
    target: Any = doc
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]
    return doc


def _unfinished_then_another(doc: Doc) -> Doc:
    first = doc["rounds"][0]
    return _with_round(with_actions(doc, at=5), copy.deepcopy(first))


def _camat_then_another_round(doc: Doc) -> Doc:
    return _with_round(doc, copy.deepcopy(doc["rounds"][0]))


def _camat_then_another_action(doc: Doc) -> Doc:
    last = len(doc["rounds"]) - 1
    return with_actions(doc, {"seat": 0, "pass": True}, round=last)


def _leader_without_5_or_6_passes(doc: Doc) -> Doc:
    """P0 leads with 4-4 (5-5, 5-6, 6-6 unused) and holds no 5 and no 6, then tries to pass."""
    hands = ("4-4 0-1 0-2 0-3 1-2", "0-5 0-6 1-5 1-6 2-5", "1-1 0-4 1-3 1-4 2-2", "2-3 2-4 2-6 3-3 3-6")
    doc["rounds"][0] = {
        "hands": [h.split() for h in (*hands, "0-0 3-4 3-5 4-5 4-6")],
        "unused": ["5-5", "5-6", "6-6"],
        "actions": [{"seat": 0, "pass": True}],
    }
    return doc


# code, how the document is spoiled, round, action (-1: the last), a phrase the message must hold
ERROR_CASES = [
    pytest.param(
        "invalid_document",
        lambda d: _set(d, ("rounds",), "none"),
        None,
        None,
        "'rounds'",
        id="invalid_document-rounds-not-a-list",
    ),
    pytest.param(
        "invalid_document",
        lambda d: _set(d, ("rounds", 0), 7),
        0,
        None,
        "round",
        id="invalid_document-round-not-an-object",
    ),
    pytest.param(
        "invalid_document",
        lambda d: _set(d, ("rounds", 0, "actions"), {}),
        0,
        None,
        "'actions'",
        id="invalid_document-actions-not-a-list",
    ),
    pytest.param(
        "unknown_format",
        lambda d: _set(d, ("format",), "domeng-record/2"),
        None,
        None,
        "domeng-record/2",
        id="unknown_format-version-2",
    ),
    pytest.param(
        "unknown_format",
        lambda d: _drop(d, "format"),
        None,
        None,
        "domeng-record/1",
        id="unknown_format-missing",
    ),
    pytest.param(
        "unknown_variant",
        lambda d: _set(d, ("variant",), "chess"),
        None,
        None,
        "chess",
        id="unknown_variant-chess",
    ),
    pytest.param(
        "invalid_options",
        lambda d: _set(d, ("options",), {"camat_target": -1}),
        None,
        None,
        "camat_target",
        id="invalid_options-negative-camat-target",
    ),
    pytest.param(
        "invalid_options",
        lambda d: _set(d, ("options",), {"camat_target": "1"}),
        None,
        None,
        "camat_target",
        id="invalid_options-camat-target-string",
    ),
    pytest.param(
        "invalid_options",
        lambda d: _set(d, ("options",), {"stake": 5}),
        None,
        None,
        "stake",
        id="invalid_options-unknown-option",
    ),
    pytest.param(
        "invalid_seats",
        lambda d: _set(d, ("seats",), ["Ana", "Budi", "Citra", "Dewi"]),
        None,
        None,
        "5",
        id="invalid_seats-four-seats",
    ),
    pytest.param(
        "invalid_seats",
        lambda d: _set(d, ("seats",), "Ana"),
        None,
        None,
        "seats",
        id="invalid_seats-not-a-list",
    ),
    pytest.param(
        "invalid_start",
        lambda d: _set(d, ("start",), {"table": 20, "stones": [0] * 5}),
        None,
        None,
        "25",
        id="invalid_start-stones-not-25",
    ),
    pytest.param(
        "invalid_start",
        lambda d: _set(d, ("start",), {"camat": 5}),
        None,
        None,
        "camat",
        id="invalid_start-camat-not-a-seat",
    ),
    pytest.param(
        "invalid_start",
        lambda d: _set(d, ("start",), []),
        None,
        None,
        "start",
        id="invalid_start-not-an-object",
    ),
    pytest.param(
        "invalid_tile",
        lambda d: _set(d, ("rounds", 0, "hands", 1, 0), "7-1"),
        0,
        None,
        "7-1",
        id="invalid_tile-pip-7-in-a-hand",
    ),
    pytest.param(
        "invalid_tile",
        lambda d: _set(d, ("rounds", 0, "hands", 1, 0), "²-3"),
        0,
        None,
        "²-3",
        id="invalid_tile-superscript-digit-in-a-hand",
    ),
    pytest.param(
        "invalid_tile",
        lambda d: with_actions(d, {"seat": 2, "play": "6-7"}, at=2),
        0,
        2,
        "6-7",
        id="invalid_tile-pip-7-played",
    ),
    pytest.param(
        "invalid_deal",
        lambda d: _set(d, ("rounds", 0, "hands", 1, 0), "6-6"),
        0,
        None,
        "28",
        id="invalid_deal-tile-twice",
    ),
    pytest.param(
        "invalid_deal",
        lambda d: _drop(d, "rounds", 0, "unused"),
        0,
        None,
        "unused",
        id="invalid_deal-no-unused",
    ),
    pytest.param(
        "invalid_deal",
        lambda d: _drop(d, "rounds", 0, "hands", 4),
        0,
        None,
        "hands",
        id="invalid_deal-four-hands",
    ),
    pytest.param(
        "invalid_action",
        lambda d: with_actions(d, {"seat": 0}, at=0),
        0,
        0,
        "exactly one",
        id="invalid_action-no-kind",
    ),
    pytest.param(
        "invalid_action",
        lambda d: with_actions(d, {"seat": "P0", "pass": True}, at=0),
        0,
        0,
        "seat",
        id="invalid_action-seat-not-a-number",
    ),
    pytest.param(
        "invalid_action",
        lambda d: with_actions(d, {"seat": 1, "pass": False}, at=1),
        0,
        1,
        "must be true",
        id="invalid_action-pass-false",
    ),
    pytest.param(
        "invalid_end",
        lambda d: with_actions(d, {"seat": 2, "play": "5-6", "end": "middle"}, at=2),
        0,
        2,
        "middle",
        id="invalid_end-middle",
    ),
    pytest.param(
        "unfinished_round", _unfinished_then_another, 0, None, "end", id="unfinished_round-cut-then-another"
    ),
    pytest.param(
        "wrong_seat",
        lambda d: with_actions(d, {"seat": 1, "play": "0-0"}, at=0),
        0,
        0,
        "P0's turn",
        id="wrong_seat-P1-opens",
    ),
    pytest.param(
        "tile_not_in_hand",
        lambda d: with_actions(d, {"seat": 2, "play": "4-4"}, at=2),
        0,
        2,
        "P2 plays 4-4",
        id="tile_not_in_hand-P2-plays-P0s-4-4",
    ),
    pytest.param(
        "does_not_fit",
        lambda d: with_actions(d, {"seat": 2, "play": "3-5"}, at=2),
        0,
        2,
        "P2 plays 3-5",
        id="does_not_fit-3-5-on-6-6",
    ),
    pytest.param(
        "end_required",
        lambda d: with_actions(d, {"seat": 3, "play": "3-4"}, at=8),
        0,
        8,
        "P3 plays 3-4",
        id="end_required-3-4-on-3-4",
    ),
    pytest.param(
        "voluntary_pass",
        lambda d: with_actions(d, {"seat": 2, "pass": True}, at=2),
        0,
        2,
        "P2 passes",
        id="voluntary_pass-mid-round",
    ),
    pytest.param(
        "voluntary_pass",
        _leader_without_5_or_6_passes,
        0,
        0,
        "P0 passes",
        id="voluntary_pass-opening-without-5-or-6",
    ),
    pytest.param(
        "wrong_opening_tile",
        lambda d: with_actions(d, {"seat": 0, "play": "4-4"}, at=0),
        0,
        0,
        "6-6",
        id="wrong_opening_tile-4-4-instead-of-6-6",
    ),
    pytest.param(
        "round_over",
        lambda d: with_actions(d, {"seat": 0, "pass": True}),
        0,
        -1,
        "P0 passes",
        id="round_over-action-after-the-end",
    ),
    pytest.param(
        "draw_not_allowed",
        lambda d: with_actions(d, {"seat": 0, "draw": True}, at=0),
        0,
        0,
        "P0 draws",
        id="draw_not_allowed-draw",
    ),
    pytest.param(
        "not_two_lempas",
        lambda d: with_actions(d, {"seat": 0, "play": ["6-6", "4-4"]}, at=0),
        0,
        0,
        "P0 plays 6-6 and 4-4",
        id="not_two_lempas-two-lempas",
    ),
]


def run_replay_json(path: Path) -> tuple[int, dict[str, Any]]:
    """``domeng replay PATH --json``: the exit status and the one JSON object on standard output."""
    done = domeng_cli("replay", path, "--json")
    lines = done.stdout.splitlines()
    assert len(lines) == 1, f"expected one line on stdout, got {done.stdout!r} (stderr {done.stderr!r})"
    report: dict[str, Any] = json.loads(lines[0])
    return done.returncode, report


def check_error(path: Path, code: str, round: int | None, action: int | None, phrase: str) -> None:
    status, printed = run_replay_json(path)
    assert status == 2
    assert list(printed) == ["error"]
    error = printed["error"]
    assert set(error) == {"round", "action", "code", "message"}
    assert (error["code"], error["round"], error["action"]) == (code, round, action)
    assert phrase in error["message"]


@pytest.mark.parametrize(("code", "spoil", "round", "action", "phrase"), ERROR_CASES)
def test_replay_json_reports_the_first_fault(
    code: str, spoil: Callable[[Doc], Doc], round: int | None, action: int | None, phrase: str, tmp_path: Path
) -> None:
    doc = spoil(passebunge_record())
    if action == -1:
        action = len(doc["rounds"][0]["actions"]) - 1
    path = tmp_path / "record.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    check_error(path, code, round, action, phrase)


def test_replay_json_rejects_a_document_that_is_not_an_object(tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    path.write_text(json.dumps([passebunge_record()]), encoding="utf-8")
    check_error(path, "invalid_document", None, None, "object")


def test_replay_json_rejects_a_round_after_the_match_is_over(tmp_path: Path) -> None:
    doc = _camat_then_another_round(camat_record())
    path = tmp_path / "record.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    check_error(path, "match_over", len(doc["rounds"]) - 1, None, "over")


def test_replay_json_rejects_an_action_after_the_match_is_over(tmp_path: Path) -> None:
    doc = _camat_then_another_action(camat_record())
    last = doc["rounds"][-1]
    path = tmp_path / "record.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    check_error(path, "match_over", len(doc["rounds"]) - 1, len(last["actions"]) - 1, "P0 passes")


@pytest.mark.parametrize(
    "text",
    ['{"format": "domeng-record/1",', '{"options": {"camat_target": 1' + "0" * 5000 + "}}"],
    ids=["cut short", "a 5001-digit number"],
)
def test_replay_json_rejects_text_that_is_not_json(text: str, tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text(text, encoding="utf-8")
    check_error(path, "invalid_json", None, None, "not JSON")


@pytest.mark.parametrize("what", ["missing", "directory", "not utf-8"])
def test_replay_json_rejects_a_file_it_cannot_read(what: str, tmp_path: Path) -> None:
    path = tmp_path / "record.json"
    if what == "directory":
        path.mkdir()
    elif what == "not utf-8":
        path.write_bytes(b'{"format": "\xff\xfe"}')
    check_error(path, "unreadable_file", None, None, str(path))


# -- domeng replay: success ---------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["passebunge", "camat"])
def test_replay_json_prints_record_md_report(which: str, tmp_path: Path) -> None:
    doc = passebunge_record() if which == "passebunge" else camat_record()
    path = tmp_path / "record.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    status, report = run_replay_json(path)
    assert status == 0
    assert list(report) == ["rounds", "match_over"]
    assert all(set(r) == REPORT_KEYS for r in report["rounds"])
    assert report == replay(doc)
    assert report["match_over"] is (which == "camat")
    if which == "camat":
        assert report["rounds"][-1]["camat_elected"] is True
        assert (report["rounds"][-1]["table"], report["rounds"][-1]["stones"]) == (25, [0] * 5)


def test_replay_reads_standard_input_for_a_dash() -> None:
    doc = passebunge_record()
    done = domeng_cli("replay", "-", "--json", stdin=json.dumps(doc))
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout) == replay(doc)
    broken = domeng_cli("replay", "-", "--json", stdin="{")
    assert broken.returncode == 2 and json.loads(broken.stdout)["error"]["code"] == "invalid_json"


def _outcomes(state: State) -> list[DomengOutcome]:
    return [log.outcome for log in state.history if isinstance(log.outcome, DomengOutcome)]


def test_replay_text_tells_the_rounds_in_the_games_terms(tmp_path: Path) -> None:
    def telling(state: State) -> bool:
        ends = {o.end for o in _outcomes(state)}
        blocks = [o for o in _outcomes(state) if o.end is Termination.BLOCK]
        return Termination.CEKI in ends and any(o.mattikkeng for o in blocks) and state.phase is Phase.OVER

    state = next(m for m in simulated_matches() if telling(m))
    path = tmp_path / "record.json"
    path.write_text(json.dumps(write_record(state, SEATS)), encoding="utf-8")
    done = domeng_cli("replay", path)
    assert done.returncode == 0
    text = done.stdout
    for term in (
        "CEKI:",
        "is first cappu",
        "CUCUQ",
        "BLOCK:",
        "MANGUNO",
        "MATTIKKENG",
        "CAMAT:",
        "Match over.",
    ):
        assert term in text, term
    assert text.count("Round ") == len(state.history)
    assert all(name in text for name in SEATS)


def test_replay_text_shows_an_unfinished_round(tmp_path: Path) -> None:
    state = domeng().new_match()
    state.start_round(deal(*PASSEBUNGE_HANDS))
    run(state, *PASSEBUNGE_PLAY[:2])
    path = tmp_path / "record.json"
    path.write_text(json.dumps(write_record(state, SEATS)), encoding="utf-8")
    done = domeng_cli("replay", path)
    assert done.returncode == 0
    assert "Round 1 · 2 actions, 1 pass\n" in done.stdout  # one pass, not "1 passes"
    assert "Match not over." in done.stdout
    # readable as a finished round is (a trial read `unfinished: {"end": null, ...}`): the stones
    # as they stand, each by its seat's name; the JSON is --json's
    assert (
        "  unfinished: the round is still in play · table 23"
        " · stones: Ana 0, Budi 2, Citra 0, Dewi 0, Eko 0 · camat none\n" in done.stdout
    ), done.stdout
    assert "{" not in done.stdout and "null" not in done.stdout


def test_replay_text_error_goes_to_stderr(tmp_path: Path) -> None:
    doc = with_actions(passebunge_record(), {"seat": 2, "pass": True}, at=2)
    path = tmp_path / "record.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    done = domeng_cli("replay", path)
    assert (done.returncode, done.stdout) == (2, "")
    assert "voluntary_pass in round 1, action 3" in done.stderr


HOSTILE_NAME = "Ana\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\u202eevil\u2028\x9b31m"
"""A seat name a hand-made record may carry: an OSC 52 sequence (writes the reader's clipboard), a
screen clear, a right-to-left override, a line separator and a C1 control sequence introducer."""


def test_replay_text_shows_a_records_names_and_never_runs_them(tmp_path: Path) -> None:
    state = next(m for m in simulated_matches() if m.phase is Phase.OVER)
    names = [HOSTILE_NAME, *SEATS[1:]]
    path = tmp_path / "record.json"
    path.write_text(json.dumps(write_record(state, names)), encoding="utf-8")
    done = domeng_cli("replay", path)
    assert done.returncode == 0, done.stderr
    shown = "Ana\\u001b]52;c;cm0gLXJmIH4=\\u0007\\u001b[2J\\u202eevil\\u2028\\u009b31m"
    assert shown in done.stdout.splitlines()[0]
    assert all(ch == "\n" or ch.isprintable() for ch in done.stdout), repr(done.stdout)
    emoji = "Dewi 👩🏽‍💻"  # its joiner is kept: a terminal shows the emoji whole
    path.write_text(json.dumps(write_record(state, [emoji, *SEATS[1:]])), encoding="utf-8")
    assert emoji in domeng_cli("replay", path).stdout


# -- hostile records: bounded work, bounded messages ---------------------------------------------------


def test_replay_refuses_a_file_over_the_record_size_unread(tmp_path: Path) -> None:
    """A file past `MAX_RECORD_BYTES` (sparse here: no disk spent) is refused before it is parsed,
    which would take gigabytes (before: read whole and parsed, ``invalid_json`` after all that)."""
    path = tmp_path / "huge.json"
    with path.open("wb") as file:
        file.truncate(MAX_RECORD_BYTES + 1)
    check_error(path, "record_too_large", None, None, "64 MiB")


@pytest.mark.parametrize(
    ("spoil", "code", "round"),
    [
        (lambda doc: _set(doc, ("format",), "x" * 1_000_000), "unknown_format", None),
        (lambda doc: _set(doc, ("variant",), ["x" * 1000] * 1000), "unknown_variant", None),
        (lambda doc: _set(doc, ("options",), {"y" * 1_000_000: 1}), "invalid_options", None),
        (lambda doc: _set(doc, ("options",), {"camat_target": int("9" * 4000)}), "invalid_options", None),
        (lambda doc: _set(doc, ("rounds", 0, "unused", 0), "6-" + "6" * 1_000_000), "invalid_tile", 0),
        (lambda doc: _set(doc, ("rounds", 0, "actions", 0), {"seat": "z" * 1_000_000}), "invalid_action", 0),
    ],
    ids=["format", "variant", "option key", "4000-digit number", "tile", "seat"],
)
def test_replay_quotes_at_most_a_few_dozen_characters_of_a_hostile_value(
    spoil: Callable[[Doc], Doc], code: str, round: int | None, tmp_path: Path
) -> None:
    """An error quotes what it refuses (`engine.errors.quoted`), cut to a few dozen characters:
    never the megabyte a record put there (before: the whole value, on one line)."""
    path = tmp_path / "record.json"
    path.write_text(json.dumps(spoil(passebunge_record())), encoding="utf-8")
    status, printed = run_replay_json(path)
    assert status == 2 and printed["error"]["code"] == code and printed["error"]["round"] == round
    assert len(printed["error"]["message"]) <= 200, printed["error"]["message"][:300]
    assert "..." in printed["error"]["message"]


def test_replay_refuses_a_hand_of_more_tiles_than_the_set_before_reading_them(tmp_path: Path) -> None:
    """A hand listing 200,000 tiles is refused by its length, before any tile is read (before:
    every tile parsed, then refused for its size)."""
    doc = _set(passebunge_record(), ("rounds", 0, "hands", 2), ["6-6"] * 200_000)
    path = tmp_path / "record.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    check_error(path, "invalid_deal", 0, None, "hand of P2 lists 200000 tiles: the set has 28")
