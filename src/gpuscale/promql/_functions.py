"""PromQL's functions on float samples, ported from promql/functions.go and promql/quantile.go.

Two versions are followed: Prometheus 2.42.0 (the Debian server the differential suite runs
against) and Prometheus 3.5.0 (the 3.x LTS; the default). Where they differ for float
samples, the function takes ``v3`` and both behaviours are here, each naming its source.

Range-vector functions receive one series' window as ``(ts, vs, lo, hi)``: parallel
timestamp/value sequences and the half-open index range ``[lo, hi)`` of the samples inside
the range (staleness markers already removed); they return a float or ``None`` where
Prometheus drops the series from the result.
"""

from __future__ import annotations

import calendar
import math
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from math import isnan
from typing import Any, NamedTuple

from gpuscale._gomath import go_ceil, go_div, go_floor
from gpuscale.promql._gofloat import safe_unary
from gpuscale.promql._kahan import kahan_inc, kahan_inc_v3, kahan_mean_v3, kahan_sum
from gpuscale.promql.labels import Labels

__all__ = [
    "BATCH_RANGE_FUNCTIONS",
    "DATE_FUNCTIONS",
    "RANGE_FUNCTIONS",
    "SIMPLE_FUNCTIONS",
    "BatchRangeFn",
    "Binding",
    "RangeFactory",
    "RangeFn",
    "Window",
    "bucket_quantile",
    "date_field",
    "extrapolated_rates",
    "go_max",
    "go_min",
    "quantile",
]

RangeFn = Callable[[Sequence[int], Sequence[float], int, int], float | None]
"""A range function bound to one evaluation: ``(ts, vs, lo, hi) -> value | None``."""

Window = tuple[Any, Sequence[int], Sequence[float], int, int]
"""One series' samples in a range: ``(series, ts, vs, lo, hi)``; ``series`` has ``labels``
and ``labels_noname``."""

_NAN = math.nan
_INF = math.inf
_UNIX_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def go_max(x: float, y: float) -> float:
    """``math.Max``: +Inf wins over NaN, NaN over everything else, +0 over -0."""
    if _INF in (x, y):
        return _INF
    if isnan(x) or isnan(y):
        return _NAN
    if x == 0 and x == y:
        return y if math.copysign(1.0, x) < 0 else x
    return x if x > y else y


def go_min(x: float, y: float) -> float:
    """``math.Min``: -Inf wins over NaN, NaN over everything else, -0 over +0."""
    if -_INF in (x, y):
        return -_INF
    if isnan(x) or isnan(y):
        return _NAN
    if x == 0 and x == y:
        return x if math.copysign(1.0, x) < 0 else y
    return x if x < y else y


def _sgn(v: float) -> float:
    if v < 0:
        return -1.0
    if v > 0:
        return 1.0
    return v


def _log_domain(x: float) -> float:
    return -_INF if x == 0 else _NAN


_INV_LN2 = 1.4426950408889634  # 1/Ln2 rounded once, as Go's constant expression is
_INV_LN10 = 0.4342944819032518  # 1/Ln10 likewise (1/math.log(10) would be one ulp off)
_log = safe_unary(math.log, _log_domain)


def _go_log2(x: float) -> float:
    """``math.Log2``: exact for powers of two, else ``Log(frac)/Ln2 + exp``."""
    if isnan(x) or x <= 0 or x == _INF:
        return _log(x)
    frac, exp = math.frexp(x)
    if frac == 0.5:
        return float(exp - 1)
    return _log(frac) * _INV_LN2 + float(exp)


def _go_log10(x: float) -> float:
    """``math.Log10``: ``Log(x) * (1/Ln10)``, not the correctly rounded C ``log10``."""
    return _log(x) * _INV_LN10


def _nan(_: float) -> float:
    return _NAN


def _atanh_domain(x: float) -> float:
    if x == 1:
        return _INF
    if x == -1:
        return -_INF
    return _NAN


