"""How likely a sampled world makes the other seats' past placements, under a model of their play.

A world that gives an opponent tiles with which it would hardly have played what it did is less
likely than one that explains its plays. For each earlier placement by another seat that had a
choice, the world's hand of that seat at that moment is rebuilt (its sampled hand plus the tiles it
placed since) and the played option's chance is worked out under three kinds of player:

- *medium*: the medium heuristic scores the options; chance ``EPSILON / options + (1 - EPSILON) *
  softmax(score / TEMPERATURE)``;
- *heavy*: plays the heaviest tile (ties shared), or at random one time in three (the easy bot,
  and many beginners);
- *uniform*: any option alike (``1 / options``); it keeps every consistent world possible.

A seat plays the whole round as one kind, unknown: its chance of the round's placements is the mix
``sum(KINDS[k] * product of its chances as kind k)``, so a seat whose plays fit the medium model
soon weighs worlds as sharply as that model, and one that does not falls back on the others. A
world's weight is the product over the other seats.

Kozel: a placement is used only when that seat has not drawn since (a drawn tile, hidden from
others, would otherwise be put back into the rebuilt hand).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import exp

from engine.actions import Play
from engine.bots.medium import Situation, score_actions
from engine.core import play_actions
from engine.events import Drew, Event, Passed, Placed
from engine.tiles import FULL_SET, PIP_MASKS, iter_mask

__all__ = ["EPSILON", "KINDS", "TEMPERATURE", "world_weight"]

EPSILON = 0.05
"""The share of a medium-kind player's choices taken as uniform, whatever the model says."""

TEMPERATURE = 0.25
"""The softmax temperature over medium's scores (score units)."""

KINDS = (0.5, 0.2, 0.3)
"""The prior chance that a seat plays as the medium, heavy or uniform kind (module doc)."""


def _options(seat: int, hand: int, left: int, right: int) -> list[Play]:
    fit = hand & (PIP_MASKS[left] | PIP_MASKS[right])
    out: list[Play] = []
    for tile in iter_mask(fit):
        plays = play_actions(seat, tile)
        if tile.has(left):
            out.append(plays[1])
        if tile.has(right) and (left != right) and not (tile.has(left) and tile.is_lempa):
            out.append(plays[2])
    return out


def world_weight(
    log: Sequence[Event],
    me: int,
    hands: Sequence[int],
    start_size: int,
    variant: str,
    pairs: bool,
    memo: dict[tuple[int, int], tuple[float, float, float]] | None = None,
) -> float:
    """The likelihood weight of a world with ``hands`` (bit sets, the current hands) for the public
    ``log`` of the round, seen by seat ``me``; ``start_size`` tiles were dealt to each seat, of
    the variant named ``variant`` (it picks the medium heuristic's scoring), ``pairs`` as in K10.

    ``memo``, when given, keeps the chance of each placement per rebuilt hand (keyed by the
    event's index in ``log`` and the hand): pass the same dict for every world of one ``log``."""
    seats = len(hands)
    memo = {} if memo is None else memo
    later = list(hands)  # each seat's hand "from now on", rebuilt walking the log backwards
    drew_since = [False] * seats
    rebuilt: list[tuple[int, int] | None] = [None] * len(log)
    previous_drew = [False] * len(log)
    for i in range(len(log) - 1, -1, -1):
        event = log[i]
        if type(event) is Placed:
            later[event.seat] |= event.tile.bit
            rebuilt[i] = (later[event.seat], int(drew_since[event.seat]))
        elif type(event) is Drew:
            drew_since[event.seat] = True
        if i > 0 and type(log[i - 1]) is Drew:
            previous_drew[i] = True
    per_kind = [[1.0] * seats for _ in KINDS]  # per kind, each seat's chance of its placements
    missing = [0] * seats  # the numbers each seat is publicly known to lack (passes, draws)
    counts = [start_size] * seats
    chain = 0
    ends: tuple[int, int] | None = None
    for i, event in enumerate(log):
        if type(event) is Drew:
            counts[event.seat] += 1
            missing[event.seat] = 0
            continue
        if type(event) is Passed:
            if ends is not None:
                missing[event.seat] |= 1 << ends[0] | 1 << ends[1]
            continue
        if type(event) is not Placed:
            continue
        seat = event.seat
        entry = rebuilt[i]
        if ends is not None and seat != me and entry is not None and not entry[1] and not previous_drew[i]:
            chances = memo.get((i, entry[0]))
            if chances is None:
                chances = _chances(seat, entry[0], ends, counts, missing, chain, event, variant, pairs)
                memo[i, entry[0]] = chances
            for kind, chance in zip(per_kind, chances, strict=True):
                kind[seat] *= chance
        counts[seat] -= 1
        chain |= event.tile.bit
        ends = event.ends
    weight = 1.0
    for seat in range(seats):
        if seat != me:
            weight *= sum(prior * kind[seat] for prior, kind in zip(KINDS, per_kind, strict=True))
    return weight


def _chances(
    seat: int,
    hand: int,
    ends: tuple[int, int],
    counts: list[int],
    missing: list[int],
    chain: int,
    event: Placed,
    variant: str,
    pairs: bool,
) -> tuple[float, float, float]:
    """The chance of ``event`` for a seat holding ``hand``, as each kind of `KINDS`."""
    options = _options(seat, hand, ends[0], ends[1])
    if len(options) <= 1:
        return _CERTAIN
    unseen = FULL_SET & ~hand & ~chain
    sit = Situation(variant, seat, hand, ends, tuple(counts), unseen, tuple(missing), pairs)
    scores = score_actions(sit, options)
    top = max(scores)
    heaviest = max(a.tile.pips for a in options)
    total = 0.0
    played = 0.0
    heavy = 0
    played_heavy = False
    for action, score in zip(options, scores, strict=True):
        value = exp((score - top) / TEMPERATURE)
        total += value
        is_heavy = action.tile.pips == heaviest
        heavy += is_heavy
        if action.tile is event.tile and action.end == (event.end or "L"):
            played = value
            played_heavy = is_heavy
    n = len(options)
    medium = EPSILON / n + (1 - EPSILON) * played / total
    heavy_chance = 1 / (3 * n) + (2 / (3 * heavy) if played_heavy else 0.0)
    return medium, heavy_chance, 1 / n


_CERTAIN = (1.0, 1.0, 1.0)
