"""The kube-scheduler's decision for one pod: which nodes it fits, which it prefers, and
the message it gives when it fits none. Pure.

Models kubernetes/kubernetes ``pkg/scheduler`` (v1.34–1.35 default profile):

- filter plugins, in the default profile's order, stopping at a node's first failure as
  ``frameworkImpl.RunFilterPlugins`` does: ``NodeUnschedulable``
  (``plugins/nodeunschedulable``), ``TaintToleration`` (``plugins/tainttoleration``,
  with ``v1helper.FindMatchingUntoleratedTaint`` over NoSchedule/NoExecute taints),
  ``NodeAffinity`` (``plugins/nodeaffinity``: ``spec.nodeSelector`` and required node
  affinity terms, ``component-helpers/scheduling/corev1/nodeaffinity``) and
  ``NodeResourcesFit`` (``plugins/noderesources/fit.go``, ``fitsRequest``);
- scoring with the default weights of ``apis/config/v1/default_plugins.go``:
  ``TaintToleration`` ×3 (PreferNoSchedule taints, reverse-normalised),
  ``NodeResourcesFit`` ×1 with the ``LeastAllocated`` strategy over cpu and memory
  (``least_allocated.go``), ``NodeResourcesBalancedAllocation`` ×1
  (``balanced_allocation.go``); ties broken uniformly at random as ``selectHost`` does;
- the failure text of ``framework.FitError.Error`` followed by the default preemption
  plugin's post-filter message, e.g. ``0/3 nodes are available: 1 Insufficient
  amd.com/gpu, 2 node(s) had untolerated taint {amd.com/gpu: }. preemption: 0/3 nodes
  are available: 1 No preemption victims found for incoming pod, 2 Preemption is not
  helpful for scheduling.`` (every modelled pod has the same priority, so preemption
  never finds victims).

Not modelled: volumes, ports, inter-pod (anti-)affinity, topology spread constraints,
image locality, preferred node affinity and the 100-node feasibility sampling (all
nodes are evaluated, as the scheduler does below 100 nodes).

Taints, tolerations and node selector terms are :mod:`gpuscale.kube`'s. Quantities are
integers the way the scheduler keeps them (``framework.Resource``): ``cpu`` in
millicores, every other resource (memory, ephemeral-storage, ``amd.com/gpu``,
``nvidia.com/gpu``, ``pods``) in base units; :func:`quantities` converts once, exactly.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from gpuscale.kube import (
    NodeSelectorTerm,
    QuantityLike,
    Taint,
    Toleration,
    find_untolerated_taint,
    milli_value,
    whole_value,
)

__all__ = [
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "FilterCache",
    "NodeView",
    "PodRequirements",
    "SchedulableNode",
    "ScheduleResult",
    "Unfit",
    "filter_node",
    "fit_error_message",
    "matches_node_affinity",
    "quantities",
    "schedule_pod",
    "score_node",
    "static_failure",
    "static_reasons",
]

DEFAULT_MILLI_CPU_REQUEST = 100
"""``schedutil.DefaultMilliCPURequest``: what scoring assumes without a cpu request."""
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
"""``schedutil.DefaultMemoryRequest``: what scoring assumes without a memory request."""

_UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")
_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
_REASON_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
_REASON_TOO_MANY_PODS = "Too many pods"
_NOT_HELPFUL = "Preemption is not helpful for scheduling"
_NO_VICTIMS = "No preemption victims found for incoming pod"


def quantities(resources: Mapping[str, QuantityLike]) -> dict[str, int]:
    """Quantities (numbers in cores, bytes or counts, or quantity texts) as the scheduler's
    integers: ``cpu`` by ``Quantity.MilliValue``, everything else by ``Quantity.Value``,
    both exact and rounded up as upstream rounds (:mod:`gpuscale.kube`). Negative values
    are an error.

    A float is first rounded to a nano-unit, the finest a quantity holds (``n``): a sum
    of container requests done in binary floats (``0.1 + 0.2``) carries an error far
    below that, which upstream, adding exact quantities, never has.
    """
    result: dict[str, int] = {}
    for name, value in resources.items():
        if isinstance(value, float | int) and (not math.isfinite(value) or value < 0):
            raise ValueError(f"resource {name!r} must be a non-negative number, got {value!r}")
        exact = round(value, 9) if isinstance(value, float) else value
        count = milli_value(exact) if name == "cpu" else whole_value(exact)
        if count < 0:
            raise ValueError(f"resource {name!r} must be a non-negative number, got {value!r}")
        result[name] = count
    return result


@dataclass(frozen=True, slots=True)
class PodRequirements:
    """What the scheduler reads from a pod to place it."""

    requests: Mapping[str, int] = field(default_factory=dict)
    """Effective requests (see :func:`quantities`); extended resources default to their limits."""
    node_selector: Mapping[str, str] = field(default_factory=dict)
    """``spec.nodeSelector``: every label must be present with this value."""
    required_terms: tuple[NodeSelectorTerm, ...] | None = None
    """Required node affinity terms (ORed); None when the pod sets none."""
    tolerations: tuple[Toleration, ...] = ()
    """``spec.tolerations``."""

    def nonzero(self, resource: str) -> int:
        """The request scoring uses: cpu/memory default to 100m/200Mi when unset."""
        value = self.requests.get(resource, 0)
        if value:
            return value
        if resource == "cpu":
            return DEFAULT_MILLI_CPU_REQUEST
        if resource == "memory":
            return DEFAULT_MEMORY_REQUEST
        return 0


@dataclass(frozen=True, slots=True)
class NodeView:
    """A node as the scheduler's cache sees it: labels, taints, allocatable, requests."""

    name: str
    """Node name."""
    labels: Mapping[str, str]
    """Node labels."""
    taints: Sequence[Taint]
    """Node taints."""
    allocatable: Mapping[str, int]
    """``status.allocatable`` (see :func:`quantities`); ``pods`` defaults to 110 when missing."""
    requested: Mapping[str, int] = field(default_factory=dict)
    """Sum of the requests of the pods assigned to the node."""
    nonzero_requested: Mapping[str, int] = field(default_factory=dict)
    """Sum of cpu/memory requests with the scoring defaults applied (``NonZeroRequested``)."""
    pod_count: int = 0
    """Pods assigned to the node."""
    unschedulable: bool = False
    """``spec.unschedulable`` (cordoned)."""


