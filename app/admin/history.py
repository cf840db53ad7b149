"""A stored match explained by the engine: every round's deal, outcome and stone transfers, the
chart of stones (or points) across rounds, and a round's replay frames, step by step.

Everything is rebuilt from the stored deal and actions through the same rules code the server
plays with (`State.apply`); nothing here re-implements a rule. A stored outcome that the replay
does not reproduce is flagged (``replay_agrees``), never silently trusted.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

from app.admin.queries import effective_status, last_active, result_of, seat_admin
from app.admin.schemas import (
    MatchChart,
    MatchDetail,
    PayerShare,
    ReplayFrame,
    RoundDetail,
    RoundReplay,
    SeriesOfSeat,
    TallyOut,
    Transfer,
)
from app.store import MatchRow, RoundRow
from engine.core import Phase, State
from engine.errors import EngineError
from engine.events import Event, Passed, RoundEnded, Settlement
from engine.narration import describe_events, describe_outcome, describe_settlement
from engine.replay import replay_rounds
from engine.tally import round_settlements
from engine.variants import find_variant, make_rules
from engine.views import event_to_json, outcome_agrees, outcome_to_json, player_view

__all__ = ["match_detail", "round_replay"]


def _rest_name(variant: str) -> Any:
    return find_variant(variant).rest_name


def _transfer(s: Settlement, action: int | None, names: Sequence[str]) -> Transfer:
    return Transfer(
        reason=s.reason.value,
        receiver=s.receiver,
        owed=s.owed,
        received=s.received,
        from_table=s.from_table,
        from_payers=[PayerShare(seat=seat, stones=n) for seat, n in s.from_payers],
        cancelled=s.cancelled,
        action=action,
        text=f"{s.reason.value}: {describe_settlement(s, names)}",
    )


def _new_state(row: MatchRow) -> State:
    return make_rules(row.variant, row.options, row.seat_count).new_match(row.start)


def _stored(stored: RoundRow) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    return stored.deal, [a.action for a in stored.actions]


def _host_stop(row: MatchRow, state: State, last: bool) -> bool:
    """The host's stop after the ``last`` round of ``row``, once ``state`` has ended it, if the
    host ended the match (`State.stop`, as `app.rooms.recovery.resume` does): that round's outcome
    then says the match ended with it. Whether it stopped."""
    if not (last and row.ended_by_host and state.rules.host_stops and state.phase is Phase.READY):
        return False
    state.stop()
    return True


def _round_detail(
    row: MatchRow, state: State, stored: RoundRow, names: Sequence[str], last: bool
) -> RoundDetail:
    """Play ``stored`` on ``state`` (its round is dealt here) and describe it; the round the host
    ended the match with (`_host_stop`) is described as the match's last."""
    variant = row.variant
    transfers: list[Transfer] = []
    for step in replay_rounds(state, [_stored(stored)]):
        for event in step.events:
            if type(event) is Passed and event.settlement is not None:
                transfers.append(_transfer(event.settlement, step.action, names))
    _host_stop(row, state, last)
    finished = state.phase is not Phase.PLAYING
    if finished:  # the round end's settlement (Domeng), after the passes' ones
        transfers += [_transfer(s, None, names) for s in round_settlements(state)[len(transfers) :]]
    outcome = state.outcome if finished else None
    agrees = None
    if stored.outcome is not None:
        agrees = outcome is not None and outcome_agrees(outcome, stored.outcome)
    summary = describe_outcome(outcome, names) if outcome is not None else []
    return _plain_round(stored, variant, summary, transfers, agrees)


def _plain_round(
    stored: RoundRow,
    variant: str,
    summary: list[str] | None = None,
    transfers: list[Transfer] | None = None,
    agrees: bool | None = None,
) -> RoundDetail:
    """A round as stored; with no replay (it failed before this round) no summary, no transfers
    and no verdict, else what the replay of it found."""
    return RoundDetail(
        index=stored.index,
        seed=stored.seed,
        commitment=stored.commitment,
        started_at=stored.started_at,
        ended_at=stored.ended_at,
        hands=stored.deal["hands"],
        rest=stored.deal["rest"],
        rest_name=_rest_name(variant),
        actions=[a.action for a in stored.actions],
        actors=[a.actor for a in stored.actions],
        outcome=stored.outcome,
        summary=summary or [],
        transfers=transfers or [],
        tallies=[
            TallyOut(
                seat=t.seat,
                stones=t.stones,
                received=t.received,
                paid=t.paid,
                points=t.points,
                pending=t.pending,
            )
            for t in stored.tallies
        ],
        replay_agrees=agrees,
    )


def _chart(row: MatchRow, names: Sequence[str]) -> MatchChart:
    outcomes = [r.outcome for r in row.rounds if r.outcome is not None]
    unit: Literal["stones", "points"] = "points" if find_variant(row.variant).unit == "points" else "stones"
    key = unit
    return MatchChart(
        unit=unit,
        rounds=list(range(1, len(outcomes) + 1)),
        series=[
            SeriesOfSeat(seat=seat, name=names[seat], values=[o[key][seat] for o in outcomes])
            for seat in range(row.seat_count)
        ],
        table=[o["table"] for o in outcomes] if unit == "stones" else None,
    )


