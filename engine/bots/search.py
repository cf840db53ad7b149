"""Search on one world (a fully known `State`): medium-policy playouts and an exact endgame solve.

Both the ``hard`` bot (on sampled worlds) and the omniscient measurement bot (on the true one)
evaluate a candidate action the same way: fork the world, apply the candidate, then either
play the round out with the medium heuristic for every seat (each seat reading only its own
hand, the ends and the hand sizes) or, when few tiles are left, solve it exactly by max^n: every
seat picks the action that minimises its own loss, and a vector of losses (one per seat) is
backed up (stones for Domeng, points written for Kozel; `engine.bots.worlds.round_costs`).
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence

from engine.actions import Action, Draw, Pass
from engine.bots.facts import in_pairs
from engine.bots.medium import Situation, best_actions
from engine.bots.worlds import round_costs
from engine.core import Phase, State
from engine.tiles import FULL_SET

__all__ = ["ENDGAME_TILES", "evaluate_on_world", "is_endgame", "playout", "solve"]

ENDGAME_TILES = 6
"""At most this many tiles left in all hands (and an empty bazaar): solve exactly, not play out."""

_PLAYING = Phase.PLAYING
_BIT_COUNT = int.bit_count


def _policy_action(
    state: State,
    legal: list[Action],
    rest: int,
    missing: Sequence[int],
    rng: random.Random,
    variant: str,
    pairs: bool,
) -> Action:
    """The medium heuristic's action for the seat to act, from that seat's own knowledge: its
    hand, the ends, the hand sizes, the tiles it has not seen and the numbers each seat is
    publicly known to lack (``missing``, bit n = number n; from passes and draws); ``variant``
    and ``pairs`` as in `Situation`."""
    seat = state.to_act
    hands = state.hands
    held = 0
    for hand in hands:
        held |= hand
    own = hands[seat]
    sit = Situation(
        variant,
        seat,
        own,
        None if state.left < 0 else (state.left, state.right),
        tuple(map(_BIT_COUNT, hands)),
        (held | rest) & ~own & FULL_SET,
        tuple(missing),
        pairs,
    )
    best = best_actions(sit, legal)
    return best[0] if len(best) == 1 else rng.choice(best)


def playout(state: State, rest: int, rng: random.Random, missing: Sequence[int] | None = None) -> None:
    """Play ``state``'s round to its end with the medium heuristic for every seat. ``rest`` is the
    bit set of the tiles set aside at the search's root (unused tiles, bazaar); ``missing`` the
    numbers each seat was publicly known to lack there (bit n = number n; default none), updated
    as the playout goes: a pass adds both open numbers (D12, K3), a draw (K3) brings an unknown
    tile (no number is ruled out any more)."""
    known = list(missing) if missing is not None else [0] * state.seats
    variant = state.rules.name
    pairs = in_pairs(state.rules)
    while state.phase is _PLAYING:
        legal = state.legal_actions()
        if len(legal) > 1:
            state.apply(_policy_action(state, legal, rest, known, rng, variant, pairs))
            continue
        only = legal[0]
        kind = type(only)
        if kind is Pass:
            known[only.seat] |= 1 << state.left | 1 << state.right
        elif kind is Draw:
            known[only.seat] = 0
        state.apply(only)


def _tiles_left(state: State) -> int:
    return sum(h.bit_count() for h in state.hands)


def is_endgame(state: State) -> bool:
    """Whether ``state`` is small enough to `solve`: few tiles in hands and nothing to draw (K3)."""
    if state.rules.draws_from_rest and state.rest():
        return False
    return _tiles_left(state) <= ENDGAME_TILES


def solve(state: State, start: int) -> list[float]:
    """Max^n: the loss of every seat (from ``state.log[start:]`` on) when each seat, at its turn,
    takes the action with its own lowest loss (ties: the first in canonical order)."""
    if state.phase is not _PLAYING:
        return round_costs(state, start)
    legal = state.legal_actions()
    if len(legal) == 1:
        state.apply(legal[0])
        return solve(state, start)
    seat = state.to_act
    best: list[float] | None = None
    for action in legal:
        child = state.fork()
        child.apply(action)
        costs = solve(child, start)
        if best is None or costs[seat] < best[seat]:
            best = costs
    assert best is not None
    return best


def evaluate_on_world(
    world: State,
    candidates: list[Action],
    seat: int,
    rest: int,
    seed: int,
    start: int = 0,
    deadline: float | None = None,
    missing: Sequence[int] | None = None,
) -> list[float] | None:
    """``seat``'s loss after each of ``candidates`` on ``world`` (left unchanged): an exact solve
    in the endgame, else one playout seeded by ``seed`` (the same seed for every candidate:
    common random numbers; ``missing`` as in `playout`). None when ``deadline`` (a
    ``time.perf_counter()`` value) passes before every candidate is done."""
    out = []
    for action in candidates:
        if deadline is not None and time.perf_counter() > deadline:
            return None
        child = world.fork()
        child.apply(action)
        if child.phase is _PLAYING and is_endgame(child):
            costs = solve(child, start)
        else:
            playout(child, rest, random.Random(seed), missing)
            costs = round_costs(child, start)
        out.append(costs[seat])
    return out
