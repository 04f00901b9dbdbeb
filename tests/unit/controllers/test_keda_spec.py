"""ScaledObject specs: defaults, admission, warnings, and the HPA KEDA generates.

Cases ported from kedacore/keda 8b4f083 ``apis/keda/v1alpha1/scaledobject_types_test.go``
(TestGetHPAReplicas, TestCheckReplicaCountBoundsAreValid, TestCheckFallbackValid),
``scaletriggers_types_test.go`` (TestValidateTriggers), ``scaledobject_webhook_test.go``
(the PollingInterval/CooldownPeriod warning tests, replica counts, fallback, empty
triggers, name lengths, cpu/memory scale to zero) and
``controllers/keda/scaledobject_controller_test.go`` (metric names, HPA min/max, paused
scale-in/out behavior, CRD rejections), each under upstream's name.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpuscale.controllers.keda import (
    ScaledObjectError,
    ScaledObjectSpec,
    TriggerError,
    check_fallback,
    check_replica_bounds,
    check_triggers,
    generated_hpa,
    hpa_max_replicas,
    hpa_min_replicas,
    scaled_object_warnings,
    validate_scaled_object,
)
from gpuscale.errors import ManifestError

from ._upstream import (
    KEDA_CONTROLLER_TEST,
    KEDA_TRIGGERS_TEST,
    KEDA_TYPES_TEST,
    KEDA_WEBHOOK_TEST,
    upstream_params,
)

POLLING = "PollingInterval is configured but is not relevant"
COOLDOWN = "CooldownPeriod is configured but is not relevant"


# scaledobject_types_test.go TestGetHPAReplicas
@pytest.mark.upstream(KEDA_TYPES_TEST, test="TestGetHPAReplicas")
@pytest.mark.parametrize(
    ("name", "minimum", "maximum", "hpa_min", "hpa_max"),
    [
        ("Default min and max", None, None, 1, 100),
        ("Custom min, default max", 5, None, 5, 100),
        ("Default min, custom max", None, 10, 1, 10),
        ("Custom min and max", 5, 10, 5, 10),
        ("Zero min, default max", 0, None, 1, 100),
    ],
)
def test_TestGetHPAReplicas(
    name: str, minimum: int | None, maximum: int | None, hpa_min: int, hpa_max: int
) -> None:
    assert hpa_min_replicas(minimum) == hpa_min
    assert hpa_max_replicas(maximum) == hpa_max


# scaledobject_types_test.go TestCheckReplicaCountBoundsAreValid
@pytest.mark.parametrize(
    ("name", "minimum", "maximum", "idle", "error"),
    upstream_params(
        [
            ("Valid: min 1, max 5, no idle", 1, 5, None, None),
            ("Valid: min 1, max 5, idle 0", 1, 5, 0, None),
            (
                "Invalid: min 2 > max 1",
                2,
                1,
                None,
                "MinReplicaCount=2 must be less than MaxReplicaCount=1",
            ),
            (
                "Invalid: idle 1 == min 1",
                1,
                5,
                1,
                "IdleReplicaCount=1 must be less than MinReplicaCount=1",
            ),
            (
                "Invalid: idle 2 > min 1",
                1,
                5,
                2,
                "IdleReplicaCount=2 must be less than MinReplicaCount=1",
            ),
            # scaledobject_controller_test.go: "doesn't allow IdleReplicaCount > MinReplicaCount"
            (
                "doesn't allow IdleReplicaCount > MinReplicaCount",
                5,
                None,
                10,
                "IdleReplicaCount=10 must be less than MinReplicaCount=5",
            ),
            (
                "doesn't allow IdleReplicaCount > MaxReplicaCount, when "
                "MinReplicaCount is not explicitly defined",
                None,
                5,
                10,
                "IdleReplicaCount=10 must be less than MinReplicaCount=0",
            ),
            ("quirk: a set minReplicaCount 0 counts as 1, so idle 0 passes", 0, 5, 0, None),
            (
                "quirk: an unset minReplicaCount counts as 0, so idle 0 fails",
                None,
                5,
                0,
                "IdleReplicaCount=0 must be less than MinReplicaCount=0",
            ),
        ],
        KEDA_TYPES_TEST,
        "TestCheckReplicaCountBoundsAreValid",
        own={
            "quirk: a set minReplicaCount 0 counts as 1, so idle 0 passes",
            "quirk: an unset minReplicaCount counts as 0, so idle 0 fails",
        },
        elsewhere={
            "doesn't allow IdleReplicaCount > MinReplicaCount": (KEDA_CONTROLLER_TEST, "It"),
            (
                "doesn't allow IdleReplicaCount > MaxReplicaCount, "
                "when MinReplicaCount is not explicitly defined"
            ): (KEDA_CONTROLLER_TEST, "It"),
        },
    ),
)
def test_TestCheckReplicaCountBoundsAreValid(
    name: str, minimum: int | None, maximum: int | None, idle: int | None, error: str | None
) -> None:
    if error is None:
        check_replica_bounds(
            min_replica_count=minimum, max_replica_count=maximum, idle_replica_count=idle
        )
    else:
        with pytest.raises(ScaledObjectError) as caught:
            check_replica_bounds(
                min_replica_count=minimum, max_replica_count=maximum, idle_replica_count=idle
            )
        assert error in caught.value.message


GOOD = {"failureThreshold": 3, "replicas": 1}
# scaledobject_types_test.go TestCheckFallbackValid
FALLBACK_CASES = [
    ("No fallback configured", None, [{"type": "couchdb"}], None, None),
    (
        "Explicit AverageValue metricType - valid",
        GOOD,
        [{"type": "couchdb", "metricType": "AverageValue"}],
        None,
        None,
    ),
    (
        "Implicit AverageValue metricType (empty string) - valid",
        GOOD,
        [{"type": "couchdb", "metricType": ""}],
        None,
        None,
    ),
    ("Value metricType - valid", GOOD, [{"type": "couchdb", "metricType": "Value"}], None, None),
    (
        "Multiple triggers with one valid AverageValue - valid",
        GOOD,
        [
            {"type": "prometheus", "metricType": "Value"},
            {"type": "couchdb", "metricType": "AverageValue"},
        ],
        None,
        None,
    ),
    (
        "CPU trigger - invalid",
        GOOD,
        [{"type": "cpu", "metricType": "AverageValue"}],
        None,
        "type for the fallback to be enabled",
    ),
    (
        "Memory trigger - invalid",
        GOOD,
        [{"type": "memory", "metricType": "AverageValue"}],
        None,
        "type for the fallback to be enabled",
    ),
    (
        "Multiple triggers with one CPU and one valid - valid",
        GOOD,
        [
            {"type": "cpu", "metricType": "Utilization"},
            {"type": "couchdb", "metricType": "AverageValue"},
        ],
        None,
        None,
    ),
    (
        "Negative FailureThreshold - invalid",
        {"failureThreshold": -1, "replicas": 1},
        [{"type": "couchdb", "metricType": "AverageValue"}],
        None,
        "must both be greater than or equal to 0",
    ),
    (
        "Negative Replicas - invalid",
        {"failureThreshold": 3, "replicas": -1},
        [{"type": "couchdb", "metricType": "AverageValue"}],
        None,
        "must both be greater than or equal to 0",
    ),
    (
        "Using ScalingModifiers with AverageValue MetricType - valid",
        GOOD,
        [{"type": "couchdb"}],
        {"scalingModifiers": {"metricType": "AverageValue", "formula": "x * 2"}},
        None,
    ),
    (
        "Using ScalingModifiers with Value MetricType - valid",
        GOOD,
        [{"type": "couchdb"}],
        {"scalingModifiers": {"metricType": "Value", "formula": "x * 2"}},
        None,
    ),
]


@pytest.mark.upstream(KEDA_TYPES_TEST, test="TestCheckFallbackValid")
@pytest.mark.parametrize("case", FALLBACK_CASES, ids=[c[0] for c in FALLBACK_CASES])
def test_TestCheckFallbackValid(case: tuple[Any, ...]) -> None:
    _, fallback, triggers, advanced, error = case
    if error is None:
        check_fallback(fallback=fallback, triggers=triggers, advanced=advanced)
    else:
        with pytest.raises(ScaledObjectError) as caught:
            check_fallback(fallback=fallback, triggers=triggers, advanced=advanced)
        assert error in caught.value.message


# scaletriggers_types_test.go TestValidateTriggers
@pytest.mark.upstream(KEDA_TRIGGERS_TEST, test="TestValidateTriggers")
@pytest.mark.parametrize(
    ("name", "triggers", "error"),
    [
        (
            "valid triggers",
            [{"name": "trigger1", "type": "cpu"}, {"name": "trigger2", "type": "prometheus"}],
            "",
        ),
        (
            "duplicate trigger names",
            [{"name": "trigger1", "type": "cpu"}, {"name": "trigger1", "type": "prometheus"}],
            'triggerName "trigger1" is defined multiple times in the '
            "ScaledObject/ScaledJob, but it must be unique",
        ),
        (
            "unsupported useCachedMetrics property for cpu scaler",
            [{"name": "trigger1", "type": "cpu", "useCachedMetrics": True}],
            'property "useCachedMetrics" is not supported for "cpu" scaler',
        ),
        (
            "unsupported useCachedMetrics property for memory scaler",
            [{"name": "trigger2", "type": "memory", "useCachedMetrics": True}],
            'property "useCachedMetrics" is not supported for "memory" scaler',
        ),
        (
            "unsupported useCachedMetrics property for cron scaler",
            [{"name": "trigger3", "type": "cron", "useCachedMetrics": True}],
            'property "useCachedMetrics" is not supported for "cron" scaler',
        ),
        (
            "supported useCachedMetrics property for kafka scaler",
            [{"name": "trigger4", "type": "kafka", "useCachedMetrics": True}],
            "",
        ),
        (
            "empty triggers array should be blocked",
            [],
            "no triggers defined in the ScaledObject/ScaledJob",
        ),
    ],
)
def test_TestValidateTriggers(name: str, triggers: list[dict[str, Any]], error: str) -> None:
    if not error:
        check_triggers(triggers)
    else:
        with pytest.raises(ScaledObjectError) as caught:
            check_triggers(triggers)
        assert caught.value.message == error


CRON = {
    "type": "cron",
    "metadata": {
        "timezone": "UTC",
        "start": "0 * * * *",
        "end": "1 * * * *",
        "desiredReplicas": "1",
    },
}


def webhook_spec(**fields: Any) -> dict[str, Any]:
    """createScaledObject: idle 1, min 5, max 10, one cron trigger; then the test's fields
    (None removes a field)."""
    spec: dict[str, Any] = {
        "scaleTargetRef": {"name": "deployment", "apiVersion": "apps/v1", "kind": "Deployment"},
        "idleReplicaCount": 1,
        "minReplicaCount": 5,
        "maxReplicaCount": 10,
        "triggers": [CRON],
    }
    for key, value in fields.items():
        if value is None:
            spec.pop(key, None)
        else:
            spec[key] = value
    return spec


WORKLOAD_CACHED = {
    "type": "kubernetes-workload",
    "useCachedMetrics": True,
    "name": "workload_trig_1",
    "metadata": {"podSelector": "pod=workload-test", "value": "1"},
    "metricType": "Value",
}
WARNINGS = [
    (
        "should emit warning when PollingInterval is set with "
        "minReplicaCount > 0 and idleReplicaCount not set",
        {"minReplicaCount": 1, "idleReplicaCount": None, "pollingInterval": 30},
        {POLLING: True},
    ),
    (
        "should NOT emit warning when PollingInterval is set with "
        "minReplicaCount > 0 and idleReplicaCount > 0",
        {"minReplicaCount": 2, "idleReplicaCount": 1, "pollingInterval": 30},
        {POLLING: False},
    ),
    (
        "should NOT emit warning when PollingInterval is set with idleReplicaCount = 0",
        {"minReplicaCount": 2, "idleReplicaCount": 0, "pollingInterval": 30},
        {POLLING: False},
    ),
    (
        "should NOT emit warning when PollingInterval is set with useCachedMetrics enabled",
        {
            "minReplicaCount": 2,
            "idleReplicaCount": 1,
            "pollingInterval": 30,
            "triggers": [WORKLOAD_CACHED],
        },
        {POLLING: False},
    ),
    (
        "should NOT emit warning when PollingInterval is not set",
        {"minReplicaCount": 2, "idleReplicaCount": 1, "pollingInterval": None},
        {POLLING: False},
    ),
    (
        "should emit warning when CooldownPeriod is set with "
        "minReplicaCount > 0 and idleReplicaCount not set",
        {"minReplicaCount": 1, "idleReplicaCount": None, "cooldownPeriod": 300},
        {COOLDOWN: True},
    ),
    (
        "should NOT emit warning when CooldownPeriod is set with "
        "minReplicaCount > 0 and idleReplicaCount > 0",
        {"minReplicaCount": 2, "idleReplicaCount": 1, "cooldownPeriod": 300},
        {COOLDOWN: False},
    ),
    (
        "should NOT emit warning when CooldownPeriod is set with idleReplicaCount = 0",
        {"minReplicaCount": 2, "idleReplicaCount": 0, "cooldownPeriod": 300},
        {COOLDOWN: False},
    ),
    (
        "should NOT emit warning when CooldownPeriod is not set",
        {"minReplicaCount": 2, "idleReplicaCount": 1, "cooldownPeriod": None},
        {COOLDOWN: False},
    ),
    (
        "should emit both warnings when both PollingInterval and CooldownPeriod are misconfigured",
        {
            "minReplicaCount": 2,
            "idleReplicaCount": None,
            "pollingInterval": 30,
            "cooldownPeriod": 300,
        },
        {POLLING: True, COOLDOWN: True},
    ),
    (
        "should emit no warnings when both are properly configured with idleReplicaCount = 0",
        {"minReplicaCount": 2, "idleReplicaCount": 0, "pollingInterval": 30, "cooldownPeriod": 300},
        {},
    ),
]


@pytest.mark.upstream(KEDA_WEBHOOK_TEST, test="It")
@pytest.mark.parametrize("case", WARNINGS, ids=[c[0] for c in WARNINGS])
def test_webhook_warnings(case: tuple[Any, ...]) -> None:
    _, fields, expected = case
    spec = webhook_spec(**fields)
    warnings = validate_scaled_object(spec, name="test-so")
    assert warnings == scaled_object_warnings(spec)
    for text, present in expected.items():
        assert any(text in w for w in warnings) is present
    if not expected:
        assert warnings == []


def test_min_zero_gets_no_warnings() -> None:
    spec = webhook_spec(
        minReplicaCount=0, idleReplicaCount=None, pollingInterval=15, cooldownPeriod=60
    )
    assert scaled_object_warnings(spec) == []


@pytest.mark.parametrize(
    ("name", "fields", "problem"),
    upstream_params(
        [
            (
                "shouldn't validate the so creation when the replica counts are wrong",
                {"minReplicaCount": 10, "maxReplicaCount": 5},
                "minReplicaCount must be less than or equal to maxReplicaCount",
            ),
            (
                "shouldn't validate the so creation when the fallback is wrong",
                {"fallback": {"failureThreshold": -1, "replicas": -3}},
                "must be at least 0",
            ),
            ("should validate empty triggers in ScaledObject", {"triggers": []}, "at least 1 item"),
            (
                "shouldn't validate so creation with cpu scaler "
                "requirements not being met for scaling to 0",
                {
                    "minReplicaCount": 0,
                    "idleReplicaCount": None,
                    "triggers": [
                        {"type": "cpu", "metricType": "Utilization", "metadata": {"value": "10"}}
                    ],
                },
                "only cpu/memory triggers AND minReplica is 0",
            ),
            (
                "shouldn't validate the so creation when the fallback is "
                "configured and only cpu/memory triggers are used.",
                {
                    "triggers": [
                        {"type": "cpu", "metricType": "AverageValue", "metadata": {"value": "10"}},
                        {
                            "type": "memory",
                            "metricType": "AverageValue",
                            "metadata": {"value": "10"},
                        },
                    ],
                    "fallback": {"failureThreshold": 3, "replicas": 6},
                },
                "type for the fallback to be enabled",
            ),
            (
                "doesn't allow non-unique triggerName in ScaledObject",
                {"triggers": [{**CRON, "name": "t"}, {**CRON, "name": "t"}]},
                "defined multiple times",
            ),
        ],
        KEDA_WEBHOOK_TEST,
        "It",
        elsewhere={
            "doesn't allow non-unique triggerName in ScaledObject": (KEDA_CONTROLLER_TEST, "It")
        },
    ),
)
def test_webhook_rejections(name: str, fields: dict[str, Any], problem: str) -> None:
    with pytest.raises(ScaledObjectError) as caught:
        validate_scaled_object(webhook_spec(**fields), name="test-so")
    assert problem in caught.value.message


@pytest.mark.upstream(
    KEDA_WEBHOOK_TEST,
    test="It",
    case="should validate so creation when min replicas is > 0 with only cpu scaler given",
)
def test_should_validate_so_creation_when_min_replicas_is_gt_0_with_only_cpu_scaler_given() -> None:
    spec = webhook_spec(
        minReplicaCount=1,
        idleReplicaCount=None,
        triggers=[{"type": "cpu", "metricType": "Utilization", "metadata": {"value": "10"}}],
    )
    validate_scaled_object(spec, name="test-so")


@pytest.mark.upstream(KEDA_WEBHOOK_TEST, test="It")
@pytest.mark.parametrize(
    ("name", "so_name", "hpa_override", "admitted"),
    [
        (
            "shouldn't validate the so creation when the name exceeds the label value limit",
            "a" * 64,
            None,
            False,
        ),
        (
            "should validate the so creation when the name is at the "
            "label value limit and a custom HPA name is set",
            "a" * 63,
            "short",
            True,
        ),
        (
            "shouldn't validate the so creation when no custom HPA name is set and "
            "the generated HPA name would exceed the label value limit",
            "a" * 55,
            None,
            False,
        ),
        (
            "should validate the so creation when no custom HPA name is set and the "
            "generated HPA name fits within the label value limit",
            "a" * 54,
            None,
            True,
        ),
    ],
)
def test_verifyName(name: str, so_name: str, hpa_override: str | None, admitted: bool) -> None:
    fields: dict[str, Any] = {}
    if hpa_override:
        fields["advanced"] = {"horizontalPodAutoscalerConfig": {"name": hpa_override}}
    spec = webhook_spec(**fields)
    if admitted:
        validate_scaled_object(spec, name=so_name)
    else:
        with pytest.raises(ScaledObjectError):
            validate_scaled_object(spec, name=so_name)


def test_typed_spec_defaults() -> None:
    spec = ScaledObjectSpec.from_k8s({"scaleTargetRef": {"name": "app"}, "triggers": [CRON]})
    assert (spec.polling_interval, spec.cooldown_period, spec.initial_cooldown_period) == (
        30,
        300,
        0,
    )
    assert (spec.min_replica_count, spec.max_replica_count, spec.idle_replica_count) == (
        0,
        100,
        None,
    )
    assert (spec.hpa_min_replicas, spec.hpa_max_replicas) == (1, 100)
    assert spec.scales_to_zero_or_idle
    assert not spec.polling_interval_set
    assert not spec.cooldown_period_set
    assert not spec.min_replica_count_set
    assert spec.fallback is None
    assert spec.scaling_modifiers is None
    assert spec.triggers[0].type == "cron"
    assert spec.scale_target_kind == "Deployment"


def test_typed_spec_reads_everything() -> None:
    raw = {
        "scaleTargetRef": {"name": "app", "kind": "StatefulSet", "apiVersion": "apps/v1"},
        "pollingInterval": 15,
        "cooldownPeriod": 60,
        "initialCooldownPeriod": 120,
        "minReplicaCount": 2,
        "maxReplicaCount": 8,
        "idleReplicaCount": 0,
        "fallback": {"failureThreshold": 3, "replicas": 4, "behavior": "currentReplicasIfHigher"},
        "advanced": {
            "horizontalPodAutoscalerConfig": {
                "name": "my-hpa",
                "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}},
            },
            "restoreToOriginalReplicaCount": True,
            "scalingModifiers": {
                "formula": "a",
                "target": "2",
                "activationTarget": "1",
                "metricType": "Value",
            },
        },
        "triggers": [
            {
                "type": "prometheus",
                "name": "a",
                "metricType": "Value",
                "useCachedMetrics": True,
                "authenticationRef": {"name": "auth"},
                "metadata": {"serverAddress": "http://p", "query": "q", "threshold": "1"},
            }
        ],
    }
    spec = ScaledObjectSpec.from_k8s(raw)
    assert (spec.polling_interval, spec.cooldown_period, spec.initial_cooldown_period) == (
        15,
        60,
        120,
    )
    assert (spec.hpa_min_replicas, spec.hpa_max_replicas, spec.idle_replica_count) == (2, 8, 0)
    assert spec.fallback is not None
    assert spec.fallback.behavior == "currentReplicasIfHigher"
    assert spec.hpa_behavior == {"scaleDown": {"stabilizationWindowSeconds": 60}}
    assert spec.hpa_name_override == "my-hpa"
    assert spec.restore_to_original_replica_count
    assert spec.scaling_modifiers is not None
    assert spec.scaling_modifiers.activation_target == "1"
    trigger = spec.triggers[0]
    assert (
        trigger.name,
        trigger.metric_type,
        trigger.use_cached_metrics,
        trigger.authentication_ref,
    ) == ("a", "Value", True, "auth")
    assert spec.scale_target_kind == "StatefulSet"


@pytest.mark.parametrize(
    ("spec", "where"),
    [
        ({"triggers": [CRON]}, "spec.scaleTargetRef"),
        ({"scaleTargetRef": {"name": ""}, "triggers": [CRON]}, "spec.scaleTargetRef.name"),
        ({"scaleTargetRef": {"name": "a"}}, "spec.triggers"),
        (
            {"scaleTargetRef": {"name": "a"}, "triggers": [CRON], "pollingInterval": 0},
            "spec.pollingInterval",
        ),
        (
            {"scaleTargetRef": {"name": "a"}, "triggers": [CRON], "cooldownPeriod": -1},
            "spec.cooldownPeriod",
        ),
        (
            {"scaleTargetRef": {"name": "a"}, "triggers": [CRON], "maxReplicaCount": 0},
            "spec.maxReplicaCount",
        ),
        (
            {"scaleTargetRef": {"name": "a"}, "triggers": [CRON], "minReplicaCount": "1"},
            "spec.minReplicaCount",
        ),
        (
            {"scaleTargetRef": {"name": "a"}, "triggers": [CRON], "minReplicaCount": True},
            "spec.minReplicaCount",
        ),
        (
            {"scaleTargetRef": {"name": "a"}, "triggers": [CRON], "minReplicaCount": 101},
            "spec.minReplicaCount",
        ),
        (
            {
                "scaleTargetRef": {"name": "a"},
                "triggers": [{"type": "prometheus", "metadata": {"threshold": 80}}],
            },
            "spec.triggers[0].metadata.threshold",
        ),
        (
            {"scaleTargetRef": {"name": "a"}, "triggers": [{"type": "prometheus"}]},
            "spec.triggers[0].metadata",
        ),
        (
            {"scaleTargetRef": {"name": "a"}, "triggers": [CRON], "fallback": {"replicas": 2}},
            "spec.fallback.failureThreshold",
        ),
        (
            {
                "scaleTargetRef": {"name": "a"},
                "triggers": [CRON],
                "fallback": {"failureThreshold": 1, "replicas": 2, "behavior": "dynamic"},
            },
            "spec.fallback.behavior",
        ),
        (
            {
                "scaleTargetRef": {"name": "a"},
                "triggers": [CRON],
                "advanced": {"scalingModifiers": {"metricType": "Utilization"}},
            },
            "spec.advanced.scalingModifiers.metricType",
        ),
    ],
)
def test_typed_spec_rejects_what_the_crd_rejects(spec: dict[str, Any], where: str) -> None:
    with pytest.raises(ScaledObjectError) as caught:
        ScaledObjectSpec.from_k8s(spec)
    assert caught.value.where == where
    assert isinstance(caught.value, ManifestError)
    assert caught.value.fix


PROM = {
    "type": "prometheus",
    "metadata": {"serverAddress": "http://localhost:9090", "threshold": "100", "query": "up"},
}


@pytest.mark.upstream(KEDA_CONTROLLER_TEST, test="It", case="should pass metric name validation")
def test_should_pass_metric_name_validation() -> None:
    """scaledobject_controller_test.go: three prometheus triggers give s0/s1/s2-prometheus."""
    spec = {"scaleTargetRef": {"name": "app"}, "triggers": [PROM, PROM, PROM]}
    hpa = generated_hpa(spec, name="test")
    assert [m.name for m in hpa.metrics] == ["s0-prometheus", "s1-prometheus", "s2-prometheus"]
    assert all(
        m.source == "External" and m.target_type == "AverageValue" and m.target == 100.0
        for m in hpa.metrics
    )


@pytest.mark.upstream(
    KEDA_CONTROLLER_TEST,
    test="It",
    case=(
        "deploys ScaledObject and creates HPA, when "
        "IdleReplicaCount, MinReplicaCount and MaxReplicaCount is defined"
    ),
)
def test_deploys_ScaledObject_and_creates_HPA_when_IdleReplicaCount_MinReplicaCount_and_MaxReplicaCount_is_defined() -> None:  # noqa: E501  # fmt: skip
    spec = {
        "scaleTargetRef": {"name": "app"},
        "idleReplicaCount": 1,
        "minReplicaCount": 5,
        "maxReplicaCount": 10,
        "triggers": [PROM],
    }
    hpa = generated_hpa(spec, name="so")
    assert (hpa.min_replicas, hpa.max_replicas, hpa.name) == (5, 10, "keda-hpa-so")


@pytest.mark.upstream(
    KEDA_CONTROLLER_TEST,
    test="It",
    case=(
        "deploys ScaledObject and creates HPA with scale down "
        "select policy disabled when pause scale-in annotation set"
    ),
)
def test_deploys_ScaledObject_and_creates_HPA_with_scale_down_select_policy_disabled_when_pause_scale_in_annotation_set() -> None:  # noqa: E501  # fmt: skip
    spec = {"scaleTargetRef": {"name": "app"}, "triggers": [PROM]}
    hpa = generated_hpa(
        spec, name="so", annotations={"autoscaling.keda.sh/paused-scale-in": "true"}
    )
    assert hpa.behavior == {"scaleDown": {"selectPolicy": "Disabled"}}


def test_sets_scale_up_select_policy_to_disable_keeping_the_custom_behavior() -> None:
    behavior = {
        "scaleUp": {
            "stabilizationWindowSeconds": 30,
            "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}],
        }
    }
    spec = {
        "scaleTargetRef": {"name": "app"},
        "triggers": [PROM],
        "advanced": {"horizontalPodAutoscalerConfig": {"behavior": behavior}},
    }
    hpa = generated_hpa(
        spec, name="so", annotations={"autoscaling.keda.sh/paused-scale-out": "true"}
    )
    assert hpa.behavior is not None
    assert hpa.behavior["scaleUp"] == {**behavior["scaleUp"], "selectPolicy": "Disabled"}
    assert behavior["scaleUp"].get("selectPolicy") is None  # the spec is not mutated
    assert generated_hpa(spec, name="so").behavior == behavior


def test_generated_hpa_value_target_and_quantity() -> None:
    trigger = {
        "type": "prometheus",
        "metricType": "Value",
        "metadata": {"serverAddress": "http://p", "threshold": "80.12345", "query": "sum(x)"},
    }
    hpa = generated_hpa(
        {"scaleTargetRef": {"name": "app"}, "minReplicaCount": 0, "triggers": [trigger]}, name="so"
    )
    metric = hpa.metrics[0]
    assert (metric.target_type, metric.target, metric.trigger_index) == ("Value", 80.123, 0)
    assert hpa.min_replicas == 1
    assert hpa.triggers[0] is not None
    assert hpa.triggers[0].query == "sum(x)"


def test_generated_hpa_negative_threshold_becomes_zero_target() -> None:
    trigger = {
        "type": "prometheus",
        "metadata": {"serverAddress": "http://p", "threshold": "-5", "query": "q"},
    }
    assert (
        generated_hpa({"scaleTargetRef": {"name": "app"}, "triggers": [trigger]}, name="so")
        .metrics[0]
        .target
        == 0.0
    )


def test_generated_hpa_composite_metric_replaces_external_metrics() -> None:
    named = [
        {**PROM, "name": "a"},
        {**PROM, "name": "b"},
        {"type": "cpu", "metricType": "Utilization", "metadata": {"value": "60"}},
    ]
    spec = {
        "scaleTargetRef": {"name": "app"},
        "triggers": named,
        "advanced": {
            "scalingModifiers": {"formula": "a + b", "target": "2.5", "metricType": "Value"}
        },
    }
    hpa = generated_hpa(spec, name="so")
    assert [(m.source, m.name, m.target_type, m.target) for m in hpa.metrics] == [
        ("Resource", "cpu", "Utilization", 60.0),
        ("External", "composite-metric", "Value", 2.5),
    ]


def test_generated_hpa_sorts_by_source_type() -> None:
    triggers = [
        {"type": "memory", "metricType": "AverageValue", "metadata": {"value": "1Gi"}},
        PROM,
        {
            "type": "cpu",
            "metricType": "Utilization",
            "metadata": {"value": "50", "containerName": "app"},
        },
    ]
    hpa = generated_hpa(
        {"scaleTargetRef": {"name": "app"}, "minReplicaCount": 1, "triggers": triggers}, name="so"
    )
    assert [(m.source, m.name, m.trigger_index) for m in hpa.metrics] == [
        ("ContainerResource", "cpu", 2),
        ("External", "s1-prometheus", 1),
        ("Resource", "memory", 0),
    ]
    assert hpa.metrics[2].target == 2.0**30


@pytest.mark.parametrize(
    ("trigger", "error"),
    [
        ({"type": "kafka", "metadata": {}}, ScaledObjectError),
        (
            {"type": "prometheus", "metadata": {"serverAddress": "http://p", "query": "q"}},
            TriggerError,
        ),
        (
            {
                "type": "prometheus",
                "metricType": "Utilization",
                "metadata": {"serverAddress": "http://p", "query": "q", "threshold": "1"},
            },
            TriggerError,
        ),
        ({"type": "cpu", "metadata": {"value": "50"}}, ScaledObjectError),
        (
            {
                "type": "cpu",
                "metadata": {"value": "50", "type": "Utilization"},
                "metricType": "Utilization",
            },
            ScaledObjectError,
        ),
        (
            {"type": "cpu", "metricType": "Utilization", "metadata": {"value": "50.5"}},
            ScaledObjectError,
        ),
    ],
    ids=[
        "unmodelled-type",
        "missing-threshold",
        "utilization-external",
        "cpu-without-metricType",
        "cpu-deprecated-type",
        "cpu-fractional-utilization",
    ],
)
def test_generated_hpa_rejections(trigger: dict[str, Any], error: type[Exception]) -> None:
    with pytest.raises(error) as caught:
        generated_hpa(
            {"scaleTargetRef": {"name": "app"}, "minReplicaCount": 1, "triggers": [trigger]},
            name="so",
        )
    assert getattr(caught.value, "where", "").startswith("spec.triggers[0]")
