"""Rules on what a Prometheus trigger's query computes, read from its syntax tree.

The analysis is :mod:`gpuscale.lint.query`; these rules add what the ScaledObject says
(metricType, threshold) and turn the answers into findings with the arithmetic. Fixes
that rewrite a query do it on the tree too (``promql_parser.transform``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import promql_parser as pp

from gpuscale._hpa_words import hpa_step_text
from gpuscale.lint._context import LintContext
from gpuscale.lint._findings import Hit, Severity
from gpuscale.lint._registry import rule
from gpuscale.lint._yaml import snippet
from gpuscale.lint.query import QueryAnalysis
from gpuscale.lint.query import selector_text as query_selector_text
from gpuscale.lint.rules._common import (
    PER_REPLICA_QUERY_EXAMPLE,
    TOTAL_QUERY_FIX,
    PromTrigger,
    fmt,
    prometheus_triggers,
    scrape_interval_for,
)
from gpuscale.promql import PromQLError, parse_query

__all__: list[str] = []

_READY_COUNTS = {
    "kube_deployment_status_replicas": "kube_deployment_status_replicas_ready",
    "kube_deployment_spec_replicas": "kube_deployment_status_replicas_ready",
    "kube_statefulset_status_replicas": "kube_statefulset_status_replicas_ready",
    "kube_statefulset_replicas": "kube_statefulset_status_replicas_ready",
    "kube_replicaset_status_replicas": "kube_replicaset_status_ready_replicas",
    "kube_replicaset_spec_replicas": "kube_replicaset_status_ready_replicas",
}


def _parsed(trig: PromTrigger) -> QueryAnalysis | None:
    query = trig.query
    return query if query is not None and query.parsed else None


def _threshold(trig: PromTrigger) -> float | None:
    """The trigger's threshold as KEDA reads it, when it is a positive number."""
    prom = trig.trigger.prometheus
    return prom.threshold if prom is not None and prom.threshold > 0 else None


def _query_fix(query: str, note: str | None = None) -> str:
    text = snippet({"metadata": {"query": query}})
    return f"{text}\n# {note}" if note else text


def _rename_selectors(query: str, renames: dict[str, str]) -> str:
    def rename(node: Any) -> Any:
        name = node.name if isinstance(node, pp.VectorSelector) else None
        if name in renames:
            # Re-parse the printed selector under its new name: nodes edited in place are
            # not picked up by transform().
            return parse_query(renames[name] + str(node)[len(name) :])
        return None

    return str(pp.transform(parse_query(query), post_visit=rename))


def _summed(expression: str) -> str:
    """``avg(...)``/``avg by (...)(...)`` as the same aggregation with ``sum``."""
    candidate = "sum" + expression[3:] if expression.startswith("avg") else expression
    try:
        return str(parse_query(candidate))
    except (ValueError, PromQLError):
        return expression


