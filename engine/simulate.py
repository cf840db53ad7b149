"""Bot-only matches and their statistics (``domeng simulate``).

`play_round` drives one round with bots that see only their own `player_view`; `Simulation` plays
matches round after round from one seeded RNG and tallies outcome frequencies and, per variant,
Domeng's stones, cycles and camat elections or Kozel's draws, points, goats and rounds per match.
"""

from __future__ import annotations

import random
import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.actions import PlayLempas
from engine.bots import Bot, make_bot
from engine.core import Phase, State
from engine.events import DomengOutcome, Drew, KozelOutcome, Passed, RoundEnded, Settlement
from engine.rules.base import Rules
from engine.views import player_view

__all__ = ["Simulation", "Tally", "play_round"]


def play_round(state: State, bots: Sequence[Bot]) -> None:
    """Play the round in progress to its end; seat i acts through ``bots[i]``, which sees only
    ``player_view(state, i)``. Raises whatever an illegal bot action raises."""
    while state.phase is Phase.PLAYING:
        seat = state.to_act
        state.apply(bots[seat].choose(player_view(state, seat)))


@dataclass
class Tally:
    """Running totals over simulated rounds (per seat lists are indexed by seat)."""

    seats: int
    variant: str = "domeng"
    unit: str = "stones"
    """What the score counts (`engine.rules.base.Rules.unit`): ``points`` gives Kozel's figures."""
    rounds: int = 0
    matches: int = 0
    actions: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    received: list[int] = field(default_factory=list)
    paid: list[int] = field(default_factory=list)
    cancelled: int = 0
    passes: int = 0
    passebunge: int = 0
    elections: list[int] = field(default_factory=list)
    wins: list[int] = field(default_factory=list)
    cycle_lengths: list[int] = field(default_factory=list)
    goats: list[int] = field(default_factory=list)
    draws: int = 0
    two_lempas: int = 0
    written: list[int] = field(default_factory=list)
    match_lengths: list[int] = field(default_factory=list)
    charged: list[int] = field(default_factory=list)
    """Per seat, what the round charged it in the variant's unit: Domeng stones received, Kozel
    points written (K7); the arena's measure of a seat."""
    _cycle: int = 0
    _match_rounds: int = 0

    def __post_init__(self) -> None:
        for name in ("received", "paid", "elections", "wins", "goats", "written", "charged"):
            if not getattr(self, name):
                setattr(self, name, [0] * self.seats)

    def _settle(self, settlement: Settlement) -> None:
        self.received[settlement.receiver] += settlement.received
        self.charged[settlement.receiver] += settlement.received
        for payer, amount in settlement.from_payers:
            self.paid[payer] += amount
        self.cancelled += settlement.cancelled

    def add_round(self, state: State) -> None:
        """Count the round that ``state`` has just finished."""
        self.rounds += 1
        self._cycle += 1
        self._match_rounds += 1
        self.actions += len(state.actions)
        self.two_lempas += sum(type(a) is PlayLempas for a in state.actions)
        for event in state.log:
            if type(event) is Drew:
                self.draws += 1
            elif type(event) is Passed:
                self.passes += 1
                self.passebunge += event.passebunge
                if event.settlement is not None:
                    self._settle(event.settlement)
            elif type(event) is RoundEnded:
                self._add_outcome(event)

    def _add_outcome(self, event: RoundEnded) -> None:
        outcome = event.outcome
        if isinstance(outcome, DomengOutcome):
            key = outcome.end.value
            if key == "block":
                key = "block, mattikkeng" if outcome.mattikkeng else "block, no mattikkeng"
            self.outcomes[key] += 1
            self.wins[outcome.winner] += 1
            self._settle(outcome.settlement)
            if outcome.camat_elected:
                self.elections[outcome.winner] += 1
                self.cycle_lengths.append(self._cycle)
                self._cycle = 0
        elif isinstance(outcome, KozelOutcome):
            self.outcomes[outcome.end.value + (", tied" if outcome.winner is None else "")] += 1
            if outcome.winner is not None:
                self.wins[outcome.winner] += 1
            for seat, amount in enumerate(outcome.written):
                self.written[seat] += amount
                self.charged[seat] += amount
            for seat in outcome.goat:
                self.goats[seat] += 1
            if outcome.match_over:
                self.match_lengths.append(self._match_rounds)

    def end_match(self) -> None:
        """Close a match: an unfinished cycle does not count as a cycle (nor an unfinished Kozel
        match as a match length)."""
        self.matches += 1
        self._cycle = 0
        self._match_rounds = 0

    def summary(self) -> dict[str, Any]:
        """The figures as JSON-ready data: frequencies are fractions of rounds. Domeng: stones,
        passes, camat elections and cycles; Kozel: passes, draws, two-lempas moves, points written
        per seat (K7), goats per seat (K9) and rounds per finished match."""
        common = {
            "rounds": self.rounds,
            "matches": self.matches,
            "actions": self.actions,
            "outcomes": {k: self.outcomes[k] for k in sorted(self.outcomes)},
            "outcome_share": {k: round(v / max(self.rounds, 1), 4) for k, v in sorted(self.outcomes.items())},
            "wins": self.wins,
        }
        if self.unit == "points":
            return {
                **common,
                "passes": self.passes,
                "draws": self.draws,
                "two_lempas": self.two_lempas,
                "points_written": self.written,
                "goats": self.goats,
                "rounds_per_match": _spread(self.match_lengths),
            }
        cycles = self.cycle_lengths
        return {
            **common,
            "stones_received": self.received,
            "stones_paid": self.paid,
            "stones_cancelled": self.cancelled,
            "passes": self.passes,
            "passebunge": self.passebunge,
            "camat_elections": self.elections,
            "goats": self.goats,
            "cycles": len(cycles),
            "rounds_per_cycle": _spread(cycles),
        }


