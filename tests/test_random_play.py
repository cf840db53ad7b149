"""Seeded random play over 10,000 Domeng rounds, and property tests with hypothesis.

After every action: ``table + Σ stones == 25`` and nothing negative (D5), all 28 tiles are in a hand,
on the chain or among the unused exactly once (D10), every pass was forced (D12), the round ends
within a bounded number of actions, and no view shows another seat's tile or an unused one (D20).
Every view of all five seats and a spectator is checked field by field after every action of one
round in VIEW_CHECK_EVERY (the tiles it names are the viewer's own, the chain's, or nothing: six views
per action cost twice the rest of the checks and the play together); the full JSON scan costs five
times the play itself, so the seeded run adds it after every action of one round in LEAK_SCAN_EVERY,
and hypothesis does it always. The other invariants hold after every action of every round.
"""

from __future__ import annotations

import itertools
import json
import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.actions import Action, Pass, Play
from engine.bots import Bot, make_bot
from engine.core import Phase
from engine.errors import IllegalActionError
from engine.events import Placed, Termination
from engine.rules.domeng import DomengState
from engine.tiles import FULL_SET, TILES
from engine.views import (
    PRIVATE_KEYS,
    PlayerView,
    events_json,
    player_view,
    private_view_json,
    shared_view_json,
)
from tests.conftest import ENGINE_RERUN, domeng, fingerprint, forked_independently, outcome

CHUNKS = 8
ROUNDS_PER_CHUNK = 1_260 // (4 if ENGINE_RERUN else 1)  # 8 chunks: 10,080 rounds (a quarter again)
VIEW_CHECK_EVERY = 4
"""Check all six views field by field after every action of one round in this many (2,520 rounds)."""
LEAK_SCAN_EVERY = 20
"""Scan all six views after every action of one round in this many (a scan costs 5x the play itself)."""
MAX_ACTIONS = 125
"""At most 21 placements before someone is out, each followed by at most 4 passes."""
VIEWERS: tuple[int | None, ...] = (0, 1, 2, 3, 4, None)
TILE_TEXT = re.compile(r'"([0-6]-[0-6])"')
LINEUPS = (
    ("random",) * 5,
    ("greedy",) * 5,
    ("random", "greedy", "random", "greedy", "random"),
    ("greedy", "greedy", "random", "random", "greedy"),
)


# -- invariants --------------------------------------------------------------------------------------


def fits(state: DomengState, seat: int) -> bool:
    """Whether ``seat`` holds a tile for an open end (any tile before the opening), worked out from
    the hand and the ends alone."""
    ends = state.ends
    hand = state.hand(seat)
    if ends is None:
        return bool(hand)
    return any(t.has(ends[0]) or t.has(ends[1]) for t in hand)


def check_forced_pass(state: DomengState, action: Action) -> None:
    """D12: the only legal action is a pass exactly when nothing fits, and a pass is never chosen
    otherwise. Checked before ``action`` is applied."""
    seat = state.to_act
    can_place = fits(state, seat)
    assert (state.legal_actions() == [Pass(seat)]) is not can_place
    if isinstance(action, Pass):
        assert not can_place, f"P{seat} passed holding a fit: {state.hand(seat)} on {state.ends}"


def check_stones(state: DomengState) -> None:
    """D5: ``T + ΣS = 25``, nothing negative."""
    assert state.table + sum(state.stones) == 25
    assert min(state.table, *state.stones) >= 0


def check_tiles(state: DomengState) -> None:
    """D10: hands + chain + unused are the 28 tiles, each once; the chain joins up to its ends."""
    assert state.deal is not None
    chain = [e.tile for e in state.log if isinstance(e, Placed)]
    seen = 0
    for tile in [t for seat in range(5) for t in state.hand(seat)] + chain + list(state.deal.rest):
        assert not seen & tile.bit, f"{tile} is in two places"
        seen |= tile.bit
    assert seen == FULL_SET
    line = state.chain()
    assert len(line) == len(chain)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(line))
    if line:
        assert state.ends == (line[0][0], line[-1][1])


def check_views(state: DomengState) -> None:
    """D20: while a round is played, no view names a tile of another hand or an unused tile."""
    assert state.deal is not None
    hands = [state.hand(seat) for seat in range(5)]
    for viewer in VIEWERS:
        view = player_view(state, viewer)
        assert view.reveal is None
        assert view.hand == (None if viewer is None else hands[viewer])
        assert view.hand_counts == tuple(len(hand) for hand in hands)
        hidden = [*state.deal.rest, *(t for s in range(5) if s != viewer for t in hands[s])]
        shown = set(TILE_TEXT.findall(json.dumps(view.to_json())))
        leaked = [t for t in hidden if f"{t.low}-{t.high}" in shown or f"{t.high}-{t.low}" in shown]
        assert not leaked, f"the view of {viewer} shows {leaked}"


