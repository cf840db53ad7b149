"""Display names people take at a table: what a name may hold, when two names count as the same,
and which names are the table's own labels, which a person may not take (they would pass for a
bot or an empty seat in the play-by-play, which shows names only).

A name is 1 to `MAX_NAME_GRAPHEMES` user-perceived characters (grapheme clusters, UAX #29, counted
with the ``regex`` package's ``\\X``): a joined emoji such as 👩🏽‍💻, a flag or a letter with its
accents counts as one. Control characters, bidirectional controls and other invisible format
characters are refused; the zero-width joiner and emoji tags are kept only inside an emoji.

>>> clean_name("  Dewi   Lestari ")
'Dewi Lestari'
>>> grapheme_count("👩🏽‍💻🇪🇪")
2
>>> name_key("  Ana ") == name_key("ANA") == name_key("Ana\u2800") == name_key("A\u0301na")
True
>>> is_reserved_name("bot 4"), is_reserved_name("Бот 2"), is_reserved_name("Botak")
(True, True, False)
>>> is_reserved_name("Bot 4 · hard"), is_reserved_name("Bot 4 hard"), is_reserved_name("Bot 45")
(True, True, False)
>>> is_reserved_name("Bot"), is_reserved_name("Bot (hard)"), is_reserved_name("Сильный бот")
(True, True, True)
>>> is_reserved_name("B\u043et 2")  # a Cyrillic о: the same skeleton as "Bot 2" (UTS #39)
True
>>> is_reserved_name("\u0432\u043e\u0442 2")  # Cyrillic "вот 2": in upper case, "BOT 2"
True
>>> has_you_marker("Ana (you)"), has_you_marker("Ana（YOU）"), has_you_marker("Ana ( вы )")
(True, True, True)
>>> has_you_marker("Youri"), has_you_marker("Ana (you) too")
(False, False)
>>> has_spectator_marker("Budi (spectator)"), has_spectator_marker("Budi (Зритель 3fa9c1d2)")
(True, True)
>>> has_spectator_marker("Penonton 3fa9c1d2"), has_spectator_marker("Budi (spectator) fan")
(True, False)
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Final

import regex

from app.rooms.errors import RoomError
from app.rooms.skeleton import skeleton
from app.rooms.watchers import is_tag

__all__ = [
    "BLANK_LOOKING",
    "MAX_CLUSTER_CODE_POINTS",
    "MAX_MARKS",
    "MAX_NAME_GRAPHEMES",
    "RESERVED_NAMES",
    "check_name",
    "clean_name",
    "confusable_keys",
    "emoji_format",
    "grapheme_count",
    "graphemes",
    "has_spectator_marker",
    "has_you_marker",
    "is_reserved_name",
    "name_key",
    "names_clash",
    "shows_nothing",
    "stacked_marks",
]

MAX_NAME_GRAPHEMES: Final = 32
"""The longest name, in user-perceived characters (grapheme clusters)."""

MAX_MARKS: Final = 4
"""The most combining marks on one character: enough for any script's accents (Vietnamese stacks
two), too few for "zalgo" text, whose towers of marks spill over the lines around a name."""

MAX_CLUSTER_CODE_POINTS: Final = 16
"""The most code points in one user-perceived character of a name: the longest emoji sequences
(a kiss with two skin tones, 10; a subdivision flag, 7) fit, while joiners or tags cannot make
one "character" of hundreds (``"👍" + "\u200d👍" * 300`` counted as one)."""

_CATALOGS: Final = Path(__file__).resolve().parents[2] / "static" / "i18n"
_LABELS: Final = ("seat.bot_name", "seat.empty_name")
"""The client's labels of seats without a person (static/js/narrate.js seatName), "Bot {n}"...;
a name that starts with one of them and goes on after a space or a sign ("Bot 4 · hard", "Bot 4
(easy)") passes for it too."""
_LEVELS: Final = ("bot.easy", "bot.medium", "bot.hard", "bot.random", "bot.greedy")
_MAX_SEATS: Final = 5

_GRAPHEME: Final = regex.compile(r"\X")
_PICTOGRAPHIC: Final = regex.compile(r"\p{Extended_Pictographic}|\p{Regional_Indicator}")
_ZWJ: Final = "\u200d"
_TAGS: Final = range(0xE0020, 0xE0080)
"""Emoji tag characters: they spell a subdivision flag (🏴 + tags, e.g. England's)."""


BLANK_LOOKING: Final = frozenset("\u115f\u1160\u3164\uffa0\u2800\u034f")
"""Printable characters that show nothing (Hangul fillers, the Braille blank, the combining
grapheme joiner): a name made only of these (and marks or spaces) would be invisible."""


def shows_nothing(ch: str) -> bool:
    """Whether ``ch`` adds nothing a reader can tell apart: a blank-looking character, a mark
    (accents, variation selectors), a format character, or a space."""
    return ch in BLANK_LOOKING or unicodedata.category(ch)[0] in "MZ" or unicodedata.category(ch) == "Cf"


def grapheme_count(text: str) -> int:
    """How many user-perceived characters ``text`` shows (extended grapheme clusters, UAX #29)."""
    return len(_GRAPHEME.findall(text))


def graphemes(text: str) -> list[str]:
    """``text``'s user-perceived characters (extended grapheme clusters, UAX #29)."""
    return list(_GRAPHEME.findall(text))


def emoji_format(cluster: str) -> frozenset[str]:
    """The format characters (Cf) that belong in ``cluster`` (one user-perceived character): an
    emoji's zero-width joiner and tag characters when it is an emoji, else none."""
    if _PICTOGRAPHIC.search(cluster) is None:
        return frozenset()
    return frozenset(ch for ch in cluster if ch == _ZWJ or ord(ch) in _TAGS)


def _marks(cluster: str) -> int:
    return sum(unicodedata.category(ch) in ("Mn", "Me") for ch in cluster)


def stacked_marks(text: str) -> int:
    """The most combining marks (Mn, Me) on one user-perceived character of ``text``."""
    return max(map(_marks, _GRAPHEME.findall(text)), default=0)


def _invisible(cluster: str) -> bool:
    """Whether a grapheme cluster holds a character that must not be in a name: a control (Cc),
    a surrogate, private-use or unassigned code point, a line or paragraph separator, or a
    format character (Cf: bidirectional controls, zero-width spaces...) other than the joiner
    and tags of an emoji sequence."""
    kept = emoji_format(cluster)
    for ch in cluster:
        category = unicodedata.category(ch)
        if category in ("Cc", "Cs", "Co", "Cn", "Zl", "Zp"):
            return True
        if category == "Cf" and ch not in kept:
            return True
    return False


def clean_name(raw: str) -> str:
    """The name a person typed, as the table shows it: runs of white space folded to one space,
    none at the ends (NFC, so an accent typed apart joins its letter).

    Raises `RoomError` (422) with a code the client words in the player's language:
    ``name_empty`` (nothing left), ``name_too_long`` (over `MAX_NAME_GRAPHEMES` user-perceived
    characters), ``name_invisible`` (a control or invisible character, `_invisible`) or
    ``name_stacked`` (more than `MAX_MARKS` combining marks on one character) or ``name_blank``
    (only characters that show nothing, `shows_nothing`).
    """
    name = " ".join(unicodedata.normalize("NFC", raw).split())
    if not name:
        raise RoomError("name_empty", "a name needs at least one character", 422)
    clusters = _GRAPHEME.findall(name)
    if len(clusters) > MAX_NAME_GRAPHEMES:
        raise RoomError("name_too_long", f"a name is at most {MAX_NAME_GRAPHEMES} characters", 422)
    if any(_invisible(cluster) for cluster in clusters):
        raise RoomError("name_invisible", "a name may not hold control or invisible characters", 422)
    if any(len(cluster) > MAX_CLUSTER_CODE_POINTS for cluster in clusters):
        message = f"a character of a name is made of at most {MAX_CLUSTER_CODE_POINTS} code points"
        raise RoomError("name_too_long", message, 422)
    if any(_marks(cluster) > MAX_MARKS for cluster in clusters):
        raise RoomError("name_stacked", f"at most {MAX_MARKS} accents on one character", 422)
    if all(shows_nothing(ch) for ch in name):
        raise RoomError("name_blank", "a name needs a visible character", 422)
    return name


def _plain(name: str) -> str:
    decomposed = unicodedata.normalize("NFKD", name)
    kept = "".join(" " if ch.isspace() else ch for ch in decomposed if ch.isspace() or not shows_nothing(ch))
    return " ".join(kept.split())


def name_key(name: str) -> str:
    """What two names must share to be the same at a table: compatibility-decomposed (NFKD), with
    what shows nothing or only decorates a letter left out (`shows_nothing`: marks, variation
    selectors, fillers), case-folded, runs of spaces made one. "Ana", " ana ", "ＡＮＡ", "Aná" and
    "Ana" followed by a Braille blank are one name. Look-alike letters of other scripts are the
    business of `confusable_keys`."""
    return _plain(name).casefold()


def confusable_keys(name: str, capitals: bool = False) -> frozenset[str]:
    """The UTS #39 skeletons (`app.rooms.skeleton`) of `name_key`'s form as typed and case-folded,
    each case-folded again: names that look alike share one ("Bоt 2" with a Cyrillic о and "Bot 2";
    "Вot 2" with a Cyrillic В, whose lower case в no longer looks like a b). With ``capitals``,
    also the upper case form's: "вот 2", whose в and т have no Latin look-alike in UTS #39, is
    "BOT 2" in capitals. Only the table's labels are held to that (`is_reserved_name`): between
    people's names it would refuse "тема" beside "Tema", which look alike only in capitals."""
    plain = _plain(name)
    forms = (plain, plain.casefold(), plain.upper()) if capitals else (plain, plain.casefold())
    return frozenset(skeleton(form).casefold() for form in forms)


def names_clash(a: str, b: str) -> bool:
    """Whether two names would pass for each other: the same `name_key` (NFKC-style case fold)
    or a shared `confusable_keys` skeleton (look-alike characters)."""
    return name_key(a) == name_key(b) or not confusable_keys(a).isdisjoint(confusable_keys(b))


def _catalogs() -> list[dict[str, object]]:
    catalogs = []
    for path in sorted(_CATALOGS.glob("*.json")):
        catalog = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(catalog, dict) and "seat.bot_name" in catalog:  # index.json lists the languages
            catalogs.append(catalog)
    return catalogs


def _labels() -> tuple[list[str], list[str]]:
    """Every language's numbered seat labels ("Bot 3", "Seat 3"), and its other labels of seats
    without a person: a bot with its level, numbered or not ("Bot 3 · hard", "Bot · hard"), the
    level said first ("Hard Bot 3", "Hard Bot"), the word alone that tags a bot's plate at the
    table ("Bot", "Бот": static/js/table.js), and the waiting room's empty seat ("Empty, waiting
    for a person", and "Empty")."""
    numbered: list[str] = []
    others: list[str] = []
    for catalog in _catalogs():
        seats = range(1, _MAX_SEATS + 1)
        for label in _LABELS:
            numbered += [str(catalog[label]).replace("{n}", str(n)) for n in seats]
        levels = [str(catalog[key]) for key in _LEVELS if key in catalog]
        named, unnamed = str(catalog["seat.bot_named"]), str(catalog["seat.bot_level"])
        others += [named.replace("{n}", str(n)).replace("{level}", lv) for n in seats for lv in levels]
        others += [unnamed.replace("{level}", level) for level in levels]
        bot = str(catalog["seat.bot"])
        others += [bot, *(f"{level} {bot}" for level in levels)]
        others += [f"{level} {bot} {n}" for n in seats for level in levels]
        empty = str(catalog["waiting.empty"])
        others += [empty, empty.split(",", maxsplit=1)[0]]
    return numbered, others


_NUMBERED, _OTHER_LABELS = _labels()

RESERVED_NAMES: Final = frozenset(name_key(label) for label in (*_NUMBERED, *_OTHER_LABELS))
"""Every language's label of a seat without a person, as `name_key` keys: a bot or an empty seat,
seats 1 to 5 ("Bot 3", "Бот 3", "Seat 3", "Koht 3", "3. hely", ...), a bot with its level ("Bot 3 ·
hard", "Bot · hard", "Hard Bot"), the bot's tag alone ("Bot", "Бот"), and the waiting room's
"Empty"."""

_RESERVED_SKELETONS: Final = frozenset().union(
    *(confusable_keys(label, capitals=True) for label in (*_NUMBERED, *_OTHER_LABELS))
)
_NUMBERED_KEYS: Final = tuple(
    sorted(
        {name_key(label) for label in _NUMBERED}.union(
            *(confusable_keys(label, capitals=True) for label in _NUMBERED)
        )
    )
)


_SIGNS_OR_SPACE: Final = regex.compile(r"[^\p{L}\p{N}]+")
_LEADING_ZEROS: Final = regex.compile(r"(?<!\p{N})0+(?=\p{N})")


def _squeezed(key: str) -> str:
    """``key`` with its spaces and signs left out and numbers without leading zeros: "bot 2",
    "bot2", "(bot-02)" and "bot #2" are all "bot2"."""
    return _LEADING_ZEROS.sub("", _SIGNS_OR_SPACE.sub("", key))


_SQUEEZED_LABELS: Final = frozenset(
    _squeezed(key)
    for label in (*_NUMBERED, *_OTHER_LABELS)
    for key in (name_key(label), *confusable_keys(label, capitals=True))
)


def _extends_label(key: str) -> bool:
    """Whether ``key`` is a numbered seat label followed by a space or a sign ("bot 4 · hard",
    "bot 4 (easy)"), not by more of a word or number ("bot 45", "seat 3a" pass)."""
    for label in _NUMBERED_KEYS:
        if len(key) > len(label) and key.startswith(label) and not key[len(label)].isalnum():
            return True
    return False


def is_reserved_name(name: str) -> bool:
    """Whether ``name`` is, or looks like, one of the table's own labels (`RESERVED_NAMES`, by
    `name_key` or by `confusable_keys` in capitals too), also with other spaces, signs or leading
    zeros ("Bot2", "(Bot-02)", "Bot #2", "Bot2 (easy)"), or starts with a numbered one and goes on
    after a space or a sign ("Bot 4 · hard", "Bоt 2 (easy)" with a Cyrillic о)."""
    key, skeletons = name_key(name), confusable_keys(name, capitals=True)
    if key in RESERVED_NAMES or not skeletons.isdisjoint(_RESERVED_SKELETONS):
        return True
    keys = (key, *skeletons)
    return any(_squeezed(k) in _SQUEEZED_LABELS or _extends_label(k) for k in keys)


_YOU_MARKERS: Final = frozenset(
    key.replace(" ", "")
    for catalog in _catalogs()
    for marker in [str(catalog["seat.you_suffix"])]
    for key in (name_key(marker), *confusable_keys(marker, capitals=True))
)
"""Every language's mark after the reader's own name ("(you)", "(вы)", "(sina)"...), as keys
without spaces, look-alike skeletons included."""


def has_you_marker(name: str) -> bool:
    """Whether ``name`` ends with the mark the client shows after the reader's own name, in any
    language, or a look-alike of it ("Ana (you)", "Ana（YOU）", "Ana ( вы )"): beside a seated "Ana"
    it would read as her name on everyone else's screen too."""
    keys = (name_key(name), *confusable_keys(name, capitals=True))
    return any(k.replace(" ", "").endswith(marker) for k in keys for marker in _YOU_MARKERS)


def _spectator_words() -> frozenset[str]:
    """Every language's word for a spectator in the chat's "Dewi (spectator)" (``chat
    .spectator_named``: the name, then the word in brackets), as keys without spaces, look-alike
    skeletons included."""
    words: set[str] = set()
    for catalog in _catalogs():
        marker = str(catalog["chat.spectator_named"]).replace("{name}", "").strip()
        if not (marker.startswith("(") and marker.endswith(")")):
            raise ValueError(f"chat.spectator_named is not '{{name}} (word)': {marker!r}")
        word = marker[1:-1]
        words.update(key.replace(" ", "") for key in (name_key(word), *confusable_keys(word, capitals=True)))
    return frozenset(words)


_SPECTATOR_WORDS: Final = _spectator_words()


def has_spectator_marker(name: str) -> bool:
    """Whether ``name`` ends with how the chat marks a spectator, in any language or a look-alike:
    a bracket that opens with the word ("Budi (spectator)", "Budi (зритель 3fa9c1d2)", the
    client's ``chat.spectator_named`` and ``_tag``), or is an unnamed spectator's label ("Penonton
    3fa9c1d2", ``chat.spectator_tag``). A seat so named would read as a spectator in the chat, a
    spectator so named as another spectator."""
    key = name_key(name)
    for k in (key, *confusable_keys(name, capitals=True)):
        squeezed = k.replace(" ", "")
        opened = squeezed.rfind("(")
        if squeezed.endswith(")") and opened >= 0:
            inside = squeezed[opened + 1 : -1]
            if any(inside.startswith(word) for word in _SPECTATOR_WORDS):
                return True
    squeezed = key.replace(" ", "")
    if len(squeezed) <= 8 or not is_tag(squeezed[-8:]):
        return False
    word = squeezed[:-8]  # "spectator" of "spectator3fa9c1d2", or a look-alike of it
    return not _SPECTATOR_WORDS.isdisjoint(
        {word, *(k.replace(" ", "") for k in confusable_keys(word, capitals=True))}
    )


def check_name(raw: str) -> str:
    """The name a person typed, cleaned (`clean_name`), when the table lets anyone take it: a
    seated player (`app.rooms.seats.check_claim`) or a spectator (`app.rooms.chat.name_spectator`).

    Raises `RoomError` (422): `clean_name`'s codes; ``name_reserved`` (the table's label of a bot
    or an empty seat, such as "Bot 3", or a look-alike of one: `is_reserved_name`); ``name_marked``
    (it ends with the client's "(you)" mark in some language, `has_you_marker`, or with its
    spectator's mark, "(spectator)", or is an unnamed spectator's label: `has_spectator_marker`).

    >>> check_name("  Dewi ")
    'Dewi'
    """
    name = clean_name(raw)
    if is_reserved_name(name):
        raise RoomError("name_reserved", "that name is how the table names a bot or an empty seat", 422)
    if has_you_marker(name):
        raise RoomError("name_marked", 'a name may not end with the "(you)" mark the table adds itself', 422)
    if has_spectator_marker(name):
        message = 'a name may not end with the "(spectator)" mark the chat adds itself'
        raise RoomError("name_marked", message, 422)
    return name
