"""KEDA's polling tick (scaleExecutor.RequestScale) and the pause/force annotations.

Cases ported from kedacore/keda 8b4f083 ``pkg/scaling/executor/scale_scaledobjects_test.go``
(every RequestScale test; the HPA-health tests keep their names and check the decisions
they imply: no scale call, Ready/Active conditions) and
``apis/keda/v1alpha1/scaledobject_types_test.go`` (TestHasPausedAnnotation,
TestNeedToBePausedByAnnotation). Upstream's fixtures leave ``status.lastActiveTime``
unset and ``creationTimestamp`` at Go's zero time (long ago), which is ``None`` here.
Further cases cover the cooldown arithmetic the upstream tests do not reach, and
hypothesis checks the invariants RequestScale guarantees.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuscale.controllers.keda import (
    FORCE_ACTIVATION_ANNOTATION,
    PAUSED_ANNOTATION,
    PAUSED_REPLICAS_ANNOTATION,
    PAUSED_SCALE_IN_ANNOTATION,
    PAUSED_SCALE_OUT_ANNOTATION,
    ScaleRequest,
    is_paused,
    paused_replica_count,
    request_scale,
)

from ._upstream import KEDA_EXECUTOR_TEST, KEDA_TYPES_TEST, upstream_params

NOW = 1_000_000.0


def tick(**kwargs: Any) -> ScaleRequest:
    return request_scale(now=NOW, **kwargs)


# scale_scaledobjects_test.go: (test, inputs, expected replicas,
# scale written, Active, lastActiveTime set)
UPSTREAM = [
    (
        "TestScaleToMinReplicasWhenNotActive",
        {"min_replica_count": 0, "current_replicas": 10, "is_active": False, "is_error": False},
        0,
        True,
        False,
        None,
    ),
    (
        "TestScaleToMinReplicasFromLowerInitialReplicaCount",
        {"min_replica_count": 5, "current_replicas": 1, "is_active": False, "is_error": False},
        5,
        True,
        False,
        None,
    ),
    (
        "TestScaleFromMinReplicasWhenActive",
        {"min_replica_count": 0, "current_replicas": 0, "is_active": True, "is_error": False},
        1,
        True,
        True,
        True,
    ),
    (
        "TestScaleToIdleReplicasWhenNotActive",
        {
            "min_replica_count": 5,
            "idle_replica_count": 0,
            "current_replicas": 10,
            "is_active": False,
            "is_error": False,
        },
        0,
        True,
        False,
        None,
    ),
    (
        "TestScaleFromIdleToMinReplicasWhenActive",
        {
            "min_replica_count": 5,
            "idle_replica_count": 0,
            "current_replicas": 0,
            "is_active": True,
            "is_error": False,
        },
        5,
        True,
        True,
        True,
    ),
    (
        "TestScaleToPausedReplicasCount",
        {
            "current_replicas": 2,
            "is_active": True,
            "is_error": False,
            "annotations": {PAUSED_REPLICAS_ANNOTATION: "0"},
        },
        2,
        False,
        False,
        False,
    ),
    (
        "TestEventWitTriggerInfo",
        {
            "min_replica_count": 5,
            "idle_replica_count": 0,
            "current_replicas": 2,
            "is_active": True,
            "is_error": False,
        },
        5,
        True,
        True,
        True,
    ),
    (
        "TestNoScaleToMinReplicasWhenNotActiveAndPauseScaleInAnnotationSet",
        {
            "min_replica_count": 0,
            "current_replicas": 10,
            "is_active": False,
            "is_error": False,
            "annotations": {PAUSED_SCALE_IN_ANNOTATION: "true"},
        },
        10,
        False,
        False,
        None,
    ),
    (
        "TestNoScaleToIdleReplicasWhenNotActiveAndPauseScaleInAnnotationSet",
        {
            "min_replica_count": 5,
            "idle_replica_count": 0,
            "current_replicas": 10,
            "is_active": False,
            "is_error": False,
            "annotations": {PAUSED_SCALE_IN_ANNOTATION: "true"},
        },
        10,
        False,
        False,
        None,
    ),
    (
        "TestScaleFromMinReplicasWhenActivationForced",
        {
            "min_replica_count": 0,
            "current_replicas": 0,
            "is_active": False,
            "is_error": False,
            "annotations": {FORCE_ACTIVATION_ANNOTATION: "true"},
        },
        1,
        True,
        True,
        True,
    ),
    (
        "TestNoScaleFromMinReplicasWhenActiveAndPausedScaleOutAnnotationSet",
        {
            "min_replica_count": 0,
            "current_replicas": 0,
            "is_active": True,
            "is_error": False,
            "annotations": {PAUSED_SCALE_OUT_ANNOTATION: "true"},
        },
        0,
        False,
        True,
        False,
    ),
    (
        "TestNoScaleFromIdleReplicasToMinReplicasWhenActiveAndPausedScaleOutAnnotationSet",
        {
            "min_replica_count": 5,
            "idle_replica_count": 0,
            "current_replicas": 0,
            "is_active": True,
            "is_error": False,
            "annotations": {PAUSED_SCALE_OUT_ANNOTATION: "true"},
        },
        0,
        False,
        True,
        False,
    ),
    # newSOWithHPA(): minReplicaCount 1, target at 1 replica; the HPA's health only sets
    # conditions, so these check that nothing is scaled.
    (
        "TestRequestScale_AllHealthy_HPAHealthy",
        {"min_replica_count": 1, "current_replicas": 1, "is_active": True, "is_error": False},
        1,
        False,
        True,
        True,
    ),
    (
        "TestRequestScale_ScalerError_HPAHealthy",
        {"min_replica_count": 1, "current_replicas": 1, "is_active": False, "is_error": True},
        1,
        False,
        False,
        None,
    ),
    (
        "TestRequestScale_PartialError_HPAHealthy",
        {"min_replica_count": 1, "current_replicas": 1, "is_active": True, "is_error": True},
        1,
        False,
        True,
        False,
    ),
    (
        "TestRequestScale_NoError_HPAUnhealthy",
        {"min_replica_count": 1, "current_replicas": 1, "is_active": True, "is_error": False},
        1,
        False,
        True,
        True,
    ),
    (
        "TestRequestScale_ScalerError_HPAUnhealthy",
        {"min_replica_count": 1, "current_replicas": 1, "is_active": False, "is_error": True},
        1,
        False,
        False,
        None,
    ),
    (
        "TestRequestScale_TransientHPAGap_ReadyStaysTrue",
        {"min_replica_count": 1, "current_replicas": 1, "is_active": True, "is_error": False},
        1,
        False,
        True,
        True,
    ),
    (
        "TestRequestScale_HPAHealthy_HPAActiveTrue",
        {"min_replica_count": 1, "current_replicas": 1, "is_active": True, "is_error": False},
        1,
        False,
        True,
        True,
    ),
    (
        "TestRequestScale_HPAScalingDisabled_HPAActiveTrueWithDistinctReason",
        {"min_replica_count": 1, "current_replicas": 1, "is_active": True, "is_error": False},
        1,
        False,
        True,
        True,
    ),
    (
        "TestRequestScale_ScalerErrorWithFallback_HPAHealthy",
        {
            "min_replica_count": 1,
            "current_replicas": 1,
            "is_active": False,
            "is_error": True,
            "fallback": {"failureThreshold": 0, "replicas": 5},
        },
        1,
        False,
        False,
        None,
    ),
]


@pytest.mark.upstream(KEDA_EXECUTOR_TEST)
@pytest.mark.parametrize("case", UPSTREAM, ids=[c[0] for c in UPSTREAM])
def test_upstream_RequestScale(case: tuple[Any, ...]) -> None:
    _, inputs, replicas, scaled, active, refreshed = case
    result = tick(**inputs)
    assert result.replicas == replicas
    assert result.scaled is scaled
    assert result.active is active
    if refreshed is not None:
        assert (result.last_active_time == NOW) is refreshed


@pytest.mark.parametrize(
    ("test", "inputs", "ready", "reason"),
    [
        (
            "TestRequestScale_AllHealthy_HPAHealthy",
            {"is_active": True, "is_error": False},
            "True",
            "ScaledObjectReady",
        ),
        (
            "TestRequestScale_ScalerError_HPAHealthy",
            {"is_active": False, "is_error": True},
            "False",
            "TriggerError",
        ),
        (
            "TestRequestScale_PartialError_HPAHealthy",
            {"is_active": True, "is_error": True},
            "Unknown",
            "PartialTriggerError",
        ),
        (
            "TestRequestScale_ScalerError_HPAUnhealthy",
            {"is_active": False, "is_error": True},
            "False",
            "TriggerError",
        ),
        (
            "TestRequestScale_ScalerErrorWithFallback_HPAHealthy",
            {
                "is_active": False,
                "is_error": True,
                "fallback": {"failureThreshold": 0, "replicas": 5},
            },
            "True",
            "ScaledObjectReady",
        ),
    ],
)
def test_ready_condition(test: str, inputs: dict[str, Any], ready: str, reason: str) -> None:
    result = tick(min_replica_count=1, current_replicas=1, **inputs)
    assert (result.ready, result.ready_reason) == (ready, reason)


def test_TestScaleFromMinReplicasWhenActivationForced_reason() -> None:
    result = tick(
        min_replica_count=0,
        current_replicas=0,
        is_active=False,
        is_error=False,
        annotations={FORCE_ACTIVATION_ANNOTATION: "true"},
    )
    assert result.active_reason == "ScalerActive"
    assert result.action == "activate"


# scaledobject_types_test.go TestHasPausedAnnotation / TestNeedToBePausedByAnnotation
@pytest.mark.parametrize(
    ("name", "annotations", "paused"),
    upstream_params(
        [
            ("No annotations", None, False),
            ("PausedAnnotation with true value", {PAUSED_ANNOTATION: "true"}, True),
            ("PausedAnnotation with false value", {PAUSED_ANNOTATION: "false"}, False),
            ("PausedAnnotation with invalid value", {PAUSED_ANNOTATION: "invalid"}, True),
            (
                "PausedReplicasAnnotation with value and status set",
                {PAUSED_REPLICAS_ANNOTATION: "5"},
                True,
            ),
            (
                "PausedReplicasAnnotation with value but no status set",
                {PAUSED_REPLICAS_ANNOTATION: "5"},
                True,
            ),
            (
                "Both annotations set",
                {PAUSED_ANNOTATION: "true", PAUSED_REPLICAS_ANNOTATION: "5"},
                True,
            ),
            (
                "Both annotations set, PausedAnnotation false",
                {PAUSED_ANNOTATION: "false", PAUSED_REPLICAS_ANNOTATION: "5"},
                True,
            ),
            (
                "Has other annotations but not paused ones",
                {"some-other-annotation": "value"},
                False,
            ),
        ],
        KEDA_TYPES_TEST,
        "TestNeedToBePausedByAnnotation",
        elsewhere={
            "Has other annotations but not paused ones": (
                KEDA_TYPES_TEST,
                "TestHasPausedAnnotation",
            )
        },
    ),
)
def test_TestNeedToBePausedByAnnotation(
    name: str, annotations: dict[str, str] | None, paused: bool
) -> None:
    assert is_paused(annotations) is paused
    result = tick(current_replicas=3, is_active=True, is_error=False, annotations=annotations)
    assert (result.action == "paused") is paused


@pytest.mark.parametrize(
    ("annotation", "value", "blocks"),
    [
        (PAUSED_SCALE_IN_ANNOTATION, "true", True),
        (PAUSED_SCALE_IN_ANNOTATION, "false", False),
        (PAUSED_SCALE_IN_ANNOTATION, "not-a-bool", True),
        (PAUSED_SCALE_IN_ANNOTATION, "0", False),
    ],
)
def test_getBoolAnnotation_non_booleans_count_as_true(
    annotation: str, value: str, blocks: bool
) -> None:
    result = tick(
        min_replica_count=0,
        current_replicas=4,
        is_active=False,
        is_error=False,
        annotations={annotation: value},
    )
    assert (result.replicas == 4) is blocks


@pytest.mark.parametrize(
    ("last_active_age", "cooldown", "scaled"),
    [
        (301.0, None, True),
        (300.0, None, False),
        (299.0, None, False),
        (30.0, 0, True),
        (0.0, 0, False),
        (61.0, 60, True),
        (60.0, 60, False),
    ],
)
def test_cooldown_is_strict_after_last_active_time(
    last_active_age: float, cooldown: int | None, scaled: bool
) -> None:
    """``LastActiveTime.Add(cooldownPeriod).Before(now)``: default 300 s, strictly after."""
    result = tick(
        min_replica_count=0,
        current_replicas=3,
        is_active=False,
        is_error=False,
        cooldown_period=cooldown,
        last_active_time=NOW - last_active_age,
    )
    assert result.scaled is scaled
    assert result.replicas == (0 if scaled else 3)
    assert result.active_reason == ("ScalerNotActive" if scaled else "ScalerCooldown")


@pytest.mark.parametrize(
    ("created_age", "initial", "scaled"),
    [
        (0.0, None, False),
        (1.0, None, True),
        (119.0, 120, False),
        (120.0, 120, False),
        (121.0, 120, True),
    ],
)
def test_initial_cooldown_after_creation_when_never_active(
    created_age: float, initial: int | None, scaled: bool
) -> None:
    """``CreationTimestamp.Add(initialCooldownPeriod).Before(now)`` while LastActiveTime is
    nil (e2e initial_delay_cooldownperiod: held at 1 replica with initialCooldownPeriod 120)."""
    result = tick(
        min_replica_count=0,
        current_replicas=1,
        is_active=False,
        is_error=False,
        initial_cooldown_period=initial,
        creation_time=NOW - created_age,
        cooldown_period=5,
    )
    assert result.scaled is scaled


def test_cooldown_applies_to_idle_mode_too() -> None:
    held = tick(
        min_replica_count=3,
        idle_replica_count=0,
        current_replicas=3,
        is_active=False,
        is_error=False,
        last_active_time=NOW - 10,
        cooldown_period=60,
    )
    assert (held.replicas, held.action) == (3, "cooldown")
    dropped = tick(
        min_replica_count=3,
        idle_replica_count=0,
        current_replicas=3,
        is_active=False,
        is_error=False,
        last_active_time=NOW - 61,
        cooldown_period=60,
    )
    assert (dropped.replicas, dropped.action) == (0, "deactivate")


def test_min_one_never_reads_cooldown() -> None:
    """With minReplicaCount >= 1 and no idle mode the inactive branch never scales down:
    the HPA's own scale-down (300 s window by default) brings N back to the minimum."""
    for age in (0.0, 1e6):
        result = tick(
            min_replica_count=1,
            current_replicas=7,
            is_active=False,
            is_error=False,
            last_active_time=NOW - age,
            cooldown_period=0,
        )
        assert (result.replicas, result.scaled, result.action) == (7, False, "none")