def check_view_fields(state: DomengState) -> dict[int | None, PlayerView]:
    """D20, field by field and cheaply: every tile a view names (hand, legal actions, log) is the
    viewer's own or on the chain; no reveal while the round is played. Returns the views checked
    (the seat to act plays from its own: `play_checked_round`)."""
    assert state.deal is not None
    log = tuple(state.log)
    on_chain = {e.tile for e in log if isinstance(e, Placed)}
    views = {viewer: player_view(state, viewer) for viewer in VIEWERS}
    for viewer, view in views.items():
        assert view.reveal is None
        own = set(state.hand(viewer)) if viewer is not None else set()
        assert set(view.hand or ()) == own
        named = {a.tile for a in view.legal if isinstance(a, Play)}
        # a Domeng log hides nothing from anyone: every view's log is the round's own, whose
        # placed tiles are exactly the chain's (compared item by item, not scanned again)
        assert view.log == log, f"the view of {viewer} has another log"
        assert named <= own | on_chain, f"the view of {viewer} names {named - own - on_chain}"
        assert len(view.chain) == len(on_chain)
    return views


def check_reveal(state: DomengState) -> None:
    """D20: after the round, every view reveals the hands left and the unused tiles."""
    assert state.deal is not None
    hands = tuple(state.hand(seat) for seat in range(5))
    for viewer in VIEWERS:
        view = player_view(state, viewer)
        assert view.reveal is not None
        assert (view.reveal.hands, view.reveal.rest) == (hands, state.deal.rest)
        assert view.to_json()["reveal"]["rest"] == [str(t) for t in state.deal.rest]


def check_no_reveal(state: DomengState) -> None:
    """D20: the reveal never reaches the next round."""
    for viewer in VIEWERS:
        view = player_view(state, viewer)
        assert view.reveal is None and view.to_json()["reveal"] is None


def check_outcome(state: DomengState) -> None:
    """D2, D7-D9, D15-D18 on the round just finished."""
    result = outcome(state)
    settlement = result.settlement
    assert settlement.owed == settlement.received + settlement.cancelled
    last = [e for e in state.log if isinstance(e, Placed)][-1]
    sums = result.pip_sums
    assert sums == tuple(state.pip_sum(seat) for seat in range(5))
    if result.end is Termination.BLOCK:
        manguno = result.manguno
        assert manguno == last.seat and result.first_cappu is None
        assert not any(fits(state, seat) for seat in range(5))
        after = [(manguno + k) % 5 for k in range(1, 5)]
        assert result.mattikkeng == tuple(
            sorted((s for s in after if sums[s] <= sums[manguno]), key=sums.__getitem__)
        )
        assert result.winner == (result.mattikkeng[0] if result.mattikkeng else manguno)
        assert result.cucuq == (None if result.mattikkeng else (manguno - 1) % 5)
        assert not result.camat_elected
    else:
        kind = Termination.OUT
        if last.mappakuling:
            kind = Termination.POLLO if last.tile.is_lempa else Termination.CEKI
        assert result.end is kind
        assert result.winner == result.first_cappu == last.seat and not state.hand(last.seat)
        assert result.cucuq == (last.seat - 1) % 5 and result.manguno is None
    if result.camat_elected:
        assert (result.camat, result.table, result.stones) == (result.winner, 25, (0,) * 5)
    assert result.next_leader == (result.winner if result.camat is None else result.camat)
    assert result.match_over is (state.phase is Phase.OVER)


def play_checked_round(
    state: DomengState, bots: list[Bot], scan_views: bool, check_views_too: bool = True
) -> None:
    """Play one dealt round to its end with ``bots``, checking every invariant after every action
    (the six views field by field only with ``check_views_too``, the JSON leak scan with
    ``scan_views``)."""
    view = player_view(state, state.to_act)
    for _ in range(MAX_ACTIONS):
        action = bots[state.to_act].choose(view)
        check_forced_pass(state, action)
        state.apply(action)
        check_stones(state)
        check_tiles(state)
        if state.phase is not Phase.PLAYING:
            check_outcome(state)
            check_reveal(state)
            return
        # the seat to act plays from the view just checked
        view = check_view_fields(state)[state.to_act] if check_views_too else player_view(state, state.to_act)
        if scan_views:
            check_views(state)
    raise AssertionError(f"the round did not end within {MAX_ACTIONS} actions")


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_random_play_keeps_every_invariant(chunk: int) -> None:
    rules = domeng(camat_target=(1, 0)[chunk % 2])
    rng = random.Random(f"random-play-{chunk}")
    bots = [make_bot(name, random.Random(rng.getrandbits(64))) for name in LINEUPS[chunk % len(LINEUPS)]]
    state = rules.new_match()
    ends: set[Termination] = set()
    for index in range(ROUNDS_PER_CHUNK):
        if state.phase is Phase.OVER:
            state = rules.new_match()
        state.start_round(rules.deal(rng))
        check_no_reveal(state)
        check_tiles(state)
        if index % LEAK_SCAN_EVERY == 0:
            check_views(state)
        play_checked_round(
            state,
            bots,
            scan_views=index % LEAK_SCAN_EVERY == 0,
            check_views_too=index % VIEW_CHECK_EVERY == 0,
        )
        ends.add(outcome(state).end)
    assert ends >= {Termination.OUT, Termination.CEKI, Termination.BLOCK}


