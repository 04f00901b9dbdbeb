"""The references: the replica schedule input of the simulator, the clairvoyant
schedule, and the lower bound below the clairvoyant's and every feasible trial's cost."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuscale.inputs import read_manifests, read_profile, read_trace
from gpuscale.sim.inputs import build_inputs
from gpuscale.sim.scalers import ReplicaSchedule, ScaleView
from gpuscale.sim.world import LoadSpec
from gpuscale.tune.objective import TuneProblem, evaluate, simulate_with
from gpuscale.tune.references import (
    clairvoyant_schedule,
    lead_time,
    lower_bound,
    replicas_per_node,
)
from gpuscale.tune.slo import parse_slos
from gpuscale.tune.space import apply, derive_space, starting_with, workload_pools
from gpuscale.tune.study import run_study
from tests.unit.tune.fixtures import write_system


def test_the_schedule_writes_the_count_due_and_nothing_when_it_is_there() -> None:
    schedule = ReplicaSchedule([0.0, 60.0], [3, 1])
    view = ScaleView(30.0, "ns", "w", 1, 1, 1, 1, metrics=None)  # type: ignore[arg-type]
    decision = schedule.sync(view)
    assert decision.replicas == 3
    assert decision.decisions[0].detail == "1 -> 3 (the schedule)"
    view = ScaleView(90.0, "ns", "w", 1, 1, 1, 1, metrics=None)  # type: ignore[arg-type]
    assert schedule.sync(view).replicas is None
    with pytest.raises(ValueError, match="increase"):
        ReplicaSchedule([5.0, 5.0], [1, 2])


@pytest.fixture(scope="module")
def problem(tmp_path_factory: pytest.TempPathFactory) -> TuneProblem:
    folder, trace_path = write_system(tmp_path_factory.mktemp("tune") / "system")
    manifests = read_manifests([folder])
    profile = read_profile(folder / "gpuscale.yaml")
    workload = build_inputs(manifests, profile).spec.workload("go-from-configmap")
    space, so = derive_space(manifests, profile, workload)
    trace = read_trace(trace_path)
    until = trace.period
    return TuneProblem(
        manifests=starting_with(manifests, "go-from-configmap", 2),
        profile=profile,
        scaled_object=so,
        space=space,
        workload="go-from-configmap",
        namespace="default",
        load=LoadSpec(traces={"go-from-configmap": trace.tiled(until)}),
        until=until,
        seed=0,
        slos=parse_slos(["late<=1%"]),
        kube_version="1.33",
    )


def test_the_lower_bound_is_below_the_clairvoyant_and_every_feasible_trial(
    problem: TuneProblem,
) -> None:
    inputs = build_inputs(problem.manifests, problem.profile)
    workload = inputs.spec.workload(problem.workload)
    pools = workload_pools(workload, problem.profile)
    assert [p.name for p in pools] == ["gpu"]
    trace = problem.load.traces[problem.workload]
    schedule, needs = clairvoyant_schedule(
        trace=trace,
        workload=workload,
        lead_s=lead_time(workload, pools[0], problem.profile),
        until=problem.until,
        most=8 * replicas_per_node(workload, pools[0]),
    )
    assert max(needs) >= 2
    assert list(schedule.replicas)
    assert schedule.times[0] == 0.0
    bound = lower_bound(
        trace=trace,
        workload=workload,
        pools=pools,
        lowest_nodes=0,
        # the run starts with 2; a configuration with maxReplicaCount 1 starts with 1
        initial_nodes=problem.space.fewest_at_start(2),
        unneeded_time_s=problem.profile.autoscaler.scale_down_unneeded_time,
        until=problem.until,
        slos=problem.slos,
    )
    assert bound.dollars > 0
    warm = problem.space.settings({"gpu_min_nodes": 0})
    manifests, _, profile = apply(
        problem.space, warm, problem.manifests, problem.scaled_object, problem.profile
    )
    clairvoyant = simulate_with(problem, manifests, profile, scalers={workload.key: [schedule]})
    assert clairvoyant.cold_starts >= 0
    assert bound.dollars <= clairvoyant.dollars + 1e-9
    result = run_study(problem, trials=12, front_trials=4, seed=3)
    feasible = [t for t in result.trials if t.feasible]
    assert feasible
    for trial in feasible:
        assert bound.dollars <= trial.outcome["dollars"] + 1e-9
    user = evaluate(problem, problem.space.current)
    assert user.check.met
    assert bound.dollars <= user.dollars


def test_work_bounds_node_time(problem: TuneProblem, tmp_path: Path) -> None:
    del tmp_path
    inputs = build_inputs(problem.manifests, problem.profile)
    workload = inputs.spec.workload(problem.workload)
    pools = workload_pools(workload, problem.profile)
    trace = problem.load.traces[problem.workload]
    none = lower_bound(
        trace=trace,
        workload=workload,
        pools=pools,
        lowest_nodes=0,
        initial_nodes=0,
        unneeded_time_s=0,
        until=problem.until,
        slos=parse_slos(["latency_p99<=1h"]),
    )
    strict = lower_bound(
        trace=trace,
        workload=workload,
        pools=pools,
        lowest_nodes=0,
        initial_nodes=0,
        unneeded_time_s=0,
        until=problem.until,
        slos=parse_slos(["failed==0"]),
    )
    assert none.dollars == 0  # no SLO forces any request to be served
    assert strict.forced_requests > 0
    assert strict.work_node_hours > 0
