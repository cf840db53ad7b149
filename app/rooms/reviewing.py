"""Who may have which round reviewed (issue 16): a seated player, their own seat, an ended round,
of the room's match in play or of an earlier one (Play again)."""

from __future__ import annotations

from app.rooms.errors import RoomError
from app.rooms.ownership import unavailable
from app.rooms.room import Room
from app.rooms.seats import seat_of_token
from app.store import Store, StoreError
from engine.core import Phase

__all__ = ["reviewable", "reviewable_earlier"]


def reviewable(
    room: Room, round_index: int, token: str | None, match: int | None = None
) -> tuple[int, int] | None:
    """The match id and the seat whose round ``round_index`` (from 0) the holder of ``token`` (a
    seat token of this room) may have reviewed: only their own seat, only a round of the match in
    this room that has ended (a review shows every option of a decision, which would give away
    nothing after the round but would help during it). ``match``: the match's number in the room
    (from 1; None: the one in the room now); None is returned for an earlier one, which the caller
    reads from the store (`reviewable_earlier`). Run it in the room's task (`Room.call`).

    Raises `RoomError`: ``bad_token`` (403) without a token of this room's seats,
    ``no_such_match`` (404) for a match number the room has not reached, ``not_started`` (409)
    before the first deal, ``round_not_over`` (409) for the round in play or a later one."""
    if token is None:
        raise RoomError("bad_token", "a review is for a seated player: send your seat token", 403)
    if match is not None and match != room.room_match:
        if match > room.room_match:
            raise RoomError("no_such_match", f"this room has played no match {match}", 404)
        return None
    seat = seat_of_token(room.seats, token)
    state = room.state
    if state is None or state.round_index == 0:
        raise RoomError("not_started", "the match has not started", 409)
    current = state.round_index - 1  # rounds dealt so far, the one in play included
    if round_index > current or (round_index == current and state.phase is Phase.PLAYING):
        raise RoomError("round_not_over", "a round is reviewed only after it has ended", 409)
    return room.match_id, seat


async def reviewable_earlier(
    store: Store, code: str, match: int, round_index: int, token: str
) -> tuple[int, int]:
    """`reviewable` for match number ``match`` of room ``code``, one played before the room's
    match now (a player keeps its final panel open, or opens it again, after Play again): the
    stored match's id and the seat of ``token`` in it (a person keeps their seat and token from
    match to match, but the check is against that match's own seats). Only the match's seats and
    its round's end are read (`Store.match_seats`): any string sent as a token must not make the
    server read a whole match.

    Raises `RoomError`: ``no_such_match`` (404), ``bad_token`` (403) when ``token`` held no seat
    of that match, ``round_not_over`` (409) for a round it did not end, ``room_unavailable`` (503,
    ``Retry-After``) when the store fails."""
    try:
        found = next((m.id for m in await store.room_matches(code) if m.number == match), None)
        if found is None:
            raise RoomError("no_such_match", f"this room has played no match {match}", 404)
        seats, ended = await store.match_seats(found, round_index)
    except StoreError as error:
        raise unavailable("the review cannot be read right now; try again") from error
    seat = seat_of_token(seats, token)
    if not ended:
        raise RoomError("round_not_over", "a round is reviewed only after it has ended", 409)
    return found, seat
