"""`/metrics` of the move's metrics (`app.metrics.Hot`: `Tally`, `Spread`) is the text the
library's own `Counter` and `Histogram` give for the same observations, ``_created`` series
included or left out as the library's are (``PROMETHEUS_DISABLE_CREATED_SERIES``)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import prometheus_client
import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.openmetrics.exposition import generate_latest as openmetrics_latest

from app.metrics import Hot, Spread, Tally

BUCKETS = (0.001, 0.002, 0.005, 1.0, 2.0)
AMOUNTS = (0.0, 1e-9, 0.001, 0.0010000001, 0.002, 0.5, 1.0, 3.5)


def _texts(created: bool) -> tuple[list[str], list[str]]:
    """The library's text and `Hot`'s, in both formats, for the same observations; each
    ``_created`` timestamp as ``T`` (the two are made at different instants)."""
    if not created:
        prometheus_client.disable_created_metrics()
    library, ours = CollectorRegistry(), CollectorRegistry()
    counter = Counter("moves", "Moves stored", registry=library)
    histogram = Histogram("commit_seconds", "One commit", buckets=BUCKETS, registry=library)
    tally, spread = Tally("moves", "Moves stored"), Spread("commit_seconds", "One commit", BUCKETS)
    ours.register(Hot([tally, spread]))
    for amount in AMOUNTS:
        counter.inc()
        tally.inc()
        histogram.observe(amount)
        spread.observe(amount)

    def text(registry: CollectorRegistry) -> list[str]:
        both = generate_latest(registry) + openmetrics_latest(registry)
        return [re.sub(r"_created (\S+)$", "_created T", line) for line in both.decode().splitlines()]

    return text(library), text(ours)


@pytest.fixture(autouse=True)
def _created_series_back() -> Iterator[None]:
    yield
    prometheus_client.enable_created_metrics()


def test_the_hot_metrics_read_as_the_librarys_own() -> None:
    library, ours = _texts(created=True)
    assert ours == library
    assert "moves_created T" in ours


def test_without_created_series_the_hot_metrics_have_none_either() -> None:
    library, ours = _texts(created=False)
    assert ours == library
    assert not [line for line in ours if "_created" in line]
