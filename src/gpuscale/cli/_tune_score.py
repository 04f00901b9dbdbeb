"""Scoring for ``gpuscale tune`` (``docs/tune.md``): the parts a trace is tuned and
validated on, and each part's table rows (yours, the recommendation, KEDA's defaults,
the clairvoyant schedule) with its lower bound; every run of a part starts with the
replicas the clairvoyant schedule asks for at 0, within the configuration's own
``[minReplicaCount, maxReplicaCount]`` (:func:`gpuscale.tune.space.apply`)."""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from pathlib import Path

from gpuscale.cli._simulate import Prepared, read_trace_as
from gpuscale.errors import InputError
from gpuscale.manifests import ManifestSet
from gpuscale.sim.scalers import ReplicaSchedule
from gpuscale.sim.specs import SimWorkload
from gpuscale.sim.traces import Trace
from gpuscale.sim.world import LoadSpec
from gpuscale.tune.objective import Outcome, TuneProblem, evaluate, simulate_with
from gpuscale.tune.references import (
    LowerBound,
    clairvoyant_schedule,
    lead_time,
    lower_bound,
    replicas_per_node,
)
from gpuscale.tune.slo import SLO
from gpuscale.tune.space import Settings, apply, derive_space, starting_with, workload_pools

__all__ = [
    "KEDA_OPTIONAL",
    "Part",
    "Scored",
    "clairvoyant",
    "keda_default_settings",
    "keda_defaults",
    "on_part",
    "parts",
    "score",
    "start_replicas",
    "warn_unreachable",
]

KEDA_OPTIONAL = (
    ("spec", "minReplicaCount"),
    ("spec", "maxReplicaCount"),
    ("spec", "idleReplicaCount"),
    ("spec", "pollingInterval"),
    ("spec", "cooldownPeriod"),
    ("spec", "advanced"),
)
"""The ScaledObject keys KEDA defaults, removed for the "KEDA defaults" row."""


def _slice(trace: Trace, start: float, end: float) -> Trace:
    """The requests arriving in [start, end), their offsets from ``start``."""
    lo, hi = (int(i) for i in trace.offsets.searchsorted([start, end]))
    return Trace(
        trace.offsets[lo:hi] - start,
        trace.prompt_tokens[lo:hi],
        trace.output_tokens[lo:hi],
        trace.source,
        trace.has_tokens,
        trace.format,
    )


@dataclasses.dataclass(frozen=True)
class Part:
    """A trace to run and how long."""

    name: str
    trace: Trace
    until: float


@dataclasses.dataclass(frozen=True)
class Scored:
    """Every row of the table on one part."""

    part: str
    rows: dict[str, Outcome]
    bound: LowerBound
    needs: tuple[int, ...]
    until: float


def keda_defaults(problem: TuneProblem) -> ManifestSet:
    """The user's ScaledObject with every optional key KEDA defaults removed (its trigger
    and threshold kept): minReplicaCount 0, maxReplicaCount 100, pollingInterval 30,
    cooldownPeriod 300, the HPA's default behavior."""
    body = json.loads(json.dumps(problem.scaled_object.body))
    for path in KEDA_OPTIONAL:
        body.get(path[0], {}).pop(path[1], None)
    edited = dataclasses.replace(problem.scaled_object, body=body)
    return ManifestSet(
        [edited if m.source == problem.scaled_object.source else m for m in problem.manifests]
    )


def keda_default_settings(problem: TuneProblem, workload: SimWorkload) -> Settings | None:
    """KEDA's defaults (:func:`keda_defaults`) as settings of the space, or None where
    the space cannot express them: the user wrote ``spec.advanced``, which they drop and
    a configuration of the space keeps."""
    if "advanced" in problem.scaled_object.spec:
        return None
    space, _ = derive_space(keda_defaults(problem), problem.profile, workload)
    return space.current


def parts(
    ready: Prepared,
    *,
    holdout: float | None,
    validate_trace: Path | None,
    until: str | None,
    trace_format: str,
    speedup: float,
) -> tuple[Part, Part | None]:
    raw = ready.raw
    assert raw is not None
    if holdout is not None:
        cut = raw.period * (1 - holdout)
        first = _slice(raw, 0.0, cut)
        last = _slice(raw, cut, raw.period)
        if len(first) < 2 or len(last) < 2:
            raise InputError(
                "the holdout leaves too few requests on one side",
                where="--holdout",
                fix="use a longer trace or a share nearer 30%",
            )
        return (
            Part("tune (first part)", first, max(cut, 1.0)),
            Part(f"holdout (last {holdout:.0%})", last, max(raw.period - cut, 1.0)),
        )
    train = Part("tune", raw.tiled(ready.horizon), ready.horizon)
    if validate_trace is None:
        return train, None
    other = read_trace_as(validate_trace, trace_format, speedup)
    horizon = ready.horizon if until is not None else max(other.period, 1.0)
    return train, Part(f"validation ({validate_trace.name})", other.tiled(horizon), horizon)


