"""The PromQL evaluator: ``promql-parser``'s syntax tree compiled once into a plan of nodes,
evaluated against a ``SeriesStore`` at instants and over ranges, as Prometheus would.

This follows promql/engine.go and promql/functions.go of two releases, chosen by
``version``: ``"2"`` is Prometheus 2.42.0 (Debian's server, which the differential suite
checks every supported construct against) and ``"3"`` (the default) is Prometheus 3.5.0
LTS, which differs for float samples where Prometheus 3 documents changes (see
docs/promql.md): left-open range selectors and lookback, ``.`` matching newlines, the order
of rate extrapolation's zero-point clamp, compensated ``sum``/``avg``, and a few float
details of ``stddev``, ``topk`` and ``histogram_quantile``.

How the engine maps to upstream:

- Every query is evaluated at one instant per call (``instant``) or per step (``range``,
  which stitches the per-step vectors into series sorted by labels, as the engine's
  ``rangeEval`` followed by the API's sort does). Subquery steps are aligned to absolute
  multiples of the step, and their inner values are memoised across the steps of one call.
- Instant selectors take each series' newest sample no older than the lookback
  (``vectorSelectorSingle``); a staleness marker there means "no value". Range selectors
  take the samples in ``[t - range, t]`` (2.x) or ``(t - range, t]`` (3.x) minus staleness
  markers (``matrixIterSlice``).
- The result keeps Prometheus' order for instant queries: selectors in label order,
  aggregations in order of their groups' first member, binary operations in the order of
  the "many" side; ``sort``/``sort_desc``/``topk``/``bottomk`` order as upstream does
  (exactly for up to 12 elements; see docs for ties beyond that).

Anything outside the supported subset raises ``PromQLError`` naming the construct, at
compile time, before any evaluation: a query either answers as Prometheus does or fails.
"""

from __future__ import annotations

import contextlib
import math
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from datetime import timedelta
from typing import Any, Literal, cast

import promql_parser as pp

from gpuscale._gomath import (
    GoSyntaxError,
    go_div,
    go_floor,
    go_pow,
    go_trunc_div,
    parse_go_float,
)
from gpuscale.promql._aggregate import Grouping, _less_reverse, _less_value, _sort_reverse
from gpuscale.promql._aggregate import aggregate as _aggregate
from gpuscale.promql._aggregate import count_values as _count_values
from gpuscale.promql._aggregate import top_bottom_k as _top_bottom_k
from gpuscale.promql._errors import PromQLError
from gpuscale.promql._functions import (
    BATCH_RANGE_FUNCTIONS,
    DATE_FUNCTIONS,
    RANGE_FUNCTIONS,
    SIMPLE_FUNCTIONS,
    BatchRangeFn,
    Binding,
    RangeFactory,
    Window,
    bucket_quantile,
    date_field,
    go_max,
    go_min,
)
from gpuscale.promql._gofloat import go_mod
from gpuscale.promql._regex import compile_go_regex, go_expand
from gpuscale.promql.labels import (
    METRIC_NAME,
    Labels,
    drop_name,
    get_label,
    is_valid_label_name,
    with_label,
)
from gpuscale.promql.result import (
    MatrixResult,
    Result,
    Sample,
    ScalarResult,
    Series,
    StringResult,
    VectorResult,
)
from gpuscale.promql.store import Matcher, SeriesStore, selection_key
from gpuscale.promql.syntax import parse_query

__all__ = [
    "SUPPORTED_AGGREGATIONS",
    "SUPPORTED_FUNCTIONS",
    "Engine",
    "Vec",
    "Version",
]

Vec = list[tuple[Labels, float]]
Version = Literal["2", "3"]

_SYSTEM_TIME = re.compile(r"tv_sec: (-?\d+),\s*tv_nsec: (\d+)")

# promql-parser follows Prometheus 2.45+, which no longer knows 2.42's holt_winters; a later
# promql-parser may know it already (ValueError).
with contextlib.suppress(ValueError):
    pp.register_extra_functions(
        [
            pp.Function(
                "holt_winters",
                [pp.ValueType.Matrix, pp.ValueType.Scalar, pp.ValueType.Scalar],
                pp.ValueType.Vector,
            )
        ]
    )
_MS = timedelta(milliseconds=1)
_MAX_POINTS = 11_000

SUPPORTED_AGGREGATIONS = frozenset(
    {
        "sum",
        "avg",
        "min",
        "max",
        "count",
        "group",
        "stddev",
        "stdvar",
        "topk",
        "bottomk",
        "quantile",
        "count_values",
    }
)
"""Aggregation operators the engine evaluates (all of Prometheus 2.42's)."""

_INSTANT_FUNCTIONS = {
    "absent",
    "clamp",
    "clamp_max",
    "clamp_min",
    "histogram_quantile",
    "label_join",
    "label_replace",
    "pi",
    "round",
    "scalar",
    "sort",
    "sort_desc",
    "time",
    "timestamp",
    "vector",
}
SUPPORTED_FUNCTIONS = frozenset(
    _INSTANT_FUNCTIONS
    | set(SIMPLE_FUNCTIONS)
    | set(RANGE_FUNCTIONS)
    | set(BATCH_RANGE_FUNCTIONS)
    | set(DATE_FUNCTIONS)
    | {"absent_over_time"}
)
"""Functions the engine evaluates; every other name raises ``PromQLError``."""

_UNSUPPORTED_HINT = {
    "holt_winters": "removed in Prometheus 3: renamed double_exponential_smoothing and "
    "put behind the promql-experimental-functions flag",
    "double_exponential_smoothing": "an experimental function of Prometheus 3",
    "histogram_count": "native histograms are not modelled",
    "histogram_sum": "native histograms are not modelled",
    "histogram_avg": "native histograms are not modelled",
    "histogram_fraction": "native histograms are not modelled",
    "histogram_stddev": "native histograms are not modelled",
    "histogram_stdvar": "native histograms are not modelled",
    "sort_by_label": "an experimental function of Prometheus 2.45+",
    "sort_by_label_desc": "an experimental function of Prometheus 2.45+",
}

_ARITHMETIC = {"+", "-", "*", "/", "%", "^", "atan2"}
_COMPARISON = {"==", "!=", ">", "<", ">=", "<="}
_SET = {"and", "or", "unless"}


def _arith(op: str) -> Callable[[float, float], float]:
    if op == "+":
        return lambda a, b: a + b
    if op == "-":
        return lambda a, b: a - b
    if op == "*":
        return lambda a, b: a * b
    if op == "/":
        return go_div
    if op == "%":
        return go_mod
    if op == "^":
        return go_pow
    return math.atan2


