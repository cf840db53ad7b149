"""The engine's own tests are found by their imports (tests/conftest.py `engine_module`), never by
a list kept by hand: scripts/test runs those marked ``engine`` again on the engine's pure-Python
sources, and a new engine test is among them without anyone adding it anywhere."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import engine_module

TESTS = Path(__file__).parent

LISTED = [
    "test_domeng_rules.py",
    "test_domeng_examples.py",
    "test_kozel_rules.py",
    "test_kozel_examples.py",
    "test_kozel_random_play.py",
    "test_random_play.py",
    "test_bots_levels.py",
    "test_bots_hard_search.py",
    "test_rules_bot_facts.py",
    "test_rule_facts_placement.py",
    "test_engine_errors.py",
    "test_engine_build.py",
    "test_deal_json.py",
    "test_records.py",
    "test_kozel_records.py",
    "test_replay_loop.py",
    "test_review.py",
    "test_round_tally.py",
    "test_scores.py",
    "test_match_stop.py",
]
"""The modules scripts/test listed by hand before the list was derived."""

HAND_MARK = re.compile(r"\bmark\.engine\b")
"""A mark ``engine`` set by hand on a test or a module (``pytestmark``, a decorator); this module
names it only to look for it."""


def test_the_engines_tests_are_found_by_their_imports() -> None:
    found = {path.name for path in TESTS.glob("test_*.py") if engine_module(path)}
    assert set(LISTED) <= found  # none of those is lost
    assert "test_kozel_narration.py" in found  # one the hand-kept list had left out
    # the app's tests are not the engine's; this module imports no engine: not one either
    assert not found & {"test_rooms.py", "test_store.py", "test_chat.py", "test_engine_marked.py"}


def test_the_engine_mark_selects_the_engines_doctests_and_tests(tmp_path: Path) -> None:
    """``-m engine`` keeps engine/'s doctests and the engine's test modules, and leaves the rest out
    (the marks are set before the selection)."""
    listed = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "engine"),
            *("engine/hashing.py", "tests/test_domeng_rules.py", "tests/test_rooms.py"),
        ],
        cwd=TESTS.parent,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert listed.returncode == 0, listed.stdout + listed.stderr
    ids = [line for line in listed.stdout.splitlines() if "::" in line]
    assert any(i.startswith("engine/hashing.py::") for i in ids), listed.stdout
    assert any(i.startswith("tests/test_domeng_rules.py::") for i in ids), listed.stdout
    assert not any(i.startswith("tests/test_rooms.py::") for i in ids), listed.stdout


def test_the_second_pass_collects_the_same_engine_tests_without_importing_the_rest() -> None:
    """scripts/test's second pass (``DOMENG_ENGINE_RERUN=1``) does not import the modules that hold
    none of the engine's tests (tests/conftest.py `pytest_ignore_collect`), and selects exactly the
    tests that ``-m engine`` selects without it: those of engine/ and of the engine's modules (the
    ``engine`` marks are set by module; a test marked by hand elsewhere would be left out of the
    second pass, so none is)."""

    def engine_ids(rerun: str, paths: list[str]) -> tuple[list[str], int]:
        """The engine tests' ids, and how many tests were collected before ``-m`` selected."""
        listed = subprocess.run(
            [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "engine", *paths],
            cwd=TESTS.parent,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
            env={**os.environ, "DOMENG_ENGINE_RERUN": rerun},
        )
        assert listed.returncode == 0, listed.stdout + listed.stderr
        collected = re.search(r"(\d+)(?:/(\d+))? tests? collected", listed.stdout)
        assert collected, listed.stdout
        return [line for line in listed.stdout.splitlines() if "::" in line], int(
            collected[2] or collected[1]
        )

    modules = sorted(TESTS.glob("test_*.py"))
    engines = [f"{TESTS.name}/{path.name}" for path in modules if engine_module(path)]
    # (collecting the whole suite instead of the engine's modules alone costs 10 s of CPU)
    rerun, rerun_collected = engine_ids("1", ["engine", TESTS.name])
    first, first_collected = engine_ids("0", ["engine", *engines])
    assert rerun == first and len(first) > 400
    assert any(i.startswith("engine/hashing.py::") for i in rerun)
    assert first_collected == len(first)
    # beside them the rerun collects the doctests of the kits it imports (tests/conftest.py,
    # tests/kozelkit.py), never the app's test modules (about 1,400 tests)
    assert rerun_collected <= len(rerun) + 10, rerun_collected
    marked_elsewhere = [
        p.name
        for p in modules
        if p.name != Path(__file__).name and not engine_module(p) and HAND_MARK.search(p.read_text("utf-8"))
    ]
    assert marked_elsewhere == []
