"""KEDA and the HPA it generates, as two loops over one ScaledObject's shared state.

The models are ``gpuscale.controllers.keda`` (kedacore/keda 8b4f083, v2.20.1-117) and
``gpuscale.controllers.hpa`` (kubernetes ~v1.36); this module runs them at their
periods in the simulator, as the controllers run them in a cluster:

- **KEDA's polling loop** (``pkg/scaling/scale_handler.go`` ``startScaleLoop`` →
  ``checkScalers`` → ``getScaledObjectState`` → ``executor.RequestScale``): a check at
  once when the loop starts, then every ``pollingInterval`` measured start to start.
  Each check runs every trigger's query through the metrics backend, handles the answer
  as ``ExecutePromQuery`` does (:func:`trigger_value`), hands the value on and decides
  activity (``metrics_and_activity``), passes it through fallback (failures counted in
  the ScaledObject's ``status.health``), aggregates activity and errors, and calls
  ``request_scale`` (0 ↔ 1 activation, cooldown, idle replicas, pause annotations).
  With ``useCachedMetrics`` the check also stores each trigger's record.
- **The HPA KEDA generates** (``controllers/keda/hpa.go``): ``generated_hpa`` gives its
  bounds, behavior and one External metric ``s<i>-prometheus`` per trigger. Every HPA
  sync (15 s) reads each metric as KEDA's metrics server answers it
  (``GetScaledObjectMetrics``): the query again, live, unless the trigger sets
  ``useCachedMetrics`` (then the last poll's record), through fallback again; then
  ``HorizontalPodAutoscaler.reconcile_detailed`` with the scale's spec and status
  replicas and the ready pod count.

Both loops record what they read (``query:<metric>``: the query's raw value at KEDA's
poll; ``hpa:<metric>``: what the HPA received) and every decision that changes
something — a rescale, a change of the HPA's conditions (a stabilization window holding
the count, a limit, a failing metric), KEDA's activation and deactivation, a trigger
starting or stopping to fail — with upstream's reason and the arithmetic.

Not modelled here (``InputError`` at the adapter): ``scalingModifiers``, cpu/memory
triggers and other scaler types.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from gpuscale.controllers.hpa import (
    Behavior,
    Condition,
    HorizontalPodAutoscaler,
    HPAControllerOptions,
    MetricInput,
    MetricTarget,
    ReconcileResult,
)
from gpuscale.controllers.keda import (
    FallbackError,
    GeneratedHPA,
    MetricsRecord,
    PrometheusQueryError,
    PrometheusTrigger,
    ScaledObjectSpec,
    TriggerState,
    fallback_metric,
    hpa_metric_value,
    is_paused,
    metric_quantity,
    metrics_and_activity,
    parse_prometheus_response,
    paused_replica_count,
    request_scale,
    scaled_object_state,
)
from gpuscale.promql import PromQLError, VectorResult
from gpuscale.sim.metrics import MetricsBackend
from gpuscale.sim.scalers import ScaleDecision, Scaler, ScaleView
from gpuscale.sim.timing import whole_seconds
from gpuscale.timeline import Decision

__all__ = ["ScaledObjectLoops", "ScaledObjectSource", "thresholds_of", "trigger_value"]

_EMPTY = "prometheus metrics 'prometheus' target may be lost, the result is empty"


def trigger_value(
    backend: MetricsBackend, trigger: PrometheusTrigger, t_ms: int
) -> tuple[float | None, str | None]:
    """What KEDA's prometheus scaler gets from ``ExecutePromQuery`` at ``t_ms``: the raw value,
    or the error (``(None, message)``).

    The backend's answer is what a Prometheus server sends: a query Prometheus rejects is
    an HTTP error status (400 for a query that does not parse, 422 for one that fails to
    evaluate), anything else a JSON body. A vector answer is read directly — empty,
    several series, or one value (NaN and ±Inf read as 0 with ``ignoreNullValues``) —
    which is what ``parse_prometheus_response`` does with the JSON of such an answer (a
    test checks the two agree); any other answer goes through that function as JSON.
    """
    try:
        result = backend.instant(trigger.query, t_ms)
    except PromQLError as error:
        status = 400 if error.message.startswith("cannot parse") else 422
        body = json.dumps({"status": "error", "errorType": "bad_data", "error": error.message})
        try:
            parse_prometheus_response(body, status, query=trigger.query)
        except PrometheusQueryError as failure:
            return None, str(failure)
        raise AssertionError("an error status must fail") from None  # pragma: no cover
    ignore_null = trigger.ignore_null_values
    if isinstance(result, VectorResult):
        samples = result.samples
        if not samples:
            return (0.0, None) if ignore_null else (None, _EMPTY)
        if len(samples) > 1:
            return None, f"prometheus query {trigger.query} returned multiple elements"
        value = samples[0].value
        if math.isnan(value) or math.isinf(value):
            if ignore_null:
                return 0.0, None
            shown = "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")
            return None, f"prometheus query returns {shown}"
        return value, None
    body = json.dumps(result.to_api_json())
    try:
        return (
            parse_prometheus_response(body, ignore_null_values=ignore_null, query=trigger.query),
            None,
        )
    except PrometheusQueryError as failure:
        return None, str(failure)


@dataclass(frozen=True)
class ScaledObjectSource:
    """Everything the two loops of one ScaledObject are built from (read by the adapter)."""

    name: str
    """The ScaledObject's name."""
    namespace: str
    """Its namespace (also its target's)."""
    target: str
    """The Deployment or StatefulSet it scales (``scaleTargetRef.name``)."""
    spec: ScaledObjectSpec
    """Its typed spec, KEDA's defaults filled in."""
    hpa: GeneratedHPA
    """The HPA KEDA generates for it."""
    annotations: Mapping[str, str] = field(default_factory=dict)
    """``metadata.annotations`` (pause annotations, force-activation)."""
    hpa_options: HPAControllerOptions = field(default_factory=HPAControllerOptions)
    """The HPA controller's flags its generated HPA runs with (the profile's ``hpa``
    section, mapped in :func:`gpuscale.sim.inputs.hpa_options`)."""
    created_at: float = 0.0
    """When the ScaledObject was created (``initialCooldownPeriod`` counts from its
    ``creationTimestamp``, this truncated to whole seconds; KEDA's loops start when its
    first reconcile does, ``gpuscale.sim.scaler_loop``)."""

    def loops(self) -> ScaledObjectLoops:
        """Fresh loops (new state) for one run."""
        return ScaledObjectLoops(self)


