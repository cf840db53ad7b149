"""The engine owns the games' differences: nobody else compares variant names or probes a state,
and the client mirrors no rule facts (the views carry them)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from engine.variants import VARIANTS

ROOT = Path(__file__).resolve().parent.parent
ALLOWED = (ROOT / "engine" / "rules", ROOT / "engine" / "variants.py")
SCORE_KEYS = frozenset(
    {"table", "stones", "camat", "elections", "cycle", "bazaar", "points", "pending", "opened"}
)


def _allowed(path: Path) -> bool:
    return any(path == place or place in path.parents for place in ALLOWED)


def _constant(node: ast.expr) -> object:
    return node.value if isinstance(node, ast.Constant) else None


def switches(path: Path) -> list[str]:
    """Each ``== "kozel"``-like comparison, ``"stones" in score``-like probe and ``getattr(state,
    ...)`` in the module at ``path``, as ``file:line text``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        bad = False
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            bad = any(_constant(o) in VARIANTS for o in operands)
            bad |= (
                any(isinstance(op, ast.In | ast.NotIn) for op in node.ops)
                and _constant(node.left) in SCORE_KEYS
            )
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in {"getattr", "hasattr"}
        ):
            target = node.args[0] if node.args else None
            bad = isinstance(target, ast.Name) and target.id == "state"
        if bad:
            where = path.relative_to(ROOT) if ROOT in path.parents else path.name
            found.append(f"{where}:{node.lineno} {ast.unparse(node)}")
    return found


def modules(package: str) -> list[Path]:
    return [p for p in sorted((ROOT / package).rglob("*.py")) if not _allowed(p)]


def test_the_switch_finder_finds_each_kind_of_switch(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        'if state.variant == "kozel" or "stones" in score or getattr(state, "bazaar", None):\n'
        '    rest = "unused" if v != "domeng" else None\n',
        encoding="utf-8",
    )
    assert [line.split(" ", 1)[0].rsplit(":", 1)[1] for line in switches(sample)] == ["1", "1", "1", "2"]
    assert _allowed(ROOT / "engine" / "rules" / "kozel.py") and not _allowed(ROOT / "engine" / "record.py")


def test_the_engine_compares_no_variant_names_outside_its_rules() -> None:
    found = [line for path in modules("engine") for line in switches(path)]
    assert found == []


def test_the_server_compares_no_variant_names() -> None:
    found = [line for path in modules("app") for line in switches(path)]
    assert found == []


# What the client once re-derived, now sent in the views: the goal of 101 (K9), the pairs (K10),
# `opened` (K8), a settlement's `received` (D5) and the order of the standings.
MIRRORED = {
    "the goal of 101": re.compile(r"\b101\b"),
    "the pairs": re.compile(r"\[\s*\[\s*0\s*,\s*2\s*\]\s*,\s*\[\s*1\s*,\s*3\s*\]\s*\]|\+\s*2\)\s*%\s*4"),
    "opened": re.compile(r"points\[[^\]]+\]\s*>\s*0"),
    "summing received": re.compile(r"from_payers\.reduce"),
    "the standings order": re.compile(r"(elections|points|pending|stones)\[[^\]]*\][^;]*\|\|"),
}


_COMMENT = re.compile(r"/\*.*?\*/|(?<![:\\])//[^\n]*", re.DOTALL)


def code_of(text: str) -> str:
    """JavaScript without its comments (each comment kept as its newlines, so lines still count)."""
    return _COMMENT.sub(lambda m: "\n" * m.group().count("\n"), text)


def test_comments_are_not_code() -> None:
    assert code_of("a = 1; // 101\n/* 101\n */ b = 2; // http://x\n") == "a = 1; \n\n b = 2; \n"


@pytest.mark.parametrize("fact", sorted(MIRRORED))
def test_the_client_holds_no_rule_fact(fact: str) -> None:
    pattern = MIRRORED[fact]
    hits = []
    for path in sorted((ROOT / "static" / "js").rglob("*.js")):
        for number, line in enumerate(code_of(path.read_text(encoding="utf-8")).splitlines(), 1):
            if pattern.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert hits == []
