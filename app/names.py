"""Display names people take at a table: when two names count as the same, and which names are
the table's own labels, which a person may not take (they would pass for a bot or an empty seat in
the play-by-play, which shows names only).

>>> name_key("  Ana ") == name_key("ANA")
True
>>> is_reserved_name("bot 4"), is_reserved_name("Бот 2"), is_reserved_name("Botak")
(True, True, False)
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Final

__all__ = ["RESERVED_NAMES", "is_reserved_name", "name_key"]

_CATALOGS: Final = Path(__file__).resolve().parents[1] / "static" / "i18n"
_LABELS: Final = ("seat.bot_name", "seat.empty_name")
"""The client's labels of seats without a person (static/js/narrate.js seatName), "Bot {n}"..."""
_MAX_SEATS: Final = 5


def name_key(name: str) -> str:
    """What two names must share to be the same at a table: NFKC-normalised, case-folded, with
    runs of spaces made one ("Ana", " ana ", "ＡＮＡ" are one name)."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


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
