"""Each metric's replica proposal and their maximum: upstream ``horizontal.go``'s
``computeReplicasForMetrics`` and ``computeReplicasForMetric`` (with the
``computeStatusFor{External,Object,Pods}Metric`` branches that call the replica
calculator).

Each metric's samples go to the matching ``replica_calculator`` function (External Value
or AverageValue, Object Value or AverageValue, Pods); a failed fetch or calculation is a
proposal without a count. The maximum over the proposals is the sync's count; a failing
metric blocks a scale-down only, and all failing means no count (ScalingActive False, with
upstream's FailedGet*Metric reason).
"""

from __future__ import annotations

from collections.abc import Sequence

from gpuscale.controllers._hpa.replica_calculator import (
    Calculation,
    ReplicaCalculationError,
    calculate_external,
    calculate_external_per_pod,
    calculate_object,
    calculate_object_per_pod,
    calculate_pods,
)
from gpuscale.controllers._hpa.spec import MetricTarget, Tolerance
from gpuscale.controllers._hpa.status import Condition, MetricProposal, set_condition
from gpuscale.errors import InputError
from gpuscale.kube import QuantityLike, milli_value

__all__ = ["MetricInput", "combine_proposals", "compute_metric"]

MetricInput = Sequence[QuantityLike] | BaseException | None
"""What one metric returned this sync: its samples, or ``None`` / an exception on failure."""

_FAILED_REASON = {
    "External": "FailedGetExternalMetric",
    "Object": "FailedGetObjectMetric",
    "Pods": "FailedGetPodsMetric",
}


def compute_metric(
    metric: MetricTarget,
    entry: MetricInput,
    *,
    tolerance: Tolerance,
    current: int,
    status: int,
    ready: int,
    running: int,
    pending: int,
) -> MetricProposal:
    """computeReplicasForMetric for one External, Object or Pods metric: ``entry`` is what
    its fetch returned; the counts are the scale's spec and status replicas and the
    target's Ready, Running and Pending pods."""
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


def combine_proposals(
    proposals: Sequence[MetricProposal], current: int, conditions: list[Condition]
) -> tuple[int | None, str, str | None]:
    """computeReplicasForMetrics after its loop: the max proposal and its metric's label,
    and the error upstream returns; a failing metric blocks a scale-down only (all failing:
    no count). Sets ScalingActive in ``conditions``."""
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
        set_condition(
            conditions,
            "ScalingActive",
            False,
            _FAILED_REASON[first_failure.metric.source],
            f"the HPA was unable to compute the replica count: {first_failure.error}",
        )
        return None, "", error
    set_condition(
        conditions,
        "ScalingActive",
        True,
        "ValidMetricFound",
        f"the HPA was able to successfully calculate a replica count from {label}",
    )
    return replicas, label, error