def test_scale_to_zero_jumps_from_any_count() -> None:
    """KEDA writes 0 directly from N (no HPA scale-down policy applies)."""
    result = tick(
        min_replica_count=0,
        current_replicas=40,
        is_active=False,
        is_error=False,
        last_active_time=NOW - 301,
    )
    assert (result.replicas, result.scaled) == (0, True)


def test_activation_goes_to_min_not_to_the_hpa_answer() -> None:
    assert (
        tick(min_replica_count=3, current_replicas=0, is_active=True, is_error=False).replicas == 3
    )
    assert (
        tick(min_replica_count=0, current_replicas=0, is_active=True, is_error=False).replicas == 1
    )


def test_partial_error_does_not_refresh_last_active_time() -> None:
    result = tick(
        min_replica_count=0,
        current_replicas=2,
        is_active=True,
        is_error=True,
        last_active_time=NOW - 50,
    )
    assert result.last_active_time == NOW - 50
    assert result.action == "partial-error"


def test_error_without_fallback_freezes_and_with_zero_fallback_falls_through() -> None:
    frozen = tick(
        min_replica_count=0,
        current_replicas=4,
        is_active=False,
        is_error=True,
        last_active_time=NOW - 999,
    )
    assert (frozen.replicas, frozen.action) == (4, "trigger-error")
    pending = tick(
        min_replica_count=0,
        current_replicas=4,
        is_active=False,
        is_error=True,
        fallback={"failureThreshold": 3, "replicas": 2},
        last_active_time=NOW - 999,
    )
    assert (pending.replicas, pending.action) == (4, "fallback-pending")
    zero = tick(
        min_replica_count=0,
        current_replicas=4,
        is_active=False,
        is_error=True,
        fallback={"failureThreshold": 3, "replicas": 0},
        last_active_time=NOW - 999,
    )
    assert (zero.replicas, zero.action) == (0, "deactivate")


