"""Tables nobody attends: after ``unattended_rounds`` rounds dealt in a row with no person at the
table (`app.rooms.config.RoomConfig`, ``DOMENG_UNATTENDED_ROUNDS``), a room deals no more and asks
its spectators whether they still watch; a spectator's ``keep_watching`` deals the next round, and
the count starts again from it; a person at their seat deals as ever (docs/protocol.md).

Only a match that never ends by itself ("No limit") asks: a table of bots alone plays on as long
as one socket watches it (`app.rooms.schedule.next_wait`), and such a match stored about 70
changes a minute, for ever, for a spectator who may have left the tab open and gone. A person at
the table is a seat whose person is connected: a table of bots alone, and one whose people all
left it to the bots covering them, are both unattended. The count is stored with each deal
(`app.store.models.Match.unattended_rounds`), so a room loaded again (a
restart, a handoff, an idle unload) still waits, and never deals on its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import structlog

from app.rooms.seats import SeatInfo
from engine.core import Phase, State

if TYPE_CHECKING:
    from app.rooms.ports import Outbox
    from app.rooms.room import Room

__all__ = ["asks_watching", "keep_watching", "person_here", "rounds_after_deal"]

_log = structlog.get_logger("domeng.room")


def person_here(seats: Sequence[SeatInfo]) -> bool:
    """Whether a person is at the table: a person's seat with a connection open."""
    return any(info.kind == "human" and info.connections > 0 for info in seats)


def rounds_after_deal(seats: Sequence[SeatInfo], before: int, again: bool = False) -> int:
    """The rounds dealt in a row with no person at the table once one more is dealt, ``before``
    of them until now: 0 while a person is at the table, else one more (``again``: a spectator's
    ``keep_watching`` deals it, and the count starts again, from 1).

    >>> rounds_after_deal([SeatInfo(0, "bot", bot_level="easy")], 4), rounds_after_deal([], 9, again=True)
    (5, 1)
    """
    if person_here(seats):
        return 0
    return (0 if again else before) + 1


def asks_watching(
    state: State | None, seats: Sequence[SeatInfo], *, status: str, unattended: int, limit: int
) -> bool:
    """Whether the room, between two rounds of a match being played, holds its next deal to ask
    whether anyone still watches: the match ends only when its host stops it (a "No limit" match,
    `engine.rules.base.Rules.host_stops`; any other ends by itself, so watching bots play it out
    is never interrupted), ``unattended`` rounds were dealt in a row with no person at the
    table, at least ``limit`` of them (``limit`` 0: never), and still none is here."""
    if limit <= 0 or unattended < limit or status != "playing":
        return False
    if state is None or state.phase is not Phase.READY or not state.rules.host_stops:
        return False
    return not person_here(seats)


async def keep_watching(room: Room, conn: Outbox) -> bool:
    """A spectator's ``keep_watching`` (docs/protocol.md): while ``room`` asks (`asks_watching`),
    deal the next round at once, the count starting again from it (`app.rooms.moves.Moves.deal_round`);
    otherwise nothing (another spectator answered first, a person came). Whether it dealt. Runs
    in the room's task (`app.rooms.room.Room.call`); raises what the deal's store raises."""
    if not room.asks_watching():
        return False
    _log.info("keep_watching", room=room.code, watcher=conn.watcher, after=room.unattended)
    await room.deal_round(again=True)
    return True
