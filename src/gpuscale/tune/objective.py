"""One trial of ``gpuscale tune``: a configuration's manifests simulated on the trace,
and what the search minimises. Pure.

The objective is the run's dollars over the pools the workload can run on
(:func:`gpuscale.tune.space.workload_pools`: node-seconds from the moment a node is asked
for to the moment it is gone, times the pool's price, as :mod:`gpuscale.sim.ledger`
counts them), subject to every SLO (:mod:`gpuscale.tune.slo`). Pools the workload cannot
use (the general pool of system pods) cost the same under every configuration and are
left out. The second objective of the Pareto front is the *attainment*: the share of
requests answered within the workload's latency target.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuscale.errors import GpuscaleError
from gpuscale.manifests import Manifest, ManifestSet, validate
from gpuscale.profile import Profile
from gpuscale.sim.inputs import SimulationInputs, build_inputs
from gpuscale.sim.recorder import SimulationResult
from gpuscale.sim.requests import DROPPED, SERVED, TIMED_OUT, UNFINISHED
from gpuscale.sim.scalers import Scaler
from gpuscale.sim.world import LoadSpec
from gpuscale.tune.slo import SLO, Measures, SloCheck, check_slos, percentile
from gpuscale.tune.space import Settings, Space, apply, workload_pools

__all__ = [
    "InvalidCandidateError",
    "Outcome",
    "TuneProblem",
    "evaluate",
    "measure",
    "simplify",
    "simulate_with",
]


class InvalidCandidateError(GpuscaleError):
    """A configuration the validator refuses (a bug of the space: it repairs points)."""


@dataclass(frozen=True)
class TuneProblem:
    """Everything a trial needs, picklable so that worker processes can hold it."""

    manifests: ManifestSet
    profile: Profile
    scaled_object: Manifest
    space: Space
    workload: str
    """The tuned Deployment's name."""
    namespace: str
    load: LoadSpec
    until: float
    seed: int
    slos: tuple[SLO, ...]
    kube_version: str


@dataclass(frozen=True)
class Outcome:
    """What one run cost and measured."""

    dollars: float
    gpu_hours: float
    node_hours: float
    check: SloCheck
    attainment: float
    """Share of the counted requests answered within the latency target (1 without one)."""
    requests: int
    late: int
    failed: int
    latency: Mapping[str, float | None]
    """p50, p95, p99 of the served requests' latency (seconds); with the vLLM model also
    ``ttft_p50``... and ``itl_p50``... ."""
    pending_p99_s: float
    replica_changes: int
    flaps: int
    cold_starts: int
    """Pods created during the run (each starts on a node and loads its model)."""
    nodes_added: int
    timeline: tuple[tuple[float, int, int], ...] = ()
    """(t, spec replicas, ready replicas) at each change, for plots."""

    def as_dict(self, slos: Sequence[SLO] = ()) -> dict[str, Any]:
        """JSON-ready numbers."""
        return {
            "dollars": self.dollars,
            "gpu_hours": self.gpu_hours,
            "node_hours": self.node_hours,
            "slo_met": self.check.met,
            "slo_values": {
                k: (v if math.isfinite(v) else None) for k, v in self.check.values.items()
            },
            "slo_summary": self.check.describe(slos) if slos else None,
            "attainment": self.attainment,
            "requests": self.requests,
            "late": self.late,
            "failed": self.failed,
            "latency_s": dict(self.latency),
            "pending_p99_s": self.pending_p99_s,
            "replica_changes": self.replica_changes,
            "flaps": self.flaps,
            "cold_starts": self.cold_starts,
            "nodes_added": self.nodes_added,
        }


def _pending(result: SimulationResult, name: str, until: float) -> list[float]:
    """Each pod's time from its creation (the ReplicaSet's ``Created pod``) to its
    binding (the scheduler's ``Scheduled``), its deletion, or the end of the run."""
    created: dict[str, float] = {}
    out: list[float] = []
    for record in result.records:
        for decision in record.decisions:
            if decision.controller == "replicaset" and decision.detail.startswith("Created pod: "):
                pod = decision.detail.removeprefix("Created pod: ")
                if pod.startswith(name + "-"):
                    created[pod] = record.t
            elif decision.controller == "replicaset" and decision.detail.startswith(
                "Deleted pod: "
            ):
                pod = decision.detail.removeprefix("Deleted pod: ")
                if pod in created:
                    out.append(record.t - created.pop(pod))
            elif decision.controller == "scheduler" and decision.action == "bind":
                pod = decision.target.rsplit("/", 1)[-1]
                if pod in created:
                    out.append(record.t - created.pop(pod))
    out.extend(until - t for t in created.values())
    return out


def _served(column: Any, outcomes: Any) -> list[float]:
    """The served requests' values of a vLLM column (NaN ones left out), or none."""
    if column is None:
        return []
    values = column[outcomes == SERVED]
    return [float(v) for v in values[~np.isnan(values)]]