def _compare(op: str) -> Callable[[float, float], bool]:
    return {
        "==": lambda a, b: a == b,
        "!=": lambda a, b: a != b,
        ">": lambda a, b: a > b,
        "<": lambda a, b: a < b,
        ">=": lambda a, b: a >= b,
        "<=": lambda a, b: a <= b,
    }[op]


def _fmt_labels(labels: Labels) -> str:
    return "{" + ", ".join(f'{k}="{v}"' for k, v in labels) + "}"


def _check_unique(vec: Vec) -> None:
    seen: set[Labels] = set()
    for labels, _ in vec:
        if labels in seen:
            raise PromQLError(
                "vector cannot contain metrics with the same labelset",
                fix="keep the metric name or add a distinguishing label before this operation",
            )
        seen.add(labels)


class _Ctx:
    """One evaluation call: the store, the version switches and the query's start/end."""

    __slots__ = ("end", "lookback", "memo", "ranged", "start", "store", "sub_step", "v3")

    def __init__(
        self, store: SeriesStore, *, v3: bool, lookback: int, sub_step: int, start: int, end: int
    ) -> None:
        self.store = store
        self.v3 = v3
        self.lookback = lookback
        self.sub_step = sub_step
        self.start = start
        self.end = end
        self.memo: dict[tuple[int, int], Vec] = {}
        self.ranged = 1 if start != end else 0


class _Node:
    """A compiled expression. ``one_name``: every sample it yields has the same metric name
    (or none), so dropping the name cannot create duplicate label sets."""

    kind = "vector"
    one_name = True

    def vec(self, ctx: _Ctx, t: int) -> Vec:
        raise NotImplementedError

    def scal(self, ctx: _Ctx, t: int) -> float:
        raise NotImplementedError

    def windows(self, ctx: _Ctx, t: int) -> tuple[int, int, list[Window]]:
        raise NotImplementedError


# --------------------------------------------------------------------------- leaves


class _Number(_Node):
    """A number literal (``NumberLiteral``)."""

    kind = "scalar"

    def __init__(self, value: float) -> None:
        self.value = value

    def scal(self, ctx: _Ctx, t: int) -> float:
        return self.value


class _String(_Node):
    """A string literal (``StringLiteral``); only a query's top level or an argument."""

    kind = "string"

    def __init__(self, value: str) -> None:
        self.value = value


_At = int | str | None


def _base_time(at: _At, ctx: _Ctx, t: int) -> int:
    if at is None:
        return t
    if at == "start":
        return ctx.start
    if at == "end":
        return ctx.end
    assert isinstance(at, int)
    return at


def _stale_at(stale: list[int], t: int) -> bool:
    i = bisect_left(stale, t)
    return i < len(stale) and stale[i] == t


class _Selector(_Node):
    """An instant vector selector (``vectorSelector`` / ``vectorSelectorSingle``)."""

    def __init__(self, matchers: list[Matcher], offset: int, at: _At) -> None:
        self.matchers = matchers
        self.key = selection_key(matchers)
        self.offset = offset
        self.at = at
        self.one_name = any(m.name == METRIC_NAME and m.op == "=" for m in matchers)

    def series(self, ctx: _Ctx) -> list[Any]:
        return ctx.store.select(self.matchers, self.key)

    def vec(self, ctx: _Ctx, t: int) -> Vec:
        ref = (t if self.at is None else _base_time(self.at, ctx, t)) - self.offset
        # Samples at or after ``oldest`` count: [t - lookback, t] in 2.x, (t - lookback, t]
        # in 3.x (timestamps are integers, so "after t - lookback" is ">= t - lookback + 1").
        oldest = ref - ctx.lookback + ctx.v3
        out: Vec = []
        append = out.append
        for s in ctx.store.select(self.matchers, self.key):
            ts = s.ts
            n = len(ts)
            if not n:
                continue
            if ts[n - 1] <= ref:
                i = n - 1
            else:
                i = bisect_right(ts, ref) - 1
                if i < 0:
                    continue
            st = ts[i]
            if st < oldest:
                continue
            if s.stale is not None and _stale_at(s.stale, st):
                continue
            append((s.labels, s.vs[i]))
        return out

    def vec_with_times(self, ctx: _Ctx, t: int) -> list[tuple[Labels, float, int]]:
        ref = _base_time(self.at, ctx, t) - self.offset
        oldest = ref - ctx.lookback + ctx.v3
        out = []
        for s in ctx.store.select(self.matchers, self.key):
            ts = s.ts
            i = bisect_right(ts, ref) - 1
            if i < 0:
                continue
            st = ts[i]
            if st < oldest:
                continue
            if s.stale is not None and _stale_at(s.stale, st):
                continue
            out.append((s.labels, s.vs[i], st))
        return out


def _filter_stale(s: Any, lo: int, hi: int) -> tuple[list[int], list[float]] | None:
    """The window without staleness markers, or None when it holds none."""
    stale = s.stale
    ts = s.ts
    a = bisect_left(stale, ts[lo])
    if a >= len(stale) or stale[a] > ts[hi - 1]:
        return None
    marks = set(stale)
    vs = s.vs
    keep = [i for i in range(lo, hi) if ts[i] not in marks]
    return [ts[i] for i in keep], [vs[i] for i in keep]


class _SubSeries:
    """A series produced by a subquery's steps."""

    __slots__ = ("labels", "labels_noname", "ts", "vs")

    def __init__(self, labels: Labels) -> None:
        self.labels = labels
        self.labels_noname = drop_name(labels)
        self.ts: list[int] = []
        self.vs: list[float] = []


class _RangeSelector(_Node):
    """A range vector selector (``matrixSelector`` / ``matrixIterSlice``)."""

    kind = "matrix"

    def __init__(self, selector: _Selector, range_ms: int) -> None:
        self.selector = selector
        self.range_ms = range_ms
        self.one_name = selector.one_name

    def _limits(self, ctx: _Ctx, t: int) -> tuple[int, int]:
        sel = self.selector
        maxt = (t if sel.at is None else _base_time(sel.at, ctx, t)) - sel.offset
        return maxt - self.range_ms, maxt

    def windows(self, ctx: _Ctx, t: int) -> tuple[int, int, list[Window]]:
        """Each series' samples in the range, as ``[lo, hi)`` of its arrays: what every range
        function over a selector reads."""
        mint, maxt = self._limits(ctx, t)
        first = mint + ctx.v3  # [mint, maxt] in 2.x, (mint, maxt] in 3.x
        out: list[Window] = []
        append = out.append
        for s in self.selector.series(ctx):
            ts = s.ts
            n = len(ts)
            if not n:
                continue
            # [lo, hi): the samples with first <= t <= maxt. Queries mostly look at the
            # newest samples, so look at the end of the series first and gallop back (8,
            # 64, 512... samples) before bisecting the part that holds ``first``.
            hi = n if ts[n - 1] <= maxt else bisect_right(ts, maxt)
            upper = hi
            step = 8
            while True:
                j = hi - step
                if j <= 0:
                    lo = bisect_left(ts, first, 0, upper)
                    break
                if ts[j] < first:
                    lo = bisect_left(ts, first, j + 1, upper)
                    break
                upper = j + 1
                step *= 8
            if lo >= hi:
                continue
            if s.stale is not None:
                kept = _filter_stale(s, lo, hi)
                if kept is not None:
                    if kept[0]:
                        append((s, kept[0], kept[1], 0, len(kept[0])))
                    continue
            append((s, ts, s.vs, lo, hi))
        return mint, maxt, out


