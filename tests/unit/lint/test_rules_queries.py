"""Rules on what a trigger's query computes: each fires on the query's line, and stays
silent on near misses."""

from __future__ import annotations

import pytest

from gpuscale.lint import Severity
from tests.unit.lint.conftest import line_of, lint_yaml, make_profile, only
from tests.unit.lint.manifests import deployment, docs, scaled_object, service, service_monitor

PER_POD = (
    'sum(my_gauge{namespace="default",app="web"}) / count(my_gauge{namespace="default",app="web"})'
)


def test_divides_by_replicas_fires_on_the_query_line_with_the_arithmetic() -> None:
    text = scaled_object(PER_POD)
    [finding] = only(lint_yaml(text), "query-divides-by-replicas")
    assert finding.severity is Severity.ERROR
    assert finding.location.line == line_of(text, "query:")
    assert finding.location.column == 9
    assert "160/2 = 80" in finding.why
    assert (
        "80 / 2 replicas = 40 per replica against a target of 80 per replica: "
        "ceil(2 × 40/80) = 1" in finding.why
    )
    assert 'query: sum(my_gauge{namespace="default",app="web"})' in finding.fix
    assert "metricType: Value" in finding.fix


def test_divides_by_replicas_avg_fix_sums() -> None:
    text = scaled_object('avg(DCGM_FI_DEV_GPU_UTIL{namespace="llm",pod=~"vllm-.*"})')
    [finding] = only(lint_yaml(text), "query-divides-by-replicas")
    assert 'sum(DCGM_FI_DEV_GPU_UTIL{namespace="llm",pod=~"vllm-.*"})' in finding.fix


def test_divides_by_replicas_with_explicit_average_value() -> None:
    text = scaled_object(PER_POD, trigger="metricType: AverageValue\n")
    assert only(lint_yaml(text), "query-divides-by-replicas")


@pytest.mark.parametrize(
    ("query", "trigger", "spec"),
    [
        (PER_POD, "metricType: Value\n", "minReplicaCount: 1\n"),
        ('avg(my_gauge{app="web"})', "metricType: Value\n", "minReplicaCount: 1\n"),
        ('sum(my_gauge{app="web"}) / 4', "", "minReplicaCount: 1\n"),
        ('sum(rate(http_requests_total{app="web"}[2m]))', "", "minReplicaCount: 1\n"),
        (
            PER_POD,
            "name: a\n",
            "advanced:\n  scalingModifiers:\n    formula: a\n    target: '2'\n",
        ),
        ('"${QUERY}"', "", "minReplicaCount: 1\n"),
    ],
    ids=["value-type", "avg-value-type", "constant", "total", "scaling-modifiers", "templated"],
)
def test_divides_by_replicas_near_misses(query: str, trigger: str, spec: str) -> None:
    text = scaled_object(query, trigger=trigger, spec=spec)
    assert only(lint_yaml(text), "query-divides-by-replicas") == []


def test_pending_replicas_fires_and_fix_counts_ready_replicas() -> None:
    query = (
        'sum(my_gauge{namespace="default",app="web"}) / '
        'sum(kube_deployment_status_replicas{namespace="default",deployment="web"})'
    )
    text = scaled_object(query)
    [finding] = only(lint_yaml(text), "replica-count-includes-pending")
    assert finding.location.line == line_of(text, "query:")
    assert "kube_deployment_status_replicas_ready{" in finding.fix
    assert "160/2 = 80" in finding.why


@pytest.mark.parametrize(
    "query",
    [
        'sum(x{app="web"}) / sum(kube_deployment_status_replicas_ready{deployment="web"})',
        'sum(x{app="web"}) / sum(kube_deployment_status_replicas_available{deployment="web"})',
        'sum(x{app="web"})',
    ],
)
def test_pending_replicas_near_misses(query: str) -> None:
    assert only(lint_yaml(scaled_object(query)), "replica-count-includes-pending") == []


