"""``domeng arena``: a bot measured against a field on duplicate deals (engine/arena.py), printed as
a Markdown table ready for a closing note, or as JSON."""

from __future__ import annotations

import argparse
import json
import multiprocessing
import re
import sys
from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from tqdm import tqdm

from app.cli.common import positive, variant_options, writable
from engine.arena import ArenaSpec, ArenaTally, BoardResult, known_players, play_board
from engine.variants import VARIANTS

__all__ = ["add_arena_parser", "arena_markdown", "cmd_arena"]


def _boards(spec: ArenaSpec, jobs: int, keep_records: bool) -> Iterator[BoardResult]:
    """Every board's result in board order, played here (``jobs`` 1) or by a pool of processes."""
    play = partial(play_board, spec, keep_records=keep_records)
    if jobs == 1:
        yield from map(play, range(spec.boards))
        return
    with multiprocessing.Pool(jobs) as pool:
        yield from pool.imap(play, range(spec.boards))


def _save_board(save_dir: Path, result: BoardResult) -> int:
    """Write every match of ``result`` as ``board-BBBBB-TABLE-M.json`` (TABLE: ``field``, or the
    candidate and its rotation, e.g. ``greedy-r2``); returns how many files."""
    tables = [("field", result.field)]
    tables += [(f"{name}-{t.label}", t) for name, rotated in result.candidates.items() for t in rotated]
    count = 0
    for label, table in tables:
        for index, record in enumerate(table.records, start=1):
            path = save_dir / f"board-{result.board:05d}-{label}-{index}.json"
            path.write_text(json.dumps(record, indent=1), encoding="utf-8")
            count += 1
    return count


def _fmt(value: float | None, suffix: str = "", digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}{suffix}"


