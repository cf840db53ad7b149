"""The store's writes per second with and without fencing tokens (docs/cluster.md, issue 15).

``--rooms`` rooms each append ``--actions`` actions, awaited one after another per room and all the
rooms at once, through one `app.store.Store` (its writer's group commit puts the rooms' actions in
shared transactions). ``--fence none`` writes without tokens (one process, no Redis: no check);
``token`` writes every action under a token (several processes: each batch reads and locks its
matches' fences). The rows are left in the database (room codes ``bench-…``). The machine is shared:
run both modes several times, interleaved, and compare medians.

Usage: ``python benchmarks/store_fence.py [--fence none|token] [--rooms 50] [--actions 200]
[--database-url URL]`` (default: a SQLite file in a temporary directory).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from app.store import SeatSpec, Store, sqlite_url
from engine.hashing import commitment_of
from engine.variants import make_rules


async def measure(url: str, fence: int | None, rooms: int, actions: int) -> tuple[float, int]:
    """Actions stored per second, and the write transactions it took."""
    deal = make_rules("domeng").deal_from_seed("s")
    dealt: dict[str, Any] = {
        "hands": [[str(t) for t in hand] for hand in deal.hands],
        "rest": [str(t) for t in deal.rest],
    }
    async with Store(url) as store:
        owner = store if fence is None else store.fenced(fence)  # a room's writes under a lease, or not
        ids = []
        for _ in range(rooms):
            code = f"bench-{uuid.uuid4().hex[:12]}"
            seats = [SeatSpec()] * 5
            match_id = await owner.create_match(code, "domeng", {}, 5, 30.0, "h", seats)
            await owner.start_round(match_id, 0, "s", commitment_of("s"), dealt, 1)
            ids.append(match_id)

        async def play(match_id: int) -> None:
            for seq in range(actions):
                action = {"seat": seq % 5, "pass": True}
                await owner.append_action(match_id, 0, seq, seq + 2, seq % 5, action, "bot")

        before = store.transactions_committed
        started = time.perf_counter()
        await asyncio.gather(*(play(m) for m in ids))
        took = time.perf_counter() - started
        return rooms * actions / took, store.transactions_committed - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fence", choices=("none", "token"), default="none")
    parser.add_argument("--rooms", type=int, default=50)
    parser.add_argument("--actions", type=int, default=200)
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    url = args.database_url or sqlite_url(Path(tempfile.mkdtemp()))
    fence = 1 if args.fence == "token" else None
    rate, transactions = asyncio.run(measure(url, fence, args.rooms, args.actions))
    print(f"fence={args.fence}: {rate:.0f} actions/s in {transactions} transactions")


if __name__ == "__main__":
    main()
