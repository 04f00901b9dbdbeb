"""The loops' timing (``gpuscale.sim.timing``, ``docs/timing.md``): the ties a real cluster
never meets, the streams the latencies come from, and the tutorial's headline figures
with the default profile.

- At the ties: a recommendation exactly 300 s old still counts and one 1 ms older does
  not (``stabilizeRecommendation``); a cooldown that ends exactly at a poll's clock has
  not expired and 1 ms later has (``Before``); ``lastActiveTime`` reads back truncated to
  a whole second of the wall clock.
- The tutorial over 10 seeds: the flap period is the window plus two syncs plus the
  drift (325–340 s, not the exact grid's 360 s); with the default seed the first
  scale-down is at 400–412 s (not 420 s); the fixed set still holds 2.
"""

from __future__ import annotations

import itertools
import math
import statistics
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuscale.controllers.hpa import HorizontalPodAutoscaler, MetricTarget, stabilize_recommendation
from gpuscale.controllers.keda import request_scale
from gpuscale.inputs import read_manifests, read_profile
from gpuscale.profile import Profile
from gpuscale.sim.inputs import SimulationInputs, build_inputs, timing_options
from gpuscale.sim.scenario import parse_scenario
from gpuscale.sim.timing import Latencies, LoopClock, clock_phase, stream, uniform, whole_seconds
from gpuscale.sim.world import LoadSpec, SimulationResult

ROOT = Path(__file__).resolve().parents[3]
SCENARIO = ROOT / "examples" / "tutorial-scenario.yaml"
SEEDS = range(10)


# ------------------------------------------------------------------------------ the ties


@pytest.mark.parametrize(
    ("age", "kept"), [(299.999, True), (300.0, True), (300.001, False)], ids=str
)
def test_a_recommendation_aged_300s_counts_and_one_ms_more_does_not(age: float, kept: bool) -> None:
    # stabilizeRecommendation keeps a recommendation while it is not Before(now - window)
    desired, _ = stabilize_recommendation(
        desired=1, recommendations=[(0.0, 2)], now=age, window_seconds=300
    )
    assert desired == (2 if kept else 1)


@pytest.mark.parametrize(("after", "cooled"), [(0.0, False), (0.001, True)], ids=str)
def test_a_cooldown_ending_exactly_at_a_polls_clock_has_not_expired(
    after: float, cooled: bool
) -> None:
    # LastActiveTime.Add(cooldown).Before(now): equal is not before
    request = request_scale(
        current_replicas=1,
        is_active=False,
        is_error=False,
        now=95.0 + 75.0 + after,
        min_replica_count=0,
        cooldown_period=75,
        last_active_time=95.0,
    )
    assert request.scaled is cooled
    assert request.action == ("deactivate" if cooled else "cooldown")


def test_last_active_time_is_truncated_to_a_whole_wall_clock_second() -> None:
    assert whole_seconds(95.137, 0.0) == 95.0
    # the wall clock read 0.4 s past a whole second at t = 0: t = 95.137 is 95.537 on it
    assert whole_seconds(95.137, 0.4) == pytest.approx(94.6)
    assert whole_seconds(95.7, 0.4) == pytest.approx(95.6)
    # never later than the time itself, never a second or more earlier
    for t in (0.0, 0.999, 1.0, 59.5, 1e6 + 0.25):
        for phase in (0.0, 0.3, 0.999):
            stored = whole_seconds(t, phase)
            assert t - 1.0 < stored <= t + 1e-9
            assert (stored + phase) == pytest.approx(round(stored + phase))


def test_the_poll_after_a_multiple_of_the_interval_scales_in_on_a_real_clock() -> None:
    # last active at the poll 95.137 s (stored 95.0 with phase 0), cooldown 75: the poll
    # 75 s later reads 170.137 s, after 95 + 75, so it scales in; on the exact grid the
    # poll at 170.0 meets 95 + 75 = 170 and waits
    stored = whole_seconds(95.137, 0.0)
    assert request_scale(
        current_replicas=1,
        is_active=False,
        is_error=False,
        now=170.137,
        min_replica_count=0,
        cooldown_period=75,
        last_active_time=stored,
    ).scaled
    assert not request_scale(
        current_replicas=1,
        is_active=False,
        is_error=False,
        now=170.0,
        min_replica_count=0,
        cooldown_period=75,
        last_active_time=95.0,
    ).scaled


