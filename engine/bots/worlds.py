"""Determinized worlds: a playable `State` built from a view plus one guess of the hidden tiles.

Search bots never see the real state. They sample the hidden tiles (`engine.bots.inference`) and
rebuild the position from the view's public facts (chain ends, turn, last placer, who has placed,
stones or points, the bazaar's size) with the sampled hands, then play on it with the one rules
engine (`State.legal_actions`, `State.apply`). A world's log starts empty: every event in it was
caused by the search.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.bots.facts import rules_of
from engine.core import State
from engine.events import Passed, RoundEnded
from engine.tiles import TILES
from engine.views import PlayerView

__all__ = ["round_costs", "world_state"]


def world_state(view: PlayerView, hands: Sequence[int], rest: Sequence[int]) -> State:
    """The round in ``view`` with ``hands`` (bit sets per seat) and ``rest`` (tile indexes; for
    Kozel the bazaar, top first), built by the view's rules (`Rules.world`). The view must be of
    a round being played; the result may be searched freely (it shares nothing mutable with
    anything)."""
    return rules_of(view).world(view, hands, [TILES[i] for i in rest])


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
