"""A room's chat: short texts and quick reactions among the people at the table (issue 14).

Chat is not game state: it never changes the room's version and carries only what people type.
Seated players chat; spectators read, and write only when the host allows it; the host can mute a
seat, or one spectator (by the public tag of `app.rooms.watchers`, which its lines carry; the
server knows each spectator connection's tag, so a client cannot speak as another or unmute
itself). Each line is stored (with where the play stood, for the admin) before it is sent to everyone;
a connection that joins gets the rules and the room's last `RECENT` lines. Each line belongs to its
match (the admin reads a match's own lines), but the conversation is the room's: after Play again
(`app.rooms.again`) the table carries on with the room's recent lines, each saying its match (the
client marks where a match began), and the host's rules carry over. The lines come from the store
whenever the room is opened (a restart, or the room moving to another process). Every function here
runs inside the room's task (`app.rooms.room.Room.call`)."""

from __future__ import annotations

import unicodedata
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Final

from app.rooms import frames
from app.rooms.errors import RoomError
from app.rooms.names import MAX_CLUSTER_CODE_POINTS, MAX_MARKS, emoji_format, graphemes, stacked_marks
from app.rooms.ports import ChatLineOut, Outbox
from app.rooms.room import Room
from app.rooms.watchers import is_tag

__all__ = [
    "MAX_MUTED_SPECTATORS",
    "MAX_TEXT_CHARS",
    "REACTIONS",
    "RECENT",
    "ChatRoom",
    "carry_on",
    "clean_text",
    "new_person",
    "rules_of",
    "say",
    "send_log",
    "set_rules",
]

REACTIONS: Final = ("nice", "oops", "hurry", "well_played", "hello", "thanks")
"""The quick reactions (the client words each in the player's language)."""
MAX_TEXT_CHARS: Final = 200
"""The longest chat text, in characters (code points) after trimming."""
MAX_MUTED_SPECTATORS: Final = 100
"""Spectators the host may hold muted at once (the room's spectators are at most
``DOMENG_MAX_SPECTATORS``, 100 by default)."""
RECENT: Final = 50
"""The room's lines a joining connection is sent, across its matches (the admin reads them all)."""


@dataclass
class ChatRoom:
    """What a room keeps of its chat: the host's rules and the room's last `RECENT` lines (JSON, each
    with its ``match``), across its matches."""

    spectators: bool = False
    muted: set[int] = field(default_factory=set)
    lines: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=RECENT))
    muted_spectators: set[str] = field(default_factory=set)

    def rules(self) -> dict[str, Any]:
        """The rules as stored and sent: ``{"spectators": bool, "muted": [seat, …],
        "muted_spectators": [tag, …]}`` (tags: `app.rooms.watchers`)."""
        return {
            "spectators": self.spectators,
            "muted": sorted(self.muted),
            "muted_spectators": sorted(self.muted_spectators),
        }


async def _chat_of(room: Room) -> ChatRoom:
    if room.chat is None:
        rules, lines = await room.store.load_room_chat(room.match_id, RECENT)
        chat = ChatRoom()
        if rules:
            chat.spectators = bool(rules.get("spectators", False))
            chat.muted = {int(s) for s in rules.get("muted", [])}
            chat.muted_spectators = {str(t) for t in rules.get("muted_spectators", [])}
        chat.lines.extend(line.to_json() for line in lines)
        room.chat = chat
    return room.chat


async def rules_of(room: Room) -> dict[str, Any]:
    """The room's chat rules now (`ChatRoom.rules`), loaded when the chat was not yet."""
    return (await _chat_of(room)).rules()


async def carry_on(room: Room) -> None:
    """The room began its next match (Play again): its chat keeps the host's rules and the room's
    recent lines (loaded first if the chat was not yet); the next lines say the new match."""
    chat = await _chat_of(room)
    room.chat = ChatRoom(chat.spectators, set(chat.muted), chat.lines, set(chat.muted_spectators))


def _log_frame(chat: ChatRoom) -> str:
    return frames.dumps({"type": "chat_log", "rules": chat.rules(), "lines": list(chat.lines)})


async def send_log(room: Room, conn: Outbox) -> None:
    """Send ``conn`` the chat's rules and recent lines (after it was admitted)."""
    conn.send(_log_frame(await _chat_of(room)))


