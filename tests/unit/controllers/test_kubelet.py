"""Pod start-up and termination timing as the kubelet runs them (``pkg/kubelet``)."""

from __future__ import annotations

import pytest

from gpuscale.controllers.kubelet import ReadinessProbe, pod_startup, termination_end


def test_image_pull_is_skipped_when_the_node_has_the_image() -> None:
    cold = pod_startup(100.0, image_present=False, image_pull_s=60.0, startup_s=30.0)
    assert (cold.pulled_at, cold.running_at, cold.ready_at) == (160.0, 160.0, 190.0)
    warm = pod_startup(100.0, image_present=True, image_pull_s=60.0, startup_s=30.0)
    assert warm.ready_at == 130.0


def test_termination_ends_at_exit_or_grace() -> None:
    assert termination_end(10.0, grace_s=30.0, exit_after_s=0.0) == 10.0
    assert termination_end(10.0, grace_s=30.0, exit_after_s=90.0) == 40.0
    with pytest.raises(ValueError, match=">= 0"):
        pod_startup(0.0, image_present=False, image_pull_s=-1.0, startup_s=0.0)


def test_without_a_probe_the_pod_is_ready_when_its_container_starts() -> None:
    times = pod_startup(
        100.0, image_present=False, image_pull_s=15.0, startup_s=30.0, readiness="started"
    )
    assert (times.running_at, times.ready_at, times.serving_at) == (115.0, 115.0, 145.0)


@pytest.mark.parametrize(
    ("probe", "ready_at"),
    [
        # ticks at 100, 105, 110, ...; serving from 100 + 20 + 3 = 123 -> 125
        (ReadinessProbe(period_s=5.0), 125.0),
        # initial delay 10 s after the start at 120 -> no probe before 130
        (ReadinessProbe(initial_delay_s=10.0, period_s=5.0), 130.0),
        # two consecutive successes: 125 and 130
        (ReadinessProbe(period_s=5.0, success_threshold=2), 130.0),
        # a 10 s period from 100: 130
        (ReadinessProbe(), 130.0),
    ],
)
def test_a_readiness_probe_turns_the_pod_ready_at_a_probe_tick(
    probe: ReadinessProbe, ready_at: float
) -> None:
    times = pod_startup(
        100.0, image_present=False, image_pull_s=20.0, startup_s=3.0, readiness=probe
    )
    assert times.serving_at == 123.0
    assert times.ready_at == ready_at
