"""``domeng review RECORD --round N --seat S``: a fair review of one seat's decisions in one round
(engine/review.py), as text or JSON. The same figures the table's "Review my round" shows."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from app.cli.common import error_place, load_document, positive, terminal_text
from engine.errors import RecordError
from engine.record import read_header
from engine.review import (
    CONFIDENCE,
    DEFAULT_SAMPLES,
    SHOWN_DECIMALS,
    Decision,
    RoundReview,
    review_record,
    summary,
)

__all__ = ["add_review_parser", "cmd_review", "review_text"]


def add_review_parser(sub: Any) -> None:
    """Add ``review`` to the ``domeng`` subcommands (``sub``: argparse's subparsers action)."""
    review = sub.add_parser(
        "review",
        help="review one seat's decisions in one round of a record, from what that seat could see",
        description="Cost every option of each decision with two or more legal actions, from the seat's "
        "view at that moment (never the other hands), and mark the choices that lost more than the "
        "threshold (Domeng: stones received minus paid this round; Kozel: points written).",
    )
    review.add_argument("file", help="a domeng-record/1 JSON file, or - for standard input")
    review.add_argument("--round", type=positive, required=True, help="the round, from 1 (as replay prints)")
    review.add_argument("--seat", type=int, required=True, help="the seat, from 0 (P0 is the record's first)")
    review.add_argument(
        "--samples",
        type=positive,
        default=DEFAULT_SAMPLES,
        help=f"worlds per decision (default {DEFAULT_SAMPLES})",
    )
    review.add_argument("--seed", type=int, default=0, help="seed of the sampled worlds (default 0)")
    review.add_argument(
        "--threshold", type=float, help="mark choices that lost more (default: 0.25 stones, 2 points)"
    )
    review.add_argument(
        "--json", action="store_true", help="print the review as one JSON object (round from 0)"
    )
    review.set_defaults(func=cmd_review)


def _decision_text(decision: Decision, unit: str, threshold: float) -> list[str]:
    """A decision's lines: its head (``± margin``: the `CONFIDENCE` interval of the loss, never
    one standard error) and each option's expected cost; every figure to `SHOWN_DECIMALS`
    decimals, as the table's review shows it (static/js/review.js) and as marking compares it."""
    head = f"Action {decision.at + 1}: {decision.chosen}"
    if decision.lost > 0:
        head += f": best {decision.best} (lost {_figure(decision.lost)} ± {_margin(decision)} {unit})"
    else:
        head += f": the best option (± {_margin(decision)} {unit})"
    if decision.marked:
        head += "  MARKED"
    elif decision.within_noise(threshold):
        head += f"  too close to tell (margin ± {_margin(decision)})"
    lines = [head]
    for option in decision.options:
        mark = "  <- chosen" if option.action == decision.chosen else ""
        lines.append(f"    {_figure(option.cost):>7}  {option.action}{mark}")
    return lines


def _margin(decision: Decision) -> str:
    """The decision's margin (`_figure`), ``?`` when the worlds cannot tell."""
    return _figure(decision.margin) if decision.margin != float("inf") else "?"


def _figure(x: float) -> str:
    """A cost, loss or margin of the review as printed: to `SHOWN_DECIMALS` (2) decimals, rounded
    once from the exact value (``0.3149`` → ``0.31``, as static/js/review.js `shown` does). A third
    decimal would only print noise: at the default 200 worlds the margin of a loss is about a tenth
    of a stone (or a point or more in Kozel), and a decision is marked by the figures to 2 decimals
    (`engine.review.shown`)."""
    return f"{x:.{SHOWN_DECIMALS}f}"


def review_text(review: RoundReview, names: tuple[str, ...]) -> str:
    """The review as readable lines: a header, each decision with its options (expected cost in
    the review's unit, best first; a gap too close to tell says so with its margin), the actions a
    bot made for the seat's player (not judged) and the one-line summary."""
    name = terminal_text(names[review.seat])  # a file's words: shown, never run
    out = [
        f"{review.variant} · round {review.round + 1} · P{review.seat} ({name}) · "
        f"{review.samples} worlds per decision, seed {review.seed} · costs in {review.unit} this round"
        f" · ± is the {CONFIDENCE:.0%} margin of the loss"
    ]
    if not review.decisions:
        other = " other" if review.by_bot else ""
        out.append(f"No decision with a choice: every{other} action of this seat was forced.")
    for decision in review.decisions:
        out += _decision_text(decision, review.unit, review.threshold)
    for at in review.by_bot:
        why = " when their turn timer ran out" if at in review.by_timer else ""
        out.append(f"Action {at + 1}: played by a bot for this seat's player{why}, not judged")
    out.append(summary(review).capitalize() + ".")
    return "\n".join(out)


def cmd_review(args: argparse.Namespace) -> int:
    """``domeng review FILE --round N --seat S [--samples K] [--seed X] [--threshold T] [--json]``;
    exit 2 with RECORD.md's error object (``--json``) or a message for a record that does not
    replay, a round or seat not in it, or a round that has not ended."""
    try:
        doc = load_document(args.file)
        review = review_record(doc, args.round - 1, args.seat, args.samples, args.seed, args.threshold)
        names = read_header(doc)[1]
    except RecordError as error:
        if args.json:
            print(json.dumps(error.to_json()))
        else:
            print(f"domeng review: {error.code}{error_place(error)}: {error.message}", file=sys.stderr)
        return 2
    print(json.dumps(review.to_json()) if args.json else review_text(review, names))
    return 0
