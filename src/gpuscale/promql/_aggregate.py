"""PromQL aggregation operators on one instant vector, ported from promql/engine.go.

2.42's ``(*evaluator).aggregation`` and 3.5's ``aggregation`` / ``aggregationK`` /
``aggregationCountValues`` agree on grouping and on the label sets they return; they differ
in float details this module keeps apart by ``v3``: ``sum`` and ``avg`` use compensated
(Kahan) sums in 3.5 and plain or incremental ones in 2.42; ``stddev``/``stdvar`` of a group
starting with NaN or ±Inf is NaN in 3.5; ``topk``/``bottomk`` replace the heap's top
differently (so ties and NaNs may pick other series). Groups come out in the order their
first member appears in the input, as both versions return them for an instant query.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from math import isnan

from gpuscale.promql._errors import PromQLError
from gpuscale.promql._functions import quantile
from gpuscale.promql._gofloat import format_float_f, safe_unary
from gpuscale.promql._kahan import kahan_mean_v3, kahan_sum
from gpuscale.promql.labels import METRIC_NAME, Labels, is_valid_label_name

__all__ = ["Grouping", "aggregate", "count_values", "top_bottom_k"]

Vec = list[tuple[Labels, float]]
_NAN = math.nan
_INF = math.inf
_MAX_INT64 = 9.223372036854775807e18
_sqrt = safe_unary(math.sqrt, lambda x: _NAN)


class Grouping:
    """``by (...)`` / ``without (...)`` of one aggregation, precomputed for fast keys.

    The group of a label set is memoised by the label set's identity: the evaluator hands
    the same tuples (a series' labels) to the same aggregation evaluation after evaluation.
    """

    __slots__ = ("_memo", "by_names", "names", "without")

    def __init__(self, names: list[str], without: bool) -> None:
        self.without = without
        self.names = frozenset(names) | ({METRIC_NAME} if without else frozenset())
        self.by_names = tuple(sorted(set(names)))
        self._memo: dict[int, tuple[Labels, Labels]] = {}

    def group_of(self, labels: Labels) -> Labels:
        """The label set of the group ``labels`` falls in (also its key)."""
        hit = self._memo.get(id(labels))
        if hit is not None and hit[0] is labels:
            return hit[1]
        names = self.names
        if self.without:
            kept = tuple(p for p in labels if p[0] not in names)
        else:
            kept = tuple(p for p in labels if p[0] in names) if names else ()
        if len(self._memo) > 65536:
            self._memo.clear()
        self._memo[id(labels)] = (labels, kept)
        return kept

    def key_and_labels(self, labels: Labels) -> tuple[object, Labels]:
        """The group key of a series and the label set its group returns."""
        kept = self.group_of(labels)
        return kept, kept


def aggregate(op: str, vec: Vec, grouping: Grouping, param: float, v3: bool) -> Vec:
    """sum, avg, min, max, count, group, stddev, stdvar, quantile of ``vec`` per group."""
    if not grouping.without and not grouping.names:
        if not vec:
            return []
        return [((), _reduce(op, [v for _, v in vec], param, v3))]
    groups: dict[Labels, list[float]] = {}
    group_of = grouping.group_of
    for labels, value in vec:
        key = group_of(labels)
        g = groups.get(key)
        if g is None:
            groups[key] = [value]
        else:
            g.append(value)
    reduce = _REDUCERS[op]
    return [(key, reduce(values, param, v3)) for key, values in groups.items()]


def _reduce(op: str, values: list[float], param: float, v3: bool) -> float:
    return _REDUCERS[op](values, param, v3)


def _sum(values: list[float], param: float, v3: bool) -> float:
    if not v3:
        total = values[0]
        for i in range(1, len(values)):
            total += values[i]
        return total
    total, c = kahan_sum(values, 1, len(values), values[0], v3=True)
    return total + c


def _avg(values: list[float], param: float, v3: bool) -> float:
    if v3:
        return kahan_mean_v3(values, 0, len(values))
    mean = values[0]
    count = 1
    for v in values[1:]:
        count += 1
        if math.isinf(mean):
            if math.isinf(v) and (mean > 0) == (v > 0):
                continue
            if not math.isinf(v) and not isnan(v):
                continue
        mean += v / count - mean / count
    return mean


def _max(values: list[float], param: float, v3: bool) -> float:
    best = values[0]
    for v in values[1:]:
        if best < v or isnan(best):
            best = v
    return best


def _min(values: list[float], param: float, v3: bool) -> float:
    best = values[0]
    for v in values[1:]:
        if best > v or isnan(best):
            best = v
    return best


def _variance(values: list[float], v3: bool) -> float:
    first = values[0]
    mean = first
    value = _NAN if v3 and (isnan(first) or math.isinf(first)) else 0.0
    count = 1
    for v in values[1:]:
        count += 1
        delta = v - mean
        mean += delta / count
        value += delta * (v - mean)
    return value / count


def _count(values: list[float], param: float, v3: bool) -> float:
    return float(len(values))


_REDUCERS: dict[str, Callable[[list[float], float, bool], float]] = {
    "sum": _sum,
    "avg": _avg,
    "max": _max,
    "min": _min,
    "count": _count,
    "group": lambda values, param, v3: 1.0,
    "stdvar": lambda values, param, v3: _variance(values, v3),
    "stddev": lambda values, param, v3: _sqrt(_variance(values, v3)),
    "quantile": lambda values, param, v3: quantile(param, list(values)),
}


def count_values(vec: Vec, grouping: Grouping, label: str, v3: bool) -> Vec:
    """``count_values("label", v)``: how many samples share each value, per group."""
    if not is_valid_label_name(label, utf8=v3):
        raise PromQLError(f'invalid label name "{label}" in count_values', construct="count_values")
    effective = grouping if grouping.without else Grouping([*grouping.names, label], False)
    counts: dict[Labels, int] = {}
    for labels, value in vec:
        text = format_float_f(value)
        relabelled = tuple(sorted([p for p in labels if p[0] != label] + [(label, text)]))
        _, out = effective.key_and_labels(relabelled)
        counts[out] = counts.get(out, 0) + 1
    return [(out, float(n)) for out, n in counts.items()]


# --------------------------------------------------------------------------- topk / bottomk


def _less_value(a: float, b: float) -> bool:
    """``vectorByValueHeap.Less``: NaN sorts first."""
    return isnan(a) or a < b


def _less_reverse(a: float, b: float) -> bool:
    """``vectorByReverseValueHeap.Less``: NaN sorts first."""
    return isnan(a) or a > b


def _up(h: list[tuple[Labels, float]], j: int, less: Callable[[float, float], bool]) -> None:
    while j > 0:
        i = (j - 1) // 2
        if not less(h[j][1], h[i][1]):
            break
        h[i], h[j] = h[j], h[i]
        j = i


def _down(
    h: list[tuple[Labels, float]], i0: int, n: int, less: Callable[[float, float], bool]
) -> bool:
    i = i0
    while True:
        j1 = 2 * i + 1
        if j1 >= n:
            break
        j = j1
        j2 = j1 + 1
        if j2 < n and less(h[j2][1], h[j1][1]):
            j = j2
        if not less(h[j][1], h[i][1]):
            break
        h[i], h[j] = h[j], h[i]
        i = j
    return i > i0


def _push(
    h: list[tuple[Labels, float]], x: tuple[Labels, float], less: Callable[[float, float], bool]
) -> None:
    h.append(x)
    _up(h, len(h) - 1, less)


def _pop(
    h: list[tuple[Labels, float]], less: Callable[[float, float], bool]
) -> tuple[Labels, float]:
    n = len(h) - 1
    h[0], h[n] = h[n], h[0]
    _down(h, 0, n, less)
    return h.pop()


def _fix(h: list[tuple[Labels, float]], i: int, less: Callable[[float, float], bool]) -> None:
    if not _down(h, i, len(h), less):
        _up(h, i, less)


def _sort_reverse(h: list[tuple[Labels, float]], less: Callable[[float, float], bool]) -> None:
    """``sort.Sort(sort.Reverse(heap))``: Go's insertion sort for up to 12 elements (its
    pdqsort does the same); beyond that a stable sort, which may order ties differently."""
    n = len(h)
    if n <= 12:
        for i in range(1, n):
            j = i
            while j > 0 and less(h[j - 1][1], h[j][1]):
                h[j], h[j - 1] = h[j - 1], h[j]
                j -= 1
        return
    nan_last = [x for x in h if x[1] == x[1]]
    nans = [x for x in h if x[1] != x[1]]
    descending = less is _less_value
    nan_last.sort(key=lambda x: x[1], reverse=descending)
    h[:] = nan_last + nans


def top_bottom_k(op: str, vec: Vec, grouping: Grouping, k_param: float, v3: bool) -> Vec:
    """``topk``/``bottomk``: the k largest/smallest samples per group, keeping their labels."""
    if isnan(k_param) or not (-_MAX_INT64 <= k_param <= _MAX_INT64):
        raise PromQLError(f"Scalar value {_go_g(k_param)} overflows int64", construct=op)
    k = int(k_param)
    if v3 and k > len(vec):
        k = len(vec)
    if k < 1:
        return []
    less = _less_value if op == "topk" else _less_reverse
    heaps: dict[object, list[tuple[Labels, float]]] = {}
    for sample in vec:
        key, _ = grouping.key_and_labels(sample[0])
        h = heaps.get(key)
        value = sample[1]
        if h is None:
            heaps[key] = [sample]
            continue
        top = h[0][1]
        if v3:
            if len(h) < k:
                _push(h, sample, less)
            elif (top < value if op == "topk" else top > value) or (
                isnan(top) and not isnan(value)
            ):
                h[0] = sample
                if k > 1:
                    _fix(h, 0, less)
        elif len(h) < k or (top < value if op == "topk" else top > value) or isnan(top):
            if len(h) == k:
                if k == 1:
                    h[0] = sample
                    continue
                _pop(h, less)
            _push(h, sample, less)
    out: Vec = []
    for h in heaps.values():
        if len(h) > 1:
            _sort_reverse(h, less)
        out.extend(h)
    return out


def _go_g(v: float) -> str:
    if isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return repr(v)
