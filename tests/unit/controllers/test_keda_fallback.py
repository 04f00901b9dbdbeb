"""KEDA's fallback (GetMetricsWithFallback) and its health counting.

Cases ported from kedacore/keda 8b4f083 ``pkg/fallback/fallback_test.go`` (every
``It`` of ``Describe("fallback")``, keeping its sentence as the name; the target is
createMetricSpec(n): an AverageValue of n; mockScaleAndDeployment(n) is
``current_replicas=n``). Further cases cover doFallback's Value targets, the
scalingModifiers placeholder and target, HasValidFallback and the Fallback condition.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpuscale.controllers.keda import (
    FallbackError,
    fallback_exceeded_threshold,
    fallback_metric,
    has_valid_fallback,
    metrics_with_fallback,
)

from ._upstream import KEDA_FALLBACK_TEST

NAME = "some_metric_name"


def call(**overrides: Any) -> tuple[float, dict[str, dict[str, object]]]:
    arguments: dict[str, Any] = {
        "value": None,
        "error": "some error",
        "metric_name": NAME,
        "target_type": "AverageValue",
        "target": 10.0,
        "fallback": {"failureThreshold": 3, "replicas": 10},
        "health": {NAME: {"numberOfFailures": 3, "status": "Happy"}},
        "current_replicas": 5,
    }
    arguments.update(overrides)
    return metrics_with_fallback(**arguments)


@pytest.mark.upstream(
    KEDA_FALLBACK_TEST,
    test="It",
    case="should return the expected metric when fallback is disabled",
)
def test_should_return_the_expected_metric_when_fallback_is_disabled() -> None:
    value, _ = call(value=5.0, error=None, fallback=None, health={}, target=3.0)
    assert value == 5.0


@pytest.mark.upstream(
    KEDA_FALLBACK_TEST,
    test="It",
    case=(
        "should initialise the health status on success "
        "when fallback is enabled and status is empty"
    ),
)
def test_should_initialise_the_health_status_on_success_when_fallback_is_enabled_and_status_is_empty() -> None:  # noqa: E501  # fmt: skip
    value, health = call(value=6.0, error=None, health={}, target=3.0)
    assert value == 6.0
    assert health == {NAME: {"numberOfFailures": 0, "status": "Happy"}}


@pytest.mark.upstream(
    KEDA_FALLBACK_TEST,
    test="It",
    case=(
        "should reset the health status when scaler metrics are available when fallback is enabled"
    ),
)
def test_should_reset_the_health_status_when_scaler_metrics_are_available_when_fallback_is_enabled() -> None:  # noqa: E501  # fmt: skip
    value, health = call(
        value=6.0,
        error=None,
        health={NAME: {"numberOfFailures": 5, "status": "Failing"}},
        target=3.0,
    )
    assert value == 6.0
    assert health[NAME] == {"numberOfFailures": 0, "status": "Happy"}


@pytest.mark.upstream(
    KEDA_FALLBACK_TEST,
    test="It",
    case="should not reset the health status when fallback is not enabled",
)
def test_should_not_reset_the_health_status_when_fallback_is_not_enabled() -> None:
    before = {NAME: {"numberOfFailures": 5, "status": "Failing"}}
    value, health = call(value=6.0, error=None, fallback=None, health=before, target=3.0)
    assert value == 6.0
    assert health == before


@pytest.mark.upstream(
    KEDA_FALLBACK_TEST, test="It", case="should propagate the error when fallback is disabled"
)
def test_should_propagate_the_error_when_fallback_is_disabled() -> None:
    with pytest.raises(FallbackError) as caught:
        call(fallback=None, health={}, target=3.0)
    assert str(caught.value) == "some error"
    assert caught.value.health == {}


@pytest.mark.upstream(
    KEDA_FALLBACK_TEST, test="It", case="should bump the number of failures when metrics call fails"
)
def test_should_bump_the_number_of_failures_when_metrics_call_fails() -> None:
    with pytest.raises(FallbackError) as caught:
        call(health={NAME: {"numberOfFailures": 0, "status": "Happy"}})
    assert str(caught.value) == "some error"
    assert caught.value.health == {NAME: {"numberOfFailures": 1, "status": "Failing"}}


@pytest.mark.upstream(
    KEDA_FALLBACK_TEST,
    test="It",
    case="should return a normalised metric when number of failures are beyond threshold",
)
def test_should_return_a_normalised_metric_when_number_of_failures_are_beyond_threshold() -> None:
    value, health = call()
    assert value == 100.0
    assert health == {NAME: {"numberOfFailures": 4, "status": "Failing"}}


@pytest.mark.upstream(
    KEDA_FALLBACK_TEST, test="It", case="should ignore error if we fail to update kubernetes status"
)
def test_should_ignore_error_if_we_fail_to_update_kubernetes_status() -> None:
    """The failing status patch is not an input of the pure model; the rest holds."""
    value, health = call()
    assert value == 100.0
    assert health[NAME] == {"numberOfFailures": 4, "status": "Failing"}


@pytest.mark.upstream(
    KEDA_FALLBACK_TEST,
    test="It",
    case="should return error when fallback is enabled but scaledobject has invalid parameter",
)
def test_should_return_error_when_fallback_is_enabled_but_scaledobject_has_invalid_parameter() -> (
    None
):
    with pytest.raises(FallbackError) as caught:
        call(fallback={"failureThreshold": -3, "replicas": 10})
    assert str(caught.value) == "some error"
    assert caught.value.health == {NAME: {"numberOfFailures": 3, "status": "Happy"}}


@pytest.mark.upstream(
    KEDA_FALLBACK_TEST,
    test="It",
    case="should set the fallback condition when a fallback exists in the scaled object",
)
def test_should_set_the_fallback_condition_when_a_fallback_exists_in_the_scaled_object() -> None:
    before = {
        "another metric name": {"numberOfFailures": 6, "status": "Failing"},
        NAME: {"numberOfFailures": 3, "status": "Happy"},
    }
    result = fallback_metric(
        value=None,
        error="some error",
        metric_name=NAME,
        target_type="AverageValue",
        target=10.0,
        fallback={"failureThreshold": 3, "replicas": 10},
        health=before,
        current_replicas=5,
    )
    assert result.fallback_active
    assert fallback_exceeded_threshold(result.health, 3) is True


@pytest.mark.upstream(
    KEDA_FALLBACK_TEST,
    test="It",
    case="should set the fallback condition to false if the config is invalid",
)
def test_should_set_the_fallback_condition_to_false_if_the_config_is_invalid() -> None:
    before = {
        "another metric name": {"numberOfFailures": 6, "status": "Failing"},
        NAME: {"numberOfFailures": 3, "status": "Happy"},
    }
    with pytest.raises(FallbackError):
        call(fallback={"failureThreshold": -3, "replicas": 10}, health=before)
    fallback = {"failureThreshold": -3, "replicas": 10}
    assert not has_valid_fallback(fallback)  # updateStatus skips the condition: it stays False


@pytest.mark.upstream(
    KEDA_FALLBACK_TEST,
    test="It",
    case=(
        "should use fallback replicas when current "
        "replicas is lower when behavior is 'currentReplicasIfHigher'"
    ),
)
def test_should_use_fallback_replicas_when_current_replicas_is_lower_when_behavior_is_currentReplicasIfHigher() -> None:  # noqa: E501  # fmt: skip
    value, _ = call(
        fallback={"failureThreshold": 3, "replicas": 10, "behavior": "currentReplicasIfHigher"},
        current_replicas=4,
    )
    assert value == 100.0


@pytest.mark.upstream(
    KEDA_FALLBACK_TEST,
    test="It",
    case="should use current replicas when behavior is 'currentReplicas'",
)
def test_should_use_current_replicas_when_behavior_is_currentReplicas() -> None:
    value, _ = call(
        fallback={"failureThreshold": 3, "replicas": 10, "behavior": "currentReplicas"},
        current_replicas=6,
    )
    assert value == 60.0


@pytest.mark.upstream(
    KEDA_FALLBACK_TEST, test="It", case="should ignore current replicas when behavior is 'static'"
)
def test_should_ignore_current_replicas_when_behavior_is_static() -> None:
    value, _ = call(
        fallback={"failureThreshold": 3, "replicas": 10, "behavior": "static"},
        current_replicas=None,
    )
    assert value == 100.0


@pytest.mark.parametrize(
    ("behavior", "current", "expected"),
    [
        ("currentReplicasIfHigher", 12, 120.0),
        ("currentReplicasIfLower", 4, 40.0),
        ("currentReplicasIfLower", 12, 100.0),
        ("", 7, 100.0),
        ("currentReplicas", 0, 0.0),
    ],
)
def test_behaviors(behavior: str, current: int, expected: float) -> None:
    value, _ = call(
        fallback={"failureThreshold": 3, "replicas": 10, "behavior": behavior},
        current_replicas=current,
    )
    assert value == expected


def test_failures_at_the_threshold_still_return_the_error() -> None:
    """``numberOfFailures > failureThreshold`` is strict: the failure that reaches the
    threshold returns the error; the next one falls back."""
    with pytest.raises(FallbackError) as caught:
        call(health={NAME: {"numberOfFailures": 2, "status": "Failing"}})
    assert caught.value.health[NAME]["numberOfFailures"] == 3


def test_threshold_zero_falls_back_on_the_first_failure() -> None:
    value, health = call(fallback={"failureThreshold": 0, "replicas": 2}, health={}, target=80.0)
    assert value == 160.0
    assert health[NAME] == {"numberOfFailures": 1, "status": "Failing"}


def test_non_static_behavior_fails_when_current_replicas_cannot_be_read() -> None:
    """GetCurrentReplicas failing returns the scaler's error, after the failure was counted."""
    with pytest.raises(FallbackError) as caught:
        call(fallback={"failureThreshold": 3, "replicas": 10}, current_replicas=None)
    assert caught.value.health[NAME]["numberOfFailures"] == 4