def test_the_hpa_reads_no_metric_at_zero_replicas() -> None:
    hpa = HorizontalPodAutoscaler(
        min_replicas=1,
        max_replicas=4,
        metrics=[MetricTarget(source="External", target_type="AverageValue", target=1.0)],
    )
    assert not hpa.reads_metrics(0)
    assert hpa.reads_metrics(1)
    assert hpa.reads_metrics(4)
    assert not hpa.reads_metrics(5)
    result = hpa.reconcile_detailed(
        now=0.0, spec_replicas=0, status_replicas=0, ready_pods=0, metric_values=[None]
    )
    assert result.condition("ScalingActive").reason == "ScalingDisabled"  # type: ignore[union-attr]


# ----------------------------------------------------------------------------- the streams


def test_streams_depend_on_their_names_only() -> None:
    a = [stream(7, "hpa", "demo/app").random() for _ in range(3)]
    assert a == [stream(7, "hpa", "demo/app").random() for _ in range(3)]
    assert stream(7, "hpa", "demo/app").random() != stream(7, "keda", "demo/app").random()
    assert stream(7, "hpa", "demo/app").random() != stream(8, "hpa", "demo/app").random()
    # names are joined with a separator no name holds: ("ab", "c") is not ("a", "bc")
    assert uniform(1, "ab", "c") != uniform(1, "a", "bc")
    assert 0.0 <= uniform(1, "x") < 1.0


def test_a_loops_draws_do_not_change_when_other_loops_draw() -> None:
    timing = timing_options(Profile.default().timing)
    alone = LoopClock(timing, 3, "hpa", "demo/app")
    first = [alone.latency(0.025) for _ in range(5)]
    other = LoopClock(timing, 3, "keda", "demo/app")
    again = LoopClock(timing, 3, "hpa", "demo/app")
    mixed = []
    for _ in range(5):
        other.latency(0.01)
        mixed.append(again.latency(0.025))
    assert mixed == first


@given(
    mean=st.floats(min_value=0.0, max_value=600.0),
    spread=st.floats(min_value=0.0, max_value=1.0),
    seed=st.integers(min_value=0, max_value=2**63),
)
def test_every_draw_lies_within_its_spread(mean: float, spread: float, seed: int) -> None:
    timing = Latencies(hpa_reconcile_s=mean, spread=spread)
    clock = LoopClock(timing, seed, "hpa", "k")
    for _ in range(5):
        value = clock.latency(mean)
        assert mean * (1 - spread) - 1e-9 <= value <= mean * (1 + spread) + 1e-9
    once = timing.draw_once(mean, seed, "pod-start", "uid")
    assert mean * (1 - spread) - 1e-9 <= once <= mean * (1 + spread) + 1e-9
    assert 0.0 <= clock.phase(15.0) < 15.0 or timing.exact


def test_exact_timing_has_no_clock_phase_and_no_loop_phase() -> None:
    exact = Latencies()
    assert exact.exact
    assert clock_phase(exact, 5) == 0.0
    assert LoopClock(exact, 5, "cluster-autoscaler", "").phase(10.0) == 0.0
    real = timing_options(Profile.default().timing)
    assert not real.exact
    assert 0.0 <= clock_phase(real, 5) < 1.0


@pytest.mark.parametrize(
    "field", ["hpa_reconcile_s", "keda_start_s", "keda_poll_s", "pod_start_s", "spread"]
)
def test_bad_latencies_are_refused(field: str) -> None:
    with pytest.raises(ValueError, match=f"timing.{field}"):
        Latencies(**{field: -1.0})
    with pytest.raises(ValueError, match=f"timing.{field}"):
        Latencies(**{field: math.nan})


# ---------------------------------------------------------------------- the tutorial, drifting


def _inputs(folder: str) -> SimulationInputs:
    path = ROOT / "examples" / folder
    return build_inputs(
        read_manifests([path]),
        read_profile(path / "gpuscale.yaml"),
        namespace="kube-system" if folder == "tutorial" else "default",
        gauges={"go-from-configmap": ("my_custom_gauge",)},
    )