@rule(
    "query-divides-by-replicas",
    severity=Severity.ERROR,
    title="The query is already per replica and metricType AverageValue divides it again",
    explanation=(
        "With `metricType: AverageValue`, KEDA's default (`GetMetricTargetType` in "
        "`pkg/scalers/scaler.go`), the HPA treats the query's value as a total and asks for "
        "`ceil(value / threshold)` replicas whatever the current count "
        "(`GetExternalPerPodMetricReplicas` in the HPA's `replica_calculator.go`). A query "
        "that already averages per pod or per GPU at its top level (`avg(...)`, "
        "`X / count(...)`, `X / sum(kube_deployment_status_replicas...)`, "
        "`X / sum(kube_pod_status_ready...)`) is divided by the replica count twice: the "
        "more replicas run, the lower the value, so the count flaps. With a steady total "
        "load of twice the threshold T: at 1 replica the query returns 2T, and 2T / 1 replica = "
        "2T per replica against a target of T per replica gives ceil(1 × 2T/T) = 2; at 2 "
        "replicas it returns T, and the HPA divides again: T / 2 replicas = T/2 per replica "
        "against a target of T per replica, so ceil(2 × (T/2)/T) = 1. "
        "Fix it either way: keep AverageValue and query the total (`sum(...)`), or keep "
        "the per-replica query and set `metricType: Value` (desired = ready pods × value / "
        "threshold)."
    ),
    example=PER_REPLICA_QUERY_EXAMPLE,
    fix=TOTAL_QUERY_FIX,
)
def _query_divides_by_replicas(ctx: LintContext) -> Iterator[Hit]:
    for trig in prometheus_triggers(ctx):
        query = _parsed(trig)
        if query is None or query.per_replica is None or trig.so.uses_scaling_modifiers:
            continue
        if trig.trigger.metric_type != "AverageValue":
            continue
        per = query.per_replica
        if per.form == "avg":
            what = f"averages over series ({per.expression})"
            total = _summed(per.expression)
        else:
            what = f"divides by a replica count ({per.expression})"
            total = per.numerator or "sum(...)"
        threshold = _threshold(trig)
        if threshold is not None:
            t = fmt(threshold)
            load = fmt(2 * threshold)
            one = hpa_step_text(
                target_type="AverageValue",
                usage=2 * threshold,
                target=threshold,
                replicas=1,
                desired=2,
                read=2 * threshold,
            )
            two = hpa_step_text(
                target_type="AverageValue",
                usage=threshold / 2,
                target=threshold,
                replicas=2,
                desired=1,
                read=threshold,
            )
            arithmetic = (
                f"With a steady total load of {load} (twice the threshold {t}): at 1 replica "
                f"the query returns {load}/1 = {load}, and the HPA: {one}; at 2 replicas it "
                f"returns {load}/2 = {t}, and the HPA divides again: {two}. The count flaps "
                f"between 1 and 2, and a load of k × {t} flaps between 1 and k."
            )
        else:
            arithmetic = (
                "At N replicas the query returns load/N, the HPA divides again: load/N / N "
                "replicas = load/N² per replica against the threshold per replica, and wants "
                "ceil(N × load/N² / threshold) = ceil(load / (N × threshold)), so more "
                "replicas ask for fewer."
            )
        explicit = "" if trig.trigger.metric_type_explicit else " (KEDA's default)"
        yield Hit(
            obj=trig.obj,
            key_path=trig.path("query"),
            message=(
                f"the query {what}, and metricType AverageValue{explicit} makes the HPA divide "
                "by the replica count again"
            ),
            why=(
                "With metricType AverageValue the HPA takes the query's value as a total and "
                "asks for ceil(value / threshold) replicas, whatever the current count "
                "(GetExternalPerPodMetricReplicas). This query is already a per-replica "
                f"figure, so the load is divided twice. {arithmetic}"
            ),
            fix=_query_fix(
                total,
                "or keep the per-replica query and set `metricType: Value` on the trigger",
            ),
        )


@rule(
    "replica-count-includes-pending",
    severity=Severity.WARNING,
    title="The query counts replicas with a metric that includes Pending pods",
    explanation=(
        '`kube_deployment_status_replicas` is `Deployment.status.replicas`, "the total '
        'number of non-terminated pods targeted by this deployment" '
        "(kube-state-metrics `internal/store/deployment.go`; apps/v1 DeploymentStatus): "
        "pods still Pending for a GPU node count. So do `kube_deployment_spec_replicas` and "
        "the StatefulSet and ReplicaSet equivalents. A new GPU replica can wait 5-15 "
        "minutes for its node and reports no metric meanwhile, so an average over this "
        "count is diluted exactly while the workload is short of capacity. Count Ready "
        "replicas (`kube_deployment_status_replicas_ready`) or, better, query the total and "
        "let the HPA divide."
    ),
    example=snippet(
        {
            "metadata": {
                "query": 'sum(my_gauge) / sum(kube_deployment_status_replicas{deployment="web"})'
            }
        }
    ),
    fix=snippet({"metadata": {"query": 'sum(my_gauge{namespace="prod",app="web"})'}}),
)
def _replica_count_includes_pending(ctx: LintContext) -> Iterator[Hit]:
    for trig in prometheus_triggers(ctx):
        query = _parsed(trig)
        if query is None or not query.pending_selectors:
            continue
        metrics = sorted({s.metric for s in query.pending_selectors if s.metric})
        threshold = _threshold(trig)
        t = fmt(threshold) if threshold is not None else "T"
        load = fmt(2 * threshold) if threshold is not None else "2T"
        renames = {m: _READY_COUNTS[m] for m in metrics if m in _READY_COUNTS}
        yield Hit(
            obj=trig.obj,
            key_path=trig.path("query"),
            message=(
                f"the query reads {', '.join(metrics)}, which counts pods still Pending for "
                "a GPU node"
            ),
            why=(
                f"{metrics[0]} counts every non-terminated pod, Pending ones included. A new "
                "GPU replica can wait minutes for its node and exports no metric meanwhile, "
                f"yet counts: with one replica Ready at {load} and a second Pending, a "
                f"per-replica average reads {load}/2 = {t} instead of {load}, just when the "
                "workload is short of capacity."
            ),
            fix=_query_fix(
                _rename_selectors(query.query, renames),
                "better: query the total and let the HPA divide (metricType AverageValue)",
            ),
        )


