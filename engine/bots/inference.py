"""What a seat can infer about hidden tiles from its view, and deals sampled consistently with it.

A seat sees its own hand, the chain, every hand's size, the rest's size (Domeng: 3 unused tiles,
D10; Kozel: the bazaar's count, K1) and the round's public events. From those:

- **unseen** tiles: the set minus its own hand minus the chain. They lie in the other hands and
  the rest.
- **missing numbers**: a pass shows the passer holds neither open number (D12, K3); a Kozel draw
  shows the drawer held neither at that moment, and a draw until a fit means the tile played right
  after it was the last one drawn. Tiles drawn later are not covered by earlier evidence.

Each other hand is kept as *slots*, one per tile it holds, with the numbers that tile cannot show.
Evidence applies to every slot held at that moment, so older slots carry more constraints: slots
are nested. When a seat plays a tile, the most constrained slot that allows the tile is removed
(after a draw: the drawn slot); with nested slots this never rules out a true deal.

`Knowledge` groups the slots into cells (owner, allowed tiles, count) and `sample_hidden` deals
the unseen tiles into the cells at random, never failing on a consistent view.

>>> from engine.variants import make_rules
>>> from engine.views import player_view
>>> import random
>>> state = make_rules("domeng").new_match()
>>> state.start_round(make_rules("domeng").deal_from_seed(1))
>>> know = infer(player_view(state, 0))
>>> len(know.cells), bin(know.unseen).count("1")
(5, 23)
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from math import comb

from engine.bots.facts import rules_of
from engine.events import Drew, Passed, Placed
from engine.pickling import pickle_by_fields
from engine.rules.base import Rules
from engine.tiles import FULL_SET, PIP_MASKS, Tile, iter_mask, mask_of
from engine.views import PlayerView

__all__ = [
    "REST",
    "Cell",
    "Knowledge",
    "allowed_tiles",
    "infer",
    "public_missing",
    "sample_hidden",
    "sample_weighted",
]

REST = -1
"""The owner of the cell of tiles set aside: Domeng's unused tiles, Kozel's bazaar."""


def _allowed(missing: int) -> int:
    mask = FULL_SET
    for number in range(7):
        if missing >> number & 1:
            mask &= ~PIP_MASKS[number]
    return mask


_ALLOWED = tuple(_allowed(missing) for missing in range(128))


def allowed_tiles(missing: int) -> int:
    """The tiles (bit set) showing none of the numbers in ``missing`` (bit ``n`` = number ``n``).

    >>> bin(allowed_tiles(0b1111110)).count("1")  # only 0-0 shows no 1..6
    1
    """
    return _ALLOWED[missing]


@dataclass(frozen=True, slots=True)
class Cell:
    """``count`` hidden tiles held by ``owner`` (a seat, or `REST`), each one of ``allowed``."""

    owner: int
    allowed: int
    count: int


@dataclass(frozen=True, slots=True)
class Knowledge:
    """What ``seat`` knows: its ``hand`` and the ``unseen`` tiles (bit sets), ``missing[s]`` the
    numbers seat s is known to lack in every tile it now holds (bit n = number n; 0 for
    ``seat``), hand ``counts``, the ``rest`` count, and the ``cells`` the unseen tiles fill
    exactly (their counts sum to the unseen tiles)."""

    seat: int
    hand: int
    unseen: int
    missing: tuple[int, ...]
    counts: tuple[int, ...]
    rest: int
    cells: tuple[Cell, ...]
    assumed: int = 0
    """Tiles taken to be in the rest because the match's first round opened with a lower tile
    (D11, K2); `sample_hidden` drops this assumption if no deal fits with it."""


def _slots_from_log(view: PlayerView, start_size: int) -> list[list[int]]:
    """Per seat, the missing-number masks of the slots of its current hand (see module doc), as
    every seat can read them from the public log; a view from mid-round (a log that does not
    account for every tile) pads or cuts them to the hand counts."""
    seats = len(view.hand_counts)
    slots: list[list[int]] = [[0] * start_size for _ in range(seats)]
    ends: tuple[int, int] | None = None
    previous: object = None
    for event in view.log:
        kind = type(event)
        if kind is Placed:
            assert isinstance(event, Placed)
            own = slots[event.seat]
            if own:
                if isinstance(previous, Drew) and previous.seat == event.seat:
                    own.pop()
                else:
                    _remove_slot(own, event.tile.low, event.tile.high)
            ends = event.ends
        elif kind is Passed or kind is Drew:
            if ends is not None:
                lack = 1 << ends[0] | 1 << ends[1]
                own = slots[event.seat]  # type: ignore[union-attr]
                own[:] = [m | lack for m in own]
            if kind is Drew:
                slots[event.seat].append(0)  # type: ignore[union-attr]
        previous = event
    for other, count in enumerate(view.hand_counts):
        if len(slots[other]) != count:
            slots[other] = (slots[other] + [0] * count)[:count]
    return slots


def public_missing(view: PlayerView) -> tuple[int, ...]:
    """Per seat, the numbers (bit n = number n) every tile it now holds is publicly known to lack:
    from its passes (D12, K3) and Kozel draws (K3), as in `infer`, but for every seat, ``view``'s
    own included (what the others know of it)."""
    slots = _slots_from_log(view, rules_of(view).hand_sizes()[0])
    return tuple(min(own, key=int.bit_count, default=0) for own in slots)


def _remove_slot(slots: list[int], low: int, high: int) -> None:
    """Remove the most constrained slot whose tile may be ``low-high`` (slots are oldest first)."""
    bits = 1 << low | 1 << high
    for i, missing in enumerate(slots):
        if not missing & bits:
            del slots[i]
            return
    slots.pop()  # inconsistent evidence (cannot happen in a real round): drop the newest


def infer(view: PlayerView, rules: Rules | None = None) -> Knowledge:
    """The `Knowledge` of ``view``'s seat from its view alone; ``rules`` are the view's rules
    (`engine.bots.facts.rules_of`, looked up unless given).

    Raises ValueError for a spectator's view (no seat).
    """
    seat = view.seat
    if seat is None or view.hand is None:
        raise ValueError("a spectator's view has no hand to infer from")
    hand = mask_of(view.hand)
    chain = 0
    for event in view.log:
        if type(event) is Placed:
            chain |= event.tile.bit
    unseen = FULL_SET & ~hand & ~chain
    counts = view.hand_counts
    rest = view.bazaar if view.bazaar is not None else 3
    if rules is None:
        rules = rules_of(view)
    start = rules.hand_sizes()[0]  # the tiles each seat was dealt (D10, K1)
    slots = _slots_from_log(view, start)
    slots[seat] = []
    cells: list[Cell] = []
    assumed = _skipped_openers(view, rules.opening_order) & unseen
    missing = []
    for other, own in enumerate(slots):
        missing.append(min(own, key=int.bit_count, default=0))
        groups: dict[int, int] = {}
        for mask in own:
            groups[mask] = groups.get(mask, 0) + 1
        for mask, count in groups.items():
            cells.append(Cell(other, allowed_tiles(mask) & unseen, count))
    if rest:
        cells.append(Cell(REST, unseen, rest))
    return Knowledge(seat, hand, unseen, tuple(missing), tuple(counts), rest, tuple(cells), assumed)


def _skipped_openers(view: PlayerView, order: Sequence[Tile]) -> int:
    """In a match's first round, the opening tile had to be the first dealt of ``order`` (the rules'
    ``opening_order``; D11: 6-6, 5-5, 4-4, 3-3; K2: lempas high to low, then 6-5 … 1-0), so
    every tile before it in that order was not dealt to a hand. A match started from a position
    may have a free leader; then this is only an assumption (see `Knowledge.assumed`)."""
    if view.round != 1:
        return 0
    opening = next((e.tile for e in view.log if type(e) is Placed), None)
    if opening is None:
        return 0
    if opening not in order:
        return 0
    return mask_of(order[: order.index(opening)])


def sample_hidden(know: Knowledge, rng: random.Random) -> tuple[list[int], list[int]]:
    """Deal the unseen tiles into ``know``'s cells at random: ``(hands, rest)`` where ``hands[s]``
    is seat s's whole hand as a bit set (``know.seat``'s own included) and ``rest`` the set-aside
    tiles as tile indexes in a random order (Kozel: the bazaar, top first).

    Tries quick random fills (most constrained cell first), then falls back to a complete search,
    so it never fails on a consistent view. The deals are not equally likely when several cells
    are constrained: `sample_weighted` gives the weight that corrects this. Raises ValueError when
    no deal fits (an inconsistent knowledge, which a real view never gives).
    """
    hands, rest, _ = sample_weighted(know, rng)
    return hands, rest


def sample_weighted(know: Knowledge, rng: random.Random) -> tuple[list[int], list[int], float]:
    """`sample_hidden`'s deal ``(hands, rest)`` with its importance weight against a uniform draw
    over every deal consistent with ``know``: the inverse of the chance that the cell-by-cell
    fill proposed it, up to a constant (the product over cells of ``comb(pool, count)``, ``pool``
    the tiles still free that the cell allows when it is filled). Averages weighted by it are
    those of the uniform draw; unweighted, a fill that takes the most constrained cell first
    over-represents deals that leave later constrained cells few choices (measured on medium
    self-play: marginal errors up to 0.19 per tile and seat when several seats have passed).

    The rare deal of the complete search (after 24 failed fills) gets the weight that the fill
    would have given it: an approximation. Raises ValueError as `sample_hidden` does.
    """
    loose = list(know.cells)
    strict = [c if c.owner == REST else Cell(c.owner, c.allowed & ~know.assumed, c.count) for c in loose]
    for cells in [strict, loose] if know.assumed else [loose]:
        cells.sort(key=lambda c: (c.allowed.bit_count() - c.count, c.owner))
        for _ in range(24):
            fill = _random_fill(cells, know.unseen, rng)
            if fill is not None:
                return (*_as_deal(know, cells, fill, rng), _fill_weight(cells, know.unseen, fill))
        fill = _complete_fill(cells, know.unseen, rng)
        if fill is not None:
            return (*_as_deal(know, cells, fill, rng), _fill_weight(cells, know.unseen, fill))
    raise ValueError("no deal is consistent with this knowledge")


def _fill_weight(cells: Sequence[Cell], unseen: int, fill: Sequence[int]) -> float:
    """The inverse chance (up to a constant) that `_random_fill` gives ``fill``: the product of
    ``comb(pool, count)`` over the cells in fill order."""
    free = unseen
    weight = 1
    for cell, mask in zip(cells, fill, strict=True):
        weight *= _COMB[(cell.allowed & free).bit_count()][cell.count]
        free &= ~mask
    return float(weight)


_COMB = tuple(tuple(comb(n, k) for k in range(29)) for n in range(29))


def _random_fill(cells: Sequence[Cell], unseen: int, rng: random.Random) -> list[int] | None:
    free = unseen
    out = []
    for cell in cells:
        pool = [t.bit for t in iter_mask(cell.allowed & free)]
        if len(pool) < cell.count:
            return None
        chosen = rng.sample(pool, cell.count)
        mask = sum(chosen)
        free &= ~mask
        out.append(mask)
    return out


def _complete_fill(cells: Sequence[Cell], unseen: int, rng: random.Random) -> list[int] | None:
    """Backtracking, tile by tile (fewest possible cells first), with a capacity check."""
    tiles = [t.bit for t in iter_mask(unseen)]
    rng.shuffle(tiles)
    tiles.sort(key=lambda bit: sum(1 for c in cells if c.allowed & bit))
    room = [c.count for c in cells]
    out = [0] * len(cells)

    def place(i: int) -> bool:
        if i == len(tiles):
            return True
        bit = tiles[i]
        rest = sum(tiles[i:])
        order = list(range(len(cells)))
        rng.shuffle(order)
        for c in order:
            if room[c] and cells[c].allowed & bit:
                room[c] -= 1
                out[c] |= bit
                if _feasible(cells, room, rest ^ bit) and place(i + 1):
                    return True
                room[c] += 1
                out[c] ^= bit
        return False

    return out if place(0) else None


def _feasible(cells: Sequence[Cell], room: list[int], left: int) -> bool:
    """A necessary condition: every cell can still be filled from the tiles left."""
    return all(not room[c] or (cells[c].allowed & left).bit_count() >= room[c] for c in range(len(cells)))


def _as_deal(
    know: Knowledge, cells: Sequence[Cell], fill: Sequence[int], rng: random.Random
) -> tuple[list[int], list[int]]:
    hands = [0] * len(know.counts)
    hands[know.seat] = know.hand
    rest: list[int] = []
    for cell, mask in zip(cells, fill, strict=True):
        if cell.owner == REST:
            rest = [t.index for t in iter_mask(mask)]
            rng.shuffle(rest)
        else:
            hands[cell.owner] |= mask
    return hands, rest


pickle_by_fields(Cell, Knowledge)
