"""The hard bot's search machinery (issue 10): roulette on world weights, the likelihood memo, the
public missing numbers its playouts and weights use, and a fixed number of evaluated worlds."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from engine.actions import Action, Play
from engine.bots import make_bot
from engine.bots.hard import ROULETTE_LEVEL, choose_from, roulette, world_losses
from engine.bots.inference import REST, Knowledge, infer, public_missing, sample_hidden, sample_weighted
from engine.bots.likelihood import _chances, world_weight
from engine.bots.medium import score_actions, situation_of
from engine.core import Phase, State
from engine.events import Placed
from engine.tiles import Tile, iter_mask, mask_of
from engine.variants import make_rules
from engine.views import player_view


def positions(variant: str, seats: int, rounds: int, seed: int) -> Iterator[State]:
    """Every decision with a choice in ``rounds`` rounds of medium play."""
    rules = make_rules(variant, {}, seats)
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


def test_roulette_keeps_likely_worlds_and_the_expected_weight() -> None:
    rng = random.Random(3)
    assert roulette(0.5, 0.4, rng) == 0.5
    assert roulette(0.4, 0.4, rng) == 0.4
    draws = [roulette(0.1, 0.4, rng) for _ in range(20_000)]
    assert set(draws) == {None, 0.4}
    kept = sum(1 for d in draws if d is not None)
    assert kept * 0.4 / len(draws) == pytest.approx(0.1, rel=0.05)


def test_world_weight_memo_is_only_a_cache() -> None:
    for state in list(positions("domeng", 5, 3, seed=12))[:20]:
        seat = state.to_act
        view = player_view(state, seat)
        know = infer(view)
        memo: dict[tuple[int, int], tuple[float, float, float]] = {}
        rng = random.Random(seat)
        for _ in range(6):
            hands, _ = sample_hidden(know, rng)
            alone = world_weight(view.log, seat, hands, 5, "domeng", False)
            assert world_weight(view.log, seat, hands, 5, "domeng", False, memo) == alone


@pytest.mark.parametrize(("variant", "seats"), [("domeng", 5), ("kozel", 3)])
def test_public_missing_agrees_with_what_a_seat_infers(variant: str, seats: int) -> None:
    """Passes (and Kozel draws) are public: every seat reads the same missing numbers of the
    others, and the true hands never show them."""
    found_missing = False
    for state in list(positions(variant, seats, 6, seed=40 + seats))[:60]:
        view = player_view(state, state.to_act)
        missing = public_missing(view)
        found_missing |= any(missing)
        know = infer(view)
        for seat in range(seats):
            if seat != view.seat:
                assert missing[seat] == know.missing[seat]
            for number in range(7):
                if missing[seat] >> number & 1:
                    assert all(number not in (t.low, t.high) for t in state.hand(seat))
    assert found_missing


def test_world_losses_evaluates_exactly_the_worlds_asked_for() -> None:
    for state in list(positions("domeng", 5, 2, seed=7))[:6]:
        view = player_view(state, state.to_act)
        rows, weights = world_losses(view, random.Random(1), samples=12)
        assert len(rows) == len(weights) == 12
        assert all(len(row) == len(view.legal) for row in rows)
        assert all(w > 0 for w in weights)
        again = world_losses(view, random.Random(1), samples=12)
        assert again == (rows, weights)
    assert ROULETTE_LEVEL > 0


def test_domeng_scores_do_not_depend_on_the_other_actions_listed() -> None:
    """Medium's batched Domeng scoring gives each action the score it gets alone."""
    for state in list(positions("domeng", 5, 3, seed=8))[:40]:
        view = player_view(state, state.to_act)
        sit = situation_of(view)
        together = score_actions(sit, view.legal)
        alone = [score_actions(sit, [action])[0] for action in view.legal]
        assert together == alone


