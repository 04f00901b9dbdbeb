"""Upstream's stabilization, rate-limit, event-history and defaulting tables.

Sources: ``horizontal_test.go`` (``HORIZONTAL_TEST``: TestScalingWithRules,
TestNormalizeDesiredReplicasWithBehavior, TestNormalizeDesiredReplicas,
TestStoreScaleEvents, TestConvertDesiredReplicasWithRules,
TestCalculateScaleUpLimitWithScalingRules, TestCalculateScaleDownLimitWithBehaviors) and
``defaults_test.go`` (``DEFAULTS_TEST``: TestGenerateScaleUpRules,
TestGenerateScaleDownRules). Times are ages before a fixed ``NOW``; upstream builds them
from ``time.Now()``.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpuscale.controllers.hpa import (
    Behavior,
    Recommendation,
    ScaleEvent,
    ScalingPolicy,
    ScalingRules,
    calculate_scale_down_limit,
    calculate_scale_up_limit,
    convert_desired_replicas_with_behavior_rate,
    convert_desired_replicas_with_rules,
    generate_scale_down_rules,
    generate_scale_up_rules,
    get_replicas_change_per_period,
    legacy_scale_up_limit,
    stabilize_recommendation,
    stabilize_recommendation_with_behaviors,
    store_scale_event,
)

from ._upstream import DEFAULTS_TEST, HORIZONTAL_TEST, NOW, events_uniform
from ._upstream import generate_scaling_rules as gen

# TestScalingWithRules: (name, current, prenormalized desired, min, max, scale-up rules,
# scale-down rules, scale-up events, scale-down events, expected replicas, expected reason).
# Rules left None are GenerateHPAScale{Up,Down}Rules(nil): the API defaults.
SCALING_WITH_RULES = [
    ("prenormalized desired replicas within range", 5, 7, 3, 8, None, None, [], [], 7,
     "DesiredWithinRange"),
    ("prenormalized desired replicas < minReplicas", 3, 1, 2, 8, None, None, [], [], 2,
     "TooFewReplicas"),
    ("prenormalized desired replicas within range when minReplicas is 0", 1, 0, 0, 10, None, None,
     [], [], 0, "DesiredWithinRange"),
    ("maxReplicas is the limit because maxReplicas < scaleUpLimit", 20, 1000, 1, 10, None, None,
     [], [], 10, "TooManyReplicas"),
    ("desired replica count is more than the maximum replica count", 100, 1000, 100, 150, None,
     None, [], [], 150, "TooManyReplicas"),
    ("scaleUpLimit is the limit because scaleUpLimit < maxReplicas with user policies", 3, 1000,
     1, 2000, gen(0, 0, 1, 60, 0), None, [], [], 4, "ScaleUpLimit"),
    ("scaleUp with default behavior", 10, 50, 1, 1000, None, None, [], [], 20, "ScaleUpLimit"),
    ("scaleUp with pods policy larger than percent policy", 10, 500, 1, 1000,
     gen(100, 60, 100, 60, 0), None, [], [], 110, "ScaleUpLimit"),
    ("scaleUp with percent policy larger than pods policy", 10, 500, 1, 1000,
     gen(2, 60, 100, 60, 0), None, [], [], 20, "ScaleUpLimit"),
    ("scaleUp with spec MaxReplicas limitation with large pod policy", 10, 50, 1, 1000,
     gen(100, 60, 0, 0, 0), None, [], [], 50, "DesiredWithinRange"),
    ("scaleUp with spec MaxReplicas limitation with large percent policy", 10, 50, 1, 1000,
     gen(10000, 60, 0, 0, 0), None, [], [], 50, "DesiredWithinRange"),
    ("scaleUp with pod policy limitation", 10, 50, 1, 1000, gen(30, 60, 0, 0, 0), None, [], [],
     40, "ScaleUpLimit"),
    ("scaleUp with percent policy limitation", 10, 50, 1, 1000, gen(0, 0, 200, 60, 0), None, [],
     [], 30, "ScaleUpLimit"),
    ("scaleDown with percent policy larger than pod policy", 100, 2, 1, 1000, None,
     gen(20, 60, 1, 60, 300), [], [], 80, "ScaleDownLimit"),
    ("scaleDown with pod policy larger than percent policy", 100, 2, 1, 1000, None,
     gen(2, 60, 1, 60, 300), [], [], 98, "ScaleDownLimit"),
    ("scaleDown with spec MinReplicas limitation with large pod policy", 10, 0, 1, 1000, None,
     gen(100, 60, 0, 0, 300), [], [], 1, "TooFewReplicas"),
    ("scaleDown with spec MinReplicas limitation with large percent policy", 10, 2, 5, 1000, None,
     gen(0, 0, 100, 60, 300), [], [], 5, "TooFewReplicas"),
    ("scaleDown with pod policy limitation", 10, 2, 1, 1000, None, gen(5, 60, 0, 0, 300), [], [],
     5, "ScaleDownLimit"),
    ("scaleDown with percent policy limitation", 10, 5, 1, 1000, None, gen(0, 0, 50, 60, 300), [],
     [], 5, "DesiredWithinRange"),
    ("scaleUp with spec MaxReplicas limitation with large pod policy and events", 100, 500, 1, 200,
     gen(300, 60, 0, 0, 0), None, events_uniform([1, 5, 9], 120), [], 200, "TooManyReplicas"),
    ("scaleUp with spec MaxReplicas limitation with large percent policy and events", 100, 500, 1,
     200, gen(0, 0, 10000, 60, 0), None, events_uniform([1, 5, 9], 120), [], 200,
     "TooManyReplicas"),
    ("scaleUp with currentReplicas limitation with rate.PeriodSeconds with a lot of recent scale "
     "up events", 100, 500, 1, 1000, gen(5, 120, 0, 0, 0), None, events_uniform([1, 5, 9], 120),
     [], 100, "ScaleUpLimit"),
    ("scaleUp with pod policy and previous scale up events", 100, 500, 1, 1000,
     gen(150, 120, 0, 0, 0), None, events_uniform([1, 5, 9], 120), [], 235, "ScaleUpLimit"),
    ("scaleUp with percent policy and previous scale up events", 100, 500, 1, 1000,
     gen(0, 0, 200, 120, 0), None, events_uniform([1, 5, 9], 120), [], 255, "ScaleUpLimit"),
    ("scaleUp with percent policy and previous scale up and down events", 6, 24, 1, 1000,
     gen(0, 0, 300, 300, 0), None, events_uniform([4], 120), events_uniform([2], 120), 16,
     "ScaleUpLimit"),
    ("scaleDown with default policy and previous events", 10, 5, 1, 1000, None, None, [],
     events_uniform([1, 5, 9], 120), 5, "DesiredWithinRange"),
    ("scaleDown with spec MinReplicas=nil limitation with large pod policy and previous events",
     100, 0, 1, 1000, None, gen(115, 120, 0, 0, 300), [], events_uniform([1, 5, 9], 120), 1,
     "TooFewReplicas"),
    ("scaleDown with spec MinReplicas limitation with large pod policy and previous events", 100,
     0, 5, 1000, None, gen(130, 120, 0, 0, 300), [], events_uniform([1, 5, 9], 120), 5,
     "TooFewReplicas"),
    ("scaleDown with spec MinReplicas limitation with large percent policy and previous events",
     100, 2, 5, 1000, None, gen(0, 0, 100, 120, 300), [], events_uniform([1, 5, 9], 120), 5,
     "TooFewReplicas"),
    ("scaleDown with pod policy limitation and previous events", 100, 2, 1, 1000, None,
     gen(5, 120, 0, 0, 300), [], events_uniform([1, 5, 9], 120), 100, "ScaleDownLimit"),
    ("scaleDown with percent policy limitation and previous events", 100, 0, 1, 1000, None,
     gen(0, 0, 50, 120, 300), [], events_uniform([2, 4, 6], 120), 56, "ScaleDownLimit"),
    ("scaleDown with percent policy and previous scale up and down events", 10, 1, 1, 1000, None,
     gen(0, 0, 50, 180, 0), events_uniform([2], 120), events_uniform([4], 120), 6,
     "ScaleDownLimit"),
    ("scaleDown with previous events preventing further scale down", 100, 0, 1, 1000, None,
     gen(0, 0, 10, 120, 300), [], events_uniform([10, 10, 10], 120), 100, "ScaleDownLimit"),
    ("scaleDown with with previous events still allowing more scale down", 10, 5, 1, 1000, None,
     gen(0, 0, 1000, 120, 300), [], events_uniform([10, 10, 10], 120), 5, "DesiredWithinRange"),
    ("check 'outdated' flag for events for one behavior for up", 100, 200, 1, 1000,
     gen(1000, 60, 0, 0, 0), None, events_uniform([8, 12, 9, 11], 120), [], 200,
     "DesiredWithinRange"),
    ("check that events were not marked 'outdated' for two different policies in the behavior "
     "for up", 100, 200, 1, 1000, gen(1000, 120, 100, 60, 0), None,
     events_uniform([8, 12, 9, 11], 120), [], 200, "DesiredWithinRange"),
    ("check that events were marked 'outdated' for two different policies in the behavior for up",
     100, 200, 1, 1000, gen(1000, 30, 100, 60, 0), None, events_uniform([8, 12, 9, 11], 120), [],
     200, "DesiredWithinRange"),
    ("check 'outdated' flag for events for one behavior for down", 100, 5, 1, 1000, None,
     gen(1000, 60, 0, 0, 300), [], events_uniform([8, 12, 9, 11], 120), 5, "DesiredWithinRange"),
    ("check that events were not marked 'outdated' for two different policies in the behavior "
     "for down", 100, 5, 1, 1000, None, gen(1000, 120, 100, 60, 300), [],
     events_uniform([8, 12, 9, 11], 120), 5, "DesiredWithinRange"),
    ("check that events were marked 'outdated' for two different policies in the behavior for "
     "down", 100, 5, 1, 1000, None, gen(1000, 30, 100, 60, 300), [],
     events_uniform([8, 12, 9, 11], 120), 5, "DesiredWithinRange"),
]  # fmt: skip


@pytest.mark.upstream(HORIZONTAL_TEST)
@pytest.mark.parametrize(
    "case", SCALING_WITH_RULES, ids=[f"TestScalingWithRules/{row[0]}" for row in SCALING_WITH_RULES]
)
def test_scaling_with_rules(case: tuple[Any, ...]) -> None:
    name, current, desired, minimum, maximum, up, down, up_events, down_events, expected, reason = (
        case
    )
    got = convert_desired_replicas_with_behavior_rate(
        desired=desired,
        current_replicas=current,
        min_replicas=minimum,
        max_replicas=maximum,
        behavior=Behavior(scale_up=up, scale_down=down),
        scale_up_events=up_events,
        scale_down_events=down_events,
        now=NOW,
    )
    assert got == (expected, reason), f"TestScalingWithRules/{name} ({HORIZONTAL_TEST})"


def _recs(*pairs: tuple[int, float]) -> list[Recommendation]:
    """(replicas, age in seconds) pairs as upstream writes {replicas, now.Add(-age)}."""
    return [Recommendation(NOW - age, replicas) for replicas, age in pairs]


# TestNormalizeDesiredReplicasWithBehavior: (name, recommendations, current, desired,
# expected, stored values after (None: not asserted), scale-up window, scale-down window).
# Windows the test leaves unset are Go's zero, not the API defaults.
WITH_BEHAVIOR = [
    ("empty recommendations for scaling down", [], 100, 5, 5, [5], 0, 0),
    ("simple scale down stabilization", _recs((4, 120), (5, 60)), 100, 3, 5, [4, 5, 3], 0, 180),
    ("simple scale up stabilization", _recs((4, 120), (5, 60)), 1, 7, 4, [4, 5, 7], 300, 0),
    ("no scale down stabilization", _recs((1, 120), (2, 60)), 100, 3, 3, [1, 2, 3], 300, 0),
    ("no scale up stabilization", _recs((4, 120), (5, 60)), 1, 3, 3, [4, 5, 3], 0, 300),
    ("no scale down stabilization, reuse recommendation element", _recs((10, 600), (9, 540)), 100,
     3, 3, [10, 3], 0, 0),
    ("no scale up stabilization, reuse recommendation element", _recs((10, 600), (9, 540)), 1, 100,
     100, [10, 100], 0, 0),
    ("scale down stabilization, reuse one of obsolete recommendation element",
     _recs((10, 600), (4, 60), (5, 120), (9, 540)), 100, 3, 5, [10, 4, 5, 3], 0, 180),
    ("scale up stabilization, reuse one of obsolete recommendation element",
     _recs((10, 6000), (6, 60), (5, 120), (9, 180)), 1, 100, 5, [100, 6, 5, 9], 300, 0),
    ("scale up and down stabilization, do not scale up when prenormalized rec goes down",
     _recs((2, 6000), (3, 180)), 2, 1, 2, None, 300, 300),
    ("scale up and down stabilization, do not scale down when prenormalized rec goes up",
     _recs((2, 6000), (1, 180)), 2, 3, 2, None, 300, 300),
]  # fmt: skip


@pytest.mark.upstream(HORIZONTAL_TEST)
@pytest.mark.parametrize(
    "case",
    WITH_BEHAVIOR,
    ids=[f"TestNormalizeDesiredReplicasWithBehavior/{row[0]}" for row in WITH_BEHAVIOR],
)
def test_normalize_desired_replicas_with_behavior(case: tuple[Any, ...]) -> None:
    name, recommendations, current, desired, expected, stored, up, down = case
    behavior = Behavior(
        scale_up=ScalingRules(stabilization_window_seconds=up),
        scale_down=ScalingRules(stabilization_window_seconds=down),
    )
    replicas, history = stabilize_recommendation_with_behaviors(
        desired=desired,
        current_replicas=current,
        behavior=behavior,
        recommendations=recommendations,
        now=NOW,
    )
    assert replicas == expected, name
    if stored is not None:
        assert [entry.replicas for entry in history] == stored, name
    assert Recommendation(NOW, desired) in history


# TestNormalizeDesiredReplicas (no behavior, 5-minute window): (name, recommendations,
# desired, expected, stored log length).
NORMALIZE = [
    ("empty log", [], 5, 5, 1),
    ("stabilize", _recs((4, 120), (5, 60)), 3, 5, 3),
    ("no stabilize", _recs((1, 120), (2, 60)), 3, 3, 3),
    ("no stabilize - old recommendations", _recs((10, 600), (9, 540)), 3, 3, 2),
    ("stabilize - old recommendations", _recs((10, 600), (4, 60), (5, 120), (9, 540)), 3, 5, 4),
]


@pytest.mark.upstream(HORIZONTAL_TEST)
@pytest.mark.parametrize(
    "case", NORMALIZE, ids=[f"TestNormalizeDesiredReplicas/{row[0]}" for row in NORMALIZE]
)
def test_normalize_desired_replicas(case: tuple[Any, ...]) -> None:
    name, recommendations, desired, expected, length = case
    replicas, history = stabilize_recommendation(
        desired=desired, recommendations=recommendations, now=NOW, window_seconds=300
    )
    assert (replicas, len(history)) == (expected, length), name


def _events(*triples: tuple[int, float, bool]) -> list[ScaleEvent]:
    """(change, age, outdated) triples as upstream's timestampedScaleEvent literals."""
    return [ScaleEvent(NOW - age, change, outdated) for change, age, outdated in triples]