class _Subquery(_Node):
    """``expr[range:step]`` (the engine's ``SubqueryExpr`` case and ``evalSubquery``)."""

    kind = "matrix"

    def __init__(self, inner: _Node, range_ms: int, step_ms: int, offset: int, at: _At) -> None:
        self.inner = inner
        self.range_ms = range_ms
        self.step_ms = step_ms
        self.offset = offset
        self.at = at
        self.one_name = inner.one_name

    def windows(self, ctx: _Ctx, t: int) -> tuple[int, int, list[Window]]:
        maxt = _base_time(self.at, ctx, t) - self.offset
        mint = maxt - self.range_ms
        step = self.step_ms or ctx.sub_step
        start = step * go_trunc_div(mint, step)
        if start < mint or (ctx.v3 and start == mint):
            start += step
        series: dict[Labels, _SubSeries] = {}
        memo = ctx.memo
        inner = self.inner
        me = id(self)
        ctx.ranged += 1
        try:
            for ti in range(start, maxt + 1, step):
                key = (me, ti)
                vec = memo.get(key)
                if vec is None:
                    vec = inner.vec(ctx, ti)
                    memo[key] = vec
                for labels, v in vec:
                    ss = series.get(labels)
                    if ss is None:
                        ss = series[labels] = _SubSeries(labels)
                    ss.ts.append(ti)
                    ss.vs.append(v)
        finally:
            ctx.ranged -= 1
        return mint, maxt, [(ss, ss.ts, ss.vs, 0, len(ss.ts)) for ss in series.values()]


# --------------------------------------------------------------------------- functions


class _RangeCall(_Node):
    """A function over a range vector (the engine's matrix-argument ``Call`` case)."""

    def __init__(
        self,
        name: str,
        factory: RangeFactory | BatchRangeFn,
        arg: _Node,
        range_ms: int,
        scalars: list[_Node],
        *,
        batch: bool = False,
    ) -> None:
        self.name = name
        self.factory = factory
        self.batch = batch
        self.arg = arg
        self.range_ms = range_ms
        self.scalars = scalars
        self.keep_name = name == "last_over_time"
        self.one_name = arg.one_name if self.keep_name else True
        at = arg.selector.at if isinstance(arg, _RangeSelector) else getattr(arg, "at", None)
        invariant = name != "predict_linear" and all(_is_constant(n) for n in scalars)
        self.drifts = at is not None and not invariant

    def vec(self, ctx: _Ctx, t: int) -> Vec:
        if self.drifts and ctx.ranged:
            raise PromQLError(
                f"@ modifier on the range argument of {self.name}() evaluated at several steps "
                "(a range query or a subquery): Prometheus shifts that window step by step "
                "(engine.go setOffsetForAtModifier), which this engine does not reproduce",
                construct="@ modifier",
                fix="evaluate it as an instant query, or drop the @ modifier",
            )
        try:
            return self._vec(ctx, t)
        except ValueError as exc:
            raise PromQLError(str(exc), construct=f"{self.name}()") from None

    def _vec(self, ctx: _Ctx, t: int) -> Vec:
        params = tuple(n.scal(ctx, t) for n in self.scalars)
        arg = self.arg
        mint, maxt, wins = arg.windows(ctx, t)
        binding = Binding(mint, maxt, self.range_ms, t, ctx.v3, params)
        if self.batch:
            out = cast("BatchRangeFn", self.factory)(wins, binding)
            if not arg.one_name:
                _check_unique(out)
            return out
        fn = cast("RangeFactory", self.factory)(binding)
        out = []
        append = out.append
        if self.keep_name:
            for s, ts, vs, lo, hi in wins:
                v = fn(ts, vs, lo, hi)
                if v is not None:
                    append((s.labels, v))
            return out
        for s, ts, vs, lo, hi in wins:
            v = fn(ts, vs, lo, hi)
            if v is not None:
                append((s.labels_noname, v))
        if not arg.one_name:
            _check_unique(out)
        return out


def _is_constant(node: _Node) -> bool:
    if isinstance(node, _Number):
        return True
    return isinstance(node, _Neg) and _is_constant(node.arg)


class _AbsentOverTime(_Node):
    """``absent_over_time`` (``funcAbsentOverTime`` and the engine's post-processing)."""

    def __init__(self, arg: _Node, labels: Labels) -> None:
        self.arg = arg
        self.labels = labels

    def vec(self, ctx: _Ctx, t: int) -> Vec:
        _, _, wins = self.arg.windows(ctx, t)
        return [] if wins else [(self.labels, 1.0)]


class _Absent(_Node):
    """``absent`` (``funcAbsent``, labels from ``createLabelsForAbsentFunction``)."""

    def __init__(self, arg: _Node, labels: Labels) -> None:
        self.arg = arg
        self.labels = labels

    def vec(self, ctx: _Ctx, t: int) -> Vec:
        return [] if self.arg.vec(ctx, t) else [(self.labels, 1.0)]


class _MapValues(_Node):
    """An instant-vector function applying ``fn(value, *scalars)`` and dropping the name."""

    def __init__(
        self, arg: _Node, fn: Callable[..., float], scalars: list[_Node], drops_all_when: Any = None
    ) -> None:
        self.arg = arg
        self.fn = fn
        self.scalars = scalars
        self.drops_all_when = drops_all_when

    def vec(self, ctx: _Ctx, t: int) -> Vec:
        src = self.arg.vec(ctx, t)
        params = [n.scal(ctx, t) for n in self.scalars]
        if self.drops_all_when is not None and self.drops_all_when(*params):
            return []
        fn = self.fn
        if params:
            out = [(drop_name(labels), fn(v, *params)) for labels, v in src]
        else:
            out = [(drop_name(labels), fn(v)) for labels, v in src]
        if not self.arg.one_name:
            _check_unique(out)
        return out


