"""Helpers that rebuild upstream's test fixtures (names and arithmetic as upstream's tests).

Shared by the ``test_hpa_*`` modules: milli-unit values as exact quantities, the
``generateScalingRules`` and ``generateEventsUniformDistribution`` fixtures of
``horizontal_test.go``, and the source references each ported table cites.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

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