# TestStoreScaleEvents: (name, replica change, previous events, events after, rules,
# expected change in the last 60 s before storing). Each case runs for up and for down.
STORE = [
    ("empty entries with default behavior", 5, [], [], None, 0),
    ("empty entries with two-policy-behavior", 5, [], [(5, False)], gen(10, 60, 100, 60, 0), 0),
    ("one outdated entry to be kept untouched without behavior", 5, _events((7, 61, False)),
     [(7, False)], None, 0),
    ("one outdated entry to be replaced with behavior", 5, _events((7, 61, False)), [(5, False)],
     gen(10, 60, 100, 60, 0), 0),
    ("one actual entry to be not touched with behavior", 5, _events((7, 58, False)),
     [(7, False), (5, False)], gen(10, 60, 100, 60, 0), 7),
    ("two entries, one of them to be replaced", 5, _events((7, 61, False), (6, 59, False)),
     [(5, False), (6, False)], gen(10, 60, 0, 0, 0), 6),
    ("replace one entry, use policies with different periods", 5,
     _events((8, 29, False), (6, 59, False), (7, 61, False), (9, 61, False)),
     [(8, False), (6, False), (7, True), (5, False)], gen(10, 60, 100, 30, 0), 14),
    ("two entries, both actual", 5, _events((7, 58, False), (6, 59, False)),
     [(7, False), (6, False), (5, False)], gen(10, 120, 100, 30, 0), 13),
]  # fmt: skip


