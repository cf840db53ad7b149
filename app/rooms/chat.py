"""A room's chat: short texts and quick reactions among the people at the table (issue 14).

Chat is not game state: it never changes the room's version and carries only what people type.
Seated players chat; spectators read, and write only when the host allows it; the host can mute a
seat, or one spectator (by the public tag of `app.rooms.watchers`, which its lines carry; the
server knows each spectator connection's tag, so a client cannot speak as another or unmute
itself). A spectator may give a name (`name_spectator`), checked as a player's is and held on its
connection only: its lines carry it beside the tag, which still tells one spectator from another,
and the client shows it as a spectator's, never as a seat's. Each line is stored (with where the
play stood, for the admin) before it is sent to everyone; a connection that joins gets the rules
and the room's last `RECENT` lines. Each line belongs to its match (the admin reads a match's own
lines), but the conversation is the room's: after Play again (`app.rooms.again`) the table carries
on with the room's recent lines, each saying its match (the client marks where a match began), and
the host's rules carry over. The lines come from the store whenever the room is opened (a restart,
or the room moving to another process). Every function here runs inside the room's task
(`app.rooms.room.Room.call`).

A mute holds the person, not only the tag or the chair: the client address (`app.addresses
.counted_address`) of whom the host muted, as the room knows it then (the muted spectator's or
seat's connections, and the spectators heard since the room was loaded), is held too, as the room's
salted hash of it (`app.rooms.watchers.client_hash`, stored with the rules, never sent to any
client). A spectator from a held address is muted whatever its tag (a reload, a private window,
another tab), except the spectators already heard from that address before the mute (two people
behind one home router: the host heard the other one and muted only this one); and a person from a
held address who claims a seat brings the mute with them: the seat is muted (shown to everyone as
any seat mute is) until the host unmutes it. An address is held as long as a mute it came from is
(`MutedClient`): unmuting the spectator or the seat lets it go. A genuinely different person
(another address) claiming the muted seat ends that seat's mute, not the person's (`_handed_over`):
the person it held stays muted wherever they are, as a muted spectator (the tag of the key their
claim carried, or a new one), which the host's list names after the seat they left and the host
lifts as any spectator's mute."""

from __future__ import annotations

import copy
import secrets
import unicodedata
from collections import deque
from dataclasses import dataclass, field, replace
from typing import Any, Final

from app.rooms import frames
from app.rooms.errors import RoomError
from app.rooms.names import (
    BLANK_LOOKING,
    MAX_CLUSTER_CODE_POINTS,
    MAX_MARKS,
    check_name,
    emoji_format,
    graphemes,
    shows_nothing,
    stacked_marks,
)
from app.rooms.ports import ChatLineOut, Outbox
from app.rooms.room import Room
from app.rooms.seats import seat_at
from app.rooms.watchers import client_hash, is_tag, watcher_of

