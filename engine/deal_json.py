"""The one JSON codec of a deal: ``{"hands": [["a-b", ...], ...], "rest": ["a-b", ...]}``.

The store keeps a round's deal under ``rest``; a RECORD.md round names the same list by the
variant's `engine.rules.base.Rules.rest_name` (``unused`` or ``bazaar``), so both functions take
the key. Tiles are written as `str` writes them (low-high).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine.core import Deal
from engine.errors import EngineError
from engine.tiles import TILES, Tile

__all__ = ["deal_to_json", "parse_deal"]


def deal_to_json(deal: Deal, rest_key: str = "rest") -> dict[str, Any]:
    """``deal`` as JSON-ready data: ``{"hands": [[tile, ...] per seat], rest_key: [tile, ...]}``.

    >>> from engine.variants import make_rules
    >>> deal_to_json(make_rules("kozel", {}, 2).deal_from_seed(1), "bazaar")["bazaar"][:2]
    ['2-3', '0-5']
    """
    return {
        "hands": [[str(t) for t in hand] for hand in deal.hands],
        rest_key: [str(t) for t in deal.rest],
    }


def parse_deal(data: object, hand_sizes: Sequence[int] | None = None, rest_key: str = "rest") -> Deal:
    """The `Deal` written by `deal_to_json` (``rest_key`` names the rest; ``hand_sizes``, when
    given, are the sizes the hands must have, D10, K1).

    Raises `EngineError`: ``invalid_deal`` (not an object, a missing key, wrong sizes, not the 28
    tiles once each) or ``invalid_tile`` (a tile that is not ``a-b`` of the double-six set).
    """
    if not isinstance(data, Mapping):
        raise EngineError("invalid_deal", "a deal is an object with 'hands' and the rest")
    hands = data.get("hands")
    seats = len(hand_sizes) if hand_sizes is not None else None
    if not isinstance(hands, list) or (seats is not None and len(hands) != seats):
        raise EngineError("invalid_deal", f"'hands' must list {seats or 'the'} hands")
    parsed = tuple(_tiles(hand, f"hand of P{seat}") for seat, hand in enumerate(hands))
    if rest_key not in data:
        raise EngineError("invalid_deal", f"a deal needs '{rest_key}'")
    rest = _tiles(data[rest_key], f"'{rest_key}'")
    if hand_sizes is not None and tuple(len(h) for h in parsed) != tuple(hand_sizes):
        raise EngineError("invalid_deal", f"hands must have sizes {list(hand_sizes)}")
    try:
        return Deal(parsed, rest)
    except ValueError as error:
        raise EngineError("invalid_deal", str(error)) from None


def _tiles(value: object, what: str) -> tuple[Tile, ...]:
    if not isinstance(value, list):
        raise EngineError("invalid_deal", f"{what} must be a list of tiles")
    if len(value) > len(TILES):  # before a tile is read: a record may list millions
        raise EngineError("invalid_deal", f"{what} lists {len(value)} tiles: the set has {len(TILES)}")
    try:
        return tuple(Tile.parse(t) for t in value)
    except EngineError as error:
        raise EngineError(error.code, f"{what}: {error.message}") from None
