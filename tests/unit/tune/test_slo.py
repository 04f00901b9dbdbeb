"""The SLO grammar: what parses, what each part means, and one-line refusals."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuscale.errors import InputError
from gpuscale.tune.slo import Measures, check_slos, parse_slo, parse_slos, percentile


@pytest.mark.parametrize(
    ("text", "key", "bound"),
    [
        ("late<=1%", "late_share", 0.01),
        ("late <= 20", "late", 20.0),
        ("failed==0", "failed", 0.0),
        ("failed<0.5%", "failed_share", 0.005),
        ("latency_p99<=20s", "latency_p99", 20.0),
        ("pending_p99<=10m", "pending_p99", 600.0),
        ("latency_p99.9<=1m30s", "latency_p99.9", 90.0),
        ("ttft_p95<=2s", "ttft_p95", 2.0),
        ("itl_p99<=100ms", "itl_p99", 0.1),
    ],
)
def test_the_grammar(text: str, key: str, bound: float) -> None:
    slo = parse_slo(text)
    assert slo.key == key
    assert slo.bound == pytest.approx(bound)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("late>=1%", "MEASURE OP BOUND"),
        ("late<=101%", "0..100%"),
        ("late<=2.5", "whole"),
        ("latency<=2s", "percentile"),
        ("latency_p0<=2s", "above 0"),
        ("latency_p99<=soon", "duration"),
        ("speed_p99<=2s", "unknown measure"),
        ("late_p99<=1%", "no percentile"),
    ],
)
def test_refusals_are_one_line_naming_the_flag(text: str, says: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_slo(text)
    line = caught.value.one_line()
    assert "\n" not in line
    assert line.startswith("--slo: ")
    assert says in line


def test_the_same_measure_twice_and_none_are_refused() -> None:
    with pytest.raises(InputError, match="same measure"):
        parse_slos(["late<=1%", "late<=2%"])
    with pytest.raises(InputError, match="no latency target"):
        parse_slos([])


def test_late_counts_failures_and_shares_exclude_nothing_counted() -> None:
    measures = Measures(requests=200, late=3, failed=1, latency=[1.0, 2.0, 3.0], pending=[])
    check = check_slos(parse_slos(["late<=1%", "failed==0", "latency_p50<=2s"]), measures)
    # the failed request is slower than any bound: latencies 1, 2, 3, inf → p50 2.5
    assert check.values == {"late<=1%": 0.015, "failed==0": 1.0, "latency_p50<=2s": 2.5}
    assert not check.met
    assert check.excess == pytest.approx(1.0)  # failed: 1 over a bound of 0 (scale 1)
    fine = Measures(requests=200, late=3, failed=0, latency=[1.0, 2.0, 3.0], pending=[])
    assert check_slos(parse_slos(["latency_p50<=2s"]), fine).met


def test_failed_requests_count_as_slower_than_any_bound() -> None:
    served = [1.0] * 90
    measures = Measures(requests=100, late=10, failed=10, latency=served, pending=[], ttft=served)
    check = check_slos(parse_slos(["ttft_p95<=2s", "latency_p50<=2s"]), measures)
    assert check.values["ttft_p95<=2s"] == float("inf")
    assert check.values["latency_p50<=2s"] == 1.0
    assert not check.met
    assert "never answered" in check.describe(parse_slos(["ttft_p95<=2s", "latency_p50<=2s"]))


def test_percentile_is_numpys_linear() -> None:
    import numpy as np

    values = [5.0, 1.0, 4.0, 2.0, 9.0]
    for q in (0.1, 50, 95, 99, 100):
        assert percentile(values, q) == pytest.approx(float(np.percentile(values, q)))


@given(st.text(max_size=40))
def test_any_text_parses_or_is_refused_on_one_line(text: str) -> None:
    try:
        slo = parse_slo(text)
    except InputError as error:
        line = error.one_line()
    else:
        assert slo.bound >= 0
        assert parse_slo(slo.text) == slo
        return
    assert "\n" not in line.strip("\n")


@given(
    st.sampled_from(["<=", "<", "=="]),
    st.integers(min_value=0, max_value=100),
    st.integers(min_value=1, max_value=100),
    st.integers(min_value=0, max_value=10**6),
)
def test_written_slos_read_back_their_numbers(op: str, share: int, q: int, ms: int) -> None:
    late = parse_slo(f"late{op}{share}%")
    assert (late.op, late.bound, late.share) == (op, share / 100, True)
    latency = parse_slo(f"latency_p{q}{op}{ms}ms")
    assert (latency.quantile, latency.bound) == (q, pytest.approx(ms / 1000))