def _signed_inf(x: float) -> float:
    return math.copysign(_INF, x)


SIMPLE_FUNCTIONS: dict[str, Callable[[float], float]] = {
    "abs": abs,
    "ceil": go_ceil,
    "floor": go_floor,
    "exp": safe_unary(math.exp, _nan),
    "sqrt": safe_unary(math.sqrt, _nan),
    "ln": _log,
    "log2": _go_log2,
    "log10": _go_log10,
    "sgn": _sgn,
    "sin": safe_unary(math.sin, _nan),
    "cos": safe_unary(math.cos, _nan),
    "tan": safe_unary(math.tan, _nan),
    "asin": safe_unary(math.asin, _nan),
    "acos": safe_unary(math.acos, _nan),
    "atan": safe_unary(math.atan, _nan),
    "sinh": safe_unary(math.sinh, _nan, _signed_inf),
    "cosh": safe_unary(math.cosh, _nan),
    "tanh": safe_unary(math.tanh, _nan),
    "asinh": safe_unary(math.asinh, _nan),
    "acosh": safe_unary(math.acosh, _nan),
    "atanh": safe_unary(math.atanh, _atanh_domain, _signed_inf),
    "deg": lambda v: v * 180 / math.pi,
    "rad": lambda v: v * math.pi / 180,
}
"""Instant-vector functions that map each value and drop the metric name (``simpleFunc``)."""


# --------------------------------------------------------------------------- dates


def _civil(seconds: int) -> datetime:
    try:
        return _UNIX_EPOCH + timedelta(seconds=seconds)
    except OverflowError:
        raise ValueError(f"timestamp {seconds} s is outside the years 1 to 9999") from None


def _days_in_month(d: datetime) -> float:
    return float(calendar.monthrange(d.year, d.month)[1])


DATE_FUNCTIONS: dict[str, Callable[[datetime], float]] = {
    "day_of_month": lambda d: float(d.day),
    "day_of_week": lambda d: float((d.weekday() + 1) % 7),
    "day_of_year": lambda d: float(d.timetuple().tm_yday),
    "days_in_month": _days_in_month,
    "hour": lambda d: float(d.hour),
    "minute": lambda d: float(d.minute),
    "month": lambda d: float(d.month),
    "year": lambda d: float(d.year),
}
"""Calendar fields of a Unix time in UTC (``dateWrapper``); Sunday is day 0 of the week."""


def date_field(name: str, unix_seconds: float) -> float:
    """``name`` of the UTC date at ``unix_seconds`` truncated toward zero, as Go's
    ``time.Unix(int64(v), 0).UTC()``. ``ValueError`` for NaN, ±Inf or years outside 1-9999,
    where Go's answer depends on its integer conversion of nonsense."""
    if isnan(unix_seconds) or math.isinf(unix_seconds):
        raise ValueError(f"{name}() of {unix_seconds} is not a time")
    return DATE_FUNCTIONS[name](_civil(int(unix_seconds)))


# --------------------------------------------------------------------------- rate & co


