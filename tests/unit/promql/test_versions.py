"""Prometheus 3's documented changes that the transcribed upstream cases do not cover.

Each case cites where the change is documented: docs/migration.md of Prometheus v3.0.0
("PromQL" section), or the 3.x source the engine follows (promql/engine.go and
promql/functions.go at v3.5.0). The same query runs under ``version="2"`` (Prometheus
2.42, checked against the real server by the differential suite) and ``version="3"``.
"""

from __future__ import annotations

import math

import pytest

from gpuscale.promql import Engine, SeriesStore


def _engines(store: SeriesStore) -> tuple[Engine, Engine]:
    return Engine(store, version="2"), Engine(store, version="3")


def _values(engine: Engine, query: str, t: int) -> dict[tuple[tuple[str, str], ...], float]:
    result = engine.instant(query, t)
    return {s.labels: s.value for s in result.samples}  # type: ignore[union-attr]


def test_range_selectors_are_left_open() -> None:
    """migration.md: "Lookback and range selectors are left open and right closed": with
    samples every minute, a 5m range at a sample's time holds 6 samples in 2.x, 5 in 3.x."""
    store = SeriesStore()
    for i in range(11):
        store.append({"__name__": "m"}, i * 60_000, float(i))
    v2, v3 = _engines(store)
    assert _values(v2, "count_over_time(m[5m])", 600_000) == {(): 6.0}
    assert _values(v3, "count_over_time(m[5m])", 600_000) == {(): 5.0}
    # Off the sample grid both agree.
    assert _values(v2, "count_over_time(m[5m])", 630_000) == _values(
        v3, "count_over_time(m[5m])", 630_000
    )


def test_lookback_is_left_open() -> None:
    """migration.md: the same for the 5-minute lookback of instant selectors."""
    store = SeriesStore()
    store.append({"__name__": "m"}, 0, 1.0)
    v2, v3 = _engines(store)
    assert _values(v2, "m", 300_000) == {(("__name__", "m"),): 1.0}
    assert _values(v3, "m", 300_000) == {}
    assert _values(v3, "m", 299_999) == {(("__name__", "m"),): 1.0}


def test_lookback_delta_setting() -> None:
    store = SeriesStore()
    store.append({"__name__": "m"}, 0, 1.0)
    engine = Engine(store, lookback_ms=60_000)
    assert len(engine.instant("m", 59_999)) == 1
    assert len(engine.instant("m", 60_000)) == 0


def test_regex_dot_matches_newline() -> None:
    """migration.md: "The . pattern in regular expressions in PromQL matches newline
    characters" (matchers and label_replace)."""
    store = SeriesStore()
    store.append({"__name__": "m", "tag": "a\nb"}, 0, 1.0)
    v2, v3 = _engines(store)
    assert _values(v2, 'm{tag=~"a.b"}', 0) == {}
    assert len(_values(v3, 'm{tag=~"a.b"}', 0)) == 1
    query = 'label_replace(m, "x", "$1", "tag", "(.*)")'
    assert dict(next(iter(_values(v2, query, 0)))).get("x") is None
    assert dict(next(iter(_values(v3, query, 0))))["x"] == "a\nb"


def test_atan2_drops_the_metric_name_in_3() -> None:
    """engine.go: 2.42's shouldDropMetricName omits ATAN2; 3.x's changesMetricSchema lists it."""
    store = SeriesStore()
    store.append({"__name__": "m", "pod": "a"}, 0, 1.0)
    v2, v3 = _engines(store)
    assert list(_values(v2, "m atan2 1", 0)) == [(("__name__", "m"), ("pod", "a"))]
    assert list(_values(v3, "m atan2 1", 0)) == [(("pod", "a"),)]


def test_sum_and_avg_use_compensated_summation_in_3() -> None:
    """engine.go v3.5.0 aggregation: SUM and AVG accumulate with kahanSumInc."""
    store = SeriesStore()
    for i, v in enumerate([1e100, 1.0, -1e100]):
        store.append({"__name__": "m", "i": str(i)}, 0, v)
    v2, v3 = _engines(store)
    assert _values(v2, "sum(m)", 0) == {(): 0.0}
    assert _values(v3, "sum(m)", 0) == {(): 1.0}
    assert _values(v3, "avg(m)", 0) == {(): pytest.approx(1 / 3)}
    assert _values(v3, "sum_over_time(m[1m])", 0) == _values(v2, "sum_over_time(m[1m])", 0)