def test_max_replica_count_is_not_read() -> None:
    """RequestScale never clamps to maxReplicaCount (the HPA does)."""
    result = tick(
        min_replica_count=5, max_replica_count=3, current_replicas=0, is_active=True, is_error=False
    )
    assert result.replicas == 5


ANNOTATION_VALUES = st.sampled_from(["true", "false", "1", "0", "yes", "", "5"])
ANNOTATIONS = st.dictionaries(
    st.sampled_from(
        [
            PAUSED_ANNOTATION,
            PAUSED_REPLICAS_ANNOTATION,
            PAUSED_SCALE_IN_ANNOTATION,
            PAUSED_SCALE_OUT_ANNOTATION,
            FORCE_ACTIVATION_ANNOTATION,
            "other",
        ]
    ),
    ANNOTATION_VALUES,
)


AGES = st.one_of(st.none(), st.integers(0, 2000).map(lambda age: NOW - age))
FALLBACKS = st.one_of(
    st.none(),
    st.fixed_dictionaries({"failureThreshold": st.integers(0, 5), "replicas": st.integers(0, 10)}),
)
RAW_TICKS = st.fixed_dictionaries(
    {
        "current_replicas": st.integers(0, 50),
        "is_active": st.booleans(),
        "is_error": st.booleans(),
        "min_replica_count": st.one_of(st.none(), st.integers(0, 20)),
        "max_replica_count": st.one_of(st.none(), st.integers(1, 60)),
        "idle_replica_count": st.one_of(st.none(), st.integers(0, 19)),
        "cooldown_period": st.one_of(st.none(), st.integers(0, 600)),
        "initial_cooldown_period": st.one_of(st.none(), st.integers(0, 600)),
        "fallback": FALLBACKS,
        "last_active_time": AGES,
        "creation_time": AGES,
        "annotations": ANNOTATIONS,
    }
)