class SchedulableNode(Protocol):
    """What the filter and score functions read from a node (a :class:`NodeView` or a
    mutable working copy, such as the cluster autoscaler's simulated nodes)."""

    @property
    def name(self) -> str: ...
    @property
    def labels(self) -> Mapping[str, str]: ...
    @property
    def taints(self) -> Sequence[Taint]: ...
    @property
    def allocatable(self) -> Mapping[str, int]: ...
    @property
    def requested(self) -> Mapping[str, int]: ...
    @property
    def nonzero_requested(self) -> Mapping[str, int]: ...
    @property
    def pod_count(self) -> int: ...
    @property
    def unschedulable(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class ScheduleResult:
    """The outcome of one scheduling attempt."""

    node: str | None
    """The chosen node, or None when the pod fits nowhere."""
    message: str
    """Empty on success, otherwise the FailedScheduling message."""
    reasons: Mapping[str, int] = field(default_factory=dict)
    """Filter reasons and how many nodes gave each (empty on success)."""


def matches_node_affinity(pod: PodRequirements, labels: Mapping[str, str]) -> bool:
    """``nodeSelector`` and required node affinity (``GetRequiredNodeAffinity().Match``)."""
    for key, value in pod.node_selector.items():
        if labels.get(key) != value:
            return False
    if pod.required_terms is None:
        return True
    return any(term.matches(labels) for term in pod.required_terms)


def _insufficient(pod: PodRequirements, node: SchedulableNode) -> list[str]:
    reasons: list[str] = []
    allowed_pods = node.allocatable.get("pods", 110)
    if node.pod_count + 1 > allowed_pods:
        reasons.append(_REASON_TOO_MANY_PODS)
    for resource, amount in pod.requests.items():
        if amount <= 0 or resource == "pods":
            continue
        free = node.allocatable.get(resource, 0) - node.requested.get(resource, 0)
        if amount > free:
            reasons.append(f"Insufficient {resource}")
    return reasons


@dataclass(frozen=True, slots=True)
class Unfit:
    """Why the first node-only filter plugin rejects a node, and what it tripped on."""

    plugin: Literal["NodeUnschedulable", "TaintToleration", "NodeAffinity"]
    """The plugin, in the default profile's filter order."""
    reason: str
    """The plugin's status text, as counted in the FailedScheduling message."""
    taint: Taint | None = None
    """For ``TaintToleration``: the first taint nothing tolerates."""
    node_selector: tuple[str, str] | None = None
    """For ``NodeAffinity``: the first ``nodeSelector`` pair the node's labels lack, or
    None when it is the required node affinity terms that fail."""


def static_failure(pod: PodRequirements, node: SchedulableNode) -> Unfit | None:
    """The first rejection by the plugins that read only the node's cordon, taints and
    labels (``NodeUnschedulable``, ``TaintToleration``, ``NodeAffinity``), or None when
    they pass. Preemption cannot resolve any of them."""
    if node.unschedulable and not any(t.tolerates(_UNSCHEDULABLE_TAINT) for t in pod.tolerations):
        return Unfit("NodeUnschedulable", _REASON_UNSCHEDULABLE)
    taint = find_untolerated_taint(node.taints, pod.tolerations)
    if taint is not None:
        return Unfit(
            "TaintToleration",
            f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}",
            taint=taint,
        )
    if not matches_node_affinity(pod, node.labels):
        labels = node.labels
        missed = next(((k, v) for k, v in pod.node_selector.items() if labels.get(k) != v), None)
        return Unfit("NodeAffinity", _REASON_AFFINITY, node_selector=missed)
    return None


