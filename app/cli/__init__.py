"""The ``domeng`` command line: ``replay`` a match record, ``simulate`` bot-only matches, measure
bots on duplicate deals with ``arena``.

Exit status: 0 on success, 2 for an invalid record or illegal action (RECORD.md) and for bad
command-line arguments.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import os
import socket
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, Literal, NoReturn

from tqdm import tqdm

from app.cli.arena import add_arena_parser as _add_arena_parser
from app.cli.arena import arena_markdown, cmd_arena
from app.cli.common import error_place as _error_place
from app.cli.common import load_document as _load_document
from app.cli.common import positive as _positive
from app.cli.common import terminal_text as _terminal_text
from app.cli.common import variant_options as _variant_options
from app.cli.common import writable as _writable
from app.cli.review import add_review_parser as _add_review_parser
from app.cli.review import cmd_review
from app.rooms.errors import RoomError
from app.rooms.seeds import check_deal_proof
from engine.actions import Draw, Pass, PlayLempas
from engine.bots import BOTS
from engine.core import RoundLog, State
from engine.errors import EngineError, RecordError
from engine.hashing import commitment_of
from engine.narration import describe_outcome, describe_score
from engine.record import Replay, read_record, write_record
from engine.simulate import Simulation
from engine.variants import VARIANTS, make_rules
from engine.words import count

if TYPE_CHECKING:
    from app.store.pghold import DatabaseServedError, PostgresHold
    from app.web.settings import Settings

__all__ = [
    "arena_markdown",
    "build_parser",
    "cmd_arena",
    "cmd_migrate",
    "cmd_replay",
    "cmd_review",
    "cmd_serve",
    "cmd_simulate",
    "cmd_verify_deal",
    "main",
]


# -- readable summaries ------------------------------------------------------------------------


def _count_actions(log: RoundLog) -> str:
    kinds = Counter(type(a) for a in log.actions)
    text = f"{count(len(log.actions), 'action')}, {count(kinds[Pass], 'pass', 'passes')}"
    if kinds[Draw] or kinds[PlayLempas]:
        text += f", {count(kinds[Draw], 'draw')}, {count(kinds[PlayLempas], 'two-lempas move')}"
    return text


def _summary_text(result: Replay) -> str:
    names = [_terminal_text(name) for name in result.seats]  # a file's words: shown, never run
    options = ", ".join(f"{key} {value}" for key, value in result.rules.options().items())
    out = [f"{result.rules.name} · {count(len(names), 'seat')}: {', '.join(names)} · options: {options}"]
    for index, log in enumerate(result.rounds):
        out.append(f"Round {index + 1} · {_count_actions(log)}")
        if log.outcome is None:
            # an unfinished round is the last: the score as it stands, never the report's raw JSON
            standing = describe_score(result.state.score(), names)
            out.append(f"  unfinished: the round is still in play · {standing}")
            continue
        out += [f"  {line}" for line in describe_outcome(log.outcome, names)]
    if result.ended_by == "host":
        out.append("Match over: the host ended it after this round.")
    else:
        out.append("Match over." if result.match_over else "Match not over.")
    return "\n".join(out)


# -- commands ----------------------------------------------------------------------------------


def cmd_replay(args: argparse.Namespace) -> int:
    """``domeng replay FILE [--json]`` (RECORD.md)."""
    try:
        result = read_record(_load_document(args.file))
    except RecordError as error:
        if args.json:
            print(json.dumps(error.to_json()))
        else:
            print(f"domeng replay: {error.code}{_error_place(error)}: {error.message}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result.report()))
    else:
        print(_summary_text(result))
    return 0


def _print_outcomes(figures: dict[str, Any]) -> None:
    print(
        f"{count(figures['rounds'], 'round')} · {count(figures['matches'], 'match', 'matches')}"
        f" · {count(figures['actions'], 'action')}"
    )
    print("outcomes:")
    for key, times in figures["outcomes"].items():
        print(f"  {key:<22} {times:>8}  {100 * figures['outcome_share'][key]:5.1f}%")


def _print_kozel_figures(figures: dict[str, Any], bot_names: Sequence[str]) -> None:
    _print_outcomes(figures)
    print(
        f"{count(figures['passes'], 'pass', 'passes')} · {count(figures['draws'], 'draw')}"
        f" · {count(figures['two_lempas'], 'two-lempas move')}"
    )
    print("per seat:    bot      wins  points written  goats")
    for seat, bot in enumerate(bot_names):
        print(
            f"  P{seat}  {bot:>10} {figures['wins'][seat]:>8} {figures['points_written'][seat]:>15}"
            f" {figures['goats'][seat]:>6}"
        )
    spread = figures["rounds_per_match"]
    if spread["mean"] is None:
        print("no match reached the goat in these rounds")
        return
    print(
        f"rounds per finished match (to the goat): mean {spread['mean']}, median {spread['median']},"
        f" min {spread['min']}, max {spread['max']}"
    )


def _print_figures(figures: dict[str, Any], bot_names: Sequence[str]) -> None:
    _print_outcomes(figures)
    print(f"{count(figures['passes'], 'pass', 'passes')} (passebunge {figures['passebunge']})")
    print("per seat:    bot      wins  stones received  stones paid  camat elections")
    for seat, bot in enumerate(bot_names):
        print(
            f"  P{seat}  {bot:>10} {figures['wins'][seat]:>8} {figures['stones_received'][seat]:>16}"
            f" {figures['stones_paid'][seat]:>12} {figures['camat_elections'][seat]:>16}"
        )
    cycle = figures["rounds_per_cycle"]
    if cycle["mean"] is None:
        print(f"{count(figures['cycles'], 'cycle')} · no cycle ended in these rounds")
        return
    print(
        f"{count(figures['cycles'], 'cycle')} · rounds per cycle: mean {cycle['mean']},"
        f" median {cycle['median']}, min {cycle['min']}, max {cycle['max']}"
    )


def cmd_simulate(args: argparse.Namespace) -> int:
    """``domeng simulate --rounds N [--seed S] [--bots random,greedy,...] [--save DIR]``; Kozel
    with ``--variant kozel [--seats 2|3|4] [--pairs] [--no-two-lempas]``."""
    rules = make_rules(args.variant, _variant_options(args), args.seats)
    bot_names = [b.strip() for b in args.bots.split(",")]
    unknown = [b for b in bot_names if b not in BOTS]
    if unknown:
        print(f"domeng simulate: unknown bot(s) {unknown}; known: {', '.join(BOTS)}", file=sys.stderr)
        return 2
    save_dir = Path(args.save) if args.save else None
    if save_dir is not None and not _writable(save_dir, "simulate"):
        return 2
    saved = 0

    def save(state: State) -> None:
        nonlocal saved
        if save_dir is None:
            return
        saved += 1
        names = [f"P{i} {name}" for i, name in enumerate(sim.bot_names)]
        path = save_dir / f"match-{saved:05d}.json"
        path.write_text(json.dumps(write_record(state, names), indent=1), encoding="utf-8")

    sim = Simulation(rules, bot_names, args.seed, on_match=save)
    step = max(1, min(1000, args.rounds // 100))
    with tqdm(total=args.rounds, unit="round", disable=args.quiet or None, file=sys.stderr) as bar:
        done = 0
        while done < args.rounds:
            n = sim.run(min(step, args.rounds - done))
            done += n
            bar.update(n)
    sim.finish()
    figures = sim.tally.summary()
    figures["bots"] = sim.bot_names
    figures["seed"] = args.seed
    if args.json:
        print(json.dumps(figures))
    elif rules.unit == "points":
        _print_kozel_figures(figures, sim.bot_names)
    else:
        _print_figures(figures, sim.bot_names)
        if save_dir is not None:
            print(f"saved {saved} match records to {save_dir}/")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """``domeng serve``: run the game server (flags override ``DOMENG_*`` variables)."""
    from pydantic import ValidationError  # noqa: PLC0415

    from app.store.db import DatabaseInUseError, hold_sqlite, name_connections, sqlite_path  # noqa: PLC0415
    from app.web.settings import Settings  # noqa: PLC0415

    name_connections("serve")  # every PostgreSQL session says "domeng serve pid N on HOST"
    overrides = {
        key: value
        for key, value in {
            "host": args.host,
            "port": args.port,
            "data_dir": args.data_dir,
            "database_url": args.database_url,
            "admin_token": args.admin_token,
            "admin_token_file": args.admin_token_file,
        }.items()
        if value is not None
    }
    try:
        settings = Settings(**overrides)
    except ValidationError as error:  # inputs are hidden (hide_input_in_errors): no secret echoed
        for problem in error.errors():
            where = ".".join(str(part) for part in problem["loc"]) or "settings"
            print(f"domeng serve: {where}: {problem['msg']}", file=sys.stderr)
        return 2
    taken = _listen_refusal(settings.host, settings.port)
    if taken is not None:  # said before the migrations, the database's hold and "server_ready"
        print(f"domeng serve: {taken}", file=sys.stderr)
        return 1
    try:
        database = sqlite_path(settings.resolved_database_url())
    except ValueError:  # an in-memory database: this process's own
        database = None
    if database is not None:
        # one server per SQLite file: a second `scripts/run` from the same checkout (the first
        # still running, on another port) would play the same rooms apart from it
        try:
            held = hold_sqlite(database)
        except DatabaseInUseError as error:
            print(f"domeng serve: {error}", file=sys.stderr)
            return 1
        except OSError as error:  # a data directory that is read-only, or not a directory
            where = str(error.filename or database.parent)
            print(
                f"domeng serve: cannot write beside the database {database}: {where}: {error.strerror}; "
                "the data directory must be a directory this user can write (--data-dir)",
                file=sys.stderr,
            )
            return 1
        if held is None:
            print(
                f"domeng serve: the file system of {database} takes no lock: nothing stops a second "
                "server on the same database, so start only one",
                file=sys.stderr,
            )
    hold = None if database is not None else _hold_postgres(settings)
    if hold is False:
        return 1
    try:
        # alone on the database (no Redis): nothing is committed while the hold is lost
        _serve(settings, None if not hold or hold.shared else (lambda: hold.held))
    finally:
        if hold:
            hold.release()  # the database is free for the next server
    if database is not None and held is not None:
        os.close(held)  # the database is free for the next server
    return 0


def _hold_postgres(settings: Settings) -> PostgresHold | Literal[False] | None:
    """This server's hold on its PostgreSQL database (`app.store.pghold`): exclusive without Redis,
    shared with it. None for another database; False, once said on stderr why, when the server
    must not start (others serve the database in a way it cannot join, or it cannot be reached)."""
    from sqlalchemy.engine import make_url  # noqa: PLC0415
    from sqlalchemy.exc import DBAPIError  # noqa: PLC0415

    from app.store.pghold import DatabaseServedError, PostgresHold  # noqa: PLC0415

    url = settings.resolved_database_url()
    if make_url(url).get_backend_name() != "postgresql":
        return None
    hold = PostgresHold(
        url, shared=bool(settings.redis_url), timeout_s=settings.database_timeout_s, on_taken=_stop_serving
    )
    try:
        hold.take()
    except DatabaseServedError as error:
        print(f"domeng serve: {error}", file=sys.stderr)
        return False
    except (OSError, TimeoutError, DBAPIError) as error:  # the URL is never printed, nor the text
        print(f"domeng serve: {_postgres_start_refusal(url, _driver_error(error))}", file=sys.stderr)
        return False
    return hold


def _driver_error(error: BaseException) -> BaseException:
    """The database driver's own error under ``error``: asyncpg's (with its ``sqlstate``) under
    SQLAlchemy's DBAPIError and the DBAPI adapter's; ``error`` itself when there is none (an
    OSError or TimeoutError from opening the connection)."""
    orig = getattr(error, "orig", None)
    return getattr(orig, "__cause__", None) or orig or error


def _postgres_login_refusal(url: str, cause: BaseException) -> str | None:
    """Why PostgreSQL at ``url`` refused a connection (``cause``: the driver's error, `_driver_error`)
    as a sentence that sends the operator the right way, when it refused the login (SQLSTATE class
    28: a wrong password, a role that does not exist, no pg_hba.conf entry) or the database does
    not exist (3D000); None for any other error. Names the user and the database, never the URL
    nor its password, nor the driver's text."""
    from sqlalchemy.engine import make_url  # noqa: PLC0415

    parsed = make_url(url)
    user = parsed.username or "(none)"
    database = parsed.database or parsed.username or "(none)"
    kind = type(cause).__name__
    sqlstate = str(getattr(cause, "sqlstate", "") or "")
    if sqlstate.startswith("28"):
        return (
            f"PostgreSQL refused the login for user {user!r} ({kind}): check the user and password "
            "in DOMENG_DATABASE_URL (and that the server's pg_hba.conf lets this host in)"
        )
    if sqlstate == "3D000":
        return (
            f"the PostgreSQL database {database!r} does not exist on its server ({kind}): create it "
            "(createdb, owned by the server's user), or check the database name in DOMENG_DATABASE_URL"
        )
    return None


def _postgres_start_refusal(url: str, cause: BaseException) -> str:
    """Why the server's PostgreSQL database at ``url`` refused its first connection (``cause``: the
    driver's error), as a sentence: `_postgres_login_refusal`'s, else the server could not be
    reached (anything else). Never the URL nor its password, nor the driver's text."""
    return _postgres_login_refusal(url, cause) or (
        "cannot reach the PostgreSQL database to check that no other server serves it without Redis "
        f"({type(cause).__name__}); start the database first, or check DOMENG_DATABASE_URL"
    )


def _migration_failure(url: str, error: BaseException) -> str:
    """Why ``domeng migrate`` on ``url`` failed (``error``: what the migration raised), as a
    sentence: on PostgreSQL, a refused login or a missing database as `_postgres_login_refusal`
    says them, and a server that could not be reached (OSError, TimeoutError, SQLSTATE class 08
    or 57P03) as such; else ``the migration failed`` with the driver's error's class. Never the URL
    nor its password, nor the driver's text (it may quote the URL or the data)."""
    from sqlalchemy.engine import make_url  # noqa: PLC0415

    cause = _driver_error(error)
    kind = type(cause).__name__
    if make_url(url).get_backend_name() != "postgresql":
        return f"the migration failed: {kind}"
    refused = _postgres_login_refusal(url, cause)
    if refused is not None:
        return refused
    sqlstate = str(getattr(cause, "sqlstate", "") or "")
    if isinstance(cause, OSError | TimeoutError) or sqlstate.startswith("08") or sqlstate == "57P03":
        return (
            f"cannot reach the PostgreSQL database ({kind}); start the database first, or check "
            "DOMENG_DATABASE_URL"
        )
    return f"the migration failed: {kind}"


def _listen_refusal(host: str, port: int) -> str | None:
    """Why the server could not listen on ``host``:``port`` (TCP), as a sentence, or None when it
    can (or when ``port`` is 0, any free one, or the address does not resolve: uvicorn says then).
    Tried with a socket bound and closed at once, with SO_REUSEADDR as uvicorn binds, so a port
    held only by connections closing (TIME_WAIT) counts as free. Without it, a port in use was
    found only after the start-up had logged ``server_ready``, and the server then exited 3."""
    if port == 0:
        return None
    try:
        family, kind, proto, _name, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except (OSError, UnicodeError):
        return None
    try:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            return (
                f"port {port} is in use on {host}: another program listens there; choose another with --port"
            )
        if error.errno == errno.EACCES:
            return (
                f"port {port} on {host} needs privileges this user lacks: choose one above 1023 with --port"
            )
        if error.errno == errno.EADDRNOTAVAIL:
            return f"{host} is not an address of this machine: choose one with --host"
    return None


def _stop_serving(error: DatabaseServedError) -> NoReturn:
    """End this server at once, status 1: its hold's connection on the PostgreSQL database was lost
    and another process took the database meanwhile (`app.store.pghold`), so both would host the
    same rooms apart. Nothing more is written: the process ends as a crash would (no room's turn
    stored on the way out, which the other process may have loaded already), so every action
    acknowledged so far is stored and those not yet committed are refused (their transactions
    are rolled back as the connections close); players reconnect with their tokens. A supervisor
    that starts it again sees it refused until the other process stops."""
    print(
        "domeng serve: stopping: this server's hold on its PostgreSQL database was lost (the "
        f"database restarted or the connection was cut), and meanwhile {error}",
        file=sys.stderr,
        flush=True,
    )
    with contextlib.suppress(Exception):
        sys.stdout.flush()  # the logs so far, `database_hold_taken` among them
    os._exit(1)


def _serve(settings: Settings, holding: Callable[[], bool] | None = None) -> None:
    """Run the server of ``settings`` until it is stopped (uvicorn); ``holding``: `create_app`'s."""
    import uvicorn  # noqa: PLC0415 - only the server needs it

    from app.edge.heard import heard_protocol  # noqa: PLC0415
    from app.edge.refusals import secure_refusals  # noqa: PLC0415
    from app.web.app import create_app  # noqa: PLC0415
    from app.web.guard import (  # noqa: PLC0415
        ConnectionGuard,
        connections_cap,
        guarded_protocol,
        raise_open_files_limit,
    )
    from app.web.middleware import security_headers  # noqa: PLC0415

    app = create_app(settings, holding)  # the logs' format too
    raise_open_files_limit()  # the soft limit to the hard one, before the cap is read from it
    total = connections_cap(settings.max_connections)  # warns of a low open-files limit
    guard = ConnectionGuard.from_settings(
        settings.max_connections_per_address, settings.forwarded_allow_ips, total=total
    )
    config = uvicorn.Config(
        app,
        # a request deadline and caps on open connections, per address and in all (issue 13)
        http=guarded_protocol(guard, settings.request_timeout_s),
        timeout_keep_alive=settings.keep_alive_s,
        host=settings.host,
        port=settings.port,
        loop=settings.loop,
        # when each client was last heard (its grace), and a refused handshake's security headers
        ws=secure_refusals(heard_protocol(settings.ws_impl), security_headers().headers.items()),
        ws_max_size=settings.max_frame_bytes,
        ws_per_message_deflate=settings.ws_compression,
        ws_ping_interval=settings.ping_interval_s,
        ws_ping_timeout=settings.ping_timeout_s,
        log_config=None,
        access_log=False,
        # X-Forwarded-For decides the client address that rate limits count: trusted only from the
        # proxies named in DOMENG_FORWARDED_ALLOW_IPS, never by default (anyone could pick one)
        proxy_headers=settings.forwarded_allow_ips is not None,
        forwarded_allow_ips=settings.forwarded_allow_ips,
        timeout_graceful_shutdown=5,
    )
    store = app.state.store

    class Server(uvicorn.Server):
        """uvicorn's server, whose stop (SIGTERM, Ctrl+C) first tells the store to stop waiting
        for a SQLite database another process keeps locked (`Store.stop_waiting`): the writes
        pending then fail at once, storing nothing, and their requests are answered, instead of
        each waiting out the lock while the shutdown's grace runs out and cancels them (with a
        traceback each)."""

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            store.stop_waiting()
            super().handle_exit(sig, frame)

    server = Server(config)
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl+C, raised again once stopped: as `uvicorn.run`
        server.run()
    if not server.started:  # as `uvicorn.run`: it could not start (its own log says why)
        sys.exit(3)


def cmd_migrate(args: argparse.Namespace) -> int:
    """``domeng migrate [--database-url URL] [--data-dir DIR]``: bring the database's schema up to
    date (Alembic ``upgrade head``, what ``domeng serve`` does at start unless
    ``DOMENG_MIGRATE=false``) and exit: run it once before starting several servers. The URL
    comes from the flag, else ``DOMENG_DATABASE_URL``, else the SQLite file in the data directory;
    it is never printed (it may hold a password). Exit status 0, or 1 when the migration failed."""
    from pydantic import ValidationError  # noqa: PLC0415 - only the server's commands need it

    from app.store import upgrade_database  # noqa: PLC0415
    from app.store.db import name_connections, sqlite_path  # noqa: PLC0415
    from app.web.settings import Settings  # noqa: PLC0415

    name_connections("migrate")
    overrides = {
        key: value
        for key, value in {"data_dir": args.data_dir, "database_url": args.database_url}.items()
        if value is not None
    }
    try:
        settings = Settings(**overrides)
    except ValidationError as error:
        for problem in error.errors():
            where = ".".join(str(part) for part in problem["loc"]) or "settings"
            print(f"domeng migrate: {where}: {problem['msg']}", file=sys.stderr)
        return 2
    url = settings.resolved_database_url()
    path = sqlite_path(url)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        upgrade_database(url, settings.database_timeout_s)
    except Exception as error:  # the URL is never printed, nor the driver's text
        print(f"domeng migrate: {_migration_failure(url, error)}", file=sys.stderr)
        return 1
    print("domeng migrate: the database schema is up to date")
    return 0


_REST_LABELS = {"bazaar": "bazaar (top first)"}
"""How `verify-deal` labels the rest of the tiles (the bazaar is drawn from the top)."""


def cmd_verify_deal(args: argparse.Namespace) -> int:
    """``domeng verify-deal SEED [--commitment HEX] [--variant kozel --seats N]``: re-derive a
    round's deal from its seed. The commitment covers the seed alone, so the first line says which
    game and table size the hands below are dealt for. A seed or commitment the server cannot have
    sent (`app.rooms.seeds.check_deal_proof`, as ``/api/deals/verify``) is refused with one line
    on standard error and status 2."""
    try:
        check_deal_proof(args.seed, args.commitment)
    except RoomError as error:
        print(f"domeng verify-deal: {error.code}: {error.message}", file=sys.stderr)
        return 2
    rules = make_rules(args.variant or "domeng", {}, args.seats)
    deal = rules.deal_from_seed(args.seed)
    # how to ask for another game, unless the game and its seats were both given
    given = args.variant is not None and args.seats is not None
    other = "" if given else " (another game: --variant and --seats)"
    print(f"deal for {rules.name} with {rules.seats} seats{other}")
    for seat, hand in enumerate(deal.hands):
        print(f"P{seat}: {' '.join(str(t) for t in hand)}")
    rest = _REST_LABELS.get(rules.rest_name, rules.rest_name)
    print(f"{rest}: {' '.join(str(t) for t in deal.rest)}")
    digest = commitment_of(args.seed)
    print(f"commitment sha256(seed) = {digest}")
    if args.commitment is not None:
        ok = digest == args.commitment.lower()
        print("commitment matches" if ok else "commitment DOES NOT match")
        return 0 if ok else 1
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``domeng`` command."""
    parser = argparse.ArgumentParser(prog="domeng", description="Domeng Online tools")
    sub = parser.add_subparsers(dest="command", required=True)

    replay = sub.add_parser("replay", help="validate and replay a match record (RECORD.md)")
    replay.add_argument("file", help="a domeng-record/1 JSON file, or - for standard input")
    replay.add_argument("--json", action="store_true", help="print RECORD.md's JSON report")
    replay.set_defaults(func=cmd_replay)

    simulate = sub.add_parser("simulate", help="play bot-only matches and report frequencies")
    simulate.add_argument("--rounds", type=_positive, required=True, help="rounds to play in all")
    simulate.add_argument("--seed", default="0", help="seed of every deal and bot choice (default 0)")
    simulate.add_argument(
        "--bots", default="random", help=f"bots by seat, cycled: comma-separated of {', '.join(BOTS)}"
    )
    simulate.add_argument("--variant", default="domeng", choices=sorted(VARIANTS))
    simulate.add_argument("--seats", type=int, help="Kozel: 2, 3 or 4 seats (default 4)")
    simulate.add_argument("--camat-target", type=int, help="Domeng: camat elections that end a match")
    simulate.add_argument("--pairs", action="store_true", help="Kozel, 4 seats: P0+P2 against P1+P3 (K10)")
    simulate.add_argument(
        "--no-two-lempas", action="store_true", help="Kozel: play without the two-lempas move (K4)"
    )
    simulate.add_argument("--save", metavar="DIR", help="write each match as a record into DIR")
    simulate.add_argument("--json", action="store_true", help="print the figures as JSON")
    simulate.add_argument("--quiet", action="store_true", help="no progress bar")
    simulate.set_defaults(func=cmd_simulate)

    _add_arena_parser(sub)
    _add_review_parser(sub)
    serve = sub.add_parser("serve", help="run the game server (DOMENG_* variables configure it too)")
    serve.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default 8000)")
    serve.add_argument("--data-dir", help="where the SQLite database lives (default ./data)")
    serve.add_argument("--database-url", help="SQLAlchemy async URL, e.g. postgresql+asyncpg://…")
    serve.add_argument(
        "--admin-token",
        help="the admin secret (no default: admin disabled); any local user can read a command line:"
        " prefer --admin-token-file or DOMENG_ADMIN_TOKEN_FILE",
    )
    serve.add_argument("--admin-token-file", help="a file holding the admin secret (DOMENG_ADMIN_TOKEN_FILE)")
    serve.set_defaults(func=cmd_serve)

    migrate = sub.add_parser(
        "migrate", help="bring the database's schema up to date (once, before the servers)"
    )
    migrate.add_argument(
        "--database-url", help="SQLAlchemy async URL (default DOMENG_DATABASE_URL, else SQLite)"
    )
    migrate.add_argument("--data-dir", help="where the SQLite database lives (default ./data)")
    migrate.set_defaults(func=cmd_migrate)

    verify = sub.add_parser("verify-deal", help="re-derive a round's deal from its revealed seed")
    verify.add_argument("seed")
    verify.add_argument("--commitment", help="the commitment sent when the round was dealt")
    verify.add_argument("--variant", choices=sorted(VARIANTS), help="the game (default: domeng)")
    verify.add_argument("--seats", type=int, help="Kozel: 2, 3 or 4 seats")
    verify.set_defaults(func=cmd_verify_deal)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``domeng`` command; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        status: int = args.func(args)
    except EngineError as error:
        print(f"domeng: {error.code}: {error.message}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader (e.g. `| head`) has gone: not an error of ours
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps the interpreter's final flush quiet
        return 0
    return status