def score(
    problem: TuneProblem,
    workload: SimWorkload,
    part: Part,
    settings: dict[str, Settings],
    pool_low: int,
) -> Scored:
    """The given configurations, KEDA's defaults and the clairvoyant schedule on
    ``part``, with the lower bound; every run starts with the replicas the part's first
    minute needs."""
    pools = workload_pools(workload, problem.profile)
    gpu = next((p for p in pools if p.name == problem.space.gpu_pool), pools[0])
    per_node = replicas_per_node(workload, gpu)
    schedule, needs = clairvoyant(problem, workload, part)
    start = start_replicas(schedule)
    here = on_part(problem, part, start)
    rows: dict[str, Outcome] = {label: evaluate(here, chosen) for label, chosen in settings.items()}
    defaults = keda_defaults(here)
    rows["KEDA defaults"] = simulate_with(here, defaults, here.profile)
    # The schedule replaces KEDA: the pool may grow to the space's ceiling, as it may
    # for any configuration searched.
    warm = dataclasses.replace(
        problem.space.current, gpu_min_nodes=pool_low, max_replicas=problem.space.replica_ceiling
    )
    manifests, _, profile = apply(
        here.space, warm, here.manifests, here.scaled_object, here.profile
    )
    rows["clairvoyant"] = simulate_with(
        here, manifests, profile, scalers={workload.key: [schedule]}
    )
    bound = lower_bound(
        trace=part.trace,
        workload=workload,
        pools=pools,
        lowest_nodes=pool_low,
        initial_nodes=math.ceil(problem.space.fewest_at_start(start) / per_node),
        unneeded_time_s=problem.profile.autoscaler.scale_down_unneeded_time,
        until=part.until,
        slos=problem.slos,
    )
    return Scored(part.name, rows, bound, needs, part.until)


def clairvoyant(
    problem: TuneProblem, workload: SimWorkload, part: Part
) -> tuple[ReplicaSchedule, tuple[int, ...]]:
    pools = workload_pools(workload, problem.profile)
    gpu = next((p for p in pools if p.name == problem.space.gpu_pool), pools[0])
    return clairvoyant_schedule(
        trace=part.trace,
        workload=workload,
        lead_s=lead_time(workload, gpu, problem.profile),
        until=part.until,
        most=max(
            problem.space.replica_ceiling,
            sum(p.highest for p in pools) * replicas_per_node(workload, gpu),
        ),
        slos=problem.slos,
    )


def start_replicas(schedule: ReplicaSchedule) -> int:
    """The replicas every run of a part starts with, Ready: what the clairvoyant schedule
    asks for at 0 (the most any minute within a new replica's lead time needs), so that
    no configuration pays for a cluster that was not serving the trace before it began."""
    return max(1, schedule.replicas[0]) if schedule.replicas else 1


def on_part(problem: TuneProblem, part: Part, start: int) -> TuneProblem:
    """The problem on ``part``'s trace, the workload starting with ``start`` replicas."""
    manifests = starting_with(problem.manifests, problem.workload, start)
    return dataclasses.replace(
        problem,
        manifests=manifests,
        load=LoadSpec(traces={problem.workload: part.trace}),
        until=part.until,
    )


def warn_unreachable(scored: list[Scored], slos: tuple[SLO, ...]) -> None:
    """Say so when requests whose own service time is over the latency target are more
    than a late SLO allows, or when a TTFT / ITL percentile is over its bound with every
    request alone on an idle, warm replica: no configuration can meet it (docs/tune.md)."""
    for part in scored:
        slow = part.bound.unavoidable_late
        for slo in slos:
            floor = part.bound.floors.get(slo.key)
            if floor is not None and not slo.holds(floor):
                sys.stderr.write(
                    f"gpuscale: warning: no configuration can meet {slo.text} on {part.part}: "
                    f"with each request alone on an idle, warm replica its {slo.key} is "
                    f"already {floor:.3f} s\n"
                )
            if slo.measure == "late" and slo.share and not slo.holds(slow):
                sys.stderr.write(
                    f"gpuscale: warning: no configuration can meet {slo.text} on {part.part}: "
                    f"{slow:.2%} of its requests take longer than the latency target on an "
                    "idle replica\n"
                )
