"""Prometheus metrics of one server: rooms, connections, actions, action-to-broadcast latency, the
store's write transactions (duration and writes per transaction), and bot decisions (time by level,
in-process fallbacks)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

__all__ = ["Metrics"]


class Metrics:
    """The server's metrics in their own registry (served at ``/metrics``)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.rooms = Gauge("domeng_rooms", "Rooms in this process's memory", registry=self.registry)
        self.rooms_loaded = Counter(
            "domeng_rooms_loaded", "Rooms loaded from the store when opened", registry=self.registry
        )
        self.rooms_unloaded = Counter(
            "domeng_rooms_unloaded", "Idle rooms taken out of memory", registry=self.registry
        )
        self.connections = Gauge(
            "domeng_connections", "Open WebSocket connections in rooms", registry=self.registry
        )
        self.actions = Counter(
            "domeng_actions", "Actions applied and stored (rate: actions per second)", registry=self.registry
        )
        self.latency = Histogram(
            "domeng_action_broadcast_seconds",
            "From an action's arrival to its update queued for every recipient, stored in between",
            buckets=(0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0),
            registry=self.registry,
        )
        self.store_commit = Histogram(
            "domeng_store_commit_seconds",
            "One write transaction of the store's writer, from BEGIN to COMMIT (group commit)",
            buckets=(0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0),
            registry=self.registry,
        )
        self.store_batch = Histogram(
            "domeng_store_batch_writes",
            "Writes committed together in one transaction",
            buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500),
            registry=self.registry,
        )
        self.rejected = Counter(
            "domeng_rejected_frames",
            "Frames that closed a socket, by close code",
            ["code"],
            registry=self.registry,
        )

        self.bot_decisions = Histogram(
            "domeng_bot_decision_seconds",
            "A bot's decision, from asking the worker processes to the action back, by level",
            ["level"],
            buckets=(0.001, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0),
            registry=self.registry,
        )
        self.bot_fallbacks = Counter(
            "domeng_bot_fallbacks",
            "Bot decisions made in-process by the fallback level (a broken pool, a timeout, an error)",
            registry=self.registry,
        )

    def observe_bot(self, level: str, seconds: float, fallback: bool) -> None:
        """Record one bot decision of ``level`` that took ``seconds`` (`app.bots.WorkerBots`)."""
        self.bot_decisions.labels(level).observe(seconds)
        if fallback:
            self.bot_fallbacks.inc()

    def observe_commit(self, seconds: float, writes: int) -> None:
        """Record one store transaction: its duration (seconds) and its writes (`app.store.Store`)."""
        self.store_commit.observe(seconds)
        self.store_batch.observe(writes)