def _clamp(v: float, lo: float, hi: float) -> float:
    return go_max(lo, go_min(hi, v))


def _round(v: float, to_nearest: float = 1.0) -> float:
    inverse = go_div(1.0, to_nearest)
    return go_div(go_floor(v * inverse + 0.5), inverse)


class _Timestamp(_Node):
    """``timestamp(v)``: the sample's own time for a plain selector, else the evaluation time."""

    def __init__(self, arg: _Node) -> None:
        self.arg = arg

    def vec(self, ctx: _Ctx, t: int) -> Vec:
        arg = self.arg
        if isinstance(arg, _Selector):
            if arg.at is not None:
                # Both versions replace the offset by the distance to @, dropping any
                # ``offset`` (engine.go, the "timestamp" special case).
                base = _base_time(arg.at, ctx, t)
                shifted = _Selector(arg.matchers, 0, base)
                rows = shifted.vec_with_times(ctx, t)
            else:
                rows = arg.vec_with_times(ctx, t)
            out = [(drop_name(labels), st / 1000) for labels, _, st in rows]
        else:
            now = t / 1000
            out = [(drop_name(labels), now) for labels, _ in arg.vec(ctx, t)]
        if not arg.one_name:
            _check_unique(out)
        return out


class _Sort(_Node):
    """``sort``/``sort_desc`` (``funcSort``/``funcSortDesc``)."""

    def __init__(self, arg: _Node, descending: bool) -> None:
        self.arg = arg
        self.less = _less_value if descending else _less_reverse
        self.one_name = arg.one_name

    def vec(self, ctx: _Ctx, t: int) -> Vec:
        out = list(self.arg.vec(ctx, t))
        _sort_reverse(out, self.less)
        return out


class _VectorOf(_Node):
    """``vector(s)`` (``funcVector``)."""

    def __init__(self, arg: _Node) -> None:
        self.arg = arg

    def vec(self, ctx: _Ctx, t: int) -> Vec:
        return [((), self.arg.scal(ctx, t))]


class _ScalarOf(_Node):
    """``scalar(v)`` (``funcScalar``): NaN unless exactly one sample."""

    kind = "scalar"

    def __init__(self, arg: _Node) -> None:
        self.arg = arg

    def scal(self, ctx: _Ctx, t: int) -> float:
        v = self.arg.vec(ctx, t)
        return v[0][1] if len(v) == 1 else math.nan


class _Date(_Node):
    """hour(), month(), ... (``dateWrapper``): of each value, or of the evaluation time."""

    def __init__(self, name: str, arg: _Node | None) -> None:
        self.name = name
        self.arg = arg

    def _field(self, seconds: float) -> float:
        try:
            return date_field(self.name, seconds)
        except ValueError as exc:
            raise PromQLError(
                str(exc), construct=f"{self.name}()", fix="pass Unix times in seconds"
            ) from None

    def vec(self, ctx: _Ctx, t: int) -> Vec:
        if self.arg is None:
            return [((), self._field(go_trunc_div(t, 1000)))]
        out = [(drop_name(labels), self._field(v)) for labels, v in self.arg.vec(ctx, t)]
        if not self.arg.one_name:
            _check_unique(out)
        return out


class _Time(_Node):
    """``time()`` (``funcTime``)."""

    kind = "scalar"

    def scal(self, ctx: _Ctx, t: int) -> float:
        return t / 1000


class _HistogramQuantile(_Node):
    """``histogram_quantile`` over classic buckets (``funcHistogramQuantile``)."""

    def __init__(self, q: _Node, arg: _Node) -> None:
        self.q = q
        self.arg = arg

    def vec(self, ctx: _Ctx, t: int) -> Vec:
        q = self.q.scal(ctx, t)
        groups: dict[Labels, tuple[Labels, list[tuple[float, float]]]] = {}
        for labels, v in self.arg.vec(ctx, t):
            try:
                upper = parse_go_float(get_label(labels, "le"))
            except GoSyntaxError:
                continue
            sig = tuple(p for p in labels if p[0] != "le")
            g = groups.get(sig)
            if g is None:
                g = groups[sig] = (drop_name(sig), [])
            g[1].append((upper, v))
        v3 = ctx.v3
        out = [(labels, bucket_quantile(q, buckets, v3=v3)) for labels, buckets in groups.values()]
        if not self.arg.one_name:
            _check_unique(out)
        return out


class _LabelReplace(_Node):
    """``label_replace`` (``funcLabelReplace``; 3.x ``evalLabelReplace``)."""

    def __init__(self, arg: _Node, dst: str, repl: str, src: str, regex: Any) -> None:
        self.arg = arg
        self.dst = dst
        self.repl = repl
        self.src = src
        self.regex = regex
        self.one_name = arg.one_name and dst != METRIC_NAME

    def vec(self, ctx: _Ctx, t: int) -> Vec:
        out: Vec = []
        for labels, v in self.arg.vec(ctx, t):
            m = self.regex.fullmatch(get_label(labels, self.src))
            if m is None:
                out.append((labels, v))
            else:
                out.append((with_label(labels, self.dst, go_expand(self.repl, m)), v))
        _check_unique(out)
        return out


class _LabelJoin(_Node):
    """``label_join`` (``funcLabelJoin``; 3.x ``evalLabelJoin``)."""

    def __init__(self, arg: _Node, dst: str, sep: str, srcs: list[str]) -> None:
        self.arg = arg
        self.dst = dst
        self.sep = sep
        self.srcs = srcs
        self.one_name = arg.one_name and dst != METRIC_NAME

    def vec(self, ctx: _Ctx, t: int) -> Vec:
        out: Vec = []
        for labels, v in self.arg.vec(ctx, t):
            joined = self.sep.join(get_label(labels, s) for s in self.srcs)
            out.append((with_label(labels, self.dst, joined), v))
        _check_unique(out)
        return out


# --------------------------------------------------------------------------- operators


class _Neg(_Node):
    """Unary minus (the engine's ``UnaryExpr`` case): drops the metric name."""

    def __init__(self, arg: _Node) -> None:
        self.arg = arg
        self.kind = arg.kind

    def scal(self, ctx: _Ctx, t: int) -> float:
        return -self.arg.scal(ctx, t)

    def vec(self, ctx: _Ctx, t: int) -> Vec:
        out = [(drop_name(labels), -v) for labels, v in self.arg.vec(ctx, t)]
        if not self.arg.one_name:
            _check_unique(out)
        return out