@pytest.mark.parametrize(
    "query",
    [
        'DCGM_FI_DEV_GPU_UTIL{namespace="llm",pod=~"vllm-.*"}',
        'rate(http_requests_total{app="web"}[2m])',
        'sum by (pod) (vllm:num_requests_waiting{namespace="llm"})',
    ],
)
def test_unaggregated_fires(query: str) -> None:
    text = scaled_object(query)
    [finding] = only(lint_yaml(text), "query-unaggregated")
    assert finding.location.line == line_of(text, "query:")
    assert finding.severity is Severity.WARNING
    assert "query: sum(" in finding.fix


@pytest.mark.parametrize(
    "query",
    [
        'sum(vllm:num_requests_waiting{namespace="llm",model_name="m"})',
        'max(DCGM_FI_DEV_GPU_UTIL{namespace="llm",pod=~"vllm-.*"})',
        'sum by (namespace) (x{namespace="llm"})',
        'sum(x{app="web"}) or vector(0)',
        'scalar(sum(x{app="web"}))',
    ],
)
def test_unaggregated_near_misses(query: str) -> None:
    assert only(lint_yaml(scaled_object(query)), "query-unaggregated") == []


def test_unscoped_fires_per_selector_and_adds_the_namespace() -> None:
    text = scaled_object("sum(my_custom_gauge{}) / 2", namespace="prod")
    [finding] = only(lint_yaml(text), "query-unscoped")
    assert finding.severity is Severity.WARNING
    assert finding.location.line == line_of(text, "query:")
    assert 'sum(my_custom_gauge{namespace="prod"}) / 2' in finding.fix


def test_unscoped_dot_plus_regex() -> None:
    text = scaled_object('sum(gpu_gfx_activity{pod=~".+"})')
    [finding] = only(lint_yaml(text), "query-unscoped")
    assert 'pod=~".+"' in finding.message


def test_unscoped_kube_state_metrics_without_namespace_is_info() -> None:
    query = 'sum(x{app="web"}) / sum(kube_deployment_status_replicas_ready{deployment="web"})'
    [finding] = only(lint_yaml(scaled_object(query)), "query-unscoped")
    assert finding.severity is Severity.INFO
    assert "not scoped to a namespace" in finding.message


@pytest.mark.parametrize(
    "query",
    [
        'sum(my_gauge{namespace="default",app="web"})',
        'sum(DCGM_FI_DEV_GPU_UTIL{pod=~"vllm-.*"})',
        'sum(x{job="${JOB}"})',
    ],
)
def test_unscoped_near_misses(query: str) -> None:
    assert only(lint_yaml(scaled_object(query)), "query-unscoped") == []


def test_invalid_query_fires_but_templates_do_not() -> None:
    text = scaled_object('"sum(rate(x{app=\\"web\\"}[2m])"')
    [finding] = only(lint_yaml(text), "query-invalid")
    assert finding.severity is Severity.ERROR
    assert finding.location.line == line_of(text, "query:")
    for templated in ('"sum(rate(x[$__rate_interval]))"', "'{{ .Values.query }}'", "<query>"):
        assert only(lint_yaml(scaled_object(templated)), "query-invalid") == []


def _with_scrape(query: str, interval: str) -> str:
    return docs(
        deployment(gpu=None),
        service(),
        service_monitor(endpoint=f"interval: {interval}\n"),
        scaled_object(query),
    )


def test_rate_window_too_short_uses_the_servicemonitor_interval() -> None:
    text = _with_scrape('sum(rate(http_requests_total{app="web"}[1m]))', "60s")
    [finding] = only(lint_yaml(text), "rate-window-too-short")
    assert finding.location.line == line_of(text, "query:")
    assert "60 s" in finding.message
    assert "[4m]" in finding.fix


def test_rate_window_too_short_uses_the_profile_without_a_servicemonitor() -> None:
    text = scaled_object('sum(rate(http_requests_total{app="web"}[30s]))')
    assert only(lint_yaml(text), "rate-window-too-short") == []
    found = lint_yaml(text, profile=make_profile(prometheus={"scrape_interval": "30s"}))
    assert len(only(found, "rate-window-too-short")) == 1


def test_rate_window_long_enough_is_silent() -> None:
    text = _with_scrape('sum(rate(http_requests_total{app="web"}[2m]))', "30s")
    assert only(lint_yaml(text), "rate-window-too-short") == []
