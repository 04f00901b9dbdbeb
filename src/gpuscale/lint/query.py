"""What a KEDA trigger's PromQL query means for autoscaling, read off its syntax tree.

Pure and self-contained: :func:`analyse_query` parses the query with ``promql-parser``
(the Rust port of Prometheus' own parser) and answers the questions lint rules ask, never
by matching the query text with regular expressions:

- **per replica?** Does the top level already divide by a replica or pod count, or average
  over per-pod/per-GPU series (``avg(...)``, ``X / count(...)``,
  ``X / sum(kube_deployment_*replicas*)``, ``X / sum(kube_pod_status_ready...)``)? Under
  KEDA's default ``metricType: AverageValue`` the HPA divides by the replica count again.
- **Pending pods?** Does it read a kube-state-metrics count that includes Pending pods
  (``kube_deployment_status_replicas``, ``kube_deployment_spec_replicas``...)?
- **cardinality**: can the result hold more than one series (KEDA's Prometheus scaler
  errors on more than one element, ``prometheus_scaler.go`` ``ExecutePromQuery``)?
  Aggregations without grouping, ``vector()``, ``scalar()``, ``absent()`` and
  one-to-one binary operations with a single-series side are single-series.
- **scope**: which selectors have no matcher that narrows them to a workload (only
  ``__name__``, ``{}``, empty values, negative matchers, or regexes that match every
  non-empty value such as ``.*`` and ``.+``)?
- **empty result**: does the query turn an empty result into a value (``or vector(0)``,
  ``absent(...)``)? KEDA otherwise reads an empty result as 0 with the default
  ``ignoreNullValues: true``.
- **range windows** of ``rate``-like functions, to compare with the scrape interval.

A query that does not parse is ``templated`` (it holds ``${VAR}``, ``{{ }}``, ``<name>``
and so cannot be judged) or has a ``parse_error``.
"""

from __future__ import annotations

import enum
import re
import string
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import promql_parser as pp

from gpuscale.manifests import is_templated
from gpuscale.promql import parse_query, walk

__all__ = [
    "PENDING_COUNTING_METRICS",
    "Cardinality",
    "PerReplica",
    "QueryAnalysis",
    "RangeUse",
    "Selector",
    "analyse_query",
    "regex_matches_everything",
    "selector_text",
]


class Cardinality(enum.Enum):
    """How many series a query can return."""

    SINGLE = "single"
    """At most one series, whatever the data."""
    MULTI = "multi"
    """Possibly more than one series."""
    UNKNOWN = "unknown"
    """Cannot tell (an unusual construct); rules stay silent."""


@dataclass(frozen=True)
class Selector:
    """One instant-vector selector of the query."""

    metric: str | None
    """The metric name, or ``None`` when the selector names none (``{__name__=~"..."}``)."""
    matchers: tuple[tuple[str, str, str], ...]
    """``(label, op, value)`` with op one of ``=``, ``!=``, ``=~``, ``!~``."""
    alternatives: tuple[tuple[tuple[str, str, str], ...], ...]
    """The ``or`` groups of a ``{a="1" or b="2"}`` selector (empty otherwise)."""
    text: str
    """The selector as PromQL."""

    def scoping_labels(self) -> frozenset[str]:
        """Labels with a matcher that narrows the selector (in every ``or`` group)."""
        groups = self.alternatives or (self.matchers,)
        common: frozenset[str] | None = None
        for group in groups:
            labels = frozenset(label for label, op, value in group if _scopes(label, op, value))
            common = labels if common is None else common & labels
        return common or frozenset()

    def pinned(self, label: str) -> bool:
        """Whether every series it selects has the same value of ``label`` (an ``=`` matcher)."""
        if label == "__name__" and self.metric:
            return True
        groups = self.alternatives or (self.matchers,)
        return all(any(m[0] == label and m[1] == "=" and m[2] for m in group) for group in groups)


@dataclass(frozen=True)
class PerReplica:
    """How a query turns a total into a per-replica figure at its top level."""

    form: str
    """``avg`` (an average over series) or ``divide`` (division by a count)."""
    expression: str
    """The averaging aggregation or the denominator, as PromQL."""
    numerator: str | None
    """For ``divide``: the numerator as PromQL (what a total-based query keeps)."""