def _run(inputs: SimulationInputs, seed: int) -> SimulationResult:
    scenario = parse_scenario(SCENARIO.read_text(), source=str(SCENARIO))
    return inputs.simulation(load=LoadSpec(scenario=scenario), seed=seed).run(2400.0)


def _changes(result: SimulationResult) -> list[tuple[float, int, int]]:
    out = []
    last = result.records[0].workloads[0].spec
    for record in result.records:
        spec = record.workloads[0].spec
        if spec != last:
            out.append((record.t, last, spec))
            last = spec
    return out


@pytest.fixture(scope="module")
def tutorial_runs() -> dict[int, SimulationResult]:
    inputs = _inputs("tutorial")
    return {seed: _run(inputs, seed) for seed in SEEDS}


def test_the_flap_period_is_the_window_plus_two_drifting_syncs(
    tutorial_runs: dict[int, SimulationResult],
) -> None:
    for seed, result in tutorial_runs.items():
        ups = [t for t, before, after in _changes(result) if after > before]
        gaps = [b - a for a, b in itertools.pairwise(ups[1:])]
        assert gaps, seed
        # the median, as the report's "flap period" (the summary) gives it
        assert 325.0 <= statistics.median(gaps) <= 340.0, (seed, gaps)
        # every turn: the window, two syncs (one of them after the scrape that shows the
        # new count) and up to two scrape intervals, never the exact grid's 360 s
        assert all(315.0 < g < 360.0 for g in gaps), (seed, gaps)


def test_the_first_scale_down_comes_at_about_405s(
    tutorial_runs: dict[int, SimulationResult],
) -> None:
    first_down = next(t for t, before, after in _changes(tutorial_runs[0]) if after < before)
    assert 400.0 <= first_down <= 412.0
    # over the seeds it moves with the pod's scrape phase (the gauge reaches Prometheus
    # before or after the 75 s sync): one sync earlier or this one, never the grid's 420 s
    for result in tutorial_runs.values():
        down = next(t for t, before, after in _changes(result) if after < before)
        assert 370.0 <= down <= 412.0


def test_on_the_exact_grid_the_tie_keeps_the_old_figures() -> None:
    inputs = _inputs("tutorial")
    exact = replace(inputs, spec=replace(inputs.spec, timing=Latencies()))
    changes = _changes(_run(exact, 0))
    downs = [t for t, before, after in changes if after < before]
    ups = [t for t, before, after in changes if after > before]
    assert downs[0] == 420.0
    assert {b - a for a, b in itertools.pairwise(ups[1:])} == {360.0}


@pytest.mark.parametrize("seed", SEEDS)
def test_the_fixed_set_still_holds_two(seed: int) -> None:
    result = _run(_inputs("tutorial-fixed"), seed)
    changes = _changes(result)
    assert [(before, after) for _, before, after in changes] == [(1, 2)]
    assert result.records[-1].workloads[0].spec == 2
    assert result.records[-1].workloads[0].ready == 2


@given(
    reconcile_ms=st.integers(min_value=0, max_value=10**6),
    pod_start_s=st.integers(min_value=0, max_value=3600),
    spread=st.sampled_from(["0", "0.25", "0.5", "1"]),
)
def test_the_profiles_timing_section_reaches_the_latencies_exactly(
    reconcile_ms: int, pod_start_s: int, spread: str
) -> None:
    from gpuscale.profile import load_profile_text

    text = (
        f"timing:\n  hpa_reconcile: {reconcile_ms}ms\n  pod_start: {pod_start_s}s\n"
        f"  spread: {spread}\n"
    )
    latencies = timing_options(load_profile_text(text, "gpuscale.yaml").timing)
    assert latencies.hpa_reconcile_s == pytest.approx(reconcile_ms / 1000, abs=1e-12)
    assert latencies.pod_start_s == pod_start_s
    assert latencies.spread == float(spread)
    assert latencies.exact is (
        reconcile_ms == 0 and pod_start_s == 0 and Profile.default().timing.keda_start == 0
    )