def static_reasons(pod: PodRequirements, node: SchedulableNode) -> tuple[str, ...]:
    """:func:`static_failure`'s status text, or empty when the node passes."""
    failure = static_failure(pod, node)
    return () if failure is None else (failure.reason,)


def _fits_resources(pod: PodRequirements, node: SchedulableNode) -> bool:
    if node.pod_count + 1 > node.allocatable.get("pods", 110):
        return False
    allocatable, requested = node.allocatable, node.requested
    for resource, amount in pod.requests.items():
        free = allocatable.get(resource, 0) - requested.get(resource, 0)
        if amount > 0 and resource != "pods" and amount > free:
            return False
    return True


def filter_node(
    pod: PodRequirements, node: SchedulableNode, static: tuple[str, ...] | None = None
) -> tuple[tuple[str, ...], bool]:
    """Run the filter plugins on one node.

    Returns the reasons of the first plugin that rejects the node (empty when it fits)
    and whether that rejection is resolvable by preemption (only resource shortage is).
    ``static`` is :func:`static_reasons` when the caller already has it.
    """
    reasons = static_reasons(pod, node) if static is None else static
    if reasons:
        return reasons, False
    insufficient = _insufficient(pod, node)
    if insufficient:
        return tuple(insufficient), True
    return (), False


class FilterCache:
    """:func:`static_reasons` per (pod, node name), for one scheduling pass or one
    autoscaler iteration, during which no node's labels or taints change."""

    __slots__ = ("_cache", "_pods")

    def __init__(self) -> None:
        self._cache: dict[tuple[int, str], tuple[str, ...]] = {}
        self._pods: list[PodRequirements] = []  # keeps ids stable while cached

    def static(self, pod: PodRequirements, node: SchedulableNode) -> tuple[str, ...]:
        """Cached :func:`static_reasons`."""
        key = (id(pod), node.name)
        hit = self._cache.get(key)
        if hit is None:
            hit = static_reasons(pod, node)
            self._cache[key] = hit
            self._pods.append(pod)
        return hit

    def filter(self, pod: PodRequirements, node: SchedulableNode) -> tuple[tuple[str, ...], bool]:
        """:func:`filter_node` with the static part cached."""
        return filter_node(pod, node, self.static(pod, node))

    def fits(self, pod: PodRequirements, node: SchedulableNode) -> bool:
        """Whether the pod passes every filter on the node."""
        return not self.static(pod, node) and _fits_resources(pod, node)


