"""Pod start-up and termination timing as the kubelet runs them (``pkg/kubelet``)."""

from __future__ import annotations

import pytest

from gpuscale.controllers.kubelet import pod_startup, termination_end


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
