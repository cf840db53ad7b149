"""The rule facts the bots ask for instead of comparing variant names: the opening order (D11,
K2), drawing from the rest (K3), and a round rebuilt from a view (`Rules.world`)."""

from __future__ import annotations

import random

import pytest

from engine.bots import make_bot
from engine.bots.facts import facts_of, in_pairs, rules_of
from engine.core import Phase, State
from engine.rules.domeng import OPENING_LEMPAS
from engine.rules.kozel import OPENING_ORDER
from engine.tiles import Tile
from engine.variants import make_rules
from engine.views import player_view

GAMES = [("domeng", {}, None), ("kozel", {}, 2), ("kozel", {}, 3), ("kozel", {"pairs": True}, 4)]


def test_the_opening_order_and_drawing_are_the_variants_own() -> None:
    domeng, kozel = make_rules("domeng"), make_rules("kozel")
    assert domeng.opening_order == OPENING_LEMPAS
    assert [str(t) for t in domeng.opening_order] == ["6-6", "5-5", "4-4", "3-3"]
    assert kozel.opening_order == OPENING_ORDER
    assert kozel.opening_order[:8] == (*(Tile.from_pips(p, p) for p in range(6, -1, -1)), Tile.parse("5-6"))
    assert (domeng.draws_from_rest, kozel.draws_from_rest) == (False, True)


@pytest.mark.parametrize(("variant", "options", "seats"), GAMES)
def test_a_views_rules_are_the_matchs_rules(
    variant: str, options: dict[str, object], seats: int | None
) -> None:
    rules = make_rules(variant, options, seats)
    state = rules.new_match()
    state.start_round(rules.deal(random.Random(3)))
    view = player_view(state, state.to_act)
    assert rules_of(view) == rules
    assert rules_of(view) is rules_of(player_view(state, state.to_act))  # cached
    assert facts_of(view) == (rules, in_pairs(rules))
    assert in_pairs(rules) is bool(options.get("pairs"))


def mid_round_states(variant: str, options: dict[str, object], seats: int | None) -> list[State]:
    """Every position of two seeded rounds (medium bots), forked as they were played."""
    rules = make_rules(variant, options, seats)
    rng = random.Random(11)
    bots = [make_bot("medium", random.Random(seat)) for seat in range(rules.seats)]
    state = rules.new_match()
    found = []
    for _ in range(2):
        state.start_round(rules.deal(rng))
        while state.phase is Phase.PLAYING:
            found.append(state.fork())
            state.apply(bots[state.to_act].choose(player_view(state, state.to_act)))
    return found


@pytest.mark.parametrize(("variant", "options", "seats"), GAMES)
def test_a_world_with_the_true_hands_plays_as_the_real_round(
    variant: str, options: dict[str, object], seats: int | None
) -> None:
    for state in mid_round_states(variant, options, seats):
        view = player_view(state, state.to_act)
        world = state.rules.world(view, state.hands, state.rest())
        assert type(world) is type(state)
        assert world.legal_actions() == state.legal_actions()
        assert world.score() == state.score()
        assert world.rest() == (state.rest() if state.rules.draws_from_rest else ())
        assert (world.ends, world.to_act, world.last_placer, world.placed, world.round_index) == (
            state.ends,
            state.to_act,
            state.last_placer,
            state.placed,
            state.round_index,
        )
        action = state.legal_actions()[0]
        world.apply(action)
        state.apply(action)
        assert (world.hands, world.phase, world.score()) == (state.hands, state.phase, state.score())


def test_the_last_answer_is_kept_only_for_the_same_options() -> None:
    views = []
    for options in ({"pairs": True}, {"pairs": False}, {"pairs": True, "two_lempas": False}):
        rules = make_rules("kozel", options, 4)
        state = rules.new_match()
        state.start_round(rules.deal(random.Random(5)))
        views.append((rules, player_view(state, state.to_act)))
    for rules, view in [*views, *reversed(views), *views]:
        assert facts_of(view) == (rules, in_pairs(rules))
