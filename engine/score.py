"""Each variant's public score as a typed value: Domeng's stones (D5, D16–D18), Kozel's points (K8).

`State.score` answers with one of these; ``to_json`` is exactly the score part of a view's JSON
(the keys `engine.views.PlayerView` fills), and ``fields`` the same with tuples, as the view takes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, TypeAlias

__all__ = ["DomengScore", "KozelScore", "Score"]


@dataclass(frozen=True, slots=True)
class DomengScore:
    """Domeng's score: ``table`` stones on the table and ``stones`` per seat (D5), the ``camat``
    seat or None (D16), camat ``elections`` per seat, the ``cycle`` of turns in this round, and
    the stones each seat ``received`` over the whole match (the standings' second key)."""

    unit: ClassVar[str] = "stones"
    """What the per-seat figures count."""

    table: int
    stones: tuple[int, ...]
    camat: int | None
    elections: tuple[int, ...]
    cycle: int
    received: tuple[int, ...] = ()

    def seat_figure(self, seat: int) -> int:
        """``seat``'s stones: the figure the standings and charts follow."""
        return self.stones[seat]

    def fields(self) -> dict[str, Any]:
        """The score as `engine.views.PlayerView` keyword arguments (tuples kept)."""
        return {
            "table": self.table,
            "stones": self.stones,
            "camat": self.camat,
            "elections": self.elections,
            "cycle": self.cycle,
            "received": self.received,
        }

    def to_json(self) -> dict[str, Any]:
        """JSON-ready, as a view sends it: ``{"table", "stones", "camat", "elections", "cycle",
        "received"}`` (lists for tuples; no ``camat`` key while there is no camat)."""
        out: dict[str, Any] = {"table": self.table, "stones": list(self.stones)}
        if self.camat is not None:
            out["camat"] = self.camat
        return out | {"elections": list(self.elections), "cycle": self.cycle, "received": list(self.received)}


@dataclass(frozen=True, slots=True)
class KozelScore:
    """Kozel's score: ``bazaar`` tiles left to draw (K3), recorded ``points`` and unrecorded
    ``pending`` per seat (K8), and whether each seat has ``opened`` (recorded points above 0)."""

    unit: ClassVar[str] = "points"
    """What the per-seat figures count."""

    bazaar: int
    points: tuple[int, ...]
    pending: tuple[int, ...]
    opened: tuple[bool, ...]

    def seat_figure(self, seat: int) -> int:
        """``seat``'s recorded points: the figure the standings and charts follow."""
        return self.points[seat]

    def fields(self) -> dict[str, Any]:
        """The score as `engine.views.PlayerView` keyword arguments (tuples kept)."""
        return {"bazaar": self.bazaar, "points": self.points, "pending": self.pending, "opened": self.opened}

    def to_json(self) -> dict[str, Any]:
        """JSON-ready: ``{"bazaar", "points", "pending", "opened"}`` (lists for tuples)."""
        return {
            "bazaar": self.bazaar,
            "points": list(self.points),
            "pending": list(self.pending),
            "opened": list(self.opened),
        }


Score: TypeAlias = DomengScore | KozelScore
"""A variant's public score."""