def _admitted(inputs: dict[str, Any]) -> dict[str, Any]:
    """Keep only what the webhook admits: idle below the (HPA-adjusted) minimum, min <= max."""
    minimum, idle = inputs["min_replica_count"], inputs["idle_replica_count"]
    if idle is not None and (minimum is None or idle >= max(minimum, 1)):
        inputs = {**inputs, "idle_replica_count": None}
    if inputs["max_replica_count"] is not None and minimum is not None:
        inputs = {**inputs, "max_replica_count": max(inputs["max_replica_count"], minimum, 1)}
    return inputs


TICKS = RAW_TICKS.map(_admitted)


def ticks() -> st.SearchStrategy[dict[str, Any]]:
    return TICKS


@given(ticks())
def test_property_a_paused_object_is_never_scaled(inputs: dict[str, Any]) -> None:
    if not is_paused(inputs["annotations"]):
        inputs["annotations"] = {**inputs["annotations"], PAUSED_ANNOTATION: "true"}
    result = tick(**inputs)
    assert not result.scaled
    assert result.replicas == inputs["current_replicas"]
    assert result.active is False
    assert result.last_active_time == inputs["last_active_time"]


@given(ticks())
def test_property_what_keda_writes_stays_within_its_own_bounds(inputs: dict[str, Any]) -> None:
    """KEDA writes only 0/idle, its minimum, or 1; never above max(min, 1), and it never
    scales down while active nor up while inactive (apart from the raise-to-min fix-up)."""
    result = tick(**inputs)
    minimum = inputs["min_replica_count"] or 0
    if not result.scaled:
        assert result.replicas == inputs["current_replicas"]
        return
    allowed = {max(minimum, 1), minimum, 0}
    if inputs["idle_replica_count"] is not None:
        allowed.add(inputs["idle_replica_count"])
    assert result.replicas in allowed
    assert result.replicas <= max(minimum, 1)
    if result.active:
        assert result.replicas > inputs["current_replicas"]


