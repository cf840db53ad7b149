"""``GET /readyz``'s check, shared: anyone may ask it (nginx passes it on, a load balancer polls it),
so however many ask at once, one process runs one database check at a time.

Each ask used to run its own ``SELECT 1`` on a read connection (with PostgreSQL, a pinged one: four
round trips). One client asking sixty at once held all fifteen of a process's read connections
(the pool's 5 and its overflow of 10), so a player's room load, the lobby's "Your tables" and the
admin's pages queued behind them, and readiness itself could time out into a false 503 that a load
balancer would act on. Now the asks that come while a check runs wait for that check and share its
answer; an ask after it ends starts a new one, so the answer is never older than the ask's wait
(a database that just stopped answering is reported by the next check, as before)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

__all__ = ["SharedCheck"]


class SharedCheck:
    """``check`` (an async callable returning whether the server is ready; it must not raise) run
    for many askers, at most one at a time: an ask while it runs waits for its answer. An asker
    that is cancelled (its client went away) leaves the check running for the others."""

    def __init__(self, check: Callable[[], Awaitable[bool]]) -> None:
        self._check = check
        self._running: asyncio.Future[bool] | None = None
        self.checks = 0
        """How many times ``check`` was run."""

    async def __call__(self) -> bool:
        """Whether the server is ready: the running check's answer, else a new check's."""
        if self._running is None:
            self._running = asyncio.ensure_future(self._run())
        return await asyncio.shield(self._running)

    async def _run(self) -> bool:
        self.checks += 1
        try:
            return await self._check()
        finally:
            self._running = None
