"""Display names people take at a table: when two names count as the same, and which names are
the table's own labels, which a person may not take (they would pass for a bot or an empty seat in
the play-by-play, which shows names only).

>>> name_key("  Ana ") == name_key("ANA") == name_key("Ana\u2800") == name_key("A\u0301na")
True
>>> is_reserved_name("bot 4"), is_reserved_name("Бот 2"), is_reserved_name("Botak")
(True, True, False)
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Final

__all__ = ["BLANK_LOOKING", "RESERVED_NAMES", "is_reserved_name", "name_key", "shows_nothing"]

_CATALOGS: Final = Path(__file__).resolve().parents[2] / "static" / "i18n"
_LABELS: Final = ("seat.bot_name", "seat.empty_name")
"""The client's labels of seats without a person (static/js/narrate.js seatName), "Bot {n}"..."""
_MAX_SEATS: Final = 5


BLANK_LOOKING: Final = frozenset("\u115f\u1160\u3164\uffa0\u2800\u034f")
"""Printable characters that show nothing (Hangul fillers, the Braille blank, the combining
grapheme joiner): a name made only of these (and marks or spaces) would be invisible."""


def shows_nothing(ch: str) -> bool:
    """Whether ``ch`` adds nothing a reader can tell apart: a blank-looking character, a mark
    (accents, variation selectors), a format character, or a space."""
    return ch in BLANK_LOOKING or unicodedata.category(ch)[0] in "MZ" or unicodedata.category(ch) == "Cf"


def name_key(name: str) -> str:
    """What two names must share to be the same at a table: compatibility-decomposed (NFKD), with
    what shows nothing or only decorates a letter left out (`shows_nothing`: marks, variation
    selectors, fillers), case-folded, runs of spaces made one. "Ana", " ana ", "ＡＮＡ", "Aná" and
    "Ana" followed by a Braille blank are one name. (Look-alike letters of other scripts, such as a
    Cyrillic "А", are not folded.)"""
    decomposed = unicodedata.normalize("NFKD", name)
    kept = "".join(" " if ch.isspace() else ch for ch in decomposed if ch.isspace() or not shows_nothing(ch))
    return " ".join(kept.casefold().split())


def _reserved() -> frozenset[str]:
    names: set[str] = set()
    for path in sorted(_CATALOGS.glob("*.json")):
        catalog = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(catalog, dict) or "seat.bot_name" not in catalog:
            continue  # index.json lists the languages
        for label in _LABELS:
            for n in range(1, _MAX_SEATS + 1):
                names.add(name_key(str(catalog[label]).replace("{n}", str(n))))
    return frozenset(names)


RESERVED_NAMES: Final = _reserved()
"""Every language's label of a bot seat and an empty seat, seats 1 to 5 ("Bot 3", "Бот 3",
"Seat 3", "Koht 3", "3. hely", ...), as `name_key` keys."""


def is_reserved_name(name: str) -> bool:
    """Whether ``name`` is one of the table's own labels (`RESERVED_NAMES`)."""
    return name_key(name) in RESERVED_NAMES
