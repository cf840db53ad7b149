"""Tiles of the double-six set, their notation, and the bit masks the rules run on.

A tile is one of the 28 pieces `a-b` with 0 <= a <= b <= 6. Each tile has an index 0..27 (0-0, 0-1,
…, 0-6, 1-1, …, 6-6) and a bit `1 << index`, so a hand is an ``int`` bit set and "which tiles in this
hand fit an end showing 4" is ``hand & PIP_MASKS[4]``.

>>> Tile.parse("5-3")
Tile.parse('3-5')
>>> str(Tile.parse("6-6")), Tile.parse("6-6").is_lempa, Tile.parse("6-6").pips
('6-6', True, 12)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from engine.errors import InvalidActionError, quoted

__all__ = [
    "FULL_SET",
    "MAX_PIP",
    "PIP_MASKS",
    "TILES",
    "Tile",
    "iter_mask",
    "mask_of",
    "pip_sum",
    "tile_at",
    "tiles_of",
]

MAX_PIP = 6


@dataclass(frozen=True, slots=True)
class Tile:
    """One domino tile, always stored low-high: ``low <= high``, pips 0..6.

    Use `Tile.parse` or `TILES`; every tile is a shared instance, so ``is`` and ``==`` agree.
    """

    low: int
    high: int
    index: int
    bit: int

    @property
    def pips(self) -> int:
        """The tile's pip sum (0..12); 0-0 counts 0 (D9)."""
        return self.low + self.high

    @property
    def is_lempa(self) -> bool:
        """Whether the tile is a lempa (a double, e.g. 6-6)."""
        return self.low == self.high

    def has(self, pip: int) -> bool:
        """Whether one half of the tile shows ``pip``."""
        return pip in (self.low, self.high)

    def other(self, pip: int) -> int:
        """The pip on the half opposite to ``pip``; raises ValueError when the tile lacks ``pip``."""
        if pip == self.low:
            return self.high
        if pip == self.high:
            return self.low
        raise ValueError(f"tile {self} has no {pip}")

    def __reduce__(self) -> tuple[Callable[[int], Tile], tuple[int]]:
        """Pickle as the index, unpickle as the shared instance (so ``is`` still holds in another
        process, e.g. a bot worker).

        >>> import pickle
        >>> pickle.loads(pickle.dumps(Tile.parse("3-5"))) is Tile.parse("3-5")
        True
        """
        return tile_at, (self.index,)

    @staticmethod
    def parse(text: str) -> Tile:
        """Parse ``"a-b"`` (either order, pips 0..6) into its tile.

        Raises `InvalidActionError` (code ``invalid_tile``) for anything else.
        """
        if not isinstance(text, str):
            raise InvalidActionError("invalid_tile", f"a tile is a string 'a-b', got {quoted(text)}")
        parts = text.strip().split("-")
        if len(parts) != 2 or not all(len(p) == 1 and p in "0123456789" for p in parts):
            raise InvalidActionError(
                "invalid_tile", f"{quoted(text)} is not a tile: expected 'a-b' with pips 0..6"
            )
        a, b = int(parts[0]), int(parts[1])
        if a > MAX_PIP or b > MAX_PIP:
            raise InvalidActionError("invalid_tile", f"{quoted(text)} is not a tile of the double-six set")
        return _BY_PIPS[a][b]

    @staticmethod
    def from_pips(a: int, b: int) -> Tile:
        """The tile showing pips ``a`` and ``b`` (either order)."""
        return _BY_PIPS[a][b]

    def __str__(self) -> str:
        return f"{self.low}-{self.high}"

    def __repr__(self) -> str:
        return f"Tile.parse('{self}')"


def _build() -> tuple[tuple[Tile, ...], list[list[Tile]]]:
    tiles: list[Tile] = []
    by_pips: list[list[Tile | None]] = [[None] * (MAX_PIP + 1) for _ in range(MAX_PIP + 1)]
    for low in range(MAX_PIP + 1):
        for high in range(low, MAX_PIP + 1):
            tile = Tile(low, high, len(tiles), 1 << len(tiles))
            tiles.append(tile)
            by_pips[low][high] = by_pips[high][low] = tile
    return tuple(tiles), [[t for t in row if t is not None] for row in by_pips]


TILES, _BY_PIPS = _build()
"""All 28 tiles in index order: 0-0, 0-1, …, 6-6."""

FULL_SET = (1 << len(TILES)) - 1
"""The bit set of the whole double-six set."""

PIP_MASKS: tuple[int, ...] = tuple(sum(t.bit for t in TILES if t.has(pip)) for pip in range(MAX_PIP + 1))
"""``PIP_MASKS[p]``: the bit set of the 7 tiles that show pip ``p``."""

_TILE_OF_BIT: dict[int, Tile] = {t.bit: t for t in TILES}

_CHUNK_PIPS: tuple[tuple[int, ...], ...] = tuple(
    tuple(sum(TILES[7 * c + i].pips for i in range(7) if m >> i & 1) for m in range(128)) for c in range(4)
)


def pip_sum(mask: int) -> int:
    """The pip sum of a bit set of tiles (four table look-ups; D9: 0-0 counts 0).

    >>> pip_sum(Tile.parse("6-6").bit | Tile.parse("1-2").bit)
    15
    """
    c = _CHUNK_PIPS
    return c[0][mask & 127] + c[1][mask >> 7 & 127] + c[2][mask >> 14 & 127] + c[3][mask >> 21]


def iter_mask(mask: int) -> Iterator[Tile]:
    """Yield the tiles of a bit set in index order."""
    while mask:
        low = mask & -mask
        yield _TILE_OF_BIT[low]
        mask ^= low


_CHUNK_TILES: tuple[tuple[tuple[Tile, ...], ...], ...] = tuple(
    tuple(tuple(TILES[7 * c + i] for i in range(7) if m >> i & 1) for m in range(128)) for c in range(4)
)
"""``_CHUNK_TILES[c][m]``: the tiles of bits ``7c .. 7c + 6`` set in ``m``, in index order."""


def tiles_of(mask: int) -> tuple[Tile, ...]:
    """The tiles of a bit set, in index order (four table look-ups, as `pip_sum`).

    >>> [str(t) for t in tiles_of(Tile.parse("6-6").bit | Tile.parse("0-1").bit)]
    ['0-1', '6-6']
    """
    c = _CHUNK_TILES
    return c[0][mask & 127] + c[1][mask >> 7 & 127] + c[2][mask >> 14 & 127] + c[3][mask >> 21]


def mask_of(tiles: Iterable[Tile]) -> int:
    """The bit set of some tiles (duplicates collapse)."""
    mask = 0
    for tile in tiles:
        mask |= tile.bit
    return mask


def tile_at(index: int) -> Tile:
    """The shared tile of ``index`` (0..27, the order of `TILES`); raises IndexError otherwise."""
    return TILES[index]
