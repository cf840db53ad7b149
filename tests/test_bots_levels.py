"""The bot levels easy, medium, hard and omniscient: legality, outs, hidden information, the sampler,
the deadline and the registry (issue 10).

Positions come from seeded play; a bot sees only its seat's `player_view`. The invariance tests
re-deal every tile the seat cannot see (other hands, Domeng's unused tiles, the bazaar and its
order) consistently with its view, check the view is unchanged, and check the decision for a fixed
seed is the same.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.actions import Play, PlayLempas
from engine.bots import (
    BOTS,
    COVER_LEVEL,
    MEASUREMENT_BOTS,
    PLAYER_LEVELS,
    Bot,
    HardBot,
    OmniscientBot,
    evaluate_options,
    make_bot,
)
from engine.bots.inference import REST, Cell, _complete_fill, infer, sample_hidden
from engine.bots.likelihood import world_weight
from engine.bots.search import evaluate_on_world
from engine.bots.worlds import world_state
from engine.core import Phase, State
from engine.record import write_record
from engine.rules.domeng import Domeng
from engine.rules.kozel import Kozel
from engine.tiles import PIP_MASKS, TILES, Tile, mask_of
from engine.variants import make_rules
from engine.views import player_view

TABLES: tuple[tuple[str, int, dict[str, object]], ...] = (
    ("domeng", 5, {}),
    ("kozel", 2, {}),
    ("kozel", 3, {}),
    ("kozel", 4, {}),
    ("kozel", 4, {"pairs": True}),
    ("kozel", 3, {"two_lempas": False}),
)
TABLE_IDS = [f"{v}-{n}-{'-'.join(o) or 'default'}" for v, n, o in TABLES]


def bot(level: str, seed: int) -> Bot:
    """A bot of ``level``; the hard one with a fixed number of worlds (no clock)."""
    if level == "hard":
        return HardBot(random.Random(seed), samples=3)
    return make_bot(level, random.Random(seed))


def positions(
    variant: str, seats: int, options: dict[str, object], rounds: int, seed: int
) -> Iterator[State]:
    """Every decision with more than one legal action in ``rounds`` rounds of medium play."""
    rules = make_rules(variant, options, seats)
    rng = random.Random(seed)
    players = [make_bot("medium", random.Random(rng.getrandbits(32))) for _ in range(seats)]
    for _ in range(rounds):
        state = rules.new_match()
        state.start_round(rules.deal(rng))
        while state.phase is Phase.PLAYING:
            if len(state.legal_actions()) > 1:
                yield state.fork()
            seat = state.to_act
            state.apply(players[seat].choose(player_view(state, seat)))


@pytest.mark.parametrize(("variant", "seats", "options"), TABLES, ids=TABLE_IDS)
@pytest.mark.parametrize("level", ["easy", "medium", "hard"])
def test_every_level_plays_legally(level: str, variant: str, seats: int, options: dict[str, object]) -> None:
    rules = make_rules(variant, options, seats)
    rng = random.Random(f"{level}-{variant}-{seats}")
    rounds = 3 if level == "hard" else 40
    for _ in range(rounds):
        players = [bot(level, rng.getrandbits(32)) for _ in range(seats)]
        state = rules.new_match()
        state.start_round(rules.deal(rng))
        while state.phase is Phase.PLAYING:
            view = player_view(state, state.to_act)
            action = players[state.to_act].choose(view)
            assert action in view.legal
            state.apply(action)
        assert state.outcome is not None


def test_easy_always_goes_out_when_it_can() -> None:
    """Domeng: its last tile 3-4 on [3|5] goes out; its last tile 5-5 on [5|5] goes out with pollo
    (D5). Kozel's two-lempas out is below."""
    rules = Domeng()
    for seed in range(50):
        state = rules.position(
            [["3-4"], ["6-6", "1-2"], ["0-0", "1-1"], ["2-2", "0-1"], ["0-2", "1-6"]],
            (3, 5),
            to_act=0,
            last_mappano=4,
        )
        assert make_bot("easy", random.Random(seed)).choose(player_view(state, 0)) == Play(
            0, Tile.parse("3-4"), "L"
        )
        pollo = rules.position(
            [["5-5"], ["6-6", "1-2"], ["0-0", "1-1"], ["2-2", "0-1"], ["0-2", "1-6"]],
            (5, 5),
            to_act=0,
            last_mappano=4,
        )
        choice = make_bot("easy", random.Random(seed)).choose(player_view(pollo, 0))
        assert choice == Play(0, Tile.parse("5-5"), "L")