def _replicas(
    result: SimulationResult, key: str
) -> tuple[tuple[tuple[float, int, int], ...], int, int, int]:
    """The (t, spec, ready) changes, the spec changes, their reversals of direction, and
    the pods created."""
    points: list[tuple[float, int, int]] = []
    changes = flaps = 0
    direction = 0
    last: tuple[int, int] | None = None
    created = 0
    for record in result.records:
        created += sum(
            1 for d in record.decisions if d.controller == "replicaset" and d.action == "create"
        )
        state = next((w for w in record.workloads if w.name == key), None)
        if state is None:
            continue
        now = (state.spec, state.ready)
        if last is not None and now[0] != last[0]:
            changes += 1
            step = 1 if now[0] > last[0] else -1
            if direction and step != direction:
                flaps += 1
            direction = step
        if now != last:
            points.append((record.t, *now))
        last = now
    return tuple(points), changes, flaps, created


def measure(
    result: SimulationResult,
    inputs: SimulationInputs,
    *,
    workload: str,
    pools: Sequence[str],
    slos: Sequence[SLO],
    until: float,
) -> Outcome:
    """The outcome of one finished run of ``workload`` (its Deployment name)."""
    key = inputs.workload_key(workload)
    log = result.requests.get(key)
    target = inputs.latency_targets.get(key)
    if log is not None and len(log):
        counted = log.outcomes != UNFINISHED
        served = log.latencies[log.outcomes == SERVED]
        on_time = int(np.count_nonzero(served <= target)) if target is not None else served.size
        requests = int(np.count_nonzero(counted))
        failed = log.count(TIMED_OUT) + log.count(DROPPED)
        late = requests - on_time if target is not None else failed
        latencies = served.tolist()
        ttft, itl = _served(log.ttft, log.outcomes), _served(log.itl, log.outcomes)
    else:
        requests = late = failed = on_time = 0
        latencies, ttft, itl = [], [], []
    pending = _pending(result, workload, until)
    check = check_slos(slos, Measures(requests, late, failed, latencies, pending, ttft, itl))
    cost = result.cost
    points, changes, flaps, created = _replicas(result, key)
    return Outcome(
        dollars=sum(cost.dollars.get(p, 0.0) for p in pools),
        gpu_hours=sum(cost.gpu_seconds.get(p, 0.0) for p in pools) / 3600,
        node_hours=sum(cost.node_seconds.get(p, 0.0) for p in pools) / 3600,
        check=check,
        attainment=on_time / requests if requests else 1.0,
        requests=requests,
        late=late,
        failed=failed,
        latency={
            **{f"p{q}": (percentile(latencies, q) if latencies else None) for q in (50, 95, 99)},
            **{f"ttft_p{q}": percentile(ttft, q) for q in (50, 95, 99) if ttft},
            **{f"itl_p{q}": percentile(itl, q) for q in (50, 95, 99) if itl},
        },
        pending_p99_s=percentile(pending, 99),
        replica_changes=changes,
        flaps=flaps,
        cold_starts=created,
        nodes_added=sum(cost.nodes_added.get(p, 0) for p in pools),
        timeline=points,
    )


def simulate_with(
    problem: TuneProblem,
    manifests: ManifestSet,
    profile: Profile,
    *,
    load: LoadSpec | None = None,
    until: float | None = None,
    scalers: Mapping[str, Sequence[Scaler]] | None = None,
) -> Outcome:
    """Run ``manifests`` under ``profile`` on the problem's load (or ``load``) and measure it;
    ``scalers`` replaces KEDA and the HPA (the clairvoyant schedule)."""
    inputs = build_inputs(manifests, profile, namespace=problem.namespace)
    horizon = problem.until if until is None else until
    simulation = inputs.simulation(
        load=problem.load if load is None else load, seed=problem.seed, scalers=scalers
    )
    result = simulation.run(horizon, progress_every_s=horizon)
    workload = inputs.spec.workload(problem.workload)
    pools = [p.name for p in workload_pools(workload, profile)]
    return measure(
        result, inputs, workload=problem.workload, pools=pools, slos=problem.slos, until=horizon
    )


def evaluate(
    problem: TuneProblem,
    settings: Settings,
    *,
    load: LoadSpec | None = None,
    until: float | None = None,
) -> Outcome:
    """Simulate the configuration ``settings`` (validated first, as ``simulate`` would)."""
    manifests, edited, profile = apply(
        problem.space, settings, problem.manifests, problem.scaled_object, problem.profile
    )
    errors = [
        p for p in validate([edited], kube_version=problem.kube_version) if p.severity == "error"
    ]
    if errors:
        first = errors[0]
        raise InvalidCandidateError(f"{first.ref}: {first.message}", where=str(first.location))
    return simulate_with(problem, manifests, profile, load=load, until=until)


def simplify(problem: TuneProblem, settings: Settings) -> tuple[Settings, Outcome]:
    """The configuration with the user's value back wherever the search's change does
    not pay: one setting at a time, in the order of the space, a change is undone when
    the SLOs still hold and the run costs no more without it. The result is a smaller
    edit of the user's files, never a dearer or failing one (on the tuning trace)."""
    space = problem.space
    best = evaluate(problem, settings)
    current = space.current.as_dict()
    for name in current:
        if getattr(settings, name) == current[name]:
            continue
        candidate = space.settings({**settings.as_dict(), name: current[name]})
        outcome = evaluate(problem, candidate)
        if outcome.check.met and outcome.dollars <= best.dollars + 1e-9:
            settings, best = candidate, outcome
    return settings, best
