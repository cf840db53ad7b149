"""Every module of engine/ and app/ keeps a complete, sorted ``__all__`` (as httpx's
tests/test_exported_members.py does for its package).

A module's public names are the non-underscore names it defines at top level: functions, classes
and assigned constants, not names it imports. A package's ``__init__`` may also re-export what it
imports from its own submodules (``engine.bots`` re-exports its bots). ``__all__`` is sorted the
way ruff's RUF022 sorts it: SCREAMING_CASE constants, then CamelCase classes, then the rest.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "app")


def module_names() -> list[str]:
    """Every module under engine/ and app/ by its dotted name (a package by its ``__init__``; no
    ``__main__`` script)."""
    names = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            elif parts[-1] == "__main__":
                continue  # a package's script (``python -m``): importing it runs it
            names.append(".".join(parts))
    return names


def _assigned(target: ast.expr) -> set[str]:
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, ast.Tuple | ast.List):
        return set().union(*(_assigned(t) for t in target.elts))
    return set()


def _top_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements that run at module level, looking into ``if``/``try`` blocks."""
    out: list[ast.stmt] = []
    for node in body:
        out.append(node)
        if isinstance(node, ast.If):
            out += _top_level(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            out += _top_level(node.body + node.orelse + node.finalbody)
    return out


def _from_submodule(node: ast.ImportFrom, package: str) -> bool:
    return node.level > 0 or (node.module or "").startswith(f"{package}.")


def public_names(module: str) -> set[str]:
    """The public names ``module`` defines (and, for a package, re-exports from its submodules)."""
    path = ROOT / Path(*module.split("."))
    is_package = path.is_dir()
    source = (path / "__init__.py") if is_package else path.with_suffix(".py")
    names: set[str] = set()
    for node in _top_level(ast.parse(source.read_text(encoding="utf-8")).body):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= set().union(*(_assigned(t) for t in node.targets))
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            names |= _assigned(node.target)
        elif isinstance(node, ast.ImportFrom) and is_package and _from_submodule(node, module):
            names |= {alias.asname or alias.name for alias in node.names}
    return {name for name in names if not name.startswith("_")}


def ruff_order(name: str) -> tuple[int, str]:
    """RUF022's "isort-style" order: constants, then classes, then everything else."""
    if len(name) > 1 and name.isupper():
        return (0, name)
    return (1 if name[:1].isupper() else 2, name)


def test_every_package_is_covered() -> None:
    names = module_names()
    assert {"engine.core", "engine.rules.domeng", "engine.bots", "app.cli"} <= set(names)


@pytest.mark.parametrize("module", module_names())
def test_all_lists_exactly_the_public_names_in_order(module: str) -> None:
    imported = importlib.import_module(module)
    exported = getattr(imported, "__all__", None)
    assert exported is not None, f"{module} has no __all__"
    assert list(exported) == sorted(exported, key=ruff_order), f"{module}.__all__ is not sorted"
    assert len(set(exported)) == len(exported), f"{module}.__all__ repeats a name"
    expected = public_names(module)
    assert sorted(set(exported) - expected) == [], f"{module}.__all__ lists names it does not define"
    assert sorted(expected - set(exported)) == [], f"{module} defines public names missing from __all__"
    assert all(hasattr(imported, name) for name in exported)


def test_ruff_order_puts_constants_then_classes_then_functions() -> None:
    names = ["parse_end", "Play", "MAX_SEATS", "Action", "chain_line", "FULL_SET"]
    assert sorted(names, key=ruff_order) == [
        "FULL_SET",
        "MAX_SEATS",
        "Action",
        "Play",
        "chain_line",
        "parse_end",
    ]
