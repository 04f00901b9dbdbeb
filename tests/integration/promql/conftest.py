"""Options of the differential suite: which corpus it runs.

``--promql-seed N`` picks the random series and queries (default 20240604, so CI runs are
reproducible) and ``--promql-queries N`` the corpus size (default 2400). The environment
variables ``GPUSCALE_PROMQL_SEED`` and ``GPUSCALE_PROMQL_QUERIES`` are aliases; an option on
the command line wins. pytest registers these options only when it loads this file before
parsing the command line, so name this directory on the command line when passing them:

    .venv/bin/pytest tests/integration/promql --promql-seed=$RANDOM -q
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from functools import cache

import pytest

from tests.integration.promql.corpus import Check, SeriesSpec, build_corpus, generate_series

DEFAULT_SEED = 20240604
DEFAULT_QUERIES = 2400
# Far enough in the past that the blocks never meet the (empty) head block, recent enough
# for the default 15-day retention; whole hours so some query times sit on the sample grid.
T0_MS = (int(time.time()) // 3600 - 5) * 3600 * 1000


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("promql", "PromQL differential suite (tests/integration/promql)")
    group.addoption(
        "--promql-seed",
        type=int,
        default=None,
        metavar="N",
        help=f"seed of the random series and queries (default {DEFAULT_SEED}; "
        "alias: GPUSCALE_PROMQL_SEED)",
    )
    group.addoption(
        "--promql-queries",
        type=int,
        default=None,
        metavar="N",
        help=f"number of queries in the corpus (default {DEFAULT_QUERIES}; "
        "alias: GPUSCALE_PROMQL_QUERIES)",
    )


@dataclass(frozen=True)
class Corpus:
    """The series and queries of one run, and what chose them."""

    seed: int
    """Seed of the series and of the queries."""
    t0_ms: int
    """Start of the data (ms)."""
    series: list[SeriesSpec]
    """The random series, written to Prometheus and to the engine's store alike."""
    checks: list[Check]
    """The queries, each with its evaluation times."""


def _setting(config: pytest.Config, option: str, variable: str, default: int) -> int:
    value = config.getoption(option, default=None)
    if value is not None:
        return int(value)
    text = os.environ.get(variable)
    if text is None or text.strip() == "":
        return default
    try:
        return int(text)
    except ValueError:
        raise pytest.UsageError(f"{variable}={text!r} is not an integer") from None


@cache
def _build(seed: int, size: int, t0_ms: int) -> Corpus:
    series = generate_series(seed, t0_ms)
    return Corpus(seed, t0_ms, series, build_corpus(seed, series, t0_ms, size))


def corpus_for(config: pytest.Config) -> Corpus:
    """The corpus the options (or their environment aliases) ask for."""
    seed = _setting(config, "promql_seed", "GPUSCALE_PROMQL_SEED", DEFAULT_SEED)
    size = _setting(config, "promql_queries", "GPUSCALE_PROMQL_QUERIES", DEFAULT_QUERIES)
    if size < 1:
        raise pytest.UsageError(f"--promql-queries must be at least 1, got {size}")
    return _build(seed, size, T0_MS)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """One test per query of the corpus, for tests that take ``check``."""
    if "check" in metafunc.fixturenames:
        checks = corpus_for(metafunc.config).checks
        metafunc.parametrize("check", checks, ids=[f"q{i}" for i in range(len(checks))])


def pytest_report_header(config: pytest.Config) -> str:
    corpus = corpus_for(config)
    return f"promql differential corpus: seed {corpus.seed}, {len(corpus.checks)} queries"


@pytest.fixture(scope="session")
def promql_corpus(pytestconfig: pytest.Config) -> Corpus:
    """The series and queries of this run (``--promql-seed``, ``--promql-queries``)."""
    return corpus_for(pytestconfig)
