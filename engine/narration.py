"""Play in words: one line per settlement, outcome or action, in the game's own terms.

Pure text from events (`engine.events`): the command line prints it, the admin history shows it.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.events import (
    DomengOutcome,
    Drew,
    Event,
    KozelOutcome,
    Passed,
    Placed,
    RoundEnded,
    Settlement,
    Termination,
)
from engine.score import DomengScore, KozelScore
from engine.words import count

__all__ = ["describe_events", "describe_outcome", "describe_score", "describe_settlement"]


def describe_settlement(settlement: Settlement, names: Sequence[str]) -> str:
    """One sentence for a settlement, a penalty (D5): ``"Dewi takes 3 stones (penalty, 2 from the
    table, 1 from Eko)"``, ``"Dewi takes 1 stone (penalty, from the table)"`` when one source gave
    all; a shortfall nobody could pay is said plainly: ``"...; 2 more stones cannot be paid and are
    cancelled"``, or ``"Dewi takes no stones: nobody has any of the 2 stones of the penalty to
    give, so they are cancelled"``."""
    who = names[settlement.receiver]
    if settlement.received == 0:
        owed = settlement.owed
        it = "it is" if owed == 1 else "they are"
        what = f"the {count(owed, 'stone')}" if owed == 1 else f"any of the {count(owed, 'stone')}"
        return f"{who} takes no stones: nobody has {what} of the penalty to give, so {it} cancelled"
    sources = [("the table", settlement.from_table)] if settlement.from_table else []
    sources += [(names[payer], amount) for payer, amount in settlement.from_payers if amount]
    if len(sources) == 1:
        detail = f"from {sources[0][0]}"
    else:
        detail = ", ".join(f"{amount} from {source}" for source, amount in sources)
    text = f"{who} takes {count(settlement.received, 'stone')} (penalty, {detail})"
    if settlement.cancelled:
        more = count(settlement.cancelled, "more stone")
        text += f"; {more} cannot be paid and {'is' if settlement.cancelled == 1 else 'are'} cancelled"
    return text


def describe_outcome(outcome: DomengOutcome | KozelOutcome, names: Sequence[str]) -> list[str]:
    """Readable lines for a finished round, in the game's own terms."""
    if isinstance(outcome, KozelOutcome):
        return _describe_kozel(outcome, names)
    if outcome.manguno is None:
        assert outcome.first_cappu is not None
        head = f"{outcome.end.value.upper()}: {names[outcome.first_cappu]} is first cappu"
    else:
        sums = outcome.pip_sums
        head = f"BLOCK: {names[outcome.manguno]} is MANGUNO ({count(sums[outcome.manguno], 'pip')})"
        if outcome.mattikkeng:
            ranked = ", ".join(f"{names[s]} ({sums[s]})" for s in outcome.mattikkeng)
            head += f"; MATTIKKENG {ranked}"
    lines = [head]
    role = "CUCUQ" if outcome.cucuq is not None else "MANGUNO"
    lines.append(f"{role}: {describe_settlement(outcome.settlement, names)}")
    lines.append(f"winner {names[outcome.winner]}")
    if outcome.camat_elected:
        lines.append(f"CAMAT: {names[outcome.winner]} is elected; 25 stones back on the table")
    stones = ", ".join(f"{n} {s}" for n, s in zip(names, outcome.stones, strict=True))
    lines.append(f"table {outcome.table} · stones: {stones}")
    if not outcome.match_over:  # nobody leads after the last round
        lines.append(f"next leader {names[outcome.next_leader]}")
    return lines


