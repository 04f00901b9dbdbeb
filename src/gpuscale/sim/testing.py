"""Test doubles for the simulator's seams: a metrics backend that answers a few fixed
query shapes, and stand-in scaling policies.

These are **not** models of Prometheus, KEDA or the HPA. They exist so that the
simulator's loops (scrapes, polling, syncs, the application of decisions) can be tested
and benchmarked before ``gpuscale.promql`` and ``gpuscale.controllers.{hpa,keda}`` are
wired in, and they stay useful afterwards as cheap fakes.

:class:`FakeMetricsBackend` stores samples with Prometheus' conventions (integer
milliseconds, the staleness-marker NaN, a 5-minute lookback) and evaluates only:
an instant selector ``name{label="v", label!="v", label=~"re", label!~"re"}``;
``sum``/``count``/``avg``/``min``/``max`` of a selector, optionally ``by (labels)``;
number literals; and ``+ - * /`` between those, matching series on identical label sets.
Anything else answers ``{"status": "error", "errorType": "bad_data", ...}``.
"""

from __future__ import annotations

import array
import bisect
import math
import re
import struct
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpuscale.sim.metrics import Labels, MetricsBackend, query_scalar
from gpuscale.sim.scalers import ScaleDecision, ScaleView
from gpuscale.timeline import Decision

__all__ = [
    "STALE_NAN",
    "FakeMetricsBackend",
    "FixedScaler",
    "ThresholdScaler",
    "format_sample_value",
    "is_stale_marker",
]

_STALE_BITS = 0x7FF0000000000002
STALE_NAN: float = struct.unpack("<d", _STALE_BITS.to_bytes(8, "little"))[0]
"""Prometheus' staleness marker (``value.StaleNaN``)."""


def is_stale_marker(value: float) -> bool:
    """Whether ``value`` is the staleness marker (not just any NaN)."""
    return math.isnan(value) and int.from_bytes(struct.pack("<d", value), "little") == _STALE_BITS


