"""The query analysis, table by table. Sources of the queries are named per row."""

from __future__ import annotations

import pytest

from gpuscale.lint.query import Cardinality, analyse_query, regex_matches_everything

TUTORIAL = (
    'sum(my_custom_gauge{}) / sum(kube_deployment_status_replicas{deployment="go-from-configmap"})'
)

# (query, per-replica form or None, source)
PER_REPLICA = [
    (TUTORIAL, "divide", "the seed tutorial's trigger"),
    ('avg(DCGM_FI_DEV_GPU_UTIL{namespace="llm",pod=~"vllm-.*"})', "avg", "DCGM per-GPU average"),
    ('avg(gpu_gfx_activity{namespace="llm"})', "avg", "AMD exporter per-GPU average"),
    ('sum(x{app="a"}) / count(x{app="a"})', "divide", "total over series count"),
    ('sum(x{app="a"}) / count(kube_pod_info{namespace="p",pod=~"a-.*"})', "divide", "pod count"),
    ('sum(x{app="a"}) / sum(kube_deployment_spec_replicas{deployment="a"})', "divide", "spec"),
    (
        'sum(x{app="a"}) / sum(kube_deployment_status_replicas_ready{deployment="a"})',
        "divide",
        "ready replicas still divide",
    ),
    ('sum(x{app="a"}) / sum(kube_statefulset_status_replicas{statefulset="a"})', "divide", "sts"),
    ('sum(x{app="a"}) / scalar(count(x{app="a"}))', "divide", "scalar() of a count"),
    (
        'sum(x{app="a"}) / on() group_left count(up{job="a"})',
        "divide",
        "vector matching modifiers do not hide the count",
    ),
    ('(sum(x{app="a"}) / count(x{app="a"})) * 100', "divide", "percent of a per-pod mean"),
    ('ceil(sum(x{app="a"}) / count(x{app="a"}))', "divide", "transparent function"),
    ('sum(x{app="a"}) / sum(up{job="a"})', "divide", "summing up counts targets"),
    ('avg(x{app="a"}) or vector(0)', "avg", "or vector(0) wrapper"),
    ('avg(rate(vllm:request_success_total{model_name="m"}[1m]))', "avg", "vLLM per-engine"),
    # near misses: totals, ratios and constants
    ('sum(x{app="a"}) / 4', None, "division by a constant"),
    ('sum(rate(x{app="a"}[1m]))', None, "a plain total"),
    ('sum(rate(errors{app="a"}[1m])) / sum(rate(requests{app="a"}[1m]))', None, "error ratio"),
    ('sum(vllm:num_requests_waiting{model_name="m"})', None, "vLLM queue total"),
    ('max(DCGM_FI_DEV_GPU_UTIL{namespace="llm"})', None, "max is not a mean"),
    ('avg(sum(x{app="a"}))', None, "avg of a single series is that series"),
    ('100 / count(x{app="a"})', None, "inverse of a count is not a per-replica load"),
    ('sum(x{app="a"}) - count(x{app="a"})', None, "difference"),
]


@pytest.mark.parametrize(("query", "form", "source"), PER_REPLICA)
def test_per_replica(query: str, form: str | None, source: str) -> None:
    analysis = analyse_query(query)
    assert analysis.parsed, source
    got = analysis.per_replica.form if analysis.per_replica else None
    assert got == form, source


def test_per_replica_names_the_denominator_and_numerator() -> None:
    per = analyse_query(TUTORIAL).per_replica
    assert per is not None
    assert per.numerator == "sum(my_custom_gauge{})"
    assert "kube_deployment_status_replicas" in per.expression