def test_the_heavy_kind_expects_the_heaviest_tile() -> None:
    """`likelihood._chances`: with 6-6 and 1-2 fitting [6|2], placing 6-6 is likely for the heavy
    kind (5/6), placing 1-2 unlikely (1/6); the uniform kind gives 1/2 either way."""
    hand = mask_of([Tile.parse("6-6"), Tile.parse("1-2")])
    counts, missing = [5, 2, 5, 5, 5], [0] * 5
    chain = mask_of([Tile.parse("2-6")])
    heavy_play = Placed(1, Tile.parse("6-6"), "L", (6, 2), False)
    light_play = Placed(1, Tile.parse("1-2"), "R", (6, 1), False)
    _, heavy, uniform = _chances(1, hand, (6, 2), counts, missing, chain, heavy_play, "domeng", False)
    assert (heavy, uniform) == (pytest.approx(5 / 6), 0.5)
    medium, heavy, uniform = _chances(1, hand, (6, 2), counts, missing, chain, light_play, "domeng", False)
    assert (heavy, uniform) == (pytest.approx(1 / 6), 0.5)
    assert 0 < medium < 1


def _uniform_deal(know: Knowledge, rng: random.Random) -> dict[int, int]:
    """A deal drawn uniformly from every deal that fits ``know`` (rejection: slow but exact)."""
    tiles = [t.bit for t in iter_mask(know.unseen)]
    while True:
        rng.shuffle(tiles)
        hands: dict[int, int] = {}
        taken = 0
        for cell in know.cells:
            mask = sum(tiles[taken : taken + cell.count])
            taken += cell.count
            if mask & ~cell.allowed or (cell.owner != REST and mask & know.assumed):
                break
            hands[cell.owner] = hands.get(cell.owner, 0) | mask
        else:
            return hands


def test_weighted_sampler_marginals_match_a_uniform_draw_over_consistent_deals() -> None:
    """Where several seats have passed, the cell-by-cell fill is biased; its weights undo that:
    the chance of each (seat, tile) matches exact rejection sampling, the plain fill's does not."""
    found = []
    for state in positions("domeng", 5, 40, seed=7):
        know = infer(player_view(state, state.to_act))
        if sum(1 for c in know.cells if c.owner != REST and c.allowed != know.unseen) >= 2:
            found.append(know)
        if len(found) == 4:
            break
    assert len(found) == 4
    worst_plain = 0.0
    for know in found:
        rng = random.Random(1)
        n = 4000
        plain: dict[tuple[int, int], float] = {}
        weighted: dict[tuple[int, int], float] = {}
        uniform: dict[tuple[int, int], float] = {}
        total = 0.0
        for _ in range(n):
            hands, _, weight = sample_weighted(know, rng)
            total += weight
            for seat, mask in enumerate(hands):
                for tile in iter_mask(mask if seat != know.seat else 0):
                    plain[seat, tile.index] = plain.get((seat, tile.index), 0.0) + 1 / n
                    weighted[seat, tile.index] = weighted.get((seat, tile.index), 0.0) + weight
            for seat, mask in _uniform_deal(know, rng).items():
                for tile in iter_mask(mask if seat != REST else 0):
                    uniform[seat, tile.index] = uniform.get((seat, tile.index), 0.0) + 1 / n
        keys = set(plain) | set(uniform)
        assert max(abs(weighted.get(k, 0.0) / total - uniform.get(k, 0.0)) for k in keys) < 0.04
        worst_plain = max(worst_plain, *(abs(plain.get(k, 0.0) - uniform.get(k, 0.0)) for k in keys))
    assert worst_plain > 0.09, "these positions should show the plain fill's bias"


def test_choose_from_reads_weights_at_any_scale() -> None:
    """Weights are only relative: tiny (or huge) ones give the same choice as moderate ones."""
    a, b, c = (Play(0, Tile.parse(text), None) for text in ("6-6", "5-5", "4-4"))
    legal: list[Action] = [a, b, c]
    rows = [[1.0, 0.0, 2.0], [1.0, 0.5, 0.0], [2.0, 0.0, 1.0], [1.0, 0.2, 1.0]]
    weights = [1.0, 0.5, 2.0, 1.0]
    chosen = choose_from(legal, rows, weights, a)
    assert chosen == b
    for scale in (1e-320, 1e-200, 1e200):
        assert choose_from(legal, rows, [w * scale for w in weights], a) == chosen
    assert choose_from(legal, rows, [0.0] * 4, a) == b
