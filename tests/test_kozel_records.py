"""Kozel match records (RECORD.md): round trips of simulated matches, the report's Kozel fields, errors
raised by real Kozel records through ``domeng replay FILE --json``, and ``domeng simulate`` on Kozel."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from engine.actions import Draw, PlayLempas, parse_action
from engine.core import Deal, Phase, State
from engine.events import KozelOutcome
from engine.record import read_record, replay, round_report, write_record
from engine.rules.kozel import KozelState
from engine.simulate import Simulation
from tests.conftest import domeng_cli
from tests.kozelkit import KOZEL_SEATS, kozel, kozel_deal

REPORT_KEYS = ["end", "winner", "points", "pending", "goat", "next_leader"]
"""RECORD.md's Kozel round report, in order."""

Doc = dict[str, Any]
TABLES = {"2": kozel(2), "3": kozel(3), "4": kozel(4), "pairs": kozel(4, pairs=True)}


@cache
def simulated(table: str) -> tuple[State, ...]:
    """Bot matches at ``table`` (each ends at its goat; the last may be cut short)."""
    matches: list[State] = []
    simulation = Simulation(
        TABLES[table], ["greedy", "random"], seed=f"kozel-{table}", on_match=matches.append
    )
    simulation.run(40)
    simulation.finish()
    return tuple(matches)


def record_of(state: State) -> Doc:
    """``state``'s record as it comes back from JSON text."""
    parsed: Doc = json.loads(json.dumps(write_record(state, KOZEL_SEATS[: state.seats])))
    return parsed


def goat_record(table: str = "3") -> Doc:
    return record_of(next(m for m in simulated(table) if m.phase is Phase.OVER))


# -- round trips ----------------------------------------------------------------------------------


@pytest.mark.parametrize("table", sorted(TABLES))
def test_record_round_trip_replays_every_outcome(table: str) -> None:
    matches = simulated(table)
    assert any(m.phase is Phase.OVER for m in matches)
    for state in (matches[0], matches[-1]):
        doc = record_of(state)
        assert doc["variant"] == "kozel" and doc["options"] == TABLES[table].options()
        assert all(len(r["bazaar"]) == 28 - sum(map(len, r["hands"])) for r in doc["rounds"])
        assert "unused" not in doc["rounds"][0]
        result = read_record(doc)
        assert result.rounds == state.history
        expected = [round_report(log.outcome) for log in state.history]
        assert result.report() == replay(doc) == {"rounds": expected, "match_over": state.phase is Phase.OVER}
        assert all(list(r) == REPORT_KEYS for r in expected)
        assert isinstance(state, KozelState)
        assert (expected[-1]["points"], expected[-1]["pending"]) == (state.points, state.pending)
        assert write_record(result.state, KOZEL_SEATS[: state.seats]) == doc


def test_goat_report_names_the_goat_and_ends_the_match() -> None:
    report = replay(goat_record())
    last = report["rounds"][-1]
    assert report["match_over"] is True and last["goat"]
    assert all(last["points"][s] >= 101 for s in last["goat"])
    assert all(not r["goat"] for r in report["rounds"][:-1])


def test_unfinished_last_round_reports_end_null_and_the_points_as_they_stand() -> None:
    rules = kozel(3)
    state = rules.new_match({"points": [0, 20, 0], "pending": [5, 0, 0], "leader": 2})
    state.start_round(rules.deal_from_seed("unfinished"))
    for _ in range(4):
        state.apply(state.legal_actions()[0])
    doc = record_of(state)
    assert doc["start"] == {"points": [0, 20, 0], "pending": [5, 0, 0], "leader": 2}
    assert replay(doc) == {
        "rounds": [
            {
                "end": None,
                "winner": None,
                "points": [0, 20, 0],
                "pending": [5, 0, 0],
                "goat": [],
                "next_leader": None,
            }
        ],
        "match_over": False,
    }
    assert write_record(read_record(doc).state, KOZEL_SEATS[:3]) == doc


