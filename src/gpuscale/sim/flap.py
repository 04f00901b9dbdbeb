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
reversing into the last third of the run. A run whose timeline has been quiet for longer
than every loop's memory (:func:`_settled_after_s`) stops there: the rest would record
nothing, so the verdict is the one the whole run gives. :func:`steady_load_flap` returns a
:class:`FlapVerdict` (flapping or holding, the period, the counts it cycles through, and
for each turn of the cycle the value the HPA read and the count it set: a
:class:`FlapStep`), or None when it cannot decide (a trigger it cannot drive, input the
simulator refuses).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, fields, replace
from datetime import timedelta

import promql_parser as pp

from gpuscale.controllers.keda import PrometheusTrigger
from gpuscale.errors import GpuscaleError
from gpuscale.kube import format_duration
from gpuscale.manifests import Manifest, ManifestSet, ServiceMonitor
from gpuscale.profile import Profile
from gpuscale.promql import fold, parse_query
from gpuscale.sim.inputs import SimulationInputs, build_inputs, selected_metric_names
from gpuscale.sim.keda import ScaledObjectSource
from gpuscale.sim.scenario import GaugeStep, RateStep, Scenario
from gpuscale.sim.simulation import Simulation
from gpuscale.sim.specs import RequestCapacity, RequestMetricNames
from gpuscale.sim.world import LoadSpec, SimulationResult

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
_DEFAULT_POLICY_PERIOD_S = 15.0
_LONGEST_PERIOD_S = 3600.0
_STEP_S = 60.0


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
    """The span of virtual time the verdict covers. A flapping run always runs all of it; a
    holding one may stop earlier, once the rest is proven to record nothing."""
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
        if not isinstance(capacity, RequestCapacity) or capacity.service_time_s is None:
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


def _simulated(
    inputs: SimulationInputs, source: ScaledObjectSource, scenario: Scenario
) -> SimulationInputs:
    """``inputs`` reduced to ``source`` alone, with the gauges the scenario sets exported by
    the pods of every workload of that name from the start: what ``build_inputs`` with
    ``gauges=`` would read (it only sets ``SimWorkload.gauges``), without reading the
    manifests a second time."""
    gauges: dict[str, list[str]] = {}
    for step in scenario.steps:
        if isinstance(step, GaugeStep):
            names = gauges.setdefault(step.workload or source.target, [])
            if step.name not in names:
                names.append(step.name)
    workloads = tuple(
        replace(w, gauges=tuple(gauges[w.name])) if w.name in gauges else w
        for w in inputs.spec.workloads
    )
    return replace(
        inputs,
        spec=replace(inputs.spec, workloads=workloads),
        scaled_objects=tuple(s for s in inputs.scaled_objects if s.name == source.name),
    )


_CLOCK_FUNCTIONS = frozenset(
    {"time", "timestamp", "minute", "hour", "day_of_month", "day_of_week", "day_of_year"}
    | {"days_in_month", "month", "year"}
)


def _seconds(value: object) -> float:
    return value.total_seconds() if isinstance(value, timedelta) else 0.0


def _reach_s(expr: object, lookback_s: float) -> float | None:
    """How far before the evaluation instant the samples ``expr`` reads can lie (offsets,
    ranges, subqueries and the lookback added up along each path), or None when its value
    can move with the clock alone: a clock function, an ``@`` modifier, a negative offset."""

    def reach(node: object, inner: list[float | None]) -> float | None:
        if isinstance(node, pp.Call) and node.func.name in _CLOCK_FUNCTIONS:
            return None
        if any(value is None for value in inner):
            return None
        own = 0.0
        if isinstance(node, pp.VectorSelector | pp.SubqueryExpr):
            if node.at is not None or _seconds(node.offset) < 0:
                return None
            own = _seconds(node.offset)
            own += lookback_s if isinstance(node, pp.VectorSelector) else _seconds(node.step)
        if isinstance(node, pp.MatrixSelector | pp.SubqueryExpr):
            own += _seconds(node.range)
        return own + max((value for value in inner if value is not None), default=0.0)

    return fold(expr, reach)