def test_stddev_of_infinite_first_value_is_nan_in_3() -> None:
    """engine.go v3.5.0 aggregation: a STDDEV group starting with NaN or ±Inf is NaN."""
    store = SeriesStore()
    store.append({"__name__": "m"}, 0, math.inf)
    v2, v3 = _engines(store)
    assert _values(v2, "stddev(m)", 0) == {(): 0.0}
    assert math.isnan(_values(v3, "stddev(m)", 0)[()])


def test_topk_keeps_the_first_nan_in_3() -> None:
    """engine.go v3.5.0 aggregationK replaces a NaN top only with a number; 2.42 replaces a
    NaN top with anything, so among NaNs the later one wins."""
    store = SeriesStore()
    for i, v in enumerate([math.nan, math.nan]):
        store.append({"__name__": "m", "i": str(i)}, 0, v)
    v2, v3 = _engines(store)
    assert [dict(labels)["i"] for labels in _values(v2, "topk(1, m)", 0)] == ["1"]
    assert [dict(labels)["i"] for labels in _values(v3, "topk(1, m)", 0)] == ["0"]
    store.append({"__name__": "m", "i": "2"}, 0, 1.0)
    for engine in (v2, v3):  # a number beats NaN in both
        assert [dict(labels)["i"] for labels in _values(engine, "topk(1, m)", 0)] == ["2"]


def test_histogram_quantile_ignores_tiny_non_monotonic_deltas_in_3() -> None:
    """quantile.go v3.5.0 ensureMonotonicAndIgnoreSmallDeltas: counts within 1e-12 relative
    of the previous bucket are taken as equal; 2.42 keeps the larger count."""
    store = SeriesStore()
    buckets = {"1": 5.0, "2": 10.0, "4": 10.0 + 1e-11, "+Inf": 10.0 + 1e-11}
    for le, count in buckets.items():
        store.append({"__name__": "h_bucket", "le": le}, 0, count)
    v2, v3 = _engines(store)
    q = "histogram_quantile(1, h_bucket)"
    # 2.42 finds the last observations in the (2, 4] bucket; 3.x sees no observation there.
    assert _values(v2, q, 0) == {(): 4.0}
    assert _values(v3, q, 0) == {(): 2.0}


@pytest.mark.parametrize(("version", "steps_at_30s"), [("2", 11.0), ("3", 10.0)])
def test_default_subquery_step(version: str, steps_at_30s: float) -> None:
    """``x[5m:]`` steps by the global evaluation_interval (1m unless configured); with a
    30 s step the window start falls on a step, which only 2.x counts."""
    store = SeriesStore()
    for i in range(20):
        store.append({"__name__": "m"}, i * 30_000, float(i))
    one_minute = Engine(store, version=version)  # type: ignore[arg-type]
    thirty = Engine(store, version=version, default_subquery_step_ms=30_000)  # type: ignore[arg-type]
    assert _values(one_minute, "count_over_time(m[5m:])", 570_000) == {(): 5.0}
    assert _values(thirty, "count_over_time(m[5m:])", 570_000) == {(): steps_at_30s}


@pytest.mark.parametrize(
    "values",
    [
        [1.0, 2.0, 3.0, 4.5],
        [1e308, 1e308, -1e308],  # the sum overflows: 3.x switches to an incremental mean
        [math.inf, 1.0],
        [0.1] * 30,
        [1e100, 1.0, -1e100],
    ],
)
def test_fast_avg_over_time_is_upstreams(values: list[float]) -> None:
    """The fast path of the 3.x mean (avg, avg_over_time) gives what the step-by-step
    port gives."""
    from gpuscale.promql._kahan import kahan_mean_v3, kahan_mean_v3_steps

    fast = kahan_mean_v3(values, 0, len(values))
    exact = kahan_mean_v3_steps(values, 0, len(values))
    assert fast == exact or (math.isnan(fast or 0.0) and math.isnan(exact or 0.0))
