"""The seam between the simulated world and Prometheus: where scraped samples go and where
queries are answered — and the one implementation of it, over ``gpuscale.promql``.

The simulator writes every scraped sample into a :class:`MetricsBackend` and asks it the
queries KEDA and the HPA run. :class:`PromQLBackend` is that backend: a
``gpuscale.promql.SeriesStore`` for the samples (Prometheus' head block) and an
``Engine`` with Prometheus' semantics (lookback, staleness, version 2 or 3) for the
queries. ``instant`` returns the engine's result object; ``query`` the body of
``/api/v1/query``, as a real server answers it.

Labels are a mapping that includes ``__name__``. Times are integer milliseconds, as
Prometheus stores them. ``mark_stale`` writes Prometheus' staleness marker for a series
that disappeared from its target or whose target went away.

**Repeated queries**, answered from memory only when the answer cannot differ:

- KEDA's poll and the HPA's metric read often ask the same query at the same instant
  (both loops start at 0 and the HPA's period divides KEDA's): a repeated
  ``(query, t_ms)`` with nothing appended since is the same answer (evaluation is a pure
  function of the store and the time).
- The HPA asks every sync while a gauge holds its value. For a query built only from
  instant selectors (no ``offset``/``@``, ``=``/``!=`` matchers), aggregations of values
  (``sum avg min max count group stddev stdvar``), arithmetic and comparison operators,
  number literals and functions of values (``abs ceil floor round clamp* exp ln log2
  log10 sqrt sgn scalar vector``), the answer is a function of which series the selectors
  pick and the value each contributes — its newest sample, if that sample lies within
  the lookback window (left-open in Prometheus 3, closed in 2) and is not a staleness
  marker. The backend computes that list (series, value) for such a query; when it equals
  the previous evaluation's, the previous samples are the answer, at the new time. Where
  the shortcut keeps missing (values that change at every scrape), it stops trying for a
  while; that changes speed only.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

import promql_parser as pp

from gpuscale.promql import (
    Engine,
    Matcher,
    PromQLError,
    Result,
    ScalarResult,
    SeriesStore,
    VectorResult,
    parse_query,
    walk,
)
from gpuscale.promql.store import selection_key

__all__ = ["Labels", "MetricsBackend", "PromQLBackend", "PrometheusOptions", "query_scalar"]

Labels = Mapping[str, str]


@runtime_checkable
class MetricsBackend(Protocol):
    """A series store with a PromQL instant-query front (Prometheus ``/api/v1/query`` shape)."""

    def series_ref(self, labels: Labels) -> Hashable:
        """A handle for ``labels`` that makes later appends cheap."""

    def append_ref(self, ref: Any, t_ms: int, value: float) -> None:
        """Add one sample to the series behind ``ref`` (from :meth:`series_ref`)."""

    def append_scrape(self, refs: Sequence[Any], t_ms: int, values: Sequence[float]) -> None:
        """Add one sample to each series in ``refs`` at the same time (one scrape)."""

    def mark_stale(self, labels: Labels, t_ms: int) -> None:
        """Write a staleness marker for ``labels`` at ``t_ms``."""

    def mark_stale_ref(self, ref: Any, t_ms: int) -> None:
        """Write a staleness marker for the series behind ``ref``."""

    def instant(self, query: str, t_ms: int) -> Result:
        """Evaluate an instant query at ``t_ms``; raises ``PromQLError`` where Prometheus
        answers with an error."""

    def query(self, query: str, t_ms: int) -> dict[str, Any]:
        """Evaluate an instant query at ``t_ms``.

        Returns the body of Prometheus' ``/api/v1/query``: ``{"status": "success", "data":
        {"resultType": "vector", "result": [{"metric": {...}, "value": [t_s, "v"]}]}}``,
        or ``{"status": "error", "errorType": ..., "error": ...}``.
        """


@dataclass(frozen=True, slots=True)
class PrometheusOptions:
    """The Prometheus server flags a query's answer depends on (upstream ``cmd/prometheus``'s
    ``--query.lookback-delta`` and ``--storage.tsdb.retention.time``, and the major version
    whose PromQL semantics apply). The profile's ``prometheus`` section maps onto them in
    :func:`gpuscale.sim.inputs.prometheus_options`."""

    lookback_ms: int = 300_000
    """``--query.lookback-delta``, milliseconds."""
    version: Literal["2", "3"] = "3"
    """The Prometheus major version: ``"3"`` or ``"2"``."""
    retention_ms: int | None = None
    """Samples older than this are dropped during a run (None keeps them all)."""

    def backend(self, *, reuse_values: bool = True) -> PromQLBackend:
        """A fresh, empty backend answering as this server would."""
        return PromQLBackend(
            lookback_ms=self.lookback_ms,
            version=self.version,
            retention_ms=self.retention_ms,
            reuse_values=reuse_values,
        )


class PromQLBackend:
    """:class:`MetricsBackend` over ``gpuscale.promql`` (see the module docstring).

    ``lookback_ms`` is ``--query.lookback-delta``; ``version`` the Prometheus major
    version whose PromQL semantics apply; ``retention_ms`` bounds the samples kept (the
    longest range any query reads plus the lookback is enough), None keeps all.
    ``reuse_values=False`` evaluates every query afresh (for tests that compare).
    """

    def __init__(
        self,
        *,
        lookback_ms: int = 300_000,
        version: Literal["2", "3"] = "3",
        retention_ms: int | None = None,
        reuse_values: bool = True,
    ) -> None:
        self.store = SeriesStore(retention_ms=retention_ms)
        self.engine = Engine(self.store, lookback_ms=lookback_ms, version=version)
        self.queries = 0
        """Queries asked (repeats answered from memory included)."""
        self.evaluations = 0
        """Queries the engine evaluated."""
        self._writes = 0
        self._memo: dict[str, tuple[int, int, Result | PromQLError]] = {}
        self._v3 = version == "3"
        self._lookback_ms = lookback_ms
        self._reuse = reuse_values
        self._shapes: dict[str, _Shape | None] = {}
        self._values: dict[str, tuple[tuple[tuple[int, float], ...], Result]] = {}
        self.reused = 0
        """Answers given from the previous evaluation's values (see the module docstring)."""
        store = self.store
        self.series_ref = store.series_ref

    def append_ref(self, ref: Any, t_ms: int, value: float) -> None:
        """Add one sample to the series ``ref``."""
        self._writes += 1
        self.store.append_ref(ref, t_ms, value)

    def append_scrape(self, refs: Sequence[Any], t_ms: int, values: Sequence[float]) -> None:
        """Add one scrape's samples, one per series, at ``t_ms``."""
        self._writes += 1
        self.store.append_scrape(refs, t_ms, values)

    def append(self, labels: Labels, t_ms: int, value: float) -> None:
        """Add one sample to the series ``labels`` (created on first use)."""
        self._writes += 1
        self.store.append(labels, t_ms, value)

    def mark_stale(self, labels: Labels, t_ms: int) -> None:
        """Write a staleness marker (unknown series are ignored, as Prometheus does)."""
        self._writes += 1
        self.store.mark_stale(labels, t_ms)

    def mark_stale_ref(self, ref: Any, t_ms: int) -> None:
        """Write a staleness marker on the series ``ref``."""
        self._writes += 1
        self.store.mark_stale_ref(ref, t_ms)

    def check(self, query: str) -> None:
        """Raise ``PromQLError`` unless ``query`` parses and lies in the engine's subset."""
        self.engine.check(query)

    def instant(self, query: str, t_ms: int) -> Result:
        """The engine's answer at ``t_ms``; ``PromQLError`` where Prometheus fails the query."""
        self.queries += 1
        hit = self._memo.get(query)
        if hit is not None and hit[0] == t_ms and hit[1] == self._writes:
            answer = hit[2]
        else:
            answer = self._evaluate(query, t_ms)
            if len(self._memo) > 1024:
                self._memo.clear()
            self._memo[query] = (t_ms, self._writes, answer)
        if isinstance(answer, PromQLError):
            raise answer
        return answer

    def _evaluate(self, query: str, t_ms: int) -> Result | PromQLError:
        shape = self._shapes.get(query, _UNKNOWN) if self._reuse else None
        if shape is _UNKNOWN:
            shape = _shape(query)
            self._shapes[query] = shape
        seen = None
        if shape is not None and shape.trying():
            seen = shape.contributions(self.store, t_ms, self._lookback_ms, self._v3)
            last = self._values.get(query)
            if seen is not None and last is not None and last[0] == seen:
                shape.hit()
                self.reused += 1
                return _at_time(last[1], t_ms)
            shape.miss()
        self.evaluations += 1
        try:
            answer = self.engine.instant(query, t_ms)
        except PromQLError as error:
            self._values.pop(query, None)
            return error
        if seen is not None and isinstance(answer, VectorResult | ScalarResult):
            if len(self._values) > 1024:
                self._values.clear()
            self._values[query] = (seen, answer)
        return answer

    def query(self, query: str, t_ms: int) -> dict[str, Any]:
        """The ``/api/v1/query`` body: the result, or the error Prometheus would send."""
        try:
            return self.instant(query, t_ms).to_api_json()
        except PromQLError as error:
            kind = "bad_data" if error.message.startswith("cannot parse") else "execution"
            return {"status": "error", "errorType": kind, "error": error.message}


