"""A stored match as RECORD.md's document (written by the engine's one record writer)."""

from __future__ import annotations

from typing import Any

from app.store.models import BY_BOT
from app.store.rows import ActionRow, MatchRow
from engine.record import RecordRound, build_record
from engine.variants import make_rules

__all__ = ["record_of"]


def record_of(match: MatchRow) -> dict[str, Any]:
    """RECORD.md's document of a loaded match (see `Store.export_record`): seats as display names,
    ``start`` if any, every stored round (the last one possibly unfinished) with its ``seed`` and
    ``commitment``. An action a bot made for a person carries ``by_bot`` (``"timeout"``: their turn
    timer ran out, the bot played that turn; ``"covering"``: the bot covered their seat), an
    optional field that readers of RECORD.md ignore. A finished match the host ended carries
    ``"ended_by": "host"`` (RECORD.md). A match in which the host gave a person's seat to a bot
    carries ``former``, in seat order, that person's name or None (`SeatRow.former`): the moves
    of such a seat not marked ``by_bot`` before the swap were theirs. Readers of RECORD.md ignore it."""
    rules = make_rules(match.variant, match.options, match.seat_count)
    rounds = [
        RecordRound(r.deal, [_action(a) for a in r.actions], r.seed, r.commitment) for r in match.rounds
    ]
    ended_by = "host" if match.ended_by_host else None
    record = build_record(
        rules, match.seat_names(), rounds, match.start, options=match.options, ended_by=ended_by
    )
    if any(seat.former for seat in match.seats):
        record["former"] = [seat.former for seat in match.seats]
    return record


def _action(row: ActionRow) -> dict[str, Any]:
    by_bot = BY_BOT.get(row.actor)
    return row.action if by_bot is None else {**row.action, "by_bot": by_bot}
