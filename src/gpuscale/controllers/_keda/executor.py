"""KEDA's scale executor: what one polling tick does to a ScaledObject's target.

Follows ``pkg/scaling/executor/scale_scaledobjects.go`` (RequestScale, scaleToZeroOrIdle,
scaleFromZeroOrIdle, handlePaused, getIdleOrMinimumReplicaCount), the defaults in
``pkg/scaling/executor/scale_executor.go`` and the annotation helpers in
``apis/keda/v1alpha1/scaledobject_types.go`` (NeedToBePausedByAnnotation,
NeedToPauseScaleIn/Out, NeedToForceActivation, getBoolAnnotation), at kedacore/keda
8b4f083 (v2.20.1-117).

Between 0 and the HPA's minimum (or the idle count) KEDA itself writes the replica
count; above that the HPA owns it. Time is a float of seconds; the caller owns the
clock. KEDA keeps ``status.lastActiveTime`` and ``metadata.creationTimestamp`` at
one-second precision (metav1.Time), so a caller replaying a cluster exactly should pass
them floored to whole seconds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gpuscale._gomath import GoSyntaxError
from gpuscale.controllers._keda.goparse import parse_go_bool, parse_go_int

__all__ = [
    "DEFAULT_COOLDOWN_PERIOD",
    "DEFAULT_INITIAL_COOLDOWN_PERIOD",
    "FORCE_ACTIVATION_ANNOTATION",
    "PAUSED_ANNOTATION",
    "PAUSED_REPLICAS_ANNOTATION",
    "PAUSED_SCALE_IN_ANNOTATION",
    "PAUSED_SCALE_OUT_ANNOTATION",
    "ScaleRequest",
    "bool_annotation",
    "is_paused",
    "paused_replica_count",
    "request_scale",
]

DEFAULT_COOLDOWN_PERIOD = 300
DEFAULT_INITIAL_COOLDOWN_PERIOD = 0
PAUSED_ANNOTATION = "autoscaling.keda.sh/paused"
PAUSED_REPLICAS_ANNOTATION = "autoscaling.keda.sh/paused-replicas"
PAUSED_SCALE_IN_ANNOTATION = "autoscaling.keda.sh/paused-scale-in"
PAUSED_SCALE_OUT_ANNOTATION = "autoscaling.keda.sh/paused-scale-out"
FORCE_ACTIVATION_ANNOTATION = "autoscaling.keda.sh/force-activation"


def bool_annotation(annotations: Mapping[str, str] | None, key: str) -> bool:
    """getBoolAnnotation: absent is false; a value ParseBool rejects counts as true."""
    if not annotations or key not in annotations:
        return False
    try:
        return parse_go_bool(annotations[key])
    except GoSyntaxError:
        return True


def paused_replica_count(annotations: Mapping[str, str] | None) -> int | None:
    """GetPausedReplicaCount: the ``paused-replicas`` annotation as an int32, None when absent;
    ``ValueError`` when it is not an integer (the controller then reports an error)."""
    if not annotations or PAUSED_REPLICAS_ANNOTATION not in annotations:
        return None
    try:
        return parse_go_int(annotations[PAUSED_REPLICAS_ANNOTATION], 32)
    except GoSyntaxError:
        raise ValueError(
            f"{PAUSED_REPLICAS_ANNOTATION} must be an integer, "
            f"got {annotations[PAUSED_REPLICAS_ANNOTATION]!r}"
        ) from None


def is_paused(annotations: Mapping[str, str] | None) -> bool:
    """NeedToBePausedByAnnotation: ``paused-replicas`` present (any value), or ``paused`` true."""
    if annotations and PAUSED_REPLICAS_ANNOTATION in annotations:
        return True
    return bool_annotation(annotations, PAUSED_ANNOTATION)


@dataclass(frozen=True)
class ScaleRequest:
    """The outcome of one RequestScale call."""

    replicas: int
    """The target's replica count after the tick (unchanged unless ``scaled``)."""
    scaled: bool
    """Whether KEDA wrote the scale subresource."""
    active: bool
    """The ScaledObject's Active condition (False when the tick returned early, paused)."""
    last_active_time: float | None
    """``now`` when the tick refreshed ``status.lastActiveTime``, else the value passed in."""
    action: str
    """Which branch ran: paused, activate, activate-blocked (paused-scale-out),
    partial-error, active, fallback-pending, trigger-error, deactivate, cooldown,
    deactivate-blocked (paused-scale-in), raise-to-min, none."""
    active_reason: str = ""
    """The Active condition's reason: ScalerActive, ScalerNotActive or ScalerCooldown."""
    ready: str = "True"
    """The Ready condition's status: True, False (TriggerError) or Unknown
    (PartialTriggerError)."""
    ready_reason: str = "ScaledObjectReady"
    """The Ready condition's reason."""