_DIRECTION_CONTROLS: Final = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""Bidirectional embeddings, overrides and isolates: they turn the text around them ("\u202egood"
shows as "doog"), and the other lines and names with it where a client does not isolate them."""


_TYPED_FORMAT: Final = frozenset("\u200c\u200e\u200f\u061c\u00ad")
"""Invisible format characters people's keyboards type in running text, kept: the zero-width
non-joiner (Persian, Indic scripts), the left-to-right, right-to-left and Arabic letter marks (each
acts as one letter of its direction, within the line, which the client isolates) and the soft
hyphen."""


def _hidden(cluster: str) -> bool:
    """Whether a user-perceived character of a chat line holds an invisible format character (Cf)
    other than `_TYPED_FORMAT` and an emoji's joiner and tags (as a name may: `app.rooms.names`):
    zero-width spaces, byte order marks, word joiners, interlinear annotations, stray tags."""
    kept = _TYPED_FORMAT | emoji_format(cluster)
    return any(unicodedata.category(ch) == "Cf" and ch not in kept for ch in cluster)


def clean_text(text: str) -> str:
    """``text`` trimmed; raises `RoomError` (``chat_invalid``) when it is empty, longer than
    `MAX_TEXT_CHARS`, holds a control character, a line or paragraph separator (one line of text)
    or a lone surrogate, a bidirectional embedding, override or isolate (`_DIRECTION_CONTROLS`),
    another invisible format character (`_hidden`), more than
    `app.rooms.names.MAX_MARKS` combining marks on one character ("zalgo" towers spill over the
    lines around them) or more than `app.rooms.names.MAX_CLUSTER_CODE_POINTS` code points in one
    (joiners cannot make one "character" of hundreds)."""
    text = text.strip()
    if not text:
        raise RoomError("chat_invalid", "a chat message needs some text")
    if len(text) > MAX_TEXT_CHARS:
        raise RoomError("chat_invalid", f"a chat message is at most {MAX_TEXT_CHARS} characters")
    if any(unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp") for ch in text):
        raise RoomError("chat_invalid", "a chat message is one line of text")
    if any(ch in _DIRECTION_CONTROLS for ch in text):
        raise RoomError("chat_invalid", "a chat message may not turn the direction of the text")
    if stacked_marks(text) > MAX_MARKS:
        raise RoomError("chat_invalid", f"at most {MAX_MARKS} accents on one character")
    clusters = graphemes(text)
    if any(len(cluster) > MAX_CLUSTER_CODE_POINTS for cluster in clusters):
        raise RoomError("chat_invalid", f"at most {MAX_CLUSTER_CODE_POINTS} code points in one character")
    if any(map(_hidden, clusters)):
        raise RoomError("chat_invalid", "a chat message may not hold invisible characters")
    return text


async def say(room: Room, conn: Outbox, text: str | None, reaction: str | None) -> None:
    """``conn``'s chat line (a ``text`` or a ``reaction``): checked, stored, sent to everyone.
    Raises `RoomError`: ``chat_invalid`` (not exactly one of the two, an unknown reaction, a bad
    text), ``chat_not_allowed`` (a spectator while the host does not allow it), ``chat_muted`` (a
    muted seat, or a muted spectator: by its connection's tag, `app.rooms.ports.Outbox.watcher`)."""
    chat = await _chat_of(room)
    if (text is None) == (reaction is None):
        raise RoomError("chat_invalid", "a chat line is a text or a reaction")
    if reaction is not None and reaction not in REACTIONS:
        raise RoomError("chat_invalid", f"a reaction is one of {', '.join(REACTIONS)}")
    if text is not None:
        text = clean_text(text)
    seat = conn.seat
    if seat is None and not chat.spectators:
        raise RoomError("chat_not_allowed", "spectators read the chat; the host has not let them write")
    if seat is not None and seat in chat.muted:
        raise RoomError("chat_muted", "the host has muted this seat")
    watcher = None if seat is not None else conn.watcher
    if seat is None and watcher in chat.muted_spectators:
        raise RoomError("chat_muted", "the host has muted this spectator")
    name = "" if seat is None else room.seats[seat].name or ""
    state = room.state
    line: ChatLineOut = await room.store.add_chat(
        room.match_id,
        seat,
        name,
        text=text,
        reaction=reaction,
        round_index=0 if state is None else max(0, state.round_index - 1),
        seq=0 if state is None else len(state.actions),
        watcher=watcher,
        room_match=room.room_match,
    )
    shown = line.to_json()
    chat.lines.append(shown)
    message = frames.dumps({"type": "chat", "line": shown})
    for each in room.conns:
        each.send(message)


async def new_person(room: Room, seat: int) -> None:
    """A person just claimed ``seat``: they start unmuted (a mute is on the person the host heard,
    not on the chair; a muted person who leaves and claims again can be muted again). Stored and
    sent to everyone when the seat was muted; nothing otherwise."""
    chat = await _chat_of(room)
    if seat in chat.muted:
        await set_rules(room, None, {seat: False})


async def set_rules(
    room: Room,
    spectators: bool | None,
    muted: dict[int, bool],
    muted_spectators: dict[str, bool] | None = None,
) -> dict[str, Any]:
    """The host's chat rules: whether spectators may write, seats muted or unmuted, and spectators
    muted or unmuted by their tags (`app.rooms.watchers`; ``{"3fa9c1d2": true}``); stored, then
    sent to everyone. Returns the rules. Raises `RoomError`: ``bad_seat``, ``bad_spectator`` (not
    a tag), ``too_many_muted`` (past `MAX_MUTED_SPECTATORS`)."""
    chat = await _chat_of(room)
    for seat in muted:
        if not 0 <= seat < len(room.seats):
            raise RoomError("bad_seat", f"no seat {seat} at this table")
    watchers = muted_spectators or {}
    for tag in watchers:
        if not is_tag(tag):
            raise RoomError("bad_spectator", f"{tag!r} is not a spectator's tag", 422)
    held = {t for t in chat.muted_spectators if watchers.get(t, True)} | {
        t for t, on in watchers.items() if on
    }
    if len(held) > MAX_MUTED_SPECTATORS:
        raise RoomError("too_many_muted", f"at most {MAX_MUTED_SPECTATORS} spectators muted at once")
    new = ChatRoom(
        spectators=chat.spectators if spectators is None else spectators,
        muted={s for s in chat.muted if muted.get(s, True)} | {s for s, on in muted.items() if on},
        lines=chat.lines,
        muted_spectators=held,
    )
    await room.store.set_chat_rules(room.match_id, new.rules())
    room.chat = new
    message = frames.dumps({"type": "chat_rules", "rules": new.rules()})
    for each in room.conns:
        each.send(message)
    return new.rules()