class _ScalarBinary(_Node):
    """An operator between two scalars (``scalarBinop``)."""

    kind = "scalar"

    def __init__(self, op: str, lhs: _Node, rhs: _Node) -> None:
        self.lhs = lhs
        self.rhs = rhs
        if op in _COMPARISON:
            cmp = _compare(op)
            self.fn: Callable[[float, float], float] = lambda a, b: 1.0 if cmp(a, b) else 0.0
        else:
            self.fn = _arith(op)

    def scal(self, ctx: _Ctx, t: int) -> float:
        return self.fn(self.lhs.scal(ctx, t), self.rhs.scal(ctx, t))


class _VectorScalar(_Node):
    """``VectorscalarBinop``: the vector keeps its labels; arithmetic drops the name
    (``atan2`` keeps it in 2.42, drops it in 3.x)."""

    def __init__(
        self, op: str, vec: _Node, scalar: _Node, *, swap: bool, return_bool: bool, v3: bool
    ) -> None:
        self.vec_node = vec
        self.scalar = scalar
        self.swap = swap
        self.return_bool = return_bool
        self.is_cmp = op in _COMPARISON
        self.cmp = _compare(op) if self.is_cmp else None
        self.fn = None if self.is_cmp else _arith(op)
        self.drops = _drops_name(op, v3) or return_bool
        self.one_name = True if self.drops else vec.one_name

    def vec(self, ctx: _Ctx, t: int) -> Vec:
        s = self.scalar.scal(ctx, t)
        src = self.vec_node.vec(ctx, t)
        swap = self.swap
        out: Vec
        if self.cmp is not None:
            cmp = self.cmp
            if self.return_bool:
                out = [
                    (drop_name(labels), 1.0 if (cmp(s, v) if swap else cmp(v, s)) else 0.0)
                    for labels, v in src
                ]
            else:
                return [(labels, v) for labels, v in src if (cmp(s, v) if swap else cmp(v, s))]
        else:
            fn = self.fn
            assert fn is not None
            if not self.drops:
                if swap:
                    return [(labels, fn(s, v)) for labels, v in src]
                return [(labels, fn(v, s)) for labels, v in src]
            if swap:
                out = [(drop_name(labels), fn(s, v)) for labels, v in src]
            else:
                out = [(drop_name(labels), fn(v, s)) for labels, v in src]
        if not self.vec_node.one_name:
            _check_unique(out)
        return out


def _drops_name(op: str, v3: bool) -> bool:
    """``shouldDropMetricName`` (2.42) / ``changesMetricSchema`` (3.x)."""
    return op in ("+", "-", "*", "/", "%", "^") or (v3 and op == "atan2")


class _Signature:
    """How samples are matched across a binary operator (``signatureFunc``)."""

    __slots__ = ("names", "on")

    def __init__(self, on: bool, names: list[str]) -> None:
        self.on = on
        self.names: tuple[str, ...] | frozenset[str] = (
            tuple(sorted(set(names))) if on else frozenset(names) | {METRIC_NAME}
        )

    def __call__(self, labels: Labels) -> object:
        if self.on:
            return tuple(get_label(labels, n) for n in self.names)
        names = self.names
        return tuple(p for p in labels if p[0] not in names)


class _SetOp(_Node):
    """``and``/``or``/``unless`` (``VectorAnd``/``VectorOr``/``VectorUnless``)."""

    def __init__(self, op: str, lhs: _Node, rhs: _Node, sig: _Signature) -> None:
        self.op = op
        self.lhs = lhs
        self.rhs = rhs
        self.sig = sig
        self.one_name = lhs.one_name if op != "or" else False

    def vec(self, ctx: _Ctx, t: int) -> Vec:
        lhs = self.lhs.vec(ctx, t)
        rhs = self.rhs.vec(ctx, t)
        sig = self.sig
        op = self.op
        if op == "and":
            if not lhs or not rhs:
                return []
            right = {sig(labels) for labels, _ in rhs}
            return [s for s in lhs if sig(s[0]) in right]
        if op == "or":
            if not lhs:
                return list(rhs)
            if not rhs:
                return list(lhs)
            left = {sig(labels) for labels, _ in lhs}
            return list(lhs) + [s for s in rhs if sig(s[0]) not in left]
        if not lhs or not rhs:
            return list(lhs)
        right = {sig(labels) for labels, _ in rhs}
        return [s for s in lhs if sig(s[0]) not in right]


class _VectorVector(_Node):
    """Arithmetic and comparison between two vectors (``VectorBinop`` and ``resultMetric``)."""

    def __init__(
        self,
        op: str,
        lhs: _Node,
        rhs: _Node,
        *,
        card: str,
        sig: _Signature,
        matching_on: bool,
        matching_names: list[str],
        include: list[str],
        return_bool: bool,
        v3: bool,
    ) -> None:
        self.op = op
        self.lhs = lhs
        self.rhs = rhs
        self.card = card
        self.sig = sig
        self.matching_on = matching_on
        self.matching_names = frozenset(matching_names)
        self.include = include
        self.return_bool = return_bool
        self.is_cmp = op in _COMPARISON
        self.cmp = _compare(op) if self.is_cmp else None
        self.fn = None if self.is_cmp else _arith(op)
        self.drops = _drops_name(op, v3)
        many = rhs if card == "one-to-many" else lhs
        if (
            self.drops
            or return_bool
            or (card == "one-to-one" and matching_on and METRIC_NAME not in matching_names)
            or (card == "one-to-one" and not matching_on and METRIC_NAME in matching_names)
        ):
            self.one_name = True
        else:
            self.one_name = many.one_name and METRIC_NAME not in include

    def _result_labels(self, many: Labels, one: Labels) -> Labels:
        labels = many
        if self.drops:
            labels = drop_name(labels)
        if self.card == "one-to-one":
            if self.matching_on:
                labels = tuple(p for p in labels if p[0] in self.matching_names)
            else:
                labels = tuple(p for p in labels if p[0] not in self.matching_names)
        for name in self.include:
            labels = with_label(labels, name, get_label(one, name))
        if self.return_bool:
            labels = drop_name(labels)
        return labels

    def vec(self, ctx: _Ctx, t: int) -> Vec:
        lhs = self.lhs.vec(ctx, t)
        rhs = self.rhs.vec(ctx, t)
        if not lhs or not rhs:
            return []
        swapped = self.card == "one-to-many"
        if swapped:
            lhs, rhs = rhs, lhs
        sig = self.sig
        right: dict[object, tuple[Labels, float]] = {}
        for sample in rhs:
            key = sig(sample[0])
            if key in right:
                side = "left" if swapped else "right"
                raise PromQLError(
                    "found duplicate series for the match group on the "
                    f"{side} hand-side of the operation: [{_fmt_labels(sample[0])}, "
                    f"{_fmt_labels(right[key][0])}];many-to-many matching not allowed: "
                    "matching labels must be unique on one side",
                    fix="aggregate that side or match on labels that identify one series",
                )
            right[key] = sample
        one_to_one = self.card == "one-to-one"
        matched: dict[object, set[Labels] | None] = {}
        cmp = self.cmp
        fn = self.fn
        return_bool = self.return_bool
        out: Vec = []
        for labels, value in lhs:
            key = sig(labels)
            r = right.get(key)
            if r is None:
                continue
            vl, vr = (r[1], value) if swapped else (value, r[1])
            if cmp is not None:
                keep = cmp(vl, vr)
                if return_bool:
                    result = 1.0 if keep else 0.0
                elif not keep:
                    continue
                else:
                    result = vl
            else:
                assert fn is not None
                result = fn(vl, vr)
            metric = self._result_labels(labels, r[0])
            if one_to_one:
                if key in matched:
                    raise PromQLError(
                        "multiple matches for labels: many-to-one matching must be explicit "
                        "(group_left/group_right)",
                        fix="add group_left or group_right, or match on more labels",
                    )
                matched[key] = None
            else:
                seen = matched.get(key)
                if seen is None:
                    seen = matched[key] = set()
                if metric in seen:
                    raise PromQLError(
                        "multiple matches for labels: grouping labels must ensure unique matches",
                        fix="match on labels that make each result series unique",
                    )
                seen.add(metric)
            out.append((metric, result))
        return out


