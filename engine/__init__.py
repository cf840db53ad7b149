"""The rules engine (docs/engine.md); this file only picks its build: compiled or pure Python.

``scripts/compile_engine.py`` may compile the hot modules (`COMPILED`) with mypyc from the same
typed sources: the extension modules sit beside their ``.py`` files, which Python's import system
then prefers, and ``engine/compiled.json`` records each source's SHA-256 as it was built. Here,
before any of those modules is imported, the engine falls back to its ``.py`` sources, all of them
and for the whole process, when the record is missing or no longer matches a source (an edit
since the build: a stale extension must never shadow the rules as written; the next
`scripts/bootstrap --dev` rebuilds), or when the environment sets ``DOMENG_PURE_ENGINE=1``.
`BUILD` says which it is: ``compiled`` or ``pure``.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

__all__ = ["BUILD", "COMPILED", "MANIFEST", "source_digests"]

COMPILED = (
    "engine.tiles",
    "engine.actions",
    "engine.events",
    "engine.core",
    "engine.rules.base",
    "engine.rules.domeng",
    "engine.rules.kozel",
    "engine.views",
    "engine.bots.facts",
    "engine.bots.worlds",
    "engine.bots.medium",
    "engine.bots.inference",
    "engine.bots.likelihood",
    "engine.bots.search",
    "engine.bots.hard",
)
"""The modules mypyc compiles: the rules, the views and the bots' search (a cProfile of the hard bot
and of random play spends nearly all its time in them). They import one another natively, so they
are compiled, and used, together or not at all."""

_ROOT = Path(__file__).resolve().parent.parent
MANIFEST = _ROOT / "engine" / "compiled.json"
"""The compiled build's record: ``{"sources": {module: SHA-256 of its .py}}`` (git-ignored)."""


def source_digests(root: Path = _ROOT, modules: Sequence[str] = COMPILED) -> dict[str, str]:
    """Each of ``modules``' SHA-256 (hex) of its ``.py`` source under ``root``."""
    return {
        name: hashlib.sha256((root / (name.replace(".", "/") + ".py")).read_bytes()).hexdigest()
        for name in modules
    }


class _SourcesFirst(importlib.abc.MetaPathFinder):
    """Imports the engine's modules from their ``.py`` files even where an extension module of the
    same name sits beside them."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if not fullname.startswith("engine."):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
            return spec
        assert spec.origin is not None
        source = Path(spec.origin).with_name(fullname.rpartition(".")[2] + ".py")
        return importlib.util.spec_from_file_location(fullname, source)


def _compiled_is_current() -> bool:
    """Whether the compiled build may be used: recorded, matching every source, present."""
    if not MANIFEST.exists() or os.environ.get("DOMENG_PURE_ENGINE", "") not in ("", "0"):
        return False
    try:
        built = json.loads(MANIFEST.read_text())["sources"]
    except (OSError, ValueError, KeyError, TypeError):
        built = None
    if built != source_digests():
        return False  # silently: a process's stderr may be read (the next bootstrap rebuilds)
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    return all((_ROOT / (name.replace(".", "/") + suffix)).exists() for name in COMPILED)


def _pick_build() -> str:
    if _compiled_is_current():
        return "compiled"
    sys.meta_path.insert(0, _SourcesFirst())
    return "pure"


BUILD = _pick_build()
"""``compiled`` when the engine's hot modules run as mypyc extension modules, else ``pure``."""
