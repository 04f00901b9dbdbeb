"""Properties the HPA model must keep for any input (hypothesis).

- After a sync from a non-zero count, the count is within [minReplicas, maxReplicas]
  (the zero-replica and out-of-range short cuts in reconcileAutoscaler, the clamps in
  convertDesiredReplicasWithRules / convertDesiredReplicasWithBehaviorRate).
- With no history, a metric exactly at its target never changes the count (the
  tolerance check comes first in every replica calculator function).
- Stabilization never lets the count drop below the highest recommendation still in the
  scale-down window (stabilizeRecommendation[WithBehaviors]).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscale.controllers.hpa import (
    Behavior,
    HorizontalPodAutoscaler,
    MetricTarget,
    Recommendation,
    ScalingPolicy,
    ScalingRules,
    Tolerance,
    stabilize_recommendation_with_behaviors,
)

from ._upstream import NOW

SOURCES = [
    ("External", "Value"),
    ("External", "AverageValue"),
    ("Object", "Value"),
    ("Object", "AverageValue"),
    ("Pods", "AverageValue"),
]

policies = st.lists(
    st.builds(
        ScalingPolicy,
        type=st.sampled_from(["Pods", "Percent"]),
        value=st.integers(1, 500),
        period_seconds=st.integers(1, 300),
    ),
    min_size=1,
    max_size=3,
)
rules = st.builds(
    ScalingRules,
    stabilization_window_seconds=st.none() | st.integers(0, 600),
    select_policy=st.sampled_from([None, "Max", "Min", "Disabled"]),
    policies=st.none() | policies,
)
behaviors = st.none() | st.builds(
    Behavior, scale_up=st.none() | rules, scale_down=st.none() | rules
)
tolerances = st.builds(Tolerance, scale_down=st.floats(0, 0.5), scale_up=st.floats(0, 0.5))


@st.composite
def hpas(draw: st.DrawFn) -> tuple[HorizontalPodAutoscaler, MetricTarget]:
    source, target_type = draw(st.sampled_from(SOURCES))
    metric = MetricTarget(
        source=source,  # type: ignore[arg-type]
        target_type=target_type,  # type: ignore[arg-type]
        target=draw(st.integers(1, 10_000)),
    )
    maximum = draw(st.integers(1, 60))
    minimum = draw(st.integers(0, maximum))
    hpa = HorizontalPodAutoscaler(
        min_replicas=minimum,
        max_replicas=maximum,
        metrics=[metric],
        behavior=draw(behaviors),
        tolerance=draw(tolerances),
        downscale_stabilization_seconds=draw(st.sampled_from([0, 60, 300])),
        recommendations=draw(st.none() | st.just([])),
    )
    return hpa, metric


def _samples(metric: MetricTarget, value: float, replicas: int) -> list[Any]:
    if metric.source == "Pods":
        return [value] * max(replicas, 1)
    return [value]


steps = st.lists(
    st.tuples(st.sampled_from([15.0, 15.0, 15.0, 1.0, 60.0]), st.floats(0, 50_000)),
    min_size=1,
    max_size=25,
)


@settings(max_examples=150, deadline=None)
@given(hpas(), st.integers(1, 80), steps)
def test_count_stays_within_min_and_max(
    built: tuple[HorizontalPodAutoscaler, MetricTarget], start: int, sequence: list[Any]
) -> None:
    hpa, metric = built
    now, replicas = NOW, start
    for delta, value in sequence:
        now += delta
        if replicas == 0:
            break
        replicas = hpa.reconcile(
            now=now,
            spec_replicas=replicas,
            status_replicas=replicas,
            ready_pods=replicas,
            metric_values=[_samples(metric, value, replicas)],
        )
        assert hpa.min_replicas <= replicas <= hpa.max_replicas


@settings(max_examples=150, deadline=None)
@given(hpas(), st.data())
def test_steady_metric_at_target_never_changes_the_count(
    built: tuple[HorizontalPodAutoscaler, MetricTarget], data: st.DataObject
) -> None:
    hpa, metric = built
    replicas = data.draw(st.integers(max(hpa.min_replicas, 1), hpa.max_replicas))
    target = metric.target_milli / 1000
    per_replica = metric.target_type == "AverageValue" and metric.source != "Pods"
    value = target * replicas if per_replica else target
    for step in range(4):
        got = hpa.reconcile(
            now=NOW + 15 * step,
            spec_replicas=replicas,
            status_replicas=replicas,
            ready_pods=replicas,
            metric_values=[_samples(metric, value, replicas)],
        )
        assert got == replicas


history = st.lists(
    st.tuples(st.floats(0, 1000), st.integers(0, 100)).map(
        lambda pair: Recommendation(NOW - pair[0], pair[1])
    ),
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(
    history,
    st.integers(0, 100),
    st.integers(0, 100),
    st.integers(0, 600),
    st.integers(0, 600),
)
def test_stabilization_never_drops_below_the_window_maximum(
    recommendations: list[Recommendation], desired: int, current: int, up: int, down: int
) -> None:
    behavior = Behavior(
        scale_up=ScalingRules(stabilization_window_seconds=up),
        scale_down=ScalingRules(stabilization_window_seconds=down),
    )
    replicas, stored = stabilize_recommendation_with_behaviors(
        desired=desired,
        current_replicas=current,
        behavior=behavior,
        recommendations=recommendations,
        now=NOW,
    )
    in_window = [r.replicas for r in recommendations if r.timestamp > NOW - down]
    assert replicas >= min(current, max([desired, *in_window]))
    assert Recommendation(NOW, desired) in stored
    assert len(stored) <= len(recommendations) + 1


@settings(max_examples=150, deadline=None)
@given(hpas(), st.integers(1, 60), steps)
def test_hpa_never_scales_below_the_window_maximum(
    built: tuple[HorizontalPodAutoscaler, MetricTarget], start: int, sequence: list[Any]
) -> None:
    hpa, metric = built
    replicas = min(start, hpa.max_replicas)
    now = NOW
    for delta, value in sequence:
        now += delta
        if replicas == 0 or replicas < hpa.min_replicas:
            break
        seeded = hpa.recommendations
        history_before = [Recommendation(now, replicas)] if seeded is None else list(seeded)
        if hpa.behavior is None:
            window = hpa.downscale_stabilization_seconds
            kept = [r.replicas for r in history_before if r.timestamp >= now - window]
        else:
            assert hpa.behavior.scale_down is not None
            window = float(hpa.behavior.scale_down.stabilization_window_seconds or 0)
            kept = [r.replicas for r in history_before if r.timestamp > now - window]
        before = replicas
        replicas = hpa.reconcile(
            now=now,
            spec_replicas=replicas,
            status_replicas=replicas,
            ready_pods=replicas,
            metric_values=[_samples(metric, value, replicas)],
        )
        if kept:
            assert replicas >= min(before, max(kept))