@pytest.mark.upstream(HORIZONTAL_TEST)
@pytest.mark.parametrize("case", STORE, ids=[f"TestStoreScaleEvents/{row[0]}" for row in STORE])
def test_store_scale_events(case: tuple[Any, ...]) -> None:
    name, change, previous, after, rules, recent_change = case
    assert get_replicas_change_per_period(60, previous, NOW) == recent_change, name
    up_behavior = None if rules is None else Behavior(scale_up=rules)
    up, down = store_scale_event(
        behavior=up_behavior,
        prev_replicas=10,
        new_replicas=10 + change,
        scale_up_events=previous,
        scale_down_events=[],
        now=NOW,
    )
    assert [(e.replica_change, e.outdated) for e in up] == after, f"up: {name}"
    assert down == []
    down_behavior = None if rules is None else Behavior(scale_down=rules)
    up, down = store_scale_event(
        behavior=down_behavior,
        prev_replicas=10,
        new_replicas=10 - change,
        scale_up_events=[],
        scale_down_events=previous,
        now=NOW,
    )
    assert [(e.replica_change, e.outdated) for e in down] == after, f"down: {name}"
    assert up == []


# TestConvertDesiredReplicasWithRules. horizontal_test.go's init() raises scaleUpLimitFactor
# to 8, so the last row expects calculateScaleUpLimit(3) = 24 there.
CONVERT_WITH_RULES = [
    ("prenormalized desired replicas within range", 5, 7, 3, 8, 7, "DesiredWithinRange"),
    ("prenormalized desired replicas < minReplicas", 3, 1, 2, 8, 2, "TooFewReplicas"),
    ("prenormalized desired zeroed replicas within range", 1, 0, 0, 10, 0, "DesiredWithinRange"),
    ("maxReplicas is the limit because maxReplicas < scaleUpLimit", 20, 1000, 1, 10, 10,
     "TooManyReplicas"),
    ("scaleUpLimit is the limit because scaleUpLimit < maxReplicas", 3, 1000, 1, 2000,
     legacy_scale_up_limit(3, factor=8), "ScaleUpLimit"),
]  # fmt: skip