# -- hypothesis ---------------------------------------------------------------------------------------


def check_canonical_order(state: DomengState, legal: list[Action]) -> None:
    """Placements by tile index, L before R (RECORD.md's ends named), or the one forced pass."""
    if legal == [Pass(state.to_act)]:
        return
    assert all(isinstance(a, Play) and a.seat == state.to_act for a in legal)
    keys = [(a.tile.index, a.end or "") for a in legal if isinstance(a, Play)]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)


def check_unlisted_actions_are_refused(state: DomengState, legal: list[Action]) -> None:
    """Every listed action applies (on a fork); plays of unlisted tiles, of tiles held by nobody at
    this seat, on an end the tile does not fit, by another seat, and voluntary passes all raise."""
    before = fingerprint(state)
    for action in legal:
        state.fork().apply(action)
    seat, ends = state.to_act, state.ends
    listed = {a.tile for a in legal if isinstance(a, Play)}
    refused: list[Action] = [Play((seat + 1) % 5, t) for t in state.hand((seat + 1) % 5)[:1]]
    refused += [Play(seat, t, end) for t in state.hand(seat) if t not in listed for end in (None, "L", "R")]
    refused += [Play(seat, t) for t in TILES if t not in state.hand(seat)][:3]
    if ends is not None and ends[0] != ends[1]:
        refused += [
            Play(seat, t, end)
            for t in listed
            for end in ("L", "R")
            if not t.has(ends[1] if end == "R" else ends[0])
        ]
    if ends is not None and listed:
        # At the opening, a pass by a leader without a 5 or a 6 trips an engine bug that
        # test_engine_errors.py pins down; here only mid-round passes are tried.
        refused.append(Pass(seat))
    for action in refused:
        with pytest.raises(IllegalActionError):
            state.apply(action)
    assert fingerprint(state) == before


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**64 - 1), data=st.data())
def test_any_line_of_play_keeps_every_invariant(seed: int, data: st.DataObject) -> None:
    rules = domeng(camat_target=0)
    rng = random.Random(seed)
    state = rules.new_match()
    for _ in range(2):  # the first round (D11) and one led by its winner
        state.start_round(rules.deal(rng))
        for _ in range(MAX_ACTIONS):
            legal = state.legal_actions()
            check_canonical_order(state, legal)
            check_unlisted_actions_are_refused(state, legal)
            action = data.draw(st.sampled_from(legal))
            check_forced_pass(state, action)
            before = fingerprint(state)
            state.fork().apply(action)
            assert fingerprint(state) == before, "applying to a fork changed the original"
            state.apply(action)
            check_stones(state)
            check_tiles(state)
            if state.phase is not Phase.PLAYING:
                check_outcome(state)
                break
            check_views(state)
        else:
            raise AssertionError(f"the round did not end within {MAX_ACTIONS} actions")


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**64 - 1), steps=st.integers(0, 30))
def test_fork_is_independent_both_ways(seed: int, steps: int) -> None:
    forked_independently(domeng(), seed, steps)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**64 - 1), steps=st.integers(0, 40))
def test_shared_and_private_parts_make_up_every_view(seed: int, steps: int) -> None:
    """The server's split of a view (one shared part per update, a private part per seat, the log
    sent as events) puts together exactly ``player_view(...).to_json()`` for every viewer."""
    rules = domeng(camat_target=0)
    rng = random.Random(seed)
    state = rules.new_match()
    state.start_round(rules.deal(rng))
    for _ in range(steps):
        if state.phase is not Phase.PLAYING:
            if state.phase is Phase.OVER:
                break
            state.start_round(rules.deal(rng))
        state.apply(rng.choice(state.legal_actions()))
    shared = shared_view_json(state)
    assert not set(shared) & {*PRIVATE_KEYS, "log"}
    for viewer in VIEWERS:
        private = private_view_json(state, viewer)
        assert set(private) == set(PRIVATE_KEYS)
        cut = rng.randint(0, len(state.log))
        log = events_json(state, viewer)[:cut] + events_json(state, viewer, cut)
        assert {**private, **shared, "log": log} == player_view(state, viewer).to_json()
