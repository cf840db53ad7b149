"""What the relay adds (docs/cluster.md, issue 15): ``ping`` → ``pong`` round trips on a room's
socket, direct to the room's owner and relayed through another process (Redis pub/sub both ways).

Starts two ``domeng serve`` processes on the PostgreSQL and Redis of DOMENG_TEST_POSTGRES_URL and
DOMENG_TEST_REDIS_URL (the database is migrated first), creates a room on the first, then measures
``--pings`` round trips one after another on a spectator's socket to each, twice, interleaved.

Usage: ``python benchmarks/relay_rtt.py [--pings 300]``
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.store import upgrade_database  # noqa: E402
from tests.serverkit import Client, ServerProcess  # noqa: E402


def round_trips(server: ServerProcess, code: str, pings: int) -> list[float]:
    """``pings`` ping round trips (milliseconds, sorted) on a new spectator socket."""
    client = Client(server, code)
    client.wait_for(lambda m: m["type"] == "state")
    times = []
    for _ in range(pings):
        sent = time.perf_counter()
        client.send({"type": "ping"})
        client.wait_for(lambda m: m["type"] == "pong")
        times.append((time.perf_counter() - sent) * 1000)
    client.ws.close()
    return sorted(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pings", type=int, default=300)
    args = parser.parse_args()
    database_url = os.environ["DOMENG_TEST_POSTGRES_URL"]
    env = {
        "DOMENG_REDIS_URL": os.environ["DOMENG_TEST_REDIS_URL"],
        "DOMENG_BOT_WORKERS": "1",
        "DOMENG_RATE_LIMIT": "100000 per 1 second",
        # the room stays on its owner: the relayed socket is the only one in it while it is measured,
        # which would otherwise move the room there (docs/cluster.md, "Handoff")
        "DOMENG_ROOM_HANDOFF": "false",
    }
    upgrade_database(database_url)
    tmp = Path(tempfile.mkdtemp())
    owner = ServerProcess(tmp / "owner", env=env, database_url=database_url)
    other = ServerProcess(tmp / "other", env=env, database_url=database_url)
    owner.start()
    other.start()
    try:
        code = owner.create_room(bots=[None, "greedy", "greedy", "random", "greedy"], turn_timer_s=0)["code"]
        for name, server in (("direct", owner), ("relayed", other)) * 2:
            times = round_trips(server, code, args.pings)
            p50, p99 = times[len(times) // 2], times[int(len(times) * 0.99) - 1]
            print(f"{name:8} ping round trip p50 {p50:.2f} ms, p99 {p99:.2f} ms ({len(times)} pings)")
    finally:
        owner.stop()
        other.stop()


if __name__ == "__main__":
    main()