def arena_markdown(figures: dict[str, Any]) -> str:
    """The arena's figures as Markdown, ready for a closing note: a heading line, the pairings
    table, the gap figure (if measured) and the decision times per level."""
    seats = {"seat": "one seat", "side": "one pair", "table": "every seat"}[figures["scheme"]]
    options = ", ".join(f"{k} {v}" for k, v in figures["options"].items())
    boards, rounds = figures["boards"], figures["rounds_per_board"]
    lines = [
        f"**{figures['variant']}**, {figures['seats']} seats ({options}); candidate in {seats}, rotated"
        f" ({len(figures['rotations'])} rotations); {boards} boards × {rounds} rounds"
        f" = {boards * rounds} duplicate deals; seed {figures['seed']}",
        "",
        f"| candidate | field | {figures['metric']} per round (candidate) | field | ratio | 99% upper bound"
        f" | {figures['events']} (candidate / field) |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for p in figures["pairings"]:
        lines.append(
            f"| {p['candidate']} | {p['field']} | {_fmt(p['candidate_mean'])} | {_fmt(p['field_mean'])}"
            f" | {_fmt(p['ratio'], '×')} | {_fmt(p['ratio_upper99'], '×')}"
            f" | {p['candidate_events']} / {p['field_events']} |"
        )
    gap = figures["gap"]
    if gap is not None:
        closed, low = (None if v is None else 100 * v for v in (gap["closed"], gap["closed_lower99"]))
        lines += [
            "",
            f"Gap closed: {gap['candidate']} closes {_fmt(closed, '%', 1)} of the gap"
            f" between {figures['pairings'][0]['field']} and {gap['ceiling']}"
            f" (99% lower bound {_fmt(low, '%', 1)}).",
        ]
    lines += [
        "",
        "| level | decisions | p50 ms | p95 ms | p99 ms | max ms |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for level, t in figures["decision_ms"].items():
        ms = " | ".join(_fmt(t[key]) for key in ("p50", "p95", "p99", "max"))
        lines.append(f"| {level} | {t['decisions']} | {ms} |")
    return "\n".join(lines)


def _bot_params(texts: Sequence[str]) -> dict[str, dict[str, object]]:
    """``LEVEL.NAME=VALUE`` arguments as level → name → value (int, else float, else text)."""
    params: dict[str, dict[str, object]] = {}
    for text in texts:
        key, value = text.split("=", 1)
        level, name = key.split(".", 1)
        params.setdefault(level, {})[name] = _number(value)
    return params


def _number(text: str) -> object:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _param(text: str) -> str:
    if not re.fullmatch(r"[\w-]+\.\w+=.+", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not LEVEL.NAME=VALUE (e.g. hard.samples=20)")
    return text


def cmd_arena(args: argparse.Namespace) -> int:
    """``domeng arena --candidate A --field B [--ceiling C] [--table-mean] [--boards N]
    [--rounds-per-board R] [--seed S] [--jobs J] [--save DIR] [--json]`` (engine/arena.py)."""
    candidates = (args.candidate,) if args.ceiling is None else (args.candidate, args.ceiling)
    spec = ArenaSpec(
        variant=args.variant,
        options=variant_options(args),
        seats=args.seats,
        candidates=candidates,
        field=args.field,
        boards=args.boards,
        rounds_per_board=args.rounds_per_board,
        seed=args.seed,
        table_mean=args.table_mean,
        params=_bot_params(args.param or []),
    )
    try:
        spec.check()
    except ValueError as error:
        print(f"domeng arena: {error}", file=sys.stderr)
        return 2
    save_dir = Path(args.save) if args.save else None
    if save_dir is not None and not writable(save_dir, "arena"):
        return 2
    tally = ArenaTally(spec)
    saved = 0
    with tqdm(total=spec.boards, unit="board", disable=args.quiet or None, file=sys.stderr) as bar:
        for result in _boards(spec, args.jobs, save_dir is not None):
            tally.add(result)
            if save_dir is not None:
                saved += _save_board(save_dir, result)
            bar.update(1)
    figures = tally.summary()
    if args.json:
        print(json.dumps(figures))
        return 0
    print(arena_markdown(figures))
    if save_dir is not None:
        print(f"\nsaved {saved} match records to {save_dir}/")
    return 0


def add_arena_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``arena`` subcommand's arguments."""
    arena = sub.add_parser("arena", help="measure a bot against a field on duplicate deals")
    arena.add_argument(
        "--candidate",
        default="greedy",
        help=f"the bot measured (default greedy; known: {', '.join(known_players())})",
    )
    arena.add_argument("--field", default="random", help="the bot in the other seats (default random)")
    arena.add_argument(
        "--ceiling", help="also play this bot (e.g. omniscient) and report the share of the gap closed"
    )
    arena.add_argument(
        "--param",
        type=_param,
        action="append",
        metavar="LEVEL.NAME=VALUE",
        help="a keyword argument for a level's bots, e.g. hard.samples=20 (repeatable)",
    )
    arena.add_argument("--table-mean", action="store_true", help="the candidate in every seat at once")
    arena.add_argument("--boards", type=positive, default=100, help="boards (default 100)")
    arena.add_argument("--rounds-per-board", type=positive, default=10, help="rounds per board (default 10)")
    arena.add_argument("--seed", default="0", help="seed of every deal and bot choice (default 0)")
    arena.add_argument("--jobs", type=positive, default=1, help="processes playing boards (default 1)")
    arena.add_argument("--variant", default="domeng", choices=sorted(VARIANTS))
    arena.add_argument("--seats", type=int, help="Kozel: 2, 3 or 4 seats (default 4)")
    arena.add_argument("--camat-target", type=int, help="Domeng: camat elections that end a match")
    arena.add_argument("--pairs", action="store_true", help="Kozel, 4 seats: P0+P2 against P1+P3 (K10)")
    arena.add_argument("--no-two-lempas", action="store_true", help="Kozel: without the two-lempas move (K4)")
    arena.add_argument("--save", metavar="DIR", help="write every match as a record into DIR")
    arena.add_argument("--json", action="store_true", help="print the figures as JSON")
    arena.add_argument("--quiet", action="store_true", help="no progress bar")
    arena.set_defaults(func=cmd_arena)
