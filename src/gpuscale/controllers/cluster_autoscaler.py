"""One iteration of the cluster autoscaler: which node groups to grow for the pods that
fit nowhere, and which nodes to remove. Pure: a cluster snapshot and the autoscaler's
own state in, a decision and the next state out.

Models kubernetes/autoscaler ``cluster-autoscaler`` (HEAD ``55c37cd``, 2026-08; 1.34
line):

- ``core/static_autoscaler.go`` ``RunOnce``: unschedulable pods (PodScheduled=False,
  reason Unschedulable) minus those that fit existing nodes or upcoming ones
  (``core/podlistprocessor/filter_out_schedulable.go``; upcoming nodes are injected as
  copies of their group's template, ``addUpcomingNodesToClusterSnapshot``), minus pods
  younger than ``new-pod-scale-up-delay`` (``filterOutYoungPods``); ``allPodsAreNew``
  waits while the oldest such pod is younger than 2 s, or the oldest GPU pod younger
  than 30 s (``unschedulablePodTimeBuffer``/``unschedulablePodWithGpuTimeBuffer``; a GPU
  pod is one requesting any of ``utils/gpu.GPUVendorResourceNames``) and disables
  scale-down for the loop; a successful scale-up ends the iteration;
  ``isScaleDownInCooldown`` (delay after add, after delete, after failure);
- ``core/scaleup/orchestrator/orchestrator.go`` ``ScaleUp``: node groups at max size are
  skipped ("max node group size reached"), pod equivalence groups are checked against
  each group's template node (scale from zero works when the template has the
  resources), ``estimator/binpacking_estimator.go`` packs the pods into new template
  nodes (largest first, ``DecreasingPodOrderer``), an expander picks (``expander/``:
  ``random``, ``most-pods``, ``least-waste`` (``waste/waste.go``), ``price`` (simplified:
  cheapest per scheduled pod) and ``priority``, chainable as ``priority,least-waste``
  with a final random pick), and the size is capped by the group's max and
  ``max-nodes-total``; pods no group can take get ``NotTriggerScaleUp`` with upstream's
  aggregated reasons (``processors/status/eventing_scale_up_processor.go``);
- ``core/scaledown/``: ``eligibility/eligibility.go`` (utilization below the threshold;
  ``simulator/utilization/info.go``: a GPU node's utilization is its GPU requests over
  allocatable, otherwise the max of cpu and memory), ``planner/planner.go`` and
  ``simulator/cluster.go`` (every pod to move must fit elsewhere; nodes already found
  removable stop being destinations; pods without a controller, with local storage or
  in kube-system block removal as ``utils/drain`` rules do with default flags),
  ``unremovable`` (a node that failed the simulation is not rechecked for
  ``unremovable-node-recheck-timeout``), ``unneeded/nodes.go`` (unneeded-since kept
  across iterations; removable once unneeded for longer than ``scale-down-unneeded-time``
  and the group stays above its min size), ``budgets/budgets.go`` (at most
  ``max-scale-down-parallelism`` nodes, of which ``max-drain-parallelism`` non-empty).

Simplifications, stated: no backoff or failed provisioning, no DaemonSets, no PDBs, no
resource limits beyond ``max-nodes-total``, no balancing of similar node groups, and
Go's map iteration order (random upstream) replaced by name order.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from gpuscale.controllers import autoscaler_defaults as ca
from gpuscale.controllers.scheduler import (
    FilterCache,
    NodeView,
    PodRequirements,
)
from gpuscale.kube import Taint
from gpuscale.timeline import Decision

__all__ = [
    "EXPANDERS",
    "GPU_RESOURCE_NAMES",
    "TO_BE_DELETED_TAINT",
    "AutoscalerState",
    "AutoscalingOptions",
    "ClusterSnapshot",
    "NodeDeletion",
    "NodeGroup",
    "NodeSnapshot",
    "PodSnapshot",
    "RunResult",
    "all_pods_are_new",
    "next_change",
    "node_gpu_resource",
    "node_utilization",
    "pod_requests_gpu",
    "run_once",
]

GPU_RESOURCE_NAMES = (
    "nvidia.com/gpu",
    "habana.ai/gaudi",
    "gpu.intel.com/xe",
    "amd.com/gpu",
    "microsoft.com/directx",
)
"""``utils/gpu.GPUVendorResourceNames`` at HEAD. Releases before it knew only ``nvidia.com/gpu``."""

TO_BE_DELETED_TAINT = "ToBeDeletedByClusterAutoscaler"
"""The NoSchedule taint the actuator puts on a node it removes (``utils/taints``)."""

EXPANDERS = ("random", "most-pods", "least-waste", "price", "priority")
"""Expander names this model knows (``--expander``, comma-separated to chain)."""

_MAX_NODE_GROUP_SIZE_REACHED = "max node group size reached"


@dataclass(frozen=True, slots=True)
class AutoscalingOptions:
    """The cluster autoscaler's flags that shape its decisions (defaults from ``FAQ.md``, in
    :mod:`gpuscale.controllers.autoscaler_defaults`)."""

    scan_interval_s: float = ca.SCAN_INTERVAL_S
    """``--scan-interval``: time between iterations when nothing triggers one sooner."""
    max_nodes_total: int = 0
    """``--max-nodes-total``; 0 means no cluster-wide limit."""
    expander: str = ca.EXPANDER
    """``--expander`` (upstream default ``least-waste``; DOKS defaults to ``random``)."""
    expander_priorities: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    """The priority expander's ConfigMap: priority → regexes of node group names."""
    new_pod_scale_up_delay_s: float = ca.NEW_POD_SCALE_UP_DELAY_S
    """``--new-pod-scale-up-delay``: pods younger than this are ignored."""
    unschedulable_pod_time_buffer_s: float = ca.UNSCHEDULABLE_POD_TIME_BUFFER_S
    """``unschedulablePodTimeBuffer``: wait while the oldest pending pod is younger."""
    unschedulable_pod_with_gpu_time_buffer_s: float = ca.UNSCHEDULABLE_POD_WITH_GPU_TIME_BUFFER_S
    """``unschedulablePodWithGpuTimeBuffer``: wait while the oldest pending GPU pod is younger."""
    gpu_resource_names: tuple[str, ...] = GPU_RESOURCE_NAMES
    """Resources that make a pod a GPU pod and a node a GPU node."""
    max_nodes_per_scale_up: int = 1000
    """``--max-nodes-per-scaleup``: most nodes the estimator adds in one scale-up."""
    scale_down_enabled: bool = True
    """``--scale-down-enabled``."""
    scale_down_unneeded_time_s: float = ca.SCALE_DOWN_UNNEEDED_TIME_S
    """``--scale-down-unneeded-time``: how long a node must be unneeded before removal."""
    scale_down_delay_after_add_s: float = ca.SCALE_DOWN_DELAY_AFTER_ADD_S
    """``--scale-down-delay-after-add``: no scale-down this long after any scale-up."""
    scale_down_delay_after_delete_s: float = ca.SCALE_DOWN_DELAY_AFTER_DELETE_S
    """``--scale-down-delay-after-delete``."""
    scale_down_delay_after_failure_s: float = ca.SCALE_DOWN_DELAY_AFTER_FAILURE_S
    """``--scale-down-delay-after-failure``."""
    scale_down_utilization_threshold: float = ca.SCALE_DOWN_UTILIZATION_THRESHOLD
    """``--scale-down-utilization-threshold`` (max of cpu and memory requests / allocatable)."""
    scale_down_gpu_utilization_threshold: float = ca.SCALE_DOWN_GPU_UTILIZATION_THRESHOLD
    """``--scale-down-gpu-utilization-threshold`` (GPU requests / allocatable on GPU nodes)."""
    max_scale_down_parallelism: int = 10
    """``--max-scale-down-parallelism``: nodes removed at once."""
    max_drain_parallelism: int = 1
    """``--max-drain-parallelism``: non-empty nodes drained at once."""
    skip_nodes_with_local_storage: bool = True
    """``--skip-nodes-with-local-storage``: a pod with emptyDir/hostPath blocks removal."""
    skip_nodes_with_system_pods: bool = True
    """``--skip-nodes-with-system-pods``: a kube-system pod (without PDB) blocks removal."""
    unremovable_node_recheck_timeout_s: float = 300.0
    """``--unremovable-node-recheck-timeout``."""
    max_graceful_termination_s: float = ca.MAX_GRACEFUL_TERMINATION_S
    """``--max-graceful-termination-sec``: cap on evicted pods' grace period."""

    def __post_init__(self) -> None:
        for name in (
            "scan_interval_s",
            "new_pod_scale_up_delay_s",
            "unschedulable_pod_time_buffer_s",
            "unschedulable_pod_with_gpu_time_buffer_s",
            "scale_down_unneeded_time_s",
            "scale_down_delay_after_add_s",
            "scale_down_delay_after_delete_s",
            "scale_down_delay_after_failure_s",
            "unremovable_node_recheck_timeout_s",
            "max_graceful_termination_s",
        ):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a non-negative number of seconds, got {value!r}")
        if self.scan_interval_s <= 0:
            raise ValueError("scan_interval_s must be > 0")
        for name in ("scale_down_utilization_threshold", "scale_down_gpu_utilization_threshold"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be within [0, 1], got {value!r}")
        for part in self.expander.split(","):
            if part not in EXPANDERS:
                raise ValueError(
                    f"unknown expander {part!r}; expected one of {', '.join(EXPANDERS)}"
                )
        if self.max_nodes_total < 0 or self.max_nodes_per_scale_up < 1:
            raise ValueError("max_nodes_total must be >= 0 and max_nodes_per_scale_up >= 1")
        if self.max_scale_down_parallelism < 1 or self.max_drain_parallelism < 0:
            raise ValueError("scale-down parallelism must be >= 1 (drain >= 0)")


@dataclass(frozen=True, slots=True)
class NodeGroup:
    """A node group (node pool) as the cloud provider reports it."""

    id: str
    """Group name."""
    min_size: int
    """Smallest size the autoscaler keeps."""
    max_size: int
    """Largest size it grows to."""
    target_size: int
    """Nodes asked for: registered plus upcoming, minus deleted."""
    template: NodeView
    """An empty node of the group (``TemplateNodeInfo``): labels, taints, allocatable."""
    price_per_hour: float = 0.0
    """Price of one node, for the price expander."""


@dataclass(frozen=True, slots=True)
class PodSnapshot:
    """A pod as the autoscaler lists it."""

    key: str
    """``namespace/name``."""
    namespace: str
    owner: str
    """Controller reference (``ReplicaSet/ns/name``); empty for a bare pod."""
    created_at: float
    """``metadata.creationTimestamp``."""
    requirements: PodRequirements
    node: str | None
    """Node it is bound to, or None."""
    unschedulable: bool = False
    """PodScheduled is False with reason Unschedulable (the scheduler gave up on it)."""
    local_storage: bool = False
    """Mounts an emptyDir or hostPath volume."""
    terminating: bool = False
    """Has a deletion timestamp."""


@dataclass(frozen=True, slots=True)
class NodeSnapshot:
    """A registered node."""

    view: NodeView
    """Its scheduler view (requested resources include every pod on it)."""
    group: str
    """Node group it belongs to."""
    pods: tuple[str, ...] = ()
    """Keys of the pods bound to it."""
    being_deleted: bool = False
    """The autoscaler is already removing it."""
    created_at: float = 0.0


@dataclass(frozen=True, slots=True)
class ClusterSnapshot:
    """Everything one iteration reads."""

    groups: tuple[NodeGroup, ...]
    nodes: tuple[NodeSnapshot, ...]
    """Registered (Ready) nodes; nodes still booting are counted in ``upcoming``."""
    pods: Mapping[str, PodSnapshot]
    upcoming: Mapping[str, int] = field(default_factory=dict)
    """Per group, nodes asked for that are not Ready yet."""
    deletions_in_progress: Mapping[str, int] = field(default_factory=dict)
    """Per group, nodes being removed."""
    drains_in_progress: int = 0
    """Non-empty nodes being drained."""


@dataclass(frozen=True, slots=True)
class AutoscalerState:
    """What the autoscaler remembers between iterations."""

    last_scale_up: float = -math.inf
    last_scale_down_delete: float = -math.inf
    last_scale_down_fail: float = -math.inf
    unneeded_since: Mapping[str, float] = field(default_factory=dict)
    """Node → when it was first found unneeded (``unneeded.Nodes``)."""
    unremovable_until: Mapping[str, float] = field(default_factory=dict)
    """Node → when a failed removal simulation may be retried."""


@dataclass(frozen=True, slots=True)
class NodeDeletion:
    """A node the actuator starts removing."""

    node: str
    group: str
    empty: bool
    """No pod has to move (``ScaleDownEmpty``) or it must be drained."""
    pods: tuple[str, ...]
    """Pods to evict."""
    unneeded_since: float
    utilization: float
    resource: str
    """Resource the utilization was measured on (a GPU resource, cpu or memory)."""


@dataclass(frozen=True, slots=True)
class RunResult:
    """The outcome of one iteration."""

    scale_up_status: str
    """``ScaleUpSuccessful``, ``ScaleUpNotNeeded``, ``ScaleUpInCooldown`` or
    ``ScaleUpNoOptionsAvailable``."""
    scale_down_status: str
    """``ScaleDownNodeDeleteStarted``, ``ScaleDownNoNodeDeleted``, ``ScaleDownInCooldown``
    or ``ScaleDownNotTried``."""
    scale_ups: tuple[tuple[str, int], ...] = ()
    """(group, nodes to add)."""
    deletions: tuple[NodeDeletion, ...] = ()
    pods_triggered: tuple[str, ...] = ()
    """Pods the chosen scale-up is for (``TriggeredScaleUp``)."""
    not_triggered: Mapping[str, str] = field(default_factory=dict)
    """Pod → ``NotTriggerScaleUp`` message, for pods no group can take."""
    unneeded: tuple[str, ...] = ()
    unremovable: Mapping[str, str] = field(default_factory=dict)
    """Candidate node → why it cannot go (``NotUnderutilized``, ``NoPlaceToMovePods``...)."""
    decisions: tuple[Decision, ...] = ()

    @property
    def productive(self) -> bool:
        """A scale-up happened or a deletion started: the next iteration starts at once."""
        return bool(self.scale_ups) or bool(self.deletions)


class _WorkNode:
    """A mutable node in the iteration's private snapshot."""

    __slots__ = (
        "allocatable",
        "labels",
        "name",
        "nonzero_requested",
        "pod_count",
        "requested",
        "taints",
        "unschedulable",
    )

    def __init__(self, view: NodeView, name: str | None = None, extra: Sequence[Taint] = ()):
        self.name = name or view.name
        self.labels = view.labels
        self.taints = (*view.taints, *extra)
        self.allocatable = view.allocatable
        self.requested = dict(view.requested)
        self.nonzero_requested = dict(view.nonzero_requested)
        self.pod_count = view.pod_count
        self.unschedulable = view.unschedulable

    def add(self, pod: PodRequirements) -> None:
        for resource, amount in pod.requests.items():
            self.requested[resource] = self.requested.get(resource, 0) + amount
        for resource in ("cpu", "memory"):
            self.nonzero_requested[resource] = self.nonzero_requested.get(
                resource, 0
            ) + pod.nonzero(resource)
        self.pod_count += 1


def pod_requests_gpu(pod: PodRequirements, gpu_resource_names: Sequence[str]) -> bool:
    """Whether the pod requests a GPU resource (``gpu.PodRequestsGpu``)."""
    return any(name in pod.requests for name in gpu_resource_names)


def node_gpu_resource(view: NodeView, gpu_resource_names: Sequence[str]) -> str | None:
    """The GPU resource of a GPU node (``DetectNodeGPUResourceName``), None for other nodes."""
    for name in gpu_resource_names:
        if view.allocatable.get(name, 0) > 0:
            return name
    return None


def node_utilization(
    view: NodeView, gpu_resource_names: Sequence[str] = GPU_RESOURCE_NAMES
) -> tuple[float, str]:
    """Utilization and the resource it is measured on (``utilization.Calculate``)."""
    gpu = node_gpu_resource(view, gpu_resource_names)
    if gpu is not None:
        return view.requested.get(gpu, 0) / view.allocatable[gpu], gpu
    best, resource = 0.0, "memory"
    for name in ("cpu", "memory"):
        allocatable = view.allocatable.get(name, 0)
        if allocatable <= 0:
            continue
        util = view.requested.get(name, 0) / allocatable
        if util > best or (util == best and name == "memory"):
            best, resource = util, name
    return best, resource


def all_pods_are_new(pods: Sequence[PodSnapshot], now: float, options: AutoscalingOptions) -> bool:
    """``allPodsAreNew``: the oldest pending pod, or oldest GPU one, is still too young."""
    oldest = min(p.created_at for p in pods)
    if oldest + options.unschedulable_pod_time_buffer_s > now:
        return True
    gpu_times = [
        p.created_at for p in pods if pod_requests_gpu(p.requirements, options.gpu_resource_names)
    ]
    buffer = options.unschedulable_pod_with_gpu_time_buffer_s
    return bool(gpu_times) and min(gpu_times) + buffer > now


def _requirements_key(pod: PodRequirements) -> tuple[object, ...]:
    return (
        tuple(sorted(pod.requests.items())),
        tuple(sorted(pod.node_selector.items())),
        pod.required_terms,
        pod.tolerations,
    )


def _equivalence_groups(pods: Sequence[PodSnapshot]) -> list[list[PodSnapshot]]:
    groups: dict[tuple[object, ...], list[PodSnapshot]] = {}
    for pod in pods:
        groups.setdefault((pod.owner, _requirements_key(pod.requirements)), []).append(pod)
    return list(groups.values())


def _pod_score(pod: PodRequirements, template: NodeView) -> float:
    score = 0.0
    for resource in ("cpu", "memory"):
        allocatable = template.allocatable.get(resource, 0)
        if allocatable > 0:
            score += pod.requests.get(resource, 0) / allocatable
    return score


def _estimate(
    group: NodeGroup, pod_groups: Sequence[list[PodSnapshot]], limit: int, cache: FilterCache
) -> tuple[int, list[PodSnapshot]]:
    ordered = sorted(
        pod_groups, key=lambda g: _pod_score(g[0].requirements, group.template), reverse=True
    )
    new_nodes: list[_WorkNode] = []
    scheduled: list[PodSnapshot] = []
    for pods in ordered:
        cursor = 0  # equal pods: new nodes before the last placement are already full
        for pod in pods:
            placed = False
            for index in range(cursor, len(new_nodes)):
                if cache.fits(pod.requirements, new_nodes[index]):
                    new_nodes[index].add(pod.requirements)
                    cursor = index
                    placed = True
                    break
            if not placed:
                if len(new_nodes) >= limit:
                    continue
                node = _WorkNode(group.template, name=f"template-{group.id}-{len(new_nodes)}")
                if not cache.fits(pod.requirements, node):
                    continue
                node.add(pod.requirements)
                new_nodes.append(node)
                cursor = len(new_nodes) - 1
            scheduled.append(pod)
    return len(new_nodes), scheduled


@dataclass(frozen=True, slots=True)
class _Option:
    group: NodeGroup
    node_count: int
    pods: tuple[PodSnapshot, ...]


def _least_waste(options: list[_Option]) -> list[_Option]:
    best: list[_Option] = []
    best_score = math.inf
    for option in options:
        capacity = option.group.template.allocatable
        score = 0.0
        for resource in ("cpu", "memory"):
            available = capacity.get(resource, 0) * option.node_count
            requested = sum(p.requirements.requests.get(resource, 0) for p in option.pods)
            if available > 0:
                score += (available - requested) / available
        if score < best_score:
            best, best_score = [option], score
        elif score == best_score:
            best.append(option)
    return best


def _most_pods(options: list[_Option]) -> list[_Option]:
    most = max(len(o.pods) for o in options)
    return [o for o in options if len(o.pods) == most]


def _price(options: list[_Option]) -> list[_Option]:
    def cost(o: _Option) -> float:
        return o.group.price_per_hour * o.node_count / max(len(o.pods), 1)

    cheapest = min(cost(o) for o in options)
    return [o for o in options if cost(o) == cheapest]


def _priority(options: list[_Option], priorities: Mapping[int, tuple[str, ...]]) -> list[_Option]:
    for priority in sorted(priorities, reverse=True):
        patterns = [re.compile(p) for p in priorities[priority]]
        matched = [o for o in options if any(p.fullmatch(o.group.id) for p in patterns)]
        if matched:
            return matched
    return options


def _expand(options: list[_Option], spec: AutoscalingOptions, rng: random.Random) -> _Option:
    for name in spec.expander.split(","):
        if name == "least-waste":
            options = _least_waste(options)
        elif name == "most-pods":
            options = _most_pods(options)
        elif name == "price":
            options = _price(options)
        elif name == "priority":
            options = _priority(options, spec.expander_priorities)
        if len(options) == 1:
            return options[0]
    return options[rng.randrange(len(options))]


def _reasons_message(reasons: Mapping[str, int]) -> str:
    return ", ".join(sorted(f"{count} {reason}" for reason, count in reasons.items()))


def _scale_up(
    pods: Sequence[PodSnapshot],
    snapshot: ClusterSnapshot,
    options: AutoscalingOptions,
    rng: random.Random,
    cache: FilterCache,
) -> tuple[RunResult | None, dict[str, str]]:
    pod_groups = _equivalence_groups(pods)
    rejected: dict[int, dict[str, int]] = {i: {} for i in range(len(pod_groups))}
    schedulable: dict[int, bool] = dict.fromkeys(range(len(pod_groups)), False)
    node_count = len(snapshot.nodes)
    option_list: list[_Option] = []
    for group in snapshot.groups:
        if group.target_size >= group.max_size:
            for reasons in rejected.values():
                reasons[_MAX_NODE_GROUP_SIZE_REACHED] = (
                    reasons.get(_MAX_NODE_GROUP_SIZE_REACHED, 0) + 1
                )
            continue
        fitting: list[list[PodSnapshot]] = []
        for index, pod_group in enumerate(pod_groups):
            template = _WorkNode(group.template)
            failure, _ = cache.filter(pod_group[0].requirements, template)
            if failure:
                for reason in failure:
                    rejected[index][reason] = rejected[index].get(reason, 0) + 1
            else:
                schedulable[index] = True
                fitting.append(pod_group)
        if not fitting:
            continue
        limit = options.max_nodes_per_scale_up
        if options.max_nodes_total:
            limit = min(limit, options.max_nodes_total - node_count)
        count, scheduled = _estimate(group, fitting, max(limit, 0), cache)
        if count > 0 and scheduled:
            option_list.append(_Option(group, count, tuple(scheduled)))
    not_triggered = {
        pod.key: "pod didn't trigger scale-up: " + _reasons_message(rejected[index])
        for index, pod_group in enumerate(pod_groups)
        if not schedulable[index]
        for pod in pod_group
    }
    if not option_list:
        return None, not_triggered
    best = _expand(option_list, options, rng)
    new_nodes = best.node_count
    if options.max_nodes_total and node_count + new_nodes > options.max_nodes_total:
        new_nodes = options.max_nodes_total - node_count
    new_size = min(best.group.target_size + new_nodes, best.group.max_size)
    delta = new_size - best.group.target_size
    if delta <= 0:
        return None, not_triggered
    decision = Decision(
        controller="cluster-autoscaler",
        action="scale-up",
        reason="TriggeredScaleUp",
        target=f"pool/{best.group.id}",
        detail=(
            f"{best.group.target_size} -> {new_size} (max: {best.group.max_size}) "
            f"for {len(best.pods)} pod(s); expander {options.expander} "
            f"chose among {len(option_list)} option(s)"
        ),
    )
    result = RunResult(
        scale_up_status="ScaleUpSuccessful",
        scale_down_status="ScaleDownInCooldown",
        scale_ups=((best.group.id, delta),),
        pods_triggered=tuple(p.key for p in best.pods),
        not_triggered=not_triggered,
        decisions=(decision,),
    )
    return result, not_triggered


def _blocking_pod(pod: PodSnapshot, options: AutoscalingOptions) -> str | None:
    if not pod.owner:
        return "NotReplicated"
    if pod.local_storage and options.skip_nodes_with_local_storage:
        return "LocalStorageRequested"
    if pod.namespace == "kube-system" and options.skip_nodes_with_system_pods:
        return "UnmovableKubeSystemPod"
    return None


def run_once(
    snapshot: ClusterSnapshot,
    state: AutoscalerState,
    options: AutoscalingOptions,
    now: float,
    rng: random.Random,
) -> tuple[RunResult, AutoscalerState]:
    """One ``StaticAutoscaler.RunOnce`` at time ``now``."""
    pods = snapshot.pods
    groups = {g.id: g for g in snapshot.groups}
    cache = FilterCache()
    taint = Taint(TO_BE_DELETED_TAINT, str(int(now)), "NoSchedule")
    work: list[_WorkNode] = [
        _WorkNode(n.view, extra=(taint,) if n.being_deleted else ()) for n in snapshot.nodes
    ]
    for group_id, count in sorted(snapshot.upcoming.items()):
        group = groups.get(group_id)
        if group is None:
            continue
        work.extend(
            _WorkNode(group.template, name=f"upcoming-{group_id}-{i}") for i in range(count)
        )

    pending = sorted(
        (p for p in pods.values() if p.node is None and p.unschedulable and not p.terminating),
        key=lambda p: (p.created_at, p.key),
    )
    still_pending: list[PodSnapshot] = []
    # First fit in node order. Nodes only fill up during the iteration, so for pods with
    # the same requirements the search resumes where the previous one was placed.
    cursor: dict[int, int] = {}
    for pod in pending:
        req = pod.requirements
        start = cursor.get(id(req), 0)
        for index in range(start, len(work)):
            if cache.fits(req, work[index]):
                work[index].add(req)
                cursor[id(req)] = index
                break
        else:
            cursor[id(req)] = len(work)
            still_pending.append(pod)
    to_help = [p for p in still_pending if now - p.created_at > options.new_pod_scale_up_delay_s]

    disable_scale_down = False
    not_triggered: dict[str, str] = {}
    if not to_help:
        scale_up_status = "ScaleUpNotNeeded"
    elif options.max_nodes_total and len(snapshot.nodes) >= options.max_nodes_total:
        scale_up_status = "ScaleUpNoOptionsAvailable"
        message = "pod didn't trigger scale-up: max total nodes reached"
        not_triggered = {p.key: message for p in to_help}
    elif all_pods_are_new(to_help, now, options):
        scale_up_status = "ScaleUpInCooldown"
        disable_scale_down = True
    else:
        result, not_triggered = _scale_up(to_help, snapshot, options, rng, cache)
        if result is not None:
            return result, replace(state, last_scale_up=now)
        scale_up_status = "ScaleUpNoOptionsAvailable"

    if not options.scale_down_enabled:
        return RunResult(scale_up_status, "ScaleDownNotTried", not_triggered=not_triggered), state

    unremovable: dict[str, str] = {}
    unremovable_until = {n: t for n, t in state.unremovable_until.items() if t > now}
    candidates = [n for n in snapshot.nodes if not n.being_deleted]
    candidates.sort(key=lambda n: (n.view.name not in state.unneeded_since, n.view.name))
    destinations = {n.view.name: w for n, w in zip(snapshot.nodes, work, strict=False)}
    for node in snapshot.nodes:
        if node.being_deleted:
            destinations.pop(node.view.name, None)
    removable: list[tuple[NodeSnapshot, tuple[str, ...], float, str]] = []
    moved_onto: dict[str, list[str]] = {}
    for node in candidates:
        name = node.view.name
        if name in unremovable_until:
            unremovable[name] = "RecentlyUnremovable"
            continue
        util, resource = node_utilization(node.view, options.gpu_resource_names)
        threshold = (
            options.scale_down_gpu_utilization_threshold
            if resource in options.gpu_resource_names
            else options.scale_down_utilization_threshold
        )
        if util >= threshold:
            unremovable[name] = "NotUnderutilized"
            continue
        to_move = tuple(key for key in node.pods if key in pods and not pods[key].terminating)
        to_move += tuple(moved_onto.get(name, ()))
        blocked = next(
            (reason for key in to_move if (reason := _blocking_pod(pods[key], options))),
            None,
        )
        trial: dict[str, _WorkNode] = {}  # copy-on-write over destinations
        placements: list[tuple[str, str]] = []
        if blocked is None:
            for key in to_move:
                requirements = pods[key].requirements
                target: _WorkNode | None = None
                for other, shared in destinations.items():
                    if other == name:
                        continue
                    candidate = trial.get(other, shared)
                    if cache.fits(requirements, candidate):
                        target = candidate
                        break
                if target is None:
                    blocked = "NoPlaceToMovePods"
                    break
                if target.name not in trial:
                    target = _copy(target)
                    trial[target.name] = target
                target.add(requirements)
                placements.append((key, target.name))
        if blocked is not None:
            unremovable[name] = blocked
            unremovable_until[name] = now + options.unremovable_node_recheck_timeout_s
            continue
        # a successful simulation persists (RemovalSimulator with persistSuccessfulSimulations)
        destinations.update(trial)
        destinations.pop(name, None)
        for key, target_name in placements:
            moved_onto.setdefault(target_name, []).append(key)
        removable.append((node, to_move, util, resource))

    unneeded_since = {
        node.view.name: state.unneeded_since.get(node.view.name, now) for node, _, _, _ in removable
    }
    next_state = replace(state, unneeded_since=unneeded_since, unremovable_until=unremovable_until)

    in_cooldown = (
        disable_scale_down
        or not candidates
        or state.last_scale_up + options.scale_down_delay_after_add_s > now
        or state.last_scale_down_fail + options.scale_down_delay_after_failure_s > now
        or state.last_scale_down_delete + options.scale_down_delay_after_delete_s > now
    )
    base = RunResult(
        scale_up_status,
        "ScaleDownInCooldown",
        not_triggered=not_triggered,
        unneeded=tuple(sorted(unneeded_since)),
        unremovable=unremovable,
    )
    if in_cooldown:
        return base, next_state

    sizes = {
        g.id: g.target_size - snapshot.deletions_in_progress.get(g.id, 0) for g in snapshot.groups
    }
    budget = options.max_scale_down_parallelism - sum(snapshot.deletions_in_progress.values())
    drain_budget = options.max_drain_parallelism - snapshot.drains_in_progress
    chosen: list[NodeDeletion] = []
    for empty_pass in (True, False):
        for node, to_move, util, resource in sorted(removable, key=lambda r: r[0].view.name):
            if bool(to_move) == empty_pass:
                continue
            name = node.view.name
            if not unneeded_since[name] + options.scale_down_unneeded_time_s < now:
                unremovable[name] = "NotUnneededLongEnough"
                continue
            group = groups.get(node.group)
            if group is None or sizes[node.group] <= group.min_size:
                unremovable[name] = "NodeGroupMinSizeReached"
                continue
            if budget <= 0 or (not empty_pass and drain_budget <= 0):
                continue
            sizes[node.group] -= 1
            budget -= 1
            if not empty_pass:
                drain_budget -= 1
            chosen.append(
                NodeDeletion(
                    node=name,
                    group=node.group,
                    empty=empty_pass,
                    pods=to_move,
                    unneeded_since=unneeded_since[name],
                    utilization=util,
                    resource=resource,
                )
            )
    if not chosen:
        return replace(base, scale_down_status="ScaleDownNoNodeDeleted"), next_state
    decisions = tuple(
        Decision(
            controller="cluster-autoscaler",
            action="remove-node",
            reason="ScaleDownEmpty" if d.empty else "ScaleDown",
            target=f"node/{d.node}",
            detail=(
                f"pool {d.group}; unneeded for {now - d.unneeded_since:g}s; "
                f"{d.resource} utilization {d.utilization:.2f}; {len(d.pods)} pod(s) to move"
            ),
        )
        for d in chosen
    )
    remaining = {n: t for n, t in unneeded_since.items() if n not in {d.node for d in chosen}}
    result = replace(
        base,
        scale_down_status="ScaleDownNodeDeleteStarted",
        deletions=tuple(chosen),
        decisions=decisions,
    )
    return result, replace(next_state, unneeded_since=remaining, last_scale_down_delete=now)


def next_change(
    snapshot: ClusterSnapshot, state: AutoscalerState, options: AutoscalingOptions, now: float
) -> float:
    """The earliest time from ``now`` on at which :func:`run_once` on the same snapshot and
    state could decide differently (infinity if never); iterations strictly before it can
    be skipped.

    Only time moves the iteration's time comparisons: pod ages against the scale-up
    buffers, the cooldowns after a scale-up, delete or failure, unneeded-since against the
    unneeded time, and the recheck timeouts. A caller may skip iterations before this time
    while nothing in the cluster changed; this is an optimisation, not upstream behaviour.
    """
    flips: list[float] = []
    for pod in snapshot.pods.values():
        if pod.node is None and pod.unschedulable and not pod.terminating:
            flips.append(pod.created_at + options.new_pod_scale_up_delay_s)
            flips.append(pod.created_at + options.unschedulable_pod_time_buffer_s)
            flips.append(pod.created_at + options.unschedulable_pod_with_gpu_time_buffer_s)
    flips.append(state.last_scale_up + options.scale_down_delay_after_add_s)
    flips.append(state.last_scale_down_fail + options.scale_down_delay_after_failure_s)
    flips.append(state.last_scale_down_delete + options.scale_down_delay_after_delete_s)
    flips.extend(
        since + options.scale_down_unneeded_time_s for since in state.unneeded_since.values()
    )
    flips.extend(state.unremovable_until.values())
    # a threshold reached exactly now may only flip a strict comparison just after now
    return min((f for f in flips if f >= now), default=math.inf)


def _copy(node: _WorkNode) -> _WorkNode:
    clone = _WorkNode.__new__(_WorkNode)
    clone.name = node.name
    clone.labels = node.labels
    clone.taints = node.taints
    clone.allocatable = node.allocatable
    clone.requested = dict(node.requested)
    clone.nonzero_requested = dict(node.nonzero_requested)
    clone.pod_count = node.pod_count
    clone.unschedulable = node.unschedulable
    return clone