@rule(
    "query-unaggregated",
    severity=Severity.WARNING,
    title="The query can return more than one series, which KEDA rejects",
    explanation=(
        "KEDA's Prometheus scaler errors when the result holds more than one element "
        '("prometheus query ... returned multiple elements", `ExecutePromQuery` in '
        "`pkg/scalers/prometheus_scaler.go`): the trigger then fails and nothing scales. A "
        "bare selector, `rate()` of one, or an aggregation `by (...)` over labels the query "
        "does not pin returns one series per label set, so it works only while exactly one "
        "such series exists. `sum`, `max`, `min`, `avg` and `count` without grouping, "
        "`vector()`, `scalar()`, `absent()`, and binary operations or `or` of those are "
        "single-series."
    ),
    example=snippet({"metadata": {"query": 'rate(http_requests_total{app="web"}[2m])'}}),
    fix=snippet({"metadata": {"query": 'sum(rate(http_requests_total{app="web"}[2m]))'}}),
)
def _query_unaggregated(ctx: LintContext) -> Iterator[Hit]:
    for trig in prometheus_triggers(ctx):
        query = _parsed(trig)
        if query is None or query.multi_series_reason is None:
            continue
        try:
            fixed = str(parse_query(f"sum({query.query})"))
        except (ValueError, PromQLError):
            fixed = f"sum({query.query})"
        yield Hit(
            obj=trig.obj,
            key_path=trig.path("query"),
            message=f"the query can return more than one series: {query.multi_series_reason}",
            why=(
                "KEDA's Prometheus scaler accepts exactly one series; with two or more it "
                'errors ("returned multiple elements") and the trigger stops scaling. '
                f"{query.multi_series_reason[0].upper()}{query.multi_series_reason[1:]}, so "
                "the query breaks as soon as a second pod, GPU or label value appears."
            ),
            fix=_query_fix(fixed, "aggregate to one series (sum, max...) over what you mean"),
        )


@rule(
    "query-unscoped",
    severity=Severity.WARNING,
    title="A selector in the query is not narrowed to the workload",
    explanation=(
        "A selector whose only matchers are on `__name__`, empty braces (`my_gauge{}`), "
        'negative matchers, or regexes that match every value (`=~".*"`, `=~".+"`) '
        "selects that metric from every namespace and every job in the cluster: "
        "`sum(my_custom_gauge{})` sums other teams' series too, and a GPU metric from DCGM "
        "or the AMD exporter sums every GPU of the cluster. Add a matcher that names the "
        'workload (`namespace`, `app`, `job`, `pod=~"web-.*"`...). kube-state-metrics '
        'series scoped by object name (`deployment="web"`) but not by `namespace` are '
        "reported as info: a same-named workload in another namespace is counted too."
    ),
    example=snippet({"metadata": {"query": "sum(my_custom_gauge{})"}}),
    fix=snippet({"metadata": {"query": 'sum(my_custom_gauge{namespace="prod",app="web"})'}}),
)
def _query_unscoped(ctx: LintContext) -> Iterator[Hit]:
    for trig in prometheus_triggers(ctx):
        query = _parsed(trig)
        if query is None:
            continue
        namespace = ctx.namespace_of(trig.obj)
        seen: set[str] = set()
        for selector in query.unscoped:
            if selector.text in seen:
                continue
            seen.add(selector.text)
            metric = selector.metric or "the metric"
            yield Hit(
                obj=trig.obj,
                key_path=trig.path("query"),
                message=f"{selector.text} has no matcher that narrows it to the workload",
                why=(
                    f"{selector.text} selects {metric} from every namespace and every scrape "
                    "job in the cluster, so the query also counts series of other workloads "
                    "(for a GPU metric: every GPU in the cluster), and the replica count "
                    "follows their load."
                ),
                fix=_query_fix(
                    _scope_selector(query.query, selector.text, namespace),
                    "add the labels that identify your workload's series",
                ),
            )
        for selector in query.unnamespaced:
            if selector.text in seen:
                continue
            seen.add(selector.text)
            yield Hit(
                obj=trig.obj,
                key_path=trig.path("query"),
                message=f"{selector.text} is not scoped to a namespace",
                why=(
                    f"kube-state-metrics exports {selector.metric} for every namespace; "
                    "without a namespace matcher a workload of the same name in another "
                    "namespace is counted too."
                ),
                fix=_query_fix(_scope_selector(query.query, selector.text, namespace)),
                severity=Severity.INFO,
            )


