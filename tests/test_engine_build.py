"""The engine's build: compiled modules are used only while they match the sources (engine/__init__.py)."""

from __future__ import annotations

import json
import os
import pickle
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import engine
from engine.bots.inference import infer
from engine.bots.medium import situation_of
from engine.core import Deal, Phase
from engine.rules.domeng import Domeng, DomengState
from engine.tiles import TILES
from engine.variants import make_rules
from engine.views import player_view

ROOT = Path(__file__).resolve().parents[1]
PROBE = "import engine, engine.core, engine.bots.hard; print(engine.BUILD, Path(engine.core.__file__).name)"


def probe(root: Path, **env: str) -> tuple[str, str]:
    """What ``import engine`` picks in a fresh process whose ``engine`` is ``root/engine``: its
    stdout (the build and engine.core's file name) and its stderr."""
    clean = {k: v for k, v in os.environ.items() if k != "DOMENG_PURE_ENGINE"}
    done = subprocess.run(
        [sys.executable, "-c", f"from pathlib import Path; {PROBE}"],
        cwd=root,
        env={**clean, "PYTHONPATH": str(root), **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip(), done.stderr.strip()


def copy_engine(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "engine", tmp_path / "engine", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def test_the_record_lists_every_compiled_module() -> None:
    digests = engine.source_digests()
    assert list(digests) == list(engine.COMPILED)
    assert all(len(d) == 64 for d in digests.values())


def test_without_a_record_the_engine_is_pure(tmp_path: Path) -> None:
    root = copy_engine(tmp_path)
    (root / "engine" / "compiled.json").unlink(missing_ok=True)
    assert probe(root) == ("pure core.py", "")


def test_a_stale_record_falls_back_to_the_sources(tmp_path: Path) -> None:
    """Whether or not this checkout is compiled: a record that no longer matches a source means
    every engine module comes from its .py file, extension modules beside them or not."""
    root = copy_engine(tmp_path)
    digests = engine.source_digests()
    digests["engine.core"] = "0" * 64
    (root / "engine" / "compiled.json").write_text(json.dumps({"sources": digests}))
    assert probe(root) == ("pure core.py", "")  # silently: a process's stderr may be read


def test_pure_python_is_forced_by_the_environment(tmp_path: Path) -> None:
    root = copy_engine(tmp_path)
    assert probe(root, DOMENG_PURE_ENGINE="1") == ("pure core.py", "")


def test_a_current_build_is_used() -> None:
    record = ROOT / "engine" / "compiled.json"
    if not record.exists() or json.loads(record.read_text())["sources"] != engine.source_digests():
        pytest.skip("no current compiled build here (scripts/compile_engine.py)")
    out, _ = probe(ROOT)
    assert out.startswith("compiled core.") and out.endswith(".so")


def test_spelled_out_new_keeps_keyword_construction() -> None:
    """`Deal.__new__` and `State.__new__` (written for the compiled build) accept what __init__ does."""
    hands = [TILES[i : i + 5] for i in range(0, 25, 5)]
    assert Deal(hands=hands, rest=TILES[25:]) == Deal(hands, TILES[25:])
    rules = Domeng()
    state = DomengState(rules=rules, table=25, stones=[0] * 5, camat=None, leader=None, start=None)
    assert state.fork().table == 25


@pytest.mark.parametrize("variant", ["domeng", "kozel"])
def test_views_rounds_and_rules_cross_processes(variant: str) -> None:
    """What the bot and review workers receive and send pickles to an equal value, on either build
    (engine.pickling: a compiled frozen dataclass cannot be unpickled through its default state)."""
    rules = make_rules(variant, {}, None)
    rng = random.Random(3)
    state = rules.new_match()
    state.start_round(rules.deal(rng))
    values: list[object] = [rules]
    while state.phase is Phase.PLAYING:
        view = player_view(state, state.to_act)
        values += [view, situation_of(view), infer(view)]
        state.apply(rng.choice(view.legal))
    values += [state.history, state.log, state.outcome, state.deal]
    for value in values:
        assert pickle.loads(pickle.dumps(value)) == value
