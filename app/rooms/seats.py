"""Seats and who sits in them: their public form, secret seat tokens, and the checks of a claim
or a bot swap (which compute the new seat; the room stores it, then adopts it)."""

from __future__ import annotations

import hmac
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from app.rooms.errors import RoomError
from app.rooms.names import check_name, names_clash
from app.store.rows import SeatSpec
from engine.bots import BOTS, COVER_LEVEL
from engine.hashing import sha256_hex

__all__ = [
    "COVER_BOT",
    "PUBLIC_KEYS",
    "SeatInfo",
    "SeatKind",
    "TokenHolder",
    "check_bot_swap",
    "check_claim",
    "check_leave",
    "check_resize",
    "given_to_bot",
    "hash_token",
    "seat_at",
    "seat_named",
    "seat_number",
    "seat_of_token",
]

COVER_BOT = COVER_LEVEL
"""The bot level that covers for an absent player, and fills empty seats at the start."""

SeatKind = Literal["empty", "human", "bot"]

PUBLIC_KEYS = ("seat", "kind", "name", "bot_level", "connected", "ready", "covered", "stand_in")
"""The keys of a seat's public form (`SeatInfo.public`), in order."""


hash_token = sha256_hex
"""The stored form of a secret token: hex SHA-256 (`engine.hashing.sha256_hex`)."""


@dataclass
class SeatInfo:
    """A seat: empty, a human (with the hash of their secret token) or a bot of a level.

    ``covered`` marks a human seat that a bot is playing for until the player is back (two turn
    timers in a row ran out, or the player was away past the grace); ``stand_in`` a human seat whose
    turn timer ran out once: a bot plays that one turn, the next is the player's again;
    ``timeouts`` counts the player's turn timers that ran out in a row (their own move resets it);
    ``connections`` counts the sockets open on it. These are presence, sent and not versioned;
    ``covered``, ``stand_in`` and ``timeouts`` are stored too, as the seat's `cover`
    (`app.store.models.Seat.cover`), so that a room loaded again goes on covering the seat until
    its person is back. ``ready`` is stored: the seat's person said they play this match (a claim,
    or Play again). ``replaced`` is stored: the level of the bot a person took this seat from
    before a start (the host's choice at the room's creation, or a bot set there since), which
    comes back when they leave it, in this match or a later one of Play again, after a restart or
    a handoff too (`check_leave`). ``former_token_hash`` is stored: the token hash of the person
    whose seat the host gave to a bot (`check_bot_swap`), so that their token, opened later, is
    told so (`given_to_bot`) rather than refused as one the room never knew.
    """

    seat: int
    kind: SeatKind = "empty"
    name: str | None = None
    bot_level: str | None = None
    token_hash: str | None = None
    ready: bool = False
    covered: bool = False
    stand_in: bool = False
    timeouts: int = 0
    connections: int = 0
    replaced: str | None = None
    former_token_hash: str | None = None

    @property
    def cover(self) -> str | None:
        """Whether a bot plays for this seat's person, as the store keeps it
        (`app.store.models.SEAT_COVERS`): ``"covered"``, ``"stand_in"``, ``"timed_out"`` (their
        last turn's timer ran out: the next in a row covers the seat), None (none of these).
        `cover_of` written out: the room reads every seat's cover after each move and intent."""
        if self.covered:
            return "covered"
        if self.stand_in:
            return "stand_in"
        return "timed_out" if self.timeouts else None

    @staticmethod
    def cover_of(covered: bool, stand_in: bool, timeouts: int) -> str | None:
        """`cover` of a seat with these marks."""
        if covered:
            return "covered"
        if stand_in:
            return "stand_in"
        return "timed_out" if timeouts else None

    def adopt_cover(self, cover: str | None) -> None:
        """Take the stored ``cover`` (`cover`; anything else is None) for a person's seat."""
        self.release()
        if self.kind != "human":
            return
        if cover == "covered":
            self.covered = True
        elif cover in ("stand_in", "timed_out"):
            self.stand_in, self.timeouts = cover == "stand_in", 1

    def public(self) -> dict[str, Any]:
        """What everyone may know about the seat: `public_key`'s values under `PUBLIC_KEYS`."""
        return dict(zip(PUBLIC_KEYS, self.public_key(), strict=True))

    def public_key(self) -> tuple[int, str, str | None, str | None, bool, bool, bool, bool]:
        """Everything `public` tells, in `PUBLIC_KEYS`' order: ``(seat, kind, name, bot_level,
        connected, ready, covered, stand_in)``. `public` is made of it, so equal keys give equal
        public forms (`app.rooms.frames.room_public_json` keeps the seats' JSON by their keys)."""
        kind = self.kind
        return (
            self.seat,
            kind,
            self.name,
            self.bot_level,
            self.connections > 0 or kind == "bot",
            kind == "bot" or (kind == "human" and self.ready),
            self.covered,
            self.stand_in,
        )

    def spec(self) -> SeatSpec:
        """The seat as the store keeps it."""
        return SeatSpec(
            kind=self.kind,
            name=self.name,
            bot_level=self.bot_level,
            token_hash=self.token_hash,
            seat=self.seat,
            ready=self.ready,
            replaced=self.replaced,
            former_token_hash=self.former_token_hash,
        )

    def become(self, spec: SeatSpec) -> None:
        """Adopt a stored change: the seat is now ``spec`` (and no longer covered), ``replaced``
        too: the level of the bot a person took it from (`check_claim`), stored with it."""
        self.replaced = spec.replaced if spec.kind == "human" else None
        self.kind = spec.kind  # type: ignore[assignment]
        self.name, self.bot_level, self.token_hash = spec.name, spec.bot_level, spec.token_hash
        self.ready = spec.ready
        if spec.former_token_hash is not None:
            self.former_token_hash = spec.former_token_hash
        self.release()

    def release(self) -> None:
        """No bot plays for this seat's player any more, and their timeouts start again from 0."""
        self.covered, self.stand_in, self.timeouts = False, False, 0

    @property
    def played_for(self) -> bool:
        """Whether a bot plays this human seat's turn now (covering it, or standing in once)."""
        return self.kind == "human" and (self.covered or self.stand_in)