def _scope_selector(query: str, selector_text: str, namespace: str) -> str:
    def scope(node: Any) -> Any:
        if (
            isinstance(node, pp.VectorSelector)
            and not node.matchers.or_matchers
            and query_selector_text(node) == selector_text
        ):
            kept = [str(m) for m in node.matchers.matchers if m.name != "namespace"]
            matchers = ",".join([f'namespace="{namespace}"', *kept])
            name = node.name or ""
            return parse_query(f"{name}{{{matchers}}}")
        return None

    try:
        return str(pp.transform(parse_query(query), post_visit=scope))
    except (ValueError, PromQLError):
        return query


@rule(
    "query-invalid",
    severity=Severity.ERROR,
    title="The query is not valid PromQL",
    explanation=(
        "Prometheus answers an invalid query with HTTP 400, which KEDA's scaler reports as "
        "an error on every poll: the ScaledObject never scales (and, without a fallback, "
        "freezes the replica count). The query is checked with promql-parser, a port of "
        "Prometheus' own parser. Queries holding placeholders (`${VAR}`, `{{ }}`, "
        "`<name>`) are not judged."
    ),
    example=snippet({"metadata": {"query": "sum(rate(http_requests_total[2m])"}}),
    fix=snippet({"metadata": {"query": "sum(rate(http_requests_total[2m]))"}}),
)
def _query_invalid(ctx: LintContext) -> Iterator[Hit]:
    for trig in prometheus_triggers(ctx):
        query = trig.query
        if query is None or query.parse_error is None:
            continue
        yield Hit(
            obj=trig.obj,
            key_path=trig.path("query"),
            message=f"the query is not valid PromQL: {query.parse_error}",
            why=(
                "Prometheus rejects the query with HTTP 400 and KEDA's Prometheus scaler "
                "reports an error on every poll, so the trigger never scales the workload."
            ),
            fix="# correct the query; check it with: promtool query instant <url> '<query>'",
        )


@rule(
    "rate-window-too-short",
    severity=Severity.WARNING,
    title="A rate() window holds fewer than two scrapes",
    explanation=(
        "`rate`, `irate`, `increase`, `delta`, `idelta` and `deriv` need at least two "
        "samples inside their range: Prometheus drops a series with fewer "
        "(`extrapolatedRate`, `instantValue` and `funcDeriv` in `promql/functions.go`). A "
        "window shorter than twice the scrape interval often holds one sample, so the "
        "query comes back empty, which KEDA reads as 0 by default. Use a window of "
        "at least four scrape intervals. Needs the scrape interval: from the ServiceMonitor "
        "that scrapes the target, or the profile."
    ),
    example=snippet({"metadata": {"query": 'sum(rate(http_requests_total{app="web"}[30s]))'}}),
    fix=snippet({"metadata": {"query": 'sum(rate(http_requests_total{app="web"}[2m]))'}}),
)
def _rate_window_too_short(ctx: LintContext) -> Iterator[Hit]:
    for trig in prometheus_triggers(ctx):
        query = _parsed(trig)
        if query is None or not query.ranges:
            continue
        scrape = scrape_interval_for(ctx, trig.so)
        if scrape is None:
            continue
        interval, source = scrape
        for use in query.ranges:
            if use.seconds >= 2 * interval:
                continue
            window = math.ceil(4 * interval / 60.0) * 60
            yield Hit(
                obj=trig.obj,
                key_path=trig.path("query"),
                message=(
                    f"{use.function}() over [{fmt(use.seconds)}s] of {use.selector.text} "
                    f"spans less than two scrapes ({fmt(interval)} s, from {source})"
                ),
                why=(
                    f"{use.function}() needs two samples inside its window. Scraped every "
                    f"{fmt(interval)} s, a {fmt(use.seconds)} s window holds "
                    f"{fmt(use.seconds / interval)} samples on average, so the result is often "
                    "empty and KEDA reads it as 0."
                ),
                fix=f"# widen the window to at least 4 scrapes, e.g. [{window // 60}m]",
            )
