"""The simulated world end to end, with stand-in scalers and the real PromQL backend.

The tutorial cases reproduce the issue's evidence with the tutorial's query and a
stand-in for the HPA's AverageValue computation and 300 s scale-down window; the real
HPA/KEDA models plug into the same seam later.
"""

from __future__ import annotations

import itertools
import math

import pytest

from gpuscale.sim.metrics import PromQLBackend
from gpuscale.sim.requests import SERVED
from gpuscale.sim.scenario import parse_scenario
from gpuscale.sim.simulation import Simulation
from gpuscale.sim.specs import SimPool, SimulationSpec
from gpuscale.sim.world import LoadSpec, SimulationResult
from gpuscale.timeline import Decision, Record, encode_record
from tests.unit.sim.standins import FixedScaler
from tests.unit.sim.worlds import (
    FIXED_QUERY,
    GAUGE_SCENARIO,
    cpu_pool,
    gpu_pool,
    llm_workload,
    nvidia_pool,
    tutorial_spec,
    tutorial_workload,
)

from .worlds import stand_in_hpa


def _decisions(result: SimulationResult, **match: str) -> list[tuple[float, Decision]]:
    return [
        (r.t, d)
        for r in result.records
        for d in r.decisions
        if all(getattr(d, k) == v for k, v in match.items())
    ]


def _spec_changes(result: SimulationResult) -> list[tuple[float, int]]:
    out: list[tuple[float, int]] = []
    for record in result.records:
        spec = record.workloads[0].spec
        if not out or out[-1][1] != spec:
            out.append((record.t, spec))
    return out


def _tutorial(query: str | None = None, until: float = 3600.0, seed: int = 1, **kw):  # type: ignore[no-untyped-def]
    backend = PromQLBackend()
    scaler = stand_in_hpa() if query is None else stand_in_hpa(query)
    sim = Simulation(
        tutorial_spec(**kw),
        metrics=backend,
        seed=seed,
        scalers={"go-from-configmap": [scaler]},
        load=LoadSpec(scenario=parse_scenario(GAUGE_SCENARIO)),
        audit=True,
    )
    return sim, sim.run(until), backend


def test_tutorial_scales_to_two_then_waits_for_a_gpu_node() -> None:
    sim, result, _ = _tutorial()
    assert result.audit == ()
    pod = next(p for p, _, _ in sim.world.pod_states())
    pod_ip_target = next(iter(sim.world.workloads.values())).pods[pod].target
    assert pod_ip_target is not None
    offset = pod_ip_target.offset
    first_scrape = offset + 30 * math.ceil((60 - offset) / 30)
    expected = 15 * math.ceil(first_scrape / 15)
    (scaled_at, scale), *_ = _decisions(result, controller="hpa", reason="AboveTarget")
    assert scaled_at == expected
    assert "160 / target 80 -> 2" in scale.detail

    (failed_at, failed), *_ = _decisions(result, reason="FailedScheduling")
    assert failed_at == scaled_at
    assert failed.detail == (
        "0/2 nodes are available: 1 Insufficient amd.com/gpu, "
        "1 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are "
        "available: 1 No preemption victims found for incoming pod, 1 Preemption is not "
        "helpful for scheduling."
    )
    (up_at, up), *_ = _decisions(result, reason="TriggeredScaleUp")
    assert up_at == failed_at + 30.0  # unschedulablePodWithGpuTimeBuffer
    assert up.target == "pool/gpu-mi300x"
    (ready_at, _), *_ = _decisions(result, reason="NodeReady")
    assert ready_at == up_at + 120.0
    (bound_at, _), *_ = _decisions(result, reason="Scheduled")
    assert bound_at == ready_at
    first_two_ready = next(r.t for r in result.records if r.workloads[0].ready == 2)
    assert first_two_ready == bound_at + 30.0 + 60.0  # image pull + start-up

    # the query divides by status.replicas, which counts the Pending pod
    record = next(r for r in result.records if r.t >= scaled_at + 30)
    assert record.workloads[0].pods.get("Pending") == 1
    assert record.workloads[0].metrics["query:s0-prometheus"] == 80.0


