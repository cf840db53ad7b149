"""The compiled engine against the pure-Python one: the same figures, in processes taking turns.

docs/engine.md, "Compiled build". Each run is a fresh process, alternately with
``DOMENG_PURE_ENGINE=1`` (pure) and without it (compiled, when ``scripts/compile_engine.py`` has
built it), for ``--runs`` pairs; printed are the medians and their ratio. Figures divide by the
process's CPU time (``time.process_time``), so waiting for a core another process holds counts
against neither side:

- the hard bot's worlds per second: `engine.bots.hard.world_losses` with a fixed number of worlds
  (``--worlds``) on ``--positions`` positions of greedy play (`benchmarks/bots.py`'s), Domeng and
  Kozel with 4 seats;
- a medium decision and one seat's ``player_view(...).to_json()``, in microseconds, on the same
  positions;
- random legal actions per second in Domeng matches.

Usage: ``python benchmarks/engine_build.py [--runs 3] [--positions 60] [--worlds 40] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

VARIANTS = ("domeng", "kozel:4")
RANDOM_PLAY_SECONDS = 1.5


def measure(positions_per_variant: int, worlds: int) -> dict[str, Any]:
    """One process's figures (see the module docstring), keyed by name; ``build`` names the build."""
    from bots import parse_variant, positions  # noqa: PLC0415

    import engine  # noqa: PLC0415  (imported here: the parent process measures nothing)
    from engine.bots import make_bot  # noqa: PLC0415
    from engine.bots.hard import world_losses  # noqa: PLC0415
    from engine.core import Phase  # noqa: PLC0415
    from engine.variants import make_rules  # noqa: PLC0415
    from engine.views import player_view  # noqa: PLC0415

    clock = time.process_time
    out: dict[str, Any] = {"build": engine.BUILD}
    for variant in VARIANTS:
        states = positions(parse_variant(variant), positions_per_variant, 1)
        views = [player_view(state, state.to_act) for state in states]
        began, done = clock(), 0
        for view in views:
            done += len(world_losses(view, random.Random(5), samples=worlds)[0])
        out[f"{variant} hard worlds/s"] = done / (clock() - began)
        medium = make_bot("medium", random.Random(3))
        began = clock()
        for _ in range(20):
            for view in views:
                medium.choose(view)
        out[f"{variant} medium µs"] = (clock() - began) / (20 * len(views)) * 1e6
        began, built = clock(), 0
        for _ in range(20):
            for state in states:
                for seat in range(state.seats):
                    player_view(state, seat).to_json()
                    built += 1
        out[f"{variant} view JSON µs"] = (clock() - began) / built * 1e6
    rules, rng, actions = make_rules("domeng", {}, None), random.Random(1), 0
    began = clock()
    while clock() - began < RANDOM_PLAY_SECONDS:
        state = rules.new_match()
        while state.phase is not Phase.OVER:
            state.start_round(rules.deal(rng))
            while state.phase is Phase.PLAYING:
                state.apply(rng.choice(state.legal_actions()))
                actions += 1
    out["domeng random actions/s"] = actions / (clock() - began)
    return out


def run(pure: bool, positions_per_variant: int, worlds: int) -> dict[str, Any]:
    env = {**os.environ, "DOMENG_PURE_ENGINE": "1" if pure else "0"}
    args = [sys.executable, __file__, "--child", str(positions_per_variant), str(worlds)]
    done = subprocess.run(args, env=env, capture_output=True, text=True, check=True, cwd=ROOT)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(measure(int(sys.argv[2]), int(sys.argv[3]))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="pure/compiled pairs (default 3)")
    parser.add_argument("--positions", type=int, default=60, help="positions per variant (default 60)")
    parser.add_argument("--worlds", type=int, default=40, help="hard bot worlds per position (default 40)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    load_before = os.getloadavg()
    runs: dict[str, list[dict[str, Any]]] = {"pure": [], "compiled": []}
    for _ in range(args.runs):
        for pure in (True, False):
            result = run(pure, args.positions, args.worlds)
            runs[result["build"]].append(result)
    if not runs["compiled"]:
        sys.exit("no compiled build to compare (scripts/compile_engine.py)")
    names = [name for name in runs["pure"][0] if name != "build"]
    table = {
        name: {build: statistics.median(r[name] for r in runs[build]) for build in ("pure", "compiled")}
        for name in names
    }
    for name, figures in table.items():
        time_per = name.endswith("µs")
        figures["ratio"] = (
            figures["pure"] / figures["compiled"] if time_per else figures["compiled"] / figures["pure"]
        )
    if args.json:
        print(json.dumps({"load_before": load_before, "load_after": os.getloadavg(), "figures": table}))
        return
    print(f"engine build · Python {sys.version.split()[0]} · {args.runs} pairs, CPU time, medians")
    print(f"load average before {load_before[0]:.2f}, after {os.getloadavg()[0]:.2f}")
    print(f"{'figure':32} {'pure':>12} {'compiled':>12} {'gain':>7}")
    for name, figures in table.items():
        print(f"{name:32} {figures['pure']:12,.1f} {figures['compiled']:12,.1f} {figures['ratio']:6.2f}x")


if __name__ == "__main__":
    main()
