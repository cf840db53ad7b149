"""Seeded random play over thousands of Kozel rounds (2, 3 and 4 seats, pairs, no two lempas), and
property tests with hypothesis.

After every action: all 28 tiles are in a hand, on the chain or in the bazaar exactly once (K1);
the only legal action is a draw exactly when nothing fits and the bazaar has tiles, a pass exactly
when nothing fits and it is empty (K3); the round ends within a bounded number of actions, a fish
exactly when the bazaar is empty and nobody can place (K5); scores follow K6-K10; and no view names
another seat's tile or a bazaar tile, including a tile another seat drew. Every view is checked field
by field after every action; the full JSON scan runs after every action of one round in LEAK_SCAN_EVERY.
"""

from __future__ import annotations

import itertools
import json
import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.actions import Action, Draw, Pass, Play, PlayLempas
from engine.bots import Bot, make_bot
from engine.core import Phase
from engine.errors import IllegalActionError
from engine.events import Drew, KozelOutcome, Placed, Termination
from engine.rules.kozel import GOAT_POINTS, OPENING_POINTS, Kozel, KozelState
from engine.tiles import FULL_SET, Tile
from engine.views import PlayerView, player_view
from tests.conftest import ENGINE_RERUN, fingerprint, forked_independently
from tests.kozelkit import kozel, kozel_outcome

MAX_ACTIONS = 200
"""28 placements, 14 draws and at most 3 passes per placement bound a round well below this."""
LEAK_SCAN_EVERY = 10
TILE_TEXT = re.compile(r'"([0-6]-[0-6])"')
TABLES: tuple[tuple[int, dict[str, object], tuple[str, ...]], ...] = (
    (2, {}, ("random", "greedy")),
    (3, {}, ("greedy", "random", "random")),
    (4, {}, ("random", "random", "greedy", "greedy")),
    (4, {"pairs": True}, ("greedy", "random", "random", "greedy")),
    (3, {"two_lempas": False}, ("random",)),
    (2, {}, ("greedy",)),
)
ROUNDS_PER_TABLE = 500 // (4 if ENGINE_RERUN else 1)  # 6 tables: 3,000 rounds (a quarter again)
LEMPAS = tuple(Tile.from_pips(p, p) for p in range(7))


# -- invariants --------------------------------------------------------------------------------------


def fits(state: KozelState, seat: int) -> bool:
    """Whether ``seat`` holds a tile for an open end (any tile before the opening), from the hand
    and the ends alone."""
    ends = state.ends
    hand = state.hand(seat)
    if ends is None:
        return bool(hand)
    return any(t.has(ends[0]) or t.has(ends[1]) for t in hand)


def check_legal(state: KozelState, action: Action) -> None:
    """K3, K4: a draw or a pass is the one legal action exactly when nothing fits (draw while the
    bazaar has tiles); two lempas are listed exactly when they apply. Checked before ``action``."""
    seat = state.to_act
    legal = state.legal_actions()
    if fits(state, seat):
        assert not any(isinstance(a, Draw | Pass) for a in legal)
    else:
        assert legal == [Draw(seat) if state.bazaar else Pass(seat)]
    ends, hand = state.ends, state.hand(seat)
    applies = (
        state.rules.two_lempas
        and ends is not None
        and ends[0] != ends[1]
        and all(Tile.from_pips(pip, pip) in hand for pip in ends)
    )
    assert any(isinstance(a, PlayLempas) for a in legal) is bool(applies)
    assert action in legal


def check_tiles(state: KozelState) -> None:
    """K1: hands + chain + bazaar are the 28 tiles, each once; the chain joins up to its ends."""
    chain = [e.tile for e in state.log if isinstance(e, Placed)]
    seen = 0
    for tile in [t for seat in range(state.seats) for t in state.hand(seat)] + chain + state.bazaar:
        assert not seen & tile.bit, f"{tile} is in two places"
        seen |= tile.bit
    assert seen == FULL_SET
    line = state.chain()
    assert len(line) == len(chain)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(line))
    if line:
        assert state.ends == (line[0][0], line[-1][1])


def viewers(state: KozelState) -> tuple[int | None, ...]:
    return (*range(state.seats), None)


