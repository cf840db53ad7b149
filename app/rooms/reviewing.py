"""Who may have which round reviewed (issue 16): a seated player, their own seat, an ended round."""

from __future__ import annotations

from app.rooms.errors import RoomError
from app.rooms.room import Room
from app.rooms.seats import seat_of_token
from engine.core import Phase

__all__ = ["reviewable"]


def reviewable(room: Room, round_index: int, token: str | None) -> tuple[int, int]:
    """The match id and the seat whose round ``round_index`` (from 0) the holder of ``token`` (a
    seat token of this room) may have reviewed: only their own seat, only a round of the match in
    this room that has ended (a review shows every option of a decision, which would give away
    nothing after the round but would help during it). Run it in the room's task (`Room.call`).

    Raises `RoomError`: ``bad_token`` (403) without a token of this room's seats,
    ``not_started`` (409) before the first deal, ``round_not_over`` (409) for the round in play or
    a later one."""
    if token is None:
        raise RoomError("bad_token", "a review is for a seated player: send your seat token", 403)
    seat = seat_of_token(room.seats, token)
    state = room.state
    if state is None or state.round_index == 0:
        raise RoomError("not_started", "the match has not started", 409)
    current = state.round_index - 1  # rounds dealt so far, the one in play included
    if round_index > current or (round_index == current and state.phase is Phase.PLAYING):
        raise RoomError("round_not_over", "a round is reviewed only after it has ended", 409)
    return room.match_id, seat