def test_value_target_divides_by_ready_pods() -> None:
    """doFallback: for a Value target the replicas are divided by the Running and Ready pods,
    so the HPA's Value arithmetic (ratio × ready pods) lands on the fallback count."""
    value, _ = call(target_type="Value", target=50.0, ready_replicas=4)
    assert value == 125.0  # 50 × 10 / 4
    with pytest.raises(FallbackError, match="error performing fallback"):
        call(target_type="Value", target=50.0, ready_replicas=0)
    with pytest.raises(FallbackError, match="error performing fallback"):
        call(target_type="Value", target=50.0, ready_replicas=None)


def test_fallback_value_is_cut_to_milli_units() -> None:
    value, _ = call(fallback={"failureThreshold": 0, "replicas": 3}, target=0.3333, health={})
    assert value == 0.999  # int64(0.3333 * 1000 * 3) = 999 milli


def test_scaling_modifiers_behavior_sends_the_placeholder() -> None:
    result = fallback_metric(
        value=None,
        error="boom",
        metric_name="s0-trigger",
        target_type="AverageValue",
        target=5.0,
        fallback={"failureThreshold": 1, "replicas": 4, "behavior": "scalingModifiers"},
        health={"s0-trigger": {"numberOfFailures": 1, "status": "Failing"}},
        current_replicas=None,
        scaling_modifiers={"formula": "trigger ?? 3", "target": "2"},
    )
    assert (result.value, result.fallback_active) == (-1.0, False)


