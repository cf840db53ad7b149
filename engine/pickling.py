"""Pickling of the engine's frozen dataclasses by their fields, the same in both builds.

A mypyc-compiled frozen dataclass cannot be unpickled through its default state (which sets the
attributes one by one, and a frozen class refuses that), and the values that cross processes
(views to the bot workers, actions back, rounds to the review workers) are such dataclasses.
`pickle_by_fields` registers a reducer (`copyreg`) that rebuilds each from its fields through
``__init__``, whether the module runs compiled or not (docs/engine.md, "Compiled build").
"""

from __future__ import annotations

import copyreg
import dataclasses
from collections.abc import Callable
from typing import Any

__all__ = ["pickle_by_fields"]


def _reducer(cls: type[Any]) -> Callable[[Any], tuple[type[Any], tuple[Any, ...]]]:
    names = tuple(field.name for field in dataclasses.fields(cls))

    def reduce(obj: Any) -> tuple[type[Any], tuple[Any, ...]]:
        return cls, tuple(getattr(obj, name) for name in names)

    return reduce


def pickle_by_fields(*classes: type[Any]) -> None:
    """Pickle each of ``classes`` (dataclasses whose ``__init__`` takes every field) as its class
    and its fields' values."""
    for cls in classes:
        copyreg.pickle(cls, _reducer(cls))