def describe_score(score: DomengScore | KozelScore, names: Sequence[str]) -> str:
    """A round in play's score in words, as `describe_outcome` says a finished round's: Domeng's
    ``"table 23 · stones: Ana 1, Budi 0, … · camat none"``, Kozel's ``"points: Ana 14, Budi not
    opened (5 pending), …"`` (the 13 opening, K9)."""
    if isinstance(score, KozelScore):
        points = ", ".join(
            f"{n} {p}" if p else f"{n} not opened ({q} pending)"
            for n, p, q in zip(names, score.points, score.pending, strict=True)
        )
        return f"points: {points}"
    stones = ", ".join(f"{n} {s}" for n, s in zip(names, score.stones, strict=True))
    camat = "none" if score.camat is None else names[score.camat]
    return f"table {score.table} · stones: {stones} · camat {camat}"


def _describe_kozel(outcome: KozelOutcome, names: Sequence[str]) -> list[str]:
    """K5–K9 in words: how the round ended, each hand's value and what was written, the score with
    the 13 opening (pending points in brackets), the goat and the next leader."""
    if outcome.end is Termination.OUT:
        assert outcome.winner is not None
        head = f"OUT: {names[outcome.winner]} placed the last tile"
    elif outcome.winner is None:
        head = "FISH (tied): bazaar empty and nobody can place; the lowest hands write 0"
    else:
        head = f"FISH: bazaar empty and nobody can place; {names[outcome.winner]} has the lowest hand"
    values = zip(names, outcome.hand_values, outcome.written, strict=True)
    hands = ", ".join(f"{n} {count(v, 'pip')} → +{w}" for n, v, w in values)
    score = ", ".join(
        f"{n} {p}" if p else f"{n} not opened ({q} pending)"
        for n, p, q in zip(names, outcome.points, outcome.pending, strict=True)
    )
    lines = [head, f"hands: {hands}", f"points: {score}"]
    if outcome.goat:
        goats = ", ".join(names[s] for s in outcome.goat)
        lines.append(f"GOAT: {goats} (101 or more); the match is over")
    if not outcome.match_over:  # nobody leads after the last round
        lines.append(f"next leader {names[outcome.next_leader]}")
    return lines


def describe_events(events: Sequence[Event], names: Sequence[str]) -> str:
    """One line for what an action caused, e.g. ``"Budi passes (passebunge) · Budi: +2 stones
    (2 from the table)"`` or ``"Ana plays 6-6 · [6|6]"``; Kozel's two lempas (K4) are one move,
    ``"Ana plays two lempas, 2-2 on L and 5-5 on R → [2|5]"``; a round's end adds its summary.
    Only the game's own words: a mappakuling is Domeng's, so a Kozel event never says it."""
    placed = [event for event in events if type(event) is Placed]
    parts = [_two_lempas(placed[0], placed[1], names)] if len(placed) == 2 else []  # K4
    for event in events:
        if type(event) is Placed:
            if len(placed) == 1:
                parts.append(_placed(event, names))
        elif type(event) is Passed:
            kind = " (passebunge)" if event.passebunge else ""
            text = f"{names[event.seat]} passes{kind}"
            if event.settlement is not None:
                text += f" · {describe_settlement(event.settlement, names)}"
            parts.append(text)
        elif type(event) is Drew:
            parts.append(f"{names[event.seat]} draws {event.tile} from the bazaar")
        elif type(event) is RoundEnded:
            parts.append(" · ".join(describe_outcome(event.outcome, names)))
    return " · ".join(parts)


def _placed(event: Placed, names: Sequence[str]) -> str:
    where = f" on {event.end}" if event.end else ""
    note = " (mappakuling)" if event.mappakuling else ""
    return f"{names[event.seat]} plays {event.tile}{where} → [{event.ends[0]}|{event.ends[1]}]{note}"


def _two_lempas(first: Placed, second: Placed, names: Sequence[str]) -> str:
    """K4: both lempas of one move, in the order placed, with the ends after both."""
    ends = f"[{second.ends[0]}|{second.ends[1]}]"
    return (
        f"{names[first.seat]} plays two lempas, {first.tile} on {first.end} and {second.tile} "
        f"on {second.end} → {ends}"
    )