def extrapolated_rates(
    windows: Iterable[Window], b: Binding, *, is_counter: bool, is_rate: bool
) -> list[tuple[Labels, float]]:
    """``extrapolatedRate``: rate/increase/delta of each window with two samples or more,
    with counter resets and extrapolation to the range's ends, labelled without the name.

    It takes every window of one evaluation at once: ``rate`` over thousands of series is
    the hot path of autoscaling queries, and one call per evaluation instead of one per
    series keeps it as fast as an inlined loop. 2.42 clamps the start extrapolation at the
    counter's zero point before deciding whether to extrapolate to the range boundary; 3.x
    decides first, then clamps.
    """
    mint, maxt, v3 = b.mint, b.maxt, b.v3
    range_s = b.range_ms / 1000
    out: list[tuple[Labels, float]] = []
    append = out.append
    for s, ts, vs, lo, hi in windows:
        n = hi - lo
        if n < 2:
            continue
        first_v = vs[lo]
        result = vs[hi - 1] - first_v
        if is_counter:
            prev = first_v
            for i in range(lo + 1, hi):
                cur = vs[i]
                if cur < prev:
                    result += prev
                prev = cur
        first_t = ts[lo]
        last_t = ts[hi - 1]
        d_start = (first_t - mint) / 1000
        d_end = (maxt - last_t) / 1000
        sampled = (last_t - first_t) / 1000
        avg = sampled / (n - 1)
        threshold = avg * 1.1
        if v3:
            if d_start >= threshold:
                d_start = avg / 2
            if is_counter and result > 0 and first_v >= 0:
                to_zero = sampled * (first_v / result)
                d_start = min(d_start, to_zero)
            interval = sampled + d_start
            if d_end >= threshold:
                d_end = avg / 2
            interval += d_end
        else:
            if is_counter and result > 0 and first_v >= 0:
                to_zero = sampled * (first_v / result)
                d_start = min(d_start, to_zero)
            interval = sampled
            interval += d_start if d_start < threshold else avg / 2
            interval += d_end if d_end < threshold else avg / 2
        factor = interval / sampled
        if is_rate:
            factor /= range_s
        append((s.labels_noname, result * factor))
    return out


def _instant_value(*, is_rate: bool) -> RangeFn:
    """``instantValue``: irate/idelta from the last two samples."""

    def fn(ts: Sequence[int], vs: Sequence[float], lo: int, hi: int) -> float | None:
        if hi - lo < 2:
            return None
        last = vs[hi - 1]
        prev = vs[hi - 2]
        result = last if is_rate and last < prev else last - prev
        dt = ts[hi - 1] - ts[hi - 2]
        if dt == 0:
            return None
        if is_rate:
            result = go_div(result, dt / 1000)
        return result

    return fn


def _linear_regression(
    ts: Sequence[int], vs: Sequence[float], lo: int, hi: int, *, intercept_t: int, v3: bool
) -> tuple[float, float]:
    """``linearRegression``: least squares with compensated sums."""
    kahan = kahan_inc_v3 if v3 else kahan_inc
    n = 0.0
    sx = cx = sy = cy = sxy = cxy = sx2 = cx2 = 0.0
    init_y = vs[lo]
    const_y = True
    for i in range(lo, hi):
        y = vs[i]
        if const_y and i > lo and y != init_y:
            const_y = False
        n += 1.0
        x = (ts[i] - intercept_t) / 1e3
        sx, cx = kahan(x, sx, cx)
        sy, cy = kahan(y, sy, cy)
        sxy, cxy = kahan(x * y, sxy, cxy)
        sx2, cx2 = kahan(x * x, sx2, cx2)
    if const_y:
        if math.isinf(init_y):
            return _NAN, _NAN
        return 0.0, init_y
    sx += cx
    sy += cy
    sxy += cxy
    sx2 += cx2
    cov = sxy - go_div(sx * sy, n)
    var = sx2 - go_div(sx * sx, n)
    slope = go_div(cov, var)
    intercept = go_div(sy, n) - go_div(slope * sx, n)
    return slope, intercept


def _deriv(v3: bool) -> RangeFn:
    """``funcDeriv``: slope of the least-squares line, per second."""

    def fn(ts: Sequence[int], vs: Sequence[float], lo: int, hi: int) -> float | None:
        if hi - lo < 2:
            return None
        return _linear_regression(ts, vs, lo, hi, intercept_t=ts[lo], v3=v3)[0]

    return fn


def _predict_linear(eval_t: int, duration: float, v3: bool) -> RangeFn:
    """``funcPredictLinear``: the line's value ``duration`` s after the evaluation time."""

    def fn(ts: Sequence[int], vs: Sequence[float], lo: int, hi: int) -> float | None:
        if hi - lo < 2:
            return None
        slope, intercept = _linear_regression(ts, vs, lo, hi, intercept_t=eval_t, v3=v3)
        return slope * duration + intercept

    return fn