def check_view_fields(state: KozelState) -> dict[int | None, PlayerView]:
    """Field by field: every tile a view names is the viewer's own, on the chain, or a tile the
    viewer drew itself; drawn tiles of other seats are None; the bazaar shows only its size.
    Returns the views checked (the seat to act plays from its own: `play_checked_round`)."""
    on_chain = {e.tile for e in state.log if isinstance(e, Placed)}
    views = {viewer: player_view(state, viewer) for viewer in viewers(state)}
    for viewer, view in views.items():
        assert view.reveal is None and view.bazaar == len(state.bazaar)
        own = set(state.hand(viewer)) if viewer is not None else set()
        assert set(view.hand or ()) == own
        named = {a.tile for a in view.legal if isinstance(a, Play)}
        named |= {t for a in view.legal if isinstance(a, PlayLempas) for t in a.tiles}
        named |= {e.tile for e in view.log if isinstance(e, Placed)}
        drawn = [e for e in view.log if isinstance(e, Drew)]
        assert all((e.tile is None) is (e.seat != viewer) for e in drawn)
        named |= {e.tile for e in drawn if e.tile is not None}
        assert named <= own | on_chain, f"the view of {viewer} names {named - own - on_chain}"
    return views


def check_views(state: KozelState) -> None:
    """No view's JSON names a tile of another hand or of the bazaar while a round is played."""
    hands = [state.hand(seat) for seat in range(state.seats)]
    for viewer in viewers(state):
        view = player_view(state, viewer)
        assert view.hand_counts == tuple(len(hand) for hand in hands)
        hidden = [*state.bazaar, *(t for s in range(state.seats) if s != viewer for t in hands[s])]
        shown = set(TILE_TEXT.findall(json.dumps(view.to_json())))
        leaked = [t for t in hidden if f"{t.low}-{t.high}" in shown or f"{t.high}-{t.low}" in shown]
        assert not leaked, f"the view of {viewer} shows {leaked}"


def check_outcome(state: KozelState, points: list[int], pending: list[int]) -> None:
    """K5-K10 on the round just finished; ``points``/``pending`` are the score before it."""
    result = kozel_outcome(state)
    rules: Kozel = state.rules
    values = tuple(state.hand_value(s) for s in range(state.seats))
    assert result.hand_values == values
    side = rules.side_of
    side_value = {
        side(s): sum(values[t] for t in range(state.seats) if side(t) == side(s)) for s in range(state.seats)
    }
    if result.end is Termination.OUT:
        winner = result.winner
        assert winner is not None and not state.hand(winner) and result.next_leader == winner
        assert result.written == tuple(
            0 if side(s) == side(winner) else side_value[side(s)] for s in range(state.seats)
        )
    else:
        assert result.end is Termination.FISH
        assert not state.bazaar and not any(fits(state, s) for s in range(state.seats))
        low = min(side_value.values())
        assert result.written == tuple(
            0 if side_value[side(s)] == low else side_value[side(s)] for s in range(state.seats)
        )
        tied = list(side_value.values()).count(low) > 1
        assert (result.winner is None) is tied
        if result.winner is not None:
            assert result.next_leader == result.winner and side_value[side(result.winner)] == low
    for seat in range(state.seats):
        total = points[seat] + pending[seat] + result.written[seat]
        assert result.points[seat] + result.pending[seat] == total
        assert (result.points[seat] > 0) is (points[seat] > 0 or total >= OPENING_POINTS)
        if rules.pairs:
            partner = (seat + 2) % 4
            assert (result.points[seat], result.pending[seat]) == (
                result.points[partner],
                result.pending[partner],
            )
    crossed = [p for p in result.points if p >= GOAT_POINTS]
    assert result.goat == tuple(s for s in range(state.seats) if crossed and result.points[s] == max(crossed))
    assert result.match_over is bool(result.goat) is (state.phase is Phase.OVER)
    assert state.leader == result.next_leader