def test_replay_text_tells_an_unfinished_round_in_words(tmp_path: Path) -> None:
    """A trial read `unfinished: {"end": null, ...}` from `domeng replay`: the round in play is
    told as a finished one is, the points as they stand (the 13 opening's pending ones too)."""
    rules = kozel(3)
    state = rules.new_match({"points": [0, 20, 0], "pending": [5, 0, 0], "leader": 2})
    state.start_round(rules.deal_from_seed("unfinished"))
    for _ in range(4):
        state.apply(state.legal_actions()[0])
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record_of(state)), encoding="utf-8")
    done = domeng_cli("replay", path)
    assert done.returncode == 0, done.stderr
    unfinished = (
        "  unfinished: the round is still in play"
        " · points: Anna not opened (5 pending), Boris 20, Vera not opened (0 pending)"
    )
    assert unfinished in done.stdout.splitlines(), done.stdout
    assert "{" not in done.stdout and "null" not in done.stdout and "Match not over." in done.stdout


def test_draws_and_two_lempas_are_written_in_record_md_notation() -> None:
    docs = [record_of(m) for table in TABLES for m in simulated(table)]
    actions = [a for doc in docs for r in doc["rounds"] for a in r["actions"]]
    draws = [a for a in actions if "draw" in a]
    lempas = [a for a in actions if isinstance(a.get("play"), list)]
    assert draws and all(set(a) == {"seat", "draw"} and a["draw"] is True for a in draws)
    assert lempas and all(set(a) == {"seat", "play"} and len(a["play"]) == 2 for a in lempas)
    assert isinstance(parse_action(lempas[0]), PlayLempas) and isinstance(parse_action(draws[0]), Draw)


# -- domeng replay --json: errors from real Kozel records -------------------------------------------


def _deal(doc: Doc) -> Deal:
    raw = doc["rounds"][0]
    return kozel_deal(*(" ".join(h) for h in raw["hands"]), bazaar=" ".join(raw["bazaar"]))


def spoil_at(
    test: Callable[[KozelState, Doc], bool], make: Callable[[KozelState, Doc], Doc]
) -> Callable[[Doc], tuple[Doc, int]]:
    """A spoiler that replaces round 0's first action where ``test`` holds by ``make``'s action."""

    def spoil(doc: Doc) -> tuple[Doc, int]:
        rules = read_record(doc).rules
        state = rules.new_match(doc.get("start"))
        assert isinstance(state, KozelState)
        state.start_round(_deal(doc))
        actions = doc["rounds"][0]["actions"]
        for index, raw in enumerate(actions):
            if test(state, raw):
                doc["rounds"][0]["actions"] = [*actions[:index], make(state, raw)]
                return doc, index
            state.apply(parse_action(raw))
        raise AssertionError("the record has no such action")

    return spoil


def _whole(change: Callable[[Doc], Doc]) -> Callable[[Doc], tuple[Doc, None]]:
    return lambda doc: (change(doc), None)


def _set(path: tuple[str | int, ...], value: object) -> Callable[[Doc], Doc]:
    def change(doc: Doc) -> Doc:
        target: Any = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        return doc

    return change


def _rename_bazaar(doc: Doc) -> Doc:
    doc["rounds"][0]["unused"] = doc["rounds"][0].pop("bazaar")
    return doc


def _after_the_end(doc: Doc) -> tuple[Doc, int]:
    actions = doc["rounds"][0]["actions"]
    actions.append({"seat": 0, "pass": True})
    return doc, len(actions) - 1


def _lempas_of(state: KozelState) -> list[str]:
    ends = state.ends or (6, 5)
    return [f"{ends[0]}-{ends[0]}", f"{(ends[0] + 1) % 7}-{(ends[0] + 1) % 7}"]


