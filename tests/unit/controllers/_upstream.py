"""Helpers that rebuild upstream's test fixtures (names and arithmetic as upstream's tests).

Shared by the ``test_hpa_*`` modules: milli-unit values as exact quantities, the
``generateScalingRules`` and ``generateEventsUniformDistribution`` fixtures of
``horizontal_test.go``, and the source references each ported table cites. The
``test_keda_*`` modules take their sources (``KEDA_*``) from here too.

A test case ported from upstream carries ``@pytest.mark.upstream(SOURCE)`` (its id names
the upstream case, ``TestFunc/<case>``) or ``@pytest.mark.upstream(SOURCE, test="TestFunc")``;
each mark counts one ported case in ``scripts/count_ported_cases.py``. Ginkgo specs are
named ``test="It"`` with the spec's sentence as the case id or in ``case``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from decimal import Decimal
from typing import Any

import pytest

from gpuscale.controllers.hpa import ScaleEvent, ScalingPolicy, ScalingRules

RC_TEST = (
    "omerap12/kubernetes@a769d5884497dc246960b38f3e5aae2cc30dd062 "
    "pkg/controller/podautoscaler/replica_calculator_test.go"
)
RC_TEST_CLASSIC = (
    "kubernetes/kubernetes@5f3bc7cdab9b2544f0389b9a83c88fa15b793b7a "
    "pkg/controller/podautoscaler/replica_calculator_test.go"
)
HORIZONTAL_TEST = (
    "omerap12/kubernetes@060da1681551ba64d82dad3c8d4246ab81760d4d "
    "pkg/controller/podautoscaler/horizontal_test.go"
)
DEFAULTS_TEST = (
    "kubernetes/kubernetes@0a74a85ed8c08e0f0588ecc4a764883698a1b99e "
    "pkg/apis/autoscaling/v2/defaults_test.go"
)
QUANTITY_TEST = (
    "kubernetes/apimachinery@eed236ceee2c19c2753a3d93ac0631dc20750454 "
    "pkg/api/resource/quantity_test.go"
)

KEDA = "kedacore/keda@8b4f083ca8c8c2baf8477e322bd4d16ac4dfa09a"
KEDA_CONTROLLER_TEST = f"{KEDA} controllers/keda/scaledobject_controller_test.go"
KEDA_EXECUTOR_TEST = f"{KEDA} pkg/scaling/executor/scale_scaledobjects_test.go"
KEDA_FALLBACK_TEST = f"{KEDA} pkg/fallback/fallback_test.go"
KEDA_FORMULA_TEST = f"{KEDA} pkg/scaling/modifiers/formula_test.go"
KEDA_PROMETHEUS_TEST = f"{KEDA} pkg/scalers/prometheus_scaler_test.go"
KEDA_SCALE_HANDLER_TEST = f"{KEDA} pkg/scaling/scale_handler_test.go"
KEDA_SCALER_TEST = f"{KEDA} pkg/scalers/scaler_test.go"
KEDA_TRIGGERS_TEST = f"{KEDA} apis/keda/v1alpha1/scaletriggers_types_test.go"
KEDA_TYPED_CONFIG_TEST = f"{KEDA} pkg/scalers/scalersconfig/typed_config_test.go"
KEDA_TYPES_TEST = f"{KEDA} apis/keda/v1alpha1/scaledobject_types_test.go"
KEDA_WEBHOOK_TEST = f"{KEDA} apis/keda/v1alpha1/scaledobject_webhook_test.go"

MAX_INT32 = 2**31 - 1
MAX_INT64 = 2**63 - 1
NOW = 1_000_000.0


def milli(value: int) -> Decimal:
    """An exact quantity of ``value`` milli-units (upstream's NewMilliQuantity(value))."""
    return Decimal(value).scaleb(-3)


def generate_scaling_rules(
    pods: int, pods_period: int, percent: int, percent_period: int, window: int
) -> ScalingRules:
    """horizontal_test.go generateScalingRules: Max select, a policy per non-zero value."""
    policies = []
    if pods != 0:
        policies.append(ScalingPolicy(type="Pods", value=pods, period_seconds=pods_period))
    if percent != 0:
        policies.append(ScalingPolicy(type="Percent", value=percent, period_seconds=percent_period))
    return ScalingRules(
        stabilization_window_seconds=window,
        select_policy="Max",
        policies=policies or None,
    )


def events_uniform(raw: Sequence[int], period_seconds: int, now: float = NOW) -> list[ScaleEvent]:
    """horizontal_test.go generateEventsUniformDistribution: one event mid-segment each.

    Go truncates the float age to a whole Duration before multiplying by a second.
    """
    segment = period_seconds / len(raw)
    events = []
    for index, change in enumerate(raw):
        age = int(period_seconds - segment * (index + 1) + segment / 2)
        events.append(ScaleEvent(now - age, change))
    return events


def upstream_params(
    rows: Sequence[Sequence[Any]],
    source: str,
    test: str,
    *,
    own: Collection[str] = (),
    elsewhere: Mapping[str, tuple[str, str]] | None = None,
) -> list[Any]:
    """``rows`` (each starting with its case name) as ``pytest.param`` with that name as id,
    marked as cases of upstream's ``test`` in ``source``. Rows named in ``own`` are
    gpuscale's own cases (not marked); ``elsewhere`` maps a row's name to the ``(source,
    test)`` it comes from when that is another upstream test."""
    params = []
    for row in rows:
        name = str(row[0])
        if name in own:
            marks: Any = ()
        else:
            row_source, row_test = (elsewhere or {}).get(name, (source, test))
            marks = pytest.mark.upstream(row_source, test=row_test)
        params.append(pytest.param(*row, id=name, marks=marks))
    return params
