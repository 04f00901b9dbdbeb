"""KEDA's fallback: counting a trigger's failures and, past the threshold, a synthetic metric.

Follows ``pkg/fallback/fallback.go`` (GetMetricsWithFallback, HasValidFallback,
doFallback, fallbackExceededThreshold, and the health updates of ScaledObjectHandler) at
kedacore/keda 8b4f083 (v2.20.1-117). The function is called wherever KEDA reads a
trigger: on every polling tick (since v2.19) and on every HPA metric read. Health is a
map ``{metricName: {"numberOfFailures": n, "status": "Happy" | "Failing"}}`` as in
``status.health``; the functions here take it and return the new one, never mutate it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gpuscale._gomath import GoSyntaxError, go_float_to_int64, parse_go_float
from gpuscale.controllers._keda.errors import FallbackError
from gpuscale.controllers._keda.goparse import parse_go_int
from gpuscale.controllers._keda.modifiers import COMPOSITE_METRIC_NAME

__all__ = [
    "FALLBACK_BEHAVIORS",
    "FallbackResult",
    "fallback_exceeded_threshold",
    "fallback_metric",
    "has_valid_fallback",
    "metrics_with_fallback",
]

FALLBACK_BEHAVIORS = (
    "static",
    "currentReplicas",
    "currentReplicasIfHigher",
    "currentReplicasIfLower",
    "scalingModifiers",
)

Health = dict[str, dict[str, object]]


def _int(value: object, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def has_valid_fallback(
    fallback: Mapping[str, object], scaling_modifiers: Mapping[str, object] | None = None
) -> bool:
    """HasValidFallback: ``failureThreshold`` and ``replicas`` not negative and, when
    scalingModifiers are used, a target that parses as an integer above 0 (``ParseInt``:
    a fractional target such as "2.5" disables fallback)."""
    modifiers_ok = True
    if scaling_modifiers is not None:
        try:
            modifiers_ok = parse_go_int(str(scaling_modifiers.get("target") or "")) > 0
        except GoSyntaxError:
            modifiers_ok = False
    return (
        _int(fallback.get("failureThreshold")) >= 0
        and _int(fallback.get("replicas")) >= 0
        and modifiers_ok
    )


def fallback_exceeded_threshold(
    health: Mapping[str, Mapping[str, object]], failure_threshold: int
) -> bool:
    """fallbackExceededThreshold: whether the Fallback condition is True (any Failing metric
    with more failures than the threshold)."""
    return any(
        entry.get("status") == "Failing" and _int(entry.get("numberOfFailures")) > failure_threshold
        for entry in health.values()
    )


@dataclass(frozen=True)
class FallbackResult:
    """One GetMetricsWithFallback call that did not return an error."""

    value: float
    """The metric value handed on (the scaler's, the fallback's, or -1 as the placeholder
    KEDA sends for ``behavior: scalingModifiers``)."""
    metric_name: str
    """The metric's name (``composite-metric`` for a fallback under scalingModifiers)."""
    health: Health
    """The health map after the call."""
    fallback_active: bool
    """Whether the value is a fallback metric (this also makes the trigger count as active)."""


def _copy(health: Mapping[str, Mapping[str, object]] | None) -> Health:
    return {name: dict(entry) for name, entry in (health or {}).items()}


def fallback_metric(
    *,
    value: float | None,
    error: str | None,
    metric_name: str,
    target_type: str,
    target: float,
    fallback: Mapping[str, object] | None,
    health: Mapping[str, Mapping[str, object]] | None,
    current_replicas: int | None,
    ready_replicas: int | None = None,
    scaling_modifiers: Mapping[str, object] | None = None,
) -> FallbackResult:
    """GetMetricsWithFallback with everything it returns.

    ``value``/``error`` are the scaler's result (a None error is a success).
    ``current_replicas`` is the scale target's ``spec.replicas`` as KEDA reads it (None: the
    read fails); ``ready_replicas`` the Running and Ready pods, needed only for a ``Value``
    target; ``scaling_modifiers`` the ScaledObject's ``advanced.scalingModifiers`` when it
    uses them (the fallback then targets ``composite-metric``).

    Raises ``FallbackError`` (with ``.health``) where upstream returns an error: no or an
    invalid fallback, failures not yet above ``failureThreshold``, or a fallback that
    cannot be computed.
    """
    new_health = _copy(health)
    configured = fallback is not None and has_valid_fallback(fallback, scaling_modifiers)
    if error is None:
        if configured:
            new_health[metric_name] = {"numberOfFailures": 0, "status": "Happy"}
        return FallbackResult(
            value if value is not None else 0.0, metric_name, new_health, fallback_active=False
        )
    if fallback is None or not configured:
        raise FallbackError(error, new_health)
    failures = _int(new_health.get(metric_name, {}).get("numberOfFailures")) + 1
    new_health[metric_name] = {"numberOfFailures": failures, "status": "Failing"}
    if failures <= _int(fallback.get("failureThreshold")):
        raise FallbackError(error, new_health)
    behavior = fallback.get("behavior") or ""
    if behavior == "scalingModifiers":
        return FallbackResult(-1.0, metric_name, new_health, fallback_active=False)
    if behavior != "static" and current_replicas is None:
        raise FallbackError(error, new_health)
    fallback_replicas = _int(fallback.get("replicas"))
    current = current_replicas or 0
    if behavior == "currentReplicas":
        replicas = float(current)
    elif behavior == "currentReplicasIfHigher":
        replicas = float(max(current, fallback_replicas))
    elif behavior == "currentReplicasIfLower":
        replicas = float(min(current, fallback_replicas))
    else:
        replicas = float(fallback_replicas)
    metric_type = (
        (scaling_modifiers.get("metricType") or "")
        if scaling_modifiers is not None
        else target_type
    )
    if metric_type == "Value":
        if not ready_replicas:
            raise FallbackError("error performing fallback", new_health)
        replicas /= float(ready_replicas)
    if scaling_modifiers is not None:
        try:
            normalisation = parse_go_float(str(scaling_modifiers.get("target") or ""))
        except GoSyntaxError:
            normalisation = 0.0
        metric_name = COMPOSITE_METRIC_NAME
    else:
        normalisation = target if target_type in ("AverageValue", "Value") else 0.0
    milli = go_float_to_int64(normalisation * 1000 * replicas)
    return FallbackResult(milli / 1000, metric_name, new_health, fallback_active=True)


def metrics_with_fallback(
    *,
    value: float | None,
    error: str | None,
    metric_name: str,
    target_type: str,
    target: float,
    fallback: Mapping[str, object] | None,
    health: Mapping[str, Mapping[str, object]],
    current_replicas: int | None,
    ready_replicas: int | None = None,
    scaling_modifiers: Mapping[str, object] | None = None,
) -> tuple[float, Health]:
    """GetMetricsWithFallback as the conformance contract names it: the value handed on
    and the new health map; ``FallbackError`` where upstream returns the scaler's error.
    See ``fallback_metric`` for the arguments and for whether the fallback is active."""
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
        scaling_modifiers=scaling_modifiers,
    )
    return result.value, result.health