__all__ = [
    "MAX_BLANK_RUN",
    "MAX_MUTED_SPECTATORS",
    "MAX_SPEAKERS",
    "MAX_TEXT_CHARS",
    "REACTIONS",
    "RECENT",
    "SPARED_PER_ADDRESS",
    "ChatRoom",
    "MutedClient",
    "carry_on",
    "clean_text",
    "forget_seats",
    "name_spectator",
    "new_person",
    "refuse_removed",
    "remove",
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
SPARED_PER_ADDRESS: Final = 3
"""How many other spectators a removal or a mute spares at one client address it holds (two or
three people behind one home router: the household the lobby's 3 tables per address assume
too): those watching then first, then those heard in the chat, the latest first (`_spared`). A
spectator's key is whatever its browser sends (`app.rooms.watchers.KEY_PATTERN`), so one person
can hold as many as they like: sparing every key known from the address let the person removed
come back with one of their own other keys, once for each they had made heard beforehand (a
chat line each, up to `MAX_SPEAKERS`)."""
MAX_SPEAKERS: Final = 1000
"""Spectators heard (their tags, with their clients) a room remembers, to spare them from a mute of
another person at their address; past that the longest heard is forgotten."""


@dataclass
class MutedClient:
    """A client address a host's mute holds (by the room's hash of it, `app.rooms.watchers
    .client_hash`): the mutes it came from, ``by`` (``"tag:3fa9c1d2"`` a spectator's, ``"seat:2"`` a
    seat's: it is let go with the last of them), and the spectators' tags it ``spared``: those heard
    from that address before the mute, at most `SPARED_PER_ADDRESS` (`_spared`), and those the host
    unmuted while only this hold muted them (`set_rules`)."""

    by: set[str] = field(default_factory=set)
    spared: set[str] = field(default_factory=set)

    def copy(self) -> MutedClient:
        """A copy of its own: changing one's sets leaves the other's as they were."""
        return MutedClient(set(self.by), set(self.spared))

    def stored(self) -> dict[str, list[str]]:
        """As stored with the rules: ``{"by": ["tag:3fa9c1d2"], "spared": ["77aa01be"]}``."""
        return {"by": sorted(self.by), "spared": sorted(self.spared)}


@dataclass
class ChatRoom:
    """What a room keeps of its chat: the host's rules and the room's last `RECENT` lines (JSON, each
    with its ``match``), across its matches; the client addresses its mutes hold (``clients``, by the
    room's hash: stored, never sent); the spectators the host removed (`remove`: their tags,
    ``removed``, and their client hashes, ``removed_clients``, each with the tags it spared; stored,
    never sent); who each muted seat's person is (``seat_people``: seat to their name and the tag of
    the key their claim carried, None without one; stored, never sent) and the muted spectators who
    were a muted seat's person another took (``left``: tag to the seat's name, `_handed_over`; stored,
    sent to the host alone); and, in memory only, the spectators heard (``speakers``: tag to client
    hash, at most `MAX_SPEAKERS`) and whose client and key's tag claimed each seat
    (``seat_clients``, ``seat_tags``)."""

    spectators: bool = False
    muted: set[int] = field(default_factory=set)
    lines: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=RECENT))
    muted_spectators: set[str] = field(default_factory=set)
    clients: dict[str, MutedClient] = field(default_factory=dict)
    speakers: dict[str, str] = field(default_factory=dict)
    seat_clients: dict[int, str] = field(default_factory=dict)
    removed: set[str] = field(default_factory=set)
    removed_clients: dict[str, set[str]] = field(default_factory=dict)
    seat_people: dict[int, tuple[str, str | None]] = field(default_factory=dict)
    left: dict[str, str] = field(default_factory=dict)
    seat_tags: dict[int, str] = field(default_factory=dict)

    def carried(self) -> ChatRoom:
        """A copy for the room's next match (Play again, `carry_on`): every rule, mute and map its
        own (deep copies: a field added later is copied too), and the same recent ``lines``."""
        return replace(copy.deepcopy(replace(self, lines=deque())), lines=self.lines)

    def rules(self, host: bool = False) -> dict[str, Any]:
        """The rules as sent: ``{"spectators": bool, "muted": [seat, …], "muted_spectators": [tag,
        …]}`` (tags: `app.rooms.watchers`); to the host (``host``), with ``"left": {tag: name}``
        when a muted spectator is a muted seat's person another took (`_handed_over`), named after
        that seat."""
        rules: dict[str, Any] = {
            "spectators": self.spectators,
            "muted": sorted(self.muted),
            "muted_spectators": sorted(self.muted_spectators),
        }
        if host and self.left:
            rules["left"] = dict(sorted(self.left.items()))
        return rules

    def stored(self) -> dict[str, Any]:
        """The rules as stored: `rules`, and the client addresses held, when there are any
        (``"clients": {hash: MutedClient.stored(), …}``)."""
        rules = self.rules(host=True)
        if self.seat_people:
            rules["seat_people"] = {
                str(seat): {"name": name, "tag": tag}
                for seat, (name, tag) in sorted(self.seat_people.items())
            }
        if self.clients:
            rules["clients"] = {client: held.stored() for client, held in sorted(self.clients.items())}
        if self.removed:
            rules["removed"] = sorted(self.removed)
        if self.removed_clients:
            rules["removed_clients"] = {
                c: sorted(spared) for c, spared in sorted(self.removed_clients.items())
            }
        return rules

    def removes(self, client: str | None, tag: str) -> bool:
        """Whether the host's removal holds the spectator ``tag`` from client ``client`` (the hash of
        its address; None: not known): its tag was removed, or its address was and did not spare
        ``tag``."""
        spared = None if client is None else self.removed_clients.get(client)
        return tag in self.removed or (spared is not None and tag not in spared)

    def holds(self, client: str | None, tag: str | None) -> bool:
        """Whether a mute holds ``client`` (the hash of a connection's address; None: not known)
        for the spectator ``tag`` (None: a seat): its address is held and ``tag`` is not spared."""
        held = None if client is None else self.clients.get(client)
        return held is not None and (tag is None or tag not in held.spared)

    def mutes(self, conn: Outbox) -> bool:
        """Whether the host's mute holds connection ``conn``: its seat is muted, or (a spectator)
        its tag is, or its client address is held and did not spare its tag (`holds`)."""
        if conn.seat is not None:
            return conn.seat in self.muted
        return conn.watcher in self.muted_spectators or self.holds(conn.client, conn.watcher)

    def heard(self, tag: str, client: str) -> None:
        """The spectator ``tag`` chatted from ``client``."""
        self.speakers.pop(tag, None)
        self.speakers[tag] = client
        while len(self.speakers) > MAX_SPEAKERS:
            del self.speakers[next(iter(self.speakers))]


