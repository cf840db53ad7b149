"""The import rules between the parts of app/ and the engine (pyproject's [tool.importlinter]),
checked by import-linter on every test run: the engine imports nothing of app; the rooms import
no socket edge, web app or web framework; persistence imports neither the rooms nor the edge;
admin does not import the command line; the bot workers import only the engine (docs/architecture.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_import_contract_is_kept() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run(
        [str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "broken" not in done.stdout.split("Contracts:")[-1].lower().replace("0 broken", "")
