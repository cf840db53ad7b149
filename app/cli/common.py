"""What the ``domeng`` subcommands share: reading a JSON document, a writable save directory, the variant
options, counts."""

from __future__ import annotations

import argparse
import json
import sys
import unicodedata
from pathlib import Path
from typing import Final

from engine.errors import RecordError

__all__ = [
    "MAX_RECORD_BYTES",
    "error_place",
    "load_document",
    "positive",
    "terminal_text",
    "variant_options",
    "writable",
]


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


def error_place(error: RecordError) -> str:
    """Where a record error happened as the user counts, rounds and actions from 1 (the error's
    fields count from 0, as the JSON error object does): `` in round 3, action 7`` or ``""``."""
    if error.round is None:
        return ""
    place = f" in round {error.round + 1}"
    return place if error.action is None else f"{place}, action {error.action + 1}"


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


MAX_RECORD_BYTES: Final = 64 * 1024 * 1024
"""The largest record file `load_document` reads (64 MiB): some 40,000 rounds, days of play at one
table, while a file past it would take gigabytes of memory to parse (a JSON list of small strings
costs about ten times its text). Past it: ``record_too_large``, before anything is parsed."""


def load_document(path: str) -> object:
    """The JSON document in file ``path`` (``-``: standard input), read up to `MAX_RECORD_BYTES`;
    raises RecordError (``unreadable_file``, ``record_too_large``, ``invalid_json``)."""
    try:
        if path == "-":
            raw = sys.stdin.buffer.read(MAX_RECORD_BYTES + 1)
        else:
            with Path(path).open("rb") as file:
                raw = file.read(MAX_RECORD_BYTES + 1)
        if len(raw) > MAX_RECORD_BYTES:
            raise RecordError(
                "record_too_large",
                f"{path} is larger than {MAX_RECORD_BYTES // (1024 * 1024)} MiB, more than a record of"
                " a match holds: not read",
            )
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise RecordError("unreadable_file", f"cannot read {path}: {error}") from None
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as error:  # JSONDecodeError, or an integer over 4300 digits
        raise RecordError("invalid_json", f"{path} is not JSON we can read: {error}") from None


_ESCAPED: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
"""The Unicode categories `terminal_text` writes as escapes."""
_KEPT_FORMAT: Final = frozenset("\u200c\u200d") | frozenset(map(chr, range(0xE0020, 0xE0080)))
"""Invisible format characters a name may hold that do nothing to a terminal: the zero-width
non-joiner and joiner (a joined emoji), and the tags of a subdivision flag."""


def terminal_text(text: str) -> str:
    """``text`` (a record's seat name: anything a file says) safe to print to a terminal: every
    control character (C0, C1: ``ESC`` starts the escape sequences that clear a screen, retitle a
    window or write the clipboard), line or paragraph separator, unassigned or private code point,
    lone surrogate and invisible format character (bidirectional overrides and isolates turn the
    line around them) is written as ``\\u001b``, ``\\u202e``, …, so it shows instead of acting. An
    emoji's joiners and tags are kept (`_KEPT_FORMAT`).

    >>> terminal_text("Ana\\x1b[2J\\u202egood")
    'Ana\\\\u001b[2J\\\\u202egood'
    """
    return "".join(
        f"\\u{ord(ch):04x}" if unicodedata.category(ch) in _ESCAPED and ch not in _KEPT_FORMAT else ch
        for ch in text
    )
