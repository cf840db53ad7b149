"""Said once: the hashing helper and the narration shared by the command line and the admin."""

from __future__ import annotations

import hashlib

from engine.actions import Pass
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
    assert describe_events(passed, SEATS) == "Dewi passes · Dewi: +1 stone (1 from the table)"
    run(state, play(4, "1-3", "R"))
    result = outcome(state)
    assert describe_settlement(result.settlement, SEATS) == "Dewi: +3 stones (3 from the table)"
    assert describe_outcome(result, SEATS)[:2] == [
        "CEKI: Eko is first cappu",
        "CUCUQ Dewi: +3 stones (3 from the table)",
    ]
