"""The simulated cluster: pods, nodes and workloads, and the loops that move them — the
ReplicaSet controller, the scheduler, the kubelet, the cluster autoscaler, endpoints,
kube-state-metrics, Prometheus' scrapes, the scalers and the load. Pure: it runs inside
an :class:`~gpuscale.sim.engine.Engine` and reads no clock.

Each loop calls the controller model it follows (``gpuscale.controllers``) with a
snapshot and applies the decision; this module is only the plumbing between them, with
these timings (see ``docs/simulator.md``):

- a scale subresource write reaches the ReplicaSet at once; pods are created at once
  and scheduled in the same instant (the scheduler retries pending pods whenever a node
  becomes Ready or resources are freed);
- a bound pod pulls its image unless its node already has it, starts, and turns Ready
  after the start-up time; Services route to it ``endpoint_propagation_s`` later;
- a deleted pod leaves ``status.replicas`` at once, stops receiving traffic after the
  propagation delay and is gone when its process exits: at once for a gauge app with no
  shutdown time, after its requests drain for a server — at most the grace period;
- the cluster autoscaler runs at the scan interval, immediately again after a
  productive iteration, and at once when a pod turns unschedulable
  (``loop/trigger.go``); nodes it adds cost from that moment and are Ready after the
  pool's provisioning time; nodes it removes are tainted, drained, and gone after the
  pool's deletion time;
- kube-state-metrics reflects the objects as they are at its scrape;
- everything at the same instant happens in the :class:`~gpuscale.sim.engine.Priority`
  order, and randomness comes from streams derived from the run's seed.
"""

from __future__ import annotations

import functools
import itertools
import math
import random
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

from gpuscale.controllers import cluster_autoscaler as ca
from gpuscale.controllers import kube_state_metrics as ksm
from gpuscale.controllers.kubelet import pod_startup
from gpuscale.controllers.replicaset import PodStatusView, manage_replicas
from gpuscale.controllers.scheduler import (
    FilterCache,
    NodeView,
    PodRequirements,
    ScheduleResult,
    filter_node,
    quantities,
    schedule_pod,
)
from gpuscale.errors import InputError
from gpuscale.kube import Taint
from gpuscale.sim.engine import Engine, Handle, Priority
from gpuscale.sim.load import RateSchedule, RateSource, TraceSource
from gpuscale.sim.metrics import MetricsBackend
from gpuscale.sim.requests import ReplicaServer, RequestLog, Router
from gpuscale.sim.scalers import ScaleDecision, Scaler, ScaleView
from gpuscale.sim.scenario import GaugeStep, RampStep, RateStep, Scenario
from gpuscale.sim.scrape import ScrapeManager, ScrapeTarget, SeriesKey
from gpuscale.sim.specs import PoolSpec, SimulationSpec, WorkloadSpec
from gpuscale.sim.traces import Trace
from gpuscale.timeline import Decision, Header, Record, WorkloadState

__all__ = ["CostReport", "LoadSpec", "SimulationResult", "World"]

_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"
_EXPORTER_NAMES = frozenset({"gpu_gfx_activity", "DCGM_FI_DEV_GPU_UTIL"})


def _ksm_names() -> frozenset[str]:
    deployment = ksm.DeploymentStatus("n", "d", 1, 1, 1, 1, 1)
    pod = ksm.PodInfo("n", "p", "u", "Running", True, True, "node", "1.1.1.1", "2.2.2.2", "R", "r")
    node = ksm.NodeInfo("node", {"a": "b"}, "1.1.1.1", "id")
    series = [
        *ksm.deployment_series(deployment),
        *ksm.pod_series(pod),
        *ksm.node_series(node, ("a",)),
    ]
    return frozenset(name for name, _, _ in series)


_KSM_NAMES = _ksm_names()


@dataclass(frozen=True, slots=True)
class LoadSpec:
    """The load driving a run."""

    scenario: Scenario | None = None
    """Timed steps: gauges, request rates, ramps."""
    traces: Mapping[str, Trace] = field(default_factory=dict)
    """Workload name → the trace (already scaled and tiled) its Service receives."""


@dataclass(frozen=True, slots=True)
class CostReport:
    """Money and GPU time per pool over a run."""

    node_seconds: Mapping[str, float]
    dollars: Mapping[str, float]
    gpu_seconds: Mapping[str, float]
    idle_gpu_seconds: Mapping[str, float]
    """GPU-seconds on existing nodes not held by a Ready pod."""
    nodes_added: Mapping[str, int]
    nodes_removed: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class SimulationResult:
    """What a run produced."""

    header: Header
    records: tuple[Record, ...]
    requests: Mapping[str, RequestLog]
    """Workload key → its request log (request workloads only)."""
    cost: CostReport
    until: float
    events: int
    """Engine actions run."""
    scrapes: int
    audit: tuple[str, ...] = ()
    """Invariant violations found when auditing (empty means none)."""


class _Node:
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

    def __init__(self, pool: PoolSpec, index: int, name: str, created_at: float) -> None:
        self.pool = pool
        self.index = index
        self.name = name
        self.created_at = created_at
        self.ready_at = math.inf
        self.gone_at = math.inf
        self.state = "provisioning"
        self.labels = {
            **pool.labels,
            "kubernetes.io/hostname": name,
            "doks.digitalocean.com/node-pool": pool.name,
        }
        self.taints: tuple[Taint, ...] = pool.taints
        self.allocatable = quantities(pool.allocatable)
        self.requested: dict[str, int] = {}
        self.nonzero_requested: dict[str, int] = {}
        self.pods: dict[str, _Pod] = {}
        self.images: set[str] = set()
        self.ip = f"10.116.{index // 250}.{index % 250 + 2}"
        self.gpu_resource = pool.gpu_resource()
        self.gpu_slots: list[_Pod | None] = [None] * pool.gpus_per_node
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

    def add(self, pod: _Pod) -> None:
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

    def remove(self, pod: _Pod) -> None:
        req = pod.workload.requirements
        for resource, amount in req.requests.items():
            self.requested[resource] -= amount
        for resource in ("cpu", "memory"):
            self.nonzero_requested[resource] -= req.nonzero(resource)
        del self.pods[pod.key]
        for i in pod.gpu_ids:
            self.gpu_slots[i] = None