@dataclass(frozen=True)
class RangeUse:
    """A ``rate``-like function over a range selector."""

    function: str
    selector: Selector
    seconds: float


@dataclass(frozen=True)
class QueryAnalysis:
    """Everything lint rules want to know about one query."""

    query: str
    templated: bool
    """The query did not parse and holds placeholders: nothing else is decided."""
    parse_error: str | None
    """The parser's message when the query is invalid PromQL (and not templated)."""
    per_replica: PerReplica | None = None
    pending_selectors: tuple[Selector, ...] = ()
    """Selectors of kube-state-metrics counts that include Pending pods."""
    cardinality: Cardinality = Cardinality.UNKNOWN
    multi_series_reason: str | None = None
    """Why the result can hold several series, when :attr:`cardinality` is ``MULTI``."""
    unscoped: tuple[Selector, ...] = ()
    """Selectors with no matcher that narrows them (every namespace's series)."""
    unnamespaced: tuple[Selector, ...] = ()
    """kube-state-metrics selectors scoped by object name but not by namespace."""
    fills_empty: bool = False
    """The query yields a value even when its series are missing (``or vector(0)``...)."""
    selectors: tuple[Selector, ...] = ()
    ranges: tuple[RangeUse, ...] = ()

    @property
    def parsed(self) -> bool:
        """Whether the query parsed (only then are the other answers meaningful)."""
        return not self.templated and self.parse_error is None


@lru_cache(maxsize=4096)
def analyse_query(query: str) -> QueryAnalysis:
    """Parse ``query`` and answer every question of this module about it.

    Text over :mod:`gpuscale.promql.syntax`'s limits raises its ``PromQLError`` (the
    lint runner names the manifest line first, see ``_common.prometheus_triggers``)."""
    try:
        root = parse_query(query)
    except (ValueError, RuntimeError) as error:
        if is_templated(query):
            return QueryAnalysis(query=query, templated=True, parse_error=None)
        return QueryAnalysis(query=query, templated=False, parse_error=str(error))
    selectors = tuple(_selectors(root))
    cardinality, reason = _cardinality(root, frozenset())
    return QueryAnalysis(
        query=query,
        templated=False,
        parse_error=None,
        per_replica=_per_replica(root),
        pending_selectors=tuple(s for s in selectors if s.metric in PENDING_COUNTING_METRICS),
        cardinality=cardinality,
        multi_series_reason=reason,
        unscoped=tuple(s for s in selectors if not s.scoping_labels()),
        unnamespaced=tuple(s for s in selectors if _unnamespaced(s)),
        fills_empty=_fills_empty(root),
        selectors=selectors,
        ranges=tuple(_ranges(root)),
    )


# kube-state-metrics series whose value counts pods that may still be Pending: status.replicas
# is "the number of non-terminated pods targeted by this deployment", and spec.replicas is the
# desired count (kube-state-metrics internal/store/deployment.go, statefulset.go, replicaset.go).
PENDING_COUNTING_METRICS = frozenset(
    {
        "kube_deployment_status_replicas",
        "kube_deployment_spec_replicas",
        "kube_statefulset_status_replicas",
        "kube_statefulset_replicas",
        "kube_replicaset_status_replicas",
        "kube_replicaset_spec_replicas",
    }
)

_REPLICA_METRIC_PREFIXES = (
    "kube_deployment_",
    "kube_statefulset_",
    "kube_replicaset_",
    "kube_horizontalpodautoscaler_",
)
# Per-pod series whose sum counts pods (kube-state-metrics pod metrics; `up` counts targets).
_POD_COUNT_METRICS = frozenset(
    {
        "kube_pod_info",
        "kube_pod_status_ready",
        "kube_pod_status_phase",
        "kube_pod_status_scheduled",
        "kube_pod_container_status_ready",
        "kube_pod_container_status_running",
        "up",
    }
)
_KSM_OBJECT_LABELS = frozenset(
    {"deployment", "statefulset", "replicaset", "daemonset", "pod", "horizontalpodautoscaler"}
)
_TRANSPARENT_FUNCTIONS = frozenset(
    {"ceil", "floor", "round", "abs", "clamp", "clamp_min", "clamp_max"}
)
_SCALAR_FUNCTIONS = frozenset({"scalar", "time", "pi", "vector"})
# Functions that return nothing for a series with fewer than two samples in their range
# (Prometheus promql/functions.go: extrapolatedRate, instantValue, funcDeriv).
_RATE_FUNCTIONS = frozenset({"rate", "irate", "increase", "delta", "idelta", "deriv"})
_SINGLE_AGGREGATIONS = frozenset(
    {"sum", "min", "max", "avg", "count", "group", "stddev", "stdvar", "quantile"}
)
_K_AGGREGATIONS = frozenset({"topk", "bottomk", "limitk"})
_MATCH_OPS = (
    (pp.MatchOp.Equal, "="),
    (pp.MatchOp.NotEqual, "!="),
    (pp.MatchOp.Re, "=~"),
    (pp.MatchOp.NotRe, "!~"),
)