# code, spoiler (document, action index), round, a phrase the message must hold
ERROR_CASES = [
    pytest.param(
        "draw_not_allowed",
        spoil_at(
            lambda s, a: "play" in a and s.ends is not None, lambda s, a: {"seat": a["seat"], "draw": True}
        ),
        0,
        "a tile fits",
        id="draw_not_allowed-holding-a-fit",
    ),
    pytest.param(
        "voluntary_pass",
        spoil_at(lambda s, a: "draw" in a, lambda s, a: {"seat": a["seat"], "pass": True}),
        0,
        "bazaar still holds",
        id="voluntary_pass-with-tiles-in-the-bazaar",
    ),
    pytest.param(
        "not_two_lempas",
        spoil_at(
            lambda s, a: "play" in a and s.ends is not None,
            lambda s, a: {"seat": a["seat"], "play": _lempas_of(s)},
        ),
        0,
        "two lempas",
        id="not_two_lempas-wrong-lempas",
    ),
    pytest.param(
        "wrong_opening_tile",
        spoil_at(
            lambda s, a: True,
            lambda s, a: {
                "seat": a["seat"],
                "play": str(next(t for t in s.hand(a["seat"]) if t is not s.opening)),
            },
        ),
        0,
        "must open with",
        id="wrong_opening_tile-first-round",
    ),
    pytest.param("round_over", _after_the_end, 0, "P0 passes", id="round_over-action-after-the-end"),
    pytest.param("invalid_deal", _whole(_rename_bazaar), 0, "'bazaar'", id="invalid_deal-unused-for-bazaar"),
    pytest.param(
        "invalid_deal",
        _whole(lambda d: _set(("rounds", 0, "bazaar"), d["rounds"][0]["bazaar"][1:])(d)),
        0,
        "28",
        id="invalid_deal-bazaar-short",
    ),
    pytest.param(
        "invalid_options",
        _whole(_set(("options", "pairs"), True)),
        None,
        "4 seats",
        id="invalid_options-pairs-3-seats",
    ),
    pytest.param(
        "invalid_options",
        _whole(_set(("options", "camat_target"), 1)),
        None,
        "camat_target",
        id="invalid_options-domeng-option",
    ),
    pytest.param(
        "invalid_seats",
        _whole(_set(("seats",), ["A", "B", "C", "D", "E"])),
        None,
        "5",
        id="invalid_seats-five",
    ),
    pytest.param(
        "invalid_start",
        _whole(_set(("start",), {"pending": [0, 14, 0]})),
        None,
        "pending",
        id="invalid_start-pending-14",
    ),
]


def check_error(path: Path, code: str, round: int | None, action: int | None, phrase: str) -> None:
    done = domeng_cli("replay", path, "--json")
    assert done.returncode == 2
    lines = done.stdout.splitlines()
    assert len(lines) == 1
    error = json.loads(lines[0])["error"]
    assert (error["code"], error["round"], error["action"]) == (code, round, action)
    assert phrase in error["message"]


@pytest.mark.parametrize(("code", "spoil", "round", "phrase"), ERROR_CASES)
def test_replay_json_reports_the_first_fault_of_a_kozel_record(
    code: str, spoil: Callable[[Doc], tuple[Doc, int | None]], round: int | None, phrase: str, tmp_path: Path
) -> None:
    doc, action = spoil(record_of(simulated("3")[0]))
    path = tmp_path / "record.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    check_error(path, code, round, action, phrase)


def test_replay_json_rejects_a_round_after_the_goat(tmp_path: Path) -> None:
    doc = goat_record()
    doc["rounds"].append(copy.deepcopy(doc["rounds"][0]))
    path = tmp_path / "record.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    check_error(path, "match_over", len(doc["rounds"]) - 1, None, "over")


def test_replay_json_prints_the_kozel_fields_exactly(tmp_path: Path) -> None:
    doc = goat_record("pairs")
    path = tmp_path / "record.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    done = domeng_cli("replay", path, "--json")
    assert done.returncode == 0
    report = json.loads(done.stdout)
    assert list(report) == ["rounds", "match_over"] and report == replay(doc)
    assert all(list(r) == REPORT_KEYS for r in report["rounds"])
    last = report["rounds"][-1]
    assert report["match_over"] and len(last["goat"]) in (2, 4)  # a pair's goat is both partners (K10)


def test_replay_text_tells_the_rounds_in_kozel_terms(tmp_path: Path) -> None:
    state = next(m for m in simulated("2") if m.phase is Phase.OVER and any_fish(m))
    path = tmp_path / "record.json"
    path.write_text(json.dumps(write_record(state, KOZEL_SEATS[:2])), encoding="utf-8")
    done = domeng_cli("replay", path)
    assert done.returncode == 0
    text = done.stdout
    for term in (
        "kozel · 2 seats",
        "OUT:",
        "FISH",
        "pips →",
        "draws",
        "not opened",
        "GOAT:",
        "next leader",
        "Match over.",
    ):
        assert term in text, term
    assert text.count("Round ") == len(state.history)
    assert "next leader" not in text.rsplit("Round ", 1)[1]  # nobody leads after the goat