def request_scale(
    *,
    current_replicas: int,
    is_active: bool,
    is_error: bool,
    now: float,
    min_replica_count: int | None = None,
    max_replica_count: int | None = None,
    idle_replica_count: int | None = None,
    cooldown_period: int | None = None,
    initial_cooldown_period: int | None = None,
    fallback: Mapping[str, object] | None = None,
    last_active_time: float | None = None,
    creation_time: float | None = None,
    annotations: Mapping[str, str] | None = None,
) -> ScaleRequest:
    """RequestScale: one polling tick for a ScaledObject whose target has
    ``current_replicas`` (its ``spec.replicas``) and whose triggers are ``is_active`` /
    ``is_error`` (getScaledObjectState's aggregate).

    Paused objects are left alone. When active (or ``force-activation``): a target at 0, or
    below ``minReplicaCount`` in idle mode, is raised to ``max(minReplicaCount, 1)``
    (blocked by ``paused-scale-out``); a partial error changes nothing and does not refresh
    ``lastActiveTime``; otherwise ``lastActiveTime`` becomes ``now`` and the HPA owns the
    count. When inactive: an error with a non-zero ``fallback.replicas`` waits for the
    fallback; an error without fallback freezes; a target above the idle count (idle mode)
    or above 0 with ``minReplicaCount`` 0 goes to idle/min once ``cooldownPeriod``
    (default 300 s) has passed since ``lastActiveTime`` (or ``initialCooldownPeriod``,
    default 0, since creation when never active; ``creation_time`` None means long ago),
    blocked by ``paused-scale-in``; a target below ``minReplicaCount`` without idle mode is
    raised to it. ``max_replica_count`` is not read by RequestScale (the HPA applies it).
    """
    del max_replica_count
    if is_paused(annotations):
        return ScaleRequest(current_replicas, False, False, last_active_time, "paused")
    minimum = min_replica_count if min_replica_count is not None else 0
    if is_active or bool_annotation(annotations, FORCE_ACTIVATION_ANNOTATION):
        if (idle_replica_count is not None and current_replicas < minimum) or current_replicas == 0:
            if bool_annotation(annotations, PAUSED_SCALE_OUT_ANNOTATION):
                return ScaleRequest(
                    current_replicas,
                    False,
                    True,
                    last_active_time,
                    "activate-blocked",
                    "ScalerActive",
                )
            target = minimum if minimum > 0 else 1
            return ScaleRequest(target, True, True, now, "activate", "ScalerActive")
        if is_error:
            return ScaleRequest(
                current_replicas,
                False,
                True,
                last_active_time,
                "partial-error",
                "ScalerActive",
                ready="Unknown",
                ready_reason="PartialTriggerError",
            )
        return ScaleRequest(current_replicas, False, True, now, "active", "ScalerActive")
    fallback_replicas = (fallback.get("replicas") or 0) if fallback is not None else 0
    if is_error and fallback is not None and fallback_replicas != 0:
        return ScaleRequest(
            current_replicas, False, False, last_active_time, "fallback-pending", "ScalerNotActive"
        )
    if is_error and fallback is None:
        return ScaleRequest(
            current_replicas,
            False,
            False,
            last_active_time,
            "trigger-error",
            "ScalerNotActive",
            ready="False",
            ready_reason="TriggerError",
        )
    if (idle_replica_count is not None and current_replicas > idle_replica_count) or (
        current_replicas > 0 and minimum == 0
    ):
        if bool_annotation(annotations, PAUSED_SCALE_IN_ANNOTATION):
            return ScaleRequest(
                current_replicas,
                False,
                False,
                last_active_time,
                "deactivate-blocked",
                "ScalerNotActive",
            )
        if last_active_time is None:
            initial = (
                initial_cooldown_period
                if initial_cooldown_period is not None
                else DEFAULT_INITIAL_COOLDOWN_PERIOD
            )
            cooled = creation_time is None or creation_time + initial < now
        else:
            cooldown = cooldown_period if cooldown_period is not None else DEFAULT_COOLDOWN_PERIOD
            cooled = last_active_time + cooldown < now
        if not cooled:
            return ScaleRequest(
                current_replicas, False, False, last_active_time, "cooldown", "ScalerCooldown"
            )
        if idle_replica_count is not None:
            target = idle_replica_count
        else:
            target = min_replica_count if min_replica_count is not None else 0
        return ScaleRequest(target, True, False, last_active_time, "deactivate", "ScalerNotActive")
    if idle_replica_count is None and current_replicas < minimum:
        return ScaleRequest(
            minimum, True, False, last_active_time, "raise-to-min", "ScalerNotActive"
        )
    return ScaleRequest(current_replicas, False, False, last_active_time, "none", "ScalerNotActive")
