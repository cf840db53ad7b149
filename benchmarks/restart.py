"""Start-up time and memory against stored history (issue 13): does a restart grow with it?

For each size (stored actions in unfinished matches: none, 10k, 100k and 1M by default) this writes a
fresh SQLite database of Domeng matches without an end (``camat_target`` 0, five random bots,
every round's deal from a seed and its commitment, every action legal: the engine plays them),
each stopped in the middle of a round, with bulk inserts (no server involved). Then it starts
``domeng serve`` on it and measures:

- ``ready_s``: from the process's start to ``/readyz`` answering 200;
- ``rss_ready_mb``: the server's resident memory then (``VmRSS``, bot workers not counted);
- ``open_ms``: the median time to open one match's room (``GET /api/rooms/{code}``: the room is
  loaded from the store then, its last two rounds replayed) and ``rss_open_mb`` once every
  match's room is open.

    .venv/bin/python benchmarks/restart.py [--sizes 10000,100000,1000000] [--matches 100]

Prints one JSON object per size, and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import create_engine, insert

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.rooms.recovery import round_end  # noqa: E402
from app.rooms.seats import hash_token  # noqa: E402
from app.store import upgrade_database  # noqa: E402
from app.store.models import Match, MatchAction, MatchTurn, Round, Seat, Tally  # noqa: E402
from engine.core import Phase  # noqa: E402
from engine.deal_json import deal_to_json  # noqa: E402
from engine.hashing import commitment_of  # noqa: E402
from engine.variants import make_rules  # noqa: E402

OPTIONS = {"camat_target": 0}


def generate(path: Path, actions: int, matches: int, rng: random.Random) -> list[str]:
    """Write ``matches`` unfinished Domeng matches holding ``actions`` actions in all into the
    SQLite database at ``path``; their room codes."""
    url = f"sqlite+aiosqlite:///{path}"
    upgrade_database(url)
    if not actions:
        return []  # the baseline: an empty database
    engine = create_engine(f"sqlite:///{path}")
    rules = make_rules("domeng", OPTIONS, 5)
    now = datetime.now(UTC)
    codes = []
    per_match = actions // matches
    with engine.begin() as db:
        for match_id in range(1, matches + 1):
            code = secrets.token_urlsafe(16)
            codes.append(code)
            rounds, acts, tallies = [], [], []
            state = rules.new_match(None)
            version, stored = 1, 0  # version 1: the start (bots in every seat, first deal)
            while stored < per_match:
                seed = secrets.token_hex(32)
                deal = rules.deal_from_seed(seed)
                state.start_round(deal)
                index = state.round_index - 1
                version += 0 if index == 0 else 1
                rounds.append(
                    {
                        "match_id": match_id,
                        "index": index,
                        "seed": seed,
                        "commitment": commitment_of(seed),
                        "deal": deal_to_json(deal),
                        "started_at": now,
                        "ended_at": None,
                        "outcome": None,
                        "table_after": None,
                    }
                )
                seq = 0
                while state.phase is Phase.PLAYING and stored < per_match:
                    action = rng.choice(state.legal_actions())
                    state.apply(action)
                    version += 1
                    stored += 1
                    acts.append(
                        {
                            "match_id": match_id,
                            "round_index": index,
                            "seq": seq,
                            "version": version,
                            "seat": action.seat,
                            "action": action.to_json(),
                            "actor": "bot",
                            "created_at": now,
                        }
                    )
                    seq += 1
                if state.phase is not Phase.PLAYING:
                    end = round_end(state)
                    rounds[-1].update(ended_at=now, outcome=end.outcome, table_after=end.table_after)
                    tallies += [
                        {
                            "match_id": match_id,
                            "round_index": index,
                            "seat": t.seat,
                            "stones": t.stones,
                            "received": t.received,
                            "paid": t.paid,
                            "points": t.points,
                            "pending": t.pending,
                        }
                        for t in end.tallies
                    ]
                    state.forget_rounds(1)
            db.execute(
                insert(Match),
                [
                    {
                        "id": match_id,
                        "code": code,
                        "variant": "domeng",
                        "options": OPTIONS,
                        "seat_count": 5,
                        "status": "playing",
                        "turn_timer_s": 0.0,
                        "start": None,
                        "created_at": now,
                        "started_at": now,
                        "finished_at": None,
                        "host_token_hash": hash_token(secrets.token_urlsafe(32)),
                    }
                ],
            )
            db.execute(insert(MatchTurn), [{"match_id": match_id, "version": version}])
            db.execute(
                insert(Seat),
                [
                    {
                        "match_id": match_id,
                        "seat": s,
                        "name": None,
                        "kind": "bot",
                        "bot_level": "random",
                        "token_hash": None,
                        "updated_at": now,
                    }
                    for s in range(5)
                ],
            )
            db.execute(insert(Round), rounds)
            for at in range(0, len(acts), 5000):
                db.execute(insert(MatchAction), acts[at : at + 5000])
            if tallies:
                db.execute(insert(Tally), tallies)
    engine.dispose()
    return codes


def rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` in MiB (``VmRSS``)."""
    text = Path(f"/proc/{pid}/status").read_text()
    found = re.search(r"^VmRSS:\s+(\d+) kB", text, re.MULTILINE)
    assert found
    return int(found.group(1)) / 1024