def _lcm_s(periods: list[float]) -> float | None:
    """The least common multiple of ``periods`` (whole milliseconds), or None."""
    whole = [round(p * 1000) for p in periods]
    if any(w <= 0 or abs(w - p * 1000) > 1e-6 for w, p in zip(whole, periods, strict=True)):
        return None
    return math.lcm(*whole) / 1000


def _settled_after_s(
    inputs: SimulationInputs, source: ScaledObjectSource, query: str, scenario: Scenario
) -> tuple[float, float] | None:
    """``(quiet, not_before)``: once the timeline has recorded nothing for ``quiet`` seconds
    at a time from ``not_before`` on, it records nothing until the end, so the run can stop
    there with the same verdict. None when no such bound is known.

    Why: with the gauge load every input of the loops is constant (the gauge, and series
    that follow pods, nodes and replicas, which the timeline records), and every loop
    is a deterministic function of the cluster and of a memory of bounded length. After a
    quiet stretch longer than every memory, plus one common period of all the loops so
    that each has run on the settled state in every phase, every loop sees what it saw
    on its last quiet run, which changed nothing:

    - the HPA (``horizontal.go``): its recommendations are kept for the stabilization
      windows and its scale events for the policies' ``periodSeconds`` (the profile's
      scale-down window, the ScaledObject's ``advanced.horizontalPodAutoscalerConfig``
      behavior, upstream's 15 s default policies), read at every sync;
    - KEDA (``scale_handler.go``, ``scale_executor.go``): ``cooldownPeriod`` since the
      trigger was last active, ``initialCooldownPeriod`` from the ScaledObject's creation,
      ``fallback.failureThreshold`` polls;
    - the cluster autoscaler (``static_autoscaler.go``): its time thresholds
      (:func:`gpuscale.controllers.cluster_autoscaler.next_change`) lie at most its
      longest option after the last change, found within a scan interval of it;
    - Prometheus: a query's value reads samples no older than :func:`_reach_s`, plus a
      scrape interval;
    - pods and nodes: Pending, Starting, Terminating, provisioning and deleting are all
      recorded, so a quiet timeline has none under way but Pending pods that no node fits.

    A request load (random arrivals) is never constant, and a query that reads the clock
    is not either: both give None.

    The loops drift (``docs/timing.md``): the HPA's syncs are a reconcile later each
    period, so the loops' phases never repeat exactly and the common period is no longer
    one. It is kept as a margin: once every input is constant, a loop decides the same
    at any phase, and the quiet stretch beyond every memory is what the proof needs.
    """
    fallback = source.spec.fallback
    fallback_s = 0.0 if fallback is None else float(fallback.failure_threshold)
    fallback_s *= source.spec.polling_interval
    reach = _reach_s(parse_query(query), inputs.prometheus.lookback_ms / 1000)
    if reach is None or not all(isinstance(s, GaugeStep) for s in scenario.steps):
        return None
    spec, plane = inputs.spec, inputs.spec.control_plane
    behavior = source.spec.hpa_behavior or {}
    hpa = max(
        [
            source.hpa_options.downscale_stabilization_s,
            _DEFAULT_POLICY_PERIOD_S,
            *_behavior_s(behavior),
        ]
    )
    polling = float(source.spec.polling_interval)
    keda = max(float(source.spec.cooldown_period), fallback_s)
    options = spec.autoscaler
    ca_longest = max(
        float(getattr(options, f.name)) for f in fields(options) if f.name.endswith("_s")
    )
    prometheus = spec.prometheus
    scrapes = [prometheus.scrape_interval_s] + [
        s
        for s in (
            prometheus.ksm_scrape_interval_s,
            prometheus.exporter_scrape_interval_s,
            *(w.scrape_interval_s for w in spec.workloads),
        )
        if s is not None
    ]
    period = _lcm_s(
        [plane.hpa.sync_period_s, polling, options.scan_interval_s, *scrapes]
        + ([prometheus.discovery_refresh_s] if prometheus.discovery_refresh_s > 0 else [])
    )
    if period is None or period > _LONGEST_PERIOD_S:
        return None
    memory = max(
        hpa + 2 * plane.hpa.sync_period_s,
        keda + 2 * polling,
        ca_longest + 2 * options.scan_interval_s,
        reach + max(scrapes) + prometheus.discovery_refresh_s,
    )
    not_before = float(source.spec.initial_cooldown_period) + 2 * polling
    return memory + 2 * period, max(not_before, _LOAD_AT_S)


