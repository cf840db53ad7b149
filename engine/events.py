"""What happens in a round, reported as data: placements, passes, draws, settlements, outcomes.

The UI narrates play from these, the admin history explains rounds from them, and records are
rebuilt from them. Seats are indexes (P0 = 0), stones and points are counts. Treat every event as a
value. `Placed`, `Passed` and `Settlement` are frozen: the engine builds every possible placement
and pass once and shares the instances between states. `Drew` is a plain slotted dataclass rather
than a frozen one only because a frozen dataclass costs four times as much to create, and the
engine creates one per draw (benchmarks/engine_speed.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TypeAlias

from engine.actions import End
from engine.pickling import pickle_by_fields
from engine.tiles import Tile

__all__ = [
    "DomengOutcome",
    "Drew",
    "Event",
    "KozelOutcome",
    "Outcome",
    "Passed",
    "Placed",
    "Reason",
    "RoundEnded",
    "Settlement",
    "Termination",
]


class Termination(StrEnum):
    """How a round ended (RECORD.md ``end``): Domeng out/ceki/pollo/block, Kozel out/fish."""

    OUT = "out"
    CEKI = "ceki"
    POLLO = "pollo"
    BLOCK = "block"
    FISH = "fish"


class Reason(StrEnum):
    """Why stones moved (the rows of RULES.md's settlement table)."""

    PASS = "pass"
    """A pass by a seat that has placed this round: 1 stone (D4, D6)."""
    PASSEBUNGE = "passebunge"
    """A pass by a seat that has placed nothing this round: 2 stones (D3)."""
    OUT = "out"
    """First cappu, normal out: the cucuq receives 1."""
    CEKI = "ceki"
    """First cappu by mappakuling with a non-lempa: the cucuq receives 3."""
    POLLO = "pollo"
    """First cappu by mappakuling with a lempa: the cucuq receives 5."""
    MANGUNO = "manguno"
    """Block without mattikkeng: the cucuq (seat before the manguno) receives 1 from the manguno."""
    MATTIKKENG = "mattikkeng"
    """Block with one mattikkeng below the manguno's sum: the manguno receives 5 from them."""
    MATTIKKENG_SHARED = "mattikkeng_shared"
    """Block with several mattikkeng, or one that ties: the manguno receives 1, paid in rank order."""


@dataclass(frozen=True, slots=True)
class Settlement:
    """One ``award(receiver, n, payers)`` (D5), as it came out.

    ``owed`` stones were due to ``receiver``; ``from_table`` came from the table, then each
    ``(seat, stones)`` of ``from_payers`` paid in order (every named payer is listed, even with 0);
    ``cancelled`` is what nobody could pay. ``owed == from_table + Σ paid + cancelled``.
    """

    reason: Reason
    receiver: int
    owed: int
    from_table: int
    from_payers: tuple[tuple[int, int], ...]
    cancelled: int

    @property
    def received(self) -> int:
        """Stones the receiver actually got."""
        return self.from_table + sum(n for _, n in self.from_payers)


@dataclass(frozen=True, slots=True)
class Placed:
    """``seat`` placed ``tile`` on ``end`` (None for the opening tile); ``ends`` are [L|R] after it.

    ``mappakuling`` is true when both open ends now show the same number (never for the opening, D14),
    in Domeng only: the word belongs to Domeng, so a Kozel placement never carries it.
    ``flip`` is true when the opening tile was laid high-low.
    """

    seat: int
    tile: Tile
    end: End | None
    ends: tuple[int, int]
    mappakuling: bool
    flip: bool = False


@dataclass(frozen=True, slots=True)
class Passed:
    """``seat`` passed (no tile fitted). Domeng: ``passebunge`` and its ``settlement`` (D3, D4)."""

    seat: int
    passebunge: bool = False
    settlement: Settlement | None = None


@dataclass(slots=True)
class Drew:
    """Kozel: ``seat`` took the bazaar's top tile. ``tile`` is None in views of other seats."""

    seat: int
    tile: Tile | None


@dataclass(frozen=True, slots=True)
class DomengOutcome:
    """How a Domeng round ended and what it settled (RECORD.md's Domeng replay fields).

    ``first_cappu`` is set on out/ceki/pollo, ``manguno`` on a block. ``mattikkeng`` is in rank
    order (D8); ``pip_sums`` per seat (pips, D9). ``table``/``stones`` are after the settlement and,
    when ``camat_elected``, after the reset to 25 and all 0 (D16–D18).
    """

    end: Termination
    winner: int
    first_cappu: int | None
    cucuq: int | None
    manguno: int | None
    mattikkeng: tuple[int, ...]
    pip_sums: tuple[int, ...]
    settlement: Settlement
    camat_elected: bool
    camat: int | None
    table: int
    stones: tuple[int, ...]
    next_leader: int
    match_over: bool


@dataclass(frozen=True, slots=True)
class KozelOutcome:
    """How a Kozel round ended and the score after it (K5–K10).

    ``winner`` is None for a tied fish. ``hand_values`` per seat (K6); ``written`` is what each seat
    (pairs: each partner, same amount) added this round; ``points`` recorded and ``pending``
    unrecorded after the round (K8); ``goat`` the goat seat(s), empty until someone reaches 101 (K9).
    """

    end: Termination
    winner: int | None
    hand_values: tuple[int, ...]
    written: tuple[int, ...]
    points: tuple[int, ...]
    pending: tuple[int, ...]
    goat: tuple[int, ...]
    next_leader: int
    match_over: bool


Outcome: TypeAlias = DomengOutcome | KozelOutcome


@dataclass(frozen=True, slots=True)
class RoundEnded:
    """The round is over; ``outcome`` says how. Hands are revealed from this point on (D20)."""

    outcome: Outcome


Event: TypeAlias = Placed | Passed | Drew | RoundEnded


pickle_by_fields(Settlement, Placed, Passed, DomengOutcome, KozelOutcome, RoundEnded)
