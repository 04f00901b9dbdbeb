"""The engine against the real Prometheus (Debian 2.42), query by query.

Random series are written as OpenMetrics text, backfilled with ``promtool tsdb
create-blocks-from openmetrics``, and served by the real ``prometheus`` on loopback; the
same samples go into a ``SeriesStore``. Every query of the corpus (see corpus.py) is asked
of both at two instants and, for a quarter of them, as a range query; the answers must
have the same label sets and values within 1e-9 relative (NaN equals NaN), or both must be
errors. Top-level ``sort``/``sort_desc`` must also agree on the order of values.

Reproducible: ``--promql-seed`` (default 20240604) picks the series and the queries,
``--promql-queries`` (default 2400) the corpus size; ``GPUSCALE_PROMQL_SEED`` and
``GPUSCALE_PROMQL_QUERIES`` are aliases (see conftest.py). Run a fresh corpus with e.g.
``.venv/bin/pytest tests/integration/promql --promql-seed=$RANDOM -q``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpuscale.errors import GpuscaleError
from gpuscale.prometheus import PrometheusClient, PrometheusServer, create_blocks_from_openmetrics
from gpuscale.promql import (
    Engine,
    MatrixResult,
    PromQLError,
    Result,
    ScalarResult,
    SeriesStore,
    StringResult,
    VectorResult,
)
from tests.integration.promql.conftest import Corpus
from tests.integration.promql.corpus import (
    TUTORIAL_QUERY,
    Check,
    SeriesSpec,
    to_openmetrics,
)

pytestmark = pytest.mark.integration

TIES = re.compile(r"\b(topk|bottomk)\b")


@pytest.fixture(scope="module")
def prometheus(
    tmp_path_factory: pytest.TempPathFactory, promql_corpus: Corpus
) -> Iterator[PrometheusClient]:
    work = tmp_path_factory.mktemp("promql-differential")
    om = work / "series.om"
    om.write_text(to_openmetrics(promql_corpus.series))
    create_blocks_from_openmetrics(om, work / "data")
    with PrometheusServer(Path(work / "data")) as server, server.client() as client:
        yield client


@pytest.fixture(scope="module")
def engine(promql_corpus: Corpus) -> Engine:
    return Engine(_store(promql_corpus.series), version="2")


def _store(series: list[SeriesSpec]) -> SeriesStore:
    store = SeriesStore()
    for s in series:
        ref = store.series_ref(s.labels)
        for t, v in s.samples:
            store.append_ref(ref, t, v)
    return store


def _close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b or math.isclose(a, b, rel_tol=1e-9, abs_tol=0.0)


def _diff(ours: Result, theirs: Result, *, ordered: bool) -> str | None:
    """Why two answers differ, or None when they agree."""
    if type(ours) is not type(theirs):
        return f"result types differ: {ours.result_type} vs {theirs.result_type}"
    if isinstance(ours, ScalarResult):
        assert isinstance(theirs, ScalarResult)
        return None if _close(ours.value, theirs.value) else f"{ours.value} vs {theirs.value}"
    if isinstance(ours, StringResult):
        assert isinstance(theirs, StringResult)
        return None if ours.value == theirs.value else f"{ours.value!r} vs {theirs.value!r}"
    if isinstance(ours, VectorResult):
        assert isinstance(theirs, VectorResult)
        mine = {s.labels: s.value for s in ours.samples}
        real = {s.labels: s.value for s in theirs.samples}
        if len(mine) != len(ours.samples):
            return "engine returned duplicate label sets"
        if mine.keys() != real.keys():
            return (
                f"label sets differ: only engine {sorted(mine.keys() - real.keys())[:3]}, "
                f"only Prometheus {sorted(real.keys() - mine.keys())[:3]}"
            )
        for labels, v in mine.items():
            if not _close(v, real[labels]):
                return f"{dict(labels)}: {v!r} vs {real[labels]!r}"
        if ordered:
            a = [s.value for s in ours.samples]
            b = [s.value for s in theirs.samples]
            if not all(_close(x, y) for x, y in zip(a, b, strict=True)):
                return f"order differs: {a} vs {b}"
        return None
    assert isinstance(ours, MatrixResult)
    assert isinstance(theirs, MatrixResult)
    mine_m = {s.labels: s for s in ours.series}
    real_m = {s.labels: s for s in theirs.series}
    if mine_m.keys() != real_m.keys():
        return (
            f"series differ: only engine {sorted(mine_m.keys() - real_m.keys())[:3]}, "
            f"only Prometheus {sorted(real_m.keys() - mine_m.keys())[:3]}"
        )
    for labels, s in mine_m.items():
        r = real_m[labels]
        if s.timestamps_ms != r.timestamps_ms:
            return f"{dict(labels)}: timestamps {s.timestamps_ms[:5]} vs {r.timestamps_ms[:5]}"
        for t, x, y in zip(s.timestamps_ms, s.values, r.values, strict=True):
            if not _close(x, y):
                return f"{dict(labels)} at {t}: {x!r} vs {y!r}"
    return None


def _nan_last(v: float) -> tuple[bool, float]:
    return (math.isnan(v), 0.0 if math.isnan(v) else v)


def _values_by_step(result: Result) -> dict[int, list[float]] | None:
    if isinstance(result, VectorResult):
        return {0: sorted((s.value for s in result.samples), key=_nan_last)}
    if isinstance(result, MatrixResult):
        steps: dict[int, list[float]] = {}
        for s in result.series:
            for t, v in zip(s.timestamps_ms, s.values, strict=True):
                steps.setdefault(t, []).append(v)
        return {t: sorted(vs, key=_nan_last) for t, vs in steps.items()}
    return None


def _same_values(ours: Result, theirs: Result) -> bool:
    """Whether both answers hold the same values at every step, whatever their labels."""
    a, b = _values_by_step(ours), _values_by_step(theirs)
    if a is None or b is None or a.keys() != b.keys():
        return False
    return all(
        len(a[t]) == len(b[t]) and all(_close(x, y) for x, y in zip(a[t], b[t], strict=True))
        for t in a
    )


def _compare(
    label: str, query: str, ours: Result | Exception, theirs: Result | Exception, ordered: bool
) -> str | None:
    if isinstance(ours, Exception) or isinstance(theirs, Exception):
        if isinstance(ours, Exception) and isinstance(theirs, Exception):
            return None
        return f"{label}: engine {_show(ours)} but Prometheus {_show(theirs)}"
    why = _diff(ours, theirs, ordered=ordered)
    if why is not None and TIES.search(query) and _same_values(ours, theirs):
        # topk/bottomk pick among equal values in the order of their input, which
        # Prometheus leaves to Go's map iteration in range evaluations: any tie may win.
        return None
    return None if why is None else f"{label}: {why}"


def _show(x: Result | Exception) -> str:
    if isinstance(x, Exception):
        return f"failed ({x})"
    return f"answered {str(x.to_api_json()['data'])[:300]}"


def _ask(fn: object, *args: object) -> Result | Exception:
    try:
        return fn(*args)  # type: ignore[operator, no-any-return]
    except (PromQLError, GpuscaleError) as exc:
        return exc


def test_engine_matches_prometheus(
    check: Check, engine: Engine, prometheus: PrometheusClient
) -> None:
    problems = []
    for t in check.times_ms:
        ours = _ask(engine.instant, check.query, t)
        theirs = _ask(lambda q, t: prometheus.query(q, t_ms=t), check.query, t)
        why = _compare(f"instant at {t}", check.query, ours, theirs, check.ordered)
        if why:
            problems.append(why)
    if check.range_ is not None:
        start, end, step = check.range_
        ours = _ask(engine.range, check.query, start, end, step)
        theirs = _ask(prometheus.query_range, check.query, start, end, step)
        why = _compare(f"range {start}..{end} step {step}", check.query, ours, theirs, False)
        if why:
            problems.append(why)
    assert not problems, f"{check.query}\n" + "\n".join(problems)


def test_corpus_covers_the_subset(promql_corpus: Corpus) -> None:
    """Every supported function, aggregation and operator appears in the corpus."""
    from gpuscale.promql import SUPPORTED_AGGREGATIONS, SUPPORTED_FUNCTIONS

    text = "\n".join(c.query for c in promql_corpus.checks)
    missing = [f for f in sorted(SUPPORTED_FUNCTIONS) if f"{f}(" not in text]
    missing += [a for a in sorted(SUPPORTED_AGGREGATIONS) if f"{a}" not in text]
    for op in [
        "+",
        "-",
        "*",
        "/",
        "%",
        "^",
        "atan2",
        "==",
        "!=",
        ">",
        "<",
        ">=",
        "<=",
        "and",
        "or",
        "unless",
    ]:
        if f" {op} " not in text and f" {op}(" not in text:
            missing.append(op)
    for construct in [
        "group_left",
        "group_right",
        "on(",
        "ignoring(",
        " bool ",
        "offset",
        " @ ",
        ":]",
        "without",
        "by (",
    ]:
        if construct not in text:
            missing.append(construct)
    assert len(promql_corpus.checks) >= 2000
    assert not missing, missing


# Queries whose answers Prometheus orders deterministically, so the bodies compare exactly.
EXACT_JSON = [
    TUTORIAL_QUERY,
    "weird",
    "-weird",
    "weird * 1e-7",
    "weird * 1e22",
    "special_labels",
    "sum by (kind) (weird)",
    "my_custom_gauge[5m]",
    "time()",
    '"text"',
]


@pytest.mark.parametrize("query", EXACT_JSON)
def test_api_json_is_identical(
    query: str, engine: Engine, prometheus: PrometheusClient, promql_corpus: Corpus
) -> None:
    """Byte for byte once parsed: value strings, timestamps, label maps and order."""
    t = promql_corpus.t0_ms + 100 * 60_000 + 500
    assert engine.instant(query, t).to_api_json() == prometheus.query_json(query, t_ms=t)
    if query in ("weird", "sum by (kind) (weird)", TUTORIAL_QUERY):
        start, end, step = t, t + 10 * 60_000, 60_000
        ours = engine.range(query, start, end, step).to_api_json()
        assert ours == prometheus.query_range_json(query, start, end, step)
