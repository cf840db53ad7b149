"""Kozel's rules one tag at a time (K1-K10), every error the Kozel engine raises, options and start
positions, and what each seat's view may show (the bazaar, drawn tiles)."""

from __future__ import annotations

import pytest

from engine.actions import Action, Draw, Pass, PlayLempas
from engine.core import Phase
from engine.errors import EngineError, IllegalActionError
from engine.events import Drew, KozelOutcome, Placed, RoundEnded, Termination
from engine.rules.kozel import OPENING_ORDER, KozelState, hand_value
from engine.tiles import TILES, mask_of
from engine.variants import make_rules
from engine.views import player_view
from tests.conftest import fingerprint, play, run, tiles
from tests.kozelkit import kozel, kozel_deal, kozel_outcome, kozel_position, kozel_round


def rejects(state: KozelState, action: Action, code: str) -> IllegalActionError:
    """Assert that ``state`` refuses ``action`` with ``code``, naming the position, and is unchanged."""
    before = fingerprint(state)
    with pytest.raises(IllegalActionError) as caught:
        state.apply(action)
    assert caught.value.code == code
    assert state.position() in caught.value.message
    assert fingerprint(state) == before
    return caught.value


def lempas(text: str) -> tuple[PlayLempas, ...]:
    """``"1 5-5 3-3"`` → the two-lempas move of seat 1 with 5-5 and 3-3."""
    seat, first, second = text.split()
    one, two = tiles(f"{first} {second}")
    return (PlayLempas(int(seat), (one, two)),)


# -- K1 deal ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("seats", "size", "bazaar"), [(2, 7, 14), (3, 5, 13), (4, 5, 8)])
def test_deal_sizes_and_bazaar_K1(seats: int, size: int, bazaar: int) -> None:
    rules = kozel(seats)
    assert rules.hand_sizes() == (size,) * seats
    state = rules.new_match()
    deal = rules.deal_from_seed("k1")
    state.start_round(deal)
    assert [len(state.hand(s)) for s in range(seats)] == [size] * seats
    assert state.bazaar == list(deal.rest) and len(state.bazaar) == bazaar
    assert player_view(state, 0).bazaar == bazaar


def test_a_deal_of_the_wrong_shape_is_refused_K1() -> None:
    state = kozel(3).new_match()
    with pytest.raises(ValueError, match="sizes"):
        state.start_round(kozel(4).deal_from_seed(1))


# -- K2 leader ----------------------------------------------------------------------------------------


def test_opening_order_is_lempas_high_to_low_then_6_5_down_to_1_0_K2() -> None:
    assert [str(t) for t in OPENING_ORDER[:8]] == ["6-6", "5-5", "4-4", "3-3", "2-2", "1-1", "0-0", "5-6"]
    assert [str(t) for t in OPENING_ORDER[-3:]] == ["1-2", "0-2", "0-1"]
    assert sorted(OPENING_ORDER, key=lambda t: t.index) == list(TILES)


def test_without_a_dealt_lempa_the_highest_tile_opens_K2() -> None:
    """2 players hold 14 tiles; all seven lempas and 5-6 lie in the bazaar, so 4-6 (P1) opens."""
    state = kozel_round(
        "0-1 0-2 0-3 0-4 0-5 0-6 1-2",
        "4-6 1-3 1-4 1-5 1-6 2-3 2-4",
        bazaar="6-6 5-5 4-4 3-3 2-2 1-1 0-0 5-6",
        rules=kozel(2),
    )
    assert (state.to_act, state.opening) == (1, tiles("4-6")[0])
    assert state.legal_actions() == [play(1, "4-6")]
    rejects(state, play(1, "1-3"), "wrong_opening_tile")


def test_later_rounds_the_previous_winner_leads_with_any_tile_K2() -> None:
    state = kozel_position(
        ["5-6", "0-1", "3-4"], (2, 5), to_act=0, last_placer=2, bazaar="3-3", rules=kozel(3)
    )
    run(state, play(0, "5-6", "R"))
    state.start_round(kozel_deal("0-1 0-2 0-3 0-4 0-5", "6-6 1-2 1-3 1-4 1-5", "1-6 2-2 2-3 2-4 2-5"))
    assert state.to_act == 0 and state.opening is None
    assert state.legal_actions() == [play(0, t) for t in ("0-1", "0-2", "0-3", "0-4", "0-5")]


