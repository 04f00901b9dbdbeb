"""Upstream's replica calculator tables, case by case, for External, Object and Pods metrics.

Sources: the table-driven ``replica_calculator_test.go`` of the fork that tracks
Kubernetes master (``RC_TEST``) and the classic per-function tests of the v2beta2 era
(``RC_TEST_CLASSIC``). Every case keeps upstream's name (``TestFunc/<case>`` or the
classic function name). Values are milli-units as in upstream's fixtures; replicas and
usage are compared exactly at the milli level, then through the public float API.

Resource (CPU) cases and ``TestGroupPods`` are not ported: CPU metrics are not modelled.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import pytest

from gpuscale.controllers._hpa.replica_calculator import (
    calculate_external,
    calculate_external_per_pod,
    calculate_object,
    calculate_object_per_pod,
    calculate_pods,
)
from gpuscale.controllers.hpa import (
    MetricTarget,
    ReplicaCalculationError,
    Tolerance,
    external_metric_replicas,
    external_per_pod_metric_replicas,
    object_metric_replicas,
    object_per_pod_metric_replicas,
    per_pod_usage,
    pods_metric_replicas,
)

from ._upstream import MAX_INT32, MAX_INT64, RC_TEST, RC_TEST_CLASSIC, milli

DEFAULT = Tolerance(0.1, 0.1)
ONE_PERCENT_UP = Tolerance(0.1, 0.01)

# (name, source, current/status replicas, ready pods, samples (milli), target (milli),
#  expected replicas, expected usage (milli), tolerances)
EXTERNAL_VALUE = [
    ("TestReplicaCalcExternalMetric/scale down: ignores unready pods (would otherwise scale up)",
     RC_TEST, 3, 1, [8600], 4400, 2, 8600, DEFAULT),
    ("TestReplicaCalcExternalMetric/scale down", RC_TEST, 5, 5, [8600], 14334, 3, 8600, DEFAULT),
    ("TestReplicaCalcExternalMetric/within default tolerance",
     RC_TEST, 3, 3, [8600], 8888, 3, 8600, DEFAULT),
    ("TestReplicaCalcExternalMetric/outside configurable 1% tolerance",
     RC_TEST, 3, 3, [8900], 8800, 4, 8900, ONE_PERCENT_UP),
    ("TestReplicaCalcExternalMetric/usage overflow caps at MaxInt64",
     RC_TEST, 3, 3, [MAX_INT64 // 2 + 1, MAX_INT64 // 2 + 1], MAX_INT64, 3, MAX_INT64, DEFAULT),
    ("TestReplicaCalcScaleUpCMExternalIgnoresUnreadyPods",
     RC_TEST_CLASSIC, 3, 1, [8600], 4400, 2, 8600, DEFAULT),
    ("TestReplicaCalcScaleDownCMExternal", RC_TEST_CLASSIC, 5, 5, [8600], 14334, 3, 8600, DEFAULT),
    ("TestReplicaCalcToleranceCMExternal", RC_TEST_CLASSIC, 3, 3, [8600], 8888, 3, 8600, DEFAULT),
]  # fmt: skip

EXTERNAL_AVERAGE = [
    ("TestReplicaCalcExternalPerPodMetric/replica count overflow saturates to MaxInt32",
     RC_TEST, 1, [MAX_INT64], 1, MAX_INT32, MAX_INT64, DEFAULT),
    ("TestReplicaCalcExternalPerPodMetric/"
     "usage overflow with huge target leaves replicas unchanged",
     RC_TEST, 1, [MAX_INT64], MAX_INT64, 1, MAX_INT64, DEFAULT),
    ("TestReplicaCalcExternalPerPodMetric/statusReplicas zero does not overflow usage",
     RC_TEST, 0, [20000], 5000, 4, 0, DEFAULT),
    ("TestReplicaCalcExternalPerPodMetric/statusReplicas zero and metric zero does not underflow",
     RC_TEST, 0, [0], 5000, 0, 0, DEFAULT),
    ("TestReplicaCalcExternalPerPodMetric/scale up", RC_TEST, 3, [8600], 2150, 4, 2867, DEFAULT),
    ("TestReplicaCalcExternalPerPodMetric/scale down", RC_TEST, 5, [8600], 2867, 3, 1720, DEFAULT),
    ("TestReplicaCalcExternalPerPodMetric/within default tolerance",
     RC_TEST, 3, [8600], 2900, 3, 2867, DEFAULT),
    ("TestReplicaCalcExternalPerPodMetric/outside configurable 1% tolerance",
     RC_TEST, 3, [8600], 2800, 4, 2867, ONE_PERCENT_UP),
    ("TestReplicaCalcScaleUpPerPodCMExternal", RC_TEST_CLASSIC, 3, [8600], 2150, 4, 2867, DEFAULT),
    ("TestReplicaCalcScaleDownPerPodCMExternal",
     RC_TEST_CLASSIC, 5, [8600], 2867, 3, 1720, DEFAULT),
    ("TestReplicaCalcTolerancePerPodCMExternal",
     RC_TEST_CLASSIC, 3, [8600], 2900, 3, 2867, DEFAULT),
]  # fmt: skip

OBJECT_VALUE = [
    ("TestReplicaCalcObjectMetric/scale up", RC_TEST, 3, 3, 20000, 15000, 4, 20000, DEFAULT),
    ("TestReplicaCalcObjectMetric/scale up: very large metric saturates replicas to MaxInt32",
     RC_TEST, 3, 3, MAX_INT64, 1, MAX_INT32, MAX_INT64, DEFAULT),
    ("TestReplicaCalcObjectMetric/scale up: ignores unready pods",
     RC_TEST, 3, 1, 50000, 10000, 5, 50000, DEFAULT),
    ("TestReplicaCalcObjectMetric/scale down", RC_TEST, 5, 5, 12000, 20000, 3, 12000, DEFAULT),
    ("TestReplicaCalcObjectMetric/within default tolerance",
     RC_TEST, 3, 3, 20666, 20000, 3, 20666, DEFAULT),
    ("TestReplicaCalcObjectMetric/outside configurable 1% tolerance",
     RC_TEST, 3, 3, 20666, 20000, 4, 20666, ONE_PERCENT_UP),
    ("TestReplicaCalcScaleUpCMObject", RC_TEST_CLASSIC, 3, 3, 20000, 15000, 4, 20000, DEFAULT),
    ("TestReplicaCalcScaleUpCMObjectIgnoresUnreadyPods",
     RC_TEST_CLASSIC, 3, 1, 50000, 10000, 5, 50000, DEFAULT),
    ("TestReplicaCalcScaleDownCMObject", RC_TEST_CLASSIC, 5, 5, 12000, 20000, 3, 12000, DEFAULT),
    ("TestReplicaCalcToleranceCMObject", RC_TEST_CLASSIC, 3, 3, 20666, 20000, 3, 20666, DEFAULT),
]  # fmt: skip

OBJECT_AVERAGE = [
    ("TestReplicaCalcObjectPerPodMetric/usage overflow with huge target leaves replicas unchanged",
     RC_TEST, 1, MAX_INT64, MAX_INT64, 1, MAX_INT64, DEFAULT),
    ("TestReplicaCalcObjectPerPodMetric/scale up", RC_TEST, 3, 20000, 5000, 4, 6667, DEFAULT),
    ("TestReplicaCalcObjectPerPodMetric/scale down", RC_TEST, 5, 6000, 2000, 3, 1200, DEFAULT),
    ("TestReplicaCalcObjectPerPodMetric/within default tolerance",
     RC_TEST, 4, 20166, 5000, 4, 5042, DEFAULT),
    ("TestReplicaCalcObjectPerPodMetric/outside configurable 1% tolerance",
     RC_TEST, 4, 20208, 5000, 5, 5052, ONE_PERCENT_UP),
    ("TestReplicaCalcObjectPerPodMetric/statusReplicas zero does not overflow usage",
     RC_TEST, 0, 20000, 5000, 4, 0, DEFAULT),
    ("TestReplicaCalcObjectPerPodMetric/statusReplicas zero and metric zero does not underflow",
     RC_TEST, 0, 0, 5000, 0, 0, DEFAULT),
    ("TestReplicaCalcScaleUpCMPerPodObject", RC_TEST_CLASSIC, 3, 20000, 5000, 4, 6667, DEFAULT),
    ("TestReplicaCalcScaleDownPerPodCMObject", RC_TEST_CLASSIC, 5, 6000, 2000, 3, 1200, DEFAULT),
    ("TestReplicaCalcTolerancePerPodCMObject", RC_TEST_CLASSIC, 4, 20166, 5000, 4, 5042, DEFAULT),
]  # fmt: skip

# (name, source, current replicas, samples (milli), pods without a sample, target (milli),
#  expected replicas, expected usage (milli), tolerances). The fixtures' readiness and
#  start times do not matter for a non-CPU metric (groupPods only checks them for CPU).
PODS = [
    ("TestReplicaCalcPodMetric/scale up",
     RC_TEST, 3, [20000, 10000, 30000], 0, 15000, 4, 20000, DEFAULT),
    ("TestReplicaCalcPodMetric/scale up: unready hot-CPU pod scales less",
     RC_TEST, 3, [50000, 10000, 30000], 0, 15000, 6, 30000, DEFAULT),
    ("TestReplicaCalcPodMetric/scale up: unready hot-CPU pods avoid scale-down",
     RC_TEST, 3, [50000, 15000, 30000], 0, 15000, 7, 31666, DEFAULT),
    ("TestReplicaCalcPodMetric/scale down", RC_TEST, 5, [12000] * 5, 0, 20000, 3, 12000, DEFAULT),
    ("TestReplicaCalcPodMetric/within default tolerance",
     RC_TEST, 3, [20000, 21000, 21000], 0, 20000, 3, 20666, DEFAULT),
    ("TestReplicaCalcPodMetric/outside configurable 1% tolerance",
     RC_TEST, 3, [20000, 21000, 21000], 0, 20000, 4, 20666, ONE_PERCENT_UP),
    ("TestReplicaCalcPodMetric/no change: missing metrics",
     RC_TEST, 5, [20000, 19000, 21000], 2, 20000, 5, 20000, DEFAULT),
    ("TestReplicaCalcPodMetric/rolling update with maxSurge: extra pod missing metric",
     RC_TEST, 2, [10000, 10000], 1, 17000, 2, 10000, DEFAULT),
    ("TestReplicaCalcScaleUpCM", RC_TEST_CLASSIC, 3, [20000, 10000, 30000], 0, 15000, 4, 20000,
     DEFAULT),
    ("TestReplicaCalcScaleUpCMUnreadyHotCpuNoLessScale",
     RC_TEST_CLASSIC, 3, [50000, 10000, 30000], 0, 15000, 6, 30000, DEFAULT),
    ("TestReplicaCalcScaleUpCMUnreadyHotCpuScaleWouldScaleDown",
     RC_TEST_CLASSIC, 3, [50000, 15000, 30000], 0, 15000, 7, 31666, DEFAULT),
    ("TestReplicaCalcScaleUpCMExternal", RC_TEST_CLASSIC, 1, [8600], 0, 4400, 2, 8600, DEFAULT),
    ("TestReplicaCalcScaleUpCMExternalNoLabels",
     RC_TEST_CLASSIC, 1, [8600], 0, 4400, 2, 8600, DEFAULT),
    ("TestReplicaCalcScaleDownCM", RC_TEST_CLASSIC, 5, [12000] * 5, 0, 20000, 3, 12000, DEFAULT),
    ("TestReplicaCalcToleranceCM",
     RC_TEST_CLASSIC, 3, [20000, 21000, 21000], 0, 20000, 3, 20666, DEFAULT),
]  # fmt: skip

PER_POD_USAGE = [
    ("TestGetPerPodUsage/zero replicas returns zero", 20000, 0, 0),
    ("TestGetPerPodUsage/normal division with ceiling", 1000, 3, 334),
    ("TestGetPerPodUsage/overflow returns MaxInt64", MAX_INT64, 1, MAX_INT64),
]


def _target(source: str, target_type: str, target_milli: int) -> MetricTarget:
    return MetricTarget(source=source, target_type=target_type, target=milli(target_milli))  # type: ignore[arg-type]


def _plain(source: str, target_type: str, target: int) -> MetricTarget:
    return MetricTarget(source=source, target_type=target_type, target=target)  # type: ignore[arg-type]


class ValueCase(NamedTuple):
    name: str
    source: str
    current: int
    ready: int
    samples: Any
    target: int
    replicas: int
    usage: int
    tolerance: Tolerance


class AverageCase(NamedTuple):
    name: str
    source: str
    status: int
    samples: Any
    target: int
    replicas: int
    usage: int
    tolerance: Tolerance


class PodsCase(NamedTuple):
    name: str
    source: str
    current: int
    samples: list[int]
    missing: int
    target: int
    replicas: int
    usage: int
    tolerance: Tolerance


def _cases(factory: Callable[..., object], table: list[tuple[Any, ...]]) -> Any:
    """Parametrize over ``table``: each row an upstream case, named and sourced by the row."""
    return pytest.mark.parametrize(
        "case",
        [
            pytest.param(factory(*row), id=str(row[0]), marks=pytest.mark.upstream(row[1]))
            for row in table
        ],
    )


@_cases(ValueCase, EXTERNAL_VALUE)
def test_external_value(case: ValueCase) -> None:
    exact = calculate_external(
        case.samples,
        case.target,
        current_replicas=case.current,
        ready_pods=case.ready,
        tolerance=case.tolerance,
    )
    assert (exact.replicas, exact.usage_milli) == (case.replicas, case.usage), case
    got = external_metric_replicas(
        [milli(s) for s in case.samples],
        _target("External", "Value", case.target),
        current_replicas=case.current,
        ready_pods=case.ready,
        tolerance=case.tolerance,
    )
    assert got == (case.replicas, pytest.approx(case.usage / 1000, rel=1e-12))


@_cases(AverageCase, EXTERNAL_AVERAGE)
def test_external_average_value(case: AverageCase) -> None:
    exact = calculate_external_per_pod(
        case.samples, case.target, status_replicas=case.status, tolerance=case.tolerance
    )
    assert (exact.replicas, exact.usage_milli) == (case.replicas, case.usage), case
    got = external_per_pod_metric_replicas(
        [milli(s) for s in case.samples],
        _target("External", "AverageValue", case.target),
        status_replicas=case.status,
        tolerance=case.tolerance,
    )
    assert got == (case.replicas, pytest.approx(case.usage / 1000, rel=1e-12))


@_cases(ValueCase, OBJECT_VALUE)
def test_object_value(case: ValueCase) -> None:
    exact = calculate_object(
        case.samples,
        case.target,
        current_replicas=case.current,
        ready_pods=case.ready,
        tolerance=case.tolerance,
    )
    assert (exact.replicas, exact.usage_milli) == (case.replicas, case.usage), case
    got = object_metric_replicas(
        milli(case.samples),
        _target("Object", "Value", case.target),
        current_replicas=case.current,
        ready_pods=case.ready,
        tolerance=case.tolerance,
    )
    assert got == (case.replicas, pytest.approx(case.usage / 1000, rel=1e-12))


@_cases(AverageCase, OBJECT_AVERAGE)
def test_object_average_value(case: AverageCase) -> None:
    exact = calculate_object_per_pod(
        case.samples, case.target, status_replicas=case.status, tolerance=case.tolerance
    )
    assert (exact.replicas, exact.usage_milli) == (case.replicas, case.usage), case
    got = object_per_pod_metric_replicas(
        milli(case.samples),
        _target("Object", "AverageValue", case.target),
        status_replicas=case.status,
        tolerance=case.tolerance,
    )
    assert got == (case.replicas, pytest.approx(case.usage / 1000, rel=1e-12))


@_cases(PodsCase, PODS)
def test_pods(case: PodsCase) -> None:
    exact = calculate_pods(
        case.samples,
        case.target,
        current_replicas=case.current,
        tolerance=case.tolerance,
        missing_pods=case.missing,
    )
    assert (exact.replicas, exact.usage_milli) == (case.replicas, case.usage), case
    got = pods_metric_replicas(
        [milli(s) for s in case.samples],
        _target("Pods", "AverageValue", case.target),
        current_replicas=case.current,
        missing_pods=case.missing,
        tolerance=case.tolerance,
    )
    assert got == (case.replicas, pytest.approx(case.usage / 1000, rel=1e-12))


@pytest.mark.upstream(RC_TEST)
@pytest.mark.parametrize(
    ("name", "usage", "status", "expected"), PER_POD_USAGE, ids=[r[0] for r in PER_POD_USAGE]
)
def test_get_per_pod_usage(name: str, usage: int, status: int, expected: int) -> None:
    assert per_pod_usage(usage, status) == expected, name


# Behaviour of upstream code paths no upstream table reaches; each cites the code it follows.


def test_zero_current_replicas_ignores_tolerance_and_pods() -> None:
    """getUsageRatioReplicaCount at currentReplicas == 0: ceil(ratio), no pods needed."""
    target = _plain("External", "Value", 15)
    assert external_metric_replicas(["16"], target, current_replicas=0, ready_pods=0) == (2, 16.0)
    assert external_metric_replicas(["15"], target, current_replicas=0, ready_pods=0)[0] == 1
    assert external_metric_replicas(["0"], target, current_replicas=0, ready_pods=0)[0] == 0


def test_value_target_with_no_ready_pods_proposes_zero() -> None:
    """getReadyPodsCount counts Running+Ready pods; none ready means ceil(ratio x 0) = 0."""
    target = _plain("Object", "Value", 10)
    assert object_metric_replicas(50, target, current_replicas=3, ready_pods=0)[0] == 0


def test_value_target_with_no_pods_at_all_is_an_error() -> None:
    """getReadyPodsCount errors when the selector matches no pod."""
    target = _plain("External", "Value", 10)
    with pytest.raises(ReplicaCalculationError, match="no pods returned by selector"):
        external_metric_replicas([50], target, current_replicas=3, ready_pods=0, pods=0)


def test_no_external_samples_is_an_error() -> None:
    """metrics/client.go GetExternalMetric: zero items is an error."""
    with pytest.raises(ReplicaCalculationError, match="no metrics returned"):
        external_per_pod_metric_replicas(
            [], _plain("External", "AverageValue", 1), status_replicas=2
        )


def test_no_pod_samples_is_an_error() -> None:
    """metrics/client.go GetRawMetric: zero items is an error."""
    with pytest.raises(ReplicaCalculationError, match="no metrics returned"):
        pods_metric_replicas(
            [], _plain("Pods", "AverageValue", 1), current_replicas=2, missing_pods=2
        )


def test_external_average_value_negative_sample_reads_as_overflow() -> None:
    """GetExternalPerPodMetricReplicas treats any negative running sum as an int64 overflow."""
    exact = calculate_external_per_pod([-5000], 1000, status_replicas=2, tolerance=Tolerance())
    assert (exact.replicas, exact.usage_milli) == (MAX_INT32, MAX_INT64)


def test_external_value_sums_every_series() -> None:
    """GetExternalMetricReplicas sums every series the selector matches."""
    target = _plain("External", "Value", 4)
    assert external_metric_replicas([3, 5], target, current_replicas=1, ready_pods=1) == (2, 8.0)


def test_pods_scale_up_counts_pending_pods_at_zero() -> None:
    """calcPlainMetricReplicas: on a scale-up, unready (Pending) pods count as using 0."""
    target = _plain("Pods", "AverageValue", 10)
    # mean 20 -> ratio 2; with 2 Pending pods at 0 the mean is 10 -> within tolerance.
    assert pods_metric_replicas([20, 20], target, current_replicas=4, unready_pods=2)[0] == 4
    # 1 Pending pod: mean 40/3 -> ratio 1.33 -> ceil(1.33 x 3) = 4, more than current 2.
    assert pods_metric_replicas([20, 20], target, current_replicas=2, unready_pods=1)[0] == 4


def test_pods_scale_down_counts_missing_pods_at_target() -> None:
    """calcPlainMetricReplicas: on a scale-down, missing pods count as using the target."""
    target = _plain("Pods", "AverageValue", 10)
    # mean 2 -> ratio .2; two missing pods at 10 -> mean 24/4 = 6 -> ceil(.6 x 4) = 3.
    assert pods_metric_replicas([2, 2], target, current_replicas=4, missing_pods=2) == (3, 2.0)


def test_pods_superfluous_samples_are_averaged_in() -> None:
    """calcPlainMetricReplicas averages samples of pods the selector no longer lists."""
    target = _plain("Pods", "AverageValue", 10)
    # 1 pod listed, 2 samples (one superfluous): mean 30 -> ceil(3 x 1) = 3.
    assert pods_metric_replicas([20, 40], target, current_replicas=1, ready_pods=1)[0] == 3