def _match_op(op: Any) -> str:
    for known, text in _MATCH_OPS:
        if op == known:
            return text
    raise ValueError(f"unknown PromQL match operator {op!r}")


def _op(node: Any) -> str:
    return str(node.op)


def _strip(node: Any) -> Any:
    while isinstance(node, pp.ParenExpr):
        node = node.expr
    return node


def _selector(node: Any) -> Selector:
    def convert(matchers: Any) -> tuple[tuple[str, str, str], ...]:
        return tuple((m.name, _match_op(m.op), m.value) for m in matchers)

    matchers = convert(node.matchers.matchers)
    alternatives = tuple(convert(group) for group in node.matchers.or_matchers)
    metric = node.name
    if metric is None:
        names = [value for label, op, value in matchers if label == "__name__" and op == "="]
        metric = names[0] if names else None
    return Selector(
        metric=metric, matchers=matchers, alternatives=alternatives, text=selector_text(node)
    )


def selector_text(node: Any) -> str:
    """A vector selector as PromQL (``x``, ``x{a="b"}``, ``x{a="b" or c="d"}``), no offset."""
    groups = [node.matchers.matchers, *node.matchers.or_matchers]
    rendered = [",".join(str(m) for m in group) for group in groups]
    body = " or ".join(part for part in rendered if part)
    name = node.name or ""
    return f"{name}{{{body}}}" if body or not name else name


def _selectors(root: Any) -> Iterator[Selector]:
    for node in walk(root):
        if isinstance(node, pp.VectorSelector):
            yield _selector(node)


def _selectors_under(node: Any) -> list[Selector]:
    return list(_selectors(node))


# --- scope ---------------------------------------------------------------------------------

_PROBES = (
    "a",
    "Z",
    "0",
    "default",
    "kube-system",
    "go-from-configmap-7d9f8c6b5-x2x9z",
    "10.0.0.1:8080",
    string.printable,
    "ünïcødé ✓",
    "x" * 300,
    "-",
    ".",
    "\n",
)


@lru_cache(maxsize=1024)
def regex_matches_everything(pattern: str) -> bool:
    """Whether a label regex (anchored, as Prometheus anchors it) matches every non-empty value.

    Such a matcher (``.*``, ``.+``, ``(.*)``, ``.*|foo``) selects every series that has the
    label at all, so it does not narrow a selector. Decided by matching a fixed set of very
    different values; a pattern Python's ``re`` cannot compile counts as narrowing.
    """
    try:
        compiled = re.compile(f"(?s:{pattern})")
    except re.error:
        return False
    return all(compiled.fullmatch(probe) for probe in _PROBES)


def _scopes(label: str, op: str, value: str) -> bool:
    if label == "__name__":
        return False
    if op == "=":
        return value != ""
    if op == "=~":
        return value not in {"", "^$"} and not regex_matches_everything(value)
    return False


def _unnamespaced(selector: Selector) -> bool:
    if not selector.metric or not selector.metric.startswith("kube_"):
        return False
    labels = selector.scoping_labels()
    return bool(labels & _KSM_OBJECT_LABELS) and "namespace" not in labels


# --- per replica ---------------------------------------------------------------------------


def _number(node: Any) -> bool:
    node = _strip(node)
    if isinstance(node, pp.NumberLiteral):
        return True
    if isinstance(node, pp.UnaryExpr):
        return _number(node.expr)
    return False


