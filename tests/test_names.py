"""Names people take at a table (issue 12, issue 13): 1-32 user-perceived characters, no control
or invisible characters, a reason code for every refusal, and look-alikes of the table's labels
or of another player's name refused (UTS #39 skeletons as well as case folds)."""

from __future__ import annotations

import pytest

from app.rooms.errors import RoomError
from app.rooms.names import (
    MAX_NAME_GRAPHEMES,
    clean_name,
    grapheme_count,
    is_reserved_name,
    names_clash,
)
from app.rooms.seats import SeatInfo, check_claim

WELCOME = [
    "👩🏽‍💻",  # a joined emoji with a skin tone: one character
    "🇪🇪 Kadri",  # a flag
    "🏴\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",  # England's flag: tag characters
    "👨‍👩‍👧‍👦",  # a family: three joiners
    "🧑🏻‍❤️‍💋‍🧑🏿",  # a kiss with two skin tones: 10 code points, one character
    "نور الهدى",  # right to left
    "Nguyễn Thị Ánh",  # stacked Vietnamese accents
    "x" * MAX_NAME_GRAPHEMES,  # 32 characters without a space
    "🙂" * MAX_NAME_GRAPHEMES,  # 32 emoji: 32 characters, not 64 UTF-16 units
]


@pytest.mark.parametrize("name", WELCOME)
def test_names_of_any_script_and_joined_emoji_are_welcome(name: str) -> None:
    assert clean_name(f"  {name} ") == name


def test_a_name_counts_user_perceived_characters() -> None:
    assert grapheme_count("👩🏽‍💻") == 1
    assert grapheme_count("🇪🇪🇭🇺") == 2
    assert grapheme_count("e\u0301") == 1  # a letter and its accent, typed apart
    assert clean_name("e\u0301va") == "\u00e9va"  # and joined (NFC)
    assert clean_name("Dewi \t\n Lestari") == "Dewi Lestari"  # runs of white space fold


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("", "name_empty"),
        ("   \t ", "name_empty"),
        ("x" * (MAX_NAME_GRAPHEMES + 1), "name_too_long"),
        ("🙂" * (MAX_NAME_GRAPHEMES + 1), "name_too_long"),
        ("👍" + "\u200d👍" * 300, "name_too_long"),  # joiners make 601 code points one "character"
        ("🏴" + "\U000e0067" * 500 + "\U000e007f", "name_too_long"),  # 500 invisible tags in one flag
        ("Ana\x07", "name_invisible"),  # a control character (bell)
        ("Ana\u202egpj", "name_invisible"),  # a right-to-left override
        ("An\u200ba", "name_invisible"),  # a zero-width space
        ("A\u200dna", "name_invisible"),  # a joiner outside an emoji
        ("Ana\u2066", "name_invisible"),  # a bidirectional isolate
        ("Ana\ue000", "name_invisible"),  # private use
        ("Ana\U000e0041", "name_invisible"),  # a tag character outside a flag
        ("Z" + "\u0336\u0317\u0352\u0326\u0349" * 2 + "algo", "name_stacked"),  # zalgo
        ("\u3164\u3164", "name_blank"),  # Hangul fillers only
        ("\u2800", "name_blank"),  # a Braille blank
    ],
)
def test_a_refused_name_says_why_with_a_code(name: str, code: str) -> None:
    with pytest.raises(RoomError) as refused:
        clean_name(name)
    assert refused.value.code == code and refused.value.status == 422
    assert "Value error" not in refused.value.message


@pytest.mark.parametrize(
    "name",
    [
        "Bot 2",
        "bot 2",
        "B\u043et 2",  # a Cyrillic о (issue 13)
        "\u0412ot 2",  # a Cyrillic В
        "\u0432\u043e\u0442 2",  # Cyrillic "вот": в and т have no Latin look-alike, В and Т do
        "Bоt ２",  # a fullwidth digit
        "Seat 5",
        "Б\u043eт 3",  # Russian tables say "Бот 3"
        "Koht 4",  # Estonian empty seat
        "Bot 4 · hard",  # a hard bot's plate in seat 4
        "Bot 2 · easy",
        "Bot 4 hard",  # the label and more after a space
        "B\u043et 2 (easy)",
        "Бот 3 · сильный",
        "Bot · medium",  # the waiting room's bot seat
        "Empty",  # the waiting room's empty seat
        "Empty, waiting for a person",
        "Üres",  # Hungarian
        # the same with other spaces, signs or zeros: each passes for "Bot 2" in the feed
        "Bot2",
        "Bot２",
        "Bot-2",
        "Bot 02",
        "Bot #2",
        "(Bot 2)",
        "Bot2 (easy)",
        "Bot 4hard",
        "Бот-3",
        # a bot's tag alone, or its tag and level, as the table shows a bot (in any language, any
        # case, in brackets or with signs): a person so named looked like a bot
        "Bot",
        "BOT",
        "(Bot)",
        "B\u043et",  # a Cyrillic о
        "бот",
        "Bot (hard)",
        "Hard bot",
        "Bot (sulit)",
        "Bot (nehéz)",
        "Bot (raske)",
        "Сильный бот",
        "Бот (сильний)",
    ],
)
def test_reserved_labels_and_their_look_alikes_are_refused(name: str) -> None:
    assert is_reserved_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "Botak",
        "Botond",
        "Bot Budi",
        "Robot",
        "Bot 22",
        "Bot 20",
        "Bot 6",
        "Robot 2",
        "Seat of power",
        "Emptyhanded",
        "Seat 3a",
    ],
)
def test_names_that_only_start_like_a_label_are_fine(name: str) -> None:
    assert not is_reserved_name(name)


def test_look_alikes_of_a_seated_name_clash_and_different_names_do_not() -> None:
    assert names_clash("Ana", "\u0410na")  # Cyrillic А
    assert names_clash("Ana", "ＡＮＡ")
    assert names_clash("Ana", "Ána")
    assert names_clash("paypal", "p\u0430yp\u0430l")
    # alike only in capitals: two people's names (only the table's labels are held to capitals)
    assert not names_clash("Tema", "\u0442\u0435\u043c\u0430")  # Cyrillic "тема"
    assert not names_clash("Ana", "Anna")
    assert not names_clash("Dewi", "Eko")
    assert not names_clash("👩🏽‍💻", "👨🏽‍💻")


def test_a_claim_cleans_the_name_and_refuses_a_look_alike_of_a_seated_player() -> None:
    seats = [SeatInfo(seat=s) for s in range(5)]
    seats[0].kind, seats[0].name = "human", "Ana"
    spec = check_claim(seats, 1, "  Dewi  ", "waiting", "hash")
    assert spec.name == "Dewi"
    with pytest.raises(RoomError) as taken:
        check_claim(seats, 1, "\u0410na", "waiting", "hash")
    assert taken.value.code == "name_taken"
    with pytest.raises(RoomError) as reserved:
        check_claim(seats, 1, "B\u043et 2", "waiting", "hash")
    assert reserved.value.code == "name_reserved"
