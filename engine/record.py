"""Match records (RECORD.md, ``domeng-record/1``): write them from a state, read and replay them.

A record is one JSON document: variant, options, seat names, an optional ``start`` position, and
every round's deal and actions. `replay` validates every action through the same rules code the
server uses and reports each round's result; any fault raises `RecordError` with a stable code:

- ``invalid_document``  not an object, or a field of the wrong shape (``rounds``, a round, …)
- ``unknown_format``    ``format`` is not ``domeng-record/1``
- ``unknown_variant``   ``variant`` is not a known game
- ``invalid_options``   an unknown option or a bad value
- ``invalid_seats``     ``seats`` is not a list of names of the variant's size
- ``invalid_start``     ``start`` is not a position of the variant
- ``invalid_tile``      a tile that is not ``a-b`` of the double-six set
- ``invalid_deal``      hands and unused/bazaar are not the 28 tiles once each, in the right sizes
- ``invalid_action``    an action object of the wrong shape (also ``invalid_end``)
- ``unfinished_round``  a round before the last one does not reach its end
- ``match_over``        a round after the match has ended by its options
- ``not_stoppable``     ``ended_by`` is ``"host"`` but the options end the match themselves
- every `IllegalActionError` code for an action the rules forbid (``wrong_seat``, ``does_not_fit``,
  ``end_required``, ``voluntary_pass``, ``tile_not_in_hand``, ``wrong_opening_tile``, ``round_over``,
  ``draw_not_allowed``, ``not_two_lempas``)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.actions import Action
from engine.core import Deal, Phase, RoundLog, State
from engine.deal_json import deal_to_json
from engine.errors import EngineError, RecordError, quoted
from engine.events import DomengOutcome, Outcome
from engine.replay import StoredRound, replay_rounds
from engine.rules.base import Rules
from engine.score import KozelScore
from engine.variants import find_variant
from engine.views import outcome_to_json

__all__ = [
    "FORMAT",
    "RecordRound",
    "Replay",
    "build_record",
    "read_header",
    "read_record",
    "replay",
    "round_report",
    "stored_rounds",
    "write_record",
]

FORMAT = "domeng-record/1"


@dataclass(frozen=True, slots=True)
class RecordRound:
    """One round of a record to write: its ``deal`` (a `Deal`, or the store's deal JSON
    ``{"hands", "rest"}`` written as it is), its ``actions`` (`Action` objects or their JSON) and,
    from a server's store, the round's ``seed`` and ``commitment`` (written only when given)."""

    deal: Deal | Mapping[str, Any]
    actions: Sequence[Action | Mapping[str, Any]]
    seed: str | None = None
    commitment: str | None = None


def build_record(
    rules: Rules,
    seats: Sequence[str],
    rounds: Iterable[RecordRound],
    start: Mapping[str, object] | None = None,
    options: Mapping[str, object] | None = None,
    ended_by: str | None = None,
) -> dict[str, Any]:
    """The RECORD.md document: ``format``, ``variant``, ``options`` (``rules.options()`` unless
    given), ``seats`` (display names), ``start`` when given, and ``rounds``, each with ``hands``,
    the rest under ``rules.rest_name`` (``unused`` or ``bazaar``), ``actions`` and, when a round
    has them, ``seed`` and ``commitment``; then ``ended_by`` when given (``"host"``: the host
    stopped the match, `engine.core.State.stop`). The one writer of records: key order and tile
    notation are RECORD.md's, so a document written twice is byte-identical.
    """
    doc: dict[str, Any] = {
        "format": FORMAT,
        "variant": rules.name,
        "options": dict(rules.options() if options is None else options),
        "seats": list(seats),
    }
    if start is not None:
        doc["start"] = dict(start)
    doc["rounds"] = [_round_json(r, rules.rest_name) for r in rounds]
    if ended_by is not None:
        doc["ended_by"] = ended_by
    return doc


def _round_json(log: RecordRound, rest_key: str) -> dict[str, Any]:
    deal = log.deal
    if isinstance(deal, Deal):
        out = deal_to_json(deal, rest_key)
    else:
        out = {"hands": deal["hands"], rest_key: deal["rest"]}
    out["actions"] = [a if isinstance(a, Mapping) else a.to_json() for a in log.actions]
    if log.seed is not None or log.commitment is not None:
        out["seed"] = log.seed
        out["commitment"] = log.commitment
    return out


def write_record(state: State, seats: Sequence[str]) -> dict[str, Any]:
    """The RECORD.md document of ``state``'s match: every finished round, and the round in play
    (if any) as the unfinished last one. ``seats`` are display names in seat order.

    Writes tiles low-high except each round's opening tile, which is written as laid, and an end
    for every placement but the opening. Raises ValueError when ``seats`` has the wrong length.
    """
    if len(seats) != state.seats:
        raise ValueError(f"{state.seats} seat names needed, got {len(seats)}")
    rounds = list(state.history)
    if state.phase is Phase.PLAYING:
        current = state.round_log()
        assert current is not None
        rounds.append(current)
    return build_record(
        state.rules, seats, (RecordRound(log.deal, log.actions) for log in rounds), state.start
    )


@dataclass(frozen=True, slots=True)
class Replay:
    """A replayed record: the rules, the seat names, each round's log (outcome None for an
    unfinished last round) and the final state."""

    rules: Rules
    seats: tuple[str, ...]
    rounds: tuple[RoundLog, ...]
    state: State
    ended_by: str | None = None
    """``"host"`` when the record says the host stopped the match (its rounds all finished)."""

    @property
    def match_over(self) -> bool:
        """Whether the match ended: by its options (camat target reached, or a goat), or, with
        ``ended_by``, stopped by the host after its last round."""
        return self.state.phase is Phase.OVER

    def report(self) -> dict[str, Any]:
        """RECORD.md's replay report: ``{"rounds": [...], "match_over": bool}``, and
        ``"ended_by": "host"`` for a match the host stopped."""
        reports = []
        for index, log in enumerate(self.rounds):
            last = index == len(self.rounds) - 1
            reports.append(round_report(log.outcome, self.state if last and log.outcome is None else None))
        out: dict[str, Any] = {"rounds": reports, "match_over": self.match_over}
        if self.ended_by is not None:
            out["ended_by"] = self.ended_by
        return out


_DOMENG_KEYS = (
    "end",
    "winner",
    "cucuq",
    "manguno",
    "mattikkeng",
    "table",
    "stones",
    "camat",
    "camat_elected",
    "next_leader",
)
_KOZEL_KEYS = ("end", "winner", "points", "pending", "goat", "next_leader")


def round_report(outcome: Outcome | None, state: State | None = None) -> dict[str, Any]:
    """One round of RECORD.md's report. For an unfinished round pass ``outcome=None`` and the
    ``state`` it stands in: ``end`` is null and the score is as it stands."""
    if outcome is not None:
        full = outcome_to_json(outcome)
        keys = _DOMENG_KEYS if isinstance(outcome, DomengOutcome) else _KOZEL_KEYS
        return {key: full[key] for key in keys}
    assert state is not None
    score = state.score()
    if isinstance(score, KozelScore):
        return {
            "end": None,
            "winner": None,
            "points": list(score.points),
            "pending": list(score.pending),
            "goat": [],
            "next_leader": None,
        }
    return {
        "end": None,
        "winner": None,
        "cucuq": None,
        "manguno": None,
        "mattikkeng": [],
        "table": score.table,
        "stones": list(score.stones),
        "camat": score.camat,
        "camat_elected": False,
        "next_leader": None,
    }


def _fail(code: str, message: str, round: int | None = None, action: int | None = None) -> RecordError:
    return RecordError(code, message, round, action)


def read_header(doc: object) -> tuple[Rules, tuple[str, ...], Mapping[str, object] | None, list[object]]:
    """A RECORD.md document's header, checked: its rules (variant and options), seat names,
    ``start`` (None when absent) and raw rounds (not yet validated: `stored_rounds` and the replay
    check them). Raises `RecordError` (``invalid_document``, ``unknown_format``, ``invalid_seats``,
    ``invalid_options``, ``invalid_start`` and the variant's option codes)."""
    if not isinstance(doc, Mapping):
        raise _fail("invalid_document", "a record is a JSON object")
    if doc.get("format") != FORMAT:
        raise _fail("unknown_format", f"format must be {FORMAT!r}, got {quoted(doc.get('format'))}")
    seats = doc.get("seats")
    if not isinstance(seats, list) or not all(isinstance(s, str) for s in seats):
        raise _fail("invalid_seats", "'seats' must be a list of display names")
    options = doc.get("options", {})
    if not isinstance(options, Mapping):
        raise _fail("invalid_options", "'options' must be an object")
    start = doc.get("start")
    if start is not None and not isinstance(start, Mapping):
        raise _fail("invalid_start", "'start' must be an object")
    rounds = doc.get("rounds")
    if not isinstance(rounds, list):
        raise _fail("invalid_document", "'rounds' must be a list")
    try:
        variant = doc.get("variant")
        rules = find_variant(variant if isinstance(variant, str) else quoted(variant)).from_options(
            options, len(seats)
        )
    except EngineError as error:
        raise _fail(error.code, error.message) from None
    return rules, tuple(seats), start, rounds


def read_record(doc: object) -> Replay:
    """Validate and replay a RECORD.md document (already parsed from JSON).

    Returns the `Replay`; raises `RecordError` with the first fault's code, round and action
    indexes (from 0; None where they do not apply). ``"ended_by": "host"`` (the host stopped the
    match) ends it after its last round: that round must be finished (``unfinished_round``) and the
    options must be ones only the host ends (``not_stoppable``). Any other ``ended_by`` is a later
    writer's word and is ignored, like every field a reader does not know.
    """
    rules, seats, start, raw_rounds = read_header(doc)
    try:
        state = rules.new_match(start)
    except EngineError as error:
        raise _fail(error.code, error.message) from None
    logs: list[RoundLog] = []
    for step in replay_rounds(state, stored_rounds(raw_rounds), state.rest_name):
        if step.action is None and step.round:
            logs.append(state.history[-1])
    ended_by = doc.get("ended_by") if isinstance(doc, Mapping) else None
    if ended_by == "host":
        if state.phase is Phase.PLAYING:
            raise _fail(
                "unfinished_round", "the host stops a match only once its last round has ended", len(logs)
            )
        try:
            state.stop()  # the last round's outcome now says the match ended with it
        except EngineError as error:
            raise _fail(error.code, error.message) from None
    if raw_rounds:
        last = state.round_log()
        assert last is not None
        logs.append(last)
    return Replay(rules, seats, tuple(logs), state, "host" if ended_by == "host" else None)


def stored_rounds(raw_rounds: list[object]) -> Iterator[StoredRound]:
    """Each raw round as the replay loop takes it (the round object is its own deal JSON)."""
    for index, raw in enumerate(raw_rounds):
        if not isinstance(raw, Mapping):
            raise _fail("invalid_document", "a round is an object", index)
        yield raw, raw.get("actions", [])


def replay(doc: object) -> dict[str, Any]:
    """RECORD.md's ``replay --json`` output for a parsed document; raises `RecordError`."""
    return read_record(doc).report()