class TokenHolder(Protocol):
    """A seat as `seat_of_token` reads it: a room's `SeatInfo`, or a stored `SeatRow` of an earlier
    match of the room."""

    @property
    def seat(self) -> int: ...

    @property
    def token_hash(self) -> str | None: ...


def seat_of_token(seats: Iterable[TokenHolder], token: str) -> int:
    """The seat whose token this is; raises `RoomError` (``bad_token``, 403)."""
    digest = hash_token(token)
    for seat in seats:
        if seat.token_hash is not None and hmac.compare_digest(seat.token_hash, digest):
            return seat.seat
    raise RoomError("bad_token", "this token holds no seat in this room", 403)


def given_to_bot(seats: Iterable[SeatInfo], token: str) -> bool:
    """Whether ``token`` held a seat of this match that the host gave to a bot
    (`SeatInfo.former_token_hash`): its hello is told so (``seat_to_bot``, close 4007), as the
    socket open at the time was, not refused as a token the room never knew (4004)."""
    digest = hash_token(token)
    return any(
        seat.former_token_hash is not None and hmac.compare_digest(seat.former_token_hash, digest)
        for seat in seats
    )


def seat_at(seats: list[SeatInfo], seat: int) -> SeatInfo:
    """``seats[seat]``; raises `RoomError` (``no_such_seat``, 404)."""
    if not 0 <= seat < len(seats):
        raise RoomError("no_such_seat", f"no seat {seat} at this {len(seats)}-seat table", 404)
    return seats[seat]


def seat_number(text: str) -> int:
    """The seat ``text`` names (a path's ``{seat}``, a JSON object's key ``{"muted": {"2": true}}``):
    only its canonical decimal form, ``"0"`` to ``"9"`` (never ``"01"``, ``" 1"``, ``"+1"``,
    ``"1_0"`` or ``"1.0"``, which Python's ``int`` would read). Raises `RoomError`
    (``no_such_seat``, 404) for any other text, as `seat_at` does for a seat the table lacks."""
    if len(text) != 1 or text not in "0123456789":
        raise RoomError("no_such_seat", f"no seat {text[:8]!r} at this table", 404)
    return int(text)


