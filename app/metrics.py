"""Prometheus metrics of one server: rooms, connections, actions, action-to-broadcast latency, the
store's write transactions (duration and writes per transaction), and bot decisions (time by level,
in-process fallbacks).

The metrics a move or a store transaction updates (``domeng_actions``, the broadcast latency, the
store's commit time and batch size) are plain counters (`Tally`, `Spread`) that a custom collector
(`Hot`) turns into the library's metric families when ``/metrics`` is read: the library's own
`Counter.inc` and `Histogram.observe` take a lock and check the metric on every call, a measurable
share of a move's event-loop CPU (issue 15, `benchmarks/room_moves.py`). The text served is the
same: the same names, types, samples and order. They are updated on the event loop's thread only.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Iterable, Sequence

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client import metrics as library
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.samples import Sample
from prometheus_client.utils import floatToGoString

__all__ = ["Hot", "Metrics", "Spread", "Tally", "created_series"]


def created_series() -> bool:
    """Whether the library's own metrics export their ``_created`` series now: not when
    ``PROMETHEUS_DISABLE_CREATED_SERIES`` is true or after `prometheus_client.disable_created_metrics`
    (read at each scrape, as the library reads it), so `Hot`'s metrics follow the others'."""
    return bool(library._use_created)


class Tally:
    """A counter without labels (``name`` as the library's `Counter` names it, without ``_total``),
    counted in a plain number; exported by `Hot`."""

    def __init__(self, name: str, documentation: str) -> None:
        self.name, self.documentation = name, documentation
        self.value = 0.0
        self.created = time.time()

    def inc(self, amount: float = 1.0) -> None:
        """Add ``amount`` (at least 0)."""
        self.value += amount

    def family(self) -> Metric:
        """The counter as the library's `Counter` exports it (``_total``, ``_created`` unless
        `created_series` says no)."""
        created = self.created if created_series() else None
        return CounterMetricFamily(self.name, self.documentation, value=self.value, created=created)


class Spread:
    """A histogram without labels over ``buckets`` (upper bounds, ascending; ``+Inf`` is added), kept
    as plain counts; exported by `Hot` as the library's `Histogram` would be."""

    def __init__(self, name: str, documentation: str, buckets: Sequence[float]) -> None:
        self.name, self.documentation = name, documentation
        self.bounds = [float(b) for b in buckets]
        self.counts = [0] * (len(self.bounds) + 1)  # the last: above every bound (+Inf)
        self.sum = 0.0
        self.created = time.time()

    def observe(self, amount: float) -> None:
        """Count one observation of ``amount`` in the first bucket whose bound it does not exceed."""
        self.sum += amount
        self.counts[bisect.bisect_left(self.bounds, amount)] += 1

    def family(self) -> Metric:
        """The histogram's samples: cumulative buckets, ``_count``, ``_sum``, ``_created`` (unless
        `created_series` says no)."""
        cumulative, total = [], 0.0
        for bound, count in zip([*self.bounds, float("inf")], self.counts, strict=True):
            total += count
            cumulative.append((floatToGoString(bound), total))  # type: ignore[no-untyped-call]
        family = HistogramMetricFamily(self.name, self.documentation, buckets=cumulative, sum_value=self.sum)
        if created_series():
            family.samples.append(Sample(f"{self.name}_created", {}, self.created))
        return family


class Hot(Collector):
    """The collector of ``metrics`` (`Tally`, `Spread`), read at each scrape."""

    def __init__(self, metrics: Iterable[Tally | Spread]) -> None:
        self.metrics = list(metrics)

    def collect(self) -> Iterable[Metric]:
        """Each metric's family, as it is now."""
        return [metric.family() for metric in self.metrics]

    def describe(self) -> Iterable[Metric]:
        """The families, so the registry checks their names on registering (as for its own)."""
        return self.collect()


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
        self.actions = Tally("domeng_actions", "Actions applied and stored (rate: actions per second)")
        self.latency = Spread(
            "domeng_action_broadcast_seconds",
            "From an action's arrival to its update queued for every recipient, stored in between",
            buckets=(0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0),
        )
        self.store_commit = Spread(
            "domeng_store_commit_seconds",
            "One write transaction of the store's writer, from BEGIN to COMMIT (group commit)",
            buckets=(0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0),
        )
        self.store_batch = Spread(
            "domeng_store_batch_writes",
            "Writes committed together in one transaction",
            buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500),
        )
        self.registry.register(Hot([self.actions, self.latency, self.store_commit, self.store_batch]))
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
