"""Bots for the rooms: decisions in worker processes (`WorkerBots`), the pause before a move (`pause_s`)."""

from __future__ import annotations

from app.bots.pace import pause_s
from app.bots.workers import FALLBACK_LEVEL, WorkerBots, decide_in_process

__all__ = ["FALLBACK_LEVEL", "WorkerBots", "decide_in_process", "pause_s"]