@pytest.mark.upstream(HORIZONTAL_TEST)
@pytest.mark.parametrize(
    "case",
    CONVERT_WITH_RULES,
    ids=[f"TestConvertDesiredReplicasWithRules/{row[0]}" for row in CONVERT_WITH_RULES],
)
def test_convert_desired_replicas_with_rules(case: tuple[Any, ...]) -> None:
    name, current, desired, minimum, maximum, expected, reason = case
    got = convert_desired_replicas_with_rules(
        desired=desired,
        current_replicas=current,
        min_replicas=minimum,
        max_replicas=maximum,
        scale_up_limit_factor=8,
    )
    assert got == (expected, reason), name


def test_convert_desired_replicas_with_rules_production_factor() -> None:
    """With the shipped scaleUpLimitFactor 2 the same row is capped at max(2 x 3, 4) = 6."""
    got = convert_desired_replicas_with_rules(
        desired=1000, current_replicas=3, min_replicas=1, max_replicas=2000
    )
    assert got == (6, "ScaleUpLimit")
    assert legacy_scale_up_limit(1) == 4


MIN_POLICIES = ScalingRules(
    stabilization_window_seconds=300,
    select_policy="Min",
    policies=[
        ScalingPolicy(type="Pods", value=2, period_seconds=60),
        ScalingPolicy(type="Percent", value=50, period_seconds=60),
    ],
)


