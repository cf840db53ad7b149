"""Every doctest of the project runs in the suite: pytest's ``testpaths`` (what a bare ``pytest``
collects) and scripts/test's pytest run name each package that holds doctests, tests/ too, and
each once. app/'s doctests were collected by neither, so a wrong example there went unseen."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _testpaths() -> list[str]:
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    paths: list[str] = settings["tool"]["pytest"]["ini_options"]["testpaths"]
    return paths


def _with_doctests() -> set[str]:
    """The top folders of the project's packages (app, engine) whose sources hold a doctest."""
    return {
        package
        for package in ("app", "engine")
        if any(">>> " in path.read_text(encoding="utf-8") for path in (ROOT / package).rglob("*.py"))
    }


def test_the_suite_collects_every_package_with_doctests_once() -> None:
    paths = _testpaths()
    assert _with_doctests() == {"app", "engine"}
    assert {"tests", "app", "engine"} <= set(paths)
    assert len(paths) == len(set(paths))
    # scripts/test's run of the whole suite (its first pytest line) names the same paths, each once
    script = (ROOT / "scripts" / "test").read_text(encoding="utf-8")
    line = next(line for line in script.splitlines() if re.match(r"\.venv/bin/pytest -n", line))
    named = [word for word in shlex.split(line) if (ROOT / word).is_dir()]
    assert sorted(named) == sorted(paths), line
