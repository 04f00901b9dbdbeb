"""Does a ScaledObject hold its replica count under the steady load it is meant for? Pure.

The lint rule ``flaps-under-steady-load`` asks this; the answer comes from a short
simulation of the real models (KEDA's poll, the generated HPA, Prometheus, the
scheduler, the cluster autoscaler) under a constant load that should settle the
replica count:

- a **gauge-driven** trigger (the query reads a metric the workload's own pods export,
  such as the tutorial's ``my_custom_gauge``): the gauge is set on one pod to twice the
  threshold, the tutorial's own test (160 for a threshold of 80), which calls for 2
  replicas;
- a **request-driven** trigger (the query reads the request series gpuscale's workload
  model exports: ``gpuscale_requests_*``): requests arrive at the rate that keeps 2
  replicas 75 % busy, from the profile's capacity.

The replica count *flaps* when, after the load is applied, its direction of change keeps
reversing into the last third of the run. :func:`steady_load_flap` returns a
:class:`FlapVerdict` (flapping or holding, the period, the counts it cycles through, and
for each turn of the cycle the value the HPA read and the count it set: a
:class:`FlapStep`), or None when it cannot decide (a trigger it cannot drive, input the
simulator refuses).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

from gpuscale.controllers.keda import PrometheusTrigger
from gpuscale.errors import GpuscaleError
from gpuscale.manifests import Manifest, ManifestSet, ServiceMonitor
from gpuscale.profile import Profile
from gpuscale.sim.inputs import SimulationInputs, build_inputs, selected_metric_names
from gpuscale.sim.keda import ScaledObjectSource
from gpuscale.sim.scenario import GaugeStep, RateStep, Scenario
from gpuscale.sim.specs import RequestMetricNames
from gpuscale.sim.world import LoadSpec
from gpuscale.units import format_duration

__all__ = ["FlapStep", "FlapVerdict", "steady_load_flap"]

_REQUEST_SERIES = RequestMetricNames()
_REQUEST_PREFIXES = tuple(
    {_REQUEST_SERIES.in_flight, _REQUEST_SERIES.queued, _REQUEST_SERIES.total}
    | {_REQUEST_SERIES.latency + s for s in ("_bucket", "_sum", "_count")}
)
_CLUSTER_PREFIXES = ("kube_", "up", "DCGM_", "gpu_", "node_", "container_", "process_")
_LOAD_AT_S = 60.0
_REPLICAS = 2
_BUSY = 0.75


@dataclass(frozen=True, slots=True)
class FlapStep:
    """One turn of the cycle: what the HPA read at a replica count and the count it set."""

    replicas: int
    """``spec.replicas`` when the HPA read the metric."""
    value: float
    """The trigger's metric as the HPA received it (the query's result)."""
    desired: int
    """The ``spec.replicas`` it set."""


@dataclass(frozen=True, slots=True)
class FlapVerdict:
    """What the steady-load simulation showed."""

    flaps: bool
    """Whether the replica count kept oscillating under the constant load."""
    load: str
    """The load applied, e.g. ``my_custom_gauge=160 on one pod (2 × threshold 80)``."""
    replicas: tuple[int, ...]
    """The ``spec.replicas`` values it cycled through (flapping), or the one it held."""
    period_s: float | None
    """Median time between successive scale-ups while flapping; None when it holds."""
    changes: int
    """Replica count changes after the load was applied."""
    reversals: int
    """Changes opposite in direction to the previous change."""
    simulated_s: float
    """How long the simulation ran."""
    trigger: int = 0
    """Index in ``spec.triggers`` of the trigger the load drives."""
    metric_type: str = "AverageValue"
    """The trigger's ``metricType`` as the generated HPA reads it (AverageValue or Value)."""
    threshold: float = 0.0
    """The trigger's target as the generated HPA reads it."""
    steps: tuple[FlapStep, ...] = ()
    """While flapping, each distinct change of the cycle (its last occurrence), in the
    order the cycle first makes them: ``1 → 2`` at 160, ``2 → 1`` at 80. Empty when it
    holds."""

    def describe(self) -> str:
        """One line: ``flaps 1 ↔ 2 every 6m under ...`` or ``holds 2 under ...``."""
        if self.flaps:
            cycle = " ↔ ".join(str(r) for r in self.replicas)
            period = "" if self.period_s is None else f" every {format_duration(self.period_s)}"
            return (
                f"flaps {cycle}{period} under {self.load} ({self.reversals} reversals in "
                f"{format_duration(self.simulated_s)} simulated)"
            )
        held = "/".join(str(r) for r in self.replicas)
        return f"holds {held} replicas under {self.load}"


def _metric_names(query: str) -> list[str]:
    names = selected_metric_names([query])
    return sorted(names) if names else []


def _namespace(manifests: ManifestSet, scaled_object: Manifest, given: str | None) -> str:
    """Where objects without a namespace go: the given one, the ScaledObject's, or the one
    its ServiceMonitor looks in (so that the metric flows; a mismatch is another rule's)."""
    if given is not None:
        return given
    if scaled_object.namespace:
        return scaled_object.namespace
    for manifest in manifests.by_kind("ServiceMonitor"):
        monitor = ServiceMonitor.from_manifest(manifest)
        if monitor.namespace is None and monitor.namespace_selector.match_names:
            return monitor.namespace_selector.match_names[0]
    return "default"


def _driven(source: ScaledObjectSource) -> int | None:
    """The index of the trigger the load drives: the first ``prometheus`` one."""
    return next((i for i, t in enumerate(source.hpa.triggers) if t is not None), None)


