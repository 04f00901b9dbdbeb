"""One HorizontalPodAutoscaler over time: upstream ``horizontal.go: reconcileAutoscaler``.

The object holds what upstream keeps per HPA between syncs (the recommendation history,
the scale-up and scale-down event histories, the status conditions) and
:meth:`HorizontalPodAutoscaler.reconcile` runs one sync on a snapshot of the target's
scale and the metric samples. The caller calls it once per sync period (15 s by
default, ``--horizontal-pod-autoscaler-sync-period``) with its own clock.

Followed from upstream, in order: ``recordInitialRecommendation``; the zero-replica,
above-max and below-min short cuts (``shouldComputeMetricsForZeroReplicas`` with the
HPAScaleToZero gate); ``computeReplicasForMetrics`` (in ``compute_replicas``: max over
metrics; a failing metric blocks a scale-down only; all failing means no change);
``normalizeDesiredReplicas`` or ``normalizeDesiredReplicasWithBehaviors`` (in
``behavior``) with ``maybeInitScaleDownStabilizationWindow``; ``tolerancesForHpa``
(HPAConfigurableTolerance); ``storeScaleEvent`` after a rescale; the AbleToScale /
ScalingActive / ScalingLimited / ScaledToZero conditions with upstream's reasons
(``setCondition``, ``removeCondition``: in ``status``, with the result types). Beside
the sync, what makes it cheap to repeat: a sync on the same inputs as the last is
answered by ``_resync`` (its docstring argues why that is the full sync's answer), and
each metric's last proposal is remembered for equal samples and counts.

Not modelled: fetching the scale and metrics (the caller passes them), selector
validation (InvalidSelector, AmbiguousSelector), failed scale updates and retries,
events, and the exact wording of messages that embed Go-formatted objects (metric
labels here omit the selector).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import replace

from gpuscale.controllers._hpa.behavior import (
    MESSAGES,
    RecommendationLike,
    ScaleEventLike,
    normalize_desired_replicas,
    recommendations_of,
    scale_events_of,
    store_scale_event,
)
from gpuscale.controllers._hpa.compute_replicas import (
    MetricInput,
    combine_proposals,
    compute_metric,
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
from gpuscale.controllers._hpa.status import (
    Condition,
    MetricProposal,
    ReconcileResult,
    remove_condition,
    set_condition,
)
from gpuscale.errors import InputError

__all__ = ["HorizontalPodAutoscaler"]

_Normalized = tuple[int, str, int, str]
"""What normalization decided: (stabilized, its AbleToScale reason, final, ScalingLimited
reason)."""


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
        set_condition(
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
                set_condition(
                    conditions,
                    "ScalingActive",
                    False,
                    "ScalingDisabled",
                    "scaling is disabled since the replica count of the target is zero",
                )
                if not self.scale_to_zero:
                    remove_condition(conditions, "ScaledToZero")
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
            metric_desired, metric_label, error = combine_proposals(proposals, current, conditions)
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
            set_condition(
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
                    set_condition(
                        conditions,
                        "ScaledToZero",
                        True,
                        "ScaledToZero",
                        "the HPA controller scaled the workload to zero",
                    )
                else:
                    set_condition(
                        conditions,
                        "ScaledToZero",
                        False,
                        "NotScaledToZero",
                        "the HPA controller did not scale the workload to zero",
                    )
            else:
                remove_condition(conditions, "ScaledToZero")
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
        return replace(last, now=now)  # kept only after a sync without a rescale

    def _proposal(
        self, index: int, entry: MetricInput, counts: tuple[int, int, int, int, int]
    ) -> MetricProposal:
        """:func:`compute_metric` for ``metrics[index]`` with ``counts`` (current, status,
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
        proposal = compute_metric(
            self.metrics[index],
            entry,
            tolerance=self.tolerances(),
            current=current,
            status=status,
            ready=ready,
            running=running,
            pending=pending,
        )
        if key is not None:
            self._last_proposals[index] = (key, proposal)
        return proposal

    def _normalization(
        self, now: float, current: int, desired: int, minimum: int
    ) -> tuple[list[Recommendation], _Normalized]:
        """normalizeDesiredReplicas / normalizeDesiredReplicasWithBehaviors on a copy of the
        recommendation history: (the new history, what they decided); nothing is stored."""
        return normalize_desired_replicas(
            list(self._recommendations or ()),
            desired=desired,
            current_replicas=current,
            min_replicas=minimum,
            max_replicas=self.max_replicas,
            behavior=self.behavior,
            window_seconds=self.downscale_stabilization_seconds,
            scale_up_limit_factor=self.scale_up_limit_factor,
            scale_up_limit_minimum=self.scale_up_limit_minimum,
            scale_up_events=self._scale_up_events,
            scale_down_events=self._scale_down_events,
            now=now,
        )

    def _normalize(
        self, now: float, current: int, desired: int, minimum: int, conditions: list[Condition]
    ) -> _Normalized:
        """:meth:`_normalization`, its history stored and its conditions set."""
        self._recommendations, normalized = self._normalization(now, current, desired, minimum)
        stabilized, stabilized_reason, final, reason = normalized
        if stabilized != desired:
            set_condition(
                conditions, "AbleToScale", True, stabilized_reason, MESSAGES[stabilized_reason]
            )
        else:
            set_condition(
                conditions, "AbleToScale", True, "ReadyForNewScale", MESSAGES["ReadyForNewScale"]
            )
        set_condition(conditions, "ScalingLimited", final != stabilized, reason, MESSAGES[reason])
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
