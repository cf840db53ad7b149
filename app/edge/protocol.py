"""The WebSocket protocol (version 1): client messages, parsed and validated once, at the edge.

Every client frame is one JSON object with a ``type``; `parse_client_message` turns it into one of
the models below or raises `ProtocolError`, which closes the socket. Messages that parse but
cannot be honoured (an illegal action, a stale version) get an ``error`` reply instead; see
docs/protocol.md for every message in both directions.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from app.rooms.presence import CONNECTION_PATTERN
from app.rooms.watchers import KEY_PATTERN
from engine.actions import Action, parse_action

__all__ = [
    "CLOSE_BAD_TOKEN",
    "CLOSE_FULL",
    "CLOSE_INTERNAL",
    "CLOSE_INVALID",
    "CLOSE_POLICY",
    "CLOSE_REMOVED",
    "CLOSE_REPLACED",
    "CLOSE_ROOM_CLOSED",
    "CLOSE_SEAT_LEFT",
    "CLOSE_SEAT_TO_BOT",
    "CLOSE_TOO_BIG",
    "CLOSE_TOO_SLOW",
    "CLOSE_TRY_AGAIN",
    "CLOSE_UNSUPPORTED",
    "ActionMessage",
    "ActionPayload",
    "AnyClientMessage",
    "BackMessage",
    "ChatMessage",
    "ClientMessage",
    "HelloMessage",
    "HintMessage",
    "KeepWatchingMessage",
    "NameMessage",
    "PingMessage",
    "ProtocolError",
    "SyncMessage",
    "parse_client_message",
    "to_engine_action",
]


CLOSE_UNSUPPORTED = 1003
"""A binary frame: the protocol is JSON text."""
CLOSE_INVALID = 1007
"""A frame that is not a JSON object of a known message type with valid fields."""
CLOSE_POLICY = 1008
"""Rate limit exceeded, or no ``hello`` first (or in time)."""
CLOSE_TOO_BIG = 1009
"""A frame over the size limit."""
CLOSE_INTERNAL = 1011
"""An unexpected server fault."""
CLOSE_TRY_AGAIN = 1013
"""Try again later (RFC 6455's registered code): the room is hosted by another server process, or
moved to one, or its ownership cannot be checked now (docs/cluster.md). The client reconnects."""
CLOSE_REPLACED = 4001
"""Another connection took this seat with the same token (or had taken it when an automatic
reconnect's ``hello`` came: ``resume``)."""
CLOSE_TOO_SLOW = 4002
"""The client did not read its messages fast enough (its send queue filled up)."""
CLOSE_ROOM_CLOSED = 4003
"""The room was closed by an admin or no longer exists."""
CLOSE_SEAT_LEFT = 4005
"""The seat's player left it before the start (from this or another window): the client forgets
the token and reconnects as a spectator."""
CLOSE_BAD_TOKEN = 4004
"""The ``hello``'s seat token opens no seat in this room (never did, or the seat was given to a bot):
the client forgets it. Its own code, so a client never drops a good token over a late ``hello``."""
CLOSE_REMOVED = 4006
"""The host removed this spectator from the room: the client does not reconnect by itself, and says
why (as a player whose seat the host gave to a bot, the person may open the room again to watch)."""
CLOSE_FULL = 4008
"""The room has as many spectators as it takes (``DOMENG_MAX_SPECTATORS``): the client says so
rather than "reconnecting", and tries again at a slower pace (a spectator may leave; a seat taken
over HTTP is never refused)."""
CLOSE_SEAT_TO_BOT = 4007
"""The host gave this seat to a bot: its token opens nothing now. The client does not reconnect by
itself, says why and offers to watch (a spectator's ``hello``); never "Play here", which a seat
taken by another window of the same person (`CLOSE_REPLACED`) offers."""


class ProtocolError(Exception):
    """A frame that breaks the protocol; ``close_code`` is what the socket closes with."""

    def __init__(self, close_code: int, reason: str) -> None:
        super().__init__(reason)
        self.close_code = close_code
        self.reason = reason


class _Message(BaseModel):
    # strict: a field of the wrong JSON type ("version": "1", "pass": 1) breaks the protocol (1007),
    # as docs/protocol.md says, instead of being converted
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class HelloMessage(_Message):
    """First frame: who is connecting. ``token`` is a seat token (None: watch as a spectator);
    ``host`` the room's host token when this browser holds it (the server learns the host is here);
    ``watcher`` a spectator's key, as an earlier ``welcome`` gave it (`app.rooms.watchers`);
    ``resume`` an automatic reconnect's: the ``connection`` its seat's last ``welcome`` gave
    (`app.rooms.presence.CONNECTION_PATTERN`), so that it does not take the seat from a window
    that said hello after it and is still open (closed with `CLOSE_REPLACED` instead); None: a
    fresh hello (a page load, "Play here"), which takes the seat.

    ``{"type": "hello", "protocol": 1, "token": "…", "since": 12, "host": "…", "watcher": "…",
    "resume": "9f3ac1d2e4b5a697"}``
    """

    type: Literal["hello"]
    protocol: Literal[1] = 1
    token: str | None = Field(None, max_length=128)
    since: int | None = Field(None, ge=0)
    host: str | None = Field(None, max_length=128)
    watcher: str | None = Field(None, pattern=KEY_PATTERN)
    resume: str | None = Field(None, pattern=CONNECTION_PATTERN)

    @field_validator("protocol", mode="before")
    @classmethod
    def _protocol_is_an_integer(cls, value: object) -> object:
        """Only the JSON integer 1 names version 1: strict mode still lets ``true`` and ``1.0``
        through a ``Literal[1]`` (they equal 1), which would break the protocol unseen (1007)."""
        if type(value) is not int:
            raise ValueError("the protocol version is the integer 1")
        return value


_PLAY_SHAPE = 'play is one tile ("3-6") or two lempas (["2-2", "5-5"])'
"""What a ``play`` of neither shape is told (rather than pydantic's message for its union)."""


class ActionPayload(_Message):
    """An action in RECORD.md notation, without the seat (the token says whose it is): exactly one
    of its four shapes, and nothing else (a field it does not take breaks the protocol, 1007,
    rather than being dropped).

    ``{"play": "3-6", "end": "R"}`` (``end`` may be left out), ``{"play": ["2-2", "5-5"]}`` (Kozel's
    two lempas, K4: no ``end``), ``{"pass": true}``, ``{"draw": true}`` (Kozel).
    """

    play: (
        Annotated[str, Field(max_length=8)]
        | Annotated[list[Annotated[str, Field(max_length=8)]], Field(min_length=2, max_length=2)]
        | None
    ) = None
    end: Literal["L", "R"] | None = None
    pass_: bool | None = Field(None, alias="pass")
    draw: bool | None = None

    @model_validator(mode="before")
    @classmethod
    def _one_shape(cls, value: object) -> object:
        """Only the keys of one shape, none of them null, and ``pass`` or ``draw`` the JSON
        ``true`` (strict mode lets ``1`` and ``1.0`` equal it elsewhere)."""
        if not isinstance(value, dict):
            return value  # not an object: the model's own error
        # the shapes (docs/protocol.md): a tile with or without its end, two lempas (a ``play``
        # list, no end), a pass, a draw; checked by size and keys, as every action message is
        size = len(value)
        play = "play" in value
        if play:
            shaped = size == 1 or (size == 2 and "end" in value)
        else:
            shaped = size == 1 and ("pass" in value or "draw" in value)
        if not shaped or None in value.values():  # JSON's null is the only None
            raise ValueError("an action is a play (with or without its end), a pass or a draw, alone")
        if play:
            tiles = value["play"]
            if isinstance(tiles, list):
                if len(tiles) != 2 or not all(isinstance(tile, str) for tile in tiles):
                    raise ValueError(_PLAY_SHAPE)
                if size == 2:
                    raise ValueError("a two-lempas play takes no end")
            elif not isinstance(tiles, str):
                raise ValueError(_PLAY_SHAPE)
            return value
        for kind, given in value.items():  # "pass" or "draw", alone
            if given is not True:
                raise ValueError(f"{kind} is true")
        return value


class ActionMessage(_Message):
    """Take an action at room ``version`` (the version of the last update the client saw).

    ``{"type": "action", "version": 17, "action": {"play": "3-6", "end": "R"}}``
    """

    type: Literal["action"]
    version: int = Field(ge=0)
    action: ActionPayload


class SyncMessage(_Message):
    """Ask for the full current state (after a gap in versions). ``{"type": "sync"}``"""

    type: Literal["sync"]


class BackMessage(_Message):
    """The player is back: take the seat back from the bot covering it. ``{"type": "back"}``"""

    type: Literal["back"]


class PingMessage(_Message):
    """Application-level keep-alive; answered with ``pong``. ``{"type": "ping"}``"""

    type: Literal["ping"]


class ChatMessage(_Message):
    """A chat line: a ``text`` (one line, at most 200 characters: the room checks it and answers
    ``chat_invalid``) or a quick ``reaction`` (one of `app.rooms.chat.REACTIONS`; the room checks).

    ``{"type": "chat", "text": "good game"}``, ``{"type": "chat", "reaction": "nice"}``
    """

    type: Literal["chat"]
    text: str | None = Field(None, max_length=1000)
    reaction: str | None = Field(None, max_length=16)


class HintMessage(_Message):
    """Ask for a hint on one's own turn, when the host allows hints: the hard bot's choice comes
    back as ``hint`` (to this seat), and everyone is told ``hint_used``. ``{"type": "hint"}``"""

    type: Literal["hint"]


class KeepWatchingMessage(_Message):
    """A spectator answers the room's "keep watching?" (`app.rooms.unattended`): while the room
    holds its next deal for an answer (``room.keep_watching``), it deals it; otherwise nothing
    happens. ``{"type": "keep_watching"}``"""

    type: Literal["keep_watching"]


class NameMessage(_Message):
    """A spectator's name in the chat, or null for none (named by its tag alone). The room checks
    it as a player's name (`app.rooms.names.check_name`) and answers ``named``, or an ``error``
    with the refused name's code; seats are named when they are claimed.

    ``{"type": "name", "name": "Dewi"}``, ``{"type": "name", "name": null}``
    """

    type: Literal["name"]
    name: str | None = Field(max_length=1024)


AnyClientMessage = (
    HelloMessage
    | ActionMessage
    | SyncMessage
    | BackMessage
    | PingMessage
    | ChatMessage
    | HintMessage
    | NameMessage
    | KeepWatchingMessage
)
ClientMessage = Annotated[AnyClientMessage, Field(discriminator="type")]
_ADAPTER: TypeAdapter[AnyClientMessage] = TypeAdapter(ClientMessage)


def parse_client_message(frame: str) -> AnyClientMessage:
    """Parse one text frame; raises `ProtocolError` (``CLOSE_INVALID``) for anything else."""
    try:
        return _ADAPTER.validate_json(frame)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        raise ProtocolError(CLOSE_INVALID, f"invalid message: {where} {first['msg']}"[:120]) from None


def to_engine_action(seat: int, payload: ActionPayload) -> Action:
    """The engine action for ``seat`` (via RECORD.md's `parse_action`); raises `EngineError`
    ``invalid_tile`` for a tile that is not one of the set (``"9-9"``): the payload's shape is
    `ActionPayload`'s to check. The same payload for the same seat gives the same (immutable)
    action, kept from the last time (`_engine_action`): a seat plays few different ones."""
    play = payload.play
    return _engine_action(
        seat, tuple(play) if isinstance(play, list) else play, payload.end, payload.pass_, payload.draw
    )


@functools.lru_cache(maxsize=1024)
def _engine_action(
    seat: int, play: str | tuple[str, ...] | None, end: str | None, pass_: bool | None, draw: bool | None
) -> Action:
    """`to_engine_action` of an `ActionPayload`'s fields (a two-lempas ``play`` as a tuple, to be
    a key), its record as ``model_dump(by_alias=True, exclude_none=True)`` gives it. An error is
    raised again each time (not kept)."""
    fields = {
        "play": list(play) if isinstance(play, tuple) else play,
        "end": end,
        "pass": pass_,
        "draw": draw,
    }
    record: dict[str, Any] = {key: value for key, value in fields.items() if value is not None}
    record["seat"] = seat
    return parse_action(record)