def _least_allocated(pod: PodRequirements, node: SchedulableNode) -> int:
    total = 0
    for resource in ("cpu", "memory"):
        allocatable = node.allocatable.get(resource, 0)
        requested = node.nonzero_requested.get(resource, 0) + pod.nonzero(resource)
        if allocatable == 0 or requested > allocatable:
            continue
        total += (allocatable - requested) * 100 // allocatable
    return total // 2


def _balanced_allocation(pod: PodRequirements, node: SchedulableNode) -> int:
    fractions = []
    for resource in ("cpu", "memory"):
        allocatable = node.allocatable.get(resource, 0)
        if allocatable == 0:
            continue
        requested = node.requested.get(resource, 0) + pod.requests.get(resource, 0)
        fractions.append(min(requested / allocatable, 1.0))
    if len(fractions) < 2:
        return 100
    std = abs(fractions[0] - fractions[1]) / 2
    return int((1 - std) * 100)


def _prefer_no_schedule_count(pod: PodRequirements, node: SchedulableNode) -> int:
    return sum(
        1
        for taint in node.taints
        if taint.effect == "PreferNoSchedule"
        and not any(t.tolerates(taint) for t in pod.tolerations)
    )


def score_node(
    pod: PodRequirements, node: SchedulableNode, *, max_prefer_no_schedule: int = 0
) -> int:
    """The weighted score of a feasible node (higher is better).

    ``max_prefer_no_schedule`` is the largest count of untolerated PreferNoSchedule
    taints over the feasible nodes, used to normalise the TaintToleration score.
    """
    count = _prefer_no_schedule_count(pod, node)
    taint_score = 100
    if max_prefer_no_schedule:
        taint_score -= count * 100 // max_prefer_no_schedule
    return 3 * taint_score + _least_allocated(pod, node) + _balanced_allocation(pod, node)


def fit_error_message(num_nodes: int, reasons: Mapping[str, int], not_helpful: int) -> str:
    """``FitError.Error()`` plus the default preemption post-filter message.

    ``not_helpful`` is the number of nodes rejected for reasons preemption cannot fix.
    """
    if num_nodes == 0:
        return "no nodes available to schedule pods"
    histogram = ", ".join(sorted(f"{count} {reason}" for reason, count in reasons.items()))
    preemption = {
        _NOT_HELPFUL: not_helpful,
        _NO_VICTIMS: num_nodes - not_helpful,
    }
    post = ", ".join(sorted(f"{n} {text}" for text, n in preemption.items() if n))
    return (
        f"0/{num_nodes} nodes are available: {histogram}. "
        f"preemption: 0/{num_nodes} nodes are available: {post}."
    )


def schedule_pod(
    pod: PodRequirements,
    nodes: Sequence[SchedulableNode],
    rng: random.Random,
    *,
    cache: FilterCache | None = None,
) -> ScheduleResult:
    """Filter, score and pick a node for ``pod`` (``schedulingCycle`` without binding)."""
    feasible: list[SchedulableNode] = []
    for node in nodes:
        static = static_reasons(pod, node) if cache is None else cache.static(pod, node)
        if not static and _fits_resources(pod, node):
            feasible.append(node)
    if not feasible:
        # the message needs every node's reasons; only failures pay for them
        reasons: dict[str, int] = {}
        not_helpful = 0
        for node in nodes:
            node_reasons, resolvable = (
                filter_node(pod, node) if cache is None else cache.filter(pod, node)
            )
            if not resolvable:
                not_helpful += 1
            for reason in node_reasons:
                reasons[reason] = reasons.get(reason, 0) + 1
        return ScheduleResult(None, fit_error_message(len(nodes), reasons, not_helpful), reasons)
    if len(feasible) == 1:
        return ScheduleResult(feasible[0].name, "")
    max_pns = max(_prefer_no_schedule_count(pod, n) for n in feasible)
    best: SchedulableNode | None = None
    best_score = -1
    ties = 0
    for node in feasible:
        score = score_node(pod, node, max_prefer_no_schedule=max_pns)
        if score > best_score:
            best, best_score, ties = node, score, 1
        elif score == best_score:
            ties += 1
            if rng.randrange(ties) == 0:
                best = node
    assert best is not None
    return ScheduleResult(best.name, "")
