"""A room's stored form: the round end the store keeps, and rebuilding a room's game from the
store (restart recovery), at exactly its last stored action, through the engine's one replay loop."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from app.store.models import BY_BOT
from app.store.rows import MatchRow, RoomRow, RoundEnd, RoundRow, TallySpec
from engine.core import Phase, State
from engine.events import Drew, Event, Passed, Placed
from engine.hashing import commitment_of
from engine.replay import replay_rounds, resume_match
from engine.rules.base import Rules
from engine.tally import round_tally
from engine.views import outcome_to_json, player_view

__all__ = ["Ended", "Rebuilt", "move_events", "rebuild", "resume", "round_end", "turn_age_s"]


def move_events(log: Sequence[Event], start: int) -> list[int]:
    """The indexes in ``log`` from ``start`` on of the events a move made (a tile placed, a pass,
    a draw), not the round's end."""
    return [i for i in range(start, len(log)) if isinstance(log[i], Placed | Passed | Drew)]


def round_end(state: State) -> RoundEnd:
    """What the store keeps of the round ``state`` has just ended (`engine.tally.round_tally`):
    its outcome, the table's stones, each seat's tally, whether the match ended with it. The
    outcome's ``match_over`` says whether the match ended with this round, as the match's
    ``finished`` status and its record's replay do (docs/record.md): by its options, or because
    the host stopped it (`State.stop` makes the engine's outcome say so)."""
    tally = round_tally(state)
    tallies = [TallySpec(s.seat, s.received, s.paid, s.stones, s.points, s.pending) for s in tally.seats]
    return RoundEnd(outcome_to_json(tally.outcome), tally.table, tallies, tally.match_over)


@dataclass
class Ended:
    """A round as it ended, as `app.rooms.frames.round_end_json` serialises it for
    `app.rooms.room.Room.round_before`: ``round`` its number (`State.round_index` then), ``view``
    the spectator's view with its log, outcome and reveal (JSON), its ``seed`` and ``commitment``,
    ``by_bot`` and ``starts`` as `Rebuilt` keeps them for the round in play, ``version`` the
    room's version at its end (its last action's), and ``hints`` the hints used in it as
    `RoomPublic.round.hints` lists them (`Rebuilt.ended` leaves them to the room, which has the
    stored ones)."""

    round: int
    view: dict[str, Any]
    seed: str | None
    commitment: str | None
    by_bot: list[int]
    version: int
    starts: list[int] = field(default_factory=list)
    hints: list[dict[str, int]] = field(default_factory=list)


@dataclass
class Rebuilt:
    """A match's game rebuilt from the store: ``state`` (None before the start), the last round's
    ``seed`` and ``commitment``, ``last_round`` (the revealed seed of the last finished round) and
    ``marks`` (versions of the round in play → its log's length then, for ``hello.since``),
    ``by_bot`` (the round in play's log indexes of the events of moves a bot made for a person) and
    ``starts`` (the round in play's log index where each of its actions' events begin, by ``seq``)
    and ``turn_age_s`` (seconds since the turn in play began, when `resume` knows: `turn_age_s`;
    for a room handed over in an orderly way, its age at the handoff, `RoomRow.handed_at`)."""

    state: State | None = None
    seed: str | None = None
    commitment: str | None = None
    last_round: dict[str, Any] | None = None
    marks: dict[int, int] = field(default_factory=dict)
    by_bot: list[int] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)
    turn_age_s: float | None = None
    ended: Ended | None = None
    """The round before the last stored one as it ended (`Ended`), or None."""


def rebuild(row: MatchRow, rules: Rules) -> Rebuilt:
    """Replay ``row``'s stored rounds; raises ValueError when a seed does not match its commitment,
    `engine.errors.RecordError` when a stored deal or action does not replay."""
    if row.status != "playing":
        return Rebuilt()
    return _replay(rules.new_match(row.start), row.rounds)


