"""Confusable skeletons (Unicode Technical Standard #39, section 4) from ICU's spoof checker,
through PyICU: two strings that look alike ("Bоt" with a Cyrillic о, "Bot"; "rn", "m") have the
same skeleton. A skeleton is for comparing only, never for showing.

>>> skeleton("B\u043et 2") == skeleton("Bot 2")
True
>>> skeleton("Dewi") == skeleton("Eko")
False
"""

from __future__ import annotations

import threading
from typing import Final

import icu

__all__ = ["skeleton"]

_local: Final = threading.local()
"""One ICU spoof checker per thread (an ICU service object is not for sharing across threads)."""


def skeleton(text: str) -> str:
    """The UTS #39 skeleton of ``text`` (ICU ``uspoof_getSkeleton`` with no checks, i.e. the
    mixed-script, lower-case-insensitive table that ICU 58+ uses for all).

    Raises `icu.ICUError` only if ICU cannot open its confusable data (a broken install)."""
    checker = getattr(_local, "checker", None)
    if checker is None:
        checker = _local.checker = icu.SpoofChecker()
    result: str = checker.getSkeleton(0, text)
    return result
