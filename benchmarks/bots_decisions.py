"""Every bot level's decisions on seeded positions, recorded to JSON or compared with a recording.

A refactoring of the bots must not change what they do: record on the old code, then compare on
the new. Positions come from seeded play (easy, medium and greedy bots mixed, so logs hold passes,
draws and every kind of move) of Domeng and of Kozel with 2, 3 and 4 seats, with pairs and without
the two-lempas move, over several rounds of a match (first rounds and later ones); every position
where the seat to act has a choice is a candidate and ``--positions`` of them per variant are
drawn (seeded). On each, every level of `engine.bots.BOTS` (hard with a fixed ``samples``, so no
clock is read) and the omniscient bot decide with a fresh rng seeded by the position and the level.
Recorded per position and level: the action, and the bot's next rng draw (the rng must be used
alike, too). For the hard bot also its per-world losses and weights (`world_losses`), and the
medium heuristic's score of every legal action, as exact floats.

Usage: ``python benchmarks/bots_decisions.py record FILE`` on the old code, then
``python benchmarks/bots_decisions.py compare FILE`` on the new (exit status 1 on a difference;
the first differences are printed). Options: ``--positions 80`` per variant, ``--samples 6``
worlds for the hard bot, ``--seed 0``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.bots import BOTS, MEASUREMENT_BOTS
from engine.bots.hard import world_losses
from engine.bots.medium import score_actions, situation_of
from engine.core import Phase, State
from engine.rules.base import Rules
from engine.variants import make_rules
from engine.views import player_view

VARIANTS: dict[str, tuple[str, dict[str, object], int | None]] = {
    "domeng": ("domeng", {}, None),
    "kozel:2": ("kozel", {}, 2),
    "kozel:3": ("kozel", {}, 3),
    "kozel:4": ("kozel", {}, 4),
    "kozel:pairs": ("kozel", {"pairs": True}, 4),
    "kozel:4:no_two_lempas": ("kozel", {"two_lempas": False}, 4),
}
"""The variants the positions come from, by a label: (name, RECORD.md options, seats)."""

PLAYING_LEVELS = ("easy", "medium", "greedy")


def positions(rules: Rules, count: int, seed: int) -> list[State]:
    """``count`` positions with a choice, drawn from seeded play of ``rules`` (rounds of up to
    six per match, so later rounds come too)."""
    rng = random.Random(seed)
    found: list[State] = []
    while len(found) < 4 * count:
        state = rules.new_match()
        bots = [
            BOTS[rng.choice(PLAYING_LEVELS)](random.Random(rng.getrandbits(64))) for _ in range(rules.seats)
        ]
        for _ in range(6):
            if state.phase is Phase.OVER:
                break
            state.start_round(rules.deal(rng))
            while state.phase is Phase.PLAYING:
                seat = state.to_act
                view = player_view(state, seat)
                if len(view.legal) > 1:
                    found.append(state.fork())
                state.apply(bots[seat].choose(view))
    return rng.sample(found, count)


def decisions(state: State, index: str, samples: int) -> dict[str, Any]:
    """Every level's decision on ``state`` (not changed), with what else is recorded (module doc)."""
    seat = state.to_act
    view = player_view(state, seat)
    out: dict[str, Any] = {}
    for level, kind in BOTS.items():
        rng = random.Random(f"{index}/{level}")
        bot = kind(rng, samples=samples) if level == "hard" else kind(rng)  # type: ignore[call-arg]
        action = bot.choose(view)
        out[level] = [action.to_json(), rng.getrandbits(32)]
    for level, make in MEASUREMENT_BOTS.items():
        rng = random.Random(f"{index}/{level}")
        seeing = make(rng, samples=2)
        out[level] = [seeing.choose_seeing(state.fork(), seat).to_json(), rng.getrandbits(32)]
    rows, weights = world_losses(view, random.Random(f"{index}/worlds"), samples)
    out["worlds"] = [rows, weights]
    out["medium_scores"] = score_actions(situation_of(view), view.legal)
    return out


def record(count: int, samples: int, seed: int) -> dict[str, Any]:
    """Per variant label, per position index: `decisions`."""
    out: dict[str, Any] = {}
    for label, (name, options, seats) in VARIANTS.items():
        rules = make_rules(name, options, seats)
        out[label] = [
            decisions(state, f"{label}/{i}", samples) for i, state in enumerate(positions(rules, count, seed))
        ]
    return out


def differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Each position and entry where ``new`` differs from ``old``, as text."""
    found = []
    for label in sorted(set(old) | set(new)):
        before, after = old.get(label, []), new.get(label, [])
        if len(before) != len(after):
            found.append(f"{label}: {len(before)} positions before, {len(after)} after")
        for i, (a, b) in enumerate(zip(before, after, strict=False)):
            for key in sorted(set(a) | set(b)):
                if a.get(key) != b.get(key):
                    found.append(f"{label}/{i} {key}: {a.get(key)!r:.120} -> {b.get(key)!r:.120}")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("record", "compare"))
    parser.add_argument("file", type=Path)
    parser.add_argument("--positions", type=int, default=80, help="positions per variant (default 80)")
    parser.add_argument("--samples", type=int, default=6, help="the hard bot's worlds (default 6)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    now = json.loads(json.dumps(record(args.positions, args.samples, args.seed)))
    total = sum(len(v) for v in now.values())
    if args.mode == "record":
        args.file.write_text(json.dumps(now), encoding="utf-8")
        print(f"recorded {total} positions to {args.file}")
        return
    found = differences(json.loads(args.file.read_text(encoding="utf-8")), now)
    for line in found[:40]:
        print(line)
    print(f"{total} positions, {len(found)} differences")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
