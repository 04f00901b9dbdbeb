"""KEDA's scale handler: activity from trigger results, and what the HPA reads.

Cases ported from kedacore/keda 8b4f083 ``pkg/scaling/scale_handler_test.go``
(TestCheckScaledObjectFindFirstActiveNotIgnoreOthers, TestCheckScaledObjectScalersWithError,
TestGetScaledObjectMetrics_DirectCall, TestGetScaledObjectMetrics_FromCache,
TestGetScaledObjectMetrics_ErrorDoesNotClearOtherTriggersCachedRecord,
TestGetScaledObjectStateSkipsResourceScalerActiveMetricWithModifiers) as the decisions
they assert, plus the useCachedMetrics and fallback interplay read from
getScalerState/GetScaledObjectMetrics.
"""

from __future__ import annotations

import pytest

from gpuscale.controllers.keda import (
    FallbackError,
    MetricsRecord,
    TriggerState,
    hpa_metric_value,
    reads_scaler_live,
    scaled_object_state,
)

from ._upstream import KEDA_SCALE_HANDLER_TEST


@pytest.mark.upstream(
    KEDA_SCALE_HANDLER_TEST, test="TestCheckScaledObjectFindFirstActiveNotIgnoreOthers"
)
def test_TestCheckScaledObjectFindFirstActiveNotIgnoreOthers() -> None:
    """One active scaler and one failing scaler: active and in error, the failing one not
    listed among the active triggers."""
    state = scaled_object_state(
        [
            TriggerState("metric-name", active=True, value=10.0),
            TriggerState("metric-name", active=False, error="some error"),
        ]
    )
    assert (state.is_active, state.is_error, state.active_triggers) == (
        True,
        True,
        ("metric-name",),
    )


@pytest.mark.upstream(KEDA_SCALE_HANDLER_TEST, test="TestCheckScaledObjectScalersWithError")
def test_TestCheckScaledObjectScalersWithError() -> None:
    state = scaled_object_state([TriggerState("metric-name", error="some error")])
    assert (state.is_active, state.is_error, state.active_triggers) == (False, True, ())


def test_an_active_trigger_with_an_error_does_not_count() -> None:
    state = scaled_object_state([TriggerState("s0-prometheus", active=True, error="boom")])
    assert (state.is_active, state.is_error) == (False, True)


def test_fallback_makes_a_trigger_active() -> None:
    state = scaled_object_state(
        [TriggerState("s0-prometheus", active=False, fallback_active=True, value=100.0)]
    )
    assert (state.is_active, state.is_error, state.fallback_active) == (True, False, True)


def test_cpu_memory_only_objects_are_always_active_unless_in_error() -> None:
    assert scaled_object_state([TriggerState("", resource=True)]).is_active
    assert not scaled_object_state(
        [TriggerState("", resource=True), TriggerState("s1-x", error="e")]
    ).is_active
    mixed = scaled_object_state(
        [TriggerState("", resource=True), TriggerState("s1-prometheus", active=False)]
    )
    assert not mixed.is_active


@pytest.mark.parametrize(
    ("composite", "activation", "error", "active"),
    [
        (3.0, 0.0, None, True),
        (0.0, 0.0, None, False),
        (5.0, 5.0, None, False),
        (5.001, 5.0, None, True),
        (9.0, 0.0, "boom", False),
    ],
)
def test_modifiers_activity_is_composite_above_activation_target(
    composite: float, activation: float, error: str | None, active: bool
) -> None:
    """With scalingModifiers each trigger's own activity is ignored and any error makes the
    object inactive (TestGetScaledObjectStateSkipsResourceScalerActiveMetricWithModifiers)."""
    triggers = [
        TriggerState("s0-a", active=False, value=composite),
        TriggerState("s1-b", active=True, error=error),
    ]
    state = scaled_object_state(
        triggers, using_modifiers=True, composite_value=composite, activation_target=activation
    )
    assert state.is_active is active


@pytest.mark.parametrize(
    ("cached", "record", "live"),
    [
        (False, None, True),
        (False, MetricsRecord(5.0, True, None), True),
        (True, None, True),
        (True, MetricsRecord(5.0, True, None), False),
    ],
)
def test_reads_scaler_live(cached: bool, record: MetricsRecord | None, live: bool) -> None:
    assert reads_scaler_live(use_cached_metrics=cached, record=record) is live


