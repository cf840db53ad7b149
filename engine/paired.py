"""Paired statistics for duplicate matches: a ratio of means with a one-sided bound, percentiles.

The arena compares, board by board, what a candidate received with what the field received in the
same seats on the same deals. Each board gives one pair ``(num_b, den_b)``; the figure of interest
is the ratio of the means ``R = mean(num) / mean(den)``. Its standard error comes from the delta
method: with ``z_b = num_b - R * den_b``, ``se(R) = stdev(z) / (sqrt(n) * |mean(den)|)``, and the
one-sided bounds at confidence ``c`` are ``R ± q(c) * se`` with ``q`` the normal quantile (2.326 at
99%). Boards are independent (their deals are seeded apart), so the per-board pairs are too.

>>> est = paired_ratio([2.0, 4.0, 6.0], [1.0, 2.0, 3.0])
>>> (est.ratio, est.upper, est.lower)
(2.0, 2.0, 2.0)
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["RatioEstimate", "paired_ratio", "percentiles"]


@dataclass(frozen=True, slots=True)
class RatioEstimate:
    """``ratio = mean_num / mean_den`` over ``n`` paired boards, its delta-method standard error
    ``se`` and the one-sided bounds ``upper`` and ``lower`` at ``confidence`` (e.g. 0.99)."""

    n: int
    mean_num: float
    mean_den: float
    ratio: float
    se: float
    upper: float
    lower: float
    confidence: float


def paired_ratio(num: Sequence[float], den: Sequence[float], confidence: float = 0.99) -> RatioEstimate:
    """The ratio of means of paired samples ``num[b]``, ``den[b]`` (one pair per board) with its
    one-sided ``confidence`` bounds by the delta method (module docstring).

    Raises ValueError when the lengths differ, there are fewer than 2 pairs, ``confidence`` is not
    in (0.5, 1), or the mean of ``den`` is 0 (no ratio).
    """
    n = len(num)
    if n != len(den):
        raise ValueError(f"paired samples must have one length, got {n} and {len(den)}")
    if n < 2:
        raise ValueError(f"a bound needs at least 2 pairs, got {n}")
    if not 0.5 < confidence < 1:
        raise ValueError(f"confidence must be in (0.5, 1), got {confidence}")
    mean_num, mean_den = statistics.fmean(num), statistics.fmean(den)
    if mean_den == 0:
        raise ValueError("the mean of the denominator is 0: no ratio")
    ratio = mean_num / mean_den
    spread = statistics.stdev([a - ratio * b for a, b in zip(num, den, strict=True)])
    se = spread / (math.sqrt(n) * abs(mean_den))
    margin = statistics.NormalDist().inv_cdf(confidence) * se
    return RatioEstimate(n, mean_num, mean_den, ratio, se, ratio + margin, ratio - margin, confidence)


def percentiles(samples: Sequence[float], levels: Sequence[int] = (50, 95, 99)) -> dict[str, float | None]:
    """``{"p50": …, "p95": …, "p99": …}`` of ``samples`` (statistics.quantiles, inclusive method);
    all None when there are none, the one value when there is one. ``levels`` are 1..99.

    >>> percentiles([1.0, 2.0, 3.0, 4.0, 5.0], (50,))
    {'p50': 3.0}
    """
    if not samples:
        return {f"p{level}": None for level in levels}
    if len(samples) == 1:
        return {f"p{level}": float(samples[0]) for level in levels}
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return {f"p{level}": cuts[level - 1] for level in levels}