def _steps(
    changes: list[tuple[float, int, int]], values: dict[float, float | None]
) -> tuple[FlapStep, ...]:
    """Each distinct ``before → after`` of ``changes``, at its last occurrence, in the
    order of first occurrence; changes without a value read are left out."""
    last: dict[tuple[int, int], FlapStep] = {}
    for t, before, after in changes:
        value = values.get(t)
        if value is not None:
            last[(before, after)] = FlapStep(before, value, after)
    order = list(dict.fromkeys((before, after) for _, before, after in changes))
    return tuple(last[pair] for pair in order if pair in last)


def _load(
    inputs: SimulationInputs, source: ScaledObjectSource, trigger: PrometheusTrigger
) -> tuple[Scenario, str] | None:
    names = _metric_names(trigger.query)
    workload = inputs.spec.workload(f"{source.namespace}/{source.target}")
    threshold = trigger.threshold
    if any(name in _REQUEST_PREFIXES for name in names):
        capacity = workload.capacity
        if capacity is None or capacity.service_time_s is None:
            return None
        per_replica = capacity.concurrency / capacity.service_time_s
        rate = _REPLICAS * per_replica * _BUSY
        text = (
            f"{rate:g} requests/s ({_REPLICAS} replicas {_BUSY:.0%} busy at "
            f"{per_replica:g} requests/s each)"
        )
        return Scenario((RateStep(0.0, rate, workload.name),)), text
    gauges = [n for n in names if not n.startswith(_CLUSTER_PREFIXES)]
    if len(gauges) != 1:
        return None
    value = _REPLICAS * threshold
    return (
        Scenario((GaugeStep(_LOAD_AT_S, gauges[0], value, 1, workload.name),)),
        f"{gauges[0]}={value:g} on one pod ({_REPLICAS} × threshold {threshold:g})",
    )


def steady_load_flap(
    manifests: ManifestSet,
    profile: Profile | None,
    scaled_object: Manifest,
    *,
    namespace: str | None = None,
    seed: int = 0,
) -> FlapVerdict | None:
    """Simulate ``scaled_object`` (one of ``manifests``) under a constant load it is meant
    for and say whether its replica count flaps (see the module docstring).

    ``profile`` None uses the defaults. ``namespace`` is where objects without one go;
    by default the ScaledObject's, else the one its ServiceMonitor looks in.
    """
    chosen = profile if profile is not None else Profile.default()
    ns = _namespace(manifests, scaled_object, namespace)
    try:
        probe = build_inputs(manifests, chosen, namespace=ns)
    except GpuscaleError:
        return None
    source = next((s for s in probe.scaled_objects if s.name == scaled_object.name), None)
    if source is None:
        return None
    index = _driven(source)
    metric = next(
        (m for m in source.hpa.metrics if m.source == "External" and m.trigger_index == index),
        None,
    )
    if index is None or metric is None:
        return None
    trigger = source.hpa.triggers[index]
    assert trigger is not None
    planned = _load(probe, source, trigger)
    if planned is None:
        return None
    scenario, text = planned
    gauges = {
        s.workload or source.target: (s.name,) for s in scenario.steps if isinstance(s, GaugeStep)
    }
    try:
        inputs = build_inputs(manifests, chosen, namespace=ns, gauges=gauges)
    except GpuscaleError:
        return None
    inputs = replace(
        inputs, scaled_objects=tuple(s for s in inputs.scaled_objects if s.name == source.name)
    )
    window = source.hpa_downscale_stabilization_s
    behavior = source.spec.hpa_behavior or {}
    down = behavior.get("scaleDown") if isinstance(behavior, dict) else None
    if isinstance(down, dict) and isinstance(down.get("stabilizationWindowSeconds"), int):
        window = float(down["stabilizationWindowSeconds"])
    slowest = max((p.provisioning_s for p in inputs.spec.pools), default=0.0)
    until = _LOAD_AT_S + slowest + 6 * (window + 4 * source.hpa_sync_period_s + 60.0)
    try:
        result = inputs.simulation(load=LoadSpec(scenario=scenario), seed=seed).run(until)
    except GpuscaleError:
        return None
    key = f"{source.namespace}/{source.target}"
    points: list[tuple[float, int]] = []
    values: dict[float, float | None] = {}
    for record in result.records:
        for state in record.workloads:
            if state.name == key and record.t >= _LOAD_AT_S:
                points.append((record.t, state.spec))
                values[record.t] = state.metrics.get(f"hpa:{metric.name}")
    if not points:
        return None
    changes: list[tuple[float, int, int]] = []
    for (_, before), (t, after) in itertools.pairwise(points):
        if after != before:
            changes.append((t, before, after))
    reversals = [b[0] for a, b in itertools.pairwise(changes) if (a[2] - a[1]) * (b[2] - b[1]) < 0]
    late = until - (until - _LOAD_AT_S) / 3
    flaps = len(reversals) >= 2 and reversals[-1] >= late
    rises = [t for t, before, after in changes if after > before]
    gaps = sorted(b - a for a, b in itertools.pairwise(rises))
    cycled = sorted({v for _, b, a in changes for v in (b, a)})
    return FlapVerdict(
        flaps=flaps,
        load=text,
        replicas=tuple(cycled) if flaps else (points[-1][1],),
        period_s=gaps[len(gaps) // 2] if flaps and gaps else None,
        changes=len(changes),
        reversals=len(reversals),
        simulated_s=until,
        trigger=index,
        metric_type=metric.target_type,
        threshold=metric.target,
        steps=_steps(changes, values) if flaps else (),
    )
