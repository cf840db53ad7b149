"""Pickling engine values for worker processes: a tile crosses as its index, arrives as the shared tile.

The engine keeps one instance per tile (`engine.tiles.TILES`), and its code may compare tiles with
``is``. Plain pickling of a frozen dataclass would build fresh copies in the other process, so a
view's hand and its legal actions would no longer hold the same objects. Registering a reducer
with `copyreg` makes every pickled `Tile` (inside a `PlayerView`, an `Action` or an event) travel
as its index 0..27 and unpickle as ``TILES[index]``. Importing this module registers it; the
worker imports it by unpickling its first tile, and the parent by importing `app.bots`.

>>> import pickle
>>> from engine.tiles import Tile
>>> pickle.loads(pickle.dumps(Tile.parse("3-5"))) is Tile.parse("3-5")
True
"""

from __future__ import annotations

import copyreg
from collections.abc import Callable

from engine.tiles import TILES, Tile

__all__ = ["tile_at"]


def tile_at(index: int) -> Tile:
    """The shared tile of ``index`` (0..27, as in `engine.tiles`); raises IndexError otherwise."""
    return TILES[index]


def _reduce_tile(tile: Tile) -> tuple[Callable[[int], Tile], tuple[int]]:
    return tile_at, (tile.index,)


copyreg.pickle(Tile, _reduce_tile)
