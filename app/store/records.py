"""A stored match as RECORD.md's document."""

from __future__ import annotations

from typing import Any

from app.store.rows import MatchRow
from engine.record import FORMAT

__all__ = [
    "record_of",
]


def record_of(match: MatchRow) -> dict[str, Any]:
    """RECORD.md's document of a loaded match (see `Store.export_record`)."""
    rest_key = "bazaar" if match.variant == "kozel" else "unused"
    doc: dict[str, Any] = {
        "format": FORMAT,
        "variant": match.variant,
        "options": dict(match.options),
        "seats": match.seat_names(),
    }
    if match.start is not None:
        doc["start"] = dict(match.start)
    doc["rounds"] = [
        {
            "hands": r.deal["hands"],
            rest_key: r.deal["rest"],
            "actions": [a.action for a in r.actions],
            "seed": r.seed,
            "commitment": r.commitment,
        }
        for r in match.rounds
    ]
    return doc
