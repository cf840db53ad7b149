"""Counted words in English, for the command line and the admin history's narration: "1 pass",
"2 passes". The forms are chosen by the standard library's ``gettext.ngettext`` (English's plural
rule, CLDR's ``one`` for exactly 1 and ``other`` for the rest); the browser client words every
language with ``Intl.PluralRules`` instead (static/js/i18n.js).

>>> count(1, "pass", "passes"), count(2, "pass", "passes"), count(0, "stone")
('1 pass', '2 passes', '0 stones')
"""

from __future__ import annotations

import gettext

__all__ = ["count"]


def count(n: int, one: str, other: str | None = None) -> str:
    """``n`` and the word's form for it: ``one`` for 1, ``other`` (default ``one + "s"``) else."""
    return f"{n} {gettext.ngettext(one, other if other is not None else one + 's', n)}"
