"""The ReplicaSet deletion ranking and manageReplicas.

Cases under ``TestSortingActivePodsWithRanks`` are transcribed from kubernetes/kubernetes
``pkg/controller/controller_utils_test.go`` (same pod names, ranks and times, with the
LogarithmicScaleDown and PodDeletionCost gates on, their defaults).
"""

from __future__ import annotations

import pytest

from gpuscale.controllers.replicaset import (
    PodStatusView,
    less,
    manage_replicas,
    pods_to_delete,
    rank_for_deletion,
)

NOW = 10_000_000.0
MONTH = NOW - 30 * 86400
H2, H5, H8 = NOW - 2 * 3600, NOW - 5 * 3600, NOW - 8 * 3600


def _pod(  # noqa: PLR0917 - positional like upstream's pod() helper in the test it transcribes
    name: str,
    node: str,
    phase: str,
    ready: bool,
    restarts: int = 0,
    ready_since: float | None = None,
    created: float | None = None,
    cost: int = 0,
) -> PodStatusView:
    return PodStatusView(
        name=name,
        uid="",
        node_name=node,
        phase=phase,  # type: ignore[arg-type]
        ready=ready,
        ready_since=ready_since,
        created_at=created,
        restarts=restarts,
        deletion_cost=cost,
    )


UNSCHEDULED = _pod("unscheduled", "", "Pending", False)
SCHEDULED_PENDING = _pod("pending", "node", "Pending", False)
UNKNOWN_PHASE = _pod("unknown-phase", "node", "Unknown", False)
RUNNING_NOT_READY = _pod("not-ready", "node", "Running", False)
READY_NO_TRANSITION = _pod("ready-no-last-transition-time", "node", "Running", True)
READY_NOW = _pod("ready-now", "node", "Running", True, 0, NOW, NOW)
READY_THEN = _pod("ready-then", "node", "Running", True, 0, MONTH, MONTH)
READY_NOW_HIGH_RESTARTS = _pod("ready-high-restarts", "node", "Running", True, 9001, NOW, NOW)
READY_NOW_CREATED_THEN = _pod("ready-now-created-then", "node", "Running", True, 0, NOW, MONTH)
LOW_COST = _pod("low-deletion-cost", "node", "Running", True, 0, NOW, MONTH, cost=10)
HIGH_COST = _pod("high-deletion-cost", "node", "Running", True, 0, NOW, MONTH, cost=100)
UNSCHEDULED_5H = _pod("unscheduled-5-hours", "", "Pending", False, 0, H5, H5)
UNSCHEDULED_8H = _pod("unscheduled-10-hours", "", "Pending", False, 0, H8, H8)
READY_2H = _pod("ready-2-hours", "", "Running", True, 0, H2, MONTH)
READY_5H = _pod("ready-5-hours", "", "Running", True, 0, H5, MONTH)
READY_8H = _pod("ready-10-hours", "", "Running", True, 0, H8, MONTH)


@pytest.mark.parametrize(
    ("p1", "p2"),
    [
        (UNSCHEDULED, UNSCHEDULED),
        (SCHEDULED_PENDING, SCHEDULED_PENDING),
        (UNKNOWN_PHASE, UNKNOWN_PHASE),
        (RUNNING_NOT_READY, RUNNING_NOT_READY),
        (READY_NOW_CREATED_THEN, READY_NOW_CREATED_THEN),
        (READY_NOW, READY_NOW),
        (READY_THEN, READY_THEN),
        (READY_NOW_HIGH_RESTARTS, READY_NOW_HIGH_RESTARTS),
        (UNSCHEDULED_5H, UNSCHEDULED_8H),
        (READY_5H, READY_8H),
    ],
)
def test_TestSortingActivePodsWithRanks_equality(p1: PodStatusView, p2: PodStatusView) -> None:
    assert not less(p1, p2, 1, 1, NOW)
    assert not less(p2, p1, 1, 1, NOW)


@pytest.mark.parametrize(
    ("lesser", "lesser_rank", "greater", "greater_rank"),
    [
        (UNSCHEDULED, 1, SCHEDULED_PENDING, 2),
        (UNSCHEDULED, 2, SCHEDULED_PENDING, 1),
        (SCHEDULED_PENDING, 1, UNKNOWN_PHASE, 2),
        (UNKNOWN_PHASE, 1, RUNNING_NOT_READY, 2),
        (RUNNING_NOT_READY, 1, READY_NO_TRANSITION, 1),
        (READY_NO_TRANSITION, 1, READY_NOW, 1),
        (READY_NOW, 2, READY_NO_TRANSITION, 1),
        (READY_NOW, 1, READY_THEN, 1),
        (READY_NOW, 2, READY_THEN, 1),
        (READY_NOW_HIGH_RESTARTS, 1, READY_NOW, 1),
        (READY_NOW, 2, READY_NOW_HIGH_RESTARTS, 1),
        (READY_NOW, 1, READY_NOW_CREATED_THEN, 1),
        (READY_NOW_CREATED_THEN, 2, READY_NOW, 1),
        (LOW_COST, 2, HIGH_COST, 1),
        (READY_2H, 1, READY_5H, 1),
    ],
)
def test_TestSortingActivePodsWithRanks_inequality(
    lesser: PodStatusView, lesser_rank: int, greater: PodStatusView, greater_rank: int
) -> None:
    assert less(lesser, greater, lesser_rank, greater_rank, NOW)
    assert not less(greater, lesser, greater_rank, lesser_rank, NOW)


def test_scale_down_prefers_the_pending_pod_then_the_youngest_ready() -> None:
    pods = [
        _pod("old", "n1", "Running", True, 0, 100.0, 50.0),
        _pod("young", "n2", "Running", True, 0, 5000.0, 4900.0),
        _pod("pending", "", "Pending", False, 0, None, 5100.0),
    ]
    order = [p.name for p in rank_for_deletion(pods, pods, 5200.0)]
    assert order == ["pending", "young", "old"]
    assert [p.name for p in pods_to_delete(pods, pods, 1, 5200.0)] == ["pending"]


def test_doubled_up_pods_go_first() -> None:
    # same age bucket: the pod sharing its node with a sibling is deleted first
    pods = [
        _pod("alone", "n1", "Running", True, 0, 1000.0, 900.0),
        _pod("shared-a", "n2", "Running", True, 0, 1000.0, 900.0),
        _pod("shared-b", "n2", "Running", True, 0, 1000.0, 900.0),
    ]
    first = rank_for_deletion(pods, pods, 2000.0)[0]
    assert first.name.startswith("shared")


def test_manage_replicas_creates_up_to_burst_and_deletes_by_rank() -> None:
    assert manage_replicas(3, [], 0.0).create == 3
    assert manage_replicas(900, [], 0.0).create == 500
    pods = [
        _pod("ready", "n1", "Running", True, 0, 10.0, 5.0),
        _pod("pending", "", "Pending", False, 0, None, 20.0),
    ]
    decision = manage_replicas(1, pods, 30.0)
    assert decision.create == 0
    assert decision.delete == ("pending",)
    assert manage_replicas(2, pods, 30.0).delete == ()
    with pytest.raises(ValueError, match=r"spec\.replicas"):
        manage_replicas(-1, pods, 30.0)
