"""A fair review of one seat's decisions in one round: every option costed from the seat's view.

Chess sites show where an engine disagreed; bridge sites show a double-dummy analysis that uses
every hand (hindsight). This review is neither: for each decision of a seat that had two or more
legal actions, it rebuilds exactly what that seat could see at that moment (`player_view`: its
own hand, the chain, the public history, the hand sizes and the rest's size) and costs every
option with the ``hard`` bot's estimator (`engine.bots.hard.world_losses`): worlds sampled from
that view alone, weighted by how well they explain the other seats' plays, the round played out
with the medium heuristic (an exact solve near the end), the same worlds for every option. The
real hands of the other seats never enter: a test changes them after each decision and the
review does not change.

Costs are this round's expected loss for the seat, in the variant's unit: Domeng stones received
minus stones paid (D5: a seat wants the fewest stones; `engine.bots.worlds.round_costs`), Kozel
points written (K7; with pairs, the pair's, K10). An option's ``lost`` is its cost above the best
option's. A decision is *marked* when the chosen option lost more than the threshold and more than
its `Decision.margin`: the half-width of a `CONFIDENCE` (95%) interval of ``lost``, so sampling
noise never marks a decision. ``lost`` is the chosen option's cost above the lowest, and the
lowest is picked from the same worlds, so the margin covers every gap at once: with ``k`` options
it is the normal quantile of a Bonferroni split over the chosen's ``k - 1`` paired differences
(1.96 for two options, 2.24 for three, 2.39 for four) times the largest standard error of those
differences (`Decision.noise`; each the delta-method standard error of a self-normalised weighted
mean over the worlds, common random numbers across the options). When every paired difference
lies within its share of the interval, so does ``lost``: across seeds, the review's ``lost`` falls
within its margin of the long-run figure about 95% of the time or more (the split is conservative)
(`tests/test_review.py::test_the_stated_margin_covers_the_gap_across_seeds`). A choice that lost
more than the threshold but not more than the margin is first costed again on more worlds
(`samples` more, up to `MAX_WORLDS_FACTOR` times ``samples``: the margin shrinks as one over the
square root of the worlds); if it is still inside, it is *too close to tell*
(`Decision.within_noise`): shown with its margin, never called a mistake nor said to be within
the threshold. Both compare the figures as a review shows them (`shown`: to `SHOWN_DECIMALS`
decimals), so a marked choice always prints a loss beyond its margin and its threshold.

A move that a bot made for the seat's person (the record's optional ``by_bot``: ``"timeout"``,
their turn timer ran out and a bot played that one turn, or ``"covering"``, a bot covered their
seat while they were away) is not theirs: it is never judged, only listed (`RoundReview.by_bot`,
those of the timer also in `RoundReview.by_timer`), and never counts in the summary.

With a fixed ``samples`` and ``seed`` the review is deterministic (it never reads the clock).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from math import isfinite, sqrt
from statistics import NormalDist
from typing import Any

from engine.actions import Action, parse_action
from engine.bots.hard import world_losses
from engine.core import Phase, State
from engine.errors import EngineError, RecordError
from engine.record import read_header, stored_rounds
from engine.replay import replay_rounds
from engine.views import PlayerView, player_view

__all__ = [
    "CONFIDENCE",
    "DEFAULT_SAMPLES",
    "MAX_WORLDS_FACTOR",
    "SHOWN_DECIMALS",
    "THRESHOLDS",
    "UNITS",
    "Decision",
    "Option",
    "RoundReview",
    "quantile",
    "review_decision",
    "review_record",
    "shown",
    "summary",
]

DEFAULT_SAMPLES = 200
"""Worlds per decision (each option is played out on every one of them)."""

THRESHOLDS: Mapping[str, float] = {"domeng": 0.25, "kozel": 2.0}
"""A decision is marked when its choice lost more than this against the best option: Domeng in
stones, Kozel in points."""

CONFIDENCE = 0.95
"""… and more than its margin: the half-width of an interval of ``lost`` at this confidence."""

SHOWN_DECIMALS = 2
"""Costs, losses and margins are shown to this many decimals; marking compares them so (`shown`)."""

MAX_WORLDS_FACTOR = 4
"""A choice too close to tell is costed again on more worlds, up to this many times ``samples``."""

UNITS: Mapping[str, str] = {"domeng": "stones", "kozel": "points"}
"""The unit of the costs per variant."""


@dataclass(frozen=True, slots=True)
class Option:
    """One legal action at a decision, its expected ``cost`` this round (the variant's unit) and
    ``lost``: its cost above the best option's (0 for the best)."""

    action: Action
    cost: float
    lost: float

    def to_json(self) -> dict[str, Any]:
        """``{"action": <RECORD.md action>, "cost": float, "lost": float}``, as computed: a reader
        rounds them once, as `shown` does (rounded here too, they would be rounded twice:
        0.3149 → 0.315 → 0.32)."""
        return {"action": self.action.to_json(), "cost": self.cost, "lost": self.lost}


@dataclass(frozen=True, slots=True)
class Decision:
    """One decision with a choice: ``at`` is the action's index in the round (from 0), ``chosen``
    the action taken, ``options`` every legal action best first, ``lost`` what the choice cost
    against the best (≥ 0), ``noise`` the largest standard error of the paired differences between
    the choice and each other option over ``worlds`` sampled worlds (infinite when the worlds
    cannot tell), and ``marked`` whether the choice counts as a mistake (see the module).
    ``chain`` (the line left to right as oriented pip pairs) and ``hand`` (the seat's tiles) are
    what the seat saw then, so a page can draw the choice and the better move on the chain."""

    at: int
    chosen: Action
    options: tuple[Option, ...]
    lost: float
    noise: float
    worlds: int
    marked: bool
    chain: tuple[tuple[int, int], ...] = ()
    hand: tuple[str, ...] = ()

    @property
    def best(self) -> Action:
        """The option with the lowest expected cost."""
        return self.options[0].action

    @property
    def margin(self) -> float:
        """The half-width of the `CONFIDENCE` interval of ``lost``, in the variant's unit:
        `quantile` of the options times ``noise`` (a choice is marked only when it lost more than
        this); infinite when the worlds cannot tell."""
        return quantile(len(self.options)) * self.noise

    def within_noise(self, threshold: float) -> bool:
        """Whether the choice lost more than ``threshold`` but not more than the estimate's
        margin: too close to tell (neither a mistake nor within the threshold)."""
        return shown(self.lost) > threshold and not self.marked

    def to_json(self) -> dict[str, Any]:
        """The decision as JSON (actions as RECORD.md writes them, figures as computed: `shown`
        rounds them for a reader)."""
        return {
            "at": self.at,
            "chosen": self.chosen.to_json(),
            "best": self.best.to_json(),
            "options": [o.to_json() for o in self.options],
            "lost": self.lost,
            "noise": _finite(self.noise),
            "margin": _finite(self.margin),
            "worlds": self.worlds,
            "marked": self.marked,
            "chain": [list(pair) for pair in self.chain],
            "hand": list(self.hand),
        }


@dataclass(frozen=True, slots=True)
class RoundReview:
    """The review of ``seat``'s decisions in round ``round`` (from 0) of a ``variant`` match:
    ``decisions`` with a choice in play order, ``threshold`` the marking threshold, ``unit``
    ``"stones"`` or ``"points"``; ``by_bot`` the indexes in the round (from 0) of the seat's
    actions that a bot made for its person (never judged: not in ``decisions``), and ``by_timer``
    those of them it made because the person's turn timer ran out (the record's ``by_bot``
    ``"timeout"``: one turn); the others it made while it covered their seat. ``moves`` counts the
    seat's actions in the round (None: not known): when a bot made every one of them
    (`all_by_bot`) nothing of the person's own is left to review."""

    variant: str
    round: int
    seat: int
    unit: str
    threshold: float
    samples: int
    seed: int
    decisions: tuple[Decision, ...]
    by_bot: tuple[int, ...] = ()
    by_timer: tuple[int, ...] = ()
    moves: int | None = None

    @property
    def all_by_bot(self) -> bool:
        """Whether a bot made every action of the seat in the round (at least one): its person
        played none of it, so there is nothing of theirs to review."""
        return self.moves is not None and 0 < self.moves == len(self.by_bot)

    @property
    def by_cover(self) -> tuple[int, ...]:
        """The seat's actions a bot made while it covered the seat (``by_bot`` less ``by_timer``)."""
        return tuple(at for at in self.by_bot if at not in self.by_timer)

    @property
    def marked(self) -> tuple[Decision, ...]:
        """The decisions marked as mistakes."""
        return tuple(d for d in self.decisions if d.marked)

    @property
    def within_noise(self) -> tuple[Decision, ...]:
        """The decisions too close to tell: a gap above the threshold, inside the margin."""
        return tuple(d for d in self.decisions if d.within_noise(self.threshold))

    @property
    def lost(self) -> float:
        """What the marked decisions cost in all (the summary's figure), in ``unit``."""
        return sum(d.lost for d in self.marked)

    def to_json(self) -> dict[str, Any]:
        """``{"variant", "round", "seat", "unit", "threshold", "samples", "seed", "lost",
        "marked", "decisions": [...], "by_bot": [...], "by_timer": [...], "all_by_bot"}``;
        ``all_by_bot`` is `all_by_bot`; ``marked`` counts the
        marked decisions; each decision says ``within_noise`` (`Decision.within_noise`), its
        ``noise`` and ``margin`` (null when infinite)."""
        return {
            "variant": self.variant,
            "round": self.round,
            "seat": self.seat,
            "unit": self.unit,
            "threshold": self.threshold,
            "samples": self.samples,
            "seed": self.seed,
            "lost": self.lost,
            "marked": len(self.marked),
            "decisions": [
                {**d.to_json(), "within_noise": d.within_noise(self.threshold)} for d in self.decisions
            ],
            "by_bot": list(self.by_bot),
            "by_timer": list(self.by_timer),
            "all_by_bot": self.all_by_bot,
        }


def _finite(x: float) -> float | None:
    """``x`` for JSON, as computed, or None when it is infinite (JSON has no infinity)."""
    return x if isfinite(x) else None


def review_decision(
    view: PlayerView,
    chosen: Action,
    at: int,
    rng: random.Random,
    samples: int = DEFAULT_SAMPLES,
    threshold: float | None = None,
) -> Decision:
    """Cost every legal action of ``view`` (a seat's view at its turn, two or more legal actions)
    on ``samples`` worlds sampled from the view with ``rng``, and judge ``chosen`` (one of them).

    Raises ValueError when ``chosen`` is not legal in ``view`` or the view offers no action."""
    legal = list(view.legal)
    if chosen not in legal:
        raise ValueError(f"{chosen} is not a legal action of P{view.seat} here")
    limit = THRESHOLDS[view.variant] if threshold is None else threshold
    rows: list[list[float]] = []
    weights: list[float] = []
    z = quantile(len(legal))
    while True:
        more_rows, more_weights = world_losses(view, rng, samples)
        rows += more_rows
        weights += more_weights
        costs, noise = _costs(rows, weights, len(legal), legal.index(chosen))
        lost = costs[legal.index(chosen)] - min(costs)
        marked = shown(lost) > limit and shown(lost) > shown(z * noise)
        too_close = shown(lost) > limit and not marked
        if not too_close or not more_rows or len(rows) >= MAX_WORLDS_FACTOR * samples:
            break
    best_cost = min(costs)
    order = sorted(range(len(legal)), key=lambda i: (costs[i], i))
    options = tuple(Option(legal[i], costs[i], costs[i] - best_cost) for i in order)
    hand = tuple(str(tile) for tile in view.hand or ())
    return Decision(at, chosen, options, lost, noise, max(1, len(rows)), marked, tuple(view.chain), hand)


def shown(x: float) -> float:
    """``x`` as a review shows it, to `SHOWN_DECIMALS` decimals (``inf`` stays infinite): a
    decision is marked, or too close to tell, by the figures shown, so a mark never shows a loss
    that prints as no more than its margin (``lost 0.31 ± 0.31``) or its threshold.

    >>> shown(0.3149), shown(0.3051), shown(float("inf"))
    (0.31, 0.31, inf)
    """
    return float(f"{x:.{SHOWN_DECIMALS}f}")


def quantile(options: int) -> float:
    """The normal quantile of a two-sided `CONFIDENCE` interval split (Bonferroni) over the
    ``options - 1`` paired differences between a choice and the other options: 1.96 for two
    options, 2.24 for three, 2.39 for four. Raises ValueError for fewer than two options."""
    if options < 2:
        raise ValueError(f"a decision has two or more options, not {options}")
    return NormalDist().inv_cdf(1 - (1 - CONFIDENCE) / (2 * (options - 1)))


def _costs(rows: list[list[float]], weights: list[float], n: int, mine: int) -> tuple[list[float], float]:
    """The weighted mean cost of each of the ``n`` options over the worlds ``rows`` (weights
    ``weights``), and the largest standard error of the differences between option ``mine`` and
    each other option (`_paired_se`; 0 with no world, so every option is alike)."""
    total = sum(weights)
    if not rows or total <= 0:  # no world could be drawn: every option alike
        return [0.0] * n, 0.0
    costs = [sum(w * row[i] for row, w in zip(rows, weights, strict=True)) / total for i in range(n)]
    noise = max(_paired_se(rows, weights, mine, other) for other in range(n) if other != mine)
    return costs, noise


def _paired_se(rows: list[list[float]], weights: list[float], a: int, b: int) -> float:
    """The standard error of the weighted mean of ``row[a] - row[b]`` over the worlds: the delta
    method for a self-normalised weighted mean, ``sqrt(sum w²(d - mean)²) / sum w``, times
    ``sqrt(n / (n - 1))`` for ``n`` worlds (equal weights give the usual ``stdev / sqrt(n)``);
    infinite with fewer than two worlds."""
    if a == b:
        return 0.0
    if len(rows) < 2:
        return float("inf")
    total = sum(weights)
    diffs = [row[a] - row[b] for row in rows]
    mean = sum(w * d for w, d in zip(weights, diffs, strict=True)) / total
    spread = sum(w * w * (d - mean) ** 2 for w, d in zip(weights, diffs, strict=True))
    n = len(rows)
    return sqrt(spread * n / (n - 1)) / total


def _decisions(doc: object, round_index: int, seat: int) -> Iterator[tuple[int, PlayerView | None, Action]]:
    """Replay ``doc`` (a RECORD.md document) up to round ``round_index`` and yield, for each of
    ``seat``'s turns in it with two or more legal actions, the action's index, the seat's view just
    before it and the action taken; for each of its turns that a bot played for its person (the
    action's ``by_bot``, with a choice or not), the index, None and the action."""
    rules, seats, start, raw_rounds = read_header(doc)
    if not 0 <= seat < len(seats):
        raise RecordError("invalid_seat", f"seat {seat} is not at this {len(seats)}-seat table")
    if not 0 <= round_index < len(raw_rounds):
        raise RecordError(
            "invalid_round",
            f"round {round_index + 1} is not in this record (rounds 1 to {len(raw_rounds)})"
            if raw_rounds
            else "this record holds no round",
        )
    try:
        state: State = rules.new_match(start)
    except EngineError as error:
        raise RecordError(error.code, error.message) from None
    raw = raw_rounds[round_index]
    actions = raw.get("actions", []) if isinstance(raw, Mapping) else []
    for step in replay_rounds(state, stored_rounds(raw_rounds[: round_index + 1]), state.rest_name):
        if step.round != round_index:
            continue
        at = 0 if step.action is None else step.action + 1
        if state.phase is not Phase.PLAYING or state.to_act != seat or not isinstance(actions, Sequence):
            continue
        if at >= len(actions):  # an unfinished round: nothing was chosen here yet
            continue
        if _by_bot(actions[at]):
            yield at, None, parse_action(actions[at])
            continue
        view = player_view(state, seat)
        if len(view.legal) < 2:
            continue
        yield at, view, parse_action(actions[at])
    if state.phase is Phase.PLAYING:  # the slice ends with the round reviewed
        raise RecordError("unfinished_round", "a round is reviewed only after it has ended", round_index)


def _by_bot(raw: object) -> bool:
    """Whether a recorded action was a bot's for the seat's person (its optional ``by_bot``)."""
    return isinstance(raw, Mapping) and bool(raw.get("by_bot"))


def _by_timer(raw: object) -> bool:
    """Whether a recorded action was a bot's for the seat's person because their turn timer ran
    out (its ``by_bot`` is ``"timeout"``)."""
    return isinstance(raw, Mapping) and raw.get("by_bot") == "timeout"


def review_record(
    doc: object,
    round_index: int,
    seat: int,
    samples: int = DEFAULT_SAMPLES,
    seed: int = 0,
    threshold: float | None = None,
) -> RoundReview:
    """Review ``seat``'s decisions in round ``round_index`` (both from 0) of ``doc``, a parsed
    RECORD.md document, with ``samples`` worlds per decision; decision ``at`` draws its worlds
    from ``random.Random(f"{seed}:{round_index}:{seat}:{at}")``, so a seed fixes the review.
    ``threshold`` (default `THRESHOLDS` of the variant) marks the mistakes. The seat's actions a
    bot made for its person (``by_bot``) are not judged, only listed in ``by_bot`` (and those
    of the turn timer, ``"timeout"``, in ``by_timer``).

    Raises `RecordError`: every code of `engine.record.read_record` for an invalid record, and
    ``invalid_seat``, ``invalid_round`` (not in the record) or ``unfinished_round`` (a round is
    reviewed only once it has ended)."""
    turns = list(_decisions(doc, round_index, seat))
    found = [(at, view, chosen) for at, view, chosen in turns if view is not None]
    variant = found[0][1].variant if found else _variant_of(doc)
    decisions = tuple(
        review_decision(view, chosen, at, _rng(seed, round_index, seat, at), samples, threshold)
        for at, view, chosen in found
    )
    limit = THRESHOLDS[variant] if threshold is None else threshold
    by_bot = tuple(at for at, view, _chosen in turns if view is None)
    actions = _actions_of(doc, round_index)
    by_timer = tuple(at for at in by_bot if _by_timer(actions[at]))
    return RoundReview(
        variant,
        round_index,
        seat,
        UNITS[variant],
        limit,
        samples,
        seed,
        decisions,
        by_bot,
        by_timer,
        moves=len(turns),
    )


def _actions_of(doc: object, round_index: int) -> Sequence[object]:
    """The recorded actions of round ``round_index`` of ``doc`` (a record `_decisions` read)."""
    _rules, _seats, _start, raw_rounds = read_header(doc)
    raw = raw_rounds[round_index]
    actions = raw.get("actions", []) if isinstance(raw, Mapping) else []
    return actions if isinstance(actions, Sequence) else []


def _rng(seed: int, round_index: int, seat: int, at: int) -> random.Random:
    """The worlds' random source of one decision: fixed by the seed and the decision's place."""
    return random.Random(f"{seed}:{round_index}:{seat}:{at}")


def _variant_of(doc: object) -> str:
    rules, _seats, _start, _rounds = read_header(doc)
    return rules.name


def summary(review: RoundReview) -> str:
    """One line: ``about 1.4 stones lost to 2 decisions this round`` or ``no clear mistake: no
    choice lost more than 0.25 stones by more than the estimate's margin this round``, then how
    many choices were too close to tell and how many moves a bot made for the seat (not judged)."""
    if review.marked:
        n = len(review.marked)
        line = f"about {review.lost:.1f} {review.unit} lost to {n} decision{'s' if n != 1 else ''} this round"
    else:
        line = (
            f"no clear mistake: no choice lost more than {review.threshold:g} {review.unit} "
            "by more than the estimate's margin this round"
        )
    close = len(review.within_noise)
    if close:
        line += f"; {close} choice{'s' if close != 1 else ''} lost more but too close to tell"
    bots, timer = len(review.by_bot), len(review.by_timer)
    if bots:
        line += f"; {bots} move{'s' if bots != 1 else ''} played by a bot for this seat"
        if timer:
            line += f" ({timer} when its turn timer ran out)"
        line += ", not judged"
    return line