def _resets(ts: Sequence[int], vs: Sequence[float], lo: int, hi: int) -> float | None:
    """``funcResets``: decreases between consecutive samples."""
    count = 0
    prev = vs[lo]
    for i in range(lo + 1, hi):
        cur = vs[i]
        if cur < prev:
            count += 1
        prev = cur
    return float(count)


def _changes(ts: Sequence[int], vs: Sequence[float], lo: int, hi: int) -> float | None:
    """``funcChanges``: value changes, NaN to NaN not counted."""
    count = 0
    prev = vs[lo]
    for i in range(lo + 1, hi):
        cur = vs[i]
        if cur != prev and not (isnan(cur) and isnan(prev)):
            count += 1
        prev = cur
    return float(count)


def _holt_winters(sf: float, tf: float) -> RangeFn:
    """``funcHoltWinters`` of 2.42 (double exponential smoothing; gone from 3.x)."""

    def trend(i: int, s0: float, s1: float, b: float) -> float:
        if i == 0:
            return b
        return tf * (s1 - s0) + (1 - tf) * b

    def fn(ts: Sequence[int], vs: Sequence[float], lo: int, hi: int) -> float | None:
        if not 0 < sf < 1:
            raise ValueError(f"invalid smoothing factor. Expected: 0 < sf < 1, got: {sf:f}")
        if not 0 < tf < 1:
            raise ValueError(f"invalid trend factor. Expected: 0 < tf < 1, got: {tf:f}")
        if hi - lo < 2:
            return None
        s0 = 0.0
        s1 = vs[lo]
        b = vs[lo + 1] - vs[lo]
        for i in range(1, hi - lo):
            x = sf * vs[lo + i]
            b = trend(i - 1, s0, s1, b)
            y = (1 - sf) * (s1 + b)
            s0, s1 = s1, x + y
        return s1

    return fn


# --------------------------------------------------------------------------- *_over_time


def _avg_over_time_v2(ts: Sequence[int], vs: Sequence[float], lo: int, hi: int) -> float | None:
    """2.42: incremental mean with compensation, keeping an infinite mean."""
    mean = count = c = 0.0
    for i in range(lo, hi):
        v = vs[i]
        count += 1
        if math.isinf(mean):
            if math.isinf(v) and (mean > 0) == (v > 0):
                continue
            if not math.isinf(v) and not isnan(v):
                continue
        mean, c = kahan_inc(v / count - mean / count, mean, c)
    if math.isinf(mean):
        return mean
    return mean + c


def _avg_over_time_v3(ts: Sequence[int], vs: Sequence[float], lo: int, hi: int) -> float | None:
    """``funcAvgOverTime`` of 3.5: the compensated mean of ``_kahan.kahan_mean_v3``."""
    return kahan_mean_v3(vs, lo, hi)


def _count_over_time(ts: Sequence[int], vs: Sequence[float], lo: int, hi: int) -> float | None:
    """``funcCountOverTime``."""
    return float(hi - lo)


def _last_over_time(ts: Sequence[int], vs: Sequence[float], lo: int, hi: int) -> float | None:
    """``funcLastOverTime`` (keeps the metric name)."""
    return vs[hi - 1]


def _present_over_time(ts: Sequence[int], vs: Sequence[float], lo: int, hi: int) -> float | None:
    """``funcPresentOverTime``."""
    return 1.0


def _max_over_time(ts: Sequence[int], vs: Sequence[float], lo: int, hi: int) -> float | None:
    """``funcMaxOverTime``: NaN loses to any number."""
    best = vs[lo]
    for i in range(lo, hi):
        v = vs[i]
        if v > best or isnan(best):
            best = v
    return best