@pytest.mark.upstream(KEDA_SCALE_HANDLER_TEST, test="TestGetScaledObjectMetrics_DirectCall")
def test_TestGetScaledObjectMetrics_DirectCall() -> None:
    """Without useCachedMetrics the HPA's read queries the scaler again: the value is the
    live one, not what the poll saw."""
    read = hpa_metric_value(
        metric_name="test-metric-name",
        use_cached_metrics=False,
        record=MetricsRecord(10.0, True, None),
        live_value=12.0,
    )
    assert (read.value, read.from_cache) == (12.0, False)


@pytest.mark.upstream(KEDA_SCALE_HANDLER_TEST, test="TestGetScaledObjectMetrics_FromCache")
def test_TestGetScaledObjectMetrics_FromCache() -> None:
    read = hpa_metric_value(
        metric_name="test-metric-name2",
        use_cached_metrics=True,
        record=MetricsRecord(10.0, True, None),
        live_value=12.0,
    )
    assert (read.value, read.from_cache) == (10.0, True)


@pytest.mark.upstream(
    KEDA_SCALE_HANDLER_TEST,
    test="TestGetScaledObjectMetrics_ErrorDoesNotClearOtherTriggersCachedRecord",
)
def test_TestGetScaledObjectMetrics_ErrorDoesNotClearOtherTriggersCachedRecord() -> None:
    """The failing trigger's read errors; the cached trigger keeps serving its record."""
    with pytest.raises(FallbackError, match="metric:failing encountered error"):
        hpa_metric_value(
            metric_name="failing", use_cached_metrics=False, record=None, live_error="scaler error"
        )
    read = hpa_metric_value(
        metric_name="cached", use_cached_metrics=True, record=MetricsRecord(10.0, True, None)
    )
    assert read.value == 10.0


def test_live_value_is_handed_on_as_a_milli_quantity() -> None:
    read = hpa_metric_value(
        metric_name="s0-prometheus", use_cached_metrics=False, record=None, live_value=-3.14159
    )
    assert read.value == 0.0
    read = hpa_metric_value(
        metric_name="s0-prometheus", use_cached_metrics=False, record=None, live_value=160.00049
    )
    assert read.value == 160.0


def test_cached_error_reaches_the_hpa() -> None:
    with pytest.raises(FallbackError):
        hpa_metric_value(
            metric_name="m", use_cached_metrics=True, record=MetricsRecord(None, False, "timeout")
        )


def test_reads_count_failures_too() -> None:
    """Each HPA read passes through GetMetricsWithFallback: with threshold 3 the fourth
    failing read (polls and reads together) gets the fallback value."""
    fallback = {"failureThreshold": 3, "replicas": 4}
    health: dict[str, dict[str, object]] = {}
    for failures in (1, 2, 3):
        with pytest.raises(FallbackError) as caught:
            hpa_metric_value(
                metric_name="m",
                use_cached_metrics=False,
                record=None,
                live_error="down",
                target=80.0,
                fallback=fallback,
                health=health,
                current_replicas=1,
            )
        health = caught.value.health
        assert health["m"]["numberOfFailures"] == failures
    read = hpa_metric_value(
        metric_name="m",
        use_cached_metrics=False,
        record=None,
        live_error="down",
        target=80.0,
        fallback=fallback,
        health=health,
        current_replicas=1,
    )
    assert (read.value, read.fallback_active) == (320.0, True)


def test_cached_fallback_record_resets_health_on_the_hpa_path() -> None:
    """A poll in fallback stores the fallback metric with no error; the HPA path then runs
    fallback again on a success and resets the health to Happy (upstream behaviour)."""
    fallback = {"failureThreshold": 0, "replicas": 4}
    health = {"m": {"numberOfFailures": 5, "status": "Failing"}}
    read = hpa_metric_value(
        metric_name="m",
        use_cached_metrics=True,
        record=MetricsRecord(320.0, True, None),
        target=80.0,
        fallback=fallback,
        health=health,
        current_replicas=1,
    )
    assert read.value == 320.0
    assert read.health["m"] == {"numberOfFailures": 0, "status": "Happy"}
    assert not read.fallback_active
