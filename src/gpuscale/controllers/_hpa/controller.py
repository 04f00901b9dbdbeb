"""One HorizontalPodAutoscaler over time: upstream ``horizontal.go: reconcileAutoscaler``.

The object holds what upstream keeps per HPA between syncs (the recommendation history,
the scale-up and scale-down event histories, the status conditions) and
:meth:`HorizontalPodAutoscaler.reconcile` runs one sync on a snapshot of the target's
scale and the metric samples. The caller calls it once per sync period (15 s by
default, ``--horizontal-pod-autoscaler-sync-period``) with its own clock.

Followed from upstream, in order: ``recordInitialRecommendation``; the zero-replica,
above-max and below-min short cuts (``shouldComputeMetricsForZeroReplicas`` with the
HPAScaleToZero gate); ``computeReplicasForMetrics`` (max over metrics; a failing metric
blocks a scale-down only; all failing means no change); ``normalizeDesiredReplicas`` or
``normalizeDesiredReplicasWithBehaviors`` with ``maybeInitScaleDownStabilizationWindow``;
``tolerancesForHpa`` (HPAConfigurableTolerance); ``storeScaleEvent`` after a rescale; the
AbleToScale / ScalingActive / ScalingLimited / ScaledToZero conditions with upstream's
reasons (``setCondition``, ``removeCondition``).

Not modelled: fetching the scale and metrics (the caller passes them), selector
validation (InvalidSelector, AmbiguousSelector), failed scale updates and retries,
events, and the exact wording of messages that embed Go-formatted objects (metric
labels here omit the selector).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from gpuscale.controllers._hpa.behavior import (
    MESSAGES,
    RecommendationLike,
    ScaleEventLike,
    normalize_behavior_rate,
    normalize_rules,
    recommendations_of,
    scale_events_of,
    stabilize_recommendation_into,
    stabilize_with_behaviors_into,
    store_scale_event,
)
from gpuscale.controllers._hpa.replica_calculator import (
    Calculation,
    ReplicaCalculationError,
    calculate_external,
    calculate_external_per_pod,
    calculate_object,
    calculate_object_per_pod,
    calculate_pods,
)
from gpuscale.controllers._hpa.spec import (
    DEFAULT_DOWNSCALE_STABILIZATION_SECONDS,
    DEFAULT_TOLERANCES,
    Behavior,
    MetricTarget,
    Recommendation,
    ScaleEvent,
    ScalingRules,
    Tolerance,
    generate_scale_down_rules,
    generate_scale_up_rules,
)
from gpuscale.errors import InputError
from gpuscale.kube import QuantityLike, milli_value

__all__ = [
    "Condition",
    "ConditionType",
    "HorizontalPodAutoscaler",
    "MetricInput",
    "MetricProposal",
    "ReconcileResult",
]

ConditionType = Literal["AbleToScale", "ScalingActive", "ScalingLimited", "ScaledToZero"]
MetricInput = Sequence[QuantityLike] | BaseException | None
"""What one metric returned this sync: its samples, or ``None`` / an exception on failure."""

_Normalized = tuple[int, str, int, str]
"""What normalization decided: (stabilized, its AbleToScale reason, final, ScalingLimited
reason)."""

_FAILED_REASON = {
    "External": "FailedGetExternalMetric",
    "Object": "FailedGetObjectMetric",
    "Pods": "FailedGetPodsMetric",
}


@dataclass(frozen=True, slots=True)
class Condition:
    """One entry of ``status.conditions`` (message included, transition time not modelled)."""

    type: ConditionType
    status: Literal["True", "False"]
    reason: str
    message: str = ""


@dataclass(frozen=True, slots=True)
class MetricProposal:
    """What one metric proposed this sync (upstream ``computeReplicasForMetric``)."""

    metric: MetricTarget
    """The metric spec."""
    replicas: int | None
    """The replica proposal, or None when the metric failed."""
    usage_milli: int | None
    """The usage upstream writes to status, in milli-units (Value: total; AverageValue: per pod)."""
    ratio: float | None
    """The usage ratio the tolerance was judged on."""
    error: str | None = None
    """Why the metric failed, when it did."""

    @property
    def usage(self) -> float | None:
        """``usage_milli`` in plain units."""
        return None if self.usage_milli is None else self.usage_milli / 1000

    def describe(self) -> str:
        """One line for logs: ``external metric qps 160 / target 80 (Value) -> desired 2``."""
        target = self.metric.target_milli / 1000
        if self.usage_milli is None or self.replicas is None:
            return f"{self.metric.label}: failed ({self.error})"
        return (
            f"{self.metric.label} {self.usage_milli / 1000:g} / target {target:g} "
            f"({self.metric.target_type}) -> desired {self.replicas}"
        )


@dataclass(frozen=True, slots=True)
class ReconcileResult:
    """Everything one sync decided, for logs and timelines."""

    now: float
    """When the sync ran."""
    current_replicas: int
    """The scale's spec replicas the sync started from."""
    replicas: int
    """The scale's spec replicas after the sync (what ``reconcile`` returns)."""
    desired_replicas: int
    """``status.desiredReplicas`` after the sync (unchanged from before when metrics failed)."""
    rescaled: bool
    """Whether the scale subresource was written."""
    metric_replicas: int | None
    """The max over metric proposals, or None when metrics were not computed or all failed."""
    stabilized_replicas: int | None
    """The count after stabilization and before rate limits, when normalization ran."""
    proposals: tuple[MetricProposal, ...]
    """One entry per metric, in spec order (empty when metrics were not computed)."""
    conditions: tuple[Condition, ...]
    """``status.conditions`` after the sync, in upstream's order."""
    rescale_reason: str
    """Upstream's rescale reason, e.g. ``external metric qps above target``."""
    error: str | None
    """The error upstream's reconcile returns, if any (the HPA may still have scaled)."""

    def condition(self, condition_type: ConditionType) -> Condition | None:
        """The condition of that type, if set."""
        for condition in self.conditions:
            if condition.type == condition_type:
                return condition
        return None

    def describe(self) -> str:
        """One line: the proposals and the outcome, with the limiting reason."""
        parts = [proposal.describe() for proposal in self.proposals]
        limited = self.condition("ScalingLimited")
        outcome = f"{self.current_replicas} -> {self.replicas}"
        if limited is not None and limited.status == "True":
            outcome += f" ({limited.reason})"
        return "; ".join([*parts, outcome])


