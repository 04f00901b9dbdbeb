"""The ReplicaSet controller's answer to "how many pods to create, and which to delete".
Pure.

Models kubernetes/kubernetes (v1.34–1.35):

- ``pkg/controller/replicaset/replica_set.go``: ``manageReplicas`` (create the missing
  pods, at most ``burstReplicas`` = 500 per sync; delete the surplus) and
  ``getPodsToDelete`` with ``getPodsRankedByRelatedPodsOnSameNode``;
- ``pkg/controller/controller_utils.go``: ``ActivePodsWithRanks.Less`` with the
  ``LogarithmicScaleDown`` feature (on by default since 1.22, GA): unassigned before
  assigned; Pending before Unknown before Running; not Ready before Ready; lower
  ``controller.kubernetes.io/pod-deletion-cost`` first; more Ready siblings on the same
  node first; then ready-time and creation-time compared on a base-2 logarithmic scale
  of their age (younger first), ties broken by UID; restart counts in between.

Timestamps are floats in seconds but compared at the API's one-second precision
(``metav1.Time`` is serialised as RFC 3339 seconds), as the controller sees them. Python's
sort is stable where Go's ``sort.Sort`` is not; orderings differ only among pods every
rule ranks equal, which with UIDs does not happen once both pods are ready or aged.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "BURST_REPLICAS",
    "PodStatusView",
    "ReplicaDecision",
    "less",
    "manage_replicas",
    "pods_to_delete",
    "rank_for_deletion",
]

BURST_REPLICAS = 500
"""``BurstReplicas`` of kube-controller-manager: most pods created or deleted in one sync."""

_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}


@dataclass(frozen=True, slots=True)
class PodStatusView:
    """What the ReplicaSet controller reads from one of its active pods."""

    name: str
    """Pod name."""
    uid: str
    """Pod UID (the last tie-breaker)."""
    node_name: str
    """``spec.nodeName``; empty while unscheduled."""
    phase: Literal["Pending", "Running", "Unknown"]
    """``status.phase``; a pod is Pending until its containers start."""
    ready: bool
    """The Ready condition."""
    ready_since: float | None
    """When the Ready condition last became true (None when unknown or not Ready)."""
    created_at: float | None
    """``metadata.creationTimestamp`` (None: unset, which sorts first)."""
    restarts: int = 0
    """Highest container restart count."""
    deletion_cost: int = 0
    """``controller.kubernetes.io/pod-deletion-cost``."""


@dataclass(frozen=True, slots=True)
class ReplicaDecision:
    """One ``manageReplicas`` outcome."""

    create: int
    """Pods to create."""
    delete: tuple[str, ...]
    """Names of the pods to delete, most preferred first."""


def _opt_seconds(t: float | None) -> int | None:
    return None if t is None else math.floor(t)


def _younger(t1: int | None, t2: int | None, now: int, uid1: str, uid2: str) -> bool:
    # afterOrZero for missing times, else logarithmicRankDiff with the UID tie-break
    if t1 is None or t2 is None:
        return t1 is None
    diff = _log_rank(t1, now) - _log_rank(t2, now)
    if diff == 0:
        return uid1 < uid2
    return diff < 0


def _log_rank(t: int, now: int) -> int:
    # logarithmicRankDiff: int64(math.Log2(float64(d))) with d a Duration in nanoseconds
    d = (now - t) * 1_000_000_000
    return int(math.log2(d)) if d > 0 else -1


def less(a: PodStatusView, b: PodStatusView, rank_a: int, rank_b: int, now: float) -> bool:
    """Whether ``a`` should be deleted before ``b`` (``ActivePodsWithRanks.Less``)."""
    if a.node_name != b.node_name and (not a.node_name or not b.node_name):
        return not a.node_name
    if _PHASE_ORDINAL[a.phase] != _PHASE_ORDINAL[b.phase]:
        return _PHASE_ORDINAL[a.phase] < _PHASE_ORDINAL[b.phase]
    if a.ready != b.ready:
        return not a.ready
    if a.deletion_cost != b.deletion_cost:
        return a.deletion_cost < b.deletion_cost
    if rank_a != rank_b:
        return rank_a > rank_b
    now_s = math.floor(now)
    if a.ready and b.ready:
        ra, rb = _opt_seconds(a.ready_since), _opt_seconds(b.ready_since)
        if ra != rb:
            return _younger(ra, rb, now_s, a.uid, b.uid)
    if a.restarts != b.restarts:
        return a.restarts > b.restarts
    ca, cb = _opt_seconds(a.created_at), _opt_seconds(b.created_at)
    if ca != cb:
        return _younger(ca, cb, now_s, a.uid, b.uid)
    return False


def rank_for_deletion(
    pods: Sequence[PodStatusView], related: Sequence[PodStatusView], now: float
) -> list[PodStatusView]:
    """``pods`` sorted most-preferred-for-deletion first.

    The rank of a pod is the number of active ``related`` pods (the ReplicaSet's own and
    its siblings', all active) on the same node (``getPodsRankedByRelatedPodsOnSameNode``).
    """
    on_node: dict[str, int] = {}
    for pod in related:
        on_node[pod.node_name] = on_node.get(pod.node_name, 0) + 1
    ranks = {pod.name: on_node.get(pod.node_name, 0) for pod in pods}

    def compare(a: PodStatusView, b: PodStatusView) -> int:
        if less(a, b, ranks[a.name], ranks[b.name], now):
            return -1
        if less(b, a, ranks[b.name], ranks[a.name], now):
            return 1
        return 0

    return sorted(pods, key=functools.cmp_to_key(compare))


def pods_to_delete(
    pods: Sequence[PodStatusView], related: Sequence[PodStatusView], diff: int, now: float
) -> list[PodStatusView]:
    """The ``diff`` pods to delete (``getPodsToDelete``): no sorting when all go."""
    if diff >= len(pods):
        return list(pods)
    return rank_for_deletion(pods, related, now)[:diff]


def manage_replicas(
    spec_replicas: int,
    active: Sequence[PodStatusView],
    now: float,
    *,
    related: Sequence[PodStatusView] | None = None,
    burst_replicas: int = BURST_REPLICAS,
) -> ReplicaDecision:
    """How many pods to create, or which to delete, to bring ``active`` to ``spec_replicas``.

    ``active`` are the ReplicaSet's pods that are neither terminating nor finished
    (``controller.FilterActivePods``); ``related`` defaults to them.
    """
    if spec_replicas < 0:
        raise ValueError(f"spec.replicas must be >= 0, got {spec_replicas}")
    diff = len(active) - spec_replicas
    if diff < 0:
        return ReplicaDecision(create=min(-diff, burst_replicas), delete=())
    if diff == 0:
        return ReplicaDecision(create=0, delete=())
    diff = min(diff, burst_replicas)
    chosen = pods_to_delete(active, active if related is None else related, diff, now)
    return ReplicaDecision(create=0, delete=tuple(p.name for p in chosen))
