"""The HPA's repeated sync (``HorizontalPodAutoscaler._resync``) answers as the full sync.

A sync on the same inputs as the last one, which ended without a rescale with the
conditions it began with, is answered from the last result and a fresh normalization.
Hypothesis drives two identical HPAs through the same random sequences of syncs (times,
counts, samples drawn from a few values so that inputs repeat), one of them with the
repeat forgotten before every sync (so it always runs the full sync): every result and
the whole stored state (recommendations, scale events, conditions) must be equal after
every sync.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscale.controllers.hpa import HorizontalPodAutoscaler, MetricTarget

from ._upstream import NOW
from .test_hpa_properties import SOURCES, behaviors, tolerances


@st.composite
def twins(draw: st.DrawFn) -> tuple[HorizontalPodAutoscaler, HorizontalPodAutoscaler, str]:
    source, target_type = draw(st.sampled_from(SOURCES))
    metrics = [
        MetricTarget(
            source=source,  # type: ignore[arg-type]
            target_type=target_type,  # type: ignore[arg-type]
            target=draw(st.sampled_from([50, 100, 1000])),
        )
        for _ in range(draw(st.integers(1, 2)))
    ]
    maximum = draw(st.integers(1, 12))
    options: dict[str, Any] = {
        "min_replicas": draw(st.integers(0, maximum)),
        "max_replicas": maximum,
        "metrics": metrics,
        "behavior": draw(behaviors),
        "tolerance": draw(tolerances),
        "downscale_stabilization_seconds": draw(st.sampled_from([0, 45, 300])),
    }
    return HorizontalPodAutoscaler(**options), HorizontalPodAutoscaler(**options), source


syncs = st.lists(
    st.tuples(
        st.sampled_from([15.0, 15.0, 15.0, 15.5, 1.0, 60.0, 301.0]),
        st.sampled_from([0.0, 40.0, 80.0, 160.0, 160.0, 160.0]),
        st.sampled_from([None, None, None, "1", 1]),
        st.integers(0, 2),
    ),
    min_size=1,
    max_size=60,
)


def _state(hpa: HorizontalPodAutoscaler) -> tuple[object, ...]:
    return (hpa.recommendations, hpa.scale_up_events, hpa.scale_down_events, hpa.conditions)


@settings(max_examples=300, deadline=None)
@given(twins(), st.integers(0, 12), syncs)
def test_a_repeated_sync_answers_as_the_full_sync(
    built: tuple[HorizontalPodAutoscaler, HorizontalPodAutoscaler, str],
    start: int,
    sequence: list[tuple[float, float, object, int]],
) -> None:
    fast, full, source = built
    now, replicas = NOW, start
    for delta, value, form, unready in sequence:
        now += delta
        sample: object = value if form is None else (str(int(value)) if form == "1" else value)
        samples = [sample] * (max(replicas, 1) if source == "Pods" else 1)
        inputs: dict[str, Any] = {
            "now": now,
            "spec_replicas": replicas,
            "status_replicas": replicas,
            "ready_pods": max(replicas - unready, 0),
            "metric_values": [list(samples) for _ in full.metrics],
        }
        full._repeat = None  # the full sync every time
        expected = full.reconcile_detailed(**inputs)
        got = fast.reconcile_detailed(**inputs)
        assert got == expected
        assert _state(fast) == _state(full)
        replicas = got.replicas


def test_a_steady_metric_is_answered_by_the_repeat() -> None:
    """The tutorial's pattern: a scale-up to 2, then a metric that proposes 1 while the
    window holds the recommendation of 2. The held syncs from the third on share the
    second's proposals (they are its repeats); the sync after the 2 leaves the 300 s window
    scales down, as the full sync does."""
    metric = MetricTarget(source="External", target_type="AverageValue", target=100)
    hpa = HorizontalPodAutoscaler(min_replicas=1, max_replicas=4, metrics=[metric])
    first = hpa.reconcile_detailed(
        now=NOW, spec_replicas=1, status_replicas=1, ready_pods=1, metric_values=[[160.0]]
    )
    assert first.replicas == 2
    results = []
    for step in range(1, 30):
        result = hpa.reconcile_detailed(
            now=NOW + 15 * step,
            spec_replicas=2,
            status_replicas=2,
            ready_pods=2,
            metric_values=[[80.0]],
        )
        results.append(result)
        if result.rescaled:
            break
    *held, last = results
    assert len(held) == 20
    assert last.replicas == 1
    assert all(r.replicas == 2 and r.stabilized_replicas == 2 for r in held)
    # the first held sync changes the conditions (SucceededRescale -> ScaleDownStabilized);
    # the second keeps them, and every later one repeats it
    assert all(r.proposals is held[1].proposals for r in held[2:])
    assert held[1].proposals is not held[0].proposals
    assert last.proposals == held[1].proposals
    assert last.proposals is not held[1].proposals
