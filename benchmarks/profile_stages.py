"""Where a server's CPU goes under load (issue 15: "say where the rest goes, with a profile").

`benchmarks/load.py --profile DIR` samples each server it measures with py-spy (a sampling profiler
that reads the process from outside, so the server runs unchanged) over the measured window, writes
py-spy's collapsed stacks to ``DIR/<target>.txt`` and prints each server's busy samples by stage,
side by side. Samples whose innermost frame is a wait (the event loop's ``select``, an idle thread)
are left out; the shares are of the rest. py-spy samples every thread, so C code that releases the
GIL (SQLite's) counts, but so does a thread waiting to take the GIL back: the writer's thread and
its hand-offs are somewhat overstated beside the event loop's work.

A sample belongs to the stage of its innermost frame that names one (a frame is sent inside the
room's move, so its send counts as sending, not as the move); the frames are py-spy's
``function (file:line)`` with the file as py-spy shortens it (``views.py`` is engine/views.py).
Run alone on stack files: ``python benchmarks/profile_stages.py FILE…``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

__all__ = ["STAGES", "format_stages", "py_spy", "stages", "start_py_spy"]

STAGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    # the store: the writer's transaction (on the loop, or in its thread), and handing writes to
    # the thread and back
    (
        "store: transaction",
        ("SqliteThread._transaction", "SqliteThread._run_inline", "pg_transaction", "DefaultDialect.do_"),
    ),
    (
        "store: hand-off to the writer",
        (
            "run_in_executor",
            "SqliteThread.run (",
            "_hand_over (",
            "_call_set_state",
            "_read_from_self",
            "_WorkItem.run",
            "write_loop",
            "append_action",
        ),
    ),
    # the rules: each seat's view, applying a move (engine/ and the room's moves)
    ("views: each seat's view as JSON", ("shared_view_json", "PlayerView.to_json", "_view (views.py")),
    ("rules: apply the move", ("Moves.on_action", "Moves.on_auto")),
    # the socket both servers have, and a client's message
    ("send: WebSocket frames", ("WebSocket.send", "Protocol.send", "_write_now", "broadcast (")),
    (
        "receive: frames, parse, validate",
        ("data_received", "_next_message", "_action_of", "Room.act (", "WebSocket.receive"),
    ),
    ("room: the rest of its task", ("Room._run",)),
)
"""(stage, substrings of a frame); "other" takes a sample none of whose frames hold one."""

IDLE_LEAVES = (
    "EpollSelector.select",
    "_worker (",
    "Queue.get",
    "Condition.wait",
    "_connection_worker_thread",
    # the SQLite writer's thread waits for its next batch on a `queue.SimpleQueue` (C), under this
    "SqliteThread._serve (",
    # uvloop waits for its sockets in C, under Python's `Runner.run`: py-spy shows that frame as the
    # innermost one, and on some kernels (this machine's) reports the thread busy while it waits.
    # Work uvloop does in C outside any Python frame (dispatching ready sockets) is left out too.
    "Runner.run (",
    # the bots' process pool's manager thread waits on its pipes
    "_PollLikeSelector.select",
    "wait (multiprocessing/connection.py",
)


def py_spy() -> str | None:
    """The py-spy executable next to this Python, else on PATH; None when it is not installed."""
    beside = Path(sys.executable).with_name("py-spy")
    return str(beside) if beside.exists() else shutil.which("py-spy")


def start_py_spy(pid: int, seconds: float, output: Path, rate_hz: int = 100) -> subprocess.Popen[bytes]:
    """Sample process ``pid`` for ``seconds`` at ``rate_hz`` into ``output`` (collapsed stacks).
    Raises RuntimeError when py-spy is not installed (``pip install -e ".[dev]"``)."""
    exe = py_spy()
    if exe is None:
        raise RuntimeError("--profile needs py-spy: .venv/bin/pip install -e '.[dev]'")
    command = [exe, "record", "--pid", str(pid), "--duration", str(max(1, round(seconds)))]
    command += ["--rate", str(rate_hz), "--format", "raw", "--nonblocking", "--output", str(output)]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def stages(stacks: str) -> tuple[dict[str, float], int]:
    """The shares (0 to 1) of busy samples by stage, and the number of busy samples, of py-spy's
    collapsed stacks ``stacks`` (lines ``frame;frame;… count``)."""
    counts: Counter[str] = Counter()
    busy = 0
    for line in stacks.splitlines():
        stack, _, number = line.rstrip().rpartition(" ")
        if not stack or not number.isdigit():
            continue
        frames = stack.split(";")
        if frames[-1].startswith(IDLE_LEAVES):
            continue
        n = int(number)
        busy += n
        stage = next(
            (name for f in reversed(frames) for name, keys in STAGES if any(k in f for k in keys)), "other"
        )
        counts[stage] += n
    names = [name for name, _ in STAGES] + ["other"]
    return {name: counts[name] / busy if busy else 0.0 for name in names}, busy


def format_stages(columns: dict[str, tuple[dict[str, float], int]]) -> list[str]:
    """Lines of a table: a row per stage, a column per target (its shares in %), and the busy
    samples of each."""
    names = [name for name, _ in STAGES] + ["other"]
    widths = [max(12, len(target) + 2) for target in columns]
    cells = list(columns.values())
    lines = [
        f"{'profile: share of busy samples':40}"
        + "".join(f"{t:>{w}}" for t, w in zip(columns, widths, strict=True))
    ]
    for name in names:
        shares = (f"{100 * s[name]:.1f}%" for s, _ in cells)
        lines.append(f"{name:40}" + "".join(f"{x:>{w}}" for x, w in zip(shares, widths, strict=True)))
    lines.append(
        f"{'busy samples':40}" + "".join(f"{n:>{w}}" for (_, n), w in zip(cells, widths, strict=True))
    )
    return lines


def main(paths: list[str]) -> int:
    """Print the stages of each collapsed-stack file in ``paths``."""
    columns = {Path(p).stem: stages(Path(p).read_text()) for p in paths}
    print("\n".join(format_stages(columns)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
