"""What the browser client costs per state update: Chromium's CPU at a fast bot table.

A spectator's page (390x844 unless ``--viewport``; reduced motion unless ``--motion full``) watches
a table of bots that play as fast as the server lets them (``DOMENG_BOT_DELAY_S`` 0.05 unless
``--bot-delay``, a 0.3 s round pause, no camat target): Domeng with five ``greedy`` bots, Kozel with
four ``medium`` bots. Over ``--seconds`` the Chrome DevTools Protocol's Performance metrics give the
page's main-thread task, script, style and layout time, and /proc the CPU of every Chromium process
(the renderer's raster and compositor threads and the display compositor too: ``BrowserCPU``).
Divided by the state updates the page received (its ``version`` moved), they are milliseconds per
update. A phone spends the same work on every move at every table: less is battery and a page that
keeps up.

``--motion full`` measures what most players see, with the table's transitions and animations
running; give the bots a human pace (``--bot-delay 0.6``, say) so that each runs to its end before
the next move, as it does at a table of people.

With ``--baseline REV`` the same measurement runs on the client (and server) of a git revision, from
a temporary worktree, alternately with the current tree, ``--runs`` times each: the figures are
medians, and the ratio is current / baseline (the machine is shared: read them side by side).

    .venv/bin/python benchmarks/client_render.py [--baseline 7829539] [--runs 3] [--seconds 15]
        [--viewport 1280x800] [--motion full --bot-delay 0.6]

Needs Debian's Chromium (/usr/bin/chromium) and Playwright for Python. Prints one JSON object per
variant and tree, then the medians, the ratios and the load average.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
from load import pids_cpu_seconds  # benchmarks/load.py, beside this script
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
METRICS = ("TaskDuration", "ScriptDuration", "RecalcStyleDuration", "LayoutDuration")
"""The page's Performance metrics (main thread), reported per update with ``BrowserCPU`` beside."""
REPORTED = (*METRICS, "BrowserCPU")
TABLES: dict[str, dict[str, Any]] = {
    "domeng": {"bots": ["greedy"] * 5, "turn_timer_s": 0, "options": {"camat_target": 0}},
    "kozel": {"variant": "kozel", "seats": 4, "bots": ["medium"] * 4, "turn_timer_s": 0},
}


@contextlib.contextmanager
def server(tree: Path, bot_delay_s: float) -> Iterator[str]:
    """``domeng serve`` from ``tree`` on a free port with a fresh SQLite database, its bots pausing
    ``bot_delay_s`` seconds before each move; yields its URL."""
    with tempfile.TemporaryDirectory() as data:
        env = {
            **os.environ,
            "DOMENG_BOT_DELAY_S": str(bot_delay_s),
            "DOMENG_ROUND_PAUSE_S": "0.3",
            "PYTHONPATH": str(tree),
        }
        log = Path(data) / "server.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "app.cli", "serve", "--port", "0", "--data-dir", data],
                cwd=tree,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                found = re.search(r"running on (http://[\d.]+:\d+)", log.read_text(errors="replace"))
                if found:
                    break
                if proc.poll() is not None:
                    raise RuntimeError(log.read_text(errors="replace"))
                time.sleep(0.1)
            else:
                raise RuntimeError("the server did not start in 120 s")
            yield found.group(1)
        finally:
            proc.terminate()
            proc.wait(20)


def chromium_cpu_s() -> float:
    """CPU seconds (user + system) used so far by every live Chromium process on this machine: the
    renderers' raster and compositor threads and the GPU (display) process, not only the main thread
    that the Performance metrics see. Only this benchmark's browser should be running."""
    pids = []
    for comm in Path("/proc").glob("[0-9]*/comm"):
        with contextlib.suppress(OSError):
            if comm.read_text().startswith(("chromium", "chrome")):
                pids.append(int(comm.parent.name))
    return pids_cpu_seconds(pids)