def _held_clients(stored: Any) -> dict[str, MutedClient]:
    """The ``clients`` of stored rules (`ChatRoom.stored`); what is not in that shape is dropped."""
    if not isinstance(stored, dict):
        return {}
    clients = {}
    for client, held in stored.items():
        if isinstance(held, dict):
            by = {str(b) for b in held.get("by", [])}
            if by:
                clients[str(client)] = MutedClient(by, {str(t) for t in held.get("spared", [])})
    return clients


def _seat_people(stored: Any) -> dict[int, tuple[str, str | None]]:
    """The ``seat_people`` of stored rules (`ChatRoom.stored`); what is not in that shape is dropped."""
    if not isinstance(stored, dict):
        return {}
    people: dict[int, tuple[str, str | None]] = {}
    for seat, person in stored.items():
        if isinstance(person, dict) and str(seat).isdigit():
            tag = person.get("tag")
            people[int(seat)] = (str(person.get("name") or ""), None if tag is None else str(tag))
    return people


async def _chat_of(room: Room) -> ChatRoom:
    if room.chat is None:
        rules, lines = await room.store.load_room_chat(room.match_id, RECENT)
        chat = ChatRoom()
        if rules:
            chat.spectators = bool(rules.get("spectators", False))
            chat.muted = {int(s) for s in rules.get("muted", [])}
            chat.muted_spectators = {str(t) for t in rules.get("muted_spectators", [])}
            chat.clients = _held_clients(rules.get("clients"))
            chat.removed = {str(t) for t in rules.get("removed", [])}
            removed_clients = rules.get("removed_clients")
            if isinstance(removed_clients, dict):
                chat.removed_clients = {
                    str(c): {str(t) for t in spared}
                    for c, spared in removed_clients.items()
                    if isinstance(spared, list)
                }
            chat.seat_people = _seat_people(rules.get("seat_people"))
            left = rules.get("left")
            if isinstance(left, dict):
                chat.left = {str(t): str(name) for t, name in left.items()}
        chat.lines.extend(line.to_json() for line in lines)
        room.chat = chat
    return room.chat


async def rules_of(room: Room) -> dict[str, Any]:
    """The room's chat rules now, as stored (`ChatRoom.stored`: never to be sent), loaded when the
    chat was not yet."""
    return (await _chat_of(room)).stored()


async def carry_on(room: Room) -> None:
    """The room began its next match (Play again): its chat keeps the host's rules (the addresses
    its mutes hold too, and the spectators the host removed, as `rules_of` stored them for the new
    match) and the room's recent lines (loaded first if the chat was not yet); the next lines say
    the new match."""
    room.chat = (await _chat_of(room)).carried()