def _set_condition(
    conditions: list[Condition],
    condition_type: ConditionType,
    status: bool,
    reason: str,
    message: str,
) -> None:
    """setConditionInList: replace the condition of this type in place, or append it (an
    equal one is left in place: conditions are values)."""
    text: Literal["True", "False"] = "True" if status else "False"
    for index, condition in enumerate(conditions):
        if condition.type == condition_type:
            if (
                condition.status != text
                or condition.reason != reason
                or condition.message != message
            ):
                conditions[index] = Condition(condition_type, text, reason, message)
            return
    conditions.append(Condition(condition_type, text, reason, message))


def _remove_condition(conditions: list[Condition], condition_type: ConditionType) -> None:
    conditions[:] = [c for c in conditions if c.type != condition_type]


def _count(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(
            f"expected a non-negative integer, got {value!r}",
            where=name,
            fix=f"pass {name} as an int >= 0",
        )
    return value


class HorizontalPodAutoscaler:
    """A stateful model of one autoscaling/v2 HPA, reconciled once per sync period.

    ``recommendations=None`` means a new object (or a restarted controller): the first
    sync records the current count as a recommendation, as upstream's
    ``recordInitialRecommendation`` does, which holds back a scale-down for the
    downscale window. A list, even empty, restores that history instead.
    """

    def __init__(
        self,
        *,
        min_replicas: int | None,
        max_replicas: int,
        metrics: Sequence[MetricTarget],
        behavior: Behavior | None = None,
        tolerance: Tolerance = DEFAULT_TOLERANCES,
        downscale_stabilization_seconds: float = DEFAULT_DOWNSCALE_STABILIZATION_SECONDS,
        recommendations: Iterable[RecommendationLike] | None = None,
        scale_up_events: Iterable[ScaleEventLike] = (),
        scale_down_events: Iterable[ScaleEventLike] = (),
        conditions: Iterable[Condition] = (),
        configurable_tolerance: bool = True,
        scale_to_zero: bool | None = None,
        scale_up_limit_factor: float = 2.0,
        scale_up_limit_minimum: float = 4.0,
    ) -> None:
        """Build the HPA; keyword names follow ``spec`` and the controller's flags and gates.

        ``min_replicas=None`` defaults to 1 as the API server does. ``tolerance`` is the
        controller flag (both directions); with ``behavior`` set and the
        HPAConfigurableTolerance gate on (``configurable_tolerance``, on by default since
        v1.35) a rule's ``tolerance`` overrides it per direction. ``scale_to_zero`` is the
        alpha HPAScaleToZero gate; ``None`` turns it on exactly when ``min_replicas`` is 0,
        because the API server admits ``minReplicas: 0`` only with the gate on
        (``validation.go``, ``MinReplicasLowerBound``). ``scale_up_limit_factor``/``minimum``
        are upstream's package variables for the path without behavior.
        """
        self.min_replicas = 1 if min_replicas is None else _count("min_replicas", min_replicas)
        self.max_replicas = _count("max_replicas", max_replicas)
        if self.max_replicas < 1 or self.min_replicas > self.max_replicas:
            raise InputError(
                f"need 1 <= max_replicas and min_replicas <= max_replicas, got "
                f"min {self.min_replicas}, max {self.max_replicas}",
                where="spec.maxReplicas",
                fix="set maxReplicas >= max(1, minReplicas)",
            )
        self.metrics = tuple(metrics)
        if not self.metrics or not all(isinstance(m, MetricTarget) for m in self.metrics):
            raise InputError(
                "expected at least one MetricTarget",
                where="spec.metrics",
                fix="give External, Object or Pods metrics",
            )
        if not (
            math.isfinite(downscale_stabilization_seconds) and downscale_stabilization_seconds >= 0
        ):
            raise InputError(
                f"expected seconds >= 0, got {downscale_stabilization_seconds!r}",
                where="downscale_stabilization_seconds",
                fix="pass the --horizontal-pod-autoscaler-downscale-stabilization value in seconds",
            )
        self.tolerance = tolerance
        self.downscale_stabilization_seconds = float(downscale_stabilization_seconds)
        self.configurable_tolerance = configurable_tolerance
        self.scale_to_zero = self.min_replicas == 0 if scale_to_zero is None else scale_to_zero
        self.scale_up_limit_factor = scale_up_limit_factor
        self.scale_up_limit_minimum = scale_up_limit_minimum
        self.behavior: Behavior | None = None
        if behavior is not None:
            down = generate_scale_down_rules(behavior.scale_down)
            if down.stabilization_window_seconds is None:
                down = ScalingRules(
                    stabilization_window_seconds=int(self.downscale_stabilization_seconds),
                    select_policy=down.select_policy,
                    policies=down.policies,
                    tolerance=down.tolerance,
                )
            self.behavior = Behavior(generate_scale_up_rules(behavior.scale_up), down)
        self._recommendations: list[Recommendation] | None = (
            None if recommendations is None else recommendations_of(recommendations)
        )
        self._scale_up_events = scale_events_of(scale_up_events)
        self._scale_down_events = scale_events_of(scale_down_events)
        self._conditions = list(conditions)
        self._desired_replicas: int | None = None
        self._last_proposals: dict[int, tuple[tuple[object, ...], MetricProposal]] = {}
        self._repeat: tuple[tuple[object, ...], ReconcileResult, int, _Normalized] | None = None
        """The last sync's inputs, result, desired count before normalization and
        normalization, while a sync on the same inputs may be answered by :meth:`_resync`."""

    @property
    def recommendations(self) -> tuple[Recommendation, ...] | None:
        """The stored recommendation history (None before the first sync of a new object)."""
        return None if self._recommendations is None else tuple(self._recommendations)

    @property
    def scale_up_events(self) -> tuple[ScaleEvent, ...]:
        """The stored scale-up events."""
        return tuple(self._scale_up_events)

    @property
    def scale_down_events(self) -> tuple[ScaleEvent, ...]:
        """The stored scale-down events."""
        return tuple(self._scale_down_events)

    @property
    def conditions(self) -> tuple[Condition, ...]:
        """``status.conditions`` as the last sync left them."""
        return tuple(self._conditions)

    def tolerances(self) -> Tolerance:
        """tolerancesForHpa: the flag, overridden per direction by behavior when the gate is on."""
        if self.behavior is None or not self.configurable_tolerance:
            return self.tolerance
        up, down = self.behavior.scale_up, self.behavior.scale_down
        return Tolerance(
            scale_down=(
                down.tolerance
                if down is not None and down.tolerance is not None
                else self.tolerance.scale_down
            ),
            scale_up=(
                up.tolerance
                if up is not None and up.tolerance is not None
                else self.tolerance.scale_up
            ),
        )

    def reconcile(
        self,
        *,
        now: float,
        spec_replicas: int,
        status_replicas: int,
        ready_pods: int,
        metric_values: Sequence[MetricInput],
        pending_pods: int = 0,
        running_pods: int | None = None,
    ) -> int:
        """One sync; returns the spec replicas afterwards (see :meth:`reconcile_detailed`)."""
        return self.reconcile_detailed(
            now=now,
            spec_replicas=spec_replicas,
            status_replicas=status_replicas,
            ready_pods=ready_pods,
            metric_values=metric_values,
            pending_pods=pending_pods,
            running_pods=running_pods,
        ).replicas

    def _reads_at_zero(self, conditions: Sequence[Condition]) -> bool:
        scaled_to_zero = self.scale_to_zero and any(
            c.type == "ScaledToZero" and c.status == "True" for c in conditions
        )
        has_object_or_external = any(m.source in ("Object", "External") for m in self.metrics)
        return (self.min_replicas != 0 and scaled_to_zero) or (
            scaled_to_zero and has_object_or_external
        )

    def reads_metrics(self, spec_replicas: int) -> bool:
        """Whether the next reconcile at ``spec_replicas`` fetches metrics at all:
        reconcileAutoscaler reads none when the target is at 0 (the ScalingDisabled
        branch, unless the HPA scaled it to zero itself) or outside min..max."""
        if spec_replicas == 0:
            return self._reads_at_zero(self._conditions)
        return self.min_replicas <= spec_replicas <= self.max_replicas

    def reconcile_detailed(
        self,
        *,
        now: float,
        spec_replicas: int,
        status_replicas: int,
        ready_pods: int,
        metric_values: Sequence[MetricInput],
        pending_pods: int = 0,
        running_pods: int | None = None,
    ) -> ReconcileResult:
        """One sync (reconcileAutoscaler) on a snapshot; returns everything it decided.

        ``spec_replicas`` and ``status_replicas`` are the scale subresource's; ``ready_pods``
        counts Running pods with Ready=True (the multiplier for Value targets);
        ``metric_values[i]`` are the samples of ``metrics[i]`` in plain units or as
        quantity strings (External: every matching series; Object: exactly one value;
        Pods: one value per pod that reported). A failed fetch is ``None`` or an exception
        instance in place of the samples; so is an empty list (upstream's "no metrics
        returned" error). For a Pods metric, pods without a sample number
        ``running_pods - len(samples)`` (``running_pods`` defaults to ``ready_pods``) and
        ``pending_pods`` are Pending pods.
        """
        if not math.isfinite(now):
            raise InputError(
                f"expected a finite time, got {now!r}", where="now", fix="pass seconds"
            )
        key = _inputs_key(
            (spec_replicas, status_replicas, ready_pods, pending_pods, running_pods), metric_values
        )
        repeat = self._repeat
        if key is not None and repeat is not None and repeat[0] == key:
            repeated = self._resync(now, repeat)
            if repeated is not None:
                return repeated
        self._repeat = None
        current = _count("spec_replicas", spec_replicas)
        status = _count("status_replicas", status_replicas)
        ready = _count("ready_pods", ready_pods)
        pending = _count("pending_pods", pending_pods)
        running = ready if running_pods is None else _count("running_pods", running_pods)
        if isinstance(metric_values, str | bytes) or len(metric_values) != len(self.metrics):
            got = "a string" if isinstance(metric_values, str | bytes) else len(metric_values)
            raise InputError(
                f"expected {len(self.metrics)} entries of metric samples, got {got}",
                where="metric_values",
                fix="pass one list of samples (or None on failure) per metric, in spec order",
            )
        conditions_before = self._conditions
        conditions = list(conditions_before)
        _set_condition(
            conditions,
            "AbleToScale",
            True,
            "SucceededGetScale",
            "the HPA controller was able to get the target's current scale",
        )
        if self._recommendations is None:
            self._recommendations = [Recommendation(float(now), current)]
        minimum = self.min_replicas
        desired = 0
        rescale_reason = ""
        rescale = True
        has_object_or_external = any(m.source in ("Object", "External") for m in self.metrics)
        scaled_to_zero = self.scale_to_zero and any(
            c.type == "ScaledToZero" and c.status == "True" for c in conditions
        )
        needs_metrics = True
        if current == 0:
            needs_metrics = self._reads_at_zero(conditions)
            if not needs_metrics:
                rescale = False
                _set_condition(
                    conditions,
                    "ScalingActive",
                    False,
                    "ScalingDisabled",
                    "scaling is disabled since the replica count of the target is zero",
                )
                if not self.scale_to_zero:
                    _remove_condition(conditions, "ScaledToZero")
        elif current > self.max_replicas:
            rescale_reason = "Current number of replicas above Spec.MaxReplicas"
            desired = self.max_replicas
            needs_metrics = False
        elif current < minimum:
            rescale_reason = "Current number of replicas below Spec.MinReplicas"
            desired = minimum
            needs_metrics = False

        proposals: tuple[MetricProposal, ...] = ()
        metric_replicas: int | None = None
        stabilized: int | None = None
        error: str | None = None
        normalized: _Normalized | None = None
        if needs_metrics:
            proposals = tuple(
                self._proposal(index, entry, (current, status, ready, running, pending))
                for index, entry in enumerate(metric_values)
            )
            metric_desired, metric_label, error = self._combine(proposals, current, conditions)
            if metric_desired is None:
                self._conditions = conditions
                previous = current if self._desired_replicas is None else self._desired_replicas
                return ReconcileResult(
                    now=now,
                    current_replicas=current,
                    replicas=current,
                    desired_replicas=previous,
                    rescaled=False,
                    metric_replicas=None,
                    stabilized_replicas=None,
                    proposals=proposals,
                    conditions=tuple(conditions),
                    rescale_reason="",
                    error=error,
                )
            metric_replicas = metric_desired
            rescale_metric = ""
            if metric_desired > desired:
                desired = metric_desired
                rescale_metric = metric_label
            if desired > current:
                rescale_reason = f"{rescale_metric} above target"
            if desired < current:
                rescale_reason = "All metrics below target"
            before_normalizing = desired
            normalized = self._normalize(now, current, desired, minimum, conditions)
            stabilized, desired = normalized[0], normalized[2]
            if current == 0 and minimum != 0 and scaled_to_zero and desired < minimum:
                desired = minimum
                rescale_reason = (
                    rescale_reason or "Current number of replicas below Spec.MinReplicas"
                )
            rescale = desired != current

        if rescale:
            _set_condition(
                conditions,
                "AbleToScale",
                True,
                "SucceededRescale",
                f"the HPA controller was able to update the target scale to {desired}",
            )
            self._scale_up_events, self._scale_down_events = store_scale_event(
                behavior=self.behavior,
                prev_replicas=current,
                new_replicas=desired,
                scale_up_events=self._scale_up_events,
                scale_down_events=self._scale_down_events,
                now=now,
            )
            if self.scale_to_zero:
                if current > 0 and desired == 0 and minimum == 0 and has_object_or_external:
                    _set_condition(
                        conditions,
                        "ScaledToZero",
                        True,
                        "ScaledToZero",
                        "the HPA controller scaled the workload to zero",
                    )
                else:
                    _set_condition(
                        conditions,
                        "ScaledToZero",
                        False,
                        "NotScaledToZero",
                        "the HPA controller did not scale the workload to zero",
                    )
            else:
                _remove_condition(conditions, "ScaledToZero")
        else:
            desired = current
        self._conditions = conditions
        self._desired_replicas = desired
        result = ReconcileResult(
            now=now,
            current_replicas=current,
            replicas=desired,
            desired_replicas=desired,
            rescaled=rescale,
            metric_replicas=metric_replicas,
            stabilized_replicas=stabilized,
            proposals=proposals,
            conditions=tuple(conditions),
            rescale_reason=rescale_reason,
            error=error,
        )
        if (
            key is not None
            and normalized is not None
            and not rescale
            and current > 0
            and conditions == conditions_before
        ):
            self._repeat = (key, result, before_normalizing, normalized)
        return result

    def _resync(
        self,
        now: float,
        repeat: tuple[tuple[object, ...], ReconcileResult, int, _Normalized],
    ) -> ReconcileResult | None:
        """A sync on the same inputs as the last one, when that one ended without a rescale
        at a count above 0 with the conditions it began with: the last result at ``now``,
        when normalization decides the same; None (nothing changed) otherwise.

        Why this is the full sync's answer: reconcile_detailed reads ``now`` only in the
        recommendation it records first (only ever on a new object), in normalization
        (the stabilization windows over the recommendation history, the rate limits over
        the scale events), and in the scale event stored after a rescale. Everything
        else is a function of the inputs (equal, types included: the key compares them
        with their types, as :meth:`_proposal` does, so they pass the same checks) and of
        the state the last sync began from: its conditions (the same, since it ended with
        those it began with), the remembered proposals (read, not changed, on equal
        inputs) and the stored desired count (read only when every metric fails, which a
        repeatable sync did not). So the full sync would compute the same proposals, the
        same combined count and conditions up to normalization, and hand normalization
        the same desired count. Normalization itself runs here in full, on a copy of the
        history, at ``now``: no argument about which recommendations stay in the window
        is needed. If it decides the same stabilized and final counts with the same
        reasons, the conditions it sets are the last ones, the final count is the
        current one again (the last sync did not rescale), so no scale event is stored,
        and the result differs from the last only by ``now``; the new history (``now``'s
        recommendation in the slot the full sync fills) is kept. If not, the history is
        left as it was and the caller runs the full sync.
        """
        _key, last, desired, normalized = repeat
        current = last.current_replicas
        history, decided = self._normalization(now, current, desired, self.min_replicas)
        if decided != normalized:
            return None
        self._recommendations = history
        return ReconcileResult(
            now=now,
            current_replicas=current,
            replicas=last.replicas,
            desired_replicas=last.desired_replicas,
            rescaled=False,
            metric_replicas=last.metric_replicas,
            stabilized_replicas=last.stabilized_replicas,
            proposals=last.proposals,
            conditions=last.conditions,
            rescale_reason=last.rescale_reason,
            error=last.error,
        )

    def _proposal(
        self, index: int, entry: MetricInput, counts: tuple[int, int, int, int, int]
    ) -> MetricProposal:
        """:meth:`_compute_metric` for ``metrics[index]`` with ``counts`` (current, status,
        ready, running, pending), remembered for the last inputs.

        The proposal is a pure function of the metric (fixed), the tolerances (fixed), the
        samples and the counts; a sync whose samples and counts equal the previous sync's
        gets the previous proposal. Only lists of plain samples are remembered (a failed
        fetch is cheap to answer again). The last one is kept per metric."""
        # the types too: 1 == 1.0, but a quantity's text is what its parse reads
        key = (
            (tuple(entry), tuple(map(type, entry)), counts)
            if isinstance(entry, list | tuple)
            else None
        )
        last = self._last_proposals.get(index)
        if key is not None and last is not None and last[0] == key:
            return last[1]
        current, status, ready, running, pending = counts
        proposal = self._compute_metric(
            metric=self.metrics[index],
            entry=entry,
            current=current,
            status=status,
            ready=ready,
            running=running,
            pending=pending,
        )
        if key is not None:
            self._last_proposals[index] = (key, proposal)
        return proposal

    def _compute_metric(
        self,
        *,
        metric: MetricTarget,
        entry: MetricInput,
        current: int,
        status: int,
        ready: int,
        running: int,
        pending: int,
    ) -> MetricProposal:
        """computeReplicasForMetric for one External, Object or Pods metric."""
        if entry is None or isinstance(entry, BaseException):
            reason = "unable to fetch metrics" if entry is None else (str(entry) or repr(entry))
            return MetricProposal(metric, None, None, None, error=reason)
        if isinstance(entry, str | bytes):
            raise InputError(
                f"expected a list of samples for {metric.label}, got a string",
                where="metric_values",
                fix="wrap a single sample in a list",
            )
        samples = [milli_value(sample) for sample in entry]
        tolerance = self.tolerances()
        target = metric.target_milli
        try:
            result: Calculation
            if metric.source == "Pods":
                result = calculate_pods(
                    samples,
                    target,
                    current_replicas=current,
                    tolerance=tolerance,
                    missing_pods=max(running - len(samples), 0),
                    unready_pods=pending,
                    ready_pods=min(running, len(samples)),
                )
            elif metric.source == "External" and metric.target_type == "Value":
                result = calculate_external(
                    samples,
                    target,
                    current_replicas=current,
                    ready_pods=ready,
                    tolerance=tolerance,
                    pods=max(status, ready),
                )
            elif metric.source == "External":
                result = calculate_external_per_pod(
                    samples, target, status_replicas=status, tolerance=tolerance
                )
            else:
                if len(samples) != 1:
                    if samples:
                        raise InputError(
                            f"an Object metric has one value, got {len(samples)}",
                            where="metric_values",
                            fix="pass the object's single value in a one-element list",
                        )
                    raise ReplicaCalculationError(
                        "unable to fetch metrics from custom metrics API: no value returned"
                    )
                if metric.target_type == "Value":
                    result = calculate_object(
                        samples[0],
                        target,
                        current_replicas=current,
                        ready_pods=ready,
                        tolerance=tolerance,
                        pods=max(status, ready),
                    )
                else:
                    result = calculate_object_per_pod(
                        samples[0], target, status_replicas=status, tolerance=tolerance
                    )
        except ReplicaCalculationError as failure:
            return MetricProposal(metric, None, None, None, error=str(failure))
        return MetricProposal(metric, result.replicas, result.usage_milli, result.ratio)

    def _combine(
        self, proposals: Sequence[MetricProposal], current: int, conditions: list[Condition]
    ) -> tuple[int | None, str, str | None]:
        """computeReplicasForMetrics: the max proposal; a failing metric blocks scale-down only."""
        replicas = 0
        label = ""
        invalid = 0
        first_failure: MetricProposal | None = None
        for proposal in proposals:
            if proposal.replicas is None:
                if invalid == 0:
                    first_failure = proposal
                invalid += 1
                continue
            if replicas == 0 or proposal.replicas > replicas:
                replicas = proposal.replicas
                label = proposal.metric.label
        error = None
        if first_failure is not None:
            error = (
                f"invalid metrics ({invalid} invalid out of {len(proposals)}), first error is: "
                f"{first_failure.error}"
            )
        if invalid >= len(proposals) or (invalid > 0 and replicas < current):
            assert first_failure is not None
            _set_condition(
                conditions,
                "ScalingActive",
                False,
                _FAILED_REASON[first_failure.metric.source],
                f"the HPA was unable to compute the replica count: {first_failure.error}",
            )
            return None, "", error
        _set_condition(
            conditions,
            "ScalingActive",
            True,
            "ValidMetricFound",
            f"the HPA was able to successfully calculate a replica count from {label}",
        )
        return replicas, label, error

    def _normalization(
        self, now: float, current: int, desired: int, minimum: int
    ) -> tuple[list[Recommendation], _Normalized]:
        """normalizeDesiredReplicas / normalizeDesiredReplicasWithBehaviors on a copy of the
        recommendation history: (the new history, what they decided); nothing is stored."""
        history = list(self._recommendations or ())
        if self.behavior is None:
            stabilized, history = stabilize_recommendation_into(
                history,
                desired=desired,
                now=now,
                window_seconds=self.downscale_stabilization_seconds,
            )
            stabilized_reason = "ScaleDownStabilized"
            final, reason = normalize_rules(
                desired=stabilized,
                current_replicas=current,
                min_replicas=minimum,
                max_replicas=self.max_replicas,
                scale_up_limit_factor=self.scale_up_limit_factor,
                scale_up_limit_minimum=self.scale_up_limit_minimum,
            )
        else:
            stabilized, stabilized_reason, history = stabilize_with_behaviors_into(
                history,
                desired=desired,
                current_replicas=current,
                behavior=self.behavior,
                now=now,
            )
            final, reason = normalize_behavior_rate(
                desired=stabilized,
                current_replicas=current,
                min_replicas=minimum,
                max_replicas=self.max_replicas,
                behavior=self.behavior,
                scale_up_events=self._scale_up_events,
                scale_down_events=self._scale_down_events,
                now=now,
            )
        return history, (stabilized, stabilized_reason, final, reason)

    def _normalize(
        self, now: float, current: int, desired: int, minimum: int, conditions: list[Condition]
    ) -> _Normalized:
        """:meth:`_normalization`, its history stored and its conditions set."""
        self._recommendations, normalized = self._normalization(now, current, desired, minimum)
        stabilized, stabilized_reason, final, reason = normalized
        if stabilized != desired:
            _set_condition(
                conditions, "AbleToScale", True, stabilized_reason, MESSAGES[stabilized_reason]
            )
        else:
            _set_condition(
                conditions, "AbleToScale", True, "ReadyForNewScale", MESSAGES["ReadyForNewScale"]
            )
        _set_condition(conditions, "ScalingLimited", final != stabilized, reason, MESSAGES[reason])
        return normalized


def _inputs_key(counts: tuple[object, ...], metric_values: object) -> tuple[object, ...] | None:
    """A sync's inputs (``counts``: spec and status replicas, ready, pending and running
    pods) for comparing with the next sync's, with the types of the samples (``1 == 1.0``,
    but a quantity's text is what its parse reads); None when they are not plain counts
    and lists of samples (such a sync is never repeated by ``_resync``)."""
    spec, status, ready, pending, running = counts
    if (
        type(spec) is not int
        or type(status) is not int
        or type(ready) is not int
        or type(pending) is not int
        or not (running is None or type(running) is int)
        or not isinstance(metric_values, list | tuple)
    ):
        return None
    samples: list[object] = []
    for entry in metric_values:
        if not isinstance(entry, list | tuple):
            return None
        samples.append((tuple(entry), tuple(map(type, entry))))
    return (counts, tuple(samples))
