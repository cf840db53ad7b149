"""What the ``domeng`` subcommands share: a writable save directory, the variant options, counts."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["positive", "variant_options", "writable"]


def writable(save_dir: Path, command: str) -> bool:
    """Create ``save_dir`` and check that a file can be written there; says why not on stderr."""
    try:
        save_dir.mkdir(parents=True, exist_ok=True)
        probe = save_dir / ".domeng-write-test"
        probe.write_text("", encoding="utf-8")
        probe.unlink()
    except OSError as error:
        print(f"domeng {command}: cannot save records in {save_dir}: {error}", file=sys.stderr)
        return False
    return True


def variant_options(args: argparse.Namespace) -> dict[str, object]:
    """RECORD.md options from ``--camat-target``, ``--pairs`` and ``--no-two-lempas``."""
    options: dict[str, object] = {}
    if args.camat_target is not None:
        options["camat_target"] = args.camat_target
    if args.pairs:
        options["pairs"] = True
    if args.no_two_lempas:
        options["two_lempas"] = False
    return options


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value
