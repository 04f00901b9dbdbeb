"""Properties of any simulated world (hypothesis): pods only on nodes they fit, no node
removed while a pod on it cannot move, cost equal to the integral of nodes times price,
the same seed giving the same timeline, and replicas within the scaler's bounds."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuscale.controllers.cluster_autoscaler import AutoscalingOptions
from gpuscale.kube import Taint, Toleration
from gpuscale.sim.metrics import PromQLBackend
from gpuscale.sim.scenario import GaugeStep, Scenario
from gpuscale.sim.simulation import Simulation
from gpuscale.sim.specs import SimPool, SimulationSpec, SimWorkload
from gpuscale.sim.world import LoadSpec, SimulationResult
from gpuscale.timeline import encode_record
from tests.unit.sim.standins import ThresholdScaler

GPU = {"gpu": "yes"}


@st.composite
def worlds(draw):  # type: ignore[no-untyped-def]
    cpu_min, gpu_min = draw(st.integers(0, 1)), draw(st.integers(0, 1))
    cpu_max, gpu_max = draw(st.integers(max(cpu_min, 1), 4)), draw(st.integers(max(gpu_min, 1), 3))
    pools = [
        SimPool(
            "cpu",
            allocatable={
                "cpu": draw(st.sampled_from([2, 4, 8])),
                "memory": 16 * 2**30,
                "pods": 110,
            },
            min_nodes=cpu_min,
            max_nodes=cpu_max,
            initial_nodes=draw(st.integers(cpu_min, cpu_max)),
            price_per_hour=0.1,
            provisioning_s=draw(st.sampled_from([20.0, 60.0, 200.0])),
        ),
        SimPool(
            "gpu",
            allocatable={
                "cpu": 16,
                "memory": 64 * 2**30,
                "pods": 110,
                "amd.com/gpu": draw(st.integers(1, 2)),
            },
            labels=GPU,
            taints=(Taint("amd.com/gpu"),),
            min_nodes=gpu_min,
            max_nodes=gpu_max,
            initial_nodes=draw(st.integers(gpu_min, gpu_max)),
            price_per_hour=2.0,
            provisioning_s=draw(st.sampled_from([30.0, 120.0, 400.0])),
        ),
    ]
    workloads = []
    bounds = {}
    for index in range(draw(st.integers(1, 2))):
        gpu = draw(st.booleans())
        name = f"w{index}"
        workloads.append(
            SimWorkload(
                name,
                replicas=draw(st.integers(0, 3)),
                requests={"cpu": draw(st.sampled_from([0.5, 1.5, 3.0]))}
                | ({"amd.com/gpu": 1} if gpu else {}),
                node_selector=GPU if gpu else {},
                tolerations=(Toleration("amd.com/gpu", "Exists"),) if gpu else (),
                startup_s=draw(st.sampled_from([0.0, 30.0])),
                gauges=("load",),
                local_storage=draw(st.booleans()),
            )
        )
        low = draw(st.integers(0, 2))
        bounds[name] = (low, draw(st.integers(low, 5)))
    steps = tuple(
        GaugeStep(
            draw(st.floats(0, 1500)), "load", draw(st.sampled_from([0.0, 150.0, 420.0])), 1, w.name
        )
        for w in workloads
        for _ in range(draw(st.integers(0, 3)))
    )
    timings = AutoscalingOptions(
        scale_down_unneeded_time_s=draw(st.sampled_from([60.0, 600.0])),
        scale_down_delay_after_add_s=draw(st.sampled_from([0.0, 600.0])),
        expander=draw(st.sampled_from(["random", "least-waste", "most-pods"])),
    )
    spec = SimulationSpec(tuple(workloads), tuple(pools), autoscaler=timings)
    return spec, bounds, Scenario(tuple(sorted(steps, key=lambda s: s.at)))


def _run(spec: SimulationSpec, bounds, scenario: Scenario, seed: int) -> SimulationResult:  # type: ignore[no-untyped-def]
    scalers = {
        name: [ThresholdScaler(f'sum(load{{pod=~"{name}-.*"}})', 100.0, lo, hi, period_s=15.0)]
        for name, (lo, hi) in bounds.items()
    }
    sim = Simulation(
        spec,
        metrics=PromQLBackend(),
        seed=seed,
        scalers=scalers,
        load=LoadSpec(scenario=scenario),
        warm_start=random.Random(seed).random() < 0.5,
        audit=True,
    )
    return sim.run(2400.0)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds(), st.integers(0, 2**32))
def test_invariants_hold_in_any_world(world, seed: int) -> None:  # type: ignore[no-untyped-def]
    spec, bounds, scenario = world
    result = _run(spec, bounds, scenario, seed)
    assert result.audit == ()
    prices = {p.name: p.price_per_hour for p in spec.pools}
    integral = 0.0
    for record, nxt in zip(result.records, result.records[1:], strict=False):
        for pool, states in record.nodes.items():
            integral += sum(states.values()) * prices[pool] / 3600.0 * (nxt.t - record.t)
    assert abs(result.records[-1].cost_usd - integral) < 1e-9
    for record in result.records:
        for pool in spec.pools:
            assert sum(record.nodes.get(pool.name, {}).values()) <= pool.max_nodes
        if record.t < 0.5:
            continue
        for state in record.workloads:
            lo, hi = bounds[state.name.split("/")[1]]
            assert lo <= state.spec <= hi


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds(), st.integers(0, 2**32))
def test_the_same_seed_gives_the_same_timeline(world, seed: int) -> None:  # type: ignore[no-untyped-def]
    spec, bounds, scenario = world
    first = [encode_record(r) for r in _run(spec, bounds, scenario, seed).records]
    second = [encode_record(r) for r in _run(spec, bounds, scenario, seed).records]
    assert first == second
