"""The FakeMetricsBackend test double: the query shapes it promises, Prometheus' lookback
and staleness conventions, and the ``/api/v1/query`` answer shape."""

from __future__ import annotations

import math

import pytest

from gpuscale.sim.metrics import query_scalar
from gpuscale.sim.testing import STALE_NAN, FakeMetricsBackend, format_sample_value


def _backend() -> FakeMetricsBackend:
    backend = FakeMetricsBackend()
    for pod, value in (("a", 160.0), ("b", 0.0)):
        backend.append(
            {"__name__": "my_custom_gauge", "pod": pod, "namespace": "gpu"}, 10_000, value
        )
    backend.append(
        {"__name__": "kube_deployment_status_replicas", "deployment": "go", "namespace": "gpu"},
        10_000,
        2.0,
    )
    return backend


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("sum(my_custom_gauge{})", 160.0),
        ('sum(my_custom_gauge) / sum(kube_deployment_status_replicas{deployment="go"})', 80.0),
        ('count(my_custom_gauge{pod=~"a|b"})', 2.0),
        ('avg(my_custom_gauge{pod!="c"})', 80.0),
        ("max(my_custom_gauge) - min(my_custom_gauge) * 2", 160.0),
        ("sum(my_custom_gauge) / 0", math.inf),
        ('sum(my_custom_gauge{pod="zzz"})', None),
    ],
)
def test_query_shapes(query: str, expected: float | None) -> None:
    body = _backend().query(query, 20_000)
    assert body["status"] == "success"
    assert body["data"]["resultType"] == "vector"
    assert query_scalar(body) == expected


def test_answer_shape_and_values_are_prometheus_strings() -> None:
    body = _backend().query("sum by (pod) (my_custom_gauge)", 20_500)
    result = sorted(body["data"]["result"], key=lambda r: r["metric"]["pod"])
    assert result == [
        {"metric": {"pod": "a"}, "value": [20.5, "160"]},
        {"metric": {"pod": "b"}, "value": [20.5, "0"]},
    ]
    assert [format_sample_value(v) for v in (0.1, 1e-7, math.nan, -math.inf)] == [
        "0.1",
        "0.0000001",
        "NaN",
        "-Inf",
    ]


def test_lookback_and_staleness() -> None:
    backend = _backend()
    assert query_scalar(backend.query("sum(my_custom_gauge)", 10_000 + 299_999)) == 160.0
    assert query_scalar(backend.query("sum(my_custom_gauge)", 10_000 + 300_000)) is None
    backend = _backend()
    backend.mark_stale({"__name__": "my_custom_gauge", "pod": "a", "namespace": "gpu"}, 15_000)
    assert query_scalar(backend.query("sum(my_custom_gauge)", 14_999)) == 160.0
    assert query_scalar(backend.query("sum(my_custom_gauge)", 15_000)) == 0.0
    assert math.isnan(STALE_NAN)


def test_unsupported_queries_are_errors_not_guesses() -> None:
    body = _backend().query("rate(my_custom_gauge[5m])", 20_000)
    assert body["status"] == "error"
    assert query_scalar(body) is None


def test_out_of_order_samples_are_rejected() -> None:
    backend = FakeMetricsBackend()
    labels = {"__name__": "x"}
    backend.append(labels, 2_000, 1.0)
    backend.append(labels, 1_000, 5.0)
    assert backend.samples(labels) == [(2_000, 1.0)]
