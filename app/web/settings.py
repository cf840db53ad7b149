"""Server configuration from flags or ``DOMENG_*`` environment variables (pydantic-settings)."""

from __future__ import annotations

import importlib.util
import ipaddress
import os
import re
from pathlib import Path
from typing import Annotated, Final, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.web.models import playable_timer
from engine.review import DEFAULT_SAMPLES

_DEFAULT_LOOP: Final = "uvloop" if importlib.util.find_spec("uvloop") is not None else "asyncio"
"""`Settings.loop`'s default."""

__all__ = [
    "LOOPBACK_HOSTS",
    "WELL_KNOWN",
    "Settings",
    "check_admin_secret",
    "check_host_pattern",
    "is_loopback",
]

LOOPBACK_HOSTS: Final = ("localhost", "127.0.0.1", "[::1]")
"""The ``Host`` names of this machine itself, any port, that the server always answers to
(`Settings.allowed_hosts`): what the quick start's browser, a health check or ``curl`` on the
host send; a page on another domain that resolves to 127.0.0.1 sends its own name instead."""


_HOST_PATTERN: Final = re.compile(r"\*|(\*\.)?[A-Za-z0-9_.-]+|\[[0-9A-Fa-f:.]+\]")
"""A name of `Settings.allowed_hosts`: ``*``, a host name or IPv4 address, ``*.`` and a domain,
or an IPv6 address in brackets; no scheme, port or path."""


def check_host_pattern(name: str) -> None:
    """Raise ValueError naming ``name`` unless it is a `_HOST_PATTERN` (an empty one, of a list
    with a trailing comma, is let go): ``play.example:8443`` or ``https://play.example`` would
    never match a Host (TrustedHostMiddleware compares names without their ports)."""
    if name and not _HOST_PATTERN.fullmatch(name):
        raise ValueError(
            f"DOMENG_ALLOWED_HOSTS: {name[:60]!r} is not a host name; name hosts without a scheme,"
            " port or path (play.example, *.example, 192.0.2.7, [2001:db8::7]), separated by commas"
        )


def is_loopback(host: str) -> bool:
    """Whether the address to listen on ``host`` is a loopback one (``127.0.0.1``, any of
    127.0.0.0/8, ``::1``, ``localhost``): only this machine reaches the server.

    >>> is_loopback("127.0.0.1"), is_loopback("::1"), is_loopback("0.0.0.0"), is_loopback("192.0.2.7")
    (True, True, False, False)
    """
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


WELL_KNOWN: Final = (
    "changeme",
    "password",
    "passw0rd",
    "secret",
    "letmein",
    "qwerty",
    "admin",
    "domeng",
    "example",
    "default",
    "0123456789",
    "123456",
    "abcdef",
)
"""Parts of well-known or guessable secrets: an admin secret holding one (any case) is refused."""


def check_admin_secret(secret: str) -> None:
    """Raise ValueError, with a message that never contains ``secret``, unless it is 16
    characters or more with 10 distinct and holds no `WELL_KNOWN` part (any case)."""
    advice = "e.g. openssl rand -hex 32"
    if len(secret) < 16:
        raise ValueError(f"the admin secret is too weak: use 16 characters or more ({advice})")
    if len(set(secret)) < 10:
        raise ValueError(f"the admin secret is too weak: too few distinct characters ({advice})")
    folded = secret.casefold()
    if any(word in folded for word in WELL_KNOWN):
        raise ValueError(f"the admin secret is too weak: it holds a well-known word or sequence ({advice})")