def test_tutorial_query_flaps_with_the_scale_down_window_period() -> None:
    _, result, _ = _tutorial(until=3 * 3600.0)
    changes = _spec_changes(result)
    specs = [s for _, s in changes]
    assert specs[:6] == [1, 2, 1, 2, 1, 2]
    downs = [t for (t, s), (_, before) in zip(changes[1:], changes, strict=False) if s < before]
    periods = [b - a for a, b in itertools.pairwise(downs)]
    assert len(periods) >= 20
    assert all(300.0 <= p <= 360.0 for p in periods)


def test_fixed_query_holds_two_replicas() -> None:
    _, result, _ = _tutorial(query=FIXED_QUERY, until=2 * 3600.0)
    assert [s for _, s in _spec_changes(result)] == [1, 2]
    assert result.records[-1].workloads[0].ready == 2


def test_gpu_node_is_removed_after_the_unneeded_time_and_the_delay_after_add() -> None:
    spec = SimulationSpec((tutorial_workload(),), (gpu_pool(), cpu_pool()))
    sim = Simulation(
        spec,
        metrics=PromQLBackend(),
        scalers={"go-from-configmap": [FixedScaler([(0.0, 2), (400.0, 1)])]},
        audit=True,
    )
    result = sim.run(3600.0)
    assert result.audit == ()
    (up_at, _), *_ = _decisions(result, reason="TriggeredScaleUp")
    (down_at, down), *_ = _decisions(result, reason="ScaleDownEmpty")
    assert down.target.startswith("node/gpu-mi300x-")
    assert down_at >= up_at + 600.0
    nodes = result.records[-1].nodes["gpu-mi300x"]
    assert nodes == {"ready": 1}
    assert result.cost.nodes_added["gpu-mi300x"] == 1
    assert result.cost.nodes_removed["gpu-mi300x"] == 1


def test_scale_from_zero_and_the_template_without_gpus() -> None:
    spec = SimulationSpec((tutorial_workload(),), (gpu_pool(min_nodes=0), cpu_pool()))
    result = Simulation(spec, metrics=PromQLBackend(), warm_start=False).run(900.0)
    assert result.records[-1].workloads[0].ready == 1
    broken = SimulationSpec(
        (tutorial_workload(),), (gpu_pool(min_nodes=0, template_has_gpus=False), cpu_pool())
    )
    result = Simulation(broken, metrics=PromQLBackend(), warm_start=False).run(900.0)
    assert result.records[-1].workloads[0].ready == 0
    (_, held), *_ = _decisions(result, reason="NotTriggerScaleUp")
    assert (
        held.detail == "pod didn't trigger scale-up: 1 Insufficient amd.com/gpu, "
        "1 node(s) didn't match Pod's node affinity/selector"
    )


def test_max_nodes_is_respected() -> None:
    spec = SimulationSpec(
        (tutorial_workload(replicas=4),), (gpu_pool(min_nodes=0, max_nodes=2), cpu_pool())
    )
    result = Simulation(spec, metrics=PromQLBackend(), warm_start=False).run(1200.0)
    assert max(sum(r.nodes.get("gpu-mi300x", {}).values()) for r in result.records) == 2
    assert result.records[-1].workloads[0].ready == 2
    held = _decisions(result, reason="NotTriggerScaleUp")
    assert any("max node group size reached" in d.detail for _, d in held)


def test_kube_state_metrics_and_gpu_exporter_series() -> None:
    sim, _, backend = _tutorial(until=400.0)
    t_ms = round(sim.now * 1000)
    names = {
        label_value
        for sample in backend.instant('count by (__name__) ({__name__=~".+"})', t_ms).samples
        for label, label_value in sample.labels
        if label == "__name__"
    }
    for name in (
        "kube_deployment_spec_replicas",
        "kube_deployment_status_replicas",
        "kube_deployment_status_replicas_ready",
        "kube_deployment_status_replicas_available",
        "kube_pod_status_phase",
        "kube_node_info",
        "gpu_gfx_activity",
        "my_custom_gauge",
        "up",
    ):
        assert name in names
    pending = backend.query(
        'sum(kube_pod_status_phase{namespace="gpu",phase="Pending"})', round(sim.now * 1000)
    )
    assert pending["status"] == "success"
    gpu = backend.query('count(gpu_gfx_activity{namespace="gpu"})', round(sim.now * 1000))
    assert float(gpu["data"]["result"][0]["value"][1]) >= 1


