"""The Prometheus links: the server answers, the trigger query reads as KEDA reads it
(``pkg/scalers/prometheus_scaler.go`` ExecutePromQuery), kube-state-metrics reports the
Deployment."""

from __future__ import annotations

import math
from collections.abc import Mapping

from gpuscale.controllers.keda import (
    PrometheusQueryError,
    PrometheusTrigger,
    parse_prometheus_response,
)
from gpuscale.live._verify.facts import (
    Check,
    HttpAnswer,
    PromFacts,
    _number,
    _read_failed,
)


def check_prometheus(subject: str, facts: PromFacts | None, address: str) -> Check:
    """Prometheus answers at the trigger's address (through a port-forward for an
    in-cluster Service) or at ``--prometheus``."""
    if facts is None:
        return Check(
            "Prometheus",
            subject,
            "skip",
            f"{address} is not an in-cluster Service address gpuscale can forward to",
            "pass --prometheus URL to check it from here",
        )
    if facts.unread:
        return _read_failed("Prometheus", subject, facts.unread)
    answer = facts.buildinfo
    if answer.status is None:
        return Check(
            "Prometheus",
            subject,
            "fail",
            f"no answer from {facts.source}: {answer.error}",
            "check the trigger's serverAddress (http://<service>.<namespace>.svc.cluster.local"
            ":9090) against where kube-prometheus-stack runs (gpuscale install prints it)",
        )
    if answer.status != 200:
        return Check(
            "Prometheus",
            subject,
            "fail",
            f"{facts.source} answered HTTP {answer.status}",
            "is it Prometheus? the address must be its HTTP API (port 9090)",
        )
    version = ((answer.json() or {}).get("data") or {}).get("version") or "unknown version"
    return Check("Prometheus", subject, "pass", f"{facts.source}: Prometheus {version}")


def query_params(trigger: PrometheusTrigger) -> dict[str, str]:
    """The query parameters KEDA sends (ExecutePromQuery: ``query``, ``namespace`` when
    set, then ``queryParameters``); the ``time`` parameter is left to Prometheus (now)."""
    params = {"query": trigger.query}
    if trigger.namespace:
        params["namespace"] = trigger.namespace
    params.update(trigger.query_parameters)
    return params


def _series(answer: HttpAnswer) -> int | None:
    doc = answer.json()
    if not isinstance(doc, Mapping):
        return None
    result = (doc.get("data") or {}).get("result")
    return len(result) if isinstance(result, list) else None


def check_query(subject: str, trigger: PrometheusTrigger, answer: HttpAnswer | None) -> Check:
    """The trigger's query returns exactly one series with a finite value, read by KEDA's
    own parser; the evidence says what KEDA hands the HPA."""
    if answer is None:
        return Check("trigger query", subject, "skip", "Prometheus was not reached")
    if answer.status is None:
        return Check(
            "trigger query", subject, "fail", f"no answer: {answer.error}", "see Prometheus above"
        )
    null_mode = "true" if trigger.ignore_null_values else "false"
    try:
        read = parse_prometheus_response(
            answer.body,
            answer.status,
            ignore_null_values=trigger.ignore_null_values,
            query=trigger.query,
        )
        keda = f"KEDA reads {_number(read)}"
    except PrometheusQueryError as exc:
        keda = f"KEDA fails: {exc}"
    series = _series(answer)
    try:
        value = parse_prometheus_response(
            answer.body, answer.status, ignore_null_values=False, query=trigger.query
        )
    except PrometheusQueryError as exc:
        if series == 0:
            return Check(
                "trigger query",
                subject,
                "fail",
                f"no series (ignoreNullValues: {null_mode}): {keda}",
                "nothing matches the query: check that the metric is scraped (ServiceMonitor "
                'checks) and its labels, in Prometheus\' UI; set ignoreNullValues: "false" so '
                "KEDA reports an empty answer instead of reading 0",
            )
        if series is not None and series > 1:
            return Check(
                "trigger query",
                subject,
                "fail",
                f"{series} series: {keda}",
                "aggregate to one series, e.g. sum(...), and scope it by namespace and service",
            )
        return Check(
            "trigger query",
            subject,
            "fail",
            f"{exc} (ignoreNullValues: {null_mode}): {keda}",
            "make the query return one finite number (no division by zero)",
        )
    if not math.isfinite(value):  # pragma: no cover - parse_prometheus_response refuses these
        return Check("trigger query", subject, "fail", f"value {value}", "")
    return Check(
        "trigger query",
        subject,
        "pass",
        f"1 series, value {_number(value)}; {keda} (threshold {_number(trigger.threshold)})",
    )


def check_kube_state_metrics(
    subject: str, answer: HttpAnswer | None, *, query: str, needed: bool
) -> Check:
    """kube-state-metrics reports the Deployment (``kube_deployment_status_replicas``); a
    failure when the trigger query uses kube-state-metrics series, else a warning."""
    if answer is None:
        return Check("kube-state-metrics", subject, "skip", "Prometheus was not reached")
    series = _series(answer) if answer.status == 200 else None
    if series:
        doc = answer.json() or {}
        value = doc["data"]["result"][0].get("value", [None, "?"])[1]
        return Check("kube-state-metrics", subject, "pass", f"{query} = {value}")
    why = answer.error or (f"HTTP {answer.status}" if answer.status != 200 else "no series")
    return Check(
        "kube-state-metrics",
        subject,
        "fail" if needed else "warn",
        f"{query}: {why}"
        + ("; the trigger query reads it" if needed else "; the trigger query does not use it"),
        "kube-prometheus-stack installs kube-state-metrics and its ServiceMonitor; check that "
        "its pod runs and its target is up",
    )


def ksm_query(namespace: str, deployment: str) -> str:
    """The kube-state-metrics series of a Deployment's replica count."""
    return f'kube_deployment_status_replicas{{deployment="{deployment}", namespace="{namespace}"}}'
