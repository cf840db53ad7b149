"""Bot decisions off the event loop: `WorkerBots`, the rooms' `BotPort` over worker processes."""

from __future__ import annotations

from app.bots.workers import FALLBACK_LEVEL, SEARCHING_LEVELS, WorkerBots, decide_in_process

__all__ = ["FALLBACK_LEVEL", "SEARCHING_LEVELS", "WorkerBots", "decide_in_process"]
