"""FastAPI dependencies as ``Annotated`` aliases: the hub, a room by its code, the host token, the
round reviews."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, HTTPException
from starlette.requests import HTTPConnection

from app.bots.reviews import ReviewWorkers
from app.edge.handoff import Handoff
from app.rooms.hub import Hub
from app.rooms.room import Room
from app.rooms.seats import seat_number

__all__ = [
    "HostToken",
    "HubDep",
    "ReviewsDep",
    "RoomDep",
    "SeatPath",
    "SeatToken",
]


def _bearer(authorization: Annotated[str | None, Header()] = None) -> str | None:
    if authorization and authorization.lower().startswith("bearer "):
        return authorization[7:].strip()
    return None


def _seat_path(seat: str) -> int:
    """The seat a path names (``…/seats/{seat}``), strictly: `app.rooms.seats.seat_number` (its
    number alone, ``"0"`` to ``"9"``; anything else is 404 ``no_such_seat``, as a seat the table
    does not have and a chat mute's seat are answered)."""
    return seat_number(seat)


SeatPath = Annotated[int, Depends(_seat_path)]
"""A seat's number from the path, strictly (`_seat_path`)."""

HostToken = Annotated[str | None, Depends(_bearer)]
SeatToken = Annotated[str | None, Depends(_bearer)]
"""A seat's secret token, sent as ``Authorization: Bearer …`` (leaving a seat)."""


def _hub(request: HTTPConnection) -> Hub:
    hub: Hub = request.app.state.hub
    return hub


HubDep = Annotated[Hub, Depends(_hub)]


def _reviews(request: HTTPConnection) -> ReviewWorkers:
    reviews: ReviewWorkers = request.app.state.reviews
    return reviews


ReviewsDep = Annotated[ReviewWorkers, Depends(_reviews)]
"""The round reviews' worker process and cache (`app.bots.reviews.ReviewWorkers`)."""


async def _room(code: str, request: HTTPConnection) -> Room:
    handoff: Handoff = request.app.state.handoff
    room = await handoff.open(code)  # from the store when it is not in memory, or handed over
    if room is None:
        raise HTTPException(404, detail={"code": "no_such_room", "message": "no room with this code"})
    return room


RoomDep = Annotated[Room, Depends(_room)]
