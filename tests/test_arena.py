"""``domeng arena``: the paired statistics on known inputs, the duplicate scheme (identical deals in
every rotation, saved records that replay), determinism across processes, and clear errors."""

from __future__ import annotations

import json
import random
import re
from collections import defaultdict
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

import pytest

import engine.bots
from engine.actions import Action
from engine.arena import ArenaSpec, ArenaTally, known_players, make_player, play_board
from engine.core import State
from engine.paired import paired_ratio, percentiles
from engine.record import read_record
from engine.variants import make_rules
from tests.conftest import domeng_cli

BOARDS = "24"


def arena(*args: str) -> dict[str, Any]:
    """The JSON figures of ``domeng arena --quiet --json ARGS`` through the console script."""
    done = domeng_cli("arena", "--quiet", "--json", *args)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    figures: dict[str, Any] = json.loads(done.stdout)
    return figures


@cache
def greedy_vs_random(jobs: str) -> dict[str, Any]:
    return arena(
        "--candidate", "greedy", "--field", "random", "--boards", BOARDS, "--seed", "0", "--jobs", jobs
    )


# -- paired statistics ---------------------------------------------------------------------------


def test_ratio_of_exactly_proportional_pairs_has_no_spread() -> None:
    est = paired_ratio([1.5, 3.0, 4.5, 0.0], [1.0, 2.0, 3.0, 0.0])
    assert (est.ratio, est.se, est.upper, est.lower) == (1.5, 0.0, 1.5, 1.5)


def test_ratio_bound_by_hand() -> None:
    # means 3 and 1.5: R = 2; z = num - 2 den = (-1, 0, -1, 2), stdev sqrt(2); se = sqrt(2) / (2 * 1.5)
    est = paired_ratio([1, 2, 3, 6], [1, 1, 2, 2])
    assert est.ratio == 2.0
    assert est.se == pytest.approx(2**0.5 / 3)
    assert est.upper == pytest.approx(2 + 2.326348 * 2**0.5 / 3, abs=1e-6)
    assert est.lower == pytest.approx(2 - 2.326348 * 2**0.5 / 3, abs=1e-6)


def test_ratio_bound_covers_a_known_ratio() -> None:
    """Synthetic boards whose true ratio is 0.8: the estimate is close and the bounds hold it."""
    rng = random.Random(11)
    den = [rng.uniform(0.5, 2.5) for _ in range(3000)]
    num = [0.8 * d + rng.gauss(0, 0.3) for d in den]
    est = paired_ratio(num, den)
    assert est.lower < 0.8 < est.upper
    assert est.upper - est.lower < 0.03


