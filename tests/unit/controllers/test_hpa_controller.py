"""The stateful HPA: upstream's reconcileAutoscaler tests, then multi-sync scenarios.

Ported cases (``HORIZONTAL_TEST``) keep upstream's names and assert what upstream asserts:
the replica count written to the scale (and whether it was written) and, where upstream
checks them, the status conditions (type, status, reason). Upstream's harness creates
``statusReplicas`` pods, all Running and Ready, one metric sample per pod for Pods
metrics, and sets ``scaleUpLimitFactor = 8`` in the test package's ``init()``; the
fixture below does the same. Cases marked "adapted" use a CPU metric upstream that is
never computed on the path they test; an External metric stands in for it.

The scenario tests after the tables are gpuscale's own: they drive several syncs through
time and check the upstream rules they cite.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any, NamedTuple

import pytest

from gpuscale.controllers.hpa import (
    Behavior,
    Condition,
    HorizontalPodAutoscaler,
    MetricTarget,
    Recommendation,
    ScaleEvent,
    Tolerance,
)
from gpuscale.errors import InputError

from ._upstream import HORIZONTAL_TEST, NOW, milli


def _metric(source: str, target_type: str, target: Decimal | int, kind: str = "") -> MetricTarget:
    return MetricTarget(
        source=source,  # type: ignore[arg-type]
        target_type=target_type,  # type: ignore[arg-type]
        target=target,
        name="qps",
        described_kind=kind,
    )


PODS_15 = _metric("Pods", "AverageValue", 15)
PODS_20 = _metric("Pods", "AverageValue", 20)
OBJECT_15 = _metric("Object", "Value", 15, "Deployment")
OBJECT_20 = _metric("Object", "Value", 20, "Deployment")
OBJECT_1 = _metric("Object", "Value", 1, "Deployment")
OBJECT_AVERAGE_10 = _metric("Object", "AverageValue", 10, "Deployment")
OBJECT_AVERAGE_20 = _metric("Object", "AverageValue", 20, "Deployment")
OBJECT_AVERAGE_2200 = _metric("Object", "AverageValue", milli(2200), "Deployment")
STAND_IN = _metric("External", "Value", 1)

AbleToScale = "AbleToScale"
ScalingActive = "ScalingActive"
ScalingLimited = "ScalingLimited"
ScaledToZero = "ScaledToZero"

STATUS_OK = [
    (AbleToScale, "True", "SucceededRescale"),
    (ScalingActive, "True", "ValidMetricFound"),
    (ScalingLimited, "False", "DesiredWithinRange"),
]
WITHIN_TOLERANCE = [(AbleToScale, "True", "ReadyForNewScale"), *STATUS_OK[1:]]
DISABLED = [(AbleToScale, "True", "SucceededGetScale"), (ScalingActive, "False", "ScalingDisabled")]
FROM_ZERO = [(ScaledToZero, "False", "NotScaledToZero"), *STATUS_OK]
TO_ZERO = [*STATUS_OK, (ScaledToZero, "True", "ScaledToZero")]
RESCALED_ONLY = [(AbleToScale, "True", "SucceededRescale")]
SCALED_TO_ZERO_BEFORE = (Condition(ScaledToZero, "True", "ScaledToZero"),)  # type: ignore[arg-type]


class Case(NamedTuple):
    name: str
    min_replicas: int
    max_replicas: int
    spec_replicas: int
    metric: MetricTarget
    samples_milli: list[int]
    expected: int
    conditions: list[tuple[str, str, str]] | None = None
    recommendations: list[Recommendation] | None = None
    initial: tuple[Condition, ...] = ()
    scale_to_zero: bool = False


CASES = [
    Case("TestScaleUpCM/scale up custom metric", 2, 6, 3, PODS_15, [20000, 10000, 30000], 4),
    Case("TestScaleUpCM/unready and hot cpu pods do not reduce scale for custom metric", 2, 6, 3,
         PODS_15, [50000, 10000, 30000], 6),
    Case("TestScaleUpCM/unready and hot cpu pods scale to max with scaling limited condition",
         2, 6, 3, PODS_15, [50000, 15000, 30000], 6,
         [*STATUS_OK[:2], (ScalingLimited, "True", "TooManyReplicas")]),
    Case("TestScaleUpCMObject/scale up object metric with value target", 2, 6, 3, OBJECT_15,
         [20000], 4),
    Case("TestScaleUpCMObject/scale up from zero with feature gate enabled", 0, 6, 0, OBJECT_15,
         [20000], 2, FROM_ZERO, None, SCALED_TO_ZERO_BEFORE, True),
    Case("TestScaleUpCMObject/scale up from zero with feature gate disabled", 0, 6, 0, OBJECT_15,
         [20000], 0, DISABLED, None, SCALED_TO_ZERO_BEFORE, False),
    Case("TestScaleUpCMObject/scale up from zero ignores tolerance with feature gate enabled", 0,
         6, 0, OBJECT_1, [1000], 1, FROM_ZERO, None, SCALED_TO_ZERO_BEFORE, True),
    Case("TestScaleUpCMObject/scale up from zero ignores tolerance with feature gate disabled", 0,
         6, 0, OBJECT_1, [1000], 0, DISABLED, None, SCALED_TO_ZERO_BEFORE, False),
    Case("TestScaleUpCMObject/scale up per-pod object metric with average value target", 2, 6, 3,
         OBJECT_AVERAGE_10, [40000], 4),
    Case("TestScaleUpCMExternal/scale up external metric with value target", 2, 6, 3,
         _metric("External", "Value", milli(6666)), [8600], 4),
    Case("TestScaleUpCMExternal/scale up external metric with per-pod average value target", 2, 6,
         3, _metric("External", "AverageValue", milli(2222)), [8600], 4),
    Case("TestScaleDownCM/scale down pods metric", 2, 6, 5, PODS_20, [12000] * 5, 3, None, []),
    Case("TestScaleDownCM/scale down object metric with value target", 2, 6, 5, OBJECT_20,
         [12000], 3, None, []),
    Case("TestScaleDownCM/scale down to zero object metric with feature gate enabled", 0, 6, 5,
         OBJECT_20, [0], 0, TO_ZERO, [], (), True),
    Case("TestScaleDownCM/scale down to zero object metric with feature gate disabled", 0, 6, 5,
         OBJECT_20, [0], 0, STATUS_OK, [], (), False),
    Case("TestScaleDownCM/scale down per-pod object metric with average value target", 2, 6, 5,
         OBJECT_AVERAGE_20, [60000], 3, None, []),
    Case("TestScaleDownCM/scale down external metric with value target", 2, 6, 5,
         _metric("External", "Value", milli(14400)), [8600], 3, None, []),
    Case("TestScaleDownCM/scale down to zero external metric with feature gate enabled", 0, 6, 5,
         _metric("External", "Value", milli(14400)), [0], 0, TO_ZERO, [], (), True),
    Case("TestScaleDownCM/scale down to zero external metric with feature gate disabled", 0, 6, 5,
         _metric("External", "Value", milli(14400)), [0], 0, STATUS_OK, [], (), False),
    Case("TestScaleDownCM/scale down per-pod external metric with average value target", 2, 6, 5,
         _metric("External", "AverageValue", 3), [8600], 3, None, []),
    Case("TestTolerance/pods metric within tolerance", 1, 5, 3, PODS_20, [20000, 20001, 21000], 3,
         WITHIN_TOLERANCE),
    Case("TestTolerance/object metric with value target within tolerance", 1, 5, 3, OBJECT_20,
         [20050], 3, WITHIN_TOLERANCE),
    Case("TestTolerance/external metric with value target within tolerance", 2, 6, 4,
         _metric("External", "Value", milli(8666)), [8600], 4, WITHIN_TOLERANCE),
    Case("TestTolerance/per-pod object metric with average value target within tolerance", 2, 6,
         4, OBJECT_AVERAGE_2200, [8600], 4, WITHIN_TOLERANCE),
    Case("TestTolerance/per-pod external metric with average value target within tolerance", 2, 6,
         4, _metric("External", "AverageValue", milli(2200)), [8600], 4, WITHIN_TOLERANCE),
    Case("TestScaleTimingBehavior/no backoff upscale custom metric only", 1, 5, 3, PODS_15,
         [20000, 10000, 30000], 4, STATUS_OK),
    Case("TestScaleUpFromZeroWithoutCondition/HPAScaleToZero=true", 0, 6, 0, OBJECT_15, [20000],
         0, DISABLED, None, (), True),
    Case("TestScaleUpFromZeroWithoutCondition/HPAScaleToZero=false", 0, 6, 0, OBJECT_15, [20000],
         0, DISABLED, None, (), False),
    Case("TestScaleUpFromZeroWhenMinReplicasIncreased/HPAScaleToZero=true", 2, 6, 0, OBJECT_15,
         [10000], 2,
         [(ScaledToZero, "False", "NotScaledToZero"), *STATUS_OK[:2],
          (ScalingLimited, "True", "TooFewReplicas")],
         None, SCALED_TO_ZERO_BEFORE, True),
    Case("TestScaleUpFromZeroWhenMinReplicasIncreased/HPAScaleToZero=false", 2, 6, 0, OBJECT_15,
         [10000], 0, DISABLED, None, SCALED_TO_ZERO_BEFORE, False),
    # adapted: upstream uses a CPU metric that these paths never compute
    Case("TestReplicaLimits/no scaling when spec replicas is zero", 3, 5, 0, STAND_IN, [1], 0,
         DISABLED),
    Case("TestReplicaLimits/scale up to min when below min replicas", 3, 5, 2, STAND_IN, [1], 3,
         RESCALED_ONLY),
    Case("TestReplicaLimits/scale down to max when above max replicas", 3, 5, 10, STAND_IN, [1], 5,
         RESCALED_ONLY),
    Case("TestScaleRCImmediately/scale up to min when below min replicas", 2, 6, 1, STAND_IN, [1],
         2, RESCALED_ONLY),
    Case("TestScaleRCImmediately/scale down to max when above max replicas", 2, 5, 6, STAND_IN,
         [1], 5, RESCALED_ONLY),
    Case("TestManualScaleToZeroDisablesHPA/HPAScaleToZero=true", 1, 6, 0, STAND_IN, [1], 0,
         DISABLED, None, (), True),
    Case("TestManualScaleToZeroDisablesHPA/HPAScaleToZero=false", 1, 6, 0, STAND_IN, [1], 0,
         DISABLED, None, (), False),
]  # fmt: skip


def _upstream_hpa(case: Case) -> HorizontalPodAutoscaler:
    return HorizontalPodAutoscaler(
        min_replicas=case.min_replicas,
        max_replicas=case.max_replicas,
        metrics=[case.metric],
        tolerance=Tolerance(0.1, 0.1),
        downscale_stabilization_seconds=300,
        recommendations=case.recommendations,
        conditions=case.initial,
        scale_to_zero=case.scale_to_zero,
        scale_up_limit_factor=8,
    )


def _triples(conditions: Sequence[Condition]) -> list[tuple[str, str, str]]:
    return [(c.type, c.status, c.reason) for c in conditions]


@pytest.mark.upstream(HORIZONTAL_TEST)
@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_reconcile_autoscaler(case: Case) -> None:
    hpa = _upstream_hpa(case)
    result = hpa.reconcile_detailed(
        now=NOW,
        spec_replicas=case.spec_replicas,
        status_replicas=case.spec_replicas,
        ready_pods=case.spec_replicas,
        metric_values=[[milli(value) for value in case.samples_milli]],
    )
    assert result.replicas == case.expected, f"{case.name} ({HORIZONTAL_TEST})"
    assert result.desired_replicas == case.expected
    assert result.rescaled == (case.expected != case.spec_replicas)
    if case.conditions is not None:
        assert _triples(result.conditions) == case.conditions
    assert hpa.conditions == result.conditions


# --- scenarios over several syncs (gpuscale's own; each names the upstream rule) -----------


def _external(target: float | str, name: str = "qps", kind: str = "Value") -> MetricTarget:
    return MetricTarget(source="External", target_type=kind, target=target, name=name)  # type: ignore[arg-type]


def _sync(hpa: HorizontalPodAutoscaler, now: float, replicas: int, values: Sequence[Any]) -> int:
    return hpa.reconcile(
        now=now,
        spec_replicas=replicas,
        status_replicas=replicas,
        ready_pods=replicas,
        metric_values=values,
    )


def test_failing_metric_blocks_scale_down_only() -> None:
    """computeReplicasForMetrics: invalid metrics plus a lower max -> -1 (no change)."""
    hpa = HorizontalPodAutoscaler(
        min_replicas=1,
        max_replicas=20,
        metrics=[_external(10, "a"), _external(10, "b", "AverageValue")],
        recommendations=[],
    )
    down = hpa.reconcile_detailed(
        now=NOW, spec_replicas=4, status_replicas=4, ready_pods=4, metric_values=[[5], None]
    )
    assert (down.replicas, down.rescaled, down.metric_replicas) == (4, False, None)
    assert down.proposals[0].replicas == 2
    assert down.error == (
        "invalid metrics (1 invalid out of 2), first error is: unable to fetch metrics"
    )
    assert down.condition("ScalingActive") == Condition(
        "ScalingActive",
        "False",
        "FailedGetExternalMetric",
        "the HPA was unable to compute the replica count: unable to fetch metrics",
    )
    up = hpa.reconcile_detailed(
        now=NOW + 15,
        spec_replicas=4,
        status_replicas=4,
        ready_pods=4,
        metric_values=[[20], RuntimeError("adapter down")],
    )
    assert (up.replicas, up.rescaled) == (8, True)
    assert up.error is not None
    assert "adapter down" in up.error
    active = up.condition("ScalingActive")
    assert active is not None
    assert active.reason == "ValidMetricFound"


def test_all_metrics_failing_changes_nothing() -> None:
    """computeReplicasForMetrics: all invalid -> no scale, ScalingActive from the first failure."""
    pods = MetricTarget(source="Pods", target_type="AverageValue", target=1, name="p")
    hpa = HorizontalPodAutoscaler(min_replicas=1, max_replicas=9, metrics=[pods, _external(1)])
    result = hpa.reconcile_detailed(
        now=NOW, spec_replicas=3, status_replicas=3, ready_pods=3, metric_values=[[], None]
    )
    assert (result.replicas, result.desired_replicas, result.rescaled) == (3, 3, False)
    assert _triples(result.conditions) == [
        ("AbleToScale", "True", "SucceededGetScale"),
        ("ScalingActive", "False", "FailedGetPodsMetric"),
    ]
    assert result.error is not None
    assert result.error.startswith("invalid metrics (2 invalid out of 2)")
    assert hpa.recommendations == (Recommendation(NOW, 3),)


def test_max_over_metrics_names_the_winning_metric() -> None:
    """computeReplicasForMetrics takes the largest proposal; rescaleReason names its metric."""
    pods = MetricTarget(source="Pods", target_type="AverageValue", target=10, name="queue")
    hpa = HorizontalPodAutoscaler(min_replicas=1, max_replicas=10, metrics=[_external(10), pods])
    result = hpa.reconcile_detailed(
        now=NOW,
        spec_replicas=2,
        status_replicas=2,
        ready_pods=2,
        metric_values=[[15], [30, 30]],
    )
    assert [p.replicas for p in result.proposals] == [3, 6]
    assert (result.metric_replicas, result.replicas) == (6, 4)
    assert result.rescale_reason == "pods metric queue above target"
    limited = result.condition("ScalingLimited")
    assert limited is not None
    assert (limited.status, limited.reason) == ("True", "ScaleUpLimit")


def test_first_zero_proposal_is_replaced_by_any_later_one() -> None:
    """computeReplicasForMetrics replaces the running max while it is 0, even by a negative."""
    hpa = HorizontalPodAutoscaler(
        min_replicas=1, max_replicas=10, metrics=[_external(5, "a"), _external(5, "b")]
    )
    result = hpa.reconcile_detailed(
        now=NOW, spec_replicas=3, status_replicas=3, ready_pods=3, metric_values=[[0], [-10]]
    )
    assert [p.replicas for p in result.proposals] == [0, -6]
    assert result.metric_replicas == -6
    assert result.replicas == 3  # negative desired stays 0, stabilized by the seeded 3


def test_default_behavior_scale_up_rate_over_syncs() -> None:
    """Default scaleUp rules: max(+4 pods, +100 %) per 15 s, counted from the period start."""
    hpa = HorizontalPodAutoscaler(
        min_replicas=1,
        max_replicas=100,
        metrics=[_external(1, kind="AverageValue")],
        behavior=Behavior.from_k8s(None),
    )
    replicas, seen = 1, []
    for step in range(7):
        replicas = _sync(hpa, NOW + 15 * step, replicas, [[1000]])
        seen.append(replicas)
    assert seen == [5, 10, 20, 40, 80, 100, 100]
    # storeScaleEvent reuses the last slot older than the longest period (15 s) each time.
    assert hpa.scale_up_events == (ScaleEvent(NOW + 60, 40), ScaleEvent(NOW + 75, 20))


def test_scale_up_within_one_period_counts_earlier_events() -> None:
    """getReplicasChangePerPeriod: a sync inside the period starts from current - added."""
    hpa = HorizontalPodAutoscaler(
        min_replicas=1,
        max_replicas=100,
        metrics=[_external(1, kind="AverageValue")],
        behavior=Behavior.from_k8s(None),
    )
    assert _sync(hpa, NOW, 1, [[1000]]) == 5
    assert _sync(hpa, NOW + 10, 5, [[1000]]) == 5  # period start 1 -> limit 5
    assert _sync(hpa, NOW + 16, 5, [[1000]]) == 10


def test_new_hpa_holds_scale_down_for_the_window() -> None:
    """recordInitialRecommendation seeds the current count; stabilizeRecommendation keeps it."""
    hpa = HorizontalPodAutoscaler(min_replicas=1, max_replicas=20, metrics=[_external(10)])
    replicas, seen = 10, []
    for step in range(23):
        replicas = _sync(hpa, NOW + 15 * step, replicas, [[2]])
        seen.append(replicas)
    assert seen[:21] == [10] * 21  # t = 0 .. 300 s: the seed is inside the window
    assert seen[21:] == [2, 2]  # t = 315 s: the seed is older than 300 s


def test_restored_empty_history_scales_down_at_once() -> None:
    """recommendations=[] (not None): nothing to stabilize against."""
    hpa = HorizontalPodAutoscaler(
        min_replicas=1, max_replicas=20, metrics=[_external(10)], recommendations=[]
    )
    assert _sync(hpa, NOW, 10, [[2]]) == 2


def test_behavior_scale_down_window_comes_from_the_controller_flag() -> None:
    """maybeInitScaleDownStabilizationWindow: an unset scaleDown window takes the flag value."""
    hpa = HorizontalPodAutoscaler(
        min_replicas=1,
        max_replicas=20,
        metrics=[_external(10)],
        behavior=Behavior.from_k8s({}),
        downscale_stabilization_seconds=60,
    )
    assert hpa.behavior is not None
    assert hpa.behavior.scale_down is not None
    assert hpa.behavior.scale_down.stabilization_window_seconds == 60
    seen = [_sync(hpa, NOW + 15 * step, 10, [[2]]) for step in range(6)]
    # a behavior window counts entries strictly younger than it: the seed stops at t = 60 s
    assert seen == [10, 10, 10, 10, 2, 2]


def test_behavior_stabilized_scale_down_reports_the_reason() -> None:
    """normalizeDesiredReplicasWithBehaviors sets AbleToScale ScaleDownStabilized."""
    hpa = HorizontalPodAutoscaler(
        min_replicas=1,
        max_replicas=20,
        metrics=[_external(10)],
        behavior=Behavior.from_k8s({"scaleDown": {"stabilizationWindowSeconds": 120}}),
    )
    result = hpa.reconcile_detailed(
        now=NOW, spec_replicas=6, status_replicas=6, ready_pods=6, metric_values=[[2]]
    )
    assert (result.replicas, result.stabilized_replicas, result.metric_replicas) == (6, 6, 2)
    able = result.condition("AbleToScale")
    assert able is not None
    assert able.reason == "ScaleDownStabilized"


def test_configurable_tolerance_from_behavior() -> None:
    """tolerancesForHpa: behavior.scaleUp.tolerance overrides the flag when the gate is on."""
    behavior = Behavior.from_k8s({"scaleUp": {"tolerance": "0.01"}})

    def run(**kwargs: Any) -> int:
        hpa = HorizontalPodAutoscaler(
            min_replicas=1, max_replicas=20, metrics=[_external(10)], **kwargs
        )
        return _sync(hpa, NOW, 4, [["10.5"]])

    assert run() == 4
    assert run(behavior=behavior) == 5
    assert run(behavior=behavior, configurable_tolerance=False) == 4


def test_scale_events_are_stored_only_with_behavior() -> None:
    """storeScaleEvent stores nothing without spec.behavior."""
    legacy = HorizontalPodAutoscaler(min_replicas=1, max_replicas=9, metrics=[_external(1)])
    _sync(legacy, NOW, 2, [[4]])
    assert legacy.scale_up_events == ()
    assert legacy.scale_down_events == ()
    with_behavior = HorizontalPodAutoscaler(
        min_replicas=1, max_replicas=9, metrics=[_external(1)], behavior=Behavior()
    )
    _sync(with_behavior, NOW, 2, [[4]])
    assert with_behavior.scale_up_events == (ScaleEvent(NOW, 4),)  # 2 -> min(8, 2 + 4)


def test_describe_gives_the_reason_line() -> None:
    """The one-line reason the simulator logs for a sync."""
    hpa = HorizontalPodAutoscaler(min_replicas=1, max_replicas=5, metrics=[_external(80)])
    result = hpa.reconcile_detailed(
        now=NOW, spec_replicas=1, status_replicas=1, ready_pods=1, metric_values=[[160]]
    )
    assert (
        result.proposals[0].describe() == "external metric qps 160 / target 80 (Value) -> desired 2"
    )
    assert result.describe().endswith("; 1 -> 2")
    assert result.rescale_reason == "external metric qps above target"


@pytest.mark.parametrize(
    ("kwargs", "where"),
    [
        ({"metric_values": [[1], [2]]}, "metric_values"),
        ({"metric_values": ["5"]}, "metric_values"),
        ({"spec_replicas": -1}, "spec_replicas"),
        ({"ready_pods": 1.5}, "ready_pods"),
        ({"now": float("nan")}, "now"),
    ],
)
def test_bad_reconcile_input_names_the_argument(kwargs: dict[str, Any], where: str) -> None:
    hpa = HorizontalPodAutoscaler(min_replicas=1, max_replicas=5, metrics=[_external(1)])
    call: dict[str, Any] = {
        "now": NOW,
        "spec_replicas": 1,
        "status_replicas": 1,
        "ready_pods": 1,
        "metric_values": [[1]],
    }
    call.update(kwargs)
    with pytest.raises(InputError) as error:
        hpa.reconcile(**call)
    assert error.value.where == where


BAD_SPECS: list[tuple[Any, str]] = [
    (lambda: MetricTarget(source="Resource", target_type="Value", target=1),  # type: ignore[arg-type]
     "MetricTarget.source"),
    (lambda: MetricTarget(source="Pods", target_type="Value", target=1),
     "MetricTarget.target_type"),
    (lambda: MetricTarget(source="External", target_type="Value", target=0),
     "MetricTarget.target"),
    (lambda: MetricTarget(source="External", target_type="Value", target="1Q"),
     "MetricTarget.target"),
    (lambda: HorizontalPodAutoscaler(min_replicas=5, max_replicas=2, metrics=[_external(1)]),
     "spec.maxReplicas"),
    (lambda: HorizontalPodAutoscaler(min_replicas=1, max_replicas=2, metrics=[]), "spec.metrics"),
    (lambda: Tolerance(scale_up=-0.1), "Tolerance.scale_up"),
]  # fmt: skip


@pytest.mark.parametrize(("build", "where"), BAD_SPECS)
def test_bad_spec_names_the_field(build: Any, where: str) -> None:
    with pytest.raises(InputError) as error:
        build()
    assert error.value.where == where
    assert error.value.fix


@pytest.mark.parametrize(
    ("behavior", "where"),
    [
        ({"scaleUp": {"selectPolicy": "Fastest"}}, "spec.behavior.scaleUp.selectPolicy"),
        ({"scaleUp": {"policies": []}}, "spec.behavior.scaleUp.policies"),
        ({"scaleDown": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 1801}]}},
         "spec.behavior.scaleDown.policies[0].periodSeconds"),
        ({"scaleDown": {"policies": [{"type": "Nodes", "value": 1, "periodSeconds": 15}]}},
         "spec.behavior.scaleDown.policies[0].type"),
        ({"scaleDown": {"policies": [{"type": "Pods", "value": 0, "periodSeconds": 15}]}},
         "spec.behavior.scaleDown.policies[0].value"),
        ({"scaleDown": {"stabilizationWindowSeconds": 3601}},
         "spec.behavior.scaleDown.stabilizationWindowSeconds"),
        ({"scaleUp": {"tolerance": "-1"}}, "spec.behavior.scaleUp.tolerance"),
        ({"scaleUp": {"stabilisationWindowSeconds": 10}}, "spec.behavior.scaleUp"),
        ({"scaleSideways": {}}, "spec.behavior"),
    ],
)  # fmt: skip
def test_bad_behavior_names_the_key(behavior: dict[str, Any], where: str) -> None:
    """validation.go validateScalingRules / validateScalingPolicy, as one-line errors."""
    with pytest.raises(InputError) as error:
        Behavior.from_k8s(behavior)
    assert error.value.where == where


def test_min_replicas_zero_scales_to_zero_and_back() -> None:
    """HPAScaleToZero (inferred from minReplicas: 0): ScaledToZero lets metrics wake it up."""
    hpa = HorizontalPodAutoscaler(
        min_replicas=0, max_replicas=5, metrics=[_external(10)], recommendations=[]
    )
    assert hpa.scale_to_zero
    down = hpa.reconcile_detailed(
        now=NOW, spec_replicas=2, status_replicas=2, ready_pods=2, metric_values=[[0]]
    )
    assert down.replicas == 0
    assert down.condition("ScaledToZero") == Condition(
        "ScaledToZero", "True", "ScaledToZero", "the HPA controller scaled the workload to zero"
    )
    idle = hpa.reconcile_detailed(
        now=NOW + 15, spec_replicas=0, status_replicas=0, ready_pods=0, metric_values=[[0]]
    )
    assert (idle.replicas, idle.rescaled) == (0, False)
    woken = hpa.reconcile_detailed(
        now=NOW + 30, spec_replicas=0, status_replicas=0, ready_pods=0, metric_values=[[25]]
    )
    assert (woken.replicas, woken.proposals[0].replicas) == (3, 3)  # ceil(25 / 10), no tolerance
    condition = woken.condition("ScaledToZero")
    assert condition is not None
    assert (condition.status, condition.reason) == ("False", "NotScaledToZero")


def test_manual_scale_to_zero_pauses_the_hpa() -> None:
    """shouldComputeMetricsForZeroReplicas: zero replicas without ScaledToZero disables scaling."""
    hpa = HorizontalPodAutoscaler(min_replicas=1, max_replicas=5, metrics=[_external(10)])
    assert not hpa.scale_to_zero
    result = hpa.reconcile_detailed(
        now=NOW, spec_replicas=0, status_replicas=0, ready_pods=0, metric_values=[[100]]
    )
    assert (result.replicas, result.proposals) == (0, ())
    active = result.condition("ScalingActive")
    assert active is not None
    assert (active.status, active.reason) == ("False", "ScalingDisabled")