def _log_frame(room: Room, chat: ChatRoom, conn: Outbox) -> str:
    rules, lines = chat.rules(host=conn in room.host_conns), list(chat.lines)
    return frames.dumps({"type": "chat_log", "rules": rules, "lines": lines, "you_muted": chat.mutes(conn)})


async def send_log(room: Room, conn: Outbox) -> None:
    """Send ``conn`` the chat's rules and recent lines (after it was admitted), and whether the
    host's mute holds it (``you_muted``, `ChatRoom.mutes`: its own state alone, which the rules'
    tags cannot tell a new window whose address is held)."""
    conn.send(_log_frame(room, await _chat_of(room), conn))


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


MAX_BLANK_RUN: Final = 2
"""The most blank-looking characters (`app.rooms.names.BLANK_LOOKING`: Hangul fillers, the Braille
blank), with the spaces between them, a chat line may hold in a row."""


def _blank_run(text: str) -> bool:
    """Whether ``text`` holds more than `MAX_BLANK_RUN` blank-looking characters and spaces in a row
    (one space alone between words is no run)."""
    run = 0
    for ch in text:
        run = run + 1 if ch in BLANK_LOOKING or ch == " " else 0
        if run > MAX_BLANK_RUN:
            return True
    return False


def clean_text(text: str) -> str:
    """``text`` trimmed, its runs of white space folded to one space (as a name's are: a browser
    folds runs of ASCII spaces by itself, but not of no-break or wide spaces, and a run of those
    lays the words after it out as a line of their own, with no name before them: a line that
    passes for another person's); raises `RoomError` (``chat_invalid``) when it is empty, longer than
    `MAX_TEXT_CHARS`, holds a control character, a line or paragraph separator (one line of text)
    or a lone surrogate, a bidirectional embedding, override or isolate (`_DIRECTION_CONTROLS`),
    another invisible format character (`_hidden`), more than
    `app.rooms.names.MAX_MARKS` combining marks on one character ("zalgo" towers spill over the
    lines around them), more than `app.rooms.names.MAX_CLUSTER_CODE_POINTS` code points in one
    (joiners cannot make one "character" of hundreds), or only characters that show nothing
    (`app.rooms.names.shows_nothing`: Hangul fillers, the Braille blank, marks, spaces; a name of
    them is refused too, ``name_blank``): a line under someone's name that says nothing, or a run
    of more than `MAX_BLANK_RUN` of them (which no browser folds) between words."""
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
    if all(map(shows_nothing, text)):
        raise RoomError("chat_invalid", "a chat message needs a visible character")
    text = " ".join(text.split())  # controls and separators were refused above: only spaces fold
    if _blank_run(text):
        raise RoomError("chat_invalid", "a chat message may not hold a run of blank characters")
    return text


async def say(room: Room, conn: Outbox, text: str | None, reaction: str | None) -> None:
    """``conn``'s chat line (a ``text`` or a ``reaction``): checked, stored, sent to everyone.
    Raises `RoomError`: ``chat_invalid`` (not exactly one of the two, an unknown reaction, a bad
    text), ``chat_not_allowed`` (a spectator while the host does not allow it), ``chat_muted`` (a
    muted seat, or a muted spectator: by its connection's tag, `app.rooms.ports.Outbox.watcher`, or
    by its client address, ``client``, which a mute holds unless it spared this spectator). The
    line goes under its seat's name, or a spectator's own (`name_spectator`; "" without one)."""
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
    if seat is None and (watcher in chat.muted_spectators or chat.holds(conn.client, watcher)):
        raise RoomError("chat_muted", "the host has muted this spectator")
    name = (conn.name if seat is None else room.seats[seat].name) or ""
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
    if watcher is not None and conn.client is not None:
        chat.heard(watcher, conn.client)
    shown = line.to_json()
    chat.lines.append(shown)
    message = frames.dumps({"type": "chat", "line": shown})
    for each in room.conns:
        each.send(message)