def any_fish(state: State) -> bool:
    return any(
        isinstance(log.outcome, KozelOutcome) and log.outcome.end.value == "fish" for log in state.history
    )


# -- domeng simulate --variant kozel -----------------------------------------------------------------

KOZEL_FIGURES = {
    "rounds",
    "matches",
    "actions",
    "outcomes",
    "outcome_share",
    "wins",
    "passes",
    "draws",
    "two_lempas",
    "points_written",
    "goats",
    "rounds_per_match",
    "bots",
    "seed",
}


def simulate(*extra: str) -> dict[str, Any]:
    done = domeng_cli("simulate", "--variant", "kozel", "--rounds", "80", "--json", "--quiet", *extra)
    assert done.returncode == 0, done.stderr
    figures: dict[str, Any] = json.loads(done.stdout)
    return figures


def test_simulate_kozel_reports_kozel_figures() -> None:
    figures = simulate("--seats", "3", "--bots", "greedy,random")
    assert set(figures) == KOZEL_FIGURES
    assert figures["bots"] == ["greedy", "random", "greedy"]
    assert set(figures["outcomes"]) <= {"out", "fish", "fish, tied"}
    assert sum(figures["outcomes"].values()) == 80
    assert sum(figures["wins"]) == 80 - figures["outcomes"].get("fish, tied", 0)
    assert all(len(figures[k]) == 3 for k in ("wins", "points_written", "goats"))
    assert figures["draws"] > 0 and sum(figures["goats"]) >= 3
    spread = figures["rounds_per_match"]
    assert 1 <= spread["min"] <= spread["median"] <= spread["max"]


def test_simulate_kozel_options_pairs_and_no_two_lempas() -> None:
    paired = simulate("--seats", "4", "--pairs")
    assert paired["goats"][0] == paired["goats"][2] and paired["goats"][1] == paired["goats"][3]
    assert simulate("--seats", "2", "--no-two-lempas")["two_lempas"] == 0
    for bad in (["--seats", "3", "--pairs"], ["--seats", "5"]):
        done = domeng_cli("simulate", "--variant", "kozel", "--rounds", "5", "--quiet", *bad)
        assert done.returncode == 2 and done.stdout == ""
        assert "invalid_" in done.stderr


def test_simulate_kozel_text_output() -> None:
    done = domeng_cli("simulate", "--variant", "kozel", "--seats", "2", "--rounds", "30", "--quiet")
    assert done.returncode == 0
    assert (
        "draws" in done.stdout
        and "points written" in done.stdout
        and "rounds per finished match" in done.stdout
    )


def test_simulate_kozel_save_writes_records_that_replay(tmp_path: Path) -> None:
    figures = simulate("--seats", "4", "--pairs", "--save", str(tmp_path))
    paths = sorted(tmp_path.glob("match-*.json"))
    assert len(paths) == figures["matches"] >= 2
    rounds = goats = over = 0
    for path in paths:
        done = domeng_cli("replay", path, "--json")
        assert done.returncode == 0, done.stdout
        report = json.loads(done.stdout)
        rounds += len(report["rounds"])
        goats += sum(bool(r["goat"]) for r in report["rounds"])
        over += bool(report["match_over"])
    assert rounds == figures["rounds"]
    assert goats == over


def test_verify_deal_kozel_prints_the_bazaar_top_first() -> None:
    seed = "5e" * 32  # as the server makes seeds (64 hex digits); verify-deal refuses others
    done = domeng_cli("verify-deal", seed, "--variant", "kozel", "--seats", "3")
    assert done.returncode == 0, done.stderr
    deal = kozel(3).deal_from_seed(seed)
    assert "bazaar (top first): " + " ".join(str(t) for t in deal.rest) in done.stdout
    header, *lines = done.stdout.splitlines()
    assert header.startswith("deal for kozel with 3 seats")
    assert [line[:3] for line in lines[:3]] == ["P0:", "P1:", "P2:"]