def test_start_leader_leads_the_first_round_with_any_tile_K2() -> None:
    state = kozel_round(
        "0-1 0-2 0-3 0-4 0-5",
        "6-6 1-2 1-3 1-4 1-5",
        "1-6 2-2 2-3 2-4 2-5",
        rules=kozel(3),
        start={"leader": 2},
    )
    assert state.to_act == 2 and len(state.legal_actions()) == 5


# -- K3 turn ------------------------------------------------------------------------------------------


def three_seats_drawing() -> KozelState:
    """P1 to act on [5|3] with no fit; the bazaar holds 6-6 then 3-4."""
    return kozel_position(
        ["2-2 4-4", "0-0 1-2", "1-1 2-4"], (5, 3), to_act=1, last_placer=0, bazaar="6-6 3-4", rules=kozel(3)
    )


def test_no_drawing_while_holding_a_fit_K3() -> None:
    state = kozel_position(
        ["2-2 4-4", "3-6 1-2", "1-1"], (5, 3), to_act=1, last_placer=0, bazaar="6-6", rules=kozel(3)
    )
    assert state.legal_actions() == [play(1, "3-6", "R")]
    error = rejects(state, Draw(1), "draw_not_allowed")
    assert error.message.startswith("P1 draws: a tile fits")


def test_no_pass_while_the_bazaar_has_tiles_K3() -> None:
    error = rejects(three_seats_drawing(), Pass(1), "voluntary_pass")
    assert "bazaar still holds 2 tiles" in error.message


def test_no_pass_while_holding_a_fit_K3() -> None:
    state = kozel_position(["2-2 4-4", "3-6 1-2", "1-1"], (5, 3), to_act=1, last_placer=0, rules=kozel(3))
    rejects(state, Pass(1), "voluntary_pass")


def test_drawn_tiles_that_do_not_fit_stay_in_hand_and_the_fit_must_be_played_K3() -> None:
    state = three_seats_drawing()
    run(state, Draw(1), Draw(1))
    assert state.hand(1) == tiles("0-0 1-2 3-4 6-6")
    assert state.legal_actions() == [play(1, "3-4", "R")]
    rejects(state, Pass(1), "voluntary_pass")
    rejects(state, Draw(1), "draw_not_allowed")
    rejects(state, play(2, "2-4"), "wrong_seat")


def test_drawing_from_an_empty_bazaar_is_refused_K3() -> None:
    state = kozel_position(["2-2 4-5", "0-0 1-2", "1-1"], (5, 3), to_act=1, last_placer=0, rules=kozel(3))
    error = rejects(state, Draw(1), "draw_not_allowed")
    assert "bazaar is empty" in error.message


# -- K4 two lempas ------------------------------------------------------------------------------------


def two_lempas_position(rules_pairs: bool = False, two: bool = True) -> KozelState:
    """P1 to act on [5|3] holding 5-5, 3-3 and 1-2."""
    return kozel_position(
        ["2-2 4-4", "3-3 5-5 1-2", "1-1 2-4", "0-0"],
        (5, 3),
        to_act=1,
        last_placer=0,
        bazaar="6-6",
        rules=kozel(4, pairs=rules_pairs, two_lempas=two),
    )


def test_two_lempas_are_listed_after_the_single_placements_K4() -> None:
    state = two_lempas_position()
    assert state.legal_actions() == [play(1, "3-3", "R"), play(1, "5-5", "L"), *lempas("1 5-5 3-3")]


def test_two_lempas_place_each_on_its_end_in_one_move_K4() -> None:
    state = two_lempas_position()
    events = run(state, *lempas("1 3-3 5-5"))  # either order names the same move
    assert events == [
        Placed(1, tiles("3-3")[0], "R", (5, 3), False),
        Placed(1, tiles("5-5")[0], "L", (5, 3), False),
    ]
    assert state.actions == list(lempas("1 3-3 5-5"))
    assert (state.hand(1), state.to_act, state.ends) == (tiles("1-2"), 2, (5, 3))


def test_two_lempas_can_go_out_K4_K5() -> None:
    state = kozel_position(
        ["2-2 4-4", "3-3 5-5", "1-1 2-4"], (5, 3), to_act=1, last_placer=0, bazaar="6-6", rules=kozel(3)
    )
    events = run(state, *lempas("1 5-5 3-3"))
    assert [type(e) for e in events] == [Placed, Placed, RoundEnded]
    result = kozel_outcome(state)
    assert (result.end, result.winner, result.written) == (Termination.OUT, 1, (12, 0, 8))