class Settings(BaseSettings):
    """Everything ``domeng serve`` can be told; each field reads ``DOMENG_<NAME>`` too.

    ``admin_token`` has no default: without it the admin area is disabled. Times are seconds.
    """

    # hide_input_in_errors: a refused value (the admin secret) is never echoed in the error
    model_config = SettingsConfigDict(env_prefix="DOMENG_", extra="ignore", hide_input_in_errors=True)

    host: str = "127.0.0.1"
    port: Annotated[int, Field(ge=0, le=65535)] = 8000
    data_dir: Path = Path("data")
    database_url: str | None = None
    """SQLAlchemy async URL; default SQLite (WAL) at ``data_dir/domeng.sqlite3``."""
    migrate: bool = True
    """Whether the server brings its database's schema up to date when it starts (Alembic
    ``upgrade head``). Set ``DOMENG_MIGRATE=false`` on replicas when ``domeng migrate`` runs once
    before they start (docker-compose.yml's ``migrate`` service). Such a server does not check
    the schema: start it only on a migrated database."""
    redis_url: str | None = None
    """Redis (``redis://host:6379/0``) shared by several server processes on one PostgreSQL
    database: each room is hosted by one process at a time, under a lease (docs/cluster.md).
    None (the default): one process, and Redis is never imported. Never logged."""
    redis_prefix: Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")] = "domeng"
    """The first part of every Redis key and channel (docs/cluster.md): processes sharing rooms use
    the same; another deployment on the same Redis uses another."""
    lease_s: Annotated[float, Field(gt=0, le=300)] = 5.0
    """Seconds a room's ownership lease lasts (renewed every third of it): a process that has not
    renewed it for this long lets the room go, and another takes it over (docs/cluster.md). Behind
    deploy/nginx.conf keep it below the sockets' read timeout there (15 s): a handshake passed on
    from a hung process then finds the room free (docs/deploy.md, "A process that hangs")."""
    room_handoff: bool = True
    """With several processes (docs/cluster.md, "Handoff"): a process that gets a socket or an HTTP
    call of a room hosted elsewhere asks the owner to hand the room over, which it does when no
    socket of its own is in the room; behind nginx's hashing of room codes a room then lives where
    its clients arrive, and is not relayed. False: such rooms stay relayed to their owner."""
    relay_beat_s: Annotated[float, Field(gt=0, le=60)] = 1.0
    """Seconds between the heartbeats of a socket relayed to its room's owner (docs/cluster.md):
    the owner drops a relayed connection, and the relay closes its socket (``room_moved``), after
    three without a word from the other side."""
    admin_token: SecretStr | None = None
    """The admin secret (16 characters or more, 10 distinct, no well-known word: `check_admin_secret`);
    None or empty: admin area disabled (docs/admin.md). Prefer ``admin_token_file``: a command line
    is visible to every local user."""
    admin_token_file: Path | None = None
    """A file holding the admin secret (``DOMENG_ADMIN_TOKEN_FILE``; surrounding whitespace is
    ignored), read at start-up when ``admin_token`` is not given (a Docker secret, say)."""
    admin_session_ttl_s: Annotated[float, Field(gt=0)] = 8 * 3600.0
    """How long an admin session (its cookie) lasts after logging in."""
    admin_login_limit: str = "5 per minute"
    """Failed admin logins one client address (an IPv6 client: its /64 network) or one known device may
    make (a `limits` expression); over it: 429. With ``redis_url``: counted across every process."""
    admin_login_limit_all: str = "30 per minute"
    """Failed admin logins all addresses together may make (a `limits` expression): many addresses
    guessing at once are slowed down too; over it every login answers 429 for the rest of the
    window (sessions already signed in go on). With ``redis_url``: counted across every process."""
    admin_export_limit: Annotated[int, Field(ge=1, le=10_000)] = 1000
    """The most matches one bulk export of the admin's list holds (`app.admin.routes.export_matches`,
    built in memory): more is a 422 ``too_many_matches``, and the list offers no export then."""
    abandoned_after_s: Annotated[float, Field(gt=0)] = 24 * 3600.0
    """An unfinished match nobody has used for this long (nobody connected, nothing stored) is
    closed: stored ``abandoned`` (reason ``idle``), its history kept (docs/admin.md)."""
    unplayed_kept_s: Annotated[float, Field(ge=0)] = 7 * 24 * 3600.0
    """A match closed (``abandoned``) before its first deal, a room created and left, is deleted
    with its seats and chat this long after it was closed (0: kept for ever); a match with a
    round is never deleted (docs/admin.md)."""
    room_unload_after_s: Annotated[float, Field(gt=0)] = 300.0
    """A room nobody is connected to and that has done nothing for this long leaves memory (a
    finished match, a room nobody joined, a table everybody left); its link loads it again."""
    public_url: str | None = None
    """The base URL of share links, e.g. ``https://domeng.example``; without it links are relative
    (``/r/CODE``) and the browser completes them (never from a request's Host header)."""
    max_rooms: Annotated[int, Field(ge=1)] = 5000
    """Rooms one process holds in memory at most (idle ones leave it); at the cap, creating or
    loading one more first unloads the room idle longest, and answers 503 ``server_full`` when
    every room is in use."""
    max_rooms_per_address: Annotated[int, Field(ge=0)] = 20
    """Unfinished rooms in memory one client address may have created (0: no limit); one more,
    created or loaded again, answers 429 ``too_many_open_rooms``. With ``redis_url``: in every
    process's memory."""
    read_limit: str = "240 per minute"
    """Public reads one client address (an IPv6 client: its /64) may make (a `limits` expression; with
    ``redis_url``: counted across every process): the lobby's open tables and "Your tables", a room, the
    room defaults, a round's review, a deal's check, and a room socket's look-up of a room not in memory
    (`app.edge.endpoint.room_socket`: ~170 made-up codes a second from one address made another table's
    moves 3.5 times slower). Over it: 429 ``too_many_reads`` with ``Retry-After`` (a socket: closed with
    1008). A lobby polls the open tables every 4 s (15 a minute) and reads the rest once when it opens, a
    room page reads its room once: 240 lets a dozen lobbies left open behind one address (a home, a café,
    a school's NAT) and their page loads through, while a flood from one address (238 reads a second,
    measured) gets 4 a second answered, the rest refused before any work."""
    socket_limit: str = "240 per minute"
    """Room sockets one client address (an IPv6 client: its /64) may open (a `limits` moving window;
    with ``redis_url``: counted across every process), every room's, in memory or not, counted before
    the room is looked up; past it a socket is closed with 1008 (the client tries again after its
    backoff). A page opens one socket, and a dropped one is opened again after 0.25, 0.5, 1, 2, then
    every 3 s: 240 lets a dozen players behind one address (a home, a café, a school's NAT) through a
    minute of reloads and reconnects. Without it one client reopening a seat's socket as fast as it
    could (about 200 a second from one Python process, measured) made the room send each of its
    sockets two presence frames per socket: with 90 spectators, 120 frames and 3 ms of the server's
    event loop per socket opened, every room of the process waiting meanwhile."""
    chat_limit: str = "80 per minute; 800 per hour"
    """Chat lines one client address (an IPv6 client: its /64) may send across every room (`limits`
    moving windows, separated by ``;``, each of which must have room; with ``redis_url``: counted
    across every process, else in this process's memory). Over one a line is refused with
    ``chat_too_fast``, as past a room's own limits. Each room lets a seat send 5 lines per 10 s (at
    most 35 in a minute): a person chatting in two rooms at once never meets 80 a minute, nor,
    at a line every 10 s in each for an hour, 800 an hour; while one address holding 32 seat
    sockets over 16 rooms, which could store about 16 lines a second (over a million a day), gets
    at most 800 an hour stored (19,200 a day; a minute's allowance alone let through 115,200)."""
    write_limit: str = "600 per minute"
    """Room changes one client address (an IPv6 client: its /64) may ask for over HTTP (a `limits`
    expression; with ``redis_url``: counted across every process): claiming or leaving a seat, the
    host's commands (bots, open table, options, stop, chat rules, start) and Play again. Over it:
    429 ``too_many_writes`` with ``Retry-After``, before the room is looked up. Each is a stored
    change sent to every socket of the room: one address sending them as fast as it could (645 a
    second, measured, over 16 connections) made another table's moves 20 to 40 times slower. A
    host sets a table up in a dozen; 600 a minute lets a café's worth of tables behind one address
    through."""
    room_create_limit: str = "60 per minute"
    """Rooms one client address may create (a `limits` expression); over it: 429. With
    ``redis_url``: counted across every process."""

    turn_timer_s: Annotated[float, Field(ge=0)] = 30.0
    """Default turn timer of new rooms; 0 turns the timer off; otherwise whole seconds from 5 to
    600, as a room's own (`app.web.models.playable_timer`): the lobby's form starts from it."""
    disconnect_grace_s: Annotated[float, Field(ge=0)] = 20.0
    """How long a disconnected player's seat waits before a bot covers it."""
    bot_delay_s: Annotated[float, Field(ge=0)] = 0.7
    """The pause before a bot's or a forced action, so people can follow play: each move draws
    between 0.5x (a forced pass) and 1.6x (a choice among several tiles) of it (app/rooms/pace.py);
    a bot's thinking time counts into it. 0: no pause (tests)."""
    bot_workers: Annotated[int | None, Field(ge=1)] = None
    """Worker processes that compute bot decisions (app/bots); None: one per CPU core beyond the
    first, at most 4 (so 1 on a two-core machine)."""
    hard_bot_budget_ms: Annotated[float, Field(gt=0)] = 100.0
    """The hard bot's thinking time per decision, in milliseconds (one worker's core); it is
    part of the pause before its move (``bot_delay_s``), not added to it."""
    round_pause_s: Annotated[float, Field(ge=0)] = 6.0
    """Pause between a round's end (the reveal) and the next deal."""
    unattended_rounds: Annotated[int, Field(ge=0, le=10_000)] = 10
    """Rounds a room deals in a row with no person at the table (no seat whose person is connected:
    bots alone, or bots covering absent people) before it stops and asks its spectators "keep
    watching?" (docs/protocol.md, `keep_watching`); it deals again when one answers, or when a
    person comes to their seat. 0: no limit (bots play on for as long as anyone watches). At the
    default pauses such a room stores about 70 changes a minute: the question bounds what a
    table nobody attends writes."""
    review_samples: Annotated[int, Field(ge=1, le=5000)] = DEFAULT_SAMPLES
    """Worlds per decision in a round review (engine.review); the default gives the figures
    ``domeng review`` prints."""
    review_timeout_s: Annotated[float, Field(gt=0, le=3600)] = 60.0
    """How long one round review may compute, in seconds, before it is answered with
    ``review_timeout`` (503, ask again later) and its worker replaced (app.bots.reviews)."""

    forwarded_allow_ips: str | None = None
    """Comma-separated addresses of reverse proxies whose X-Forwarded-For/-Proto headers are
    trusted (``*`` for any). Unset: the headers are ignored and the socket's peer is the client,
    so nobody can dodge a per-address limit by naming another address."""
    allowed_hosts: str | None = None
    """Comma-separated host names (and IP literals, ``[::1]`` in brackets) this server answers
    to, any port, as Starlette's TrustedHostMiddleware matches them: ``play.example``,
    ``*.example`` (its subdomains), ``*`` (any). A request or WebSocket handshake naming another
    ``Host`` is refused with 400, so a page on another domain that resolves to this server's
    address (DNS rebinding) cannot drive it. The loopback names (`LOOPBACK_HOSTS`) are always
    allowed, and so is `public_url`'s host. Unset: only those when ``host`` is a loopback address
    (the quick start), any host when it is not (with one warning at start saying how to set it):
    `resolved_allowed_hosts`."""
    max_sockets_per_address: Annotated[int, Field(ge=0)] = 32
    """Room WebSockets one client address may hold open at once (0: no limit); one more is closed
    with 1008. Behind a reverse proxy, set ``forwarded_allow_ips`` too, or every player counts as
    the proxy's address."""
    max_connections_per_address: Annotated[int, Field(ge=0)] = 64
    """HTTP connections (WebSockets included) one peer address may hold open at once (0: no
    limit); one more is closed as soon as it is accepted (app/web/guard.py). Peers named in
    ``forwarded_allow_ips`` are not capped: behind a proxy, let the proxy cap its clients."""
    max_connections: Annotated[int, Field(ge=0)] | None = None
    """HTTP connections (WebSockets included) the process holds open at once, every address
    together; one more is closed as soon as it is accepted and the refusal logged at a bounded rate
    (app/web/guard.py). Default: a little below the open-files limit (`open_files_cap`: 5% of it,
    at least 32 descriptors, kept for the database, the bot workers and the logs), so the accept
    loop never runs out of descriptors; a limit that leaves fewer than 64 is named in a warning at
    start (``open_files_limit_low``). The server raises its soft open-files limit to the hard one
    at start (`app.web.guard.raise_open_files_limit`). 0: no cap. Raise the hard limit itself
    (``ulimit -Hn`` as root, systemd's ``LimitNOFILE``) for thousands of players."""
    request_timeout_s: Annotated[float, Field(gt=0, le=10)] = 10.0
    """A connection that has not sent a whole request this long after opening (or after its last
    response) is closed: half-sent headers hold nothing for long (at most 10 s)."""
    keep_alive_s: Annotated[int, Field(ge=1)] = 5
    """An idle keep-alive connection is closed after this long."""
    loop_error_window_s: Annotated[float, Field(gt=0)] = 10.0
    """The event loop's error reports (say, the accept loop out of file descriptors) are written
    at most once per this many seconds each, with the count of those left out."""
    max_spectators: Annotated[int, Field(ge=0)] = 100
    """Spectators one room takes at once (0: no limit); one more is closed with 1008
    ``spectators_full`` (docs/protocol.md). Seated players are never refused."""
    max_frame_bytes: Annotated[int, Field(ge=256)] = 4096
    rate_limit: str = "20 per 2 seconds"
    """Messages one connection may send (a `limits` expression); over it the socket closes 1008."""
    hello_timeout_s: Annotated[float, Field(gt=0)] = 10.0
    """A socket that sends no ``hello`` this long after opening is closed (1008)."""
    database_timeout_s: Annotated[float, Field(gt=0, le=600)] = 10.0
    """PostgreSQL: seconds a statement (asyncpg's ``command_timeout``), a new connection or a
    pooled one may take. A database cut off without a word (a network partition: no reset, no
    answer) then fails a write after this long, and its moves are refused with ``not_saved``,
    instead of waiting for ever. SQLite: unused."""
    group_commit_s: Annotated[float, Field(ge=0, le=0.1)] = 0.02
    """Seconds the store's writer waits at most after a write for others to share its transaction
    (group commit, `app.store.group_commit`), only under load (when its last transaction held more
    than one write), ending early once ``group_commit_writes`` are at hand: such a move waits up to
    this much longer, and one transaction stores many moves. 0 commits what is already queued at
    once. A transaction's CPU is mostly fixed (SQLite: about 220 µs for one write, 30 µs for each
    further one), so under load the window is what makes a move's write cheap. Measured (issue 15,
    benchmarks/group_commit.py, SQLite, CPU per write against the old 5 ms with no target, medians
    of runs side by side): 0.60–0.65x at 540 writes/s (2,000 connections) and 0.74x at 1,350 (5,000),
    for a median wait of 6–12 ms."""
    group_commit_writes: Annotated[int, Field(ge=0, le=500)] = 16
    """Writes at which the group commit's wait (``group_commit_s``) ends early: a batch that has
    this many is committed at once (0: the wait always lasts ``group_commit_s``). It bounds the
    wait when moves come fast."""
    send_queue_size: Annotated[int, Field(ge=4)] = 64
    ping_interval_s: Annotated[float, Field(gt=0)] = 10.0
    """Seconds between the WebSocket pings the server sends each socket (the browser answers them
    by itself, even from a hidden tab). Keep it at 5 or more: thousands of sockets pay for each
    ping (benchmarks/load.py); tests use less. Behind deploy/nginx.conf keep it below the sockets'
    read timeout there (15 s), or nginx closes a quiet socket (docs/deploy.md)."""
    ping_timeout_s: Annotated[float, Field(gt=0)] = 10.0
    """Seconds a ping may go unanswered before the socket is dropped. A network that dies without
    a word is noticed at most ``ping_interval_s + ping_timeout_s`` after the client's last bytes,
    and the seat's grace counts from those bytes (`app.edge.heard`), not from the noticing."""
    ws_compression: bool = False
    """permessage-deflate on WebSockets: smaller frames for a lot more server CPU per update."""
    loop: Literal["asyncio", "uvloop"] = Field(default_factory=lambda: _DEFAULT_LOOP)
    """The event loop uvicorn runs: ``uvloop`` (libuv's) when it is installed (it is a dependency
    except on Windows), else asyncio's. uvloop costs less CPU per update (issue 15: 0.80× ours,
    0.74× the bare fan-out's, at 5,000 connections). At the open-files limit libuv accepts and
    closes connections without a word (asyncio reports it): ``max_connections`` keeps the process
    below that limit and logs what it refuses, on either loop."""
    ws_impl: Literal["websockets-sansio", "wsproto", "websockets"] = "websockets-sansio"
    """uvicorn's WebSocket implementation (issue 15: measured with benchmarks/load.py --ws;
    ``wsproto`` needs that package installed). The room socket opens its room before it answers
    the handshake (`app.edge.endpoint.room_socket`); the legacy ``websockets`` gives the whole
    handshake 10 s (its ``open_timeout``, counted from the whole upgrade request; before that the
    request deadline, ``request_timeout_s``, applies with every implementation: `app.web.guard`),
    so with it a room that takes longer to load fails the handshake (the client tries again), and
    a client gone before the answer logs uvicorn's own error."""
    log_level: str = "info"
    log_json: bool = True

    @field_validator("admin_token")
    @classmethod
    def _strong_enough(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or not value.get_secret_value().strip():
            return None  # an empty DOMENG_ADMIN_TOKEN leaves the admin area disabled
        check_admin_secret(value.get_secret_value().strip())
        return value

    @field_validator("allowed_hosts")
    @classmethod
    def _host_names(cls, value: str | None) -> str | None:
        for name in (value or "").split(","):
            check_host_pattern(name.strip())
        return value

    @field_validator("turn_timer_s")
    @classmethod
    def _playable_timer(cls, value: float) -> float:
        try:
            return playable_timer(value)
        except ValueError as error:
            raise ValueError(f"DOMENG_TURN_TIMER_S: {error}") from None

    @model_validator(mode="after")
    def _secret_from_file(self) -> Settings:
        if self.admin_token is None and self.admin_token_file is not None:
            try:
                text = self.admin_token_file.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError) as error:
                why = getattr(error, "strerror", None) or "not UTF-8 text"
                raise ValueError(f"DOMENG_ADMIN_TOKEN_FILE cannot be read: {why}") from None
            if not text:
                raise ValueError("DOMENG_ADMIN_TOKEN_FILE is empty")
            check_admin_secret(text)
            self.admin_token = SecretStr(text)
        return self

    def resolved_bot_workers(self) -> int:
        """``bot_workers``, or one per CPU core beyond the first (1 to 4)."""
        if self.bot_workers is not None:
            return self.bot_workers
        return min(4, max(1, (os.cpu_count() or 1) - 1))

    def resolved_allowed_hosts(self) -> list[str] | None:
        """The hosts the server answers to (`allowed_hosts`, with `LOOPBACK_HOSTS` and
        `public_url`'s host), ``["*"]`` for any; None when `allowed_hosts` is unset and the server
        listens on an address that is not a loopback one (``0.0.0.0``, a LAN address): any host,
        and the caller warns that it should be set."""
        if self.allowed_hosts is None and not is_loopback(self.host):
            return None
        named = [h.strip().lower() for h in (self.allowed_hosts or "").split(",") if h.strip()]
        if "*" in named:
            return ["*"]
        public = urlsplit(self.public_url).hostname if self.public_url else None
        public = f"[{public}]" if public and ":" in public else public  # an IPv6 literal
        return list(dict.fromkeys([*LOOPBACK_HOSTS, *([public] if public else []), *named]))

    def resolved_database_url(self) -> str:
        """``database_url``, or the SQLite file in ``data_dir``."""
        if self.database_url:
            return self.database_url
        return f"sqlite+aiosqlite:///{(self.data_dir / 'domeng.sqlite3').resolve()}"
