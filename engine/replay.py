"""The one replay loop: deal stored rounds and apply their actions to a state, step by step.

Restart recovery, the admin history and the record reader all rebuild a match this way. The state
is changed in place; each `Step` says what was just done, so a caller can look at the state between
steps (a frame per action) or only at the end (``for _ in replay_rounds(...): pass``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from engine.actions import Action, parse_action
from engine.core import Deal, Phase, State
from engine.deal_json import parse_deal
from engine.errors import EngineError, RecordError
from engine.events import Event
from engine.rules.base import Rules
from engine.rules.domeng import DomengState

__all__ = ["Step", "StoredRound", "replay_rounds", "resume_match"]

StoredRound = tuple[Deal | Mapping[str, object], object]
"""One round as stored: its deal (a `Deal`, or its JSON as `engine.deal_json.deal_to_json` writes
it) and its actions (a list of `Action` objects or of their RECORD.md JSON)."""


@dataclass(frozen=True, slots=True)
class Step:
    """What the last step of a replay did: ``round`` is the index (from 0) among the rounds given;
    ``action`` the index of the action in that round (from 0), or None for the deal itself;
    ``played`` that action (None for the deal) and ``events`` what it caused."""

    round: int
    action: int | None
    played: Action | None
    events: tuple[Event, ...]


def replay_rounds(state: State, rounds: Iterable[StoredRound], rest_key: str = "rest") -> Iterator[Step]:
    """Deal each round on ``state`` and apply its actions, yielding a `Step` after the deal and
    after every action. ``rest_key`` names the rest in a JSON deal (``rest`` in the store, the
    variant's `engine.core.State.rest_name` in a record). ``rounds`` is read lazily.

    Every action goes through `State.apply`, so the same rules as in play check it. Raises
    `RecordError` with the fault's round and action indexes and one of the codes: ``match_over``
    (a round after the match ended), ``unfinished_round`` (a round before this one did not end),
    ``invalid_deal``/``invalid_tile`` (the deal), ``invalid_document`` (actions not a list),
    ``invalid_action``/``invalid_end`` and every `IllegalActionError` code (an action).
    """
    for index, (deal, actions) in enumerate(rounds):
        _deal_round(state, index, deal, rest_key)
        yield Step(index, None, None, ())
        if not isinstance(actions, Sequence) or isinstance(actions, str):
            raise RecordError("invalid_document", "'actions' must be a list", index)
        for at, raw in enumerate(actions):
            try:
                action = raw if isinstance(raw, Action) else parse_action(raw)
                events = state.apply(action)
            except EngineError as error:
                raise RecordError(error.code, error.message, index, at) from None
            yield Step(index, at, action, tuple(events))


def resume_match(
    rules: Rules,
    start: Mapping[str, object] | None,
    finished: Sequence[Mapping[str, object]],
    received: Sequence[int] = (),
) -> State:
    """The match as it stands after its ``finished`` rounds, ready to deal the next one, without
    replaying them: ``start`` is the match's RECORD.md ``start`` (None for a new match) and
    ``finished`` the outcomes of its finished rounds in order, as `engine.views.outcome_to_json`
    writes them. The score comes from the last outcome (Domeng: ``table``, ``stones``, ``camat``;
    Kozel: ``points``, ``pending``), the next leader from its ``next_leader``, Domeng's camat
    elections per seat from every ``camat_elected`` (D16-D18: the match ends at its camat target);
    the next round dealt is round ``len(finished)`` (from 0). The state's ``history`` is empty.
    Domeng's stones ``received`` per seat over those rounds (the standings' second key, every
    settlement's stones: a store keeps them in its round tallies) are taken as given (default 0).

    Raises `EngineError` (``invalid_start``) for a score no match can reach, KeyError for an
    outcome without those fields.
    """
    if finished:
        start = rules.start_after(finished[-1])
    state = rules.new_match(start)
    state.round_index = len(finished)
    if isinstance(state, DomengState):
        if received:
            state.received = [int(r) for r in received]
        for outcome in finished:
            camat = outcome["camat"]
            if outcome["camat_elected"] and isinstance(camat, int):
                state.elections[camat] += 1
    return state


def _deal_round(state: State, index: int, deal: Deal | Mapping[str, object], rest_key: str) -> None:
    if state.phase is Phase.OVER:
        raise RecordError("match_over", "the match was already over before this round", index)
    if state.phase is Phase.PLAYING:
        raise RecordError("unfinished_round", "the previous round did not reach its end", index - 1)
    try:
        if not isinstance(deal, Deal):
            deal = parse_deal(deal, state.rules.hand_sizes(), rest_key)
        state.start_round(deal)
    except EngineError as error:
        raise RecordError(error.code, error.message, index) from None
    except ValueError as error:
        raise RecordError("invalid_deal", str(error), index) from None