@pytest.mark.upstream(HORIZONTAL_TEST, test="TestCalculateScaleUpLimitWithScalingRules")
def test_calculate_scale_up_limit_with_scaling_rules() -> None:
    """TestCalculateScaleUpLimitWithScalingRules (HORIZONTAL_TEST)."""
    got = calculate_scale_up_limit(
        current_replicas=1, scale_up_events=[], scale_down_events=[], rules=MIN_POLICIES, now=NOW
    )
    assert got == 2


@pytest.mark.upstream(HORIZONTAL_TEST, test="TestCalculateScaleDownLimitWithBehaviors")
def test_calculate_scale_down_limit_with_behaviors() -> None:
    """TestCalculateScaleDownLimitWithBehaviors (HORIZONTAL_TEST)."""
    got = calculate_scale_down_limit(
        current_replicas=5, scale_up_events=[], scale_down_events=[], rules=MIN_POLICIES, now=NOW
    )
    assert got == 3


def test_disabled_select_policy_freezes_direction() -> None:
    """calculateScale{Up,Down}Limit*: selectPolicy Disabled returns the current count."""
    disabled = ScalingRules(select_policy="Disabled")
    up = calculate_scale_up_limit(current_replicas=7, scale_up_events=[], rules=disabled, now=NOW)
    down = calculate_scale_down_limit(
        current_replicas=7, scale_down_events=[], rules=disabled, now=NOW
    )
    assert (up, down) == (7, 7)
    got = convert_desired_replicas_with_behavior_rate(
        desired=20,
        current_replicas=7,
        min_replicas=1,
        max_replicas=50,
        behavior=Behavior(scale_up=disabled),
        scale_up_events=[],
        scale_down_events=[],
        now=NOW,
    )
    assert got == (7, "ScaleUpLimit")