def _per_replica(root: Any) -> PerReplica | None:
    node = _strip(root)
    if isinstance(node, pp.AggregateExpr) and _op(node) == "avg":
        inner, _ = _cardinality(node.expr, frozenset())
        return None if inner is Cardinality.SINGLE else PerReplica("avg", str(node), None)
    if isinstance(node, pp.BinaryExpr):
        op = _op(node)
        if op == "/":
            if _is_scalar(node.lhs):
                return None
            denominator = _replica_count(node.rhs)
            if denominator is not None:
                return PerReplica("divide", denominator, str(_strip(node.lhs)))
            return _per_replica(node.lhs) if _number(node.rhs) else None
        if op == "or":
            return _per_replica(node.lhs)
        if op == "*":
            if _number(node.rhs):
                return _per_replica(node.lhs)
            if _number(node.lhs):
                return _per_replica(node.rhs)
        return None
    if isinstance(node, pp.Call) and node.func.name in _TRANSPARENT_FUNCTIONS and node.args:
        return _per_replica(node.args[0])
    return None


def _is_replica_metric(name: str | None) -> bool:
    return name is not None and name.startswith(_REPLICA_METRIC_PREFIXES) and "replicas" in name


def _replica_count(node: Any) -> str | None:
    """The denominator as PromQL when it counts replicas, pods or GPUs, else ``None``."""
    node = _strip(node)
    if isinstance(node, pp.Call) and node.func.name == "scalar" and node.args:
        return _replica_count(node.args[0])
    if isinstance(node, pp.AggregateExpr):
        if _op(node) == "count":
            return str(node)
        if _op(node) in {"sum", "max", "min", "avg"}:
            names = {s.metric for s in _selectors_under(node.expr)}
            if names and all(_is_replica_metric(n) for n in names):
                return str(node)
            if _op(node) == "sum" and names and names <= _POD_COUNT_METRICS:
                return str(node)
        return None
    if isinstance(node, pp.VectorSelector):
        return str(node) if _is_replica_metric(_selector(node).metric) else None
    return None


# --- cardinality ---------------------------------------------------------------------------


def _is_scalar(node: Any) -> bool:
    node = _strip(node)
    if isinstance(node, pp.NumberLiteral | pp.StringLiteral):
        return True
    if isinstance(node, pp.UnaryExpr):
        return _is_scalar(node.expr)
    if isinstance(node, pp.Call):
        return bool(node.func.return_type == pp.ValueType.Scalar)
    if isinstance(node, pp.BinaryExpr):
        return _is_scalar(node.lhs) and _is_scalar(node.rhs)
    return False


def _grouping_pinned(node: Any, labels: list[str], ignored: frozenset[str]) -> bool:
    wanted = [label for label in labels if label not in ignored]
    selectors = _selectors_under(node)
    return all(selector.pinned(label) for label in wanted for selector in selectors)


def _cardinality(node: Any, ignored: frozenset[str]) -> tuple[Cardinality, str | None]:
    """``(cardinality, reason)``; ``ignored`` labels do not count as splitting series."""
    node = _strip(node)
    single: tuple[Cardinality, str | None] = (Cardinality.SINGLE, None)
    if _is_scalar(node):
        return single
    if isinstance(node, pp.VectorSelector):
        return Cardinality.MULTI, f"the bare selector {node} returns one series per label set"
    if isinstance(node, pp.MatrixSelector | pp.SubqueryExpr | pp.UnaryExpr):
        inner = node.vector_selector if isinstance(node, pp.MatrixSelector) else node.expr
        return _cardinality(inner, ignored)
    if isinstance(node, pp.AggregateExpr):
        return _aggregate_cardinality(node, ignored)
    if isinstance(node, pp.Call):
        return _call_cardinality(node, ignored)
    if isinstance(node, pp.BinaryExpr):
        return _binary_cardinality(node, ignored)
    return Cardinality.UNKNOWN, None