def seat_named(seats: list[SeatInfo], text: str) -> int:
    """The seat of ``seats`` that ``text`` names (`seat_number`), within the table's seats. Raises
    `RoomError` (``no_such_seat``, 404) for any other text or a seat the table does not have."""
    return seat_at(seats, seat_number(text)).seat


def check_claim(seats: list[SeatInfo], seat: int, name: str, status: str, token_hash: str) -> SeatSpec:
    """What ``seat`` becomes when a person who typed ``name`` takes it (the name as
    `app.rooms.names.clean_name` cleans it).

    Raises `RoomError`: ``no_such_seat`` (404); a refused name (422: ``name_empty``,
    ``name_too_long``, ``name_invisible``, ``name_stacked``, ``name_blank``, ``name_reserved``,
    ``name_marked``, see `app.rooms.names.check_name`); ``seat_taken`` (409); ``name_taken``
    (409: a person at another seat has this name or one that passes for it,
    `app.rooms.names.names_clash`).
    """
    info = seat_at(seats, seat)
    name = check_name(name)
    open_seat = info.kind == "empty" or (info.kind == "bot" and status == "waiting")
    if not open_seat:
        raise RoomError("seat_taken", f"seat {seat} is taken")
    if any(s.kind == "human" and s.name and names_clash(s.name, name) for s in seats):
        raise RoomError("name_taken", "someone at this table already has that name, or one like it")
    replaced = info.bot_level if info.kind == "bot" else None  # it goes back to that bot on a leave
    return SeatSpec(kind="human", name=name, token_hash=token_hash, seat=seat, ready=True, replaced=replaced)


def check_leave(seats: list[SeatInfo], seat: int, status: str) -> SeatSpec:
    """What ``seat`` becomes when its player leaves it, only before the start: the bot they took
    it from (`SeatInfo.replaced`), else empty. Raises `RoomError` (``no_such_seat``,
    ``not_seated``, ``already_started``)."""
    info = seat_at(seats, seat)
    if info.kind != "human":
        raise RoomError("not_seated", f"nobody sits at seat {seat}", 409)
    if status != "waiting":
        raise RoomError("already_started", "a seat cannot be left once the match started")
    if info.replaced is not None:
        return SeatSpec(kind="bot", bot_level=info.replaced, seat=seat)
    return SeatSpec(kind="empty", seat=seat)


def check_bot_swap(seats: list[SeatInfo], seat: int, level: str | None, status: str) -> SeatSpec:
    """What ``seat`` becomes as a bot of ``level`` (None: empty, only before the start); a
    person's seat keeps their token hash as ``former_token_hash``. Raises `RoomError`
    (``no_such_seat``, ``unknown_bot``, ``already_started``)."""
    info = seat_at(seats, seat)
    if level is not None and level not in BOTS:
        raise RoomError("unknown_bot", f"unknown bot level {level!r}", 422)
    if level is None and status != "waiting":
        raise RoomError("already_started", "seats cannot be emptied once the match started")
    if level is None:
        return SeatSpec(kind="empty", seat=seat)
    # a person's token: told later that the host gave their seat to a bot (`given_to_bot`)
    former = info.token_hash if info.kind == "human" else None
    return SeatSpec(kind="bot", bot_level=level, seat=seat, former_token_hash=former)


def check_resize(seats: list[SeatInfo], count: int) -> None:
    """Whether the table may keep only its first ``count`` seats (the host's seat count, before the
    start; new seats are added empty at the end): a bot's or an empty seat may go, a person's never.
    Raises `RoomError` (``seat_taken``, 409) naming the seats past ``count`` that people hold (seats
    count from 0 here, as on the wire)."""
    held = [info for info in seats[count:] if info.kind == "human"]
    if held:
        which = ", ".join(f"seat {info.seat} ({info.name})" for info in held)
        raise RoomError(
            "seat_taken",
            f"a {count}-seat table has no {which}: its person leaves it, or the host gives it to a bot,"
            " first",
        )