def test_two_lempas_do_not_apply_on_equal_ends_or_with_other_lempas_K4() -> None:
    equal = kozel_position(
        ["2-2", "3-3 5-5 1-2", "1-1"], (3, 3), to_act=1, last_placer=0, bazaar="6-6", rules=kozel(3)
    )
    assert not [a for a in equal.legal_actions() if isinstance(a, PlayLempas)]
    error = rejects(equal, *lempas("1 3-3 5-5"), "not_two_lempas")
    assert error.message.startswith("P1 plays 3-3 and 5-5")
    rejects(two_lempas_position(), *lempas("1 5-5 1-1"), "not_two_lempas")
    rejects(two_lempas_position(), *lempas("1 5-5 5-5"), "not_two_lempas")


def test_two_lempas_need_both_tiles_in_hand_K4() -> None:
    state = kozel_position(
        ["2-2", "5-5 1-2", "3-3"], (5, 3), to_act=1, last_placer=0, bazaar="6-6", rules=kozel(3)
    )
    assert not [a for a in state.legal_actions() if isinstance(a, PlayLempas)]
    rejects(state, *lempas("1 5-5 3-3"), "tile_not_in_hand")


def test_two_lempas_option_off_K4() -> None:
    state = two_lempas_position(two=False)
    assert not [a for a in state.legal_actions() if isinstance(a, PlayLempas)]
    error = rejects(state, *lempas("1 5-5 3-3"), "not_two_lempas")
    assert "without two lempas" in error.message


def test_two_lempas_before_the_opening_is_refused_K4() -> None:
    state = kozel_round("5-5 0-1 0-2 0-3 3-3", "4-4 0-4 1-3 1-4 2-3", "0-6 0-5 1-5 2-4 2-5", rules=kozel(3))
    rejects(state, *lempas("0 5-5 3-3"), "not_two_lempas")


# -- K5 fish ------------------------------------------------------------------------------------------


def test_drawing_the_last_tile_can_end_in_a_fish_K5() -> None:
    """[6|6] with every 6 played; P1 draws the bazaar's last tile, 2-2, and nobody can place."""
    state = kozel_position(
        ["1-1 3-3", "0-0 4-4"], (6, 6), to_act=1, last_placer=0, bazaar="2-2", rules=kozel(2)
    )
    events = run(state, Draw(1))
    assert [type(e) for e in events] == [Drew, RoundEnded]
    result = kozel_outcome(state)
    assert (result.end, result.winner, result.hand_values) == (Termination.FISH, 0, (8, 12))
    assert result.written == (0, 12)


def test_a_pass_never_ends_the_round_while_someone_can_place_K5() -> None:
    state = kozel_position(["6-4 4-5", "1-1 3-3"], (6, 5), to_act=1, last_placer=0, rules=kozel(2))
    run(state, Pass(1))
    assert state.phase is Phase.PLAYING and state.to_act == 0


# -- K6 / K7 scoring ----------------------------------------------------------------------------------


def test_hand_value_lone_0_0_is_25_K6() -> None:
    assert hand_value(mask_of(tiles("0-0"))) == 25
    assert hand_value(mask_of(tiles("0-0 0-1"))) == 1
    assert hand_value(0) == 0


def test_out_everyone_else_adds_their_hand_value_lone_0_0_counts_25_K6_K7() -> None:
    state = kozel_position(
        ["5-6", "0-0", "3-4"], (2, 5), to_act=0, last_placer=2, bazaar="3-3", rules=kozel(3)
    )
    run(state, play(0, "5-6", "R"))
    result = kozel_outcome(state)
    assert (result.hand_values, result.written) == ((0, 25, 7), (0, 25, 7))
    assert (result.points, result.pending) == ((0, 25, 0), (0, 0, 7))
    assert result.next_leader == 0


def test_tied_fish_all_lowest_write_0_and_the_first_after_the_last_placer_leads_K7() -> None:
    """P0 places the last 4: P0 {2-3}=5, P1 {5-5}=10, P2 {0-2, 0-3}=5 → P0 and P2 write 0; after
    P0 (the last placer) the first of them in seat order is P2."""
    state = kozel_position(["1-4 2-3", "5-5", "0-2 0-3"], (4, 1), to_act=0, last_placer=2, rules=kozel(3))
    run(state, play(0, "1-4", "R"))
    result = kozel_outcome(state)
    assert result == KozelOutcome(
        end=Termination.FISH,
        winner=None,
        hand_values=(5, 10, 5),
        written=(0, 10, 0),
        points=(0, 0, 0),
        pending=(0, 10, 0),
        goat=(),
        next_leader=2,
        match_over=False,
    )


