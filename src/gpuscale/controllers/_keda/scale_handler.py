"""KEDA's scale handler: turning trigger results into activity, and serving the HPA's reads.

Follows ``pkg/scaling/scale_handler.go`` (getScaledObjectState, getScalerState,
GetScaledObjectMetrics), ``pkg/scaling/cache/metricscache/metrics_record.go``
(MetricsRecord), ``pkg/scaling/cache/scalers_cache.go`` (GetMetricsAndActivityForScaler:
one retry with a rebuilt scaler after an error) and ``pkg/provider/provider.go``
(GetExternalMetric, which forwards every HPA read to GetScaledObjectMetrics over gRPC and
caches nothing), at kedacore/keda 8b4f083 (v2.20.1-117).

Two loops read a trigger. The polling loop (every ``pollingInterval``) decides activity
and calls the executor; the HPA (every sync period, 15 s by default) reads the metric
through KEDA's metrics server. Without ``useCachedMetrics`` that read runs the query
again, live; with it, the read returns what the last poll stored (its value, activity and
error), however old. Both reads pass through fallback, and both count failures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gpuscale.controllers._keda.errors import FallbackError
from gpuscale.controllers._keda.fallback import Health, fallback_metric
from gpuscale.controllers._keda.prometheus import metric_quantity

__all__ = [
    "HpaMetricRead",
    "MetricsRecord",
    "ScaledObjectState",
    "TriggerState",
    "hpa_metric_value",
    "reads_scaler_live",
    "scaled_object_state",
]


@dataclass(frozen=True)
class MetricsRecord:
    """What a poll stores for a trigger with ``useCachedMetrics`` (metricscache.MetricsRecord)."""

    value: float | None
    """The metric value as the poll handed it on (after fallback); None after an error."""
    is_active: bool
    """The trigger's activity at that poll (metric active or fallback active)."""
    error: str | None
    """The error that poll ended with after fallback (None when fallback applied)."""


def reads_scaler_live(*, use_cached_metrics: bool, record: MetricsRecord | None) -> bool:
    """Whether an HPA read runs the trigger's query: always without ``useCachedMetrics``;
    with it, only until the first poll has stored a record."""
    return not use_cached_metrics or record is None


@dataclass(frozen=True)
class HpaMetricRead:
    """What the HPA receives for one External metric at one sync."""

    value: float
    """The metric value (a quantity in milli-units)."""
    health: Health
    """The health map after the read (reads count failures too)."""
    from_cache: bool
    """Whether the value came from the last poll's record rather than a live query."""
    fallback_active: bool
    """Whether the value is a fallback metric."""


def hpa_metric_value(
    *,
    metric_name: str,
    use_cached_metrics: bool,
    record: MetricsRecord | None,
    live_value: float | None = None,
    live_error: str | None = None,
    target_type: str = "AverageValue",
    target: float = 0.0,
    fallback: Mapping[str, object] | None = None,
    health: Mapping[str, Mapping[str, object]] | None = None,
    current_replicas: int | None = None,
    ready_replicas: int | None = None,
) -> HpaMetricRead:
    """GetScaledObjectMetrics for one External metric of a ScaledObject without
    scalingModifiers: the value KEDA's metrics server returns to the HPA.

    When ``reads_scaler_live`` the query result is ``live_value`` (the raw query value,
    handed on as a milli quantity with negatives as 0) or ``live_error`` (after the one
    retry KEDA makes with a rebuilt scaler); otherwise ``record`` from the last poll is
    used, error included. Either passes through fallback again. Raises
    ``FallbackError`` with KEDA's ``metric:<name> encountered error`` (and the new health)
    when the HPA gets an error for this metric.
    """
    live = reads_scaler_live(use_cached_metrics=use_cached_metrics, record=record)
    if live:
        value = (
            metric_quantity(live_value) if live_error is None and live_value is not None else None
        )
        error = live_error
    else:
        assert record is not None
        value, error = record.value, record.error
    try:
        result = fallback_metric(
            value=value,
            error=error,
            metric_name=metric_name,
            target_type=target_type,
            target=target,
            fallback=fallback,
            health=health,
            current_replicas=current_replicas,
            ready_replicas=ready_replicas,
        )
    except FallbackError as exc:
        raise FallbackError(f"metric:{metric_name} encountered error", exc.health) from None
    return HpaMetricRead(result.value, result.health, not live, result.fallback_active)


@dataclass(frozen=True)
class TriggerState:
    """One trigger's outcome at a poll, after fallback (scalerState)."""

    metric_name: str
    """The trigger's metric name (``s<i>-prometheus``); empty for cpu/memory."""
    active: bool = False
    """The scaler's activity (value above ``activationThreshold``)."""
    error: str | None = None
    """The error left after fallback (None when the query worked or fallback applied)."""
    fallback_active: bool = False
    """Whether fallback supplied the metric."""
    value: float | None = None
    """The metric handed on (after fallback), for scalingModifiers."""
    resource: bool = False
    """A cpu or memory trigger (no external metric; always active)."""


@dataclass(frozen=True)
class ScaledObjectState:
    """getScaledObjectState's answer, which RequestScale receives."""

    is_active: bool
    is_error: bool
    active_triggers: tuple[str, ...]
    fallback_active: bool


def scaled_object_state(
    triggers: Sequence[TriggerState],
    *,
    composite_value: float | None = None,
    activation_target: float = 0.0,
    using_modifiers: bool = False,
) -> ScaledObjectState:
    """getScaledObjectState: the ScaledObject is active when any trigger without an error is
    active or falling back, and in error when any trigger failed. With scalingModifiers
    activity is instead ``composite_value > activation_target``, and only without errors.
    An object whose triggers are all cpu/memory is always active unless in error."""
    is_error = any(t.error is not None for t in triggers)
    fallback_active = any(t.fallback_active for t in triggers)
    active_names = tuple(
        t.metric_name
        for t in triggers
        if not t.resource and t.error is None and (t.active or t.fallback_active)
    )
    is_active = bool(active_names)
    if using_modifiers:
        is_active = False
        active_names = ()
        if not is_error and composite_value is not None and composite_value > activation_target:
            is_active = True
            active_names = ("composite-metric",)
    if triggers and all(t.resource for t in triggers) and not is_error:
        is_active = True
    return ScaledObjectState(is_active, is_error, active_names, fallback_active)