def format_sample_value(value: float) -> str:
    """A sample value as Prometheus' API writes it (``strconv.FormatFloat(v, 'f', -1, 64)``)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return np.format_float_positional(value, trim="-")


class _Series:
    __slots__ = ("active", "labels", "matches", "name", "public", "ref", "times", "values")

    def __init__(self, labels: dict[str, str], ref: int) -> None:
        self.ref = ref
        self.labels = labels
        self.name = labels["__name__"]
        self.public = {k: v for k, v in labels.items() if k != "__name__"}
        self.times = array.array("q")
        self.values = array.array("d")
        self.active = True
        self.matches: dict[tuple[tuple[str, str, str], ...], bool] = {}


Vector = list[tuple[dict[str, str], float]]
_TOKEN = re.compile(
    r"\s*(?:(?P<num>\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)|(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)"
    r"|(?P<str>\"(?:[^\"\\]|\\.)*\")|(?P<op>=~|!~|!=|[-+*/(){},=]))"
)
_AGGREGATIONS = ("sum", "count", "avg", "min", "max")


class _QueryError(ValueError):
    pass


class FakeMetricsBackend(MetricsBackend):
    """An in-memory :class:`MetricsBackend` test double (see the module docstring)."""

    def __init__(self, *, lookback_ms: int = 300_000) -> None:
        self.lookback_ms = lookback_ms
        self._refs: dict[tuple[tuple[str, str], ...], int] = {}
        self._series: list[_Series] = []
        # live series by name and by (name, label, value), like Prometheus' postings
        self._by_name: dict[str, dict[int, _Series]] = {}
        self._names: set[str] = set()
        self._postings: dict[tuple[str, str, str], dict[int, _Series]] = {}
        self.appends = 0
        self.queries = 0
        self._compiled: dict[str, Eval] = {}

    def series_ref(self, labels: Labels) -> Hashable:
        key = tuple(sorted(labels.items()))
        ref = self._refs.get(key)
        if ref is None:
            ref = len(self._series)
            self._refs[key] = ref
            series = _Series(dict(labels), ref)
            self._series.append(series)
            self._index(series)
        return ref

    def append_ref(self, ref: Any, t_ms: int, value: float) -> None:
        series = self._series[ref]
        times = series.times
        if times and t_ms <= times[-1]:
            return  # out of order or duplicate: Prometheus rejects it
        times.append(t_ms)
        series.values.append(value)
        self.appends += 1
        if not series.active:
            series.active = True
            self._index(series)

    def append(self, labels: Labels, t_ms: int, value: float) -> None:
        self.append_ref(self.series_ref(labels), t_ms, value)

    def mark_stale(self, labels: Labels, t_ms: int) -> None:
        self.append(labels, t_ms, STALE_NAN)

    def samples(self, labels: Labels) -> list[tuple[int, float]]:
        """Every sample of the series ``labels`` (for tests)."""
        ref = self._refs.get(tuple(sorted(labels.items())))
        if ref is None:
            return []
        series = self._series[ref]
        return list(zip(series.times, series.values, strict=True))

    def series_names(self) -> list[str]:
        """Metric names with at least one series (for tests)."""
        return sorted(self._names)

    def _index(self, series: _Series) -> None:
        self._names.add(series.name)
        self._by_name.setdefault(series.name, {})[series.ref] = series
        for label, value in series.public.items():
            self._postings.setdefault((series.name, label, value), {})[series.ref] = series

    def query(self, query: str, t_ms: int) -> dict[str, Any]:
        self.queries += 1
        try:
            compiled = self._compiled.get(query)
            if compiled is None:
                compiled = _Parser(query).compile()
                self._compiled[query] = compiled
            result = compiled(self, t_ms)
        except _QueryError as exc:
            return {"status": "error", "errorType": "bad_data", "error": str(exc)}
        vector = [({}, result)] if isinstance(result, float) else result
        t_s = t_ms / 1000.0
        return {
            "status": "success",
            "data": {
                "resultType": "vector",
                "result": [
                    {"metric": dict(labels), "value": [t_s, format_sample_value(value)]}
                    for labels, value in vector
                ],
            },
        }

    def _select(self, name: str, matchers: tuple[tuple[str, str, str], ...], t_ms: int) -> Vector:
        # Series with nothing left in the lookback window are dropped from the index
        # (queries move forward in time here), so dead pods cost nothing later.
        live = self._by_name.get(name)
        for label, op, wanted in matchers:
            if op == "=" and wanted:
                postings = self._postings.get((name, label, wanted))
                if not postings:
                    return []
                if live is None or len(postings) < len(live):
                    live = postings
        if not live:
            return []
        out: Vector = []
        low = t_ms - self.lookback_ms
        for series in list(live.values()):
            times = series.times
            if times[-1] <= low or (times[-1] <= t_ms and is_stale_marker(series.values[-1])):
                series.active = False
                del live[series.ref]
                continue
            matched = series.matches.get(matchers)
            if matched is None:
                labels = series.labels
                matched = all(_match(labels.get(k, ""), op, v) for k, op, v in matchers)
                series.matches[matchers] = matched
            if not matched:
                continue
            i = bisect.bisect_right(times, t_ms) - 1
            if i < 0 or times[i] <= low:
                continue
            value = series.values[i]
            if is_stale_marker(value):
                continue
            out.append((series.public, value))
        return out


def _match(have: str, op: str, want: str) -> bool:
    if op == "=":
        return have == want
    if op == "!=":
        return have != want
    matched = re.fullmatch(want, have) is not None
    return matched if op == "=~" else not matched


Eval = Callable[["FakeMetricsBackend", int], "Vector | float"]


class _Parser:
    """Compiles a query once into nested closures evaluated at any time."""

    def __init__(self, text: str) -> None:
        self.tokens: list[tuple[str, str]] = []
        position = 0
        text = text.strip()
        while position < len(text):
            m = _TOKEN.match(text, position)
            if m is None or m.end() == position:
                raise _QueryError(f"unsupported query text at {position}: {text[position:]!r}")
            kind = m.lastgroup
            assert kind is not None
            self.tokens.append((kind, m.group(kind)))
            position = m.end()
            while position < len(text) and text[position].isspace():
                position += 1
        self.i = 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self, value: str | None = None) -> tuple[str, str]:
        token = self.peek()
        if token is None or (value is not None and token[1] != value):
            raise _QueryError(f"expected {value or 'more'} in query")
        self.i += 1
        return token

    def compile(self) -> Eval:
        result = self.expr()
        if self.peek() is not None:
            raise _QueryError(f"unexpected {self.peek()[1]!r}")  # type: ignore[index]
        return result

    def expr(self) -> Eval:
        left = self.term()
        while (token := self.peek()) is not None and token[1] in ("+", "-"):
            self.take()
            left = _binary(token[1], left, self.term())
        return left

    def term(self) -> Eval:
        left = self.atom()
        while (token := self.peek()) is not None and token[1] in ("*", "/"):
            self.take()
            left = _binary(token[1], left, self.atom())
        return left

    def atom(self) -> Eval:
        kind, value = self.take()
        if kind == "num":
            number = float(value)
            return lambda backend, t_ms: number
        if value == "(":
            inner = self.expr()
            self.take(")")
            return inner
        if kind != "name":
            raise _QueryError(f"unexpected {value!r}")
        if (
            value in _AGGREGATIONS
            and (token := self.peek()) is not None
            and token[1]
            in (
                "(",
                "by",
            )
        ):
            return self.aggregate(value)
        return self.selector(value)

    def aggregate(self, op: str) -> Eval:
        by: list[str] | None = None
        if self.peek() == ("name", "by"):
            self.take()
            by = self.label_list()
        self.take("(")
        inner = self.expr()
        self.take(")")
        if self.peek() == ("name", "by"):
            self.take()
            by = self.label_list()
        reducers: dict[str, Callable[[list[float]], float]] = {
            "sum": math.fsum,
            "count": lambda xs: float(len(xs)),
            "avg": lambda xs: math.fsum(xs) / len(xs),
            "min": min,
            "max": max,
        }
        reduce = reducers[op]
        names = tuple(by or ())

        def evaluate(backend: FakeMetricsBackend, t_ms: int) -> Vector | float:
            vector = inner(backend, t_ms)
            if isinstance(vector, float):
                raise _QueryError(f"{op} needs a vector")
            groups: dict[tuple[tuple[str, str], ...], list[float]] = {}
            for labels, v in vector:
                key = tuple((k, labels[k]) for k in names if labels.get(k, ""))
                groups.setdefault(key, []).append(v)
            return [(dict(key), reduce(values)) for key, values in groups.items()]

        return evaluate

    def label_list(self) -> list[str]:
        self.take("(")
        names: list[str] = []
        while self.peek() is not None and self.peek() != ("op", ")"):
            names.append(self.take()[1])
            if self.peek() == ("op", ","):
                self.take()
        self.take(")")
        return names

    def selector(self, name: str) -> Eval:
        matchers: list[tuple[str, str, str]] = []
        if self.peek() == ("op", "{"):
            self.take()
            while self.peek() != ("op", "}"):
                label = self.take()[1]
                op = self.take()[1]
                kind, raw = self.take()
                if kind != "str" or op not in ("=", "!=", "=~", "!~"):
                    raise _QueryError("bad label matcher")
                matchers.append((label, op, raw[1:-1].encode().decode("unicode_escape")))
                if self.peek() == ("op", ","):
                    self.take()
            self.take("}")
        frozen = tuple(matchers)
        return lambda backend, t_ms: backend._select(name, frozen, t_ms)


def _apply(op: str, a: float, b: float) -> float:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if b == 0:
        return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a)
    return a / b


def _binary(op: str, left_eval: Eval, right_eval: Eval) -> Eval:
    def evaluate(backend: FakeMetricsBackend, t_ms: int) -> Vector | float:
        return _combine(op, left_eval(backend, t_ms), right_eval(backend, t_ms))

    return evaluate


def _combine(op: str, left: Vector | float, right: Vector | float) -> Vector | float:
    if isinstance(left, float) and isinstance(right, float):
        return _apply(op, left, right)
    if isinstance(left, float):
        assert not isinstance(right, float)
        return [(labels, _apply(op, left, v)) for labels, v in right]
    if isinstance(right, float):
        return [(labels, _apply(op, v, right)) for labels, v in left]
    if len(left) == 1 and len(right) == 1 and not left[0][0] and not right[0][0]:
        return [(left[0][0], _apply(op, left[0][1], right[0][1]))]
    index = {tuple(sorted(labels.items())): v for labels, v in right}
    out: Vector = []
    for labels, v in left:
        other = index.get(tuple(sorted(labels.items())))
        if other is not None:
            out.append((labels, _apply(op, v, other)))
    return out


@dataclass
class FixedScaler:
    """Stand-in policy: sets ``spec.replicas`` to a schedule of ``(from_time_s, replicas)``."""

    schedule: Sequence[tuple[float, int]]
    name: str = "stand-in"
    period_s: float = 15.0
    first_sync_s: float = 0.0

    def sync(self, view: ScaleView) -> ScaleDecision:
        wanted: int | None = None
        for at, replicas in self.schedule:
            if view.now_s >= at:
                wanted = replicas
        if wanted is None or wanted == view.spec_replicas:
            return ScaleDecision(desired=wanted)
        return ScaleDecision(
            replicas=wanted,
            desired=wanted,
            decisions=(
                Decision(
                    self.name,
                    "scale",
                    "Schedule",
                    f"deployment/{view.namespace}/{view.name}",
                    f"{view.spec_replicas} -> {wanted}",
                ),
            ),
        )


@dataclass
class ThresholdScaler:
    """Stand-in policy: ``ceil(query / target)`` clamped to ``[min_replicas, max_replicas]``.

    Like an HPA AverageValue target without tolerance or rate limits, with an optional
    scale-down window (the highest recommendation of the last ``scale_down_window_s``
    wins) — a deliberately simple policy to exercise the loops, not a model of the HPA.
    """

    query: str
    target: float
    min_replicas: int = 1
    max_replicas: int = 10
    name: str = "stand-in"
    period_s: float = 15.0
    first_sync_s: float = 0.0
    metric: str = "value"
    scale_down_window_s: float = 0.0
    writes: bool = True
    """False: only query and report (like KEDA's poll when minReplicaCount >= 1)."""
    history: list[tuple[float, float | None]] = field(default_factory=list)
    recommendations: list[tuple[float, int]] = field(default_factory=list)

    def sync(self, view: ScaleView) -> ScaleDecision:
        value = query_scalar(view.metrics.query(self.query, view.now_ms))
        self.history.append((view.now_s, value))
        usable = 0.0 if value is None or not math.isfinite(value) else value
        raw = max(self.min_replicas, min(self.max_replicas, math.ceil(usable / self.target)))
        self.recommendations = [
            (t, r) for t, r in self.recommendations if view.now_s - t < self.scale_down_window_s
        ]
        self.recommendations.append((view.now_s, raw))
        desired = max(r for _, r in self.recommendations)
        metrics = {f"query:{self.metric}": value}
        if not self.writes:
            return ScaleDecision(metrics=metrics)
        if desired == view.spec_replicas:
            return ScaleDecision(desired=desired, metrics=metrics)
        return ScaleDecision(
            replicas=desired,
            desired=desired,
            metrics=metrics,
            decisions=(
                Decision(
                    self.name,
                    "scale",
                    "AboveTarget" if desired > view.spec_replicas else "BelowTarget",
                    f"deployment/{view.namespace}/{view.name}",
                    f"{self.metric} {usable:g} / target {self.target:g} -> {desired}",
                ),
            ),
        )
