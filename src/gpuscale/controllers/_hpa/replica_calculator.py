"""Per-metric replica proposals: upstream ``pkg/controller/podautoscaler/replica_calculator.go``.

Each function takes what the controller would have fetched (metric samples, pod counts)
instead of fetching it, and returns what upstream returns: a replica proposal and the
usage it reports in the HPA status. All arithmetic is upstream's: samples and targets in
int64 milli-units (``metrics/client.go`` reads every sample with ``MilliValue()``), ratios
in float64, counts converted back to int32 (see ``gonum`` and ``gpuscale._gomath``).

When upstream returns an error (no samples, no pods), these functions raise
:class:`ReplicaCalculationError` with upstream's message; the controller counts that
metric as invalid.

Not modelled: Resource and ContainerResource metrics (``GetResourceReplicas``,
``GetRawResourceReplicas``, CPU readiness and initialization windows in ``groupPods``),
metric timestamps, and the metric selectors themselves (the caller passes the samples
a selector would have matched).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpuscale._gomath import (
    INT64_MAX,
    go_ceil,
    go_div,
    go_float_to_int64,
    go_trunc_div,
    wrap_int64,
)
from gpuscale.controllers._hpa.gonum import INT32_MAX, go_float_to_int32
from gpuscale.controllers._hpa.spec import DEFAULT_TOLERANCES, MetricTarget, Tolerance
from gpuscale.kube import QuantityLike, milli_value

__all__ = [
    "Calculation",
    "ReplicaCalculationError",
    "calculate_external",
    "calculate_external_per_pod",
    "calculate_object",
    "calculate_object_per_pod",
    "calculate_pods",
    "external_metric_replicas",
    "external_per_pod_metric_replicas",
    "object_metric_replicas",
    "object_per_pod_metric_replicas",
    "per_pod_usage",
    "pods_metric_replicas",
]


class ReplicaCalculationError(ValueError):
    """Upstream's replica calculator returned an error for this metric (message as upstream's)."""


@dataclass(frozen=True, slots=True)
class Calculation:
    """One replica calculation in upstream's own units."""

    replicas: int
    """The proposal (int32)."""
    usage_milli: int
    """The usage upstream reports, in milli-units (Value: the total; AverageValue: per replica)."""
    ratio: float
    """The usage ratio the tolerance was judged on."""

    @property
    def usage(self) -> float:
        """``usage_milli`` in plain units."""
        return self.usage_milli / 1000


def _milli(samples: Sequence[QuantityLike]) -> list[int]:
    return [milli_value(sample) for sample in samples]


def _ready_pods_count(ready_pods: int, pods: int | None) -> int:
    """getReadyPodsCount: an error only when the selector matches no pod at all.

    ``pods=None`` means the caller does not know, and some pod exists.
    """
    if pods is not None and max(pods, ready_pods) <= 0:
        raise ReplicaCalculationError(
            "unable to calculate ready pods: no pods returned by selector while calculating "
            "replica count"
        )
    return ready_pods


def _usage_ratio_replica_count(
    current_replicas: int, ratio: float, tolerance: Tolerance, ready_pods: int, pods: int | None
) -> int:
    """getUsageRatioReplicaCount: tolerance and ready pods, except at zero replicas."""
    if current_replicas != 0:
        if tolerance.is_within(ratio):
            return current_replicas
        ready = _ready_pods_count(ready_pods, pods)
        count = ratio * float(ready)
        if count > INT32_MAX:
            return INT32_MAX
        return go_float_to_int32(go_ceil(count))
    return go_float_to_int32(go_ceil(ratio))


def per_pod_usage(usage_milli: int, status_replicas: int) -> int:
    """getPerPodUsage: ceil(usage / replicas) in float64; MaxInt64 on overflow, 0 at 0 replicas."""
    if float(usage_milli) >= float(INT64_MAX):
        return INT64_MAX
    if status_replicas == 0:
        return 0
    return go_float_to_int64(go_ceil(go_div(float(usage_milli), float(status_replicas))))


def _no_external_samples() -> ReplicaCalculationError:
    return ReplicaCalculationError(
        "unable to get external metric: no metrics returned from external metrics API"
    )


def calculate_external(
    samples_milli: Sequence[int],
    target_milli: int,
    *,
    current_replicas: int,
    ready_pods: int,
    tolerance: Tolerance,
    pods: int | None = None,
) -> Calculation:
    """GetExternalMetricReplicas on milli-unit samples (the sum is capped at MaxInt64)."""
    if not samples_milli:
        raise _no_external_samples()
    usage = 0
    for value in samples_milli:
        if value > 0 and usage > INT64_MAX - value:
            usage = INT64_MAX
            break
        usage = wrap_int64(usage + value)
    ratio = go_div(float(usage), float(target_milli))
    replicas = _usage_ratio_replica_count(current_replicas, ratio, tolerance, ready_pods, pods)
    return Calculation(replicas, usage, ratio)