# -- K8 / K9 ------------------------------------------------------------------------------------------


def test_several_cross_101_in_one_round_the_highest_total_is_the_goat_K9() -> None:
    state = kozel_position(
        ["5-6", "0-1 2-3", "3-4"],
        (2, 5),
        to_act=0,
        last_placer=2,
        bazaar="3-3",
        points=[0, 98, 96],
        rules=kozel(3),
    )
    run(state, play(0, "5-6", "R"))
    result = kozel_outcome(state)
    assert (result.points, result.goat, result.match_over) == ((0, 104, 103), (1,), True)


def test_exact_ties_at_the_top_are_all_goats_K9() -> None:
    state = kozel_position(
        ["5-6", "0-1 2-4", "3-4"],
        (2, 5),
        to_act=0,
        last_placer=2,
        bazaar="3-3",
        points=[0, 98, 98],
        rules=kozel(3),
    )
    run(state, play(0, "5-6", "R"))
    assert kozel_outcome(state).goat == (1, 2)


def test_pending_points_open_with_their_whole_sum_K8() -> None:
    state = kozel_position(
        ["5-6", "6-6 4-4 5-5 3-3 2-2 1-1 0-0 2-3 3-4", "0-1"],
        (2, 5),
        to_act=0,
        last_placer=2,
        bazaar="1-3",
        pending=[0, 12, 0],
        rules=kozel(3),
    )
    run(state, play(0, "5-6", "R"))
    result = kozel_outcome(state)
    assert (result.written[1], result.points[1], result.goat) == (54, 66, ())
    assert result.pending == (0, 0, 1)


# -- K10 pairs ----------------------------------------------------------------------------------------


PAIRS = kozel(4, pairs=True)


def test_pairs_out_the_winning_pair_writes_0_the_other_its_pair_value_K10() -> None:
    state = kozel_position(
        ["3-4", "5-6", "0-1 0-2", "6-6"], (2, 5), to_act=1, last_placer=0, bazaar="3-3", rules=PAIRS
    )
    run(state, play(1, "5-6", "R"))
    result = kozel_outcome(state)
    assert result.hand_values == (7, 0, 3, 12)
    assert result.written == (10, 0, 10, 0)
    assert (result.points, result.pending) == ((0, 0, 0, 0), (10, 0, 10, 0))
    assert (result.winner, result.next_leader) == (1, 1)


def test_pairs_share_the_13_opening_and_the_goat_K10() -> None:
    state = kozel_position(
        ["3-4", "5-6", "0-1 0-2", "6-6"],
        (2, 5),
        to_act=1,
        last_placer=0,
        bazaar="3-3",
        points=[95, 0, 95, 0],
        rules=PAIRS,
    )
    run(state, play(1, "5-6", "R"))
    result = kozel_outcome(state)
    assert (result.points, result.goat, result.match_over) == ((105, 0, 105, 0), (0, 2), True)


def test_pairs_fish_the_lower_pair_writes_0_its_lower_partner_leads_K10() -> None:
    """P0 places the last 4. Pair P0+P2 holds 5 + 5 = 10, pair P1+P3 holds 10 + 12 = 22. P0 and P2
    tie for the lower partner: after P0 (the last placer) P2 comes first."""
    state = kozel_position(["1-4 2-3", "5-5", "0-2 0-3", "6-6"], (4, 1), to_act=0, last_placer=3, rules=PAIRS)
    run(state, play(0, "1-4", "R"))
    result = kozel_outcome(state)
    assert (result.end, result.winner, result.next_leader) == (Termination.FISH, 2, 2)
    assert result.written == (0, 22, 0, 22)
    assert result.points == (0, 22, 0, 22)


def test_pairs_tied_fish_both_write_0_and_the_lowest_hand_leads_as_K7_K10() -> None:
    """Pairs 5 + 5 and 6 + 4 tie at 10: nobody writes; P3 has the lowest hand (4) and leads."""
    state = kozel_position(["1-4 2-3", "3-3", "0-2 0-3", "2-2"], (4, 1), to_act=0, last_placer=3, rules=PAIRS)
    run(state, play(0, "1-4", "R"))
    result = kozel_outcome(state)
    assert (result.winner, result.next_leader, result.written) == (None, 3, (0, 0, 0, 0))


