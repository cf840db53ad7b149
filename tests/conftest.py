"""Shared builders for the tests: tiles, deals, hand-made positions, moves and state snapshots.

Scripted tests read like the domain (STYLE.md): a builder sets hands and chain, moves follow in
RECORD.md's notation, exact stones and winners are asserted.

>>> tiles("6-6 5-3")
(Tile.parse('6-6'), Tile.parse('3-5'))
"""

from __future__ import annotations

import ast
import os
import random
import re
import subprocess
import sys
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from engine.actions import Action, End, Play, parse_action
from engine.core import Deal, Phase, State
from engine.events import DomengOutcome, Event
from engine.record import write_record
from engine.rules.base import Rules
from engine.rules.domeng import Domeng, DomengState
from engine.tiles import TILES, Tile
from engine.variants import make_rules
from engine.views import player_view

SEATS = ("Ana", "Budi", "Citra", "Dewi", "Eko")
"""Display names for records, in seat order P0..P4."""

ORDERED_HANDS = (
    "0-0 0-1 0-2 0-3 0-4",
    "0-5 0-6 1-1 1-2 1-3",
    "1-4 1-5 1-6 2-2 2-3",
    "2-4 2-5 2-6 3-3 3-4",
    "3-5 3-6 4-4 4-5 4-6",
)
"""The set dealt in index order (5-5, 5-6, 6-6 unused): in a first round P4 must open with 4-4."""

# RULES.md worked example 2 as a whole deal: P0 holds 6-6 and must open with it (D11); P1 holds only
# 0s, 1s and 2s, so it cannot answer 6-6 nor [5|4] (two passebunge), places 1-2 on [6|2], and then
# passes on [6|5] (an ordinary pass). Each line is one seat's hand.
PASSEBUNGE_HANDS = (
    "6-6 4-4 3-6 2-2 2-3",
    "0-0 0-1 0-2 1-1 1-2",
    "5-6 3-5 1-3 0-3 0-4",
    "4-6 2-4 3-4 1-4 1-5",
    "5-5 3-3 4-5 0-5 0-6",
)
PASSEBUNGE_UNUSED = "1-6 2-5 2-6"
PASSEBUNGE_PLAY: tuple[dict[str, object], ...] = (
    {"seat": 0, "play": "6-6"},  # [6|6]
    {"seat": 1, "pass": True},  # passebunge: 2 stones
    {"seat": 2, "play": "5-6", "end": "L"},  # [5|6]
    {"seat": 3, "play": "4-6", "end": "R"},  # [5|4]
    {"seat": 4, "play": "5-5", "end": "L"},  # [5|4]
    {"seat": 0, "play": "4-4", "end": "R"},  # [5|4]
    {"seat": 1, "pass": True},  # passebunge again: 2 more
    {"seat": 2, "play": "3-5", "end": "L"},  # [3|4]
    {"seat": 3, "play": "2-4", "end": "R"},  # [3|2]
    {"seat": 4, "play": "3-3", "end": "L"},  # [3|2]
    {"seat": 0, "play": "3-6", "end": "L"},  # [6|2]
    {"seat": 1, "play": "1-2", "end": "R"},  # [6|1]: P1 has placed
    {"seat": 2, "play": "1-3", "end": "R"},  # [6|3]
    {"seat": 3, "play": "3-4", "end": "R"},  # [6|4]
    {"seat": 4, "play": "4-5", "end": "R"},  # [6|5]
    {"seat": 0, "pass": True},  # P0 {2-2, 2-3}: 1 stone
    {"seat": 1, "pass": True},  # P1 {0-0, 0-1, 0-2, 1-1}: 1 stone now
)


def tiles(text: str) -> tuple[Tile, ...]:
    """The tiles named in a space-separated string, in that order: ``tiles("6-6 1-4")``."""
    return tuple(Tile.parse(t) for t in text.split())


def domeng(**options: object) -> Domeng:
    """Domeng's rules with RECORD.md ``options`` (defaults from RULES.md)."""
    rules = make_rules("domeng", options)
    assert isinstance(rules, Domeng)
    return rules


def deal(*hands: str, unused: str | None = None) -> Deal:
    """A Domeng deal from five hands written as strings; ``unused`` defaults to the 3 tiles that
    nobody holds (D10)."""
    parsed = tuple(tiles(hand) for hand in hands)
    held = {t for hand in parsed for t in hand}
    rest = tiles(unused) if unused is not None else tuple(t for t in TILES if t not in held)
    return Deal(parsed, rest)


def new_round(
    *hands: str, rules: Domeng | None = None, start: Mapping[str, object] | None = None
) -> DomengState:
    """A match (from ``start``, or a new one) with its first round dealt from ``hands``."""
    state = (rules or domeng()).new_match(start)
    state.start_round(deal(*hands))
    return state