def calculate_external_per_pod(
    samples_milli: Sequence[int], target_milli: int, *, status_replicas: int, tolerance: Tolerance
) -> Calculation:
    """GetExternalPerPodMetricReplicas on milli-unit samples.

    A sum that goes negative (an int64 overflow, or a negative sample) becomes MaxInt64,
    as upstream's overflow check does.
    """
    if not samples_milli:
        raise _no_external_samples()
    usage = 0
    for value in samples_milli:
        usage = wrap_int64(usage + value)
        if usage < 0:
            usage = INT64_MAX
            break
    replicas = status_replicas
    ratio = go_div(float(usage), float(target_milli) * float(status_replicas))
    if not tolerance.is_within(ratio):
        result = go_ceil(go_div(float(usage), float(target_milli)))
        replicas = INT32_MAX if result > float(INT32_MAX) else go_float_to_int32(result)
    return Calculation(replicas, per_pod_usage(usage, status_replicas), ratio)


def calculate_object(
    value_milli: int,
    target_milli: int,
    *,
    current_replicas: int,
    ready_pods: int,
    tolerance: Tolerance,
    pods: int | None = None,
) -> Calculation:
    """GetObjectMetricReplicas on a milli-unit value."""
    ratio = go_div(float(value_milli), float(target_milli))
    replicas = _usage_ratio_replica_count(current_replicas, ratio, tolerance, ready_pods, pods)
    return Calculation(replicas, value_milli, ratio)


def calculate_object_per_pod(
    value_milli: int, target_milli: int, *, status_replicas: int, tolerance: Tolerance
) -> Calculation:
    """GetObjectPerPodMetricReplicas on a milli-unit value (no int32 saturation upstream)."""
    replicas = status_replicas
    ratio = go_div(float(value_milli), float(target_milli) * float(replicas))
    if not tolerance.is_within(ratio):
        replicas = go_float_to_int32(go_ceil(go_div(float(value_milli), float(target_milli))))
    return Calculation(replicas, per_pod_usage(value_milli, status_replicas), ratio)


def _usage_ratio(values: Sequence[int], target_milli: int) -> tuple[float, int]:
    """GetMetricUsageRatio: the integer mean (truncated) and its ratio to the target.

    Upstream sums in int64 and, in current master, redoes the sum with big.Int when it
    would overflow; Python integers give that exact result directly.
    """
    usage = go_trunc_div(sum(values), len(values))
    return go_div(float(usage), float(target_milli)), usage


def calculate_pods(
    samples_milli: Sequence[int],
    target_milli: int,
    *,
    current_replicas: int,
    tolerance: Tolerance,
    missing_pods: int = 0,
    unready_pods: int = 0,
    ready_pods: int | None = None,
) -> Calculation:
    """GetMetricReplicas -> calcPlainMetricReplicas for a Pods metric on milli-unit samples.

    ``samples_milli`` are the samples left after groupPods drops ignored and unready pods;
    ``ready_pods`` is how many of them belong to Running pods the selector matches
    (default: all of them; fewer means the rest are "superfluous" samples, which upstream
    still averages in); ``missing_pods`` are Running pods without a sample and
    ``unready_pods`` Pending pods. For a non-CPU metric, readiness does not matter.
    """
    if not samples_milli:
        raise ReplicaCalculationError(
            "unable to get metric: no metrics returned from custom metrics API"
        )
    ready = len(samples_milli) if ready_pods is None else ready_pods
    if ready + missing_pods + unready_pods <= 0:
        raise ReplicaCalculationError(
            "no pods returned by selector while calculating replica count"
        )
    values = list(samples_milli)
    ratio, usage = _usage_ratio(values, target_milli)
    scale_up_with_unready = unready_pods > 0 and ratio > 1.0
    if not scale_up_with_unready and missing_pods == 0:
        if tolerance.is_within(ratio):
            return Calculation(current_replicas, usage, ratio)
        return Calculation(go_float_to_int32(go_ceil(ratio * float(ready))), usage, ratio)
    if missing_pods > 0:
        if ratio < 1.0:
            values.extend([target_milli] * missing_pods)
        elif ratio > 1.0:
            values.extend([0] * missing_pods)
    if scale_up_with_unready:
        values.extend([0] * unready_pods)
    new_ratio, _ = _usage_ratio(values, target_milli)
    if (
        tolerance.is_within(new_ratio)
        or (ratio < 1.0 and new_ratio > 1.0)
        or (ratio > 1.0 and new_ratio < 1.0)
    ):
        return Calculation(current_replicas, usage, ratio)
    new_replicas = go_float_to_int32(go_ceil(new_ratio * float(len(values))))
    if (new_ratio < 1.0 and new_replicas > current_replicas) or (
        new_ratio > 1.0 and new_replicas < current_replicas
    ):
        return Calculation(current_replicas, usage, ratio)
    return Calculation(new_replicas, usage, ratio)


