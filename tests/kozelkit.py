"""Builders for Kozel tests: rules, deals, hand-made positions and outcomes, in RULES.md's terms.

>>> kozel_deal("6-6 1-2", "5-5 0-3", bazaar="1-1 0-0").rest[:2]
(Tile.parse('1-1'), Tile.parse('0-0'))
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from engine.core import Deal, Phase, State
from engine.events import KozelOutcome
from engine.rules.kozel import Kozel, KozelState
from engine.tiles import TILES
from engine.variants import make_rules
from tests.conftest import tiles

KOZEL_SEATS = ("Anna", "Boris", "Vera", "Gleb")
"""Display names for Kozel records, in seat order (the first ``seats`` are used)."""


def kozel(seats: int = 4, **options: object) -> Kozel:
    """Kozel's rules for ``seats`` with RECORD.md ``options`` (defaults from RULES.md)."""
    rules = make_rules("kozel", options, seats)
    assert isinstance(rules, Kozel)
    return rules


def kozel_deal(*hands: str, bazaar: str | None = None) -> Deal:
    """A deal from hands written as strings; the ``bazaar`` (top first) names some tiles from its
    top, and the tiles nobody holds follow in index order."""
    parsed = tuple(tiles(hand) for hand in hands)
    top = tiles(bazaar) if bazaar is not None else ()
    held = {t for hand in parsed for t in hand} | set(top)
    return Deal(parsed, top + tuple(t for t in TILES if t not in held))


def kozel_round(
    *hands: str,
    bazaar: str | None = None,
    rules: Kozel | None = None,
    start: Mapping[str, object] | None = None,
) -> KozelState:
    """A match (from ``start``, or a new one) with its first round dealt from ``hands``."""
    state = (rules or kozel(len(hands))).new_match(start)
    state.start_round(kozel_deal(*hands, bazaar=bazaar))
    return state


def kozel_position(
    hands: Sequence[str],
    ends: tuple[int, int],
    *,
    to_act: int,
    last_placer: int,
    bazaar: str = "",
    points: Sequence[int] | None = None,
    pending: Sequence[int] | None = None,
    rules: Kozel | None = None,
) -> KozelState:
    """A mid-round position: ``hands`` per seat as strings, the open ``ends``, who acts, who placed
    last, the bazaar (top first) and the score."""
    return (rules or kozel(len(hands))).position(
        [hand.split() for hand in hands],
        ends,
        to_act=to_act,
        last_placer=last_placer,
        bazaar=bazaar.split(),
        points=points,
        pending=pending,
    )


def kozel_outcome(state: State) -> KozelOutcome:
    """The Kozel outcome of the round that ``state`` has just finished."""
    assert state.phase is not Phase.PLAYING, "the round is still being played"
    assert isinstance(state.outcome, KozelOutcome)
    return state.outcome


DOMENG_WORDS = re.compile(
    r"mappakuling|passebunge|mappano|cappu|\bceki\b|\bpollo\b|manguno|mattikkeng|cucuq|camat"
    r"|\bstones?\b|penalty|unused",
    re.IGNORECASE,
)
"""Domeng's words (RULES.md glossary and D-rules): none may name a Kozel move or outcome."""
STRAY = re.compile(r"^\s*[·,;:]|[·,;:]\s*$|·\s*·|[·,;:]\s*[·,;:]|\(\s*\)|\s{2}|\s[,;:)]")
"""A separator with nothing on one side, two in a row, empty brackets or doubled spaces."""


def assert_kozel_words(text: str) -> None:
    """Fail unless ``text`` (a narration line) is in Kozel's words with no stray separator."""
    assert not DOMENG_WORDS.search(text), f"a Domeng word in Kozel's narration: {text!r}"
    assert not STRAY.search(text), f"a stray separator: {text!r}"
