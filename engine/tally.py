"""What a finished round settled, per seat: the round's tally as a server stores it.

Domeng: the stones each seat received and paid in the round's settlements (passebunge D3/D4 and
the round's end D5–D9), and everyone's stones after it. Kozel: nothing is received or paid (K7
writes points instead); everyone's recorded and pending points after it (K8).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.core import Phase, State
from engine.events import DomengOutcome, Outcome, Passed, Settlement
from engine.score import DomengScore

__all__ = ["RoundTally", "SeatTally", "round_settlements", "round_tally"]


@dataclass(frozen=True, slots=True)
class SeatTally:
    """One seat's part of a finished round: ``received`` and ``paid`` stones in its settlements
    (0 in Kozel), and its score after the round: ``stones`` (Domeng) or ``points`` and ``pending``
    (Kozel); the other variant's fields are None."""

    seat: int
    received: int
    paid: int
    stones: int | None
    points: int | None
    pending: int | None


@dataclass(frozen=True, slots=True)
class RoundTally:
    """A finished round: its ``outcome``, the ``table`` stones after it (Domeng; None in Kozel),
    each seat's `SeatTally` in seat order, and whether the match is over with it."""

    outcome: Outcome
    table: int | None
    seats: tuple[SeatTally, ...]
    match_over: bool


def round_settlements(state: State) -> list[Settlement]:
    """Every settlement of ``state``'s current (or just finished) round, in order: each
    passebunge's (D3, D4), then the round end's (D5–D9). Empty in Kozel."""
    found = [e.settlement for e in state.log if type(e) is Passed and e.settlement is not None]
    if isinstance(state.outcome, DomengOutcome) and state.phase is not Phase.PLAYING:
        found.append(state.outcome.settlement)
    return found


def round_tally(state: State) -> RoundTally:
    """The tally of the round ``state`` has just finished. Raises ValueError while a round is
    being played or before any round ended."""
    outcome = state.outcome
    if state.phase is Phase.PLAYING or outcome is None:
        raise ValueError("no round has just finished")
    received = [0] * state.seats
    paid = [0] * state.seats
    for s in round_settlements(state):
        received[s.receiver] += s.received
        for payer, amount in s.from_payers:
            paid[payer] += amount
    score = state.score()
    seats = tuple(
        SeatTally(
            seat=seat,
            received=received[seat],
            paid=paid[seat],
            stones=score.stones[seat] if isinstance(score, DomengScore) else None,
            points=None if isinstance(score, DomengScore) else score.points[seat],
            pending=None if isinstance(score, DomengScore) else score.pending[seat],
        )
        for seat in range(state.seats)
    )
    table = score.table if isinstance(score, DomengScore) else None
    return RoundTally(outcome, table, seats, state.phase is Phase.OVER)
