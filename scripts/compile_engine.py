"""Compile the engine's hot modules with mypyc (an optional build: docs/engine.md, "Compiled build").

    .venv/bin/python scripts/compile_engine.py           build them (skipped when up to date)
    .venv/bin/python scripts/compile_engine.py --clean   remove them: the engine runs as pure Python

mypyc (part of mypy, a dev dependency) turns the typed sources of `engine.COMPILED` into C extension
modules, built with the system's C compiler and placed beside their ``.py`` files (git-ignored),
and ``engine/compiled.json`` records the sources they were built from: `engine` uses them only
while every source still matches. It exits 1 with one line saying why when it cannot build (no
mypy, no compiler, a build error); the engine then stays pure Python.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402  (the checkout's engine, whichever build it runs)

GROUP = "engine.native"
"""mypyc's name for the compiled modules' shared library (``engine/native__mypyc...so``)."""
BUILD_DIR = ROOT / "build" / "mypyc"


def built_files() -> list[Path]:
    """The files a build leaves in the tree (extension modules, the shared library, the record)."""
    found = list((ROOT / "engine").rglob("*.so"))
    return [*found, engine.MANIFEST] if engine.MANIFEST.exists() else found


def clean() -> None:
    """Remove every compiled file (the record first, so a half-removed build is never used)."""
    engine.MANIFEST.unlink(missing_ok=True)
    for path in built_files():
        path.unlink()
    shutil.rmtree(BUILD_DIR, ignore_errors=True)


def up_to_date() -> bool:
    """Whether the record matches the sources and every extension module is there."""
    try:
        built = json.loads(engine.MANIFEST.read_text())["sources"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return built == engine.source_digests() and engine.BUILD == "compiled"


def build() -> None:
    """Compile `engine.COMPILED` in place and write the record. Raises on any failure."""
    from mypyc.build import mypycify  # noqa: PLC0415  (mypy is a dev dependency)
    from setuptools import Distribution  # noqa: PLC0415

    digests = engine.source_digests()
    clean()
    paths = [name.replace(".", "/") + ".py" for name in engine.COMPILED]
    extensions = mypycify(paths, opt_level="3", group_name=GROUP, target_dir=str(BUILD_DIR))
    # A bare Distribution reads no pyproject.toml (the venv's setuptools may be too old for it).
    dist = Distribution({"name": "domeng-engine-compiled", "ext_modules": extensions})
    command = dist.get_command_obj("build_ext")
    command.inplace = True  # type: ignore[attr-defined]
    command.build_temp = str(BUILD_DIR / "temp")  # type: ignore[attr-defined]
    command.build_lib = str(BUILD_DIR / "lib")  # type: ignore[attr-defined]
    dist.run_command("build_ext")
    if engine.source_digests() != digests:
        clean()
        raise RuntimeError("a source changed during the build")
    engine.MANIFEST.write_text(json.dumps({"sources": digests}, indent=1) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clean", action="store_true", help="remove the compiled modules")
    args = parser.parse_args()
    os.chdir(ROOT)
    if args.clean:
        clean()
        print("engine: pure Python (compiled modules removed)")
        return 0
    if up_to_date():
        return 0
    began = time.perf_counter()
    try:
        build()
    except (Exception, SystemExit) as exc:  # ImportError (no mypy), CompileError, mypy's type errors...
        clean()
        print(f"engine: pure Python (mypyc build failed: {type(exc).__name__}: {exc})", file=sys.stderr)
        return 1
    print(f"engine: compiled with mypyc in {time.perf_counter() - began:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