def _check_count(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")


def external_metric_replicas(
    samples: Sequence[QuantityLike],
    target: MetricTarget,
    *,
    current_replicas: int,
    ready_pods: int,
    tolerance: Tolerance = DEFAULT_TOLERANCES,
    pods: int | None = None,
) -> tuple[int, float]:
    """GetExternalMetricReplicas: an External metric with a Value target.

    ``samples`` are every series the metric selector matches (summed); ``current_replicas``
    is the scale's spec replicas; ``ready_pods`` counts Running pods whose Ready condition
    is True (the multiplier once the ratio is outside tolerance, so 0 ready pods propose
    0 replicas); ``pods`` is how many pods the selector matches at all (None: unknown,
    assumed non-zero; 0 is an error upstream).
    At zero current replicas the proposal is ceil(ratio), without tolerance.
    Returns (replicas, total usage in plain units).
    """
    _check_count("current_replicas", current_replicas)
    _check_count("ready_pods", ready_pods)
    result = calculate_external(
        _milli(samples),
        target.target_milli,
        current_replicas=current_replicas,
        ready_pods=ready_pods,
        tolerance=tolerance,
        pods=pods,
    )
    return result.replicas, result.usage


def external_per_pod_metric_replicas(
    samples: Sequence[QuantityLike],
    target: MetricTarget,
    *,
    status_replicas: int,
    tolerance: Tolerance = DEFAULT_TOLERANCES,
) -> tuple[int, float]:
    """GetExternalPerPodMetricReplicas: an External metric with an AverageValue target.

    The tolerance is judged on total / (target x status replicas); outside it the proposal
    is ceil(total / target), saturated at MaxInt32, whatever the pods' readiness.
    Returns (replicas, per-replica usage in plain units, ceil(total / status replicas)).
    """
    _check_count("status_replicas", status_replicas)
    result = calculate_external_per_pod(
        _milli(samples), target.target_milli, status_replicas=status_replicas, tolerance=tolerance
    )
    return result.replicas, result.usage


def object_metric_replicas(
    value: QuantityLike,
    target: MetricTarget,
    *,
    current_replicas: int,
    ready_pods: int,
    tolerance: Tolerance = DEFAULT_TOLERANCES,
    pods: int | None = None,
) -> tuple[int, float]:
    """GetObjectMetricReplicas: an Object metric, Value target (External's rule, one value)."""
    _check_count("current_replicas", current_replicas)
    _check_count("ready_pods", ready_pods)
    result = calculate_object(
        milli_value(value),
        target.target_milli,
        current_replicas=current_replicas,
        ready_pods=ready_pods,
        tolerance=tolerance,
        pods=pods,
    )
    return result.replicas, result.usage


def object_per_pod_metric_replicas(
    value: QuantityLike,
    target: MetricTarget,
    *,
    status_replicas: int,
    tolerance: Tolerance = DEFAULT_TOLERANCES,
) -> tuple[int, float]:
    """GetObjectPerPodMetricReplicas: an Object metric with an AverageValue target."""
    _check_count("status_replicas", status_replicas)
    result = calculate_object_per_pod(
        milli_value(value),
        target.target_milli,
        status_replicas=status_replicas,
        tolerance=tolerance,
    )
    return result.replicas, result.usage


def pods_metric_replicas(
    samples: Sequence[QuantityLike],
    target: MetricTarget,
    *,
    current_replicas: int,
    missing_pods: int = 0,
    tolerance: Tolerance = DEFAULT_TOLERANCES,
    unready_pods: int = 0,
    ready_pods: int | None = None,
) -> tuple[int, float]:
    """GetMetricReplicas for a Pods metric (calcPlainMetricReplicas).

    ``samples`` has one value per pod that reported one; ``missing_pods`` Running pods
    reported none (counted at the target on a scale-down, at zero on a scale-up);
    ``unready_pods`` are Pending pods (counted at zero on a scale-up). Returns
    (replicas, the integer mean of the samples in plain units).
    """
    _check_count("current_replicas", current_replicas)
    _check_count("missing_pods", missing_pods)
    _check_count("unready_pods", unready_pods)
    result = calculate_pods(
        _milli(samples),
        target.target_milli,
        current_replicas=current_replicas,
        tolerance=tolerance,
        missing_pods=missing_pods,
        unready_pods=unready_pods,
        ready_pods=ready_pods,
    )
    return result.replicas, result.usage