def name_spectator(room: Room, conn: Outbox, name: str | None) -> None:
    """Spectator ``conn`` of ``room`` takes ``name`` in the chat (None: none, named by its tag
    alone), checked as a seated player's (`app.rooms.names.check_name`: the same name as a seat's
    player is its own, shown as a spectator's); held on the connection for its next lines and told
    to it alone: ``{"type": "named", "name": "Dewi"}``; the host's list of spectators shows it
    (`app.rooms.presence.Presence.send_spectators`). Raises `RoomError`: ``not_spectator`` (a seat is named
    when it is claimed), a refused name (``name_empty``, ``name_too_long``, ..., ``name_marked``);
    the name it held before stays."""
    if conn.seat is not None:
        raise RoomError("not_spectator", "a seat's name is the one it was claimed under")
    before, conn.name = conn.name, None if name is None else check_name(name)
    conn.send(frames.dumps({"type": "named", "name": conn.name}))
    if conn.name != before:
        room.send_spectators()


async def new_person(room: Room, seat: int, address: str | None = None, key: str | None = None) -> None:
    """A person just claimed ``seat`` from client ``address`` (`app.addresses.counted_address`;
    None: not known), with the spectator ``key`` their browser held (`app.rooms.watchers`; None:
    none). A person a mute holds (their tag is muted, or their address is held and did not spare
    their tag) brings the mute with them: the seat is muted until the host unmutes it. Anyone else
    starts unmuted: a seat's mute is on the person the host heard, not on the chair, and ends for
    the seat when a genuinely different person takes it, while the person it held stays muted
    (`_handed_over`). Stored and sent to everyone when the seat's mute changes; nothing otherwise."""
    chat = await _chat_of(room)
    client = None if not address else client_hash(room.host_token_hash, address)
    tag = None if key is None else watcher_of(room.host_token_hash, room.code, key)[1]
    for known, value in ((chat.seat_clients, client), (chat.seat_tags, tag)):
        if value is None:
            known.pop(seat, None)
        else:
            known[seat] = value
    if tag in chat.muted_spectators or chat.holds(client, tag):
        await set_rules(room, None, {seat: True})
    elif seat in chat.muted:
        await _adopt(room, _handed_over(chat, seat))


def _handed_over(chat: ChatRoom, seat: int) -> ChatRoom:
    """A different person took muted ``seat``: its mute ends, but not on the person it held, who
    stays muted wherever they are until the host lifts it. That person becomes a muted spectator
    (the tag of the key their claim carried, `ChatRoom.seat_people`; without one, a new tag nobody
    holds a key to), and the client addresses the seat's mute held are held for that tag instead
    (sparing it no more); the host's rules name it after the seat (``left``), so the host sees and
    can unmute it as any spectator. With neither a tag nor an address known, nothing holds the
    person: the mute just ends. The chat's new rules (neither stored nor sent: `_adopt` them)."""
    name, tag = chat.seat_people.get(seat, ("", None))
    by = f"seat:{seat}"
    clients = {client: held.copy() for client, held in chat.clients.items()}
    holding = [held for held in clients.values() if by in held.by]
    if tag is None and holding:
        taken = chat.muted_spectators | set(chat.left)
        tag = next(t for t in iter(lambda: secrets.token_hex(4), None) if t not in taken)
    for held in holding:
        held.by.discard(by)
        if tag is not None:
            held.by.add(f"tag:{tag}")
            held.spared.discard(tag)
    for client in [client for client, held in clients.items() if not held.by]:
        del clients[client]
    muted_spectators, left = set(chat.muted_spectators), dict(chat.left)
    if tag is not None:
        muted_spectators.add(tag)
        left[tag] = name
    people = {s: person for s, person in chat.seat_people.items() if s != seat}
    return replace(
        chat,
        muted=chat.muted - {seat},
        muted_spectators=muted_spectators,
        clients=clients,
        seat_people=people,
        left=left,
    )


def _clients_of(room: Room, chat: ChatRoom, who: int | str) -> set[str]:
    """The clients (hashes) the room knows of seat ``who`` (an int) or spectator tag ``who``: its
    connections', the seat claimer's, the spectator's heard lines'."""
    if isinstance(who, int):
        if room.seats[who].kind != "human":  # a bot's or an empty seat: nobody to hold
            return set()
        found = {c.client for c in room.conns if c.seat == who and c.client is not None}
        claimed = chat.seat_clients.get(who)
    else:
        found = {c.client for c in room.conns if c.seat is None and c.watcher == who and c.client is not None}
        claimed = chat.speakers.get(who)
    return found if claimed is None else found | {claimed}