def position(
    hands: Sequence[str],
    ends: tuple[int, int],
    *,
    to_act: int,
    last_mappano: int,
    table: int = 25,
    stones: Sequence[int] | None = None,
    placed: Iterable[int] = range(5),
    camat: int | None = None,
    rules: Domeng | None = None,
) -> DomengState:
    """A mid-round position: ``hands`` per seat as strings, the chain's open ``ends``, who acts, the
    last mappano, the stones and who has placed a tile this round (by default everyone)."""
    return (rules or domeng()).position(
        [hand.split() for hand in hands],
        ends,
        to_act=to_act,
        last_mappano=last_mappano,
        table=table,
        stones=stones,
        placed=placed,
        camat=camat,
    )


def play(seat: int, tile: str, end: End | None = None) -> Play:
    """A placement in RECORD.md's terms: ``play(2, "5-1", "R")``; an opening tile is laid as written."""
    action = parse_action({"seat": seat, "play": tile, "end": end})
    assert isinstance(action, Play)
    return action


def run(state: State, *actions: Action | Mapping[str, object]) -> list[Event]:
    """Apply ``actions`` (objects or RECORD.md action dicts) in order; returns all their events."""
    events: list[Event] = []
    for action in actions:
        events += state.apply(action if not isinstance(action, Mapping) else parse_action(action))
    return events


def outcome(state: State) -> DomengOutcome:
    """The Domeng outcome of the round that ``state`` has just finished."""
    assert state.phase is not Phase.PLAYING, "the round is still being played"
    assert isinstance(state.outcome, DomengOutcome)
    return state.outcome


def finish_with_first_legal(state: State, limit: int = 200) -> None:
    """Play the round in progress to its end, each seat taking its first legal action."""
    for _ in range(limit):
        if state.phase is not Phase.PLAYING:
            return
        state.apply(state.legal_actions()[0])
    raise AssertionError(f"the round did not end within {limit} actions")


def fingerprint(state: State) -> dict[str, Any]:
    """Everything observable about ``state`` (public view, every hand, legal actions, the record
    when it has a deal), to show that a rejected action left it unchanged."""
    snapshot: dict[str, Any] = {
        "view": player_view(state, None).to_json(),
        "hands": [[str(t) for t in state.hand(seat)] for seat in range(state.seats)],
        "to_act": state.to_act,
        "leader": state.leader,
        "legal": [a.to_json() for a in state.legal_actions()],
        "actions": [a.to_json() for a in state.actions],
    }
    if state.deal is not None:
        snapshot["record"] = write_record(state, SEATS[: state.seats])
    return snapshot


DOMENG_SCRIPT = Path(sys.executable).with_name("domeng")
"""The ``domeng`` console script installed next to this interpreter (``.venv/bin/domeng``)."""