def measure(
    playwright: Any,
    tree: Path,
    variant: str,
    seconds: float,
    viewport: dict[str, int],
    motion: str,
    bot_delay_s: float,
) -> dict[str, Any]:
    """One run: ms per update of each metric, the browser's whole CPU per update, and the updates
    seen. ``motion`` is ``reduce`` or ``full`` (the page's prefers-reduced-motion)."""
    with server(tree, bot_delay_s) as url:
        room = httpx.post(f"{url}/api/rooms", json=TABLES[variant], timeout=30).json()
        started = httpx.post(
            f"{url}/api/rooms/{room['code']}/start",
            headers={"Authorization": f"Bearer {room['host_token']}"},
            timeout=30,
        )
        started.raise_for_status()
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            context = browser.new_context(
                viewport=viewport, reduced_motion="reduce" if motion == "reduce" else "no-preference"
            )
            page = context.new_page()
            page.goto(f"{url}/r/{room['code']}")
            page.wait_for_selector(".table-screen", timeout=60_000)
            page.wait_for_timeout(2000)  # past the first rounds' start-up
            cdp = context.new_cdp_session(page)
            cdp.send("Performance.enable")

            def sample() -> tuple[dict[str, float], int]:
                metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
                return metrics, int(page.evaluate("() => window.__domeng.version"))

            before, first = sample()
            cpu_before = chromium_cpu_s()
            page.wait_for_timeout(seconds * 1000)
            cpu_after = chromium_cpu_s()
            after, last = sample()
        finally:
            browser.close()
    updates = max(1, last - first)
    result: dict[str, Any] = {"updates": last - first}
    for name in METRICS:
        result[f"{name}_ms"] = round((after[name] - before[name]) * 1000 / updates, 2)
    result["BrowserCPU_ms"] = round((cpu_after - cpu_before) * 1000 / updates, 2)
    result["nodes"] = int(after["Nodes"])
    return result


def worktree(rev: str) -> Path:
    """A detached worktree of ``rev`` in a temporary folder."""
    path = Path(tempfile.mkdtemp(prefix="client-render-")) / "tree"
    command = ["git", "worktree", "add", "--detach", str(path), rev]
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="a git revision to measure beside the current tree")
    parser.add_argument("--runs", type=int, default=3, help="runs of each tree and variant (default 3)")
    parser.add_argument("--seconds", type=float, default=15.0, help="measured seconds per run (default 15)")
    parser.add_argument("--variants", default="domeng,kozel")
    parser.add_argument(
        "--viewport", default="390x844", help="WIDTHxHEIGHT in CSS px (a phone; 1280x800 shows the feed)"
    )
    parser.add_argument(
        "--motion",
        choices=("reduce", "full"),
        default="reduce",
        help="the page's reduced motion (default reduce)",
    )
    parser.add_argument(
        "--bot-delay", type=float, default=0.05, help="bots' pause before a move, s (default 0.05)"
    )
    args = parser.parse_args()
    width, height = (int(n) for n in args.viewport.split("x"))
    viewport = {"width": width, "height": height}
    trees = {"current": ROOT}
    if args.baseline:
        trees["baseline"] = worktree(args.baseline)
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    try:
        with sync_playwright() as playwright:
            for _ in range(args.runs):
                for variant in args.variants.split(","):
                    for name, tree in trees.items():  # alternately: both see the same machine
                        run = measure(
                            playwright, tree, variant, args.seconds, viewport, args.motion, args.bot_delay
                        )
                        results.setdefault((variant, name), []).append(run)
                        print(json.dumps({"variant": variant, "tree": name, **run}), flush=True)
    finally:
        if "baseline" in trees:
            command = ["git", "worktree", "remove", "--force", str(trees["baseline"])]
            subprocess.run(command, cwd=ROOT, check=False)
    for variant in args.variants.split(","):
        medians = {
            name: {m: statistics.median(r[f"{m}_ms"] for r in results[(variant, name)]) for m in REPORTED}
            for name in trees
        }
        line: dict[str, Any] = {"variant": variant, "median_ms_per_update": medians}
        if "baseline" in trees:
            now, then = medians["current"], medians["baseline"]
            ratios = {m: round(now[m] / then[m], 2) if then[m] else None for m in REPORTED}
            line["ratio_current_to_baseline"] = ratios
        print(json.dumps(line))
    print(json.dumps({"load_average": os.getloadavg()}))


if __name__ == "__main__":
    main()