def _target_ref(source: ScaledObjectSource) -> str:
    return f"deployment/{source.namespace}/{source.target}"


class ScaledObjectLoops:
    """KEDA's state for one ScaledObject and the HPA it generated; :attr:`poll` and
    :attr:`hpa_sync` are the two :class:`~gpuscale.sim.scalers.Scaler` s."""

    def __init__(self, source: ScaledObjectSource) -> None:
        self.source = source
        self.target = _target_ref(source)
        """The scale target as decisions name it (``deployment/<namespace>/<name>``)."""
        spec = source.spec
        self.triggers: list[tuple[PrometheusTrigger, str, float, bool]] = []
        """(trigger, metric name, HPA target, useCachedMetrics) per prometheus trigger."""
        targets = {m.trigger_index: m for m in source.hpa.metrics if m.source == "External"}
        for index, trigger in enumerate(source.hpa.triggers):
            if trigger is None:
                continue
            metric = targets[index]
            self.triggers.append(
                (trigger, metric.name, metric.target, spec.triggers[index].use_cached_metrics)
            )
        self.target_types = {m.name: m.target_type for m in source.hpa.metrics}
        self._by_name = {
            name: (trigger, threshold, cached) for trigger, name, threshold, cached in self.triggers
        }
        self._hpa_keys = {name: f"hpa:{name}" for _, name, _, _ in self.triggers}
        self._query_keys = {name: f"query:{name}" for _, name, _, _ in self.triggers}
        self.fallback = None if spec.fallback is None else spec.fallback.as_k8s()
        self.health: dict[str, dict[str, object]] = {}
        self.records: dict[str, MetricsRecord] = {}
        self.last_active_time: float | None = None
        self.paused = is_paused(source.annotations)
        self.paused_replicas = paused_replica_count(source.annotations)
        self._poll_state: tuple[object, ...] | None = None
        self._repeatable = self.fallback is None and not any(t[3] for t in self.triggers)
        self._active_poll: tuple[int, list[tuple[float | None, str | None]]] | None = None
        """The last poll's ``spec.replicas`` and trigger reads, when a poll with the same
        ones may skip everything after the queries: the last poll found the object active
        (``request_scale``'s "active" branch) and the ScaledObject has no fallback and no
        ``useCachedMetrics`` trigger (so the poll touches no health and no record).

        Why that is the full poll's answer: with the same reads every trigger gets the
        same activity from ``metrics_and_activity`` (a function of the trigger and the raw
        value; no trigger failed, or the object would be in error), so
        ``scaled_object_state`` is what it was, not in error. ``request_scale`` then takes
        the same branch — not paused (the annotations are fixed), active or forced active
        by the annotation as before, the same
        ``spec.replicas`` (neither 0 nor below an idle minimum, or the last poll would have
        activated), no error — and returns the count unchanged with ``lastActiveTime`` =
        now; the Active/Ready key is the last one, so no decision is recorded. The poll's
        time enters only through that ``lastActiveTime``, which the repeat stores as the
        full poll does."""
        self._hpa_state: tuple[object, ...] | None = None
        self._hpa_conditions: tuple[Condition, ...] | None = None
        self.hpa: HorizontalPodAutoscaler | None = None
        if not self.paused:
            generated = source.hpa
            self.hpa = HorizontalPodAutoscaler(
                min_replicas=generated.min_replicas,
                max_replicas=generated.max_replicas,
                metrics=[
                    MetricTarget(
                        source="External",
                        target_type="Value" if m.target_type == "Value" else "AverageValue",
                        target=m.target,
                        name=m.name,
                    )
                    for m in generated.metrics
                ],
                behavior=None
                if generated.behavior is None
                else Behavior.from_k8s(
                    generated.behavior,
                    key_path=("spec", "advanced", "horizontalPodAutoscalerConfig", "behavior"),
                ),
                tolerance=source.hpa_options.tolerance,
                downscale_stabilization_seconds=source.hpa_options.downscale_stabilization_s,
            )
        self.poll = _Poll(self)
        self.hpa_sync = _HpaSync(self)

    @property
    def scalers(self) -> list[Scaler]:
        """The loops that run: the poll, and the HPA unless the object is paused."""
        return [self.poll] if self.hpa is None else [self.poll, self.hpa_sync]

    # ------------------------------------------------------------------ KEDA's poll

    def check(self, view: ScaleView) -> ScaleDecision:
        """One polling tick: checkScalers → getScaledObjectState → RequestScale."""
        source = self.source
        spec = source.spec
        target = self.target
        decisions: list[Decision] = []
        if self.paused_replicas is not None:
            if view.spec_replicas == self.paused_replicas:
                return ScaleDecision()
            return ScaleDecision(
                replicas=self.paused_replicas,
                decisions=(
                    Decision(
                        "keda",
                        "scale",
                        "ScaledObjectPaused",
                        target,
                        f"autoscaling.keda.sh/paused-replicas: {view.spec_replicas} -> "
                        f"{self.paused_replicas}",
                    ),
                ),
            )
        if self.paused:
            return ScaleDecision()
        now_ms = view.now_ms
        reads = [trigger_value(view.metrics, t[0], now_ms) for t in self.triggers]
        metrics: dict[str, float | None] = {
            self._query_keys[t[1]]: read[0] for t, read in zip(self.triggers, reads, strict=True)
        }
        if self._active_poll is not None and self._active_poll == (view.spec_replicas, reads):
            # a repeat of the last poll (see _active_poll): it only refreshes lastActiveTime
            self.last_active_time = whole_seconds(view.now_s, view.clock_phase_s)
            return ScaleDecision(metrics=metrics)
        states: list[TriggerState] = []
        facts: list[tuple[str, float | None, bool, str | None, float | None]] = []
        for (trigger, name, threshold, cached), (raw, error) in zip(
            self.triggers, reads, strict=True
        ):
            value: float | None = None
            active = False
            if error is None:
                assert raw is not None
                value, active = metrics_and_activity(trigger, raw)
            if self.fallback is None:
                # GetMetricsWithFallback without a fallback: the scaler's result as it is,
                # the health untouched
                facts.append((name, raw, active, error, None))
                if error is not None:
                    states.append(TriggerState(name, error=error))
                    if cached:
                        self.records[name] = MetricsRecord(None, False, error)
                    continue
                states.append(TriggerState(name, active=active, value=value))
                if cached:
                    self.records[name] = MetricsRecord(value, active, None)
                continue
            try:
                handed = fallback_metric(
                    value=value,
                    error=error,
                    metric_name=name,
                    target_type=self.target_types.get(name, "AverageValue"),
                    target=threshold,
                    fallback=self.fallback,
                    health=self.health,
                    current_replicas=view.spec_replicas,
                    ready_replicas=view.ready_replicas,
                )
            except FallbackError as failure:
                self.health = failure.health
                facts.append((name, raw, active, error, None))
                states.append(TriggerState(name, error=str(failure)))
                if cached:
                    self.records[name] = MetricsRecord(None, False, str(failure))
                continue
            self.health = handed.health
            facts.append(
                (name, raw, active, error, handed.value if handed.fallback_active else None)
            )
            states.append(
                TriggerState(
                    name,
                    active=active,
                    fallback_active=handed.fallback_active,
                    value=handed.value,
                )
            )
            if cached:
                self.records[name] = MetricsRecord(
                    handed.value, active or handed.fallback_active, None
                )
        state = scaled_object_state(states)
        never_active = self.last_active_time is None
        request = request_scale(
            current_replicas=view.spec_replicas,
            is_active=state.is_active,
            is_error=state.is_error,
            now=view.now_s,
            min_replica_count=spec.min_replica_count,
            max_replica_count=spec.max_replica_count,
            idle_replica_count=spec.idle_replica_count,
            cooldown_period=spec.cooldown_period,
            initial_cooldown_period=spec.initial_cooldown_period,
            fallback=self.fallback,
            last_active_time=self.last_active_time,
            creation_time=whole_seconds(source.created_at, view.clock_phase_s),
            annotations=source.annotations,
        )
        if request.last_active_time is not None:
            # status.lastActiveTime is a metav1.Time: whole seconds of the wall clock, re-read
            # from the API at the next poll
            self.last_active_time = whole_seconds(request.last_active_time, view.clock_phase_s)
        if request.scaled:
            detail = self._notes(facts)
            if request.action == "activate":
                reason = "KEDAScaleTargetActivated"
                text = (
                    f"Scaled {spec.scale_target_kind} {source.namespace}/{source.target} from "
                    f"{view.spec_replicas} to {request.replicas}, triggered by "
                    f"{';'.join(state.active_triggers) or 'force-activation'}"
                )
            elif request.action == "deactivate":
                reason = "KEDAScaleTargetDeactivated"
                # never active: the gate was initialCooldownPeriod since creation
                gate = (
                    f"initialCooldownPeriod {spec.initial_cooldown_period or 0}s since creation"
                    if never_active
                    else f"cooldownPeriod {spec.cooldown_period}s"
                )
                text = (
                    f"Deactivated {spec.scale_target_kind} {source.namespace}/{source.target} "
                    f"from {view.spec_replicas} to {request.replicas} (no trigger active for "
                    f"{gate})"
                )
            else:
                reason = "ScaledToMinReplicaCount"
                text = f"{view.spec_replicas} -> minReplicaCount {request.replicas}"
            decisions.append(Decision("keda", "scale", reason, target, f"{text}: {detail}"))
        key = (request.active, request.active_reason, request.ready_reason, state.is_error)
        if key != self._poll_state:
            if not request.scaled:
                detail = self._notes(facts)
                action = "active" if request.active else "inactive"
                if state.is_error:
                    action = "error"
                decisions.append(
                    Decision(
                        "keda",
                        action,
                        request.ready_reason
                        if request.ready_reason != "ScaledObjectReady"
                        else request.active_reason,
                        target,
                        detail,
                    )
                )
            self._poll_state = key
        self._active_poll = (
            (view.spec_replicas, reads)
            if self._repeatable and request.action == "active" and not request.scaled
            else None
        )
        return ScaleDecision(
            replicas=request.replicas if request.scaled else None,
            decisions=tuple(decisions),
            metrics=metrics,
        )

    def _notes(self, facts: list[tuple[str, float | None, bool, str | None, float | None]]) -> str:
        """What each trigger read, for a decision's detail."""
        thresholds = {name: trigger.activation_threshold for trigger, name, _, _ in self.triggers}
        notes = []
        for name, raw, active, error, fallback in facts:
            if error is not None:
                notes.append(f"{name} failed: {error}")
            elif raw is not None:
                notes.append(
                    f"{name} {raw:g} {'>' if active else '<='} activation {thresholds[name]:g}"
                )
            if fallback is not None:
                notes.append(f"{name} fallback {fallback:g}")
        return "; ".join(notes)

    # ------------------------------------------------------------------ the HPA

    def read_metrics(self, view: ScaleView) -> tuple[list[MetricInput], dict[str, float | None]]:
        """What KEDA's metrics server answers the HPA for each of its metrics."""
        assert self.hpa is not None
        by_name = self._by_name
        values: list[MetricInput] = []
        seen: dict[str, float | None] = {}
        for metric in self.hpa.metrics:
            trigger, threshold, cached = by_name[metric.name]
            record = self.records.get(metric.name)
            live_value: float | None = None
            live_error: str | None = None
            if not cached or record is None:
                live_value, live_error = trigger_value(view.metrics, trigger, view.now_ms)
                if self.fallback is None:
                    # hpa_metric_value without a fallback: the live value as a milli
                    # quantity, or the metric's error; the health is not touched
                    if live_error is None and live_value is not None:
                        handed = metric_quantity(live_value)
                        values.append([handed])
                        seen[self._hpa_keys[metric.name]] = handed
                    else:
                        values.append(
                            FallbackError(f"metric:{metric.name} encountered error", self.health)
                        )
                        seen[self._hpa_keys[metric.name]] = None
                    continue
            try:
                read = hpa_metric_value(
                    metric_name=metric.name,
                    use_cached_metrics=cached,
                    record=record,
                    live_value=live_value,
                    live_error=live_error,
                    target_type=metric.target_type,
                    target=threshold,
                    fallback=self.fallback,
                    health=self.health,
                    current_replicas=view.spec_replicas,
                    ready_replicas=view.ready_replicas,
                )
            except FallbackError as failure:
                self.health = failure.health
                values.append(failure)
                seen[f"hpa:{metric.name}"] = None
                continue
            self.health = read.health
            values.append([read.value])
            seen[f"hpa:{metric.name}"] = read.value
        return values, seen

    def sync(self, view: ScaleView) -> ScaleDecision:
        """One HPA sync (reconcileAutoscaler) with KEDA's answers."""
        assert self.hpa is not None
        if self.hpa.reads_metrics(view.spec_replicas):
            values, seen = self.read_metrics(view)
        else:
            # the ScalingDisabled branch (target at 0) reads no metric
            values, seen = [None] * len(self.hpa.metrics), {}
        result = self.hpa.reconcile_detailed(
            now=view.now_s,
            spec_replicas=view.spec_replicas,
            status_replicas=view.status_replicas,
            ready_pods=view.ready_replicas,
            metric_values=values,
        )
        changed = False
        if result.conditions is not self._hpa_conditions:
            # a repeated sync hands back the last conditions themselves (no new key)
            self._hpa_conditions = result.conditions
            key = _hpa_key(result)
            changed = key != self._hpa_state
            self._hpa_state = key
        decisions = _hpa_decisions(result, self.target, changed)
        return ScaleDecision(
            replicas=result.replicas if result.rescaled else None,
            desired=result.desired_replicas,
            decisions=decisions,
            metrics=seen,
        )


