"""The engine's exceptions, each with a stable machine-readable ``code``.

    ValueError
    └── EngineError                 code, message
        ├── InvalidActionError      the input is not an action or tile at all (syntax)
        ├── IllegalActionError      a well-formed action the rules forbid here
        └── RecordError             a match record that is not a valid domeng-record/1 document;
                                    carries the round and action indexes (RECORD.md)

Codes of `IllegalActionError` (the rule each one enforces):

- ``wrong_seat``          it is another seat's turn
- ``tile_not_in_hand``    the tile is not in the acting seat's hand
- ``does_not_fit``        the tile matches no open end, or not the end named
- ``end_required``        the tile fits both ends with different results and no end is named (D13)
- ``voluntary_pass``      a pass while holding a tile that fits (D12, K3), or in Kozel while the
                          bazaar still has tiles to draw (K3)
- ``wrong_opening_tile``  the first round's opening must be a specific lempa (D11, K2)
- ``round_over``          no round is being played (it has ended, or none is dealt yet)
- ``match_over``          the match has ended by its options
- ``draw_not_allowed``    Kozel: drawing while holding a fit, or from an empty bazaar (K3)
- ``not_two_lempas``      Kozel: the two-lempas move does not apply here (K4)
"""

from __future__ import annotations

import reprlib
from typing import Final

__all__ = ["QUOTED_CHARS", "EngineError", "IllegalActionError", "InvalidActionError", "RecordError", "quoted"]

QUOTED_CHARS: Final = 40
"""About how many characters of a value an error message quotes (`quoted`)."""

_QUOTE = reprlib.Repr()  # (its keyword arguments are Python 3.12's)
_QUOTE.maxlevel, _QUOTE.maxlist, _QUOTE.maxtuple, _QUOTE.maxdict = 2, 3, 3, 3
_QUOTE.maxstring = _QUOTE.maxlong = _QUOTE.maxother = QUOTED_CHARS


def quoted(value: object) -> str:
    """``value`` (anything a record or a frame holds: JSON's strings, numbers, lists, objects) as an
    error message quotes it: its ``repr``, control characters escaped, with long strings and
    numbers cut in the middle and long lists and objects after their first items, so the quote
    is at most twice `QUOTED_CHARS` characters whatever came in (a record may hold a 50 MB string
    or a 4,000-digit number), and is made without writing the whole value out first.

    >>> quoted("6-3")
    "'6-3'"
    >>> quoted("x" * 10**6)
    "'xxxxxxxxxxxxxxxxx...xxxxxxxxxxxxxxxxxx'"
    >>> quoted([[1] * 100] * 100)
    '[[1, 1, 1, ...], [1, 1, 1, ...], [1, 1, 1, ...], ...]'
    """
    text = _QUOTE.repr(value)
    return text if len(text) <= 2 * QUOTED_CHARS else text[: 2 * QUOTED_CHARS - 3] + "..."


class EngineError(ValueError):
    """Base of every engine error: ``code`` is stable, ``message`` is for people."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __reduce__(self) -> tuple[type[EngineError], tuple[object, ...]]:
        # pickled with its own arguments, so it crosses a process pool whole (a worker's error
        # would otherwise fail to unpickle in the parent and break the pool)
        return (type(self), (self.code, self.message))


class InvalidActionError(EngineError):
    """Raised when an action or tile is malformed (bad notation, unknown end, bad seat number)."""


class IllegalActionError(EngineError):
    """Raised when a well-formed action breaks a rule; the message quotes the action and position."""


class RecordError(EngineError):
    """Raised when a match record is invalid; ``round`` and ``action`` index the fault (or None)."""

    def __init__(self, code: str, message: str, round: int | None = None, action: int | None = None) -> None:
        super().__init__(code, message)
        self.round = round
        self.action = action

    def __reduce__(self) -> tuple[type[EngineError], tuple[object, ...]]:
        return (type(self), (self.code, self.message, self.round, self.action))

    def to_json(self) -> dict[str, object]:
        """The RECORD.md error object: ``{"error": {"round", "action", "code", "message"}}``."""
        return {
            "error": {
                "round": self.round,
                "action": self.action,
                "code": self.code,
                "message": self.message,
            }
        }