def _min_over_time(ts: Sequence[int], vs: Sequence[float], lo: int, hi: int) -> float | None:
    """``funcMinOverTime``: NaN loses to any number."""
    best = vs[lo]
    for i in range(lo, hi):
        v = vs[i]
        if v < best or isnan(best):
            best = v
    return best


def _sum_over_time(v3: bool) -> RangeFn:
    """``funcSumOverTime``: compensated sum."""

    def fn(ts: Sequence[int], vs: Sequence[float], lo: int, hi: int) -> float | None:
        total, c = kahan_sum(vs, lo, hi, 0.0, v3=v3)
        if math.isinf(total):
            return total
        return total + c

    return fn


def _variance(ts: Sequence[int], vs: Sequence[float], lo: int, hi: int, v3: bool) -> float:
    """``funcStdvarOverTime``'s compensated running variance (population)."""
    inc = kahan_inc_v3 if v3 else kahan_inc
    count = mean = c_mean = aux = c_aux = 0.0
    for i in range(lo, hi):
        v = vs[i]
        count += 1
        delta = v - (mean + c_mean)
        mean, c_mean = inc(delta / count, mean, c_mean)
        aux, c_aux = inc(delta * (v - (mean + c_mean)), aux, c_aux)
    return (aux + c_aux) / count


def _stdvar_over_time(v3: bool) -> RangeFn:
    """``funcStdvarOverTime``."""

    def fn(ts: Sequence[int], vs: Sequence[float], lo: int, hi: int) -> float | None:
        return _variance(ts, vs, lo, hi, v3)

    return fn


def _stddev_over_time(v3: bool) -> RangeFn:
    """``funcStddevOverTime``."""
    sqrt = safe_unary(math.sqrt, _nan)

    def fn(ts: Sequence[int], vs: Sequence[float], lo: int, hi: int) -> float | None:
        return sqrt(_variance(ts, vs, lo, hi, v3))

    return fn


def _quantile_over_time(q: float) -> RangeFn:
    """``funcQuantileOverTime``."""

    def fn(ts: Sequence[int], vs: Sequence[float], lo: int, hi: int) -> float | None:
        return quantile(q, [vs[i] for i in range(lo, hi)])

    return fn


def quantile(q: float, values: list[float]) -> float:
    """``quantile`` (promql/quantile.go): linear interpolation between closest ranks,
    NaNs sorted first as ``vectorByValueHeap`` does."""
    if not values or isnan(q):
        return _NAN
    if q < 0:
        return -_INF
    if q > 1:
        return _INF
    values.sort(key=lambda v: (not isnan(v), v if not isnan(v) else 0.0))
    n = float(len(values))
    rank = q * (n - 1)
    lower = max(0.0, math.floor(rank))
    upper = min(n - 1, lower + 1)
    weight = rank - math.floor(rank)
    return values[int(lower)] * (1 - weight) + values[int(upper)] * weight


# --------------------------------------------------------------------------- histogram


_MIN_NORMAL = 2.2250738585072014e-308


def _almost_equal(a: float, b: float, epsilon: float) -> bool:
    """``util/almost.Equal`` of Prometheus 3.x."""
    if isnan(a) and isnan(b):
        return True
    if a == b:
        return True
    abs_sum = abs(a) + abs(b)
    diff = abs(a - b)
    if a == 0 or b == 0 or abs_sum < _MIN_NORMAL:
        return diff < epsilon * _MIN_NORMAL
    return diff / min(abs_sum, 1.7976931348623157e308) < epsilon