class _Aggregate(_Node):
    """An aggregation (the engine's ``AggregateExpr`` case; see ``_aggregate``)."""

    def __init__(
        self, op: str, expr: _Node, param: _Node | None, label: str | None, grouping: Grouping
    ) -> None:
        self.op = op
        self.expr = expr
        self.param = param
        self.label = label
        self.grouping = grouping
        if op in ("topk", "bottomk"):
            self.one_name = expr.one_name
        elif op == "count_values":
            self.one_name = label != METRIC_NAME and (
                grouping.without or METRIC_NAME not in grouping.names
            )
        else:
            self.one_name = grouping.without or METRIC_NAME not in grouping.names

    def vec(self, ctx: _Ctx, t: int) -> Vec:
        op = self.op
        param = self.param.scal(ctx, t) if self.param is not None else 0.0
        src = self.expr.vec(ctx, t)
        if op in ("topk", "bottomk"):
            return _top_bottom_k(op, src, self.grouping, param, ctx.v3)
        if op == "count_values":
            assert self.label is not None
            return _count_values(src, self.grouping, self.label, ctx.v3)
        return _aggregate(op, src, self.grouping, param, ctx.v3)


# --------------------------------------------------------------------------- compiler


def _ms(d: timedelta | None) -> int:
    return 0 if d is None else d // _MS


