"""What a room waits for next: pure, from its state, seats and status (the room arms the one
timer this names; a fake clock in the tests fires it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from app.rooms.seats import SeatInfo
from engine.actions import Pass
from engine.core import Phase, State

__all__ = ["Wait", "WaitReason", "next_wait"]

WaitReason = Literal["deal", "bot", "forced", "timer"]


@dataclass(frozen=True, slots=True)
class Wait:
    """The room waits at ``version`` for ``reason``: the next ``deal`` (after the round pause), a
    ``bot``'s move (a bot's seat, a covered one, or one whose turn timer ran out: `SeatInfo`), a
    ``forced`` pass (the only legal action), or a human's turn ``timer``; ``seat`` is the seat to
    act (None for a deal)."""

    version: int
    reason: WaitReason
    seat: int | None


def next_wait(
    state: State | None,
    seats: Sequence[SeatInfo],
    *,
    status: str,
    version: int,
    watched: bool,
    turn_timer_s: float,
    asking: bool = False,
) -> Wait | None:
    """What the room waits for now, or None (nothing happens until someone acts).

    A finished round waits for the next deal only while someone is ``watched`` (connected): bots do
    not play on alone, round after round (a no-limit match would never end); and not while the
    room is ``asking`` whether anyone still watches (`app.rooms.unattended`): then only an answer,
    or a person at the table, deals.
    """
    if state is None or status != "playing":
        return None
    if state.phase is Phase.READY:
        return Wait(version, "deal", None) if watched and not asking else None
    if state.phase is not Phase.PLAYING:
        return None
    seat = state.to_act
    info = seats[seat]
    legal = state.legal_actions()
    if len(legal) == 1 and isinstance(legal[0], Pass):
        return Wait(version, "forced", seat)
    if info.kind == "bot" or info.played_for:
        return Wait(version, "bot", seat)
    if turn_timer_s > 0:
        return Wait(version, "timer", seat)
    return None
