"""Said once: the hashing helper and the narration shared by the command line and the admin."""

from __future__ import annotations

import hashlib

from engine.actions import Pass
from engine.events import Reason, Settlement
from engine.hashing import commitment_of, sha256_hex
from engine.narration import describe_events, describe_outcome, describe_settlement
from tests.conftest import SEATS, outcome, play, position, run


def test_sha256_hex_is_the_hex_digest_of_the_utf8_text() -> None:
    for text in ("", "abc", "Ана · 🁣"):
        assert sha256_hex(text) == hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert commitment_of("seed") == sha256_hex("seed")


def test_narration_tells_example_1_in_the_games_words_D2_D4() -> None:
    state = position(["0-0 0-1", "0-2 0-4", "5-1 6-6", "4-4 2-6", "1-3"], (3, 5), to_act=2, last_mappano=1)
    run(state, play(2, "5-1", "R"))
    passed = run(state, Pass(3))
    assert describe_events(passed, SEATS) == "Dewi passes · Dewi takes 1 stone (penalty, from the table)"
    run(state, play(4, "1-3", "R"))
    result = outcome(state)
    assert describe_settlement(result.settlement, SEATS) == "Dewi takes 3 stones (penalty, from the table)"
    assert describe_outcome(result, SEATS)[:2] == [
        "CEKI: Eko is first cappu",
        "CUCUQ: Dewi takes 3 stones (penalty, from the table)",
    ]


def test_a_penalty_names_its_sources_and_says_a_shortfall_plainly_D5() -> None:
    """Several sources are counted; a single one is named; what nobody can pay is cancelled, in
    so many words (never "because ... because"), with the right singular and plural."""
    names = ["Ana", "Budi", "Citra", "Dewi", "Eko"]
    shared = Settlement(Reason.POLLO, receiver=3, owed=5, from_table=2, from_payers=((4, 1),), cancelled=2)
    assert describe_settlement(shared, names) == (
        "Dewi takes 3 stones (penalty, 2 from the table, 1 from Eko);"
        " 2 more stones cannot be paid and are cancelled"
    )
    one = Settlement(Reason.PASS, receiver=3, owed=1, from_table=0, from_payers=((2, 1),), cancelled=0)
    assert describe_settlement(one, names) == "Dewi takes 1 stone (penalty, from Citra)"
    short = Settlement(Reason.PASSEBUNGE, 0, owed=2, from_table=0, from_payers=((1, 1),), cancelled=1)
    assert describe_settlement(short, names).endswith("; 1 more stone cannot be paid and is cancelled")
    nothing = Settlement(Reason.PASS, receiver=3, owed=1, from_table=0, from_payers=((2, 0),), cancelled=1)
    assert describe_settlement(nothing, names) == (
        "Dewi takes no stones: nobody has the 1 stone of the penalty to give, so it is cancelled"
    )
    for text in (describe_settlement(s, names) for s in (shared, one, short, nothing)):
        assert "because" not in text and "+" not in text