def _spared(room: Room, chat: ChatRoom, client: str, held: int | str, watching: bool) -> set[str]:
    """The spectators a new hold of client ``client`` (its hash) for ``held`` (a seat, or a
    spectator's tag) spares: at most `SPARED_PER_ADDRESS` of the other spectators known from that
    address, with ``watching`` those watching now first (sockets open, those there longest first;
    the host's own left out: they are never held), then those heard in the chat, the latest first."""
    now = [
        c.watcher
        for c in room.arrivals  # in the order they came: those watching longest first
        if watching
        and c.seat is None
        and c.client == client
        and c.watcher is not None
        and c not in room.host_conns
    ]
    heard = [tag for tag in reversed(chat.speakers) if chat.speakers[tag] == client]
    known = [tag for tag in dict.fromkeys([*now, *heard]) if tag != str(held)]
    return set(known[:SPARED_PER_ADDRESS])


def _hold(room: Room, chat: ChatRoom, clients: dict[str, MutedClient], who: int | str, on: bool) -> None:
    """Hold (``on``) or let go the client addresses of the mute of ``who`` (a seat, or a spectator's
    tag) in ``clients``: a new hold spares the other spectators heard from that address."""
    by = f"seat:{who}" if isinstance(who, int) else f"tag:{who}"
    if not on:
        for client in list(clients):
            clients[client].by.discard(by)
            if not clients[client].by:
                del clients[client]
        return
    for client in _clients_of(room, chat, who):
        held = clients.get(client)
        if held is None:
            held = clients[client] = MutedClient(set(), _spared(room, chat, client, who, watching=False))
        held.by.add(by)
        held.spared.discard(str(who))
        if isinstance(who, int):  # the seat's person's own spectator key is theirs: never spared
            held.spared.discard(chat.seat_tags.get(who, ""))


async def set_rules(
    room: Room,
    spectators: bool | None,
    muted: dict[int, bool],
    muted_spectators: dict[str, bool] | None = None,
) -> dict[str, Any]:
    """The host's chat rules: whether spectators may write, seats muted or unmuted, and spectators
    muted or unmuted by their tags (`app.rooms.watchers`; ``{"3fa9c1d2": true}``), each mute with
    the client addresses of whom it mutes (`_hold`); stored, then sent to everyone (without the
    addresses). Returns the rules (`ChatRoom.rules`). Raises `RoomError`: ``no_such_seat`` (404),
    ``bad_spectator`` (not a tag), ``too_many_muted`` (past `MAX_MUTED_SPECTATORS`)."""
    chat = await _chat_of(room)
    for seat in muted:
        seat_at(room.seats, seat)
    watchers = muted_spectators or {}
    for tag in watchers:
        if not is_tag(tag):
            raise RoomError("bad_spectator", f"{tag!r} is not a spectator's tag", 422)
    held = {t for t in chat.muted_spectators if watchers.get(t, True)} | {
        t for t, on in watchers.items() if on
    }
    if len(held) > MAX_MUTED_SPECTATORS:
        raise RoomError("too_many_muted", f"at most {MAX_MUTED_SPECTATORS} spectators muted at once")
    clients = {client: held.copy() for client, held in chat.clients.items()}
    changes: list[tuple[int | str, bool]] = [*muted.items(), *watchers.items()]
    for who, on in changes:
        _hold(room, chat, clients, who, on)
    for tag in [t for t, on in watchers.items() if not on and t not in chat.muted_spectators]:
        # a spectator muted only by another mute's hold on its address (the seat its person left,
        # `_handed_over`; the host's list shows it muted, `Presence.spectators_public`), unmuted by
        # the host: those addresses spare it, or the host's Unmute would change nothing. (A tag
        # muted itself is let go as before: another mute's hold on its address stays.)
        for client in _clients_of(room, chat, tag) & clients.keys():
            clients[client].spared.add(tag)
    people = {s: person for s, person in chat.seat_people.items() if muted.get(s, True)}
    for seat, on in muted.items():
        if on and room.seats[seat].kind == "human":
            people[seat] = (room.seats[seat].name or "", chat.seat_tags.get(seat))
    new = replace(
        chat,
        spectators=chat.spectators if spectators is None else spectators,
        muted={s for s in chat.muted if muted.get(s, True)} | {s for s, on in muted.items() if on},
        muted_spectators=held,
        clients=clients,
        seat_people=people,
        left={t: name for t, name in chat.left.items() if t in held},
    )
    await _adopt(room, new)
    return new.rules(host=True)