@pytest.mark.parametrize(
    ("num", "den", "confidence", "message"),
    [
        ([1.0], [1.0], 0.99, "at least 2 pairs"),
        ([1.0, 2.0], [1.0], 0.99, "one length"),
        ([1.0, 2.0], [1.0, -1.0], 0.99, "mean of the denominator is 0"),
        ([1.0, 2.0], [1.0, 2.0], 0.4, "confidence"),
    ],
)
def test_ratio_refuses_what_it_cannot_bound(
    num: list[float], den: list[float], confidence: float, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        paired_ratio(num, den, confidence)


def test_percentiles() -> None:
    samples = [float(i) for i in range(1, 101)]
    assert percentiles(samples) == {"p50": 50.5, "p95": pytest.approx(95.05), "p99": pytest.approx(99.01)}
    assert percentiles([]) == {"p50": None, "p95": None, "p99": None}
    assert percentiles([3.0]) == {"p50": 3.0, "p95": 3.0, "p99": 3.0}


# -- the arena through the console script ----------------------------------------------------------


def test_short_arena_reports_greedy_stronger_than_random() -> None:
    figures = greedy_vs_random("1")
    assert figures["scheme"] == "seat"
    assert figures["rotations"] == [[0], [1], [2], [3], [4]]
    assert figures["metric"] == "stones received"
    (pairing,) = figures["pairings"]
    assert pairing["boards"] == int(BOARDS)
    assert pairing["ratio"] == pytest.approx(pairing["candidate_mean"] / pairing["field_mean"], abs=1e-3)
    assert pairing["ratio_lower99"] < pairing["ratio"] < pairing["ratio_upper99"]
    assert pairing["ratio"] < 1.0  # greedy receives fewer stones than random (a short run: no bound)
    assert figures["gap"] is None
    assert set(figures["decision_ms"]) == {"greedy", "random"}
    for timing in figures["decision_ms"].values():
        assert timing["decisions"] > 0
        assert 0 <= timing["p50"] <= timing["p95"] <= timing["p99"] <= timing["max"]


def test_two_processes_give_the_same_figures() -> None:
    one, two = greedy_vs_random("1"), greedy_vs_random("2")
    for figures in (one, two):
        for timing in figures["decision_ms"].values():
            del timing["p50"], timing["p95"], timing["p99"], timing["max"]  # wall-clock, not figures
    assert one == two


def test_two_processes_save_the_same_records(tmp_path: Path) -> None:
    for jobs in ("1", "2"):
        done = domeng_cli(
            "arena", "--quiet", "--boards", "4", "--rounds-per-board", "3", "--jobs", jobs,
            "--save", tmp_path / jobs,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    one, two = sorted((tmp_path / "1").iterdir()), sorted((tmp_path / "2").iterdir())
    assert [p.name for p in one] == [p.name for p in two]
    assert all(a.read_bytes() == b.read_bytes() for a, b in zip(one, two, strict=True))


def test_identical_levels_have_ratio_one_within_the_bound() -> None:
    figures = arena("--candidate", "random", "--field", "random", "--boards", "40", "--seed", "3")
    (pairing,) = figures["pairings"]
    assert pairing["ratio_lower99"] <= 1.0 <= pairing["ratio_upper99"]


def test_gap_closed_by_the_ceiling_itself_is_all_of_it() -> None:
    """The ceiling played as the candidate meets the same seeds and deals: it closes 100%."""
    figures = arena(
        "--candidate", "greedy", "--ceiling", "greedy", "--boards", "10", "--rounds-per-board", "6"
    )
    first, ceiling = figures["pairings"]
    assert first == ceiling
    assert figures["gap"] == {
        "candidate": "greedy",
        "ceiling": "greedy",
        "closed": 1.0,
        "closed_lower99": 1.0,
    }


def test_markdown_table_for_a_closing_note() -> None:
    done = domeng_cli("arena", "--quiet", "--boards", "4", "--rounds-per-board", "3", "--ceiling", "random")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("**domeng**, 5 seats")
    assert "4 boards × 3 rounds = 12 duplicate deals" in lines[0]
    assert "| candidate | field | stones received per round (candidate) |" in done.stdout
    assert re.search(r"^\| greedy \| random \| \d+\.\d{3} \| \d+\.\d{3} \| \d+\.\d{3}× \|", done.stdout, re.M)
    assert re.search(
        r"^Gap closed: greedy closes -?\d+\.\d% of the gap between random and random", done.stdout, re.M
    )
    assert "| level | decisions | p50 ms | p95 ms | p99 ms | max ms |" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--candidate", "grandmaster"], "unknown bot 'grandmaster'"),
        (["--field", "nobody"], "unknown bot 'nobody'"),
        (["--ceiling", "oracle"], "unknown bot 'oracle'"),
        (["--variant", "kozel", "--seats", "6"], "2, 3 or 4 seats"),
        (["--variant", "kozel", "--seats", "3", "--pairs"], "pairs need 4 seats"),
        (["--seats", "4"], "seats"),
        (["--boards", "0"], "must be at least 1"),
        (["--jobs", "0"], "must be at least 1"),
        (["--param", "greedy.samples=3"], "bad parameters for greedy"),
        (["--param", "greedy"], "is not LEVEL.NAME=VALUE"),
    ],
)
def test_bad_input_exits_2_without_a_traceback(args: list[str], message: str) -> None:
    done = domeng_cli("arena", "--quiet", "--boards", "2", *args)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


# -- saved records: the same deals at every table -------------------------------------------------


def saved_rounds(directory: Path) -> Iterator[tuple[int, str, list[dict[str, Any]], list[str]]]:
    """Per saved table: its board, its label, its rounds in play order and its seat names (each
    record is replayed on the way)."""
    tables: dict[tuple[int, str], list[tuple[int, dict[str, Any]]]] = defaultdict(list)
    for path in directory.glob("board-*.json"):
        match = re.fullmatch(r"board-(\d+)-(.+)-(\d+)\.json", path.name)
        assert match is not None, path.name
        doc = json.loads(path.read_text(encoding="utf-8"))
        read_record(doc)  # every saved match replays
        tables[int(match[1]), match[2]].append((int(match[3]), doc))
    for (board, label), docs in sorted(tables.items()):
        docs.sort(key=lambda item: item[0])
        rounds = [r for _, doc in docs for r in doc["rounds"]]
        yield board, label, rounds, docs[0][1]["seats"]