def test_fallback_under_scaling_modifiers_targets_the_composite_metric() -> None:
    result = fallback_metric(
        value=None,
        error="boom",
        metric_name="s0-trigger",
        target_type="AverageValue",
        target=5.0,
        fallback={"failureThreshold": 0, "replicas": 4},
        health={},
        current_replicas=3,
        scaling_modifiers={"formula": "trigger", "target": "2"},
    )
    assert (result.metric_name, result.value, result.fallback_active) == (
        "composite-metric",
        8.0,
        True,
    )


@pytest.mark.parametrize(
    ("fallback", "modifiers", "valid"),
    [
        ({"failureThreshold": 3, "replicas": 1}, None, True),
        ({"failureThreshold": -1, "replicas": 1}, None, False),
        ({"failureThreshold": 3, "replicas": -1}, None, False),
        ({"failureThreshold": 0, "replicas": 0}, None, True),
        ({"failureThreshold": 3, "replicas": 1}, {"target": "2"}, True),
        ({"failureThreshold": 3, "replicas": 1}, {"target": "2.5"}, False),
        ({"failureThreshold": 3, "replicas": 1}, {"target": "0"}, False),
        ({"failureThreshold": 3, "replicas": 1}, {"formula": "x"}, False),
    ],
)
def test_HasValidFallback(
    fallback: dict[str, int], modifiers: dict[str, str] | None, valid: bool
) -> None:
    assert has_valid_fallback(fallback, modifiers) is valid


def test_fractional_modifiers_target_disables_fallback() -> None:
    """HasValidFallback parses the modifiers target with ParseInt: "2.5" makes fallback
    invalid, so the scaler error reaches the HPA unchanged and nothing is counted."""
    with pytest.raises(FallbackError) as caught:
        fallback_metric(
            value=None,
            error="boom",
            metric_name="m",
            target_type="AverageValue",
            target=1.0,
            fallback={"failureThreshold": 0, "replicas": 4},
            health={},
            current_replicas=1,
            scaling_modifiers={"formula": "m", "target": "2.5"},
        )
    assert caught.value.health == {}


def test_input_health_is_not_mutated() -> None:
    before = {NAME: {"numberOfFailures": 3, "status": "Happy"}}
    call(health=before)
    assert before == {NAME: {"numberOfFailures": 3, "status": "Happy"}}
