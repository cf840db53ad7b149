"""A room's stored form: the round end the store keeps, and rebuilding a room's game from the
store (restart recovery), at exactly its last stored action."""

from __future__ import annotations

from typing import Any

from app.store.rows import MatchRow, RoundEnd, TallySpec, commitment_of
from engine.actions import parse_action
from engine.core import Deal, Phase, State
from engine.events import DomengOutcome, Passed
from engine.rules.base import Rules
from engine.tiles import Tile
from engine.views import outcome_to_json

__all__ = ["Rebuilt", "deal_of", "rebuild", "round_end"]


def round_end(state: State) -> RoundEnd:
    """What the store keeps of the round ``state`` has just ended: its outcome, the table's
    stones, each seat's tally (stones received and paid from the round's settlements)."""
    outcome = state.outcome
    assert outcome is not None
    received = [0] * state.seats
    paid = [0] * state.seats
    settlements = [e.settlement for e in state.log if type(e) is Passed and e.settlement is not None]
    if isinstance(outcome, DomengOutcome):
        settlements.append(outcome.settlement)
    for s in settlements:
        received[s.receiver] += s.received
        for payer, amount in s.from_payers:
            paid[payer] += amount
    score = state.public_score()
    tallies = [
        TallySpec(
            seat=seat,
            stones=score["stones"][seat] if "stones" in score else None,
            received=received[seat],
            paid=paid[seat],
            points=score["points"][seat] if "points" in score else None,
            pending=score["pending"][seat] if "pending" in score else None,
        )
        for seat in range(state.seats)
    ]
    return RoundEnd(outcome_to_json(outcome), score.get("table"), tallies, state.phase is Phase.OVER)


def deal_of(stored: dict[str, Any]) -> Deal:
    """The `Deal` of a stored round (``{"hands": [[tiles]...], "rest": [tiles]}``)."""
    return Deal(
        tuple(tuple(Tile.parse(t) for t in hand) for hand in stored["hands"]),
        tuple(Tile.parse(t) for t in stored["rest"]),
    )


class Rebuilt:
    """A match's game rebuilt from the store: ``state`` (None before the start), the last round's
    ``seed`` and ``commitment``, ``last_round`` (the revealed seed of the last finished round) and
    ``marks`` (versions of the round in play → its log's length)."""

    def __init__(self) -> None:
        self.state: State | None = None
        self.seed: str | None = None
        self.commitment: str | None = None
        self.last_round: dict[str, Any] | None = None
        self.marks: dict[int, int] = {}


def rebuild(row: MatchRow, rules: Rules) -> Rebuilt:
    """Replay ``row``'s stored rounds; raises ValueError when a seed does not match its commitment,
    `engine.errors.EngineError` when a stored action is not legal."""
    out = Rebuilt()
    if row.status != "playing":
        return out
    state = out.state = rules.new_match(row.start)
    for stored in row.rounds:
        if out.seed is not None:  # the previous round is over: its seed was revealed
            out.last_round = {"index": stored.index - 1, "seed": out.seed, "commitment": out.commitment}
        if commitment_of(stored.seed) != stored.commitment:
            raise ValueError(f"round {stored.index}: seed does not match its commitment")
        state.start_round(deal_of(stored.deal))
        out.marks = {}
        for action in stored.actions:
            state.apply(parse_action(action.action))
            out.marks[action.version] = len(state.log)
        out.seed, out.commitment = stored.seed, stored.commitment
    if state.round_index and state.phase is not Phase.PLAYING:
        out.last_round = {"index": state.round_index - 1, "seed": out.seed, "commitment": out.commitment}
    return out