class _Compiler:
    """Turns a promql-parser tree into nodes, rejecting what the engine does not support."""

    def __init__(self, query: str, v3: bool) -> None:
        self.query = query
        self.v3 = v3

    def unsupported(self, construct: str, why: str = "") -> PromQLError:
        detail = f" ({why})" if why else ""
        return PromQLError(
            f"{construct} is outside gpuscale's PromQL subset{detail}",
            where=f"query {self.query!r}",
            fix="rewrite the query with the supported functions and operators (docs/promql.md)",
            construct=construct,
        )

    def error(self, message: str, construct: str | None = None) -> PromQLError:
        return PromQLError(message, where=f"query {self.query!r}", construct=construct)

    def compile(self, e: Any) -> _Node:
        if isinstance(e, pp.ParenExpr):
            return self.compile(e.expr)
        if isinstance(e, pp.NumberLiteral):
            return _Number(float(e.val))
        if isinstance(e, pp.StringLiteral):
            return _String(str(e.val))
        if isinstance(e, pp.VectorSelector):
            return self.selector(e)
        if isinstance(e, pp.MatrixSelector):
            return _RangeSelector(self.selector(e.vector_selector), _ms(e.range))
        if isinstance(e, pp.SubqueryExpr):
            return self.subquery(e)
        if isinstance(e, pp.UnaryExpr):
            return _Neg(self.compile(e.expr))
        if isinstance(e, pp.BinaryExpr):
            return self.binary(e)
        if isinstance(e, pp.AggregateExpr):
            return self.aggregate(e)
        if isinstance(e, pp.Call):
            return self.call(e)
        raise self.unsupported(f"expression {type(e).__name__}")

    def at(self, node: Any) -> _At:
        at = node.at
        if at is None:
            return None
        kind = str(at.type).rsplit(".", 1)[-1]
        if kind == "Start":
            return "start"
        if kind == "End":
            return "end"
        # promql-parser hands the time over as a datetime, which panics (in Rust) for
        # times before 1970; its debug form carries the seconds and nanoseconds of any
        # time, and the node's own @ comes last (nested ones print first).
        found = _SYSTEM_TIME.findall(repr(node))
        if not found:
            raise self.unsupported("@ modifier")
        seconds, nanos = found[-1]
        return int(seconds) * 1000 + int(nanos) // 1_000_000

    def selector(self, e: Any) -> _Selector:
        matchers = e.matchers
        if matchers.or_matchers:
            raise self.unsupported("'or' inside a label selector")
        out: list[Matcher] = []
        if e.name is not None:
            name = str(e.name)
            out.append(Matcher(METRIC_NAME, "=", name, name.__eq__))
        for m in matchers.matchers:
            out.append(self.matcher(str(m.op).rsplit(".", 1)[-1], str(m.name), str(m.value)))
        return _Selector(out, _ms(e.offset), self.at(e))

    def matcher(self, kind: str, name: str, value: str) -> Matcher:
        if kind == "Equal":
            return Matcher(name, "=", value, value.__eq__)
        if kind == "NotEqual":
            return Matcher(name, "!=", value, value.__ne__)
        try:
            regex = compile_go_regex(value, dotall=self.v3)
        except ValueError as exc:
            raise self.error(
                f"cannot use regular expression {value!r} for label {name!r}: {exc}",
                construct="regex matcher",
            ) from None
        full = regex.fullmatch
        dialect = "s" if self.v3 else ""
        if kind == "Re":
            return Matcher(name, "=~", value, lambda v: full(v) is not None, dialect)
        return Matcher(name, "!~", value, lambda v: full(v) is None, dialect)

    def subquery(self, e: Any) -> _Subquery:
        inner = self.compile(e.expr)
        if inner.kind != "vector":
            raise self.error("subquery is only allowed on instant vector")
        return _Subquery(inner, _ms(e.range), _ms(e.step), _ms(e.offset), self.at(e))

    def matrix_arg(self, e: Any) -> _Node:
        node = self.compile(e)
        if node.kind != "matrix":
            raise self.error("expected a range vector argument")
        return node

    def binary(self, e: Any) -> _Node:
        op = str(e.op)
        lhs = self.compile(e.lhs)
        rhs = self.compile(e.rhs)
        mod = e.modifier
        return_bool = bool(mod.return_bool) if mod is not None else False
        if mod is not None:
            fill = mod.fill_values
            if fill is not None and (fill.lhs is not None or fill.rhs is not None):
                raise self.unsupported("fill() vector matching modifier")
        if op not in _ARITHMETIC | _COMPARISON | _SET:
            raise self.unsupported(f"operator {op!r}")
        if lhs.kind == "scalar" and rhs.kind == "scalar":
            return _ScalarBinary(op, lhs, rhs)
        if lhs.kind == "vector" and rhs.kind == "scalar":
            return _VectorScalar(op, lhs, rhs, swap=False, return_bool=return_bool, v3=self.v3)
        if lhs.kind == "scalar" and rhs.kind == "vector":
            return _VectorScalar(op, rhs, lhs, swap=True, return_bool=return_bool, v3=self.v3)
        if lhs.kind != "vector" or rhs.kind != "vector":
            raise self.error("binary expression must contain only scalar and instant vector types")
        matching = mod.matching if mod is not None else None
        on = matching is not None and str(matching.type).endswith("Include")
        names = [str(n) for n in matching.labels] if matching is not None else []
        sig = _Signature(on, names)
        if op in _SET:
            return _SetOp(op, lhs, rhs, sig)
        card = "one-to-one"
        include: list[str] = []
        if mod is not None:
            card_name = str(mod.card).rsplit(".", 1)[-1]
            card = {"ManyToOne": "many-to-one", "OneToMany": "one-to-many"}.get(
                card_name, "one-to-one"
            )
            include = [str(n) for n in (mod.group_labels or [])]
        return _VectorVector(
            op,
            lhs,
            rhs,
            card=card,
            sig=sig,
            matching_on=on,
            matching_names=names,
            include=include,
            return_bool=return_bool,
            v3=self.v3,
        )

    def aggregate(self, e: Any) -> _Node:
        op = str(e.op)
        if op not in SUPPORTED_AGGREGATIONS:
            raise self.unsupported(f"aggregation {op}()", _UNSUPPORTED_HINT.get(op, ""))
        expr = self.compile(e.expr)
        mod = e.modifier
        without = mod is not None and str(mod.type).endswith("Without")
        names = [str(n) for n in mod.labels] if mod is not None else []
        grouping = Grouping(names, without)
        param: _Node | None = None
        label: str | None = None
        if op == "count_values":
            p = self.compile(e.param)
            if not isinstance(p, _String):
                raise self.error("count_values() needs a string parameter")
            label = p.value
        elif op in ("topk", "bottomk", "quantile"):
            param = self.compile(e.param)
        return _Aggregate(op, expr, param, label, grouping)

    def call(self, e: Any) -> _Node:
        name = str(e.func.name)
        args = list(e.args)
        if name not in SUPPORTED_FUNCTIONS or (name == "holt_winters" and self.v3):
            raise self.unsupported(f"function {name}()", _UNSUPPORTED_HINT.get(name, ""))
        if name in RANGE_FUNCTIONS or name in BATCH_RANGE_FUNCTIONS:
            scalar_args: list[_Node] = []
            matrix: _Node | None = None
            range_ms = 0
            for a in args:
                node = self.compile(a)
                if node.kind == "matrix":
                    matrix = node
                    range_ms = node.range_ms if isinstance(node, _RangeSelector | _Subquery) else 0
                else:
                    scalar_args.append(node)
            assert matrix is not None
            if name in BATCH_RANGE_FUNCTIONS:
                batch = BATCH_RANGE_FUNCTIONS[name]
                return _RangeCall(name, batch, matrix, range_ms, scalar_args, batch=True)
            return _RangeCall(name, RANGE_FUNCTIONS[name], matrix, range_ms, scalar_args)
        if name == "absent_over_time":
            arg = self.matrix_arg(args[0])
            labels = self.absent_labels(arg.selector) if isinstance(arg, _RangeSelector) else ()
            return _AbsentOverTime(arg, labels)
        if name in SIMPLE_FUNCTIONS:
            return _MapValues(self.compile(args[0]), SIMPLE_FUNCTIONS[name], [])
        nodes = [self.compile(a) for a in args]
        if name in DATE_FUNCTIONS:
            return _Date(name, nodes[0] if nodes else None)
        if name == "time":
            return _Time()
        if name == "pi":
            return _Number(math.pi)
        if name == "vector":
            return _VectorOf(nodes[0])
        if name == "scalar":
            return _ScalarOf(nodes[0])
        if name == "absent":
            labels = self.absent_labels(nodes[0]) if isinstance(nodes[0], _Selector) else ()
            return _Absent(nodes[0], labels)
        if name == "timestamp":
            return _Timestamp(nodes[0])
        if name in ("sort", "sort_desc"):
            return _Sort(nodes[0], name == "sort_desc")
        if name == "clamp":
            return _MapValues(nodes[0], _clamp, nodes[1:3], lambda lo, hi: hi < lo)
        if name == "clamp_min":
            return _MapValues(nodes[0], lambda v, lo: go_max(lo, v), nodes[1:2])
        if name == "clamp_max":
            return _MapValues(nodes[0], lambda v, hi: go_min(hi, v), nodes[1:2])
        if name == "round":
            return _MapValues(nodes[0], _round, nodes[1:2])
        if name == "histogram_quantile":
            return _HistogramQuantile(nodes[0], nodes[1])
        if name == "label_replace":
            return self.label_replace(nodes)
        assert name == "label_join"
        return self.label_join(nodes)

    def absent_labels(self, sel: _Selector) -> Labels:
        """``createLabelsForAbsentFunction``: equality matchers become labels, except names
        matched more than once (``promql-parser`` may reorder matchers; see docs)."""
        labels: dict[str, str] = {}
        seen: set[str] = set()
        for m in sel.matchers:
            if m.name == METRIC_NAME:
                continue
            if m.op == "=" and m.name not in seen:
                if m.value:
                    labels[m.name] = m.value
                seen.add(m.name)
            else:
                labels.pop(m.name, None)
        return tuple(sorted(labels.items()))

    def strings(self, nodes: list[_Node], first: int) -> list[str]:
        out = []
        for n in nodes[first:]:
            if not isinstance(n, _String):
                raise self.error("expected a string literal argument")
            out.append(n.value)
        return out

    def label_replace(self, nodes: list[_Node]) -> _Node:
        dst, repl, src, regex_text = self.strings(nodes, 1)
        try:
            regex = compile_go_regex(regex_text, dotall=self.v3)
        except ValueError:
            raise self.error(
                f"invalid regular expression in label_replace(): {regex_text}",
                construct="label_replace()",
            ) from None
        if not is_valid_label_name(dst, utf8=self.v3):
            raise self.error(
                f"invalid destination label name in label_replace(): {dst}",
                construct="label_replace()",
            )
        return _LabelReplace(nodes[0], dst, repl, src, regex)

    def label_join(self, nodes: list[_Node]) -> _Node:
        dst, sep, *srcs = self.strings(nodes, 1)
        for s in srcs:
            if not is_valid_label_name(s, utf8=self.v3):
                raise self.error(
                    f"invalid source label name in label_join(): {s}", construct="label_join()"
                )
        if not is_valid_label_name(dst, utf8=self.v3):
            raise self.error(
                f"invalid destination label name in label_join(): {dst}", construct="label_join()"
            )
        return _LabelJoin(nodes[0], dst, sep, srcs)