def test_requests_are_served_and_drive_gpu_utilisation() -> None:
    spec = SimulationSpec((llm_workload(replicas=2),), (gpu_pool(min_nodes=2),))
    scenario = parse_scenario("steps:\n  - at: 0s\n    request_rate: 3\n")
    backend = PromQLBackend()
    sim = Simulation(spec, metrics=backend, load=LoadSpec(scenario=scenario), seed=3)
    result = sim.run(600.0)
    log = result.requests["ai/llm"]
    assert 1500 < len(log) < 2100
    assert log.count(SERVED) >= len(log) - 20
    served = log.latencies[log.outcomes == SERVED]
    assert served.min() == pytest.approx(1.0)
    t_ms = round(sim.now * 1000)
    util = backend.query('avg(gpu_gfx_activity{namespace="ai"})', t_ms)
    assert 0.0 < float(util["data"]["result"][0]["value"][1]) <= 100.0
    answered = backend.query('sum(gpuscale_requests_total{namespace="ai"})', t_ms)
    assert float(answered["data"]["result"][0]["value"][1]) > 1000
    assert result.records[-1].load == {"request_rate:llm": 3.0}


def test_nvidia_nodes_export_dcgm_utilisation() -> None:
    workload = llm_workload(
        requests={"nvidia.com/gpu": 1},
        limits={"nvidia.com/gpu": 1},
        node_selector={"doks.digitalocean.com/gpu-brand": "nvidia"},
        tolerations=(),
    )
    from gpuscale.kube import Toleration

    workload = llm_workload(
        requests={"nvidia.com/gpu": 1},
        limits={"nvidia.com/gpu": 1},
        node_selector={"doks.digitalocean.com/gpu-brand": "nvidia"},
        tolerations=(Toleration("nvidia.com/gpu", "Exists"),),
    )
    spec = SimulationSpec((workload,), (nvidia_pool(),))
    scenario = parse_scenario("steps:\n  - at: 0s\n    request_rate: 2\n")
    backend = PromQLBackend()
    sim = Simulation(spec, metrics=backend, load=LoadSpec(scenario=scenario))
    sim.run(300.0)
    body = backend.query('max(DCGM_FI_DEV_GPU_UTIL{pod=~"llm-.*"})', round(sim.now * 1000))
    assert float(body["data"]["result"][0]["value"][1]) > 0


def test_requests_wait_for_the_first_replica_and_time_out() -> None:
    spec = SimulationSpec(
        (llm_workload(replicas=1),), (gpu_pool(min_nodes=0, provisioning_s=100.0),)
    )
    scenario = parse_scenario("steps:\n  - at: 0s\n    request_rate: 1\n")
    result = Simulation(
        spec, metrics=PromQLBackend(), load=LoadSpec(scenario=scenario), warm_start=False
    ).run(400.0)
    log = result.requests["ai/llm"]
    early = log.outcomes[log.arrivals < 100.0]
    assert (early != SERVED).sum() > 50  # nothing routable before the node (and pod) is up
    late = log.outcomes[log.arrivals > 250.0]
    assert (late == SERVED).all()


def test_same_seed_same_timeline_and_stepping_does_not_matter() -> None:
    def lines(result: SimulationResult) -> list[str]:
        return [encode_record(r) for r in result.records]

    _, a, _ = _tutorial(until=1800.0, seed=7)
    _, b, _ = _tutorial(until=1800.0, seed=7)
    assert lines(a) == lines(b)
    sim = Simulation(
        tutorial_spec(),
        metrics=PromQLBackend(),
        seed=7,
        scalers={"go-from-configmap": [stand_in_hpa()]},
        load=LoadSpec(scenario=parse_scenario(GAUGE_SCENARIO)),
        audit=True,
    )
    t = 0.0
    while t < 1800.0:
        t = min(1800.0, t + 7.3)
        sim.advance_to(t)
    assert lines(sim.result()) == lines(a)


