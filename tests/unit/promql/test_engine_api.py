"""The engine's API as the simulator and the lint rules use it."""

from __future__ import annotations

import promql_parser
import pytest

from gpuscale.promql import (
    SUPPORTED_AGGREGATIONS,
    SUPPORTED_FUNCTIONS,
    Engine,
    MatrixResult,
    PromQLError,
    ScalarResult,
    SeriesStore,
    StringResult,
    VectorResult,
)

TUTORIAL = (
    'sum(my_custom_gauge{}) / sum(kube_deployment_status_replicas{deployment="go-from-configmap"})'
)


@pytest.fixture
def store() -> SeriesStore:
    store = SeriesStore()
    gauge = store.series_ref({"__name__": "my_custom_gauge", "pod": "a"})
    replicas = store.series_ref(
        {"__name__": "kube_deployment_status_replicas", "deployment": "go-from-configmap"}
    )
    for i in range(20):
        store.append_ref(gauge, i * 15_000, 160.0 if i >= 10 else 40.0)
        store.append_ref(replicas, i * 15_000, 2.0 if i >= 12 else 1.0)
    return store


def test_tutorial_query(store: SeriesStore) -> None:
    engine = Engine(store)
    assert engine.instant(TUTORIAL, 100_000).to_api_json()["data"]["result"] == [
        {"metric": {}, "value": [100.0, "40"]}
    ]
    assert engine.instant(TUTORIAL, 160_000).samples == ((((), 160.0)),)  # type: ignore[union-attr]
    assert engine.instant(TUTORIAL, 200_000).samples[0].value == 80.0  # type: ignore[union-attr]


def test_result_types(store: SeriesStore) -> None:
    engine = Engine(store)
    assert isinstance(engine.instant("my_custom_gauge", 0), VectorResult)
    assert isinstance(engine.instant("time()", 0), ScalarResult)
    assert isinstance(engine.instant('"hello"', 0), StringResult)
    matrix = engine.instant("my_custom_gauge[1m]", 60_000)
    assert isinstance(matrix, MatrixResult)
    # Version 3 (the default): the sample at t - range is outside the range.
    assert matrix.series[0].timestamps_ms == (15_000, 30_000, 45_000, 60_000)
    sub = engine.instant("my_custom_gauge[1m:30s]", 60_000)
    assert isinstance(sub, MatrixResult)
    assert sub.series[0].timestamps_ms == (30_000, 60_000)


def test_range_queries_sort_series_and_step(store: SeriesStore) -> None:
    store.append({"__name__": "my_custom_gauge", "pod": "0"}, 0, 1.0)
    result = Engine(store).range("my_custom_gauge", 0, 60_000, 30_000)
    assert [dict(s.labels)["pod"] for s in result.series] == ["0", "a"]
    assert result.series[1].timestamps_ms == (0, 30_000, 60_000)
    scalar = Engine(store).range("1 + 1", 0, 30_000, 15_000)
    assert scalar.series[0].labels == ()
    assert scalar.series[0].values == (2.0, 2.0, 2.0)


def test_queries_are_parsed_once(store: SeriesStore, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = Engine(store)
    engine.instant(TUTORIAL, 0)
    calls = []
    real_parse = promql_parser.parse
    monkeypatch.setattr(promql_parser, "parse", lambda q: calls.append(q) or real_parse(q))
    for t in range(0, 300_000, 15_000):
        engine.instant(TUTORIAL, t)
    assert calls == []


def test_parsed_expressions_are_accepted(store: SeriesStore) -> None:
    engine = Engine(store)
    expr = promql_parser.parse(TUTORIAL)
    assert engine.instant(expr, 100_000) == engine.instant(TUTORIAL, 100_000)
    engine.check(expr)
    with pytest.raises(PromQLError, match="outside"):
        engine.check("limitk(1, my_custom_gauge)")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"version": "4"}, "version"),
        ({"lookback_ms": 0}, "lookback_ms"),
        ({"default_subquery_step_ms": -1}, "default_subquery_step_ms"),
    ],
)
def test_engine_settings_are_checked(
    store: SeriesStore, kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        Engine(store, **kwargs)  # type: ignore[arg-type]


def test_the_subset_is_what_issue_4_lists() -> None:
    listed_functions = {
        "rate",
        "irate",
        "increase",
        "delta",
        "idelta",
        "deriv",
        "resets",
        "changes",
        "avg_over_time",
        "min_over_time",
        "max_over_time",
        "sum_over_time",
        "count_over_time",
        "last_over_time",
        "quantile_over_time",
        "stddev_over_time",
        "histogram_quantile",
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
        "time",
        "timestamp",
        "absent",
        "absent_over_time",
        "label_replace",
        "label_join",
        "sort",
        "sort_desc",
    }
    listed_aggregations = {
        "sum",
        "avg",
        "min",
        "max",
        "count",
        "stddev",
        "stdvar",
        "topk",
        "bottomk",
        "quantile",
        "count_values",
    }
    assert listed_functions <= SUPPORTED_FUNCTIONS
    assert listed_aggregations <= SUPPORTED_AGGREGATIONS