def query_scalar(body: Mapping[str, Any]) -> float | None:
    """The single value of an instant-query answer, or None when it is empty or an error.

    A convenience for tests and stand-ins; KEDA's own handling of the answer (one element
    required, empty/NaN/Inf as 0 with ``ignoreNullValues``) is in
    ``gpuscale.sim.keda.trigger_value``.
    """
    if body.get("status") != "success":
        return None
    data = body.get("data", {})
    result = data.get("result")
    if data.get("resultType") == "scalar" and isinstance(result, list):
        return float(result[1])
    if not result:
        return None
    return float(result[0]["value"][1])


# --------------------------------------------------------------------------- value reuse

_VALUE_FUNCTIONS = frozenset(
    {
        "abs",
        "ceil",
        "floor",
        "round",
        "clamp",
        "clamp_min",
        "clamp_max",
        "exp",
        "ln",
        "log2",
        "log10",
        "sqrt",
        "sgn",
        "scalar",
        "vector",
    }
)
_VALUE_AGGREGATIONS = frozenset({"sum", "avg", "min", "max", "count", "group", "stddev", "stdvar"})


def _matcher(name: str, equal: bool, value: str) -> Matcher:
    if equal:
        return Matcher(name, "=", value, lambda v: v == value)
    return Matcher(name, "!=", value, lambda v: v != value)


