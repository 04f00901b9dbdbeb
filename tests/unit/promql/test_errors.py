"""Queries the engine cannot answer as Prometheus would fail loudly, naming the construct."""

from __future__ import annotations

import pytest

from gpuscale.errors import InputError
from gpuscale.promql import Engine, PromQLError, SeriesStore


@pytest.fixture
def engine() -> Engine:
    store = SeriesStore()
    for pod in ("a", "b"):
        store.append({"__name__": "m", "pod": pod, "job": "x"}, 0, 1.0)
        store.append({"__name__": "n", "pod": pod, "job": "x"}, 0, 2.0)
    store.append({"__name__": "k", "pod": "a"}, 0, 3.0)
    store.append({"__name__": "l", "pod": "a"}, 0, 4.0)
    return Engine(store)


# Constructs outside the subset, each with the construct the error must name.
UNSUPPORTED = [
    ("sort_by_label(m, 'pod')", "sort_by_label()"),
    ("sort_by_label_desc(m, 'pod')", "sort_by_label_desc()"),
    ("limitk(1, m)", "limitk()"),
    ("limit_ratio(0.5, m)", "limit_ratio()"),
    ("mad_over_time(m[5m])", "mad_over_time()"),
    ("double_exponential_smoothing(m[5m], 0.5, 0.5)", "double_exponential_smoothing()"),
    ("holt_winters(m[5m], 0.5, 0.5)", "holt_winters()"),  # gone in Prometheus 3
    ("histogram_count(m)", "histogram_count()"),
    ("histogram_sum(m)", "histogram_sum()"),
    ("histogram_fraction(0, 1, m)", "histogram_fraction()"),
    ("histogram_avg(m)", "histogram_avg()"),
    ("info(m)", "info()"),
    ("ts_of_max_over_time(m[5m])", "ts_of_max_over_time()"),
    ("first_over_time(m[5m])", "first_over_time()"),
]


@pytest.mark.parametrize(("query", "construct"), UNSUPPORTED)
def test_unsupported_constructs_name_themselves(engine: Engine, query: str, construct: str) -> None:
    query = query.replace("'", '"')
    with pytest.raises(PromQLError) as info:
        engine.instant(query, 0)
    err = info.value
    if err.construct is None:  # promql-parser itself does not know the function
        assert construct.rstrip("()") in str(err)
    else:
        assert err.construct.endswith(construct)
        assert "outside gpuscale's PromQL subset" in str(err)
    assert isinstance(err, InputError)
    assert "\n" not in str(err)


def test_holt_winters_is_supported_for_prometheus_2() -> None:
    store = SeriesStore()
    for i, v in enumerate([1.0, 2.0, 4.0, 7.0]):
        store.append({"__name__": "m"}, i * 15_000, v)
    result = Engine(store, version="2").instant("holt_winters(m[1m], 0.5, 0.5)", 45_000)
    # Smoothed levels 1, 2, 3.5, 5.875 with trends 1, 1, 1.25 (functions.go funcHoltWinters).
    assert result.samples[0].value == 5.875
    with pytest.raises(PromQLError, match="invalid smoothing factor"):
        Engine(store, version="2").instant("holt_winters(m[1m], 1.5, 0.5)", 45_000)


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("sum(", "cannot parse PromQL"),
        ("rate(m)", "expected type matrix"),
        ("{}", "cannot parse PromQL"),
        ("1 == 1", "BOOL"),
        ('m{pod=~"("}', "illegal regex"),
        ('m{pod=~"a(?=b)"}', "illegal regex"),
        ('label_replace(m, "x", "$1", "pod", "a(?=b)")', "invalid regular expression"),
        ('m{pod="a" or job="x"}', "cannot parse|'or' inside a label selector"),
    ],
)
def test_bad_queries_fail_with_one_line(engine: Engine, query: str, message: str) -> None:
    with pytest.raises(PromQLError, match=message) as info:
        engine.instant(query, 0)
    assert "\n" not in str(info.value)
    assert query in str(info.value)


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("m + on(job) n", "many-to-many matching not allowed"),
        ("m + on(job) group_left n", "found duplicate series"),
        ("m + ignoring(pod) group_left(job) n", "found duplicate series"),
        ('count_over_time({__name__=~"k|l"}[5m])', "same labelset"),
        ('-{__name__=~"k|l"}', "same labelset"),
        ('label_replace(m, "pod", "x", "pod", ".*")', "same labelset"),
        ('count_values("1bad", m)', "invalid label name"),
        ("topk(NaN, m)", "overflows int64"),
        ("hour(vector(NaN))", "not a time"),
    ],
)
def test_execution_errors_as_prometheus_raises_them(
    engine: Engine, query: str, message: str
) -> None:
    e2 = Engine(engine.store, version="2")
    with pytest.raises(PromQLError, match=message):
        e2.instant(query, 0)


def test_label_names_follow_the_version(engine: Engine) -> None:
    query = 'label_replace(m, "1a", "x", "pod", ".*")'
    with pytest.raises(PromQLError, match="invalid destination label name"):
        Engine(engine.store, version="2").instant(query, 0)
    result = Engine(engine.store, version="3").instant(query, 0)  # UTF-8 names in 3.x
    assert all(dict(s.labels)["1a"] == "x" for s in result.samples)


def test_at_timestamps_before_1970_work(engine: Engine) -> None:
    assert len(engine.instant("m @ -10", 0)) == 0
    assert len(engine.instant("m @ 0.5", 0)) == 2
    assert len(engine.instant("m @ -0.5", 0)) == 0  # 0 is after -0.5 s


def test_at_inside_predict_linear_over_a_range_is_refused(engine: Engine) -> None:
    query = "predict_linear(m[5m] @ 100, 60)"
    assert len(engine.instant(query, 0)) == 0  # an instant query is fine
    with pytest.raises(PromQLError, match="@ modifier") as info:
        engine.range(query, 0, 60_000, 15_000)
    assert info.value.construct == "@ modifier"
    with pytest.raises(PromQLError, match="@ modifier"):
        engine.instant(f"max_over_time({query}[5m:1m])", 0)


@pytest.mark.parametrize(
    ("query", "window", "message"),
    [
        ("m[5m]", (0, 60_000, 15_000), "range vector"),
        ('"text"', (0, 60_000, 15_000), "string"),
        ("m", (0, 60_000, 0), "step"),
        ("m", (60_000, 0, 15_000), "end timestamp"),
        ("m", (0, 11_000 * 1000, 1000), "11,000 points"),
    ],
)
def test_range_query_arguments(
    engine: Engine, query: str, window: tuple[int, int, int], message: str
) -> None:
    with pytest.raises(PromQLError, match=message):
        engine.range(query, *window)