def domeng_cli(*args: str | Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real ``domeng`` console script with ``args`` (and ``stdin`` as its standard input);
    returns its exit status and output."""
    return subprocess.run(
        [str(DOMENG_SCRIPT), *(str(a) for a in args)],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def rules() -> Domeng:
    """Domeng with RULES.md's default options (camat_target 1)."""
    return domeng()


def forked_independently(rules: Rules, seed: int, steps: int) -> State:
    """Deal from ``seed``, make up to ``steps`` random legal actions, fork, and play the fork to
    the round's end: the original must not move (and, when it is still playing, applying to it must
    not move the fork). Returns the finished fork."""
    state = rules.new_match()
    state.start_round(rules.deal_from_seed(seed))
    choice = random.Random(seed)
    for _ in range(steps):
        if state.phase is not Phase.PLAYING:
            break
        state.apply(choice.choice(state.legal_actions()))
    fork = state.fork()
    original = fingerprint(state)
    assert fingerprint(fork) == original
    while fork.phase is Phase.PLAYING:
        fork.apply(fork.legal_actions()[-1])
    assert fingerprint(state) == original
    if state.phase is Phase.PLAYING:
        forked = fingerprint(fork)
        state.apply(state.legal_actions()[0])
        assert fingerprint(fork) == forked
    return fork


@pytest.fixture(scope="module")
def browser(request: pytest.FixtureRequest) -> Iterator[Any]:
    """Debian's Chromium driven by Playwright (`tests.browserkit.launch`), one per test module
    (not per session: Playwright's sync API holds an event loop while it runs, and the in-process
    tests need asyncio.run); its headless shell unless the module says ``FULL_CHROMIUM = True``, with
    the module's ``BROWSER_ARGS`` (say ``["--autoplay-policy=user-gesture-required"]``) if any.
    Skips when Playwright is not installed."""
    from tests.browserkit import launch  # noqa: PLC0415 - only browser tests need it

    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as playwright:
        full = getattr(request.module, "FULL_CHROMIUM", False)
        chromium = launch(playwright, full=full, extra_args=getattr(request.module, "BROWSER_ARGS", ()))
        yield chromium
        chromium.close()


@pytest.fixture(autouse=True)
def _contexts_closed(request: pytest.FixtureRequest) -> Iterator[None]:
    """After a browser test, close every context it left open (a failed test leaves its pages):
    the module's browser lives on for the next tests, and a forgotten page would go on playing."""
    yield
    if "browser" in request.fixturenames:
        for context in request.getfixturevalue("browser").contexts:
            context.close()


SHARED_MODULE = re.compile(r'@pytest\.fixture\(scope="module"|\bbrowser: Any\b')
"""A test module that starts a server process (or a browser) once for all its tests."""


def shared_modules(tests: Path = Path(__file__).parent) -> frozenset[str]:
    """The test modules (paths as in node ids, ``tests/test_x.py``) that `SHARED_MODULE` matches."""
    return frozenset(
        f"{tests.name}/{path.name}"
        for path in sorted(tests.glob("test_*.py"))
        if SHARED_MODULE.search(path.read_text(encoding="utf-8"))
    )


PROCESSES = re.compile(r"\bServerProcess\(|\bservers?\b: |\bcluster\b")
"""A test module whose tests run real server processes (or a cluster of them)."""


ENGINE_DIR = Path(__file__).parent.parent / "engine"
ENGINE_RERUN = os.environ.get("DOMENG_ENGINE_RERUN", "") not in ("", "0")
"""scripts/test's second pass: the engine's tests again on its pure-Python sources, just after the
whole suite ran them on the compiled build. The long random-play runs play the first quarter of
their rounds there (the same seeds, so the same rounds), which still runs the rules as written
through every kind of round end; their whole length ran in the first pass."""

ENGINE_KITS = frozenset({"engine", "tests.conftest", "tests.kozelkit"})
"""What an engine test (`engine_module`) may import of this project: the engine and the test kits
that are the engine's alone (each imports nothing of the project but the engine)."""


def engine_module(path: Path) -> bool:
    """Whether the test module at ``path`` is one of the engine's own tests, which scripts/test
    runs again on the engine's pure-Python sources (marker ``engine``): every module of this
    project it imports (``app``, ``engine``, ``tests``, ``benchmarks``) is in `ENGINE_KITS` or the
    engine's, and it imports the engine; or it says so itself (``pytestmark = pytest.mark.engine``:
    an engine test that also reads through an app module). Derived from the imports, so a new
    engine test is never left out of that run."""
    text = path.read_text(encoding="utf-8")
    if re.search(r"^pytestmark = pytest\.mark\.engine\b", text, re.MULTILINE):
        return True
    project: set[str] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            top = name.split(".")[0]
            if top in ("app", "engine", "benchmarks"):
                project.add(top)
            elif top == "tests":
                project.add(".".join(name.split(".")[:2]))
    return "engine" in project and project <= ENGINE_KITS


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    """In the second pass (`ENGINE_RERUN`) a test module that holds none of the engine's tests
    (`engine_module`, read without importing it) is not collected at all: importing every module
    of the suite, with its server, browser and database kits, took 13 s in each of the five
    pytest processes for tests that ``-m engine`` then deselected."""
    if ENGINE_RERUN and collection_path.suffix == ".py" and collection_path.name.startswith("test_"):
        return not engine_module(collection_path)
    return None


@pytest.hookimpl(tryfirst=True)  # the ``engine`` marks are set before ``-m`` selects by them
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the engine's own tests ``engine``: its doctests (engine/) and the test modules that
    `engine_module` finds. Then order them longest first: the browser tests, then the modules that
    run server processes, then the rest, each kind in its collected order (a module's tests stay
    together). Workers take tests in this order, so the last ones to finish are short and no worker
    is left alone with a long test while the others wait (measured: scripts/test's tail on an idle
    2-core machine)."""
    engines: dict[Path, bool] = {}
    for item in items:
        path = Path(str(item.path))
        if path not in engines:
            engines[path] = path.is_relative_to(ENGINE_DIR) or (
                path.name.startswith("test_") and path.suffix == ".py" and engine_module(path)
            )
        if engines[path]:
            item.add_marker(pytest.mark.engine)
    kinds: dict[Path, int] = {}

    def kind(item: pytest.Item) -> int:
        if "browser" in getattr(item, "fixturenames", ()):
            return 0
        path = Path(str(item.path))
        if path not in kinds:
            text = path.read_text(encoding="utf-8") if path.suffix == ".py" else ""
            kinds[path] = 1 if PROCESSES.search(text) else 2
        return kinds[path]

    items.sort(key=kind)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup`` (scripts/test): the tests of a module that shares a server or a browser
    (`shared_modules`) run on one worker together, so that server starts once, not once per
    worker; every other test is scheduled on its own, so no slow test holds a group back. Groups
    go out first, most tests first. (xdist's own loadgroup reads ``xdist_group`` marks through
    node ids, which pytest 9 no longer lets a plugin change: pytest-xdist issue #1386.)"""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling  # noqa: PLC0415 - only under xdist

    shared = shared_modules()

    class ModuleGroups(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return module if module in shared else nodeid

    return ModuleGroups(config, log)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failed test that used a `server` fixture gets the tail of that server's log in its report:
    what the room did is often the half of the story that the test alone cannot tell."""
    report = yield
    server = getattr(item, "funcargs", {}).get("server")
    if report.failed and call.when == "call" and hasattr(server, "log"):
        tail = "\n".join(server.log().splitlines()[-80:])
        report.sections.append(("server log, last 80 lines", tail))
    return report