def _spread(counts: Sequence[int]) -> dict[str, Any]:
    """Mean (2 decimals), median, min and max of ``counts``; all None when there are none."""
    return {
        "mean": round(statistics.fmean(counts), 2) if counts else None,
        "median": statistics.median(counts) if counts else None,
        "min": min(counts, default=None),
        "max": max(counts, default=None),
    }


class Simulation:
    """Bot-only matches under ``rules``: seat i plays with ``bot_names[i % len(bot_names)]``.

    All randomness (deals and bots) comes from ``random.Random(seed)``. Call `run` with a round
    budget, then `finish`; each match, once over (or cut by `finish`), is passed to ``on_match``.
    """

    def __init__(
        self,
        rules: Rules,
        bot_names: Sequence[str],
        seed: int | str,
        on_match: Callable[[State], None] | None = None,
    ) -> None:
        if not bot_names:
            raise ValueError("name at least one bot")
        self.rules = rules
        self.rng = random.Random(seed)
        self.bot_names = [bot_names[i % len(bot_names)] for i in range(rules.seats)]
        self.bots = [make_bot(name, random.Random(self.rng.getrandbits(64))) for name in self.bot_names]
        self.tally = Tally(rules.seats, rules.name, rules.unit)
        self.on_match = on_match
        self._current: State | None = None

    def run(self, rounds: int) -> int:
        """Play up to ``rounds`` more rounds (matches start and end as needed); returns the count."""
        state = self._current or self.rules.new_match()
        for _ in range(rounds):
            if state.phase is Phase.OVER:
                self._close(state)
                state = self.rules.new_match()
            state.start_round(self.rules.deal(self.rng))
            play_round(state, self.bots)
            self.tally.add_round(state)
        self._current = state
        return rounds

    def finish(self) -> None:
        """Close the match in progress (counted, and passed to ``on_match``)."""
        if self._current is not None and self._current.round_index:
            self._close(self._current)
        self._current = None

    def _close(self, state: State) -> None:
        self.tally.end_match()
        if self.on_match is not None:
            self.on_match(state)
