"""The simulated cluster's objects: nodes, pods and workloads, each with the state the
loops change (``gpuscale.sim.world`` moves them; the scrape targets, the autoscaler loop,
the ledger and the recorder read them). Pure.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from gpuscale.controllers.replicaset import PodStatusView
from gpuscale.controllers.scheduler import NodeView, PodRequirements, quantities
from gpuscale.kube import Taint
from gpuscale.sim.engine import Handle
from gpuscale.sim.scrape import ScrapeTarget
from gpuscale.sim.specs import SimPool, SimWorkload
from gpuscale.timeline import WorkloadState

if TYPE_CHECKING:
    from gpuscale.sim.requests import ReplicaServer, Router
    from gpuscale.sim.serving import EngineRouter, EngineServer

__all__ = ["NAME_CHARS", "Node", "Pod", "Workload"]

NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"
"""The characters of generated name suffixes (``k8s.io/apimachinery`` ``rand.String``)."""


class Node:
    """A node of a pool, from provisioning to gone: what it holds, and its GPUs' holders."""

    __slots__ = (
        "allocatable",
        "created_at",
        "gone_at",
        "gpu_resource",
        "gpu_slots",
        "images",
        "index",
        "ip",
        "labels",
        "name",
        "nonzero_requested",
        "pods",
        "pool",
        "ready_at",
        "requested",
        "state",
        "taints",
        "target",
    )

    def __init__(
        self, pool: SimPool, index: int, name: str, created_at: float, labels: dict[str, str]
    ) -> None:
        self.pool = pool
        self.index = index
        self.name = name
        self.created_at = created_at
        self.ready_at = math.inf
        self.gone_at = math.inf
        self.state = "provisioning"
        self.labels = labels
        self.taints: tuple[Taint, ...] = pool.taints
        self.allocatable = quantities(pool.allocatable)
        self.requested: dict[str, int] = {}
        self.nonzero_requested: dict[str, int] = {}
        self.pods: dict[str, Pod] = {}
        self.images: set[str] = set()
        self.ip = f"10.116.{index // 250}.{index % 250 + 2}"
        self.gpu_resource = pool.gpu_resource()
        self.gpu_slots: list[Pod | None] = [None] * pool.gpus_per_node
        self.target: ScrapeTarget | None = None

    def view(self) -> NodeView:
        return NodeView(
            self.name,
            self.labels,
            self.taints,
            self.allocatable,
            dict(self.requested),
            dict(self.nonzero_requested),
            len(self.pods),
        )

    def add(self, pod: Pod) -> None:
        req = pod.workload.requirements
        for resource, amount in req.requests.items():
            self.requested[resource] = self.requested.get(resource, 0) + amount
        for resource in ("cpu", "memory"):
            self.nonzero_requested[resource] = self.nonzero_requested.get(
                resource, 0
            ) + req.nonzero(resource)
        self.pods[pod.key] = pod
        want = pod.workload.gpus
        for i, holder in enumerate(self.gpu_slots):
            if want and holder is None:
                self.gpu_slots[i] = pod
                pod.gpu_ids.append(i)
                want -= 1

    def remove(self, pod: Pod) -> None:
        req = pod.workload.requirements
        for resource, amount in req.requests.items():
            self.requested[resource] -= amount
        for resource in ("cpu", "memory"):
            self.nonzero_requested[resource] -= req.nonzero(resource)
        del self.pods[pod.key]
        for i in pod.gpu_ids:
            self.gpu_slots[i] = None


class Pod:
    """A pod of a workload, Pending to Gone, with its gauges, its server and its timers."""

    __slots__ = (
        "available",
        "ca_message",
        "created_at",
        "deleted_at",
        "gauges",
        "gone_at",
        "gpu_ids",
        "handles",
        "ip",
        "key",
        "message",
        "name",
        "node",
        "ready_since",
        "routable",
        "running",
        "server",
        "serving_at",
        "state",
        "target",
        "uid",
        "unschedulable",
        "workload",
    )

    def __init__(self, workload: Workload, name: str, uid: str, created_at: float) -> None:
        self.workload = workload
        self.name = name
        self.key = f"{workload.spec.namespace}/{name}"
        self.uid = uid
        self.created_at = created_at
        self.state = "Pending"
        self.node: Node | None = None
        self.running = False
        self.ready_since: float | None = None
        self.available = False
        self.unschedulable = False
        self.message = ""
        self.ca_message = ""
        self.deleted_at: float | None = None
        self.gone_at = math.inf
        self.ip = ""
        self.gauges: dict[str, float] = {}
        self.server: ReplicaServer | EngineServer | None = None
        self.gpu_ids: list[int] = []
        self.handles: list[Handle] = []
        self.target: ScrapeTarget | None = None
        self.routable = False
        self.serving_at = 0.0

    @property
    def terminating(self) -> bool:
        return self.deleted_at is not None

    def status_view(self) -> PodStatusView:
        return PodStatusView(
            name=self.name,
            uid=self.uid,
            node_name=self.node.name if self.node is not None else "",
            phase="Running" if self.running else "Pending",
            ready=self.state == "Ready",
            ready_since=self.ready_since,
            created_at=self.created_at,
        )


class Workload:
    """A Deployment (or StatefulSet) as the ReplicaSet controller sees it: spec, pods, router."""

    __slots__ = (
        "desired",
        "gpus",
        "metrics",
        "owner",
        "pods",
        "requirements",
        "router",
        "serial",
        "shown",
        "spec",
        "spec_replicas",
        "template_hash",
        "was_shown",
    )

    def __init__(self, spec: SimWorkload, template_hash: str) -> None:
        self.spec = spec
        self.spec_replicas = spec.replicas
        self.pods: dict[str, Pod] = {}
        self.requirements: PodRequirements = spec.pod_requirements()
        self.desired: int | None = None
        self.metrics: dict[str, float | None] = {}
        self.router: Router | EngineRouter | None = None
        self.template_hash = template_hash
        self.owner = f"ReplicaSet/{spec.namespace}/{spec.name}-{template_hash}"
        self.serial = 0
        self.gpus = spec.gpus_per_pod()
        self.shown: WorkloadState | None = None
        """The state the timeline last recorded; None once anything it shows changed
        (``spec_replicas``, ``desired``, ``metrics``, a pod added, gone or changing
        state): every such change sets it to None, so the recorder rebuilds it only
        then (an exact saving: with drifting loops most records change one workload)."""
        self.was_shown: WorkloadState | None = None
        """The state the timeline last recorded, kept when ``shown`` is reset: the
        recorder shares its unchanged pod counts."""

    def active(self) -> list[Pod]:
        return [p for p in self.pods.values() if p.deleted_at is None]
