"""The work estimate that lets simulate refuse runs of hours before starting, and the
query reach the store's retention is sized from (read off the tree, not the text)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuscale.inputs import read_manifests, read_profile
from gpuscale.sim.budget import estimate_work
from gpuscale.sim.inputs import _longest_window_ms, build_inputs
from gpuscale.sim.scenario import parse_scenario
from gpuscale.sim.traces import parse_trace

_EXAMPLE = Path(__file__).parents[3] / "examples" / "tutorial-fixed"


@pytest.fixture(scope="module")
def inputs():  # type: ignore[no-untyped-def]
    return build_inputs(
        read_manifests([_EXAMPLE]), read_profile(_EXAMPLE / "gpuscale.yaml"), namespace="default"
    )


def test_loop_rate_adds_every_loop(inputs) -> None:  # type: ignore[no-untyped-def]
    estimate = estimate_work(inputs, horizon_s=3600.0)
    spec = inputs.spec
    expected = (
        1 / spec.prometheus.scrape_interval_s
        + 1 / spec.control_plane.hpa.sync_period_s
        + 1 / spec.autoscaler.scan_interval_s
        + sum(1 / s.spec.polling_interval for s in inputs.scaled_objects)
    )
    assert estimate.loops_per_s == pytest.approx(expected)
    assert estimate.requests == 0
    assert estimate.total == pytest.approx(3600 * expected)


def test_scenario_requests_integrate_rates_and_ramps(inputs) -> None:  # type: ignore[no-untyped-def]
    scenario = parse_scenario(
        "steps:\n"
        "  - {at: 0s, request_rate: 2}\n"  # 2/s for 100 s = 200
        "  - {at: 100s, ramp: {from: 0, to: 10, over: 100s}}\n"  # 500, then 10/s for 100 s
        "  - {at: 0s, workload: other, request_rate: 1}\n",  # 300 on another workload
        source="s",
    )
    estimate = estimate_work(inputs, horizon_s=300.0, scenario=scenario)
    assert estimate.requests == pytest.approx(200 + 500 + 1000 + 300)


def test_trace_requests_count_the_tiles(inputs) -> None:  # type: ignore[no-untyped-def]
    trace = parse_trace("timestamp\n0\n1\n2\n", source="t")  # period 3 s
    assert estimate_work(inputs, horizon_s=30.0, traces={"w": trace}).requests == 30
    burst = parse_trace("timestamp\n5\n5\n", source="t")  # one instant: sent once
    assert estimate_work(inputs, horizon_s=30.0, traces={"w": burst}).requests == 2
    assert len(burst.tiled(30.0)) == 2


@pytest.mark.parametrize(
    ("query", "ms"),
    [
        ("x", 0),
        ("rate(x[5m])", 300_000),
        ("rate(x[5m] offset 1h)", 3_900_000),
        ("max_over_time(rate(x[1m])[10m:30s])", 60_000 + 600_000 + 30_000),
        ("x offset -2m", 120_000),
        ('label_replace(x, "a", "5d", "b", "(.*)")', 0),  # a duration in a string is not read
        ("not a query (", 0),
    ],
)
def test_longest_window_is_the_reach_along_the_tree(query: str, ms: int) -> None:
    assert _longest_window_ms([query]) == ms