def _policies(*triples: tuple[str, int, int]) -> tuple[ScalingPolicy, ...]:
    return tuple(ScalingPolicy(type=t, value=v, period_seconds=p) for t, v, p in triples)  # type: ignore[arg-type]


def _rules_from_fixture(
    *,
    pods: int,
    pods_period: int,
    percent: int,
    percent_period: int,
    window: int | None,
    select: str | None,
) -> ScalingRules:
    """defaults_test.go: a policy for each non-zero (value, period) pair, as the test builds it."""
    policies = []
    if pods or pods_period:
        policies.append(ScalingPolicy(type="Pods", value=pods, period_seconds=pods_period))
    if percent or percent_period:
        policies.append(ScalingPolicy(type="Percent", value=percent, period_seconds=percent_period))
    return ScalingRules(
        stabilization_window_seconds=window,
        select_policy=select,  # type: ignore[arg-type]
        policies=policies or None,
    )


# (name, pods, pods period, percent, percent period, window, select, expected policies,
#  expected window, expected select)
SCALE_UP_DEFAULTS = [
    ("Default values", 0, 0, 0, 0, None, None,
     _policies(("Pods", 4, 15), ("Percent", 100, 15)), 0, "Max"),
    ("All parameters are specified", 1, 2, 3, 4, 25, "Max",
     _policies(("Pods", 1, 2), ("Percent", 3, 4)), 25, "Max"),
    ("Pod policy is specified", 1, 2, 0, 0, None, "Min", _policies(("Pods", 1, 2)), 0, "Min"),
    ("Percent policy is specified", 0, 0, 7, 10, None, None, _policies(("Percent", 7, 10)), 0,
     "Max"),
    ("Pod policy and stabilization window are specified", 4, 2, 0, 0, 25, None,
     _policies(("Pods", 4, 2)), 25, "Max"),
    ("Percent policy and stabilization window are specified", 0, 0, 7, 60, 25, None,
     _policies(("Percent", 7, 60)), 25, "Max"),
]  # fmt: skip