def play_checked_round(state: KozelState, bots: list[Bot], scan_views: bool) -> None:
    """Play one dealt round to its end with ``bots``, checking every invariant after every action."""
    points, pending = state.points[:], state.pending[:]
    view = player_view(state, state.to_act)
    for _ in range(MAX_ACTIONS):
        action = bots[state.to_act].choose(view)
        check_legal(state, action)
        state.apply(action)
        check_tiles(state)
        if state.phase is not Phase.PLAYING:
            check_outcome(state, points, pending)
            return
        assert not state.is_fish()
        view = check_view_fields(state)[state.to_act]  # the view just checked is the one played from
        if scan_views:
            check_views(state)
    raise AssertionError(f"the round did not end within {MAX_ACTIONS} actions")


@pytest.mark.parametrize("table", range(len(TABLES)))
def test_random_play_keeps_every_invariant(table: int) -> None:
    seats, options, lineup = TABLES[table]
    rules = kozel(seats, **options)
    rng = random.Random(f"kozel-random-play-{table}")
    bots = [make_bot(lineup[s % len(lineup)], random.Random(rng.getrandbits(64))) for s in range(seats)]
    state = rules.new_match()
    ends: set[str] = set()
    goats = draws = two_lempas = 0
    for index in range(ROUNDS_PER_TABLE):
        if state.phase is Phase.OVER:
            state = rules.new_match()
        state.start_round(rules.deal(rng))
        check_tiles(state)
        play_checked_round(state, bots, scan_views=index % LEAK_SCAN_EVERY == 0)
        result = kozel_outcome(state)
        ends.add(result.end.value + ("-tied" if result.winner is None else ""))
        goats += bool(result.goat)
        draws += sum(isinstance(a, Draw) for a in state.actions)
        two_lempas += sum(isinstance(a, PlayLempas) for a in state.actions)
    assert {"out", "fish"} <= ends and goats >= ROUNDS_PER_TABLE // 25 and draws > ROUNDS_PER_TABLE
    assert (two_lempas > 0) is rules.two_lempas


# -- hypothesis ---------------------------------------------------------------------------------------


def check_unlisted_actions_are_refused(state: KozelState, legal: list[Action]) -> None:
    """Every listed action applies (on a fork); unlisted plays, draws, passes and two-lempas moves
    and actions by another seat all raise and leave the state as it was."""
    before = fingerprint(state)
    for action in legal:
        state.fork().apply(action)
    seat = state.to_act
    other = (seat + 1) % state.seats
    refused: list[Action] = [Play(other, t) for t in state.hand(other)[:1]]
    listed = {a.tile for a in legal if isinstance(a, Play)}
    refused += [Play(seat, t, end) for t in state.hand(seat) if t not in listed for end in (None, "L", "R")]
    refused += [a for a in (Draw(seat), Pass(seat)) if a not in legal]
    pairs = [PlayLempas(seat, (a, b)) for a, b in itertools.combinations(LEMPAS, 2)]
    refused += [a for a in pairs if a not in legal and PlayLempas(seat, a.tiles[::-1]) not in legal][:4]
    for action in refused:
        with pytest.raises(IllegalActionError):
            state.apply(action)
    assert fingerprint(state) == before


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**64 - 1), table=st.sampled_from(TABLES[:4]), data=st.data())
def test_any_line_of_play_keeps_every_invariant(
    seed: int, table: tuple[int, dict[str, object], tuple[str, ...]], data: st.DataObject
) -> None:
    rules = kozel(table[0], **table[1])
    rng = random.Random(seed)
    state = rules.new_match()
    for _ in range(2):  # the first round (K2) and one led by its winner
        state.start_round(rules.deal(rng))
        points, pending = state.points[:], state.pending[:]
        for _ in range(MAX_ACTIONS):
            legal = state.legal_actions()
            check_unlisted_actions_are_refused(state, legal)
            action = data.draw(st.sampled_from(legal))
            check_legal(state, action)
            state.apply(action)
            check_tiles(state)
            if state.phase is not Phase.PLAYING:
                check_outcome(state, points, pending)
                break
            check_views(state)
        else:
            raise AssertionError(f"the round did not end within {MAX_ACTIONS} actions")
        if state.phase is Phase.OVER:
            break


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**64 - 1), steps=st.integers(0, 40), seats=st.sampled_from((2, 3, 4)))
def test_fork_is_independent_both_ways(seed: int, steps: int, seats: int) -> None:
    fork = forked_independently(kozel(seats), seed, steps)
    assert isinstance(fork.outcome, KozelOutcome)
