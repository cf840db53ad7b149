"""``domeng simulate`` through the real console script: figures, determinism, saved records."""

from __future__ import annotations

import hashlib
import json
import socket
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

from engine.core import Phase
from engine.events import DomengOutcome, Passed
from engine.record import read_record
from tests.conftest import domeng, domeng_cli

ROUNDS = 60
OUTCOME_KEYS = {"out", "ceki", "pollo", "block, mattikkeng", "block, no mattikkeng"}
FIGURE_KEYS = {
    "rounds",
    "matches",
    "actions",
    "outcomes",
    "outcome_share",
    "wins",
    "stones_received",
    "stones_paid",
    "stones_cancelled",
    "passes",
    "passebunge",
    "camat_elections",
    "goats",
    "cycles",
    "rounds_per_cycle",
    "bots",
    "seed",
}


def run_simulate(seed: str, *extra: str) -> str:
    """The stdout of ``domeng simulate --rounds ROUNDS --seed SEED --json --quiet``."""
    done = domeng_cli(
        "simulate",
        "--rounds",
        str(ROUNDS),
        "--seed",
        seed,
        "--bots",
        "random,greedy",
        "--json",
        "--quiet",
        *extra,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # --quiet: no progress bar
    return done.stdout


simulate_json = cache(run_simulate)


def figures(seed: str, *extra: str) -> dict[str, Any]:
    parsed: dict[str, Any] = json.loads(simulate_json(seed, *extra))
    return parsed


def test_simulate_json_reports_every_figure() -> None:
    result = figures("7")
    assert set(result) == FIGURE_KEYS
    assert (result["rounds"], result["seed"]) == (ROUNDS, "7")
    assert result["bots"] == ["random", "greedy", "random", "greedy", "random"]
    assert set(result["outcomes"]) <= OUTCOME_KEYS
    assert sum(result["outcomes"].values()) == ROUNDS == sum(result["wins"])
    assert set(result["outcome_share"]) == set(result["outcomes"])
    assert all(len(result[key]) == 5 for key in ("wins", "stones_received", "stones_paid", "camat_elections"))
    assert result["passebunge"] <= result["passes"]


def test_simulate_counts_cycles_by_camat_elections() -> None:
    result = figures("7")
    elections = sum(result["camat_elections"])
    assert elections >= 2
    assert result["cycles"] == elections
    # camat_target 1: every election ends a match; the match in play at the end is counted too.
    assert result["matches"] in (elections, elections + 1)
    cycle = result["rounds_per_cycle"]
    assert set(cycle) == {"mean", "median", "min", "max"}
    assert 1 <= cycle["min"] <= cycle["median"] <= cycle["max"] <= ROUNDS
    assert cycle["min"] <= cycle["mean"] <= cycle["max"]


def test_simulate_is_deterministic_by_seed() -> None:
    assert simulate_json("7") == run_simulate("7")
    assert figures("7") != figures("8")


def test_simulate_camat_target_zero_plays_one_long_match() -> None:
    result = figures("7", "--camat-target", "0")
    assert result["matches"] == 1
    assert sum(result["camat_elections"]) == result["cycles"]


def test_simulate_text_output_names_the_bots_and_figures() -> None:
    done = domeng_cli("simulate", "--rounds", "20", "--seed", "3", "--bots", "greedy", "--quiet")
    assert done.returncode == 0
    assert done.stdout.startswith("20 rounds · ")
    assert " 1 matches" not in done.stdout and " 1 passes" not in done.stdout  # plurals by count
    assert "camat elections" in done.stdout and done.stdout.count("greedy") == 5


def test_simulate_rejects_unknown_bots_and_bad_round_counts() -> None:
    unknown = domeng_cli("simulate", "--rounds", "5", "--bots", "random,oracle", "--quiet")
    assert (unknown.returncode, unknown.stdout) == (2, "")
    assert "oracle" in unknown.stderr
    zero = domeng_cli("simulate", "--rounds", "0")
    assert zero.returncode == 2
    gap = domeng_cli("simulate", "--rounds", "5", "--bots", "random,,greedy", "--quiet")
    assert gap.returncode == 2 and "''" in gap.stderr  # an empty name is a mistake, not a skip


def test_simulate_save_to_a_place_it_cannot_write_says_so(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("", encoding="utf-8")
    done = domeng_cli("simulate", "--rounds", "3", "--save", str(blocked / "records"), "--quiet")
    assert (done.returncode, done.stdout) == (2, "")
    assert "cannot save records" in done.stderr and "Traceback" not in done.stderr


def test_simulate_text_output_when_no_cycle_ends() -> None:
    done = domeng_cli("simulate", "--rounds", "1", "--seed", "1", "--quiet")
    assert done.returncode == 0 and "None" not in done.stdout
    assert "no cycle ended" in done.stdout


def test_simulate_save_writes_records_that_replay(tmp_path: Path) -> None:
    saved = tmp_path / "records"
    result = figures("11", "--save", str(saved))
    paths = sorted(saved.glob("match-*.json"))
    assert len(paths) == result["matches"] >= 2
    assert paths[0].name == "match-00001.json"

    received = [0] * 5
    rounds = elections = 0
    for path in paths:
        replayed = domeng_cli("replay", path, "--json")
        assert replayed.returncode == 0, replayed.stdout
        report = json.loads(replayed.stdout)
        assert report == read_record(json.loads(path.read_text(encoding="utf-8"))).report()
        rounds += len(report["rounds"])
        elections += sum(r["camat_elected"] for r in report["rounds"])
        received = [a + b for a, b in zip(received, stones_received(path), strict=True)]
    assert (rounds, elections) == (result["rounds"], sum(result["camat_elections"]))
    assert received == result["stones_received"]


def stones_received(path: Path) -> list[int]:
    """Stones each seat received in a saved record, from replaying its rounds event by event."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    result = read_record(doc)
    state = result.rules.new_match(doc.get("start"))
    received = [0] * 5
    for log in result.rounds:
        state.start_round(log.deal)
        for action in log.actions:
            for event in state.apply(action):
                if isinstance(event, Passed) and event.settlement is not None:
                    received[event.settlement.receiver] += event.settlement.received
        assert isinstance(log.outcome, DomengOutcome) and state.phase is not Phase.PLAYING
        received[log.outcome.settlement.receiver] += log.outcome.settlement.received
    return received


def test_verify_deal_rederives_the_deal_from_a_revealed_seed() -> None:
    """The fair-deal check (issue 3): the seed's SHA-256 is the commitment, and the seed deals
    exactly the hands random.Random(seed) gives the engine."""
    seed = "5f" * 32
    commitment = hashlib.sha256(seed.encode()).hexdigest()
    run = [sys.executable, "-m", "app.cli", "verify-deal", seed, "--commitment", commitment]
    done = subprocess.run(run, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    deal = domeng().deal_from_seed(seed)
    header, first = done.stdout.splitlines()[:2]
    assert header.startswith("deal for domeng with 5 seats")  # the commitment does not say the game
    assert first == "P0: " + " ".join(str(t) for t in deal.hands[0])
    assert "unused: " + " ".join(str(t) for t in deal.rest) in done.stdout
    assert "commitment matches" in done.stdout
    bad = subprocess.run([*run[:-1], "0" * 64], capture_output=True, text=True, check=False)
    assert bad.returncode == 1 and "DOES NOT match" in bad.stdout


def test_verify_deal_tells_how_to_ask_for_another_game_only_when_it_was_not_given() -> None:
    """A new user's report: the first line said "(another game: --variant and --seats)" even when
    both were given. It says so only when the game or its seats were left out."""
    seed = "5f" * 32
    given = domeng_cli("verify-deal", seed, "--variant", "kozel", "--seats", "3")
    assert given.returncode == 0, given.stderr
    assert given.stdout.splitlines()[0] == "deal for kozel with 3 seats"
    for args in ((), ("--variant", "kozel"), ("--seats", "5")):
        done = domeng_cli("verify-deal", seed, *args)
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines()[0].endswith(" seats (another game: --variant and --seats)"), args


def test_verify_deal_refuses_what_the_server_cannot_have_sent_as_the_api_does() -> None:
    """A seed that is not 64 lowercase hex digits, or a commitment that is not 64 hex digits, is
    refused with the API's code and words on one line and status 2, and no deal is printed."""
    seed = "5f" * 32
    cases = [
        (("5F" * 32,), "invalid_seed"),
        (("5f" * 31,), "invalid_seed"),
        (("round-3",), "invalid_seed"),
        ((seed, "--commitment", "ab" * 31), "invalid_commitment"),
        ((seed, "--commitment", "xy" * 32), "invalid_commitment"),
    ]
    for args, code in cases:
        done = domeng_cli("verify-deal", *args)
        assert done.returncode == 2, (args, done.stdout)
        assert done.stdout == ""
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"domeng verify-deal: {code}: a "), done.stderr
    upper = domeng_cli("verify-deal", seed, "--commitment", hashlib.sha256(seed.encode()).hexdigest().upper())
    assert upper.returncode == 0 and "commitment matches" in upper.stdout  # either case, as the API


def test_serve_on_a_port_in_use_says_so_before_anything_starts(tmp_path: Path) -> None:
    """A port another program listens on: ``domeng serve`` says the port is in use and exits 1,
    before migrating the database or logging ``server_ready`` (it used to log both, and
    "Application startup complete", then fail to bind with status 3)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = domeng_cli(
            "serve", "--host", "127.0.0.1", "--port", str(port), "--data-dir", tmp_path / "data"
        )
    said = done.stdout + done.stderr
    assert done.returncode == 1, said
    assert f"domeng serve: port {port} is in use on 127.0.0.1" in done.stderr
    assert "server_ready" not in said and "startup complete" not in said
    assert not (tmp_path / "data" / "domeng.sqlite3").exists()  # nothing was migrated