def test_cost_is_the_integral_of_nodes_times_price() -> None:
    _, result, _ = _tutorial(until=5400.0)
    prices = {"gpu-mi300x": 1.99, "general": 0.07}
    records: list[Record] = list(result.records)
    total = 0.0
    for record, nxt in itertools.pairwise(records):
        for pool, states in record.nodes.items():
            total += sum(states.values()) * prices[pool] / 3600.0 * (nxt.t - record.t)
    assert records[-1].cost_usd == pytest.approx(total, rel=1e-12, abs=1e-12)
    assert sum(result.cost.dollars.values()) >= records[-1].cost_usd


def test_a_cpu_node_is_drained_when_its_pod_fits_elsewhere() -> None:
    from gpuscale.sim.specs import SimWorkload

    web = SimWorkload("web", replicas=2, requests={"cpu": 0.5, "memory": 2**30})
    pool = SimPool(
        "cpu",
        allocatable={"cpu": 4, "memory": 8 * 2**30, "pods": 110},
        min_nodes=1,
        max_nodes=3,
        initial_nodes=2,
        price_per_hour=0.1,
    )
    spec = SimulationSpec((web,), (pool,))
    result = Simulation(spec, metrics=PromQLBackend(), seed=2, audit=True).run(1800.0)
    assert result.audit == ()
    removed = _decisions(result, controller="cluster-autoscaler", action="remove-node")
    assert removed
    assert result.records[-1].nodes["cpu"] == {"ready": 1}
    assert result.records[-1].workloads[0].ready == 2


def test_scenario_steps_must_name_a_known_workload() -> None:
    from gpuscale.errors import InputError

    two = SimulationSpec((tutorial_workload(), llm_workload()), (gpu_pool(), cpu_pool()))
    no_name = parse_scenario(GAUGE_SCENARIO, source="s.yaml")
    with pytest.raises(InputError, match=r"s\.yaml:2: the step names no workload"):
        Simulation(two, metrics=PromQLBackend(), load=LoadSpec(scenario=no_name))
    wrong = parse_scenario(GAUGE_SCENARIO.replace("pods: 1}", "pods: 1}\n    workload: nope"))
    with pytest.raises(InputError, match="no workload named 'nope'"):
        Simulation(two, metrics=PromQLBackend(), load=LoadSpec(scenario=wrong))
    rates = parse_scenario("steps:\n  - at: 0s\n    request_rate: 1\n")
    with pytest.raises(InputError, match="gives it no capacity"):
        Simulation(tutorial_spec(), metrics=PromQLBackend(), load=LoadSpec(scenario=rates))


def test_token_rates_alone_are_refused_for_requests_without_tokens() -> None:
    from dataclasses import replace

    from gpuscale.errors import InputError
    from gpuscale.sim.specs import RequestCapacity

    llm = llm_workload()
    tokens = RequestCapacity(concurrency=2, prefill_tokens_per_s=1000.0, decode_tokens_per_s=50.0)
    spec = SimulationSpec((replace(llm, capacity=tokens),), (gpu_pool(), cpu_pool()))
    rates = parse_scenario("steps:\n  - at: 0s\n    request_rate: 1\n")
    with pytest.raises(InputError, match="without token counts"):
        Simulation(spec, metrics=PromQLBackend(), load=LoadSpec(scenario=rates))


def test_a_trace_and_rate_steps_for_one_workload_are_refused() -> None:
    from gpuscale.errors import InputError
    from gpuscale.sim.traces import parse_trace

    spec = SimulationSpec((llm_workload(),), (gpu_pool(), cpu_pool()))
    rates = parse_scenario("steps:\n  - at: 0s\n    request_rate: 1\n", source="s.yaml")
    trace = parse_trace("timestamp\n0\n1\n")
    load = LoadSpec(scenario=rates, traces={llm_workload().name: trace})
    with pytest.raises(InputError, match="both a trace and the scenario") as caught:
        Simulation(spec, metrics=PromQLBackend(), load=load)
    assert caught.value.where == "s.yaml:2"