def bucket_quantile(q: float, buckets: list[tuple[float, float]], *, v3: bool) -> float:
    """``bucketQuantile`` (2.42) / ``BucketQuantile`` (3.5) on classic ``(le, count)`` buckets."""
    if isnan(q):
        return _NAN
    if q < 0:
        return -_INF
    if q > 1:
        return _INF
    buckets.sort(key=lambda b: b[0])
    if buckets[-1][0] != _INF:
        return _NAN
    merged: list[list[float]] = []
    for upper, count in buckets:
        if merged and merged[-1][0] == upper:
            merged[-1][1] += count
        else:
            merged.append([upper, count])
    if v3:
        prev = merged[0][1]
        for bucket in merged[1:]:
            cur = bucket[1]
            if cur == prev:
                continue
            if _almost_equal(prev, cur, 1e-12) or cur < prev:
                bucket[1] = prev
                continue
            prev = cur
    else:
        top = merged[0][1]
        for bucket in merged[1:]:
            if bucket[1] > top:
                top = bucket[1]
            elif bucket[1] < top:
                bucket[1] = top
    if len(merged) < 2:
        return _NAN
    observations = merged[-1][1]
    if observations == 0:
        return _NAN
    rank = q * observations
    last = len(merged) - 1
    pos, j = 0, last
    while pos < j:
        h = (pos + j) >> 1
        if not merged[h][1] >= rank:
            pos = h + 1
        else:
            j = h
    b = pos
    if b == last:
        return merged[-2][0]
    if b == 0 and merged[0][0] <= 0:
        return merged[0][0]
    start = 0.0
    end = merged[b][0]
    count = merged[b][1]
    if b > 0:
        start = merged[b - 1][0]
        count -= merged[b - 1][1]
        rank -= merged[b - 1][1]
    return start + (end - start) * go_div(rank, count)


# --------------------------------------------------------------------------- registry


class Binding(NamedTuple):
    """What a range function needs to know about one evaluation."""

    mint: int
    maxt: int
    range_ms: int
    t: int
    v3: bool
    scalars: tuple[float, ...]


RangeFactory = Callable[[Binding], RangeFn]
"""Binds a range function to one evaluation."""


def _fixed(fn: RangeFn) -> RangeFactory:
    return lambda b: fn


BatchRangeFn = Callable[[Iterable[Window], Binding], list[tuple[Labels, float]]]
"""A range function over all windows of one evaluation, giving name-less labelled values."""

BATCH_RANGE_FUNCTIONS: dict[str, BatchRangeFn] = {
    "rate": lambda w, b: extrapolated_rates(w, b, is_counter=True, is_rate=True),
    "increase": lambda w, b: extrapolated_rates(w, b, is_counter=True, is_rate=False),
    "delta": lambda w, b: extrapolated_rates(w, b, is_counter=False, is_rate=False),
}
"""Range functions that take every window at once (``rate``, ``increase``, ``delta``)."""

RANGE_FUNCTIONS: dict[str, RangeFactory] = {
    "irate": lambda b: _instant_value(is_rate=True),
    "idelta": lambda b: _instant_value(is_rate=False),
    "deriv": lambda b: _deriv(b.v3),
    "predict_linear": lambda b: _predict_linear(b.t, b.scalars[0], b.v3),
    "resets": _fixed(_resets),
    "changes": _fixed(_changes),
    "avg_over_time": lambda b: _avg_over_time_v3 if b.v3 else _avg_over_time_v2,
    "count_over_time": _fixed(_count_over_time),
    "last_over_time": _fixed(_last_over_time),
    "max_over_time": _fixed(_max_over_time),
    "min_over_time": _fixed(_min_over_time),
    "present_over_time": _fixed(_present_over_time),
    "sum_over_time": lambda b: _sum_over_time(b.v3),
    "stddev_over_time": lambda b: _stddev_over_time(b.v3),
    "stdvar_over_time": lambda b: _stdvar_over_time(b.v3),
    "quantile_over_time": lambda b: _quantile_over_time(b.scalars[0]),
    "holt_winters": lambda b: _holt_winters(b.scalars[0], b.scalars[1]),
}
"""Functions over a range vector, window by window, by name; ``BATCH_RANGE_FUNCTIONS`` holds
the others, and ``absent_over_time`` is handled by the engine."""