# (query, cardinality, source)
CARDINALITY = [
    (TUTORIAL, Cardinality.SINGLE, "sum / sum"),
    ('my_queue{queue="jobs"}', Cardinality.MULTI, "bare selector"),
    ('rate(http_requests_total{app="a"}[2m])', Cardinality.MULTI, "rate of a selector"),
    ('sum by (pod) (x{app="a"})', Cardinality.MULTI, "grouping by an unpinned label"),
    ('sum by (namespace) (x{namespace="a"})', Cardinality.SINGLE, "grouping by a pinned label"),
    ('sum without (pod) (x{app="a"})', Cardinality.MULTI, "without keeps other labels"),
    ('sum(x{app="a"})', Cardinality.SINGLE, "sum"),
    ('max(DCGM_FI_DEV_GPU_UTIL{namespace="llm"})', Cardinality.SINGLE, "max"),
    ('count(up{job="a"})', Cardinality.SINGLE, "count"),
    ("vector(1)", Cardinality.SINGLE, "vector()"),
    ('scalar(x{app="a"})', Cardinality.SINGLE, "scalar()"),
    ('absent(x{app="a"})', Cardinality.SINGLE, "absent()"),
    ('sum(x{app="a"}) or vector(0)', Cardinality.SINGLE, "or of singles"),
    ('x{app="a"} or vector(0)', Cardinality.MULTI, "or with a bare selector"),
    ('x{app="a"} / on() group_left sum(y)', Cardinality.MULTI, "group_left keeps the many side"),
    ('x{app="a"} / sum(y)', Cardinality.SINGLE, "one-to-one with a single side"),
    ('x{app="a"} * 2', Cardinality.MULTI, "scalar arithmetic keeps the vector's series"),
    ('topk(1, x{app="a"})', Cardinality.SINGLE, "topk 1"),
    ('topk(3, x{app="a"})', Cardinality.MULTI, "topk 3"),
    ('count_values("v", x{app="a"})', Cardinality.MULTI, "count_values"),
    (
        "histogram_quantile(0.95, sum by (le) "
        '(rate(vllm:e2e_request_latency_seconds_bucket{model_name="m"}[5m])))',
        Cardinality.SINGLE,
        "vLLM latency quantile: le is consumed",
    ),
    (
        'histogram_quantile(0.95, rate(x_bucket{app="a"}[5m]))',
        Cardinality.MULTI,
        "quantile without aggregation",
    ),
    ('sum(x{app="a"}) and y{app="a"}', Cardinality.SINGLE, "and keeps the left side"),
    ("1 + 2", Cardinality.SINGLE, "numbers"),
]


@pytest.mark.parametrize(("query", "cardinality", "source"), CARDINALITY)
def test_cardinality(query: str, cardinality: Cardinality, source: str) -> None:
    analysis = analyse_query(query)
    assert analysis.cardinality is cardinality, source
    assert (analysis.multi_series_reason is not None) == (cardinality is Cardinality.MULTI)


# (query, unscoped selector texts, source)
SCOPE = [
    (TUTORIAL, ["my_custom_gauge"], "the tutorial's empty braces"),
    ("sum(my_custom_gauge)", ["my_custom_gauge"], "no braces"),
    ('sum({__name__="my_custom_gauge"})', ['{__name__="my_custom_gauge"}'], "only __name__"),
    ('sum(x{pod=~".*"})', ['x{pod=~".*"}'], "dot star"),
    ('sum(x{pod=~".+"})', ['x{pod=~".+"}'], "dot plus: every non-empty value"),
    ('sum(x{pod=~"(.*)"})', ['x{pod=~"(.*)"}'], "grouped dot star"),
    ('sum(x{pod=~".*|foo"})', ['x{pod=~".*|foo"}'], "alternation with dot star"),
    ('sum(x{namespace!="kube-system"})', ['x{namespace!="kube-system"}'], "negative matcher"),
    ('sum(x{pod=""})', ['x{pod=""}'], "empty value"),
    ('sum(x{pod=~"vllm-.*"})', [], "a real prefix regex scopes"),
    ('sum(x{namespace="llm"})', [], "namespace"),
    ('sum(x{app="a" or app="b"})', [], "or-groups all scoped"),
    ('sum(x{app="a" or foo=~".*"})', ['x{app="a" or foo=~".*"}'], "one or-group unscoped"),
    ('sum(DCGM_FI_DEV_GPU_UTIL{pod=~"vllm-.*"})', [], "DCGM scoped by pod"),
    ('sum(x{job="${JOB}"})', [], "templated value counts as scoping"),
]


