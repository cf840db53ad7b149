"""Duplicate matches that measure a bot's strength against a field (``domeng arena``).

The scheme (one for every variant):

- A **board** is ``rounds_per_board`` rounds. The deal of round ``r`` of board ``b`` is
  ``rules.deal_from_seed("arena/{seed}/{b}/{r}")``: it depends only on the seed, the board and
  the round, so every table that plays the board sees the same deals. The rounds are played as a
  match under the variant's options; when a match ends inside a board (Domeng's camat target, a
  Kozel goat, D11/K9) the next one starts at once with the next deal, so every table plays exactly
  as many rounds and camat elections and goats happen and are counted.
- The **field-only table** plays the board with the field in every seat.
- The candidate then sits in each **rotation** in turn, the field in the other seats: each single
  seat for Domeng (5 rotations) and Kozel with 2, 3 or 4 seats; each pair for Kozel pairs
  (P0+P2, then P1+P3, K10); every seat at once in table-mean mode (five of A against five of B).
- Per board, the candidate's figure is its mean per round and per rotation of what its seats
  received — Domeng: stones received (D5–D9); Kozel: points written (K7; with pairs both
  partners write the same, so this is per side) — and the field's figure is what the field-only
  table's same seats received in the same rounds. The pair of figures per board feeds
  `engine.paired.paired_ratio` (ratio of means, delta method, 99% one-sided bound).
- Bots draw from ``random.Random("arena/{seed}/{b}/{rotation}/{seat}")`` (rotation ``field`` for
  the field-only table), so a board's result does not depend on which process plays it.

Players come by name from `engine.bots.BOTS`, then from ``engine.bots.MEASUREMENT_BOTS`` (bots
that see the whole state through ``choose_seeing(state, seat)``, e.g. the omniscient ceiling).
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import engine.bots
from engine.actions import Action
from engine.bots import BOTS
from engine.core import Phase, State
from engine.events import DomengOutcome, KozelOutcome, RoundEnded
from engine.paired import paired_ratio, percentiles
from engine.record import write_record
from engine.rules.base import Rules
from engine.simulate import Tally
from engine.variants import make_rules
from engine.views import player_view

__all__ = [
    "METRICS",
    "ArenaSpec",
    "ArenaTally",
    "BoardResult",
    "Player",
    "TableResult",
    "deal_seed",
    "known_players",
    "make_player",
    "play_board",
    "play_table",
]

METRICS: dict[str, tuple[str, str]] = {
    "domeng": ("stones received", "camat elections"),
    "kozel": ("points written", "goats"),
}
"""Per variant: what a seat receives (lower is better) and the events counted beside it."""


def known_players() -> list[str]:
    """Every name `make_player` accepts: the levels of `BOTS`, then the measurement-only bots."""
    return [*BOTS, *(n for n in _measurement_bots() if n not in BOTS)]


def _measurement_bots() -> Mapping[str, Callable[[random.Random], Any]]:
    # read at call time, so a test may register a measurement bot of its own
    return engine.bots.MEASUREMENT_BOTS


@dataclass(frozen=True, slots=True)
class Player:
    """A seat's decision maker: ``act(state, seat)`` returns its action. A bot that has
    ``choose_seeing`` sees the true state; any other sees only ``player_view(state, seat)``.
    ``bot`` is the bot itself (for its counters, e.g. a benchmark reading its playouts)."""

    name: str
    act: Callable[[State, int], Action]
    bot: object


def make_player(name: str, rng: random.Random, params: Mapping[str, object] | None = None) -> Player:
    """The player called ``name`` (see `known_players`) drawing from ``rng``, built with the
    keyword arguments ``params`` (e.g. ``{"samples": 20}`` for the hard bot); raises ValueError
    for an unknown name, TypeError for a parameter its bot does not take."""
    kind = BOTS.get(name) or _measurement_bots().get(name)
    if kind is None:
        raise ValueError(f"unknown bot {name!r} (known: {', '.join(known_players())})")
    bot = kind(rng, **(params or {}))
    seeing = getattr(bot, "choose_seeing", None)
    if callable(seeing):
        return Player(name, seeing, bot)
    choose = bot.choose
    return Player(name, lambda state, seat: choose(player_view(state, seat)), bot)


def deal_seed(seed: str, board: int, round_index: int) -> str:
    """The seed of round ``round_index`` of ``board`` (module docstring).

    >>> deal_seed("7", 3, 0)
    'arena/7/3/0'
    """
    return f"arena/{seed}/{board}/{round_index}"


@dataclass(frozen=True, slots=True)
class ArenaSpec:
    """What to measure: ``candidates`` (usually one; the second is the ceiling of the gap figure)
    against ``field`` under ``variant`` with RECORD.md ``options`` and ``seats`` (None: the
    variant's default), ``boards`` boards of ``rounds_per_board`` rounds from ``seed``;
    ``params`` gives a level's bots keyword arguments (level → name → value), e.g. a fixed
    number of samples so that a search bot's choices do not depend on the machine's speed."""

    variant: str
    options: Mapping[str, object]
    seats: int | None
    candidates: tuple[str, ...]
    field: str
    boards: int
    rounds_per_board: int
    seed: str
    table_mean: bool = False
    params: Mapping[str, Mapping[str, object]] = dataclasses.field(default_factory=dict)

    def rules(self) -> Rules:
        """The variant's rules; raises `EngineError` (``invalid_seats``, ``invalid_options``…)."""
        return make_rules(self.variant, self.options, self.seats)

    def rotations(self, rules: Rules) -> tuple[tuple[int, ...], ...]:
        """The seat sets the candidate takes in turn: every seat at once in table-mean mode, else
        each scoring side (a seat; with Kozel pairs, a pair, K10)."""
        if self.table_mean:
            return (tuple(range(rules.seats)),)
        return rules.sides()

    def check(self) -> Rules:
        """The rules, after checking every name and count; raises ValueError or `EngineError`."""
        for name in (*self.candidates, self.field):
            if name not in known_players():
                raise ValueError(f"unknown bot {name!r} (known: {', '.join(known_players())})")
        if not self.candidates:
            raise ValueError("name a candidate")
        if self.boards < 1 or self.rounds_per_board < 1:
            raise ValueError("boards and rounds per board must be at least 1")
        for level, params in self.params.items():
            try:
                make_player(level, random.Random(0), params)
            except TypeError as error:
                raise ValueError(f"bad parameters for {level}: {error}") from None
        return self.rules()


@dataclass(frozen=True, slots=True)
class TableResult:
    """One table's play of one board: ``names`` by seat, the per-seat ``totals`` of the metric
    (stones received or points written), ``events`` (the seats elected camat or made goat, per
    round: how many rounds), ``decision_ms`` per level (decisions with a choice only), and the
    RECORD.md documents of its matches (empty unless asked for)."""

    label: str
    names: tuple[str, ...]
    totals: tuple[int, ...]
    rounds: int
    events: Mapping[tuple[int, ...], int]
    decision_ms: Mapping[str, list[float]]
    records: tuple[dict[str, Any], ...] = ()

    def total(self, seats: Sequence[int]) -> float:
        """The metric summed over ``seats`` and divided by their number (per side)."""
        return sum(self.totals[s] for s in seats) / len(seats)

    def events_of(self, seats: Sequence[int]) -> int:
        """Rounds in which one of ``seats`` was elected camat (Kozel: was goat)."""
        return sum(count for who, count in self.events.items() if set(who) & set(seats))


@dataclass(frozen=True, slots=True)
class BoardResult:
    """A board's ``field`` table and, per candidate, its table in each rotation."""

    board: int
    rotations: tuple[tuple[int, ...], ...]
    field: TableResult
    candidates: Mapping[str, tuple[TableResult, ...]]

    def tables(self) -> list[TableResult]:
        """Every table of the board, the field-only one first."""
        return [self.field, *(t for tables in self.candidates.values() for t in tables)]


def _event_seats(state: State) -> tuple[int, ...]:
    """The seats of the round just finished that were elected camat (D11) or made goat (K9)."""
    event = state.log[-1]
    assert isinstance(event, RoundEnded)
    outcome = event.outcome
    if isinstance(outcome, DomengOutcome):
        return (outcome.winner,) if outcome.camat_elected else ()
    assert isinstance(outcome, KozelOutcome)
    return outcome.goat


def _play_round(
    state: State, players: Sequence[Player], times: dict[str, list[float]], clock: Callable[[], float]
) -> None:
    """Play the round in progress to its end, timing each decision that has a choice (ms)."""
    while state.phase is Phase.PLAYING:
        seat = state.to_act
        player = players[seat]
        if len(state.legal_actions()) == 1:
            state.apply(player.act(state, seat))
            continue
        start = clock()
        action = player.act(state, seat)
        times[player.name].append((clock() - start) * 1000)
        state.apply(action)


def play_table(
    spec: ArenaSpec,
    rules: Rules,
    board: int,
    label: str,
    names: Sequence[str],
    keep_records: bool = False,
    clock: Callable[[], float] = time.perf_counter,
) -> TableResult:
    """Play ``board`` at a table seated by ``names``; ``label`` names the rotation in the bots'
    seeds (module docstring). ``clock`` (seconds) times the decisions."""
    players = [
        make_player(n, random.Random(f"arena/{spec.seed}/{board}/{label}/{s}"), spec.params.get(n))
        for s, n in enumerate(names)
    ]
    tally = Tally(rules.seats, rules.name)
    events: Counter[tuple[int, ...]] = Counter()
    times: dict[str, list[float]] = {name: [] for name in names}
    records: list[dict[str, Any]] = []
    seat_names = [f"P{seat} {name}" for seat, name in enumerate(names)]
    state = rules.new_match()
    for r in range(spec.rounds_per_board):
        if state.phase is Phase.OVER:
            records += [write_record(state, seat_names)] if keep_records else []
            state = rules.new_match()
        state.start_round(rules.deal_from_seed(deal_seed(spec.seed, board, r)))
        _play_round(state, players, times, clock)
        tally.add_round(state)
        who = _event_seats(state)
        if who:
            events[who] += 1
    if keep_records:
        records.append(write_record(state, seat_names))
    return TableResult(
        label, tuple(names), tuple(tally.charged), tally.rounds, dict(events), times, tuple(records)
    )


def play_board(
    spec: ArenaSpec, board: int, keep_records: bool = False, clock: Callable[[], float] = time.perf_counter
) -> BoardResult:
    """Play ``board``: the field-only table, then each candidate in each rotation. Deterministic
    but for ``decision_ms``; raises ValueError/`EngineError` for a bad spec (see `ArenaSpec.check`)."""
    rules = spec.rules()
    rotations = spec.rotations(rules)
    seats = rules.seats
    field_table = play_table(spec, rules, board, "field", [spec.field] * seats, keep_records, clock)
    candidates = {}
    for name in spec.candidates:
        tables = []
        for index, chosen in enumerate(rotations):
            names = [name if seat in chosen else spec.field for seat in range(seats)]
            tables.append(play_table(spec, rules, board, f"r{index}", names, keep_records, clock))
        candidates[name] = tuple(tables)
    return BoardResult(board, rotations, field_table, candidates)


@dataclass
class ArenaTally:
    """Running figures over boards, added in any order (`add`); `summary` sorts them by board."""

    spec: ArenaSpec
    per_board: dict[str, dict[int, tuple[float, float]]] = field(default_factory=dict)
    events: dict[str, list[int]] = field(default_factory=dict)
    decision_ms: dict[str, list[float]] = field(default_factory=dict)

    def add(self, result: BoardResult) -> None:
        """Count one board: per candidate its per-round figure and the field's in the same seats."""
        rounds = len(result.rotations) * self.spec.rounds_per_board
        for name, tables in result.candidates.items():
            mine = sum(t.total(seats) for t, seats in zip(tables, result.rotations, strict=True))
            theirs = sum(result.field.total(seats) for seats in result.rotations)
            self.per_board.setdefault(name, {})[result.board] = (mine / rounds, theirs / rounds)
            counts = self.events.setdefault(name, [0, 0])
            counts[0] += sum(t.events_of(seats) for t, seats in zip(tables, result.rotations, strict=True))
            counts[1] += sum(result.field.events_of(seats) for seats in result.rotations)
        for table in result.tables():
            for level, times in table.decision_ms.items():
                self.decision_ms.setdefault(level, []).extend(times)

    def pairing(self, name: str) -> dict[str, Any]:
        """The figures of candidate ``name`` against the field (JSON-ready)."""
        boards = self.per_board.get(name, {})
        pairs = [boards[b] for b in sorted(boards)]
        mine, theirs = [p[0] for p in pairs], [p[1] for p in pairs]
        out: dict[str, Any] = {
            "candidate": name,
            "field": self.spec.field,
            "boards": len(pairs),
            "candidate_mean": round(sum(mine) / len(pairs), 4) if pairs else None,
            "field_mean": round(sum(theirs) / len(pairs), 4) if pairs else None,
            "ratio": None,
            "ratio_upper99": None,
            "ratio_lower99": None,
            "candidate_events": self.events.get(name, [0, 0])[0],
            "field_events": self.events.get(name, [0, 0])[1],
        }
        try:
            est = paired_ratio(mine, theirs)
        except ValueError:
            return out  # fewer than 2 boards, or the field received nothing
        out.update(ratio=round(est.ratio, 4), ratio_upper99=round(est.upper, 4))
        out.update(ratio_lower99=round(est.lower, 4))
        return out

    def gap(self) -> dict[str, Any] | None:
        """With a second candidate (the ceiling): how much of the field-to-ceiling gap the first
        closes, ``(field - first) / (field - ceiling)`` per round, with its 99% lower bound."""
        if len(self.spec.candidates) < 2:
            return None
        first, ceiling = self.spec.candidates[:2]
        a, c = self.per_board.get(first, {}), self.per_board.get(ceiling, {})
        boards = sorted(set(a) & set(c))
        out: dict[str, Any] = {"candidate": first, "ceiling": ceiling, "closed": None, "closed_lower99": None}
        try:
            est = paired_ratio([a[b][1] - a[b][0] for b in boards], [c[b][1] - c[b][0] for b in boards])
        except ValueError:
            return out
        out.update(closed=round(est.ratio, 4), closed_lower99=round(est.lower, 4))
        return out

    def summary(self) -> dict[str, Any]:
        """Everything as JSON-ready data: the spec, one pairing per candidate, the gap figure (or
        None) and decision times per level in ms (p50, p95, p99, max; decisions with a choice)."""
        rules = self.spec.rules()
        metric, event = METRICS[rules.name]
        spec = self.spec
        rotations = spec.rotations(rules)
        scheme = "side" if len(rotations) < rules.seats else "seat"
        return {
            "variant": rules.name,
            "seats": rules.seats,
            "options": rules.options(),
            "scheme": "table" if spec.table_mean else scheme,
            "rotations": [list(r) for r in rotations],
            "boards": spec.boards,
            "rounds_per_board": spec.rounds_per_board,
            "seed": spec.seed,
            "params": {level: dict(params) for level, params in spec.params.items()},
            "metric": metric,
            "events": event,
            "pairings": [self.pairing(name) for name in spec.candidates],
            "gap": self.gap(),
            "decision_ms": {level: _timing(times) for level, times in sorted(self.decision_ms.items())},
        }


def _timing(times: Sequence[float]) -> dict[str, Any]:
    figures = {k: None if v is None else round(v, 4) for k, v in percentiles(times).items()}
    return {"decisions": len(times), **figures, "max": round(max(times), 4) if times else None}
