"""Determinized worlds: a playable `State` built from a view plus one guess of the hidden tiles.

Search bots never see the real state. They sample the hidden tiles (`engine.bots.inference`) and
rebuild the position from the view's public facts (chain ends, turn, last placer, who has placed,
stones or points, the bazaar's size) with the sampled hands, then play on it with the one rules
engine (`State.legal_actions`, `State.apply`). A world's log starts empty: every event in it was
caused by the search.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from engine.core import Phase, State
from engine.events import Passed, RoundEnded
from engine.rules.base import Rules
from engine.rules.domeng import Domeng, DomengState
from engine.rules.kozel import Kozel, KozelState
from engine.tiles import TILES
from engine.variants import make_rules
from engine.views import PlayerView

__all__ = ["round_costs", "world_state"]


@lru_cache(maxsize=64)
def _rules(variant: str, options: tuple[tuple[str, object], ...], seats: int) -> Rules:
    return make_rules(variant, dict(options), seats)


def _rules_of(view: PlayerView) -> Rules:
    return _rules(view.variant, tuple(sorted(view.options.items())), len(view.hand_counts))


def world_state(view: PlayerView, hands: Sequence[int], rest: Sequence[int]) -> State:
    """The round in ``view`` with ``hands`` (bit sets per seat) and ``rest`` (tile indexes; for
    Kozel the bazaar, top first). The view must be of a round being played; the result may be
    searched freely (it shares nothing mutable with anything)."""
    rules = _rules_of(view)
    state: State
    if isinstance(rules, Domeng):
        assert view.table is not None and view.stones is not None
        domeng = DomengState(rules, view.table, view.stones, view.camat, None, None)
        domeng.elections = list(view.elections or [0] * rules.seats)
        state = domeng
    else:
        assert isinstance(rules, Kozel)
        kozel = KozelState(
            rules, view.points or [0] * rules.seats, view.pending or [0] * rules.seats, None, None
        )
        kozel.bazaar = [TILES[i] for i in rest]
        state = kozel
    state.hands = list(hands)
    if view.ends is not None:
        state.left, state.right = view.ends
    state.to_act = view.to_act if view.to_act is not None else 0
    state.last_placer = view.last_placer
    state.placed = sum(1 << s for s in view.placed)
    state.phase = Phase.PLAYING
    state.round_index = view.round
    if view.ends is None and len(view.legal) == 1:
        only = view.legal[0]
        state.opening = getattr(only, "tile", None)
    return state


def round_costs(state: State, start: int = 0) -> list[float]:
    """What each seat lost in the events of ``state.log`` from index ``start`` on, for a round that
    has ended there. Domeng: stones received minus stones paid (D5; a seat wants fewest stones);
    Kozel: the points written (K7; with pairs, the pair's, K10)."""
    seats = state.seats
    costs = [0.0] * seats
    log = state.log
    for i in range(start, len(log)):
        event = log[i]
        kind = type(event)
        if kind is Passed:
            settlement = event.settlement  # type: ignore[union-attr]
            if settlement is not None:
                costs[settlement.receiver] += settlement.from_table
                for payer, paid in settlement.from_payers:
                    costs[settlement.receiver] += paid
                    costs[payer] -= paid
        elif kind is RoundEnded:
            outcome = event.outcome  # type: ignore[union-attr]
            if hasattr(outcome, "settlement"):
                settlement = outcome.settlement
                costs[settlement.receiver] += settlement.from_table
                for payer, paid in settlement.from_payers:
                    costs[settlement.receiver] += paid
                    costs[payer] -= paid
            else:
                for seat, amount in enumerate(outcome.written):
                    costs[seat] += amount
    return costs