class _Pod:
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

    def __init__(self, workload: _Workload, name: str, uid: str, created_at: float) -> None:
        self.workload = workload
        self.name = name
        self.key = f"{workload.spec.namespace}/{name}"
        self.uid = uid
        self.created_at = created_at
        self.state = "Pending"
        self.node: _Node | None = None
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
        self.server: ReplicaServer | None = None
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


class _Workload:
    __slots__ = (
        "desired",
        "gpus",
        "metrics",
        "owner",
        "pods",
        "requirements",
        "router",
        "serial",
        "spec",
        "spec_replicas",
        "template_hash",
    )

    def __init__(self, spec: WorkloadSpec, template_hash: str) -> None:
        self.spec = spec
        self.spec_replicas = spec.replicas
        self.pods: dict[str, _Pod] = {}
        self.requirements: PodRequirements = spec.pod_requirements()
        self.desired: int | None = None
        self.metrics: dict[str, float | None] = {}
        self.router: Router | None = None
        self.template_hash = template_hash
        self.owner = f"ReplicaSet/{spec.namespace}/{spec.name}-{template_hash}"
        self.serial = 0
        self.gpus = spec.gpus_per_pod()

    def active(self) -> list[_Pod]:
        return [p for p in self.pods.values() if p.deleted_at is None]


def _name_of(key: SeriesKey) -> str:
    return next((value for label, value in key if label == "__name__"), "")


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return a == b or (math.isnan(a) and math.isnan(b))


def _format_le(bound: float) -> str:
    return "+Inf" if math.isinf(bound) else repr(float(bound))