def _hpa_key(result: ReconcileResult) -> tuple[object, ...]:
    return tuple((c.type, c.status, c.reason) for c in result.conditions)


def _hpa_decisions(result: ReconcileResult, target: str, changed: bool) -> tuple[Decision, ...]:
    if not (result.rescaled or changed):
        return ()
    if result.rescaled:
        return (
            Decision(
                "hpa",
                "scale",
                "SuccessfulRescale",
                target,
                f"New size: {result.replicas}; reason: {result.rescale_reason}; "
                f"{result.describe()}",
            ),
        )
    able = result.condition("AbleToScale")
    active = result.condition("ScalingActive")
    limited = result.condition("ScalingLimited")
    if active is not None and active.status == "False":
        reason, message = active.reason, active.message
    elif limited is not None and limited.status == "True":
        reason, message = limited.reason, limited.message
    elif able is not None:
        reason, message = able.reason, able.message
    else:  # pragma: no cover - every sync sets AbleToScale
        reason, message = "Synced", ""
    detail = result.describe()
    if message:
        detail = f"{detail}; {message}"
    return (Decision("hpa", "hold", reason, target, detail),)


class _Poll:
    """KEDA's polling loop as a :class:`~gpuscale.sim.scalers.Scaler`."""

    name = "keda"
    first_sync_s = 0.0

    def __init__(self, loops: ScaledObjectLoops) -> None:
        self.loops = loops
        self.period_s = float(loops.source.spec.polling_interval)

    def sync(self, view: ScaleView) -> ScaleDecision:
        return self.loops.check(view)


class _HpaSync:
    """The generated HPA's sync loop as a :class:`~gpuscale.sim.scalers.Scaler`."""

    name = "hpa"
    first_sync_s = 0.0

    def __init__(self, loops: ScaledObjectLoops) -> None:
        self.loops = loops
        self.period_s = float(loops.source.hpa_options.sync_period_s)

    def sync(self, view: ScaleView) -> ScaleDecision:
        return self.loops.sync(view)


def thresholds_of(source: ScaledObjectSource) -> Mapping[str, float]:
    """Each metric's HPA target, keyed as the timeline names the values (``query:<metric>``
    and ``hpa:<metric>``), for reports."""
    out: dict[str, float] = {}
    for metric in source.hpa.metrics:
        out[f"query:{metric.name}"] = metric.target
        out[f"hpa:{metric.name}"] = metric.target
    return out