@pytest.mark.parametrize(
    ("variant_args", "labels", "rest"),
    [
        ([], {"field", "greedy-r0", "greedy-r1", "greedy-r2", "greedy-r3", "greedy-r4"}, "unused"),
        (["--variant", "kozel", "--pairs"], {"field", "greedy-r0", "greedy-r1"}, "bazaar"),
        (["--variant", "kozel", "--seats", "3"], {"field", "greedy-r0", "greedy-r1", "greedy-r2"}, "bazaar"),
    ],
)
def test_saved_records_hold_the_same_deals_in_every_rotation(
    tmp_path: Path, variant_args: list[str], labels: set[str], rest: str
) -> None:
    rounds_per_board = 12
    done = domeng_cli(
        "arena", "--quiet", "--boards", "3", "--rounds-per-board", str(rounds_per_board), "--seed", "9",
        "--save", tmp_path, *variant_args,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert re.search(r"saved \d+ match records", done.stdout)
    deals: dict[int, list[Any]] = {}
    seen: dict[int, set[str]] = defaultdict(set)
    for board, label, rounds, seats in saved_rounds(tmp_path):
        seen[board].add(label)
        assert len(rounds) == rounds_per_board
        dealt = [(r["hands"], r[rest]) for r in rounds]
        assert deals.setdefault(board, dealt) == dealt, f"board {board}, table {label}"
        if label == "field":
            assert all(name.endswith(" random") for name in seats)
    assert all(labels == found for found in seen.values())
    assert deals[0] != deals[1]


def test_pairs_seat_the_candidate_as_a_pair(tmp_path: Path) -> None:
    done = domeng_cli(
        "arena", "--quiet", "--boards", "1", "--rounds-per-board", "2", "--variant", "kozel", "--pairs",
        "--save", tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    seats = {label: names for _, label, _, names in saved_rounds(tmp_path)}
    assert seats["greedy-r0"] == ["P0 greedy", "P1 random", "P2 greedy", "P3 random"]
    assert seats["greedy-r1"] == ["P0 random", "P1 greedy", "P2 random", "P3 greedy"]


def test_saved_records_pass_domeng_replay(tmp_path: Path) -> None:
    done = domeng_cli("arena", "--quiet", "--boards", "2", "--rounds-per-board", "8", "--save", tmp_path)
    assert done.returncode == 0, done.stderr
    paths = sorted(tmp_path.glob("board-*.json"))
    assert len(paths) >= 12  # 2 boards × 6 tables, more where a camat election ended a match
    for path in paths:
        read_record(json.loads(path.read_text(encoding="utf-8")))
    for path in paths[:: max(1, len(paths) // 4)]:
        replayed = domeng_cli("replay", path, "--json")
        assert replayed.returncode == 0, replayed.stdout
        assert len(json.loads(replayed.stdout)["rounds"]) >= 1


def test_table_mean_puts_the_candidate_in_every_seat(tmp_path: Path) -> None:
    figures = arena("--table-mean", "--boards", "3", "--rounds-per-board", "3", "--save", str(tmp_path))
    assert figures["scheme"] == "table"
    assert figures["rotations"] == [[0, 1, 2, 3, 4]]
    seats = {label: names for _, label, _, names in saved_rounds(tmp_path)}
    assert seats["greedy-r0"] == [f"P{s} greedy" for s in range(5)]


# -- players: the levels of BOTS and the measurement-only bots -------------------------------------


class FirstLegalSeer:
    """A measurement bot that sees the whole state and plays its first legal action."""

    seen: ClassVar[list[int]] = []

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choose_seeing(self, state: State, seat: int) -> Action:
        assert state.to_act == seat
        FirstLegalSeer.seen.append(len(state.hand((seat + 1) % state.seats)))  # a hand it may not see
        return state.legal_actions()[0]


def test_measurement_bots_see_the_state(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(engine.bots.MEASUREMENT_BOTS, "first", FirstLegalSeer)
    assert known_players()[-1] == "first"
    spec = ArenaSpec("domeng", {}, None, ("greedy", "first"), "random", 2, 3, "1")
    spec.check()
    tally = ArenaTally(spec)
    for board in range(spec.boards):
        tally.add(play_board(spec, board))
    figures = tally.summary()
    assert FirstLegalSeer.seen
    assert [p["candidate"] for p in figures["pairings"]] == ["greedy", "first"]
    assert figures["gap"]["ceiling"] == "first"
    assert "first" in figures["decision_ms"]


def test_make_player_refuses_an_unknown_name() -> None:
    with pytest.raises(ValueError, match="unknown bot 'grandmaster'"):
        make_player("grandmaster", random.Random(0))


def test_make_player_knows_the_levels_and_the_ceiling() -> None:
    assert {"easy", "medium", "hard", "omniscient"} <= set(known_players())
    assert callable(getattr(make_player("omniscient", random.Random(0)).bot, "choose_seeing", None))


def test_board_results_do_not_depend_on_order() -> None:
    spec = ArenaSpec("kozel", {}, 2, ("greedy",), "random", 3, 4, "x")
    rules = make_rules("kozel", {}, 2)
    assert spec.rotations(rules) == ((0,), (1,))
    forward, backward = ArenaTally(spec), ArenaTally(spec)
    for board in range(3):
        forward.add(play_board(spec, board))
    for board in reversed(range(3)):
        backward.add(play_board(spec, board))
    assert forward.pairing("greedy") == backward.pairing("greedy")