def test_easy_takes_the_two_lempas_out_in_kozel() -> None:
    rules = Kozel(seats=3)
    for seed in range(50):
        state = rules.position(
            [["2-2", "5-5"], ["1-3", "6-6"], ["0-1", "4-4"]], (2, 5), to_act=0, last_placer=2
        )
        choice = make_bot("easy", random.Random(seed)).choose(player_view(state, 0))
        assert isinstance(choice, PlayLempas)


def redeal(state: State, seat: int, rng: random.Random) -> State:
    """A copy of ``state`` with every tile ``seat`` cannot see dealt again, consistently with its view."""
    hands, rest = sample_hidden(infer(player_view(state, seat)), rng)
    other = state.fork()
    other.hands = hands
    if state.variant == "kozel":
        other.bazaar = [TILES[i] for i in rest]  # type: ignore[attr-defined]
    return other


@pytest.mark.parametrize(("variant", "seats", "options"), TABLES, ids=TABLE_IDS)
def test_decisions_never_depend_on_hidden_tiles(variant: str, seats: int, options: dict[str, object]) -> None:
    changed = 0
    for n, state in enumerate(positions(variant, seats, options, 4, seed=seats)):
        seat = state.to_act
        view = player_view(state, seat)
        for k in range(2):
            other = redeal(state, seat, random.Random(n * 7 + k))
            assert player_view(other, seat) == view
            changed += other.hands != state.hands
            for level in PLAYER_LEVELS:
                seed = n * 31 + len(level)
                assert bot(level, seed).choose(player_view(other, seat)) == bot(level, seed).choose(view)
    assert changed > 0


@pytest.mark.parametrize(("variant", "seats", "options"), TABLES, ids=TABLE_IDS)
def test_true_hands_fit_what_a_seat_infers(variant: str, seats: int, options: dict[str, object]) -> None:
    """Soundness: the numbers a seat believes another lacks are lacking from that seat's real hand, and
    the real hands and rest fill the slots a seat infers."""
    for state in positions(variant, seats, options, 6, seed=100 + seats):
        for seat in range(seats):
            know = infer(player_view(state, seat))
            for other, missing in enumerate(know.missing):
                for number in range(7):
                    if missing >> number & 1:
                        assert not state.hands[other] & PIP_MASKS[number], (seat, other, number)
            rest = mask_of(_rest(state))
            assert know.unseen == (sum(state.hands) | rest) & ~state.hands[seat]
            truth = [
                Cell(c.owner, c.allowed & (rest if c.owner == REST else state.hands[c.owner]), c.count)
                for c in know.cells
            ]
            assert _complete_fill(truth, know.unseen, random.Random(0)) is not None, "the real deal fits"


def _rest(state: State) -> list[Tile]:
    bazaar = getattr(state, "bazaar", None)
    if bazaar is not None:
        return list(bazaar)
    assert state.deal is not None
    return list(state.deal.rest)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    table=st.sampled_from(TABLES),
    game=st.integers(0, 10_000),
    stop=st.integers(0, 60),
    sample=st.integers(0, 2**32),
)
def test_the_sampler_respects_every_constraint(
    table: tuple[str, int, dict[str, object]], game: int, stop: int, sample: int
) -> None:
    variant, seats, options = table
    states = list(positions(variant, seats, options, 1, seed=game))
    if not states:
        return
    state = states[min(stop, len(states) - 1)]
    seat = state.to_act
    know = infer(player_view(state, seat))
    hands, rest = sample_hidden(know, random.Random(sample))
    assert hands[seat] == state.hands[seat]
    for other in range(seats):
        assert hands[other].bit_count() == state.hands[other].bit_count()
        for number in range(7):
            if know.missing[other] >> number & 1:
                assert not hands[other] & PIP_MASKS[number]
    for cell in know.cells:
        assert cell.owner == REST or cell.allowed & know.unseen == cell.allowed
    dealt = sum(h for s, h in enumerate(hands) if s != seat) + sum(TILES[i].bit for i in rest)
    assert dealt == know.unseen
    assert len(rest) == len(_rest(state))


