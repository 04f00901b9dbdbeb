"""Compensated sums and means, the one place the engine's Kahan arithmetic lives.

Prometheus adds floats with Neumaier's variant of Kahan summation (``kahanSumInc`` in
promql/functions.go) in ``sum_over_time``, ``avg_over_time``, ``stddev_over_time``,
``deriv``/``predict_linear`` and, from 3.x on, in the ``sum`` and ``avg`` aggregations
(promql/engine.go ``aggregation``). The two releases the engine follows differ in one
step: 3.x drops the compensation once the running sum is infinite, 2.42 keeps adding to
it. Aggregations and range functions call the loops here, so a change to the arithmetic
is made once for both.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["kahan_inc", "kahan_inc_v3", "kahan_mean_v3", "kahan_mean_v3_steps", "kahan_sum"]

_INF = math.inf


def kahan_inc(inc: float, total: float, c: float) -> tuple[float, float]:
    """One step of ``kahanSumInc`` as Prometheus 2.42 has it."""
    t = total + inc
    if abs(total) >= abs(inc):
        c += (total - t) + inc
    else:
        c += (inc - t) + total
    return t, c


def kahan_inc_v3(inc: float, total: float, c: float) -> tuple[float, float]:
    """``kahanSumInc`` of Prometheus 3.x: the compensation resets once the sum is infinite."""
    t = total + inc
    if t in (_INF, -_INF):
        return t, 0.0
    if abs(total) >= abs(inc):
        c += (total - t) + inc
    else:
        c += (inc - t) + total
    return t, c


def kahan_sum(
    vs: Sequence[float], lo: int, hi: int, total: float, *, v3: bool
) -> tuple[float, float]:
    """``total`` plus ``vs[lo:hi]`` with ``kahanSumInc`` (of 3.x when ``v3``), step by step:
    the sum and its compensation term. The loop inlines ``kahanSumInc`` for speed."""
    c = 0.0
    for i in range(lo, hi):
        v = vs[i]
        t = total + v
        if v3 and t in (_INF, -_INF):
            c = 0.0
        elif abs(total) >= abs(v):
            c += (total - t) + v
        else:
            c += (v - t) + total
        total = t
    return total, c


def kahan_mean_v3(vs: Sequence[float], lo: int, hi: int) -> float:
    """The mean of ``vs[lo:hi]`` (not empty) as Prometheus 3.5 computes ``avg`` and
    ``avg_over_time``: ``kahan_mean_v3_steps``, with a fast path. A compensated sum that
    ends finite was never infinite (an infinite sum stays infinite or turns NaN), so then
    the mean is that sum over the count, as the steps would give; otherwise the samples
    are replayed step by step."""
    total, c = kahan_sum(vs, lo + 1, hi, vs[lo], v3=True)
    if math.isfinite(total):
        count = float(hi - lo)
        return total / count + c / count
    return kahan_mean_v3_steps(vs, lo, hi)


def kahan_mean_v3_steps(vs: Sequence[float], lo: int, hi: int) -> float:
    """The 3.5 mean step by step (``funcAvgOverTime``; ``aggregation``'s AVG case): a
    compensated sum divided by the count, switching to an incremental mean at the first
    sample that would make the sum infinite."""
    total = vs[lo]
    count = 1.0
    c = mean = 0.0
    incremental = False
    for i in range(lo + 1, hi):
        v = vs[i]
        count = float(i - lo + 1)
        if not incremental:
            new_total, new_c = kahan_inc_v3(v, total, c)
            if not math.isinf(new_total):
                total, c = new_total, new_c
                continue
            incremental = True
            mean = total / (count - 1)
            c /= count - 1
        q = (count - 1) / count
        mean, c = kahan_inc_v3(v / count, q * mean, q * c)
    if incremental:
        return mean + c
    return total / count + c / count