@pytest.mark.parametrize(("query", "unscoped", "source"), SCOPE)
def test_unscoped(query: str, unscoped: list[str], source: str) -> None:
    assert [s.text for s in analyse_query(query).unscoped] == unscoped, source


def test_kube_state_metrics_without_namespace() -> None:
    analysis = analyse_query(TUTORIAL)
    assert [s.metric for s in analysis.unnamespaced] == ["kube_deployment_status_replicas"]
    scoped = analyse_query(
        'sum(kube_deployment_status_replicas{namespace="a",deployment="go"})'
    ).unnamespaced
    assert scoped == ()


# (query, fills empty, source)
EMPTY = [
    (TUTORIAL, False, "plain division"),
    ('sum(x{app="a"}) or vector(0)', True, "or vector(0)"),
    ('sum(x{app="a"}) or on() vector(0)', True, "or on() vector(0)"),
    ('(sum(x{app="a"}) or vector(0)) * 2', True, "scaled"),
    ('absent(x{app="a"})', True, "absent"),
    ('sum(x{app="a"}) or absent(x{app="a"}) * 0', True, "or absent"),
    ('sum(x{app="a"} or vector(0))', True, "inside the aggregation"),
    ('scalar(sum(x{app="a"}))', False, "scalar of empty is NaN, not a value"),
    ('(sum(x{app="a"}) or vector(0)) / sum(y{app="a"})', False, "the divisor can be empty"),
    ('sum(x{app="a"}) and vector(1)', False, "and"),
]


@pytest.mark.parametrize(("query", "fills", "source"), EMPTY)
def test_fills_empty(query: str, fills: bool, source: str) -> None:
    assert analyse_query(query).fills_empty is fills, source


def test_pending_counting_selectors() -> None:
    assert [s.metric for s in analyse_query(TUTORIAL).pending_selectors] == [
        "kube_deployment_status_replicas"
    ]
    ready = 'sum(x) / sum(kube_deployment_status_replicas_ready{deployment="a"})'
    assert analyse_query(ready).pending_selectors == ()
    assert analyse_query("sum(kube_deployment_spec_replicas)").pending_selectors != ()


def test_ranges() -> None:
    analysis = analyse_query('sum(rate(x{app="a"}[30s])) + sum(increase(y{app="a"}[2m]))')
    assert [(r.function, r.selector.metric, r.seconds) for r in analysis.ranges] == [
        ("rate", "x", 30.0),
        ("increase", "y", 120.0),
    ]


@pytest.mark.parametrize(
    ("query", "templated"),
    [
        ("sum(rate(x[$__rate_interval]))", True),
        ("sum({{ .Values.metric }})", True),
        ("x > <threshold>", True),
        ("sum(${METRIC})", True),
        ("sum(rate(x[5m])", False),
        ("sum(x) +", False),
    ],
)
def test_unparsable_queries(query: str, templated: bool) -> None:
    analysis = analyse_query(query)
    assert not analysis.parsed
    assert analysis.templated is templated
    assert (analysis.parse_error is not None) is not templated


@pytest.mark.parametrize(
    ("pattern", "everything"),
    [
        (".*", True),
        (".+", True),
        ("(.*)", True),
        ("(?:.+)", True),
        (".*.*", True),
        ("foo|.*", True),
        ("[\\s\\S]*", True),
        (".{0,}", True),
        ("vllm-.*", False),
        ("a|b", False),
        ("[^q]*", False),
        (".{1,10}", False),
        ("", False),
        ("(", False),
    ],
)
def test_regex_matches_everything(pattern: str, everything: bool) -> None:
    assert regex_matches_everything(pattern) is everything