SCALE_DOWN_DEFAULTS = [
    ("Default values", 0, 0, 0, 0, None, None, _policies(("Percent", 100, 15)), None, "Max"),
    ("All parameters are specified", 1, 2, 3, 4, 25, "Max",
     _policies(("Pods", 1, 2), ("Percent", 3, 4)), 25, "Max"),
    ("Percent policy is specified", 0, 0, 1, 2, None, "Min", _policies(("Percent", 1, 2)), None,
     "Min"),
    ("Pods policy is specified", 3, 4, 0, 0, None, None, _policies(("Pods", 3, 4)), None, "Max"),
]  # fmt: skip


def _to_k8s(rules: ScalingRules) -> dict[str, object]:
    data: dict[str, object] = {}
    if rules.stabilization_window_seconds is not None:
        data["stabilizationWindowSeconds"] = rules.stabilization_window_seconds
    if rules.select_policy is not None:
        data["selectPolicy"] = rules.select_policy
    if rules.policies is not None:
        data["policies"] = [
            {"type": p.type, "value": p.value, "periodSeconds": p.period_seconds}
            for p in rules.policies
        ]
    return data


@pytest.mark.upstream(DEFAULTS_TEST)
@pytest.mark.parametrize(
    "case",
    SCALE_UP_DEFAULTS,
    ids=[f"TestGenerateScaleUpRules/{row[0]}" for row in SCALE_UP_DEFAULTS],
)
def test_generate_scale_up_rules(case: tuple[Any, ...]) -> None:
    (
        name,
        pods,
        pods_period,
        percent,
        percent_period,
        window,
        select,
        policies,
        expected_window,
        expected_select,
    ) = case
    given = _rules_from_fixture(
        pods=pods,
        pods_period=pods_period,
        percent=percent,
        percent_period=percent_period,
        window=window,
        select=select,
    )
    for rules in (
        generate_scale_up_rules(given),
        Behavior.from_k8s({"scaleUp": _to_k8s(given)}).scale_up,
    ):
        assert rules is not None
        assert rules.policies == policies, f"{name} ({DEFAULTS_TEST})"
        assert rules.stabilization_window_seconds == expected_window, name
        assert rules.select_policy == expected_select, name


@pytest.mark.upstream(DEFAULTS_TEST)
@pytest.mark.parametrize(
    "case",
    SCALE_DOWN_DEFAULTS,
    ids=[f"TestGenerateScaleDownRules/{row[0]}" for row in SCALE_DOWN_DEFAULTS],
)
def test_generate_scale_down_rules(case: tuple[Any, ...]) -> None:
    (
        name,
        pods,
        pods_period,
        percent,
        percent_period,
        window,
        select,
        policies,
        expected_window,
        expected_select,
    ) = case
    given = _rules_from_fixture(
        pods=pods,
        pods_period=pods_period,
        percent=percent,
        percent_period=percent_period,
        window=window,
        select=select,
    )
    for rules in (
        generate_scale_down_rules(given),
        Behavior.from_k8s({"scaleDown": _to_k8s(given)}).scale_down,
    ):
        assert rules is not None
        assert rules.policies == policies, f"{name} ({DEFAULTS_TEST})"
        assert rules.stabilization_window_seconds == expected_window, name
        assert rules.select_policy == expected_select, name