class World:
    """The simulated cluster driven by an engine (see the module docstring)."""

    def __init__(
        self,
        spec: SimulationSpec,
        *,
        metrics: MetricsBackend,
        seed: int = 0,
        scalers: Mapping[str, Sequence[Scaler]] | None = None,
        load: LoadSpec | None = None,
        warm_start: bool = True,
        audit: bool = False,
        engine: Engine | None = None,
        scrape_only: Collection[str] | None = None,
    ) -> None:
        self.spec = spec
        self.metrics = metrics
        self.seed = seed
        self.engine = engine or Engine()
        self.load = load or LoadSpec()
        self.audit_enabled = audit
        self.audit: list[str] = []
        root = random.Random(seed)
        self._sched_rng = random.Random(root.getrandbits(64))
        self._ca_rng = random.Random(root.getrandbits(64))
        self._names = random.Random(root.getrandbits(64))
        self._lb_rng = random.Random(root.getrandbits(64))
        load_seed = root.getrandbits(63)
        router_seed = root.getrandbits(63)
        self.records: list[Record] = []
        self._decisions: list[Decision] = []
        self._dirty = False
        self._changes = 0
        """Counts every change the timeline sees (which includes every change of what
        kube-state-metrics reports)."""
        self._flush: Handle | None = None
        self._load_values: dict[str, float] = {}
        self._nodes: list[_Node] = []
        self._node_index = 0
        self._pending: dict[str, _Pod] = {}
        self._schedule_handle: Handle | None = None
        self._rs_handles: dict[str, Handle] = {}
        self._ca_state = ca.AutoscalerState()
        self._ca_options = spec.autoscaler.options()
        self._ca_next: Handle | None = None
        self._cluster_version = 0
        self._ca_seen_version = -1
        self._ca_valid_until = -math.inf
        self.ca_runs = 0
        self._last_record_t = 0.0
        self._gpu_seconds: dict[str, float] = {p.name: 0.0 for p in spec.pools}
        self._idle_gpu_seconds: dict[str, float] = {p.name: 0.0 for p in spec.pools}
        self._closed_node_seconds: dict[str, float] = {p.name: 0.0 for p in spec.pools}
        self._added: dict[str, int] = {p.name: 0 for p in spec.pools}
        self._removed: dict[str, int] = {p.name: 0 for p in spec.pools}
        self._gpus_state: dict[str, tuple[int, int]] = {p.name: (0, 0) for p in spec.pools}
        self._ksm_cache: dict[object, list[tuple[SeriesKey, float]]] = {}
        self._ksm_last: tuple[tuple[object, ...], list[SeriesKey], list[float]] | None = None
        self._ksm_seen = -1
        self._servers: dict[str, list[ReplicaServer]] = {}
        self.scrape = ScrapeManager(
            self.engine, metrics, refresh_s=spec.prometheus.discovery_refresh_s, keep=scrape_only
        )
        keep = self.scrape.keep
        # request timing for GPU utilisation is kept only when an exporter is scraped
        self._track_busy = keep is None or "up" in keep or not keep.isdisjoint(_EXPORTER_NAMES)

        self.workloads: dict[str, _Workload] = {}
        interned: dict[tuple[object, ...], PodRequirements] = {}
        for w_spec in spec.workloads:
            template_hash = "".join(self._names.choice(_NAME_CHARS) for _ in range(10))
            workload = _Workload(w_spec, template_hash)
            # equal pod requirements share one object, so per-object caches see them as one
            req = workload.requirements
            key = (
                tuple(sorted(req.requests.items())),
                tuple(sorted(req.node_selector.items())),
                req.required_terms,
                req.tolerations,
            )
            workload.requirements = interned.setdefault(key, req)
            self.workloads[w_spec.key] = workload
        self._setup_load(load_seed, router_seed)
        for pool in spec.pools:
            for _ in range(pool.start_nodes):
                node = self._new_node(pool)
                self._node_ready(node, initial=True)
        self._added = dict.fromkeys(self._added, 0)
        for workload in self.workloads.values():
            for _ in range(workload.spec_replicas):
                pod = self._new_pod(workload)
                if warm_start:
                    self._warm_place(pod)
        self._setup_ksm()
        if self._pending:
            self._request_schedule()
        for name, scaler_list in (scalers or {}).items():
            target = self._workload(name)
            for scaler in scaler_list:
                self._start_scaler(target, scaler)
        if spec.autoscaler.enabled:
            self._ca_next = self.engine.at(0.0, self._ca_run, priority=Priority.AUTOSCALER)
        self._touch()

    # ------------------------------------------------------------------ helpers

    def _workload(self, name: str) -> _Workload:
        for workload in self.workloads.values():
            if name in (workload.spec.name, workload.spec.key):
                return workload
        raise KeyError(f"no workload named {name!r}")

    def _decide(self, decision: Decision) -> None:
        self._decisions.append(decision)
        self._touch()

    def _touch(self) -> None:
        self._dirty = True
        self._changes += 1
        if self._flush is None:
            self._flush = self.engine.at(
                self.engine.now, self._write_record, priority=Priority.TIMELINE
            )

    def _uid(self) -> str:
        return str(uuid.UUID(int=self._names.getrandbits(128), version=4))

    # ------------------------------------------------------------------ load

    def _setup_load(self, load_seed: int, router_seed: int) -> None:
        scenario = self.load.scenario
        single = next(iter(self.workloads.values())) if len(self.workloads) == 1 else None
        rate_steps: dict[str, list[RateStep | RampStep]] = {}
        if scenario is not None:
            names = ", ".join(w.spec.name for w in self.workloads.values())
            for step in scenario.steps:
                where = f"{scenario.source}:{step.line}" if step.line else scenario.source
                try:
                    target = self._workload(step.workload) if step.workload else single
                except KeyError:
                    raise InputError(
                        f"no workload named {step.workload!r}",
                        where=where,
                        fix=f"name one of: {names}",
                    ) from None
                if target is None:
                    raise InputError(
                        "the step names no workload and the simulation has several",
                        where=where,
                        fix=f"add 'workload:' to the step or the scenario (one of: {names})",
                    )
                if isinstance(step, GaugeStep):
                    self.engine.at(
                        step.at,
                        functools.partial(self._set_gauge, target, step),
                        priority=Priority.LOAD,
                    )
                else:
                    rate_steps.setdefault(target.spec.key, []).append(step)
        for index, workload in enumerate(self.workloads.values()):
            trace = self.load.traces.get(workload.spec.name) or self.load.traces.get(
                workload.spec.key
            )
            steps = rate_steps.get(workload.spec.key)
            if trace is None and not steps:
                continue
            if trace is not None and steps:
                first = steps[0]
                assert scenario is not None
                raise InputError(
                    f"workload {workload.spec.name} gets requests from both a trace and the "
                    "scenario's request_rate/ramp steps",
                    where=f"{scenario.source}:{first.line}" if first.line else scenario.source,
                    fix="send its requests from one of them (a scenario's set_gauge steps "
                    "combine with a trace)",
                )
            if workload.spec.capacity is None:
                raise InputError(
                    f"workload {workload.spec.name} gets requests but has no capacity",
                    where=f"workload {workload.spec.name}",
                    fix="give it a capacity (concurrency and service time, or token rates)",
                )
            if trace is not None:
                source: TraceSource | RateSource = TraceSource(trace)
            else:
                assert steps is not None
                schedule = RateSchedule(steps)
                source = RateSource(schedule, seed=load_seed + index)
                for t in schedule.change_times():
                    self.engine.at(
                        t,
                        functools.partial(self._record_rate, workload, schedule),
                        priority=Priority.LOAD,
                    )
            capacity = workload.spec.capacity
            if capacity.uses_tokens and capacity.service_time_s is None and not source.has_tokens:
                raise InputError(
                    f"workload {workload.spec.name} gets requests without token counts but its "
                    "capacity gives only token rates",
                    where=f"workload {workload.spec.name}",
                    fix="give the capacity a service time too, or a load with token counts",
                )
            workload.router = Router(
                source,
                workload.spec.capacity,
                buckets=workload.spec.metric_names.buckets,
                seed=router_seed + index,
                round_robin=self.spec.control_plane.load_balancing == "round-robin",
                track_busy=self._track_busy,
            )
            self._servers[workload.spec.key] = []
            if trace is not None:
                self.engine.at(
                    60.0, functools.partial(self._measure_rate, workload, 0), priority=Priority.LOAD
                )

    def _record_rate(self, workload: _Workload, schedule: RateSchedule) -> None:
        self._load_values[f"request_rate:{workload.spec.name}"] = schedule.rate_at(self.engine.now)
        self._touch()

    def _measure_rate(self, workload: _Workload, last: int) -> None:
        router = workload.router
        assert router is not None
        router.advance(self.engine.now)
        rate = (router.arrived - last) / 60.0
        key = f"arrival_rate:{workload.spec.name}"
        if self._load_values.get(key) != rate:
            self._load_values[key] = rate
            self._touch()
        arrived = router.arrived
        self.engine.after(
            60.0, lambda: self._measure_rate(workload, arrived), priority=Priority.LOAD
        )

    def _set_gauge(self, workload: _Workload, step: GaugeStep) -> None:
        targets = [p for p in workload.pods.values() if p.routable and p.gone_at > self.engine.now]
        target_name = f"deployment/{workload.spec.key}"
        if not targets:
            self._decide(
                Decision(
                    "load",
                    "set_gauge",
                    "NoEndpoints",
                    target_name,
                    f"{step.name}={step.value:g}: the Service has no ready pods",
                )
            )
            return
        chosen = (
            targets
            if step.pods is None
            else self._lb_rng.sample(targets, min(step.pods, len(targets)))
        )
        refused = [p for p in chosen if self.engine.now < p.serving_at]
        if refused:
            self._decide(
                Decision(
                    "load",
                    "set_gauge",
                    "ConnectionRefused",
                    target_name,
                    f"{step.name}={step.value:g}: {', '.join(p.name for p in refused)} is Ready "
                    "but its program does not serve yet",
                )
            )
            chosen = [p for p in chosen if p not in refused]
            if not chosen:
                return
        for pod in chosen:
            pod.gauges[step.name] = step.value
        self._load_values[step.name] = step.value
        self._decide(
            Decision(
                "load",
                "set_gauge",
                "Scenario",
                target_name,
                f"{step.name}={step.value:g} on {', '.join(p.name for p in chosen)}",
            )
        )

    # ------------------------------------------------------------------ pods

    def _new_pod(self, workload: _Workload) -> _Pod:
        suffix = "".join(self._names.choice(_NAME_CHARS) for _ in range(5))
        name = f"{workload.spec.name}-{workload.template_hash}-{suffix}"
        pod = _Pod(workload, name, self._uid(), self.engine.now)
        for gauge in workload.spec.gauges:
            pod.gauges[gauge] = 0.0
        workload.pods[pod.key] = pod
        self._pending[pod.key] = pod
        self._cluster_version += 1
        self._touch()
        return pod

    def _warm_place(self, pod: _Pod) -> None:
        views = [n.view() for n in self._nodes if n.state == "ready"]
        result = schedule_pod(pod.workload.requirements, views, self._sched_rng)
        if result.node is None:
            return
        node = next(n for n in self._nodes if n.name == result.node)
        self._bind(pod, node, warm=True)

    def _request_schedule(self) -> None:
        if self._schedule_handle is None:
            self._schedule_handle = self.engine.at(
                self.engine.now, self._schedule_pass, priority=Priority.SCHEDULER
            )

    def _schedule_pass(self) -> None:
        self._schedule_handle = None
        if not self._pending:
            return
        nodes = [n for n in self._nodes if n.state in ("ready", "deleting")]
        views = [n.view() for n in nodes]
        index = {n.name: i for i, n in enumerate(nodes)}
        cache = FilterCache()
        # within a pass nodes only fill up: a pod like one that just failed fails the same way
        failed: dict[int, ScheduleResult] = {}
        for pod in sorted(self._pending.values(), key=lambda p: (p.created_at, p.key)):
            requirements = pod.workload.requirements
            result = failed.get(id(requirements)) or schedule_pod(
                requirements, views, self._sched_rng, cache=cache
            )
            if result.node is None:
                failed[id(requirements)] = result
            if result.node is not None:
                node = nodes[index[result.node]]
                self._bind(pod, node)
                views[index[result.node]] = node.view()
                continue
            newly = not pod.unschedulable
            pod.unschedulable = True
            if newly:
                self._cluster_version += 1
            if result.message != pod.message:
                pod.message = result.message
                self._decide(
                    Decision(
                        "scheduler", "fail", "FailedScheduling", f"pod/{pod.key}", result.message
                    )
                )
            if newly:
                self._ca_signal()

    def _bind(self, pod: _Pod, node: _Node, *, warm: bool = False) -> None:
        now = self.engine.now
        if self.audit_enabled:
            reasons, _ = filter_node(pod.workload.requirements, node.view())
            if reasons:
                self.audit.append(f"{now:g}: {pod.key} bound to {node.name} that {reasons}")
        self._pending.pop(pod.key, None)
        self._cluster_version += 1
        pod.node = node
        pod.unschedulable = False
        pod.message = ""
        pod.ca_message = ""
        pod.ip = f"10.244.{node.index}.{len(node.pods) + 10}"
        node.add(pod)
        pod.state = "Starting"
        spec = pod.workload.spec
        if not warm:
            self._decide(
                Decision("scheduler", "bind", "Scheduled", f"pod/{pod.key}", f"node {node.name}")
            )
        else:
            self._touch()
        startup = pod_startup(
            now,
            image_present=warm or spec.image in node.images,
            image_pull_s=spec.image_pull_s,
            startup_s=0.0 if warm else spec.startup_s,
            readiness="serving" if warm else spec.readiness,
        )
        pod.serving_at = -math.inf if warm else startup.serving_at
        if startup.pulled_at > now:
            pod.handles.append(
                self.engine.at(
                    startup.pulled_at,
                    lambda: node.images.add(spec.image),
                    priority=Priority.KUBELET,
                )
            )
        else:
            node.images.add(spec.image)
        if warm:
            self._pod_running(pod)
            self._pod_ready(pod, warm=True)
            return
        pod.handles.append(
            self.engine.at(
                startup.running_at, lambda: self._pod_running(pod), priority=Priority.KUBELET
            )
        )
        pod.handles.append(
            self.engine.at(
                startup.ready_at, lambda: self._pod_ready(pod), priority=Priority.KUBELET
            )
        )

    def _pod_running(self, pod: _Pod) -> None:
        pod.running = True
        self._touch()

    def _pod_ready(self, pod: _Pod, *, warm: bool = False) -> None:
        now = self.engine.now
        pod.state = "Ready"
        pod.ready_since = now
        workload = pod.workload
        spec = workload.spec
        if spec.min_ready_s > 0 and not warm:
            pod.handles.append(
                self.engine.after(
                    spec.min_ready_s, lambda: self._pod_available(pod), priority=Priority.KUBELET
                )
            )
        else:
            pod.available = True
        if workload.router is not None:
            # a pod Ready before its program serves takes requests it cannot start yet
            pod.server = ReplicaServer(
                pod.name,
                spec.capacity.concurrency if spec.capacity else 1,
                len(spec.metric_names.buckets),
                max(now, pod.serving_at),
            )
            self._servers[spec.key].append(pod.server)
        if spec.scraped and (spec.gauges or workload.router is not None):
            pod.target = self._pod_target(pod)
            self.scrape.add(pod.target, immediate=warm)
        delay = 0.0 if warm else self.spec.control_plane.endpoint_propagation_s
        pod.handles.append(
            self.engine.after(delay, lambda: self._endpoint_add(pod), priority=Priority.ENDPOINTS)
        )
        self._touch()

    def _pod_available(self, pod: _Pod) -> None:
        pod.available = True
        self._touch()

    def _endpoint_add(self, pod: _Pod) -> None:
        if pod.terminating:
            return
        pod.routable = True
        router = pod.workload.router
        if router is not None and pod.server is not None:
            router.advance(self.engine.now)
            router.add_endpoint(pod.server, self.engine.now)

    def _delete_pod(
        self, pod: _Pod, decision: Decision | None, *, grace_cap: float | None = None
    ) -> None:
        now = self.engine.now
        if pod.terminating:
            return
        pod.deleted_at = now
        self._cluster_version += 1
        for handle in pod.handles:
            self.engine.cancel(handle)
        pod.handles = []
        if decision is not None:
            self._decide(decision)
        else:
            self._touch()
        spec = pod.workload.spec
        self._request_rs_sync(pod.workload)
        if pod.target is not None:
            self.scrape.remove(pod.target)
        if pod.node is None:
            self._pending.pop(pod.key, None)
            self._pod_gone(pod)
            return
        pod.state = "Terminating"
        grace = (
            spec.termination_grace_s
            if grace_cap is None
            else min(spec.termination_grace_s, grace_cap)
        )
        if pod.routable and pod.server is not None:
            self.engine.after(
                self.spec.control_plane.endpoint_propagation_s,
                lambda: self._endpoint_remove(pod, grace),
                priority=Priority.ENDPOINTS,
            )
            return
        if pod.routable:
            self.engine.after(
                self.spec.control_plane.endpoint_propagation_s,
                lambda: setattr(pod, "routable", False),
                priority=Priority.ENDPOINTS,
            )
        exit_after = min(grace, spec.shutdown_s) if pod.running else 0.0
        self.engine.after(exit_after, lambda: self._pod_gone(pod), priority=Priority.KUBELET)

    def _endpoint_remove(self, pod: _Pod, grace: float) -> None:
        now = self.engine.now
        pod.routable = False
        router = pod.workload.router
        server = pod.server
        assert router is not None
        assert server is not None
        assert pod.deleted_at is not None
        router.advance(now)
        router.remove_endpoint(server)
        deleted = pod.deleted_at
        gone = min(
            deleted + grace, max(deleted + pod.workload.spec.shutdown_s, router.drain_end(server))
        )
        server.gone_at = gone
        self.engine.at(max(gone, now), lambda: self._pod_gone(pod), priority=Priority.KUBELET)

    def _pod_gone(self, pod: _Pod) -> None:
        now = self.engine.now
        pod.gone_at = min(pod.gone_at, now)
        pod.state = "Gone"
        self._cluster_version += 1
        workload = pod.workload
        if pod.server is not None and workload.router is not None:
            workload.router.advance(now)
            workload.router.retire(
                pod.server, pod.server.gone_at if math.isfinite(pod.server.gone_at) else now
            )
            self._servers[workload.spec.key].remove(pod.server)
        workload.pods.pop(pod.key, None)
        pod.target = None  # the scrape loop keeps its own reference; no cycle left behind
        pod.handles = []
        node = pod.node
        if node is not None:
            node.remove(pod)
            self._request_schedule()
            if node.state == "deleting" and not node.pods:
                self._finish_node(node)
        self._touch()

    # ------------------------------------------------------------------ ReplicaSet

    def _request_rs_sync(self, workload: _Workload) -> None:
        key = workload.spec.key
        if key not in self._rs_handles:
            self._rs_handles[key] = self.engine.at(
                self.engine.now, lambda: self._rs_sync(workload), priority=Priority.REPLICASET
            )

    def _rs_sync(self, workload: _Workload) -> None:
        self._rs_handles.pop(workload.spec.key, None)
        active = workload.active()
        views = [p.status_view() for p in active]
        decision = manage_replicas(workload.spec_replicas, views, self.engine.now)
        rs_name = f"replicaset/{workload.spec.namespace}/{workload.owner.rsplit('/', 1)[1]}"
        for _ in range(decision.create):
            pod = self._new_pod(workload)
            self._decide(
                Decision(
                    "replicaset", "create", "SuccessfulCreate", rs_name, f"Created pod: {pod.name}"
                )
            )
        if decision.create:
            self._request_schedule()
        by_name = {p.name: p for p in active}
        for name in decision.delete:
            self._delete_pod(
                by_name[name],
                Decision(
                    "replicaset", "delete", "SuccessfulDelete", rs_name, f"Deleted pod: {name}"
                ),
            )

    # ------------------------------------------------------------------ scalers

    def _start_scaler(self, workload: _Workload, scaler: Scaler) -> None:
        period = float(scaler.period_s)
        first = float(scaler.first_sync_s)
        if not (math.isfinite(period) and period > 0) or not (math.isfinite(first) and first >= 0):
            raise ValueError(f"scaler {scaler.name}: period must be > 0 and first sync >= 0")

        def sync(n: int) -> None:
            self._scaler_sync(workload, scaler)
            self.engine.at(first + (n + 1) * period, lambda: sync(n + 1), priority=Priority.SCALER)

        self.engine.at(first, lambda: sync(0), priority=Priority.SCALER)

    def _scale_view(self, workload: _Workload) -> ScaleView:
        active = workload.active()
        return ScaleView(
            now_s=self.engine.now,
            namespace=workload.spec.namespace,
            name=workload.spec.name,
            spec_replicas=workload.spec_replicas,
            status_replicas=len(active),
            ready_replicas=sum(1 for p in active if p.state == "Ready"),
            available_replicas=sum(1 for p in active if p.state == "Ready" and p.available),
            metrics=self.metrics,
        )

    def _scaler_sync(self, workload: _Workload, scaler: Scaler) -> None:
        decision: ScaleDecision = scaler.sync(self._scale_view(workload))
        changed = False
        for name, value in decision.metrics.items():
            if name not in workload.metrics or not _same(workload.metrics[name], value):
                workload.metrics[name] = value
                changed = True
        if decision.desired is not None and decision.desired != workload.desired:
            workload.desired = decision.desired
            changed = True
        if decision.decisions:
            self._decisions.extend(decision.decisions)
            changed = True
        if decision.replicas is not None and decision.replicas != workload.spec_replicas:
            if decision.replicas < 0:
                raise ValueError(f"scaler {scaler.name} asked for {decision.replicas} replicas")
            workload.spec_replicas = decision.replicas
            changed = True
            self._request_rs_sync(workload)
        if changed:
            self._touch()

    # ------------------------------------------------------------------ nodes

    def _new_node(self, pool: PoolSpec) -> _Node:
        self._node_index += 1
        suffix = "".join(self._names.choice(_NAME_CHARS) for _ in range(5))
        node = _Node(pool, self._node_index, f"{pool.name}-{suffix}", self.engine.now)
        self._nodes.append(node)
        self._cluster_version += 1
        self._added[pool.name] += 1
        self._touch()
        return node

    def _node_ready(self, node: _Node, *, initial: bool = False) -> None:
        node.state = "ready"
        node.ready_at = self.engine.now
        self._cluster_version += 1
        if node.gpu_resource is not None and self.spec.prometheus.gpu_exporters:
            node.target = self._exporter_target(node)
            self.scrape.add(node.target, immediate=initial)
        self._request_schedule()
        if not initial:
            self._decide(
                Decision(
                    "kubelet",
                    "node-ready",
                    "NodeReady",
                    f"node/{node.name}",
                    f"pool {node.pool.name}",
                )
            )

    def _start_node_deletion(self, node: _Node) -> None:
        node.state = "deleting"
        self._cluster_version += 1
        node.taints = (
            *node.taints,
            Taint(ca.TO_BE_DELETED_TAINT, str(int(self.engine.now)), "NoSchedule"),
        )
        if self.audit_enabled:
            self._audit_removal(node)
        cap = self.spec.autoscaler.max_graceful_termination_s
        for pod in list(node.pods.values()):
            if not pod.terminating:
                self._delete_pod(
                    pod,
                    Decision(
                        "cluster-autoscaler",
                        "evict",
                        "ScaleDown",
                        f"pod/{pod.key}",
                        f"draining {node.name}",
                    ),
                    grace_cap=cap,
                )
        if not node.pods:
            self._finish_node(node)
        self._touch()

    def _audit_removal(self, node: _Node) -> None:
        others = [n.view() for n in self._nodes if n.state == "ready" and n is not node]
        free = {v.name: dict(v.requested) for v in others}
        for pod in node.pods.values():
            if pod.terminating:
                continue
            req = pod.workload.requirements
            placed = False
            for view in others:
                trial = NodeView(
                    view.name, view.labels, view.taints, view.allocatable, free[view.name]
                )
                if not filter_node(req, trial)[0]:
                    for r, v in req.requests.items():
                        free[view.name][r] = free[view.name].get(r, 0) + v
                    placed = True
                    break
            if not placed:
                self.audit.append(
                    f"{self.engine.now:g}: node {node.name} removed; {pod.key} fits nowhere else"
                )

    def _finish_node(self, node: _Node) -> None:
        self.engine.after(
            node.pool.deletion_s, lambda: self._node_gone(node), priority=Priority.KUBELET
        )

    def _node_gone(self, node: _Node) -> None:
        now = self.engine.now
        node.gone_at = now
        node.state = "gone"
        self._cluster_version += 1
        self._nodes.remove(node)
        self._closed_node_seconds[node.pool.name] += now - node.created_at
        self._removed[node.pool.name] += 1
        if node.target is not None:
            self.scrape.remove(node.target)
        self._decide(
            Decision(
                "cluster-autoscaler",
                "node-gone",
                "NodeDeleted",
                f"node/{node.name}",
                f"pool {node.pool.name}",
            )
        )

    # ------------------------------------------------------------------ cluster autoscaler

    def _ca_signal(self) -> None:
        handle = self._ca_next
        if handle is None or handle.cancelled or handle.time <= self.engine.now:
            return
        self.engine.cancel(handle)
        self._ca_next = self.engine.at(self.engine.now, self._ca_run, priority=Priority.AUTOSCALER)

    def _ca_snapshot(self) -> ca.ClusterSnapshot:
        groups = []
        upcoming: dict[str, int] = {}
        deleting: dict[str, int] = {}
        drains = 0
        for pool in self.spec.pools:
            members = [n for n in self._nodes if n.pool is pool]
            upcoming[pool.name] = sum(1 for n in members if n.state == "provisioning")
            deleting[pool.name] = sum(1 for n in members if n.state == "deleting")
            drains += sum(1 for n in members if n.state == "deleting" and n.pods)
            allocatable = dict(pool.allocatable)
            if not pool.template_has_gpus:
                for name in ca.GPU_RESOURCE_NAMES:
                    allocatable.pop(name, None)
            template = NodeView(
                f"template-{pool.name}",
                {**pool.labels, "doks.digitalocean.com/node-pool": pool.name},
                pool.taints,
                quantities(allocatable),
            )
            groups.append(
                ca.NodeGroup(
                    pool.name,
                    pool.min_nodes,
                    pool.max_nodes,
                    len(members),
                    template,
                    pool.price_per_hour,
                )
            )
        nodes = tuple(
            ca.NodeSnapshot(
                n.view(),
                n.pool.name,
                tuple(n.pods),
                being_deleted=n.state == "deleting",
                created_at=n.created_at,
            )
            for n in self._nodes
            if n.state in ("ready", "deleting")
        )
        pods = {
            p.key: ca.PodSnapshot(
                p.key,
                p.workload.spec.namespace,
                p.workload.owner,
                p.created_at,
                p.workload.requirements,
                p.node.name if p.node is not None else None,
                unschedulable=p.unschedulable,
                local_storage=p.workload.spec.local_storage,
                terminating=p.terminating,
            )
            for w in self.workloads.values()
            for p in w.pods.values()
        }
        return ca.ClusterSnapshot(tuple(groups), nodes, pods, upcoming, deleting, drains)

    def _ca_run(self) -> None:
        now = self.engine.now
        if self._cluster_version == self._ca_seen_version and now < self._ca_valid_until:
            # same snapshot, no time threshold crossed: the iteration would decide the same
            self._ca_next = self.engine.after(
                self._ca_options.scan_interval_s, self._ca_run, priority=Priority.AUTOSCALER
            )
            return
        self.ca_runs += 1
        snapshot = self._ca_snapshot()
        result, self._ca_state = ca.run_once(
            snapshot, self._ca_state, self._ca_options, now, self._ca_rng
        )
        self._ca_seen_version = self._cluster_version
        self._ca_valid_until = (
            -math.inf
            if result.productive
            else ca.next_change(snapshot, self._ca_state, self._ca_options, now)
        )
        for decision in result.decisions:
            self._decide(decision)
        pools = {p.name: p for p in self.spec.pools}
        for pool_name, delta in result.scale_ups:
            pool = pools[pool_name]
            for _ in range(delta):
                node = self._new_node(pool)
                self.engine.after(
                    pool.provisioning_s,
                    functools.partial(self._node_ready, node),
                    priority=Priority.KUBELET,
                )
        by_name = {n.name: n for n in self._nodes}
        for deletion in result.deletions:
            doomed = by_name.get(deletion.node)
            if doomed is not None and doomed.state == "ready":
                self._start_node_deletion(doomed)
        for workload in self.workloads.values():
            for pod in workload.pods.values():
                message = result.not_triggered.get(pod.key, "")
                if message and message != pod.ca_message:
                    self._decide(
                        Decision(
                            "cluster-autoscaler",
                            "hold",
                            "NotTriggerScaleUp",
                            f"pod/{pod.key}",
                            message,
                        )
                    )
                pod.ca_message = message
        delay = 0.0 if result.productive else self._ca_options.scan_interval_s
        self._ca_next = self.engine.after(delay, self._ca_run, priority=Priority.AUTOSCALER)

    # ------------------------------------------------------------------ scraping

    def _setup_ksm(self) -> None:
        prometheus = self.spec.prometheus
        interval = prometheus.ksm_scrape_interval_s or prometheus.scrape_interval_s
        labels = {
            "job": "kube-state-metrics",
            "instance": "10.244.0.5:8080",
            "__address__": "10.244.0.5:8080",
            "__metrics_path__": "/metrics",
            "__scheme__": "http",
        }
        target = ScrapeTarget(
            "kube-state-metrics",
            labels,
            "http://10.244.0.5:8080/metrics",
            interval,
            self._collect_ksm,
            honor_labels=True,
            seed=prometheus.offset_seed,
            names=_KSM_NAMES,
        )
        self.scrape.add(target, immediate=True)

    def _cached(
        self, key: object, build: Callable[[], list[ksm.Series]]
    ) -> list[tuple[SeriesKey, float]]:
        hit = self._ksm_cache.get(key)
        if hit is None:
            hit = [((("__name__", name), *labels), value) for name, labels, value in build()]
            self._ksm_cache[key] = hit
        return hit

    def _collect_ksm(self, now: float) -> tuple[Sequence[SeriesKey], Sequence[float]]:
        last = self._ksm_last
        if last is not None and self._ksm_seen == self._changes:
            return last[1], last[2]  # nothing changed since the last scrape
        self._ksm_seen = self._changes
        allow = self.spec.prometheus.node_label_allowlist
        cache = self._ksm_cache
        parts: list[tuple[object, ...]] = []
        for workload in self.workloads.values():
            spec = workload.spec
            active = workload.active()
            ready = sum(1 for p in active if p.state == "Ready")
            available = sum(1 for p in active if p.state == "Ready" and p.available)
            key: tuple[object, ...] = (
                spec.key,
                workload.spec_replicas,
                len(active),
                ready,
                available,
            )
            parts.append(key)
            if key not in cache:
                status = ksm.DeploymentStatus(
                    spec.namespace,
                    spec.name,
                    workload.spec_replicas,
                    len(active),
                    ready,
                    available,
                    len(active),
                )
                self._cached(key, functools.partial(ksm.deployment_series, status))
            for pod in workload.pods.values():
                key = (pod.uid, pod.running, pod.state, pod.node is not None)
                parts.append(key)
                if key not in cache:
                    node = pod.node
                    info = ksm.PodInfo(
                        spec.namespace,
                        pod.name,
                        pod.uid,
                        "Running" if pod.running else "Pending",
                        pod.state == "Ready",
                        node is not None,
                        node.name if node is not None else "",
                        node.ip if node is not None else "",
                        pod.ip,
                        "ReplicaSet",
                        workload.owner.rsplit("/", 1)[1],
                    )
                    self._cached(key, functools.partial(ksm.pod_series, info))
        for node in self._nodes:
            if node.state not in ("ready", "deleting"):
                continue
            key = ("node", node.name)
            parts.append(key)
            self._cached(key, functools.partial(self._node_series, node, allow))
        signature = tuple(parts)
        last = self._ksm_last
        if last is not None and last[0] == signature:
            return last[1], last[2]
        keys: list[SeriesKey] = []
        values: list[float] = []
        for part in parts:
            for series_key, value in cache[part]:
                keys.append(series_key)
                values.append(value)
        self._ksm_last = (signature, keys, values)
        if len(cache) > 50_000:
            cache.clear()
        return keys, values

    @staticmethod
    def _node_series(node: _Node, allow: tuple[str, ...]) -> list[ksm.Series]:
        info = ksm.NodeInfo(node.name, node.labels, node.ip, f"digitalocean://{node.index}")
        return ksm.node_series(info, allow)

    def _pod_target(self, pod: _Pod) -> ScrapeTarget:
        spec = pod.workload.spec
        address = f"{pod.ip}:{spec.metrics_port}"
        labels = {
            "job": spec.job or spec.service_name,
            "instance": address,
            "namespace": spec.namespace,
            "pod": pod.name,
            "service": spec.service_name,
            "endpoint": spec.metrics_port_name,
            "container": spec.container,
            "__address__": address,
            "__metrics_path__": spec.metrics_path,
            "__scheme__": "http",
        }
        interval = spec.scrape_interval_s or self.spec.prometheus.scrape_interval_s
        names = spec.metric_names
        router = pod.workload.router
        gauge_names = [g for g in pod.gauges if g in spec.gauges]
        keys: list[SeriesKey] = [(("__name__", g),) for g in gauge_names]
        if router is not None:
            keys += [
                (("__name__", names.in_flight),),
                (("__name__", names.queued),),
                (("__name__", names.total),),
            ]
            keys += [
                (("__name__", f"{names.latency}_bucket"), ("le", _format_le(b)))
                for b in (*names.buckets, math.inf)
            ]
            keys += [
                (("__name__", f"{names.latency}_sum"),),
                (("__name__", f"{names.latency}_count"),),
            ]
        fixed_keys = tuple(keys)
        keep = self.scrape.keep
        latencies = keep is None or not keep.isdisjoint(
            {f"{names.latency}_bucket", f"{names.latency}_sum", f"{names.latency}_count"}
        )

        def collect(now: float) -> tuple[Sequence[SeriesKey], Sequence[float]] | None:
            if now >= pod.gone_at or pod.state == "Gone" or now < pod.serving_at:
                return None
            gauges = pod.gauges
            values = [gauges[g] for g in gauge_names]
            server = pod.server
            if router is not None:
                if server is None:
                    return None
                router.advance(now)
                if now >= server.gone_at:
                    return None
                in_flight, queued = server.snapshot(now, router.bounds, latencies=latencies)
                completed = float(server.completed)
                values += (float(in_flight), float(queued), completed)
                values += map(float, itertools.accumulate(server.histogram))
                values += (server.latency_sum, completed)
            return fixed_keys, values

        return ScrapeTarget(
            f"pod/{pod.key}",
            labels,
            f"http://{address}{spec.metrics_path}",
            interval,
            collect,
            honor_labels=spec.honor_labels,
            seed=self.spec.prometheus.offset_seed,
            names={_name_of(key) for key in fixed_keys},
        )

    def _exporter_target(self, node: _Node) -> ScrapeTarget:
        amd = node.gpu_resource == "amd.com/gpu"
        port = 5000 if amd else 9400
        address = f"{node.ip}:{port}"
        job = "amd-device-metrics-exporter" if amd else "nvidia-dcgm-exporter"
        labels = {
            "job": job,
            "instance": address,
            "__address__": address,
            "__metrics_path__": "/metrics",
            "__scheme__": "http",
        }
        prometheus = self.spec.prometheus
        interval = prometheus.exporter_scrape_interval_s or prometheus.scrape_interval_s
        window = prometheus.gpu_util_window_s
        model = node.pool.gpu_model

        def base(i: int) -> list[tuple[str, str]]:
            if amd:
                return [
                    ("__name__", "gpu_gfx_activity"),
                    ("gpu_id", str(i)),
                    ("serial_number", f"{node.index:04d}{i:04d}"),
                    ("card_model", model),
                    ("hostname", node.name),
                ]
            return [
                ("__name__", "DCGM_FI_DEV_GPU_UTIL"),
                ("gpu", str(i)),
                ("UUID", f"GPU-{uuid.UUID(int=(node.index << 16) + i)}"),
                ("device", f"nvidia{i}"),
                ("modelName", model),
                ("Hostname", node.name),
            ]

        key_cache: dict[tuple[str, ...], tuple[SeriesKey, ...]] = {}

        def collect(now: float) -> tuple[Sequence[SeriesKey], Sequence[float]] | None:
            if node.state == "gone":
                return None
            holders = tuple("" if h is None else h.name for h in node.gpu_slots)
            keys = key_cache.get(holders)
            if keys is None:
                built: list[SeriesKey] = []
                for i, holder in enumerate(node.gpu_slots):
                    labels_i = base(i)
                    if holder is not None:
                        spec = holder.workload.spec
                        labels_i += [
                            ("pod", holder.name),
                            ("namespace", spec.namespace),
                            ("container", spec.container),
                        ]
                    built.append(tuple(labels_i))
                keys = tuple(built)
                key_cache.clear()
                key_cache[holders] = keys
            values: list[float] = []
            for holder in node.gpu_slots:
                util = 0.0
                if holder is not None:
                    router = holder.workload.router
                    if router is not None and holder.server is not None:
                        router.advance(now)
                        util = 100.0 * holder.server.utilisation(now, window)
                values.append(util)
            return keys, values

        return ScrapeTarget(
            f"exporter/{node.name}",
            labels,
            f"http://{address}/metrics",
            interval,
            collect,
            honor_labels=True,
            seed=prometheus.offset_seed,
            names=_EXPORTER_NAMES,
        )

    # ------------------------------------------------------------------ timeline

    def _gpus(self) -> dict[str, tuple[int, int]]:
        counts: dict[str, list[int]] = {p.name: [0, 0] for p in self.spec.pools}
        for node in self._nodes:
            entry = counts[node.pool.name]
            entry[0] += len(node.gpu_slots)
            entry[1] += sum(1 for h in node.gpu_slots if h is not None and h.state == "Ready")
        return {name: (c[0], c[1]) for name, c in counts.items()}

    def node_seconds(self, t: float) -> dict[str, float]:
        """Node-seconds per pool from the start up to ``t``."""
        result = dict(self._closed_node_seconds)
        for node in self._nodes:
            result[node.pool.name] += t - node.created_at
        return result

    def cost(self, t: float) -> float:
        """Dollars spent on nodes from the start up to ``t``."""
        prices = {p.name: p.price_per_hour for p in self.spec.pools}
        return sum(prices[pool] * s / 3600.0 for pool, s in self.node_seconds(t).items())

    def _integrate_gpus(self, t: float) -> None:
        dt = t - self._last_record_t
        if dt > 0:
            for pool, (total, busy) in self._gpus_state.items():
                self._gpu_seconds[pool] += total * dt
                self._idle_gpu_seconds[pool] += (total - busy) * dt
        self._last_record_t = t

    def _write_record(self) -> None:
        self._flush = None
        if not self._dirty:
            return
        self._dirty = False
        now = self.engine.now
        self._integrate_gpus(now)
        self._gpus_state = self._gpus()
        states = []
        for workload in self.workloads.values():
            phases: dict[str, int] = {}
            ready = 0
            for pod in workload.pods.values():
                state = pod.state
                phases[state] = phases.get(state, 0) + 1
                if state == "Ready":
                    ready += 1
            status = len(workload.pods) - phases.get("Terminating", 0) - phases.get("Gone", 0)
            phases.pop("Gone", None)
            states.append(
                WorkloadState(
                    workload.spec.key,
                    workload.spec_replicas,
                    status,
                    ready,
                    workload.desired,
                    phases,
                    dict(workload.metrics),
                )
            )
        nodes: dict[str, dict[str, int]] = {}
        for node in self._nodes:
            pool_states = nodes.setdefault(node.pool.name, {})
            pool_states[node.state] = pool_states.get(node.state, 0) + 1
        record = Record(
            t=now,
            workloads=tuple(states),
            nodes=nodes,
            cost_usd=self.cost(now),
            load=dict(self._load_values),
            decisions=tuple(self._decisions),
            gpus={
                pool: {"total": total, "busy": busy}
                for pool, (total, busy) in self._gpus_state.items()
                if total
            },
        )
        self._decisions = []
        self.records.append(record)

    # ------------------------------------------------------------------ end of run

    def finish(self, until: float) -> SimulationResult:
        """Account the run up to ``until`` (the engine must be there) and return the result."""
        if self._dirty:
            self._write_record()
        self._integrate_gpus(until)
        logs: dict[str, RequestLog] = {}
        for workload in self.workloads.values():
            if workload.router is not None:
                logs[workload.spec.key] = workload.router.finish(
                    until, self._servers[workload.spec.key]
                )
        pools = {p.name: p for p in self.spec.pools}
        node_seconds = self.node_seconds(until)
        header = Header(
            world="simulate",
            pools={
                p.name: {"price_per_hour": p.price_per_hour, "gpus_per_node": p.gpus_per_node}
                for p in self.spec.pools
            },
            meta={"seed": self.seed},
        )
        return SimulationResult(
            header=header,
            records=tuple(self.records),
            requests=logs,
            cost=CostReport(
                node_seconds=node_seconds,
                dollars={k: pools[k].price_per_hour * v / 3600.0 for k, v in node_seconds.items()},
                gpu_seconds=dict(self._gpu_seconds),
                idle_gpu_seconds=dict(self._idle_gpu_seconds),
                nodes_added=dict(self._added),
                nodes_removed=dict(self._removed),
            ),
            until=until,
            events=0,
            scrapes=self.scrape.scrapes,
            audit=tuple(self.audit),
        )

    # ------------------------------------------------------------------ inspection

    def pod_states(self) -> list[tuple[str, str, str | None]]:
        """(pod key, state, node) of every pod not gone (for tests)."""
        return [
            (p.key, p.state, p.node.name if p.node is not None else None)
            for w in self.workloads.values()
            for p in w.pods.values()
        ]