def _aggregate_cardinality(node: Any, ignored: frozenset[str]) -> tuple[Cardinality, str | None]:
    op = _op(node)
    inner, _ = _cardinality(node.expr, ignored)
    if inner is Cardinality.SINGLE:
        return Cardinality.SINGLE, None
    modifier = node.modifier
    if op == "count_values":
        return Cardinality.MULTI, f"{op}(...) returns one series per distinct value"
    if op in _K_AGGREGATIONS:
        k = _strip(node.param) if node.param is not None else None
        if modifier is None and isinstance(k, pp.NumberLiteral) and k.val <= 1:
            return Cardinality.SINGLE, None
        return Cardinality.MULTI, f"{op}(...) can return several series"
    if op not in _SINGLE_AGGREGATIONS:
        return Cardinality.UNKNOWN, None
    if modifier is None:
        return Cardinality.SINGLE, None
    labels = list(modifier.labels)
    if modifier.type == pp.AggModifierType.By:
        if not labels or _grouping_pinned(node.expr, labels, ignored):
            return Cardinality.SINGLE, None
        grouping = ", ".join(labels)
        return Cardinality.MULTI, f"{op} by ({grouping}) returns one series per ({grouping})"
    return Cardinality.MULTI, f"{op} without (...) keeps every other label"


def _call_cardinality(node: Any, ignored: frozenset[str]) -> tuple[Cardinality, str | None]:
    name = node.func.name
    if name in _SCALAR_FUNCTIONS or name in {"absent", "absent_over_time"}:
        return Cardinality.SINGLE, None
    vector_args = [arg for arg in node.args if not _is_scalar(arg)]
    if not vector_args:
        return Cardinality.SINGLE, None
    if name == "histogram_quantile":
        return _cardinality(vector_args[0], ignored | {"le"})
    inner, reason = _cardinality(vector_args[0], ignored)
    if inner is Cardinality.MULTI and isinstance(_strip(vector_args[0]), pp.MatrixSelector):
        reason = f"{name}() of a bare selector returns one series per label set"
    return inner, reason


def _binary_cardinality(node: Any, ignored: frozenset[str]) -> tuple[Cardinality, str | None]:
    op = _op(node)
    if _is_scalar(node.lhs):
        return _cardinality(node.rhs, ignored)
    if _is_scalar(node.rhs):
        return _cardinality(node.lhs, ignored)
    lhs = _cardinality(node.lhs, ignored)
    rhs = _cardinality(node.rhs, ignored)
    if op in {"and", "unless"}:
        return lhs
    if op == "or":
        if lhs[0] is Cardinality.SINGLE and rhs[0] is Cardinality.SINGLE:
            return Cardinality.SINGLE, None
        return lhs if lhs[0] is not Cardinality.SINGLE else rhs
    card = node.modifier.card if node.modifier is not None else None
    if card == pp.VectorMatchCardinality.ManyToOne:
        return lhs
    if card == pp.VectorMatchCardinality.OneToMany:
        return rhs
    if Cardinality.SINGLE in (lhs[0], rhs[0]):
        return Cardinality.SINGLE, None
    if Cardinality.UNKNOWN in (lhs[0], rhs[0]):
        return Cardinality.UNKNOWN, None
    return lhs


# --- empty results -------------------------------------------------------------------------


def _fills_empty(node: Any) -> bool:
    node = _strip(node)
    if isinstance(node, pp.NumberLiteral):
        return True
    if isinstance(node, pp.UnaryExpr):
        return _fills_empty(node.expr)
    if isinstance(node, pp.Call):
        name = node.func.name
        if name in {"vector", "time", "absent", "absent_over_time"}:
            return True
        vector_args = [arg for arg in node.args if not _is_scalar(arg)]
        return bool(vector_args) and _fills_empty(vector_args[0])
    if isinstance(node, pp.AggregateExpr):
        return _fills_empty(node.expr)
    if isinstance(node, pp.BinaryExpr):
        op = _op(node)
        if op == "or":
            return _fills_empty(node.lhs) or _fills_empty(node.rhs)
        if op in {"and", "unless"}:
            return False
        if _is_scalar(node.lhs):
            return _fills_empty(node.rhs)
        if _is_scalar(node.rhs):
            return _fills_empty(node.lhs)
        return _fills_empty(node.lhs) and _fills_empty(node.rhs)
    return False


# --- ranges --------------------------------------------------------------------------------


def _ranges(root: Any) -> Iterator[RangeUse]:
    for node in walk(root):
        if isinstance(node, pp.Call) and node.func.name in _RATE_FUNCTIONS and node.args:
            arg = _strip(node.args[0])
            if isinstance(arg, pp.MatrixSelector):
                yield RangeUse(
                    function=node.func.name,
                    selector=_selector(arg.vector_selector),
                    seconds=arg.range.total_seconds(),
                )