def measure(data_dir: Path, codes: list[str]) -> dict[str, Any]:
    """Start ``domeng serve`` on ``data_dir`` and measure it (see the module docstring)."""
    log = (data_dir / "server.log").open("wb")
    env = {
        **os.environ,
        "DOMENG_BOT_DELAY_S": "0.7",
        "DOMENG_LOG_JSON": "true",
        "DOMENG_READ_LIMIT": "100000 per minute",  # one address opens every room
        "DOMENG_SOCKET_LIMIT": "100000 per minute",
    }
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve", "--port", "0", "--data-dir", str(data_dir)],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        url = ""
        while True:
            if proc.poll() is not None:
                raise RuntimeError((data_dir / "server.log").read_text()[-3000:])
            if not url:
                found = re.search(r"running on (http://[\d.]+:\d+)", (data_dir / "server.log").read_text())
                url = found.group(1) if found else ""
            if url:
                try:
                    if httpx.get(f"{url}/readyz", timeout=5).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
            time.sleep(0.01)
        ready_s = time.perf_counter() - started
        rss_ready = rss_mb(proc.pid)
        opens = []
        with httpx.Client(base_url=url, timeout=60) as http:
            for code in codes:
                at = time.perf_counter()
                reply = http.get(f"/api/rooms/{code}")
                opens.append((time.perf_counter() - at) * 1000)
                assert reply.status_code == 200 and reply.json()["status"] == "playing", reply.text
        return {
            "ready_s": round(ready_s, 2),
            "rss_ready_mb": round(rss_ready, 1),
            "open_ms": round(statistics.median(opens), 1) if opens else None,
            "open_max_ms": round(max(opens), 1) if opens else None,
            "rss_open_mb": round(rss_mb(proc.pid), 1),
        }
    finally:
        proc.terminate()
        proc.wait(15)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", default="0,10000,100000,1000000", help="stored actions, comma-separated (0: empty)"
    )
    parser.add_argument("--matches", type=int, default=100, help="unfinished matches holding them")
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    for size in [int(s) for s in args.sizes.split(",")]:
        with tempfile.TemporaryDirectory(prefix="domeng-restart-") as tmp:
            data_dir = Path(tmp)
            at = time.perf_counter()
            codes = generate(data_dir / "domeng.sqlite3", size, args.matches, rng)
            generated_s = time.perf_counter() - at
            figures = measure(data_dir, codes)
            db_mb = (data_dir / "domeng.sqlite3").stat().st_size / 2**20
            print(
                json.dumps(
                    {
                        "stored_actions": size,
                        "matches": args.matches,
                        "db_mb": round(db_mb, 1),
                        "generated_s": round(generated_s, 1),
                        **figures,
                        "loadavg": [round(x, 2) for x in os.getloadavg()],
                    }
                ),
                flush=True,
            )


if __name__ == "__main__":
    main()
