"""The gate before promql-parser (text length and nesting) and the one iterative tree walk.

The limits are measured (docs/promql.md, "Query text limits"): promql-parser segfaults from
a ~5,000-term ``+`` chain or ~12,000 nested parentheses, and gpuscale's recursive readers
(the engine's compiler and evaluator, lint's analyses) raise RecursionError from about 400
levels. These tests pin both sides: at the limit every reader answers, one past it the
gate refuses before the parser runs.
"""

from __future__ import annotations

import promql_parser as pp
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuscale.lint.query import analyse_query
from gpuscale.promql import (
    MAX_QUERY_CHARS,
    MAX_QUERY_DEPTH,
    Engine,
    PromQLError,
    SeriesStore,
    check_query_text,
    fold,
    parse_query,
    walk,
)
from gpuscale.promql.syntax import children, query_depth


def _depth(tree: object) -> int:
    return fold(tree, lambda _node, inner: 1 + max(inner, default=0))


def _chain(n: int) -> str:
    return " + ".join(["x"] * n)


def _parens(n: int) -> str:
    return "(" * n + "x" + ")" * n


def _sums(n: int) -> str:
    return "sum(" * n + "x" + ")" * n


def _engine() -> Engine:
    store = SeriesStore()
    store.append({"__name__": "x", "pod": "a"}, 0, 1.0)
    return Engine(store)


REAL_QUERIES = [
    "my_custom_gauge",
    'sum(my_custom_gauge{namespace="default"})',
    'sum(rate(http_requests_total{job="api"}[2m])) / count(up{job="api"})',
    "avg by (pod) (rate(x[5m] offset 1m)) or vector(0)",
    "histogram_quantile(0.99, sum by (le) (rate(h_bucket[5m])))",
    "max_over_time(sum(x)[10m:30s]) > bool 3",
    "topk(1, x) * on (pod) group_left (node) y unless z and -w",
    'label_replace(x, "a", "$1", "b", "(.*)") - 1e-3 ^ 2 % 7',
    'x{a="+-*/(", b=~"[(]"} # a comment with ( brackets\n+ 1',
    "scalar(x) atan2 2 == bool 1",
]


@pytest.mark.parametrize("query", REAL_QUERIES)
def test_the_text_estimate_is_never_below_the_tree_depth(query: str) -> None:
    tree = pp.parse(query)
    assert query_depth(query) >= _depth(tree)
    assert query_depth(query) <= MAX_QUERY_DEPTH


@pytest.mark.parametrize("build", [_chain, _parens, _sums], ids=["chain", "parens", "sums"])
def test_at_the_limit_every_reader_answers_and_one_past_it_is_refused(build) -> None:  # type: ignore[no-untyped-def]
    n = 1
    while query_depth(build(n + 1)) <= MAX_QUERY_DEPTH:
        n += 1
    at_limit, past = build(n), build(n + 1)
    assert query_depth(at_limit) <= MAX_QUERY_DEPTH < query_depth(past)
    assert _depth(parse_query(at_limit)) >= MAX_QUERY_DEPTH // 2
    assert _engine().instant(at_limit, 0) is not None
    assert analyse_query(at_limit).parsed
    with pytest.raises(PromQLError, match="nests about"):
        parse_query(past)
    with pytest.raises(PromQLError, match="nests about"):
        _engine().instant(past, 0)
    with pytest.raises(PromQLError, match="nests about"):
        analyse_query(past)


def test_text_over_the_length_limit_is_refused_before_parsing() -> None:
    flat = 'x{a="' + "a" * MAX_QUERY_CHARS + '"}'
    with pytest.raises(PromQLError, match="characters long"):
        parse_query(flat)
    # ~100 KB of '+' terms: promql-parser would overflow its stack on this.
    with pytest.raises(PromQLError) as caught:
        check_query_text(_chain(25_000), where="so.yaml:12")
    line = str(caught.value)
    assert line.startswith("so.yaml:12: ")
    assert "(fix:" in line
    assert "\n" not in line