class _Shape:
    """The selectors of a query whose answer depends only on the values they pick."""

    __slots__ = ("misses", "pause", "selectors")

    def __init__(self, selectors: list[tuple[Sequence[Matcher], tuple[tuple[str, str, str], ...]]]):
        self.selectors = selectors
        self.misses = 0
        self.pause = 0

    def trying(self) -> bool:
        if self.pause > 0:
            self.pause -= 1
            return False
        return True

    def hit(self) -> None:
        self.misses = 0

    def miss(self) -> None:
        self.misses += 1
        if self.misses >= 32:
            self.misses = 0
            self.pause = 256

    def contributions(
        self, store: SeriesStore, t_ms: int, lookback_ms: int, v3: bool
    ) -> tuple[tuple[int, float], ...] | None:
        """(series, value) each selector picks at ``t_ms``; None when it cannot say."""
        oldest = t_ms - lookback_ms
        picked: list[tuple[int, float]] = []
        for matchers, key in self.selectors:
            for series in store.select(matchers, key):
                ts = series.ts
                if not ts:
                    continue
                last = ts[-1]
                if last > t_ms:
                    return None
                if last < oldest or (v3 and last == oldest):
                    continue
                stale = series.stale
                if stale and stale[-1] == last:
                    continue
                picked.append((series.ref, series.vs[-1]))
        return tuple(picked)


class _Unknown:
    pass


_UNKNOWN: Any = _Unknown()


def _shape(query: str) -> _Shape | None:
    """The query's selectors when its answer is a function of the values they pick."""
    try:
        root = parse_query(query)
    except (ValueError, PromQLError):
        return None
    selectors: list[tuple[Sequence[Matcher], tuple[tuple[str, str, str], ...]]] = []
    for node in walk(root):
        if isinstance(node, pp.VectorSelector):
            if node.offset is not None or node.at is not None or not node.name:
                return None
            if node.matchers.or_matchers:
                return None
            matchers = [_matcher("__name__", True, node.name)]
            for m in node.matchers.matchers:
                if m.op == pp.MatchOp.Equal:
                    matchers.append(_matcher(m.name, True, m.value))
                elif m.op == pp.MatchOp.NotEqual:
                    matchers.append(_matcher(m.name, False, m.value))
                else:
                    return None
            selectors.append((matchers, selection_key(matchers)))
        elif isinstance(node, pp.AggregateExpr):
            if str(node.op) not in _VALUE_AGGREGATIONS or node.param is not None:
                return None
        elif isinstance(node, pp.Call):
            if node.func.name not in _VALUE_FUNCTIONS:
                return None
        elif not isinstance(node, pp.BinaryExpr | pp.ParenExpr | pp.UnaryExpr | pp.NumberLiteral):
            return None
    return _Shape(selectors)


def _at_time(result: Result, t_ms: int) -> Result:
    if isinstance(result, VectorResult):
        return VectorResult(result.samples, t_ms)
    assert isinstance(result, ScalarResult)
    return ScalarResult(result.value, t_ms)