# --------------------------------------------------------------------------- engine


class Engine:
    """Evaluates PromQL over a ``SeriesStore`` as Prometheus ``version`` would.

    ``lookback_ms`` is Prometheus' ``--query.lookback-delta`` (5 minutes by default);
    ``default_subquery_step_ms`` is the step of ``x[5m:]`` subqueries, which Prometheus
    takes from the global ``evaluation_interval`` (1 minute unless configured).
    Queries are parsed and compiled once and cached by their text.
    """

    def __init__(
        self,
        store: SeriesStore,
        *,
        lookback_ms: int = 300_000,
        version: Version = "3",
        default_subquery_step_ms: int = 60_000,
    ) -> None:
        if version not in ("2", "3"):
            raise ValueError(f"version must be '2' or '3', got {version!r}")
        if lookback_ms <= 0:
            raise ValueError(f"lookback_ms must be positive, got {lookback_ms}")
        if default_subquery_step_ms <= 0:
            raise ValueError(
                f"default_subquery_step_ms must be positive, got {default_subquery_step_ms}"
            )
        self.store = store
        self.lookback_ms = lookback_ms
        self.version: Version = version
        self.default_subquery_step_ms = default_subquery_step_ms
        self._v3 = version == "3"
        self._plans: dict[str, _Node] = {}

    def parse(self, query: str) -> pp.Expr:
        """The syntax tree of ``query``; raises ``PromQLError`` when it is over the text
        limits (:func:`~gpuscale.promql.syntax.parse_query`) or does not parse."""
        try:
            return parse_query(query)
        except ValueError as exc:
            raise PromQLError(
                f"cannot parse PromQL: {exc}",
                where=f"query {query!r}",
                fix="check the query's syntax (https://prometheus.io/docs/prometheus/latest/querying/basics/)",
            ) from None

    def _plan(self, query: str | pp.Expr) -> _Node:
        if isinstance(query, str):
            plan = self._plans.get(query)
            if plan is None:
                expr = self.parse(query)
                plan = _Compiler(query, self._v3).compile(expr)
                if len(self._plans) >= 4096:
                    self._plans.clear()
                self._plans[query] = plan
            return plan
        text = query.prettify()
        plan = self._plans.get(text)
        if plan is None:
            plan = _Compiler(text, self._v3).compile(query)
            self._plans[text] = plan
        return plan

    def check(self, query: str | pp.Expr) -> None:
        """Raise ``PromQLError`` unless ``query`` parses and lies in the supported subset."""
        self._plan(query)

    def _ctx(self, start: int, end: int) -> _Ctx:
        return _Ctx(
            self.store,
            v3=self._v3,
            lookback=self.lookback_ms,
            sub_step=self.default_subquery_step_ms,
            start=start,
            end=end,
        )

    def instant(self, query: str | pp.Expr, t_ms: int) -> Result:
        """Evaluate ``query`` at ``t_ms`` as ``/api/v1/query?time=`` does."""
        plan = self._plan(query)
        ctx = self._ctx(t_ms, t_ms)
        kind = plan.kind
        if kind == "vector":
            return VectorResult(tuple(Sample(labels, v) for labels, v in plan.vec(ctx, t_ms)), t_ms)
        if kind == "scalar":
            return ScalarResult(plan.scal(ctx, t_ms), t_ms)
        if kind == "string":
            assert isinstance(plan, _String)
            return StringResult(plan.value, t_ms)
        _, _, wins = plan.windows(ctx, t_ms)
        return MatrixResult(
            tuple(
                Series(s.labels, tuple(ts[lo:hi]), tuple(vs[lo:hi])) for s, ts, vs, lo, hi in wins
            )
        )

    def range(self, query: str | pp.Expr, start_ms: int, end_ms: int, step_ms: int) -> MatrixResult:
        """Evaluate ``query`` from ``start_ms`` to ``end_ms`` every ``step_ms``, as
        ``/api/v1/query_range`` does; series come sorted by labels."""
        if step_ms <= 0:
            raise PromQLError(
                "zero or negative query resolution step widths are not accepted",
                fix="use a positive step",
            )
        if end_ms < start_ms:
            raise PromQLError("end timestamp must not be before start time")
        if (end_ms - start_ms) // step_ms >= _MAX_POINTS:
            raise PromQLError(
                "exceeded maximum resolution of 11,000 points per timeseries",
                fix="decrease the query resolution (increase step)",
            )
        plan = self._plan(query)
        if plan.kind not in ("vector", "scalar"):
            what = "range vector" if plan.kind == "matrix" else "string"
            raise PromQLError(
                f'invalid expression type "{what}" for range query, '
                "must be Scalar or instant Vector",
                where=f"query {query if isinstance(query, str) else query.prettify()!r}",
            )
        ctx = self._ctx(start_ms, end_ms)
        points: dict[Labels, tuple[list[int], list[float]]] = {}
        for t in range(start_ms, end_ms + 1, step_ms):
            if plan.kind == "scalar":
                rows: Vec = [((), plan.scal(ctx, t))]
            else:
                rows = plan.vec(ctx, t)
            for labels, v in rows:
                p = points.get(labels)
                if p is None:
                    p = points[labels] = ([], [])
                p[0].append(t)
                p[1].append(v)
        return MatrixResult(
            tuple(Series(labels, tuple(p[0]), tuple(p[1])) for labels, p in sorted(points.items()))
        )
