"""Actions a seat can take, and their RECORD.md notation.

Four kinds, all frozen: `Play` (place a tile), `Pass`, `Draw` (Kozel: take the bazaar's top tile) and
`PlayLempas` (Kozel K4: two lempas in one move). ``parse_action`` and ``Action.to_json`` are inverse:

>>> parse_action({"seat": 2, "play": "3-6", "end": "R"})
Play(seat=2, tile=Tile.parse('3-6'), end='R', flip=False)
>>> parse_action({"seat": 1, "pass": True}).to_json()
{'seat': 1, 'pass': True}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias

from engine.errors import InvalidActionError, quoted
from engine.pickling import pickle_by_fields
from engine.tiles import Tile

__all__ = ["Action", "Draw", "End", "Pass", "Play", "PlayLempas", "parse_action", "parse_end"]

End: TypeAlias = Literal["L", "R"]


def parse_end(value: object) -> End | None:
    """``"L"``, ``"R"`` or None; anything else raises `InvalidActionError` (``invalid_end``)."""
    if value is None:
        return None
    if value == "L":
        return "L"
    if value == "R":
        return "R"
    raise InvalidActionError("invalid_end", f"end must be 'L' or 'R', got {quoted(value)}")


@dataclass(frozen=True, slots=True)
class Play:
    """Place ``tile`` on ``end`` of the chain.

    ``end`` may be None when the placement is unambiguous (the opening tile, a tile that fits one end
    only, or equal ends); D13 requires it otherwise. ``flip`` matters for the opening tile only: it is
    laid high-low (``6-3`` opens ``[6|3]``) instead of low-high.
    """

    seat: int
    tile: Tile
    end: End | None = None
    flip: bool = False

    def to_json(self) -> dict[str, object]:
        """RECORD.md: ``{"seat": i, "play": "a-b", "end": "L"}`` (no ``end`` when it is None)."""
        text = f"{self.tile.high}-{self.tile.low}" if self.flip else str(self.tile)
        out: dict[str, object] = {"seat": self.seat, "play": text}
        if self.end is not None:
            out["end"] = self.end
        return out

    def __str__(self) -> str:
        where = f" on {self.end}" if self.end else ""
        return f"P{self.seat} plays {self.to_json()['play']}{where}"


@dataclass(frozen=True, slots=True)
class Pass:
    """Pass the turn: only legal with no tile that fits (D12), in Kozel only with an empty bazaar."""

    seat: int

    def to_json(self) -> dict[str, object]:
        """RECORD.md: ``{"seat": i, "pass": true}``."""
        return {"seat": self.seat, "pass": True}

    def __str__(self) -> str:
        return f"P{self.seat} passes"


@dataclass(frozen=True, slots=True)
class Draw:
    """Kozel: take the bazaar's top tile (K3), only with no fit in hand."""

    seat: int

    def to_json(self) -> dict[str, object]:
        """RECORD.md: ``{"seat": i, "draw": true}``."""
        return {"seat": self.seat, "draw": True}

    def __str__(self) -> str:
        return f"P{self.seat} draws"


@dataclass(frozen=True, slots=True)
class PlayLempas:
    """Kozel two lempas (K4): ``tiles`` are two lempas, each placed on the end showing its number."""

    seat: int
    tiles: tuple[Tile, Tile]

    def to_json(self) -> dict[str, object]:
        """RECORD.md: ``{"seat": i, "play": ["a-a", "b-b"]}``."""
        return {"seat": self.seat, "play": [str(t) for t in self.tiles]}

    def __str__(self) -> str:
        return f"P{self.seat} plays {self.tiles[0]} and {self.tiles[1]}"


Action: TypeAlias = Play | Pass | Draw | PlayLempas


def _parse_seat(obj: Mapping[str, object]) -> int:
    seat = obj.get("seat")
    if not isinstance(seat, int) or isinstance(seat, bool) or seat < 0:
        raise InvalidActionError("invalid_action", f"'seat' must be a seat number, got {quoted(seat)}")
    return seat


def parse_action(obj: object) -> Action:
    """Parse one RECORD.md action object.

    Raises `InvalidActionError` (codes ``invalid_action``, ``invalid_tile``, ``invalid_end``) when the
    object is not an action; whether it is legal is the rules' business.
    """
    if not isinstance(obj, Mapping):
        raise InvalidActionError("invalid_action", f"an action is an object, got {quoted(obj)}")
    seat = _parse_seat(obj)
    kinds = [k for k in ("play", "pass", "draw") if k in obj]
    if len(kinds) != 1:
        raise InvalidActionError(
            "invalid_action", f"an action has exactly one of 'play', 'pass', 'draw': {dict(obj)!r}"
        )
    kind = kinds[0]
    if kind in ("pass", "draw"):
        if obj[kind] is not True:
            raise InvalidActionError("invalid_action", f"'{kind}' must be true: {dict(obj)!r}")
        return Pass(seat) if kind == "pass" else Draw(seat)
    play = obj["play"]
    if isinstance(play, list):
        if len(play) != 2 or "end" in obj:
            raise InvalidActionError(
                "invalid_action", f"a two-lempas play lists exactly two tiles and no end: {dict(obj)!r}"
            )
        first, second = Tile.parse(play[0]), Tile.parse(play[1])
        return PlayLempas(seat, (first, second))
    tile = Tile.parse(play)
    text = str(play).strip()
    flip = not tile.is_lempa and int(text[0]) > int(text[-1])
    return Play(seat, tile, parse_end(obj.get("end")), flip)


pickle_by_fields(Play, Pass, Draw, PlayLempas)