async def forget_seats(room: Room, count: int) -> None:
    """The table now has ``count`` seats (the host's seat count, `app.rooms.host.set_options`): the
    mutes of the seats past it end, and so does what the room knew of who claimed them; as when
    another person takes a muted seat (`_handed_over`), the person each such mute held stays
    muted, as a spectator the host sees (``left``) and can unmute. Otherwise those mutes would be
    listed in the rules for seats the table no longer has, which the host can neither see nor
    lift (``no_such_seat``). Stored and sent to everyone (`chat_rules`) only when a mute ended."""
    chat = await _chat_of(room)
    for known in (chat.seat_clients, chat.seat_tags):
        for seat in [s for s in known if s >= count]:
            del known[seat]
    gone = sorted(seat for seat in chat.muted if seat >= count)
    if not gone:
        return
    for seat in gone:
        chat = _handed_over(chat, seat)
    await _adopt(room, chat)


async def _adopt(room: Room, new: ChatRoom) -> None:
    """Store the chat's new rules, adopt them and send every connection its own `chat_rules` (the
    host's with what only the host sees, `ChatRoom.rules`)."""
    await room.store.set_chat_rules(room.match_id, new.stored())
    room.chat = new
    told = {
        (on, host): frames.dumps({"type": "chat_rules", "rules": new.rules(host), "you_muted": on})
        for on in (False, True)
        for host in (False, True)
    }
    for each in room.conns:
        each.send(told[new.mutes(each), each in room.host_conns])
    room.send_spectators()  # which of those watching the mutes hold (`Presence.spectators_public`)


async def remove(room: Room, tag: str) -> None:
    """The host removed the spectator ``tag`` (`app.rooms.host.remove_spectator`): held for the rest
    of the room's match, and carried to the next after Play again as a mute is (`carry_on`), by its
    tag and by the client addresses the room knows of it (its sockets', its heard lines'), each
    sparing at most `SPARED_PER_ADDRESS` other spectators known from that address (watching now
    first, then heard in the chat: two people behind one home router, `_spared`), as a mute's do
    (`ChatRoom.holds`); an address already held keeps the ones it spared, less this one. Stored
    with the rules (never sent); `refuse_removed` turns its next sockets away."""
    chat = await _chat_of(room)
    removed_clients = {client: set(spared) for client, spared in chat.removed_clients.items()}
    for client in _clients_of(room, chat, tag):
        spared = removed_clients.get(client)
        if spared is None:
            spared = _spared(room, chat, client, tag, watching=True)
        spared.discard(tag)
        removed_clients[client] = spared
    new = replace(chat, removed=chat.removed | {tag}, removed_clients=removed_clients)
    await room.store.set_chat_rules(room.match_id, new.stored())
    room.chat = new


async def refuse_removed(
    room: Room, token: str | None, host: bool, key: str | None, address: str | None
) -> None:
    """Refuse a spectator's new socket (no seat ``token``; not the host's, ``host``) whose key
    (``key``, the tag it makes: `app.rooms.watchers`) or client ``address``
    (`app.addresses.counted_address`; None: not known) the host's removal holds (`ChatRoom.removes`):
    raises `RoomError` ``spectator_removed`` (403; its socket closes with 4006)."""
    if token is not None or host:
        return
    chat = await _chat_of(room)
    if not chat.removed and not chat.removed_clients:
        return
    tag = watcher_of(room.host_token_hash, room.code, key)[1]
    client = None if not address else client_hash(room.host_token_hash, address)
    if chat.removes(client, tag):
        raise RoomError("spectator_removed", "the host removed you from this room", 403)