def _replay(state: State, rounds: Sequence[RoundRow]) -> Rebuilt:
    """Deal and play ``rounds`` on ``state`` (`engine.replay.replay_rounds`)."""
    out = Rebuilt(state=state)
    before = 0
    for step in replay_rounds(state, ((r.deal, [a.action for a in r.actions]) for r in rounds)):
        stored = rounds[step.round]
        if step.action is None:  # dealt: the previous round is over, its seed was revealed
            if commitment_of(stored.seed) != stored.commitment:
                raise ValueError(f"round {stored.index}: seed does not match its commitment")
            if out.seed is not None:
                out.last_round = {"index": stored.index - 1, "seed": out.seed, "commitment": out.commitment}
            out.seed, out.commitment = stored.seed, stored.commitment
            out.marks, out.by_bot, out.starts, before = {}, [], [], 0
        else:
            action = stored.actions[step.action]
            out.starts.append(before)
            out.marks[action.version] = len(state.log)
            if action.actor in BY_BOT:
                out.by_bot.extend(move_events(state.log, before))
            before = len(state.log)
            if step.round == len(rounds) - 2 and state.phase is not Phase.PLAYING:
                view = player_view(state, None).to_json()  # before the last round's deal
                out.ended = Ended(
                    state.round_index, view, out.seed, out.commitment, out.by_bot, action.version, out.starts
                )
    if state.round_index and state.phase is not Phase.PLAYING:
        out.last_round = {"index": state.round_index - 1, "seed": out.seed, "commitment": out.commitment}
    state.forget_rounds(1)
    return out


def resume(row: RoomRow, rules: Rules) -> Rebuilt:
    """A room's game from `Store.load_room`: the match as it stood before its last two rounds
    (`engine.replay.resume_match`, from the earlier rounds' stored outcomes), then those two
    rounds replayed as `rebuild` does, so opening a room costs two rounds whatever the match's
    length, and the room is the one `rebuild` gives (the last round's outcome and reveal
    included). A finished match the host ended (``host_stop``) is over after its last round
    (`State.stop`), as it was when it ended. Raises what `rebuild` raises, and KeyError or
    `engine.errors.EngineError` for a stored outcome that is not one."""
    match = row.match
    if match.status not in ("playing", "finished") or not match.rounds:
        return Rebuilt()
    state = resume_match(rules, match.start, row.outcomes_before, row.received_before)
    rebuilt = _replay(state, match.rounds)
    if match.ended_by_host and state.phase is Phase.READY and rules.host_stops:
        state.stop()  # and its last round's outcome says so, as when it ended (`State.stop`)
    if state.phase is Phase.PLAYING and row.read_at is not None:
        # handed over in an orderly way: the turn's time stopped with the handoff, as no process
        # had the room until this read (a restart of every process, say, took that long); a
        # handed_at before the turn began is another handoff's (an 0011 process handed it over
        # since, storing none): not this turn's, so the turn counts until the read
        until = row.read_at
        handed_at = row.handed_at if row.handed else None
        if handed_at is not None and (row.turn_at is None or handed_at >= row.turn_at):
            until = handed_at
        rebuilt.turn_age_s = turn_age_s(match.rounds[-1], until, row.turn_at)
    return rebuilt


def turn_age_s(playing: RoundRow, read_at: float, turn_at: float | None = None) -> float:
    """Seconds from the start of the turn in play of round ``playing`` to ``read_at`` (at least
    0), both in seconds since the epoch on the database's own clock: the turn began at
    ``turn_at`` (`app.store.models.Match.turn_at`: the move before it, the deal, a timer started
    afresh, or a handoff's shifted start), so no server process's clock enters it, and two
    processes whose clocks differ agree on it. A non-move version (the host's stop, a seat
    claimed) keeps the turn, as it keeps its deadline (`app.rooms.timing`). Without ``turn_at``
    (a turn begun before the store kept it) the turn began with its move's ``created_at``, or the
    round's ``started_at``, on the clock of the process that stored it."""
    if turn_at is None:
        began = playing.actions[-1].created_at if playing.actions else playing.started_at
        turn_at = began.timestamp()
    return max(0.0, read_at - turn_at)