# -- options and start ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "seats", "code"),
    [
        ({"pairs": True}, 3, "invalid_options"),
        ({"pairs": True}, 2, "invalid_options"),
        ({"pairs": 1}, 4, "invalid_options"),
        ({"two_lempas": "yes"}, 4, "invalid_options"),
        ({"camat_target": 1}, 4, "invalid_options"),
        ({}, 5, "invalid_seats"),
        ({}, 1, "invalid_seats"),
    ],
)
def test_bad_options_and_seat_counts_are_refused(options: dict[str, object], seats: int, code: str) -> None:
    with pytest.raises(EngineError) as caught:
        make_rules("kozel", options, seats)
    assert caught.value.code == code


@pytest.mark.parametrize("variant", ["domeng", "kozel"])
@pytest.mark.parametrize("options", [["pairs", True], "pairs", 5, [1]])
def test_options_that_are_not_an_object_are_refused_as_options(variant: str, options: object) -> None:
    """Stored or sent options may be anything JSON holds: what is not an object is
    ``invalid_options``, as the docstring of ``from_options`` says, not an AttributeError."""
    with pytest.raises(EngineError) as caught:
        make_rules(variant, options)  # type: ignore[arg-type]
    assert caught.value.code == "invalid_options"


def test_options_default_to_rules_md() -> None:
    assert make_rules("kozel").options() == {"two_lempas": True, "pairs": False}
    assert make_rules("kozel").seats == 4


@pytest.mark.parametrize(
    "start",
    [
        {"points": [0, 0]},
        {"points": [0, 5, 0]},
        {"points": [0, 101, 0]},
        {"pending": [0, 13, 0]},
        {"points": [20, 0, 0], "pending": [3, 0, 0]},
        {"pending": [0, -1, 0]},
        {"leader": 3},
        {"points": [0, True, 0]},
    ],
)
def test_a_start_no_match_can_reach_is_refused(start: dict[str, object]) -> None:
    with pytest.raises(EngineError) as caught:
        kozel(3).new_match(start)
    assert caught.value.code == "invalid_start"


def test_pairs_start_needs_equal_partners_K10() -> None:
    with pytest.raises(EngineError) as caught:
        kozel(4, pairs=True).new_match({"points": [20, 0, 30, 0]})
    assert caught.value.code == "invalid_start"
    state = kozel(4, pairs=True).new_match({"points": [20, 0, 20, 0], "pending": [0, 4, 0, 4], "leader": 1})
    assert (state.points, state.pending, state.leader) == ([20, 0, 20, 0], [0, 4, 0, 4], 1)


# -- views --------------------------------------------------------------------------------------------


def test_a_drawn_tile_is_seen_only_by_the_seat_that_drew_it() -> None:
    state = three_seats_drawing()
    run(state, Draw(1))
    own = player_view(state, 1)
    assert own.log[-1] == Drew(1, tiles("6-6")[0])
    assert own.to_json()["log"][-1] == {"type": "drew", "seat": 1, "tile": "6-6"}
    for viewer in (0, 2, None):
        view = player_view(state, viewer)
        assert view.log[-1] == Drew(1, None)
        assert "6-6" not in str(view.to_json())
        assert view.bazaar == 1 and view.hand_counts == (2, 3, 2)


def test_public_score_shows_the_bazaar_size_and_points_never_its_tiles() -> None:
    state = kozel_position(
        ["5-6", "0-0", "3-4"],
        (2, 5),
        to_act=0,
        last_placer=2,
        bazaar="3-3 1-1",
        pending=[0, 4, 0],
        rules=kozel(3),
    )
    assert player_view(state, 1).to_json()["bazaar"] == 2
    assert "3-3" not in str(player_view(state, 1).to_json())
    run(state, play(0, "5-6", "R"))
    data = player_view(state, 2).to_json()
    assert (data["points"], data["pending"], data["opened"]) == ([0, 29, 0], [0, 0, 7], [False, True, False])


def test_the_round_end_reveal_shows_what_is_left_of_the_bazaar() -> None:
    rules = kozel(2)
    state = rules.new_match()
    state.start_round(rules.deal_from_seed("reveal"))
    assert all(player_view(state, s).reveal is None for s in (0, 1, None))
    while state.phase is Phase.PLAYING:
        state.apply(state.legal_actions()[-1])
    left = tuple(state.bazaar)
    assert state.deal is not None and left == state.deal.rest[len(state.deal.rest) - len(left) :]
    for viewer in (0, 1, None):
        view = player_view(state, viewer)
        assert view.reveal is not None and view.reveal.rest == left
        assert view.to_json()["reveal"]["hands"] == [[str(t) for t in state.hand(s)] for s in (0, 1)]