def _behavior_s(behavior: object) -> list[float]:
    """Every ``stabilizationWindowSeconds`` and ``periodSeconds`` in an HPA behavior."""
    if isinstance(behavior, dict):
        found = [
            float(v)
            for k, v in behavior.items()
            if k in ("stabilizationWindowSeconds", "periodSeconds") and isinstance(v, int | float)
        ]
        for value in behavior.values():
            found += _behavior_s(value)
        return found
    if isinstance(behavior, list):
        return [s for item in behavior for s in _behavior_s(item)]
    return []


def _run(
    simulation: Simulation, until: float, settled: tuple[float, float] | None
) -> SimulationResult:
    """Run to ``until``, or stop once the timeline is proven quiet to the end
    (:func:`_settled_after_s`): the records are then those of the whole run."""
    if settled is None:
        return simulation.run(until)
    quiet, not_before = settled
    records = simulation.world.records
    while simulation.now < until:
        simulation.advance_to(min(until, simulation.now + _STEP_S))
        last = records[-1].t if records else 0.0
        if simulation.now >= not_before and simulation.now - max(last, _LOAD_AT_S) > quiet:
            break
    return simulation.result()


def steady_load_flap(
    manifests: ManifestSet,
    profile: Profile | None,
    scaled_object: Manifest,
    *,
    namespace: str | None = None,
    seed: int = 0,
    stop_early: bool = True,
) -> FlapVerdict | None:
    """Simulate ``scaled_object`` (one of ``manifests``) under a constant load it is meant
    for and say whether its replica count flaps (see the module docstring).

    ``profile`` None uses the defaults. ``namespace`` is where objects without one go;
    by default the ScaledObject's, else the one its ServiceMonitor looks in.
    ``stop_early`` False runs every simulation to its end, even once the rest of it is
    proven quiet (see :func:`_settled_after_s`); the verdict is the same either way, and
    tests check that it is.
    """
    chosen = profile if profile is not None else Profile.default()
    ns = _namespace(manifests, scaled_object, namespace)
    try:
        inputs = build_inputs(manifests, chosen, namespace=ns)
    except GpuscaleError:
        return None
    source = next((s for s in inputs.scaled_objects if s.name == scaled_object.name), None)
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
    planned = _load(inputs, source, trigger)
    if planned is None:
        return None
    scenario, text = planned
    inputs = _simulated(inputs, source, scenario)
    window = source.hpa_options.downscale_stabilization_s
    behavior = source.spec.hpa_behavior or {}
    down = behavior.get("scaleDown") if isinstance(behavior, dict) else None
    if isinstance(down, dict) and isinstance(down.get("stabilizationWindowSeconds"), int):
        window = float(down["stabilizationWindowSeconds"])
    slowest = max((p.provisioning_s for p in inputs.spec.pools), default=0.0)
    until = _LOAD_AT_S + slowest + 6 * (window + 4 * source.hpa_options.sync_period_s + 60.0)
    quiet = _settled_after_s(inputs, source, trigger.query, scenario) if stop_early else None
    try:
        simulation = inputs.simulation(load=LoadSpec(scenario=scenario), seed=seed)
        result = _run(simulation, until, quiet)
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