@given(ticks())
def test_property_active_and_unpaused_keeps_at_least_one_replica(inputs: dict[str, Any]) -> None:
    """Active (or forced), not paused, scale-out not paused: the count after the tick is at
    least max(min, 1) when the target was at 0 or below min in idle mode, and KEDA never
    lowers it. (The count is not capped at max: RequestScale does not read max.)"""
    annotations = {
        k: v
        for k, v in inputs["annotations"].items()
        if k not in (PAUSED_ANNOTATION, PAUSED_REPLICAS_ANNOTATION, PAUSED_SCALE_OUT_ANNOTATION)
    }
    inputs = {**inputs, "annotations": annotations, "is_active": True}
    result = tick(**inputs)
    assert result.replicas >= inputs["current_replicas"]
    assert result.replicas >= 1
    minimum = inputs["min_replica_count"] or 0
    if inputs["current_replicas"] == 0 or (
        inputs["idle_replica_count"] is not None and inputs["current_replicas"] < minimum
    ):
        assert result.replicas == max(minimum, 1)
        assert result.last_active_time == NOW


@given(ticks())
def test_property_within_min_max_when_started_within_and_unpaused(inputs: dict[str, Any]) -> None:
    """Starting inside [min, max] with min >= 1 and no idle mode, a tick keeps the count in
    [min, max]: KEDA leaves such a target to the HPA."""
    minimum = max(inputs["min_replica_count"] or 1, 1)
    maximum = max(inputs["max_replica_count"] or 100, minimum)
    current = min(max(inputs["current_replicas"], minimum), maximum)
    result = tick(
        **{
            **inputs,
            "min_replica_count": minimum,
            "max_replica_count": maximum,
            "idle_replica_count": None,
            "current_replicas": current,
        }
    )
    assert minimum <= result.replicas <= maximum
    assert not result.scaled


# scaledobject_types_test.go TestGetPausedReplicaCount
@pytest.mark.parametrize(
    ("name", "annotations", "expected"),
    upstream_params(
        [
            ("nil annotations returns nil", None, None),
            ("annotation absent returns nil", {"other-annotation": "value"}, None),
            (
                "valid integer annotation returns pointer to value",
                {PAUSED_REPLICAS_ANNOTATION: "5"},
                5,
            ),
            ("zero value annotation returns pointer to zero", {PAUSED_REPLICAS_ANNOTATION: "0"}, 0),
            (
                "invalid string annotation returns error",
                {PAUSED_REPLICAS_ANNOTATION: "not-a-number"},
                ValueError,
            ),
            ("beyond int32 returns error", {PAUSED_REPLICAS_ANNOTATION: "2147483648"}, ValueError),
        ],
        KEDA_TYPES_TEST,
        "TestGetPausedReplicaCount",
        own={"beyond int32 returns error"},
    ),
)
def test_TestGetPausedReplicaCount(
    name: str, annotations: dict[str, str] | None, expected: object
) -> None:
    if expected is ValueError:
        with pytest.raises(ValueError, match="paused-replicas"):
            paused_replica_count(annotations)
    else:
        assert paused_replica_count(annotations) == expected
