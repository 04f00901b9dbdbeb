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

Quantities are integers the way the scheduler keeps them: ``cpu`` in millicores, every
other resource (memory, ephemeral-storage, ``amd.com/gpu``, ``nvidia.com/gpu``,
``pods``) in base units. :func:`quantities` converts user floats (cores, bytes) once.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

__all__ = [
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "FilterCache",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "NodeView",
    "PodRequirements",
    "SchedulableNode",
    "ScheduleResult",
    "Taint",
    "Toleration",
    "filter_node",
    "find_untolerated_taint",
    "fit_error_message",
    "matches_node_affinity",
    "quantities",
    "schedule_pod",
    "score_node",
    "static_reasons",
]

TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]

DEFAULT_MILLI_CPU_REQUEST = 100
"""``schedutil.DefaultMilliCPURequest``: what scoring assumes without a cpu request."""
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
"""``schedutil.DefaultMemoryRequest``: what scoring assumes without a memory request."""

_UNSCHEDULABLE_TAINT_KEY = "node.kubernetes.io/unschedulable"
_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
_REASON_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
_REASON_TOO_MANY_PODS = "Too many pods"
_NOT_HELPFUL = "Preemption is not helpful for scheduling"
_NO_VICTIMS = "No preemption victims found for incoming pod"


def quantities(resources: Mapping[str, float]) -> dict[str, int]:
    """User quantities (cores, bytes, counts) as the scheduler's integers.

    ``cpu`` becomes millicores and everything else its base unit, both rounded up as
    ``resource.Quantity.MilliValue``/``Value`` round. Negative values are an error.
    """
    result: dict[str, int] = {}
    for name, value in resources.items():
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"resource {name!r} must be a non-negative number, got {value!r}")
        scaled = value * 1000 if name == "cpu" else value
        result[name] = math.ceil(scaled - 1e-9)
    return result


@dataclass(frozen=True, slots=True)
class Taint:
    """A node taint (``spec.taints[]``)."""

    key: str
    """Taint key, e.g. ``amd.com/gpu``."""
    value: str = ""
    """Taint value; DOKS GPU taints have none."""
    effect: TaintEffect = "NoSchedule"
    """``NoSchedule``, ``PreferNoSchedule`` or ``NoExecute``."""


@dataclass(frozen=True, slots=True)
class Toleration:
    """A pod toleration (``spec.tolerations[]``), matched as ``Toleration.ToleratesTaint``."""

    key: str = ""
    """Taint key to tolerate; empty with ``Exists`` tolerates every taint."""
    operator: Literal["Equal", "Exists"] = "Equal"
    """``Equal`` (key and value must match) or ``Exists`` (any value)."""
    value: str = ""
    """Value to match with ``Equal``."""
    effect: str = ""
    """Effect to tolerate; empty tolerates all effects."""

    def tolerates(self, taint: Taint) -> bool:
        """Whether this toleration tolerates ``taint`` (k8s.io/api core/v1 toleration.go)."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.value == taint.value


@dataclass(frozen=True, slots=True)
class NodeSelectorRequirement:
    """One ``matchExpressions`` entry of a node selector term."""

    key: str
    """Node label key."""
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
    """How the label is compared."""
    values: tuple[str, ...] = ()
    """Values for ``In``/``NotIn``; one integer for ``Gt``/``Lt``."""

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether a node with ``labels`` satisfies this requirement."""
        present = self.key in labels
        if self.operator == "Exists":
            return present
        if self.operator == "DoesNotExist":
            return not present
        if self.operator == "NotIn":
            return not present or labels[self.key] not in self.values
        if not present:
            return False
        if self.operator == "In":
            return labels[self.key] in self.values
        try:
            have, want = int(labels[self.key]), int(self.values[0])
        except (ValueError, IndexError):
            return False
        return have > want if self.operator == "Gt" else have < want


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    """One ``nodeSelectorTerms`` entry: its expressions are ANDed; an empty term matches nothing."""

    match_expressions: tuple[NodeSelectorRequirement, ...] = ()
    """The requirements, all of which must hold."""

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether a node with ``labels`` satisfies the term."""
        if not self.match_expressions:
            return False
        return all(r.matches(labels) for r in self.match_expressions)


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


def find_untolerated_taint(
    taints: Iterable[Taint], tolerations: Sequence[Toleration]
) -> Taint | None:
    """The first NoSchedule/NoExecute taint nothing tolerates (``FindMatchingUntoleratedTaint``)."""
    for taint in taints:
        if taint.effect not in ("NoSchedule", "NoExecute"):
            continue
        if not any(t.tolerates(taint) for t in tolerations):
            return taint
    return None


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


def static_reasons(pod: PodRequirements, node: SchedulableNode) -> tuple[str, ...]:
    """Reasons from the plugins that read only the node's cordon, taints and labels
    (``NodeUnschedulable``, ``TaintToleration``, ``NodeAffinity``); empty when they pass.

    Preemption cannot resolve any of them.
    """
    if node.unschedulable and not any(
        t.tolerates(Taint(_UNSCHEDULABLE_TAINT_KEY, "", "NoSchedule")) for t in pod.tolerations
    ):
        return (_REASON_UNSCHEDULABLE,)
    taint = find_untolerated_taint(node.taints, pod.tolerations)
    if taint is not None:
        return (f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}",)
    if not matches_node_affinity(pod, node.labels):
        return (_REASON_AFFINITY,)
    return ()


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
