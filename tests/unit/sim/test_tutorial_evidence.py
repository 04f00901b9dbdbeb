"""The tutorial, simulated with its own profile: every time asserted here is computed from
the timings the models are given (scrape phases read back from the series store, the
HPA's sync period and window, the autoscaler's GPU delay, the pool's provisioning time,
the image pull), never written in as a number.

What the simulation shows, and these tests hold it to:

1. The gauge is set at 1m; the HPA scales 1 → 2 at its first sync after Prometheus
   scrapes the new value; the new pod is Pending (no GPU node has room).
2. The cluster autoscaler adds a GPU node once the pod has been unschedulable for the GPU
   scale-up delay; the node is Ready the pool's provisioning time later.
3. With the tutorial's 10 m provisioning, the HPA's 300 s window ends first: it scales
   back to 1 and the ReplicaSet deletes the Pending pod before its node is Ready; the
   next scale-up's pod gets the node and is Ready an image pull later (no readiness
   probe: Ready when its container starts). With a 2 m provisioning time the first pod
   gets the node and is Ready.
4. Then 2 → 1 → 2 for as long as the load stays, each turn predicted from the
   kube-state-metrics scrapes, the sync period and the window.
5. The fixed manifests hold 2.

These tests run the exact grid (every latency of the profile's ``timing`` section 0), so
that each time is a multiple of the loops' periods; ``test_timing.py`` holds the same
story to the figures the default, drifting timing gives.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from pathlib import Path

import pytest

from gpuscale.inputs import read_manifests, read_profile
from gpuscale.promql import MatrixResult
from gpuscale.sim.inputs import SimulationInputs, build_inputs
from gpuscale.sim.scenario import GaugeStep, parse_scenario
from gpuscale.sim.simulation import Simulation
from gpuscale.sim.timing import Latencies
from gpuscale.sim.world import LoadSpec, SimulationResult
from gpuscale.timeline import Record

ROOT = Path(__file__).resolve().parents[3]
SCENARIO = ROOT / "examples" / "tutorial-scenario.yaml"
UNTIL = 2400.0


def _inputs(folder: str, namespace: str, provisioning_s: float | None = None) -> SimulationInputs:
    path = ROOT / "examples" / folder
    inputs = build_inputs(
        read_manifests([path]),
        read_profile(path / "gpuscale.yaml"),
        namespace=namespace,
        gauges={"go-from-configmap": ("my_custom_gauge",)},
    )
    inputs = replace(inputs, spec=replace(inputs.spec, timing=Latencies()))
    if provisioning_s is not None:
        pools = tuple(
            replace(p, provisioning_s=provisioning_s) if p.gpus_per_node else p
            for p in inputs.spec.pools
        )
        inputs = replace(inputs, spec=replace(inputs.spec, pools=pools))
    return inputs


def _run(inputs: SimulationInputs) -> tuple[Simulation, SimulationResult]:
    scenario = parse_scenario(SCENARIO.read_text(), source=str(SCENARIO))
    sim = inputs.simulation(load=LoadSpec(scenario=scenario), seed=0)
    return sim, sim.run(UNTIL)


def _sample_times(sim: Simulation, selector: str) -> list[tuple[float, float]]:
    """(time in s, value) of every stored sample of the series ``selector`` picks."""
    result = sim.world.metrics.instant(f"{selector}[{int(UNTIL) + 60}s]", round(UNTIL * 1000))
    assert isinstance(result, MatrixResult)
    return sorted(
        (t / 1000, v)
        for series in result.series
        for t, v in zip(series.timestamps_ms, series.values, strict=True)
    )


def _at(records: tuple[Record, ...], t: float) -> Record:
    return [r for r in records if r.t <= t][-1]


def _decisions(result: SimulationResult, controller: str, action: str | None = None):  # type: ignore[no-untyped-def]
    return [
        (r.t, d)
        for r in result.records
        for d in r.decisions
        if d.controller == controller and (action is None or d.action == action)
    ]


def _changes(result: SimulationResult) -> list[tuple[float, int, int]]:
    out = []
    last = result.records[0].workloads[0].spec
    for record in result.records:
        spec = record.workloads[0].spec
        if spec != last:
            out.append((record.t, last, spec))
            last = spec
    return out


def _sync_after(t: float, period: float) -> float:
    """The first sync at or after ``t`` (syncs run at multiples of the period from 0; a
    scrape at the same instant runs before the sync)."""
    return math.ceil(t / period - 1e-9) * period


@pytest.fixture(scope="module")
def tutorial() -> tuple[SimulationInputs, Simulation, SimulationResult]:
    inputs = _inputs("tutorial", "kube-system")
    sim, result = _run(inputs)
    return inputs, sim, result


def test_one_to_two_at_the_first_hpa_sync_after_the_scrape(tutorial) -> None:  # type: ignore[no-untyped-def]
    inputs, sim, result = tutorial
    scenario = parse_scenario(SCENARIO.read_text(), source=str(SCENARIO))
    (step,) = scenario.steps
    assert isinstance(step, GaugeStep)
    sync = inputs.scaled_objects[0].hpa_options.sync_period_s
    scraped = min(t for t, v in _sample_times(sim, "my_custom_gauge") if v == step.value)
    assert step.at < scraped <= step.at + inputs.spec.workloads[0].scrape_interval_s  # type: ignore[operator]
    first_up = _changes(result)[0]
    assert first_up == (_sync_after(scraped, sync), 1, 2)
    record = _at(result.records, first_up[0])
    assert record.workloads[0].pods.get("Pending") == 1
    (hpa,) = [d for t, d in _decisions(result, "hpa", "scale") if t == first_up[0]]
    assert hpa.detail.startswith("New size: 2; reason: external metric s0-prometheus above")
    assert "160 / target 80 (AverageValue) -> desired 2" in hpa.detail


def test_a_gpu_node_after_the_gpu_scale_up_delay_then_provisioning(tutorial) -> None:  # type: ignore[no-untyped-def]
    inputs, _, result = tutorial
    pending_at = _changes(result)[0][0]
    delay = inputs.spec.autoscaler.unschedulable_pod_with_gpu_time_buffer_s
    gpu = next(p for p in inputs.spec.pools if p.gpus_per_node)
    (up,) = _decisions(result, "cluster-autoscaler", "scale-up")
    assert up[0] == pending_at + delay
    assert up[1].target == f"pool/{gpu.name}"
    assert up[1].detail.startswith("1 -> 2 (max: 8)")
    (ready,) = _decisions(result, "kubelet", "node-ready")
    assert ready[0] == up[0] + gpu.provisioning_s


def test_with_ten_minutes_provisioning_the_window_deletes_the_pending_pod_first(tutorial) -> None:  # type: ignore[no-untyped-def]
    inputs, _, result = tutorial
    window = inputs.scaled_objects[0].hpa_options.downscale_stabilization_s
    (first_pending,) = [
        d.target.rsplit("/", 1)[1]
        for t, d in _decisions(result, "scheduler")
        if d.reason == "FailedScheduling" and t == _changes(result)[0][0]
    ]
    # the HPA last recommended 2 at the sync before it first read 160 / 2 replicas = 80
    read_80 = min(
        r.t for r in result.records if r.workloads[0].metrics.get("hpa:s0-prometheus") == 80.0
    )
    deletions = {
        d.detail.removeprefix("Deleted pod: "): t
        for t, d in _decisions(result, "replicaset", "delete")
    }
    node_ready = _decisions(result, "kubelet", "node-ready")[0][0]
    assert deletions[first_pending] == read_80 + window
    assert deletions[first_pending] < node_ready
    assert first_pending not in {
        d.target.rsplit("/", 1)[1] for _, d in _decisions(result, "scheduler", "bind")
    }
    # the next scale-up's pod takes the node, Ready one image pull later (no probe)
    (bound,) = [(t, d) for t, d in _decisions(result, "scheduler", "bind")][:1]
    assert bound[0] == node_ready
    pull = inputs.spec.workloads[0].image_pull_s
    assert _at(result.records, node_ready + pull).workloads[0].ready == 2
    assert _at(result.records, node_ready + pull - 0.001).workloads[0].ready == 1


def test_with_short_provisioning_the_pending_pod_becomes_ready() -> None:
    inputs = _inputs("tutorial", "kube-system", provisioning_s=120.0)
    _, result = _run(inputs)
    pending_at = _changes(result)[0][0]
    delay = inputs.spec.autoscaler.unschedulable_pod_with_gpu_time_buffer_s
    pull = inputs.spec.workloads[0].image_pull_s
    node_ready = pending_at + delay + 120.0
    assert _decisions(result, "kubelet", "node-ready")[0][0] == node_ready
    first_pod = next(
        d.target for t, d in _decisions(result, "scheduler") if d.reason == "FailedScheduling"
    )
    binds = [(t, d.target) for t, d in _decisions(result, "scheduler", "bind")]
    assert binds[0] == (node_ready, first_pod)
    ready_at = min(r.t for r in result.records if r.workloads[0].ready == 2)
    assert ready_at == node_ready + pull
    assert _changes(result)[1][0] > ready_at  # the pod ran before the first scale-down


@pytest.mark.parametrize("provisioning_s", [None, 120.0])
def test_then_two_one_two_with_the_period_of_the_window(provisioning_s: float | None) -> None:
    inputs = _inputs("tutorial", "kube-system", provisioning_s)
    sim, result = _run(inputs)
    source = inputs.scaled_objects[0]
    window, sync = source.hpa_options.downscale_stabilization_s, source.hpa_options.sync_period_s
    ksm = [
        t
        for t, _ in _sample_times(
            sim, 'kube_deployment_status_replicas{deployment="go-from-configmap"}'
        )
    ]
    changes = _changes(result)
    downs = [t for t, before, after in changes if after < before]
    ups = [t for t, before, after in changes if after > before]
    assert len(downs) >= 4
    for down in downs[:-1]:
        # kube-state-metrics reports 1 replica at its next scrape; the HPA reads 160 at its
        # next sync and scales up; kube-state-metrics reports 2 at the scrape after; the HPA
        # last recommends 2 at the sync before that, and scales down window + sync later
        seen_one = min(s for s in ksm if s > down)
        up = _sync_after(seen_one, sync)
        seen_two = min(s for s in ksm if s > up)
        last_two = _sync_after(seen_two, sync) - sync
        next_down = last_two + window + sync
        assert up in ups
        assert next_down in downs
        assert downs[downs.index(down) + 1] == next_down
    periods = {b - a for a, b in itertools.pairwise(ups[1:])}
    scrape = (
        inputs.spec.prometheus.ksm_scrape_interval_s or inputs.spec.prometheus.scrape_interval_s
    )
    assert all(window + sync < p <= window + sync + 2 * scrape for p in periods)
    # the pod with the gauge is never the one deleted (the ReplicaSet deletes the newest)
    gauge_pod = next(d.detail.split(" on ")[1] for _, d in _decisions(result, "load"))
    deleted = {
        d.detail.removeprefix("Deleted pod: ")
        for _, d in _decisions(result, "replicaset", "delete")
    }
    assert gauge_pod not in deleted


def test_the_fixed_manifests_hold_two() -> None:
    inputs = _inputs("tutorial-fixed", "default")
    sim, result = _run(inputs)
    scraped = min(t for t, v in _sample_times(sim, "my_custom_gauge") if v == 160.0)
    sync = inputs.scaled_objects[0].hpa_options.sync_period_s
    assert _changes(result) == [(_sync_after(scraped, sync), 1, 2)]
    gpu = next(p for p in inputs.spec.pools if p.gpus_per_node)
    node_ready = _decisions(result, "kubelet", "node-ready")[0][0]
    up = _decisions(result, "cluster-autoscaler", "scale-up")[0][0]
    assert node_ready == up + gpu.provisioning_s
    assert result.records[-1].workloads[0].spec == 2
    assert result.records[-1].workloads[0].ready == 2