def _times(row: MatchRow) -> list[datetime | None]:
    times: list[datetime | None] = [row.created_at, row.started_at, row.finished_at]
    times += [s.updated_at for s in row.seats]
    for r in row.rounds:
        times += [r.started_at, r.ended_at, *(a.created_at for a in r.actions)]
    return times


def match_detail(row: MatchRow, cutoff: datetime, live: bool) -> MatchDetail:
    """The admin's full view of a stored match (`MatchDetail`); ``cutoff`` as in
    `app.admin.queries.list_matches`, ``live`` whether a room of this server hosts it."""
    names = row.seat_names()
    rounds: list[RoundDetail] = []
    error = None
    try:
        state = _new_state(row)
        for at, stored in enumerate(row.rounds):
            rounds.append(_round_detail(row, state, stored, names, at == len(row.rounds) - 1))
    except (EngineError, ValueError, KeyError) as failure:
        error = f"round {len(rounds)}: {failure}"
        rounds += [_plain_round(r, row.variant) for r in row.rounds[len(rounds) :]]
    active_at = last_active(_times(row))
    status = effective_status(row.status, active_at, cutoff)
    seats = range(row.seat_count)
    return MatchDetail(
        id=row.id,
        code=row.code,
        variant=row.variant,
        options=row.options,
        status=status,
        stored_status=row.status,
        abandoned_reason=None
        if status != "abandoned"
        else ("closed" if row.status == "abandoned" and row.closed_reason != "idle" else "idle"),
        live=live,
        room_match=row.room_match,
        host_stop=row.host_stop,
        created_at=row.created_at,
        started_at=row.started_at,
        finished_at=row.finished_at,
        last_active_at=active_at,
        round_count=len(row.rounds),
        seats=[seat_admin(s) for s in row.seats],
        result=result_of(
            row.variant,
            [r.outcome for r in row.rounds if r.outcome is not None],
            [sum(t.received for r in row.rounds for t in r.tallies if t.seat == s) for s in seats],
            row.status == "finished",
        ),
        turn_timer_s=row.turn_timer_s,
        start=row.start,
        rounds=rounds,
        chart=_chart(row, names),
        replay_error=error,
    )


def _frame(
    state: State,
    step: int,
    action: dict[str, Any] | None,
    actor: str | None,
    events: list[Event],
    names: Sequence[str],
) -> ReplayFrame:
    view = player_view(state, None).to_json()
    playing = state.phase is Phase.PLAYING
    rest = state.rest()
    return ReplayFrame(
        step=step,
        action=action,
        actor=actor,
        text=describe_events(events, names) if events else "dealt",
        to_act=view["to_act"],
        hands=[[str(t) for t in state.hand(seat)] for seat in range(state.seats)],
        chain=view["chain"],
        ends=view["ends"],
        rest=[str(t) for t in rest],
        score=state.score().to_json(),
        events=[event_to_json(e) for e in events],
        outcome=None if playing or state.outcome is None else outcome_to_json(state.outcome),
    )


def round_replay(row: MatchRow, index: int) -> RoundReplay:
    """Every step of round ``index`` (from 0) of a stored match: frame 0 as dealt, then one frame
    after each stored action, with every hand visible. The last round of a match the host ended
    ends as the stop left it: its last frame's outcome, and the round's end among its events and
    in its text, say the match ended with it (no next leader; the table's log keeps the event as
    the rules gave it then, `engine.core.State.stop`).

    Raises LookupError for a round that is not stored, and `EngineError` when the stored actions
    do not replay (they were checked by the same rules when played, so this means a damaged store).
    """
    if not 0 <= index < len(row.rounds):
        raise LookupError(f"match {row.id} has no round {index}")
    names = row.seat_names()
    state = _new_state(row)
    frames: list[ReplayFrame] = []
    stored = row.rounds[index]
    last = index == len(row.rounds) - 1
    for step in replay_rounds(state, [_stored(r) for r in row.rounds[: index + 1]]):
        if step.round != index:
            continue
        if step.action is None:
            frames.append(_frame(state, 0, None, None, [], names))
        else:
            action = stored.actions[step.action]
            events = list(step.events)
            if _host_stop(row, state, last) and state.outcome is not None:
                over = RoundEnded(state.outcome)  # the round's end told as the stop left it
                events = [over if type(e) is RoundEnded else e for e in events]
            frames.append(_frame(state, step.action + 1, action.action, action.actor, events, names))
    return RoundReplay(
        match_id=row.id,
        round=index,
        rounds=len(row.rounds),
        variant=row.variant,
        seats=names,
        rest_name=_rest_name(row.variant),
        finished=state.phase is not Phase.PLAYING,
        frames=frames,
    )