def test_without_a_place_the_error_names_the_query_shortened() -> None:
    with pytest.raises(PromQLError) as caught:
        check_query_text(_parens(500))
    assert caught.value.where is not None
    assert caught.value.where.startswith("query '((((")
    assert len(caught.value.where) < 80


def test_unbalanced_and_odd_text_is_measured_without_error() -> None:
    for text in ("(((", ")))", '"unterminated', "`raw", "{a=", "]", "#", ""):
        assert query_depth(text) >= 1


def test_walk_is_preorder_in_written_order_and_can_prune() -> None:
    tree = pp.parse("sum(rate(a[1m])) / (b + topk(2, c))")
    names = [n.name for n in walk(tree) if isinstance(n, pp.VectorSelector)]
    assert names == ["a", "b", "c"]
    kinds = [type(n).__name__ for n in walk(tree)][:4]
    assert kinds == ["BinaryExpr", "AggregateExpr", "Call", "MatrixSelector"]
    pruned = [
        n.name
        for n in walk(tree, into=lambda n: not isinstance(n, pp.Call))
        if isinstance(n, pp.VectorSelector)
    ]
    assert pruned == ["b", "c"]


def test_fold_and_walk_use_no_python_stack_per_level() -> None:
    # Deeper than Python's recursion limit, built with the parser directly (under its limit).
    tree = pp.parse(_chain(1_500))
    assert _depth(tree) == 1_500
    assert sum(1 for _ in walk(tree)) == 2 * 1_500 - 1


def test_children_cover_every_node_kind() -> None:
    tree = pp.parse('count_values("v", -max_over_time(x[5m:1m] offset 1m)) + rate(y[1m])')
    seen = {type(n).__name__ for n in walk(tree)}
    assert {
        "BinaryExpr",
        "AggregateExpr",
        "StringLiteral",
        "UnaryExpr",
        "SubqueryExpr",
        "VectorSelector",
        "Call",
        "MatrixSelector",
    } <= seen
    assert children(pp.parse("1")) == ()


# --- properties: only gpuscale's errors (or the parser's ValueError) come out -------------

_ATOMS = st.sampled_from(["x", 'y{a="b"}', "1", "2.5", "rate(z[5m])", '"s"', "time()"])
_OPS = st.sampled_from(["+", "-", "*", "/", "%", "^", "==", ">", "and", "or", "unless"])


def _expression(depth: int) -> st.SearchStrategy[str]:
    if depth == 0:
        return _ATOMS
    inner = _expression(depth - 1)
    return st.one_of(
        _ATOMS,
        st.builds(lambda a, op, b: f"{a} {op} {b}", inner, _OPS, inner),
        st.builds(lambda a: f"({a})", inner),
        st.builds(lambda a: f"sum by (pod) ({a})", inner),
        st.builds(lambda a: f"-{a}", inner),
        st.builds(lambda a: f"abs({a})", inner),
    )


_SETTINGS = settings(
    max_examples=200,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
)


@_SETTINGS
@given(_expression(5))
def test_the_estimate_bounds_the_depth_of_generated_queries(query: str) -> None:
    try:
        tree = pp.parse(query)
    except ValueError:
        return
    assert query_depth(query) >= _depth(tree)


_PROMQL_ALPHABET = st.sampled_from(list("()[]{}+-*/%^=!~<>,:.\"'`#\\ \n\tabcxyz019eEofsmby@"))


@_SETTINGS
@given(
    st.one_of(
        st.text(_PROMQL_ALPHABET, max_size=200),
        st.text(max_size=100),
        _expression(4),
        st.integers(1, 6_000).map(_chain),
        st.integers(1, 15_000).map(_parens),
    )
)
def test_any_text_gives_an_answer_or_gpuscales_error(query: str) -> None:
    errors: list[PromQLError] = []
    for read in (_engine().check, analyse_query):
        try:
            read(query)
        except PromQLError as error:
            errors.append(error)
    assert all("\n" not in error.one_line() for error in errors)