def test_hard_answers_by_its_deadline() -> None:
    """A deadline already passed: no world is searched and the bot still answers legally (the medium
    choice); with a tiny budget it answers legally too."""
    state = next(positions("domeng", 5, {}, 1, seed=3))
    view = player_view(state, state.to_act)
    assert evaluate_options(view, random.Random(1), samples=None, deadline=0.0) == {}
    assert HardBot(random.Random(1), budget_ms=0.0).choose(view) in view.legal
    assert HardBot(random.Random(1), budget_ms=1.0).choose(view) in view.legal
    assert HardBot(random.Random(1), budget_ms=50, budget_scale=0.02).budget_ms == pytest.approx(1.0)


def test_evaluate_options_gives_each_legal_action_a_loss() -> None:
    for state in list(positions("kozel", 3, {}, 1, seed=5))[:3]:
        view = player_view(state, state.to_act)
        values = evaluate_options(view, random.Random(2), samples=4)
        assert set(values) == set(view.legal)
        assert all(value >= 0 for value in values.values())


@pytest.mark.parametrize("level", ["easy", "medium", "hard"])
def test_a_fresh_bot_with_the_same_seed_decides_the_same(level: str) -> None:
    for n, state in enumerate(list(positions("domeng", 5, {}, 2, seed=9))[:8]):
        view = player_view(state, state.to_act)
        assert bot(level, n).choose(view) == bot(level, n).choose(view)


def test_omniscient_is_for_measurement_only_and_leaves_the_state_alone() -> None:
    assert "omniscient" not in BOTS and "omniscient" not in PLAYER_LEVELS
    assert {"omniscient": OmniscientBot} == MEASUREMENT_BOTS
    assert PLAYER_LEVELS == ("easy", "medium", "hard")
    assert COVER_LEVEL in PLAYER_LEVELS
    assert {"random", "greedy"} <= set(BOTS)
    for state in list(positions("domeng", 5, {}, 1, seed=4))[:5]:
        before = write_record(state, [f"P{i}" for i in range(5)]), state.hands[:], state.table  # type: ignore[attr-defined]
        action = OmniscientBot(random.Random(0)).choose_seeing(state, state.to_act)
        assert action in state.legal_actions()
        assert (write_record(state, [f"P{i}" for i in range(5)]), state.hands[:], state.table) == before  # type: ignore[attr-defined]


def test_make_bot_hard_uses_the_default_budget() -> None:
    hard = make_bot("hard", random.Random(0))
    assert isinstance(hard, HardBot) and hard.samples is None and hard.budget_ms > 0


@pytest.mark.parametrize(("variant", "seats", "options"), TABLES, ids=TABLE_IDS)
def test_a_world_with_the_true_tiles_plays_like_the_real_state(
    variant: str, seats: int, options: dict[str, object]
) -> None:
    """`world_state` rebuilds the position from the view: given the real hands and rest, every
    action's playout and solve end exactly as on the real state (stones, points)."""
    for n, state in enumerate(list(positions(variant, seats, options, 3, seed=20 + seats))[:25]):
        view = player_view(state, state.to_act)
        rest = _rest(state)
        world = world_state(view, state.hands, [t.index for t in rest])
        legal = state.legal_actions()
        on_world = evaluate_on_world(world, legal, state.to_act, mask_of(rest), n)
        on_state = evaluate_on_world(state, legal, state.to_act, mask_of(rest), n, len(state.log))
        assert on_world == on_state


def test_a_worlds_weight_is_a_chance_and_the_true_world_is_possible() -> None:
    for state in list(positions("domeng", 5, {}, 2, seed=11))[:20]:
        seat = state.to_act
        view = player_view(state, seat)
        weight = world_weight(view.log, seat, state.hands, 5, "domeng", False)
        assert 0 < weight <= 1
        hands, _ = sample_hidden(infer(view), random.Random(1))
        assert 0 < world_weight(view.log, seat, hands, 5, "domeng", False) <= 1
