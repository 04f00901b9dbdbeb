"""The simulated cluster and the Kubernetes loops that move its pods and nodes — the
ReplicaSet controller, the scheduler, the kubelet and endpoints. Pure: it runs inside an
:class:`~gpuscale.sim.engine.EventLoop` and reads no clock.

The rest lives beside it, one concern a module: the objects (``sim/cluster.py``), what
Prometheus scrapes (``sim/targets.py``), the load (``sim/loading.py``), the scalers'
syncs (``sim/scaler_loop.py``), the cluster autoscaler's loop
(``sim/autoscaler_loop.py``), the cost and GPU-time books (``sim/ledger.py``), the
timeline (``sim/recorder.py``) and what the provider writes on its nodes
(``sim/provider.py``).

Each loop calls the controller model it follows (``gpuscale.controllers``) with a
snapshot and applies the decision; this module is only the plumbing between them, with
these timings (see ``docs/simulator.md``):

- a scale subresource write reaches the ReplicaSet at once; pods are created at once
  and scheduled in the same instant (the scheduler retries pending pods whenever a node
  becomes Ready or resources are freed);
- a bound pod reaches its kubelet, which creates its sandbox (the run's pod start
  latency, ``gpuscale.sim.timing``), pulls its image unless its node already has it,
  starts it, and it turns Ready after the start-up time; Services route to it
  ``endpoint_propagation_s`` later;
- a deleted pod leaves ``status.replicas`` at once, stops receiving traffic after the
  propagation delay and is gone when its process exits: at once for a gauge app with no
  shutdown time, after its requests drain for a server — at most the grace period;
- the cluster autoscaler runs a scan interval after its last ``RunOnce`` ended,
  immediately again after a productive iteration, and at once when a pod turns
  unschedulable (``loop/trigger.go``), from a phase of its own; nodes it adds cost from
  that moment and are Ready after the pool's provisioning time; nodes it removes are
  tainted, drained, and gone after the pool's deletion time;
- kube-state-metrics reflects the objects as they are at its scrape;
- the HPA and KEDA loops drift as upstream's do (``sim/scaler_loop.py``);
- everything at the same instant happens in the :class:`~gpuscale.sim.engine.Priority`
  order, and randomness comes from streams derived from the run's seed (the latencies
  from streams of their own per loop and object, ``gpuscale.sim.timing``).
"""

from __future__ import annotations

import math
import random
import uuid
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING

from gpuscale.controllers import cluster_autoscaler as ca
from gpuscale.controllers.kubelet import pod_startup
from gpuscale.controllers.replicaset import manage_replicas
from gpuscale.controllers.scheduler import (
    FilterCache,
    NodeView,
    PodRequirements,
    ScheduleResult,
    filter_node,
    schedule_pod,
)
from gpuscale.kube import Taint
from gpuscale.sim.autoscaler_loop import AutoscalerLoop
from gpuscale.sim.cluster import NAME_CHARS, Node, Pod, Workload
from gpuscale.sim.engine import EventLoop, Handle, Priority
from gpuscale.sim.ledger import CostReport, Ledger
from gpuscale.sim.loading import LoadDriver, LoadSpec
from gpuscale.sim.metrics import MetricsBackend
from gpuscale.sim.provider import PROVIDERS
from gpuscale.sim.recorder import Recorder, SimulationResult, header_of
from gpuscale.sim.scaler_loop import start_scaler
from gpuscale.sim.scalers import Scaler
from gpuscale.sim.scrape import ScrapeManager
from gpuscale.sim.specs import SimPool, SimulationSpec
from gpuscale.sim.targets import EXPORTER_NAMES, KubeStateMetrics, exporter_target, pod_target
from gpuscale.sim.timing import clock_phase
from gpuscale.timeline import Decision, Record

if TYPE_CHECKING:
    from gpuscale.sim.requests import ReplicaServer, RequestLog
    from gpuscale.sim.serving import EngineServer

__all__ = ["CostReport", "LoadSpec", "SimulationResult", "World"]


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
        engine: EventLoop | None = None,
        scrape_only: Collection[str] | None = None,
    ) -> None:
        self.spec = spec
        self.metrics = metrics
        self.seed = seed
        self.engine = engine or EventLoop()
        self.audit_enabled = audit
        self.audit: list[str] = []
        self.provider = PROVIDERS[spec.provider]
        self.clock_phase = clock_phase(spec.timing, seed)
        """The sub-second part of the wall clock at ``t = 0`` (``gpuscale.sim.timing``)."""
        root = random.Random(seed)
        self._sched_rng = random.Random(root.getrandbits(64))
        ca_rng = random.Random(root.getrandbits(64))
        self._names = random.Random(root.getrandbits(64))
        lb_rng = random.Random(root.getrandbits(64))
        load_seed = root.getrandbits(63)
        router_seed = root.getrandbits(63)
        self.recorder = Recorder(self)
        self.ledger = Ledger(spec.pools)
        self.load_values: dict[str, float] = {}
        """What the load asks for now, by name (the timeline's ``load``)."""
        self.nodes: list[Node] = []
        self._node_index = 0
        self._pending: dict[str, Pod] = {}
        self._schedule_handle: Handle | None = None
        self._rs_handles: dict[str, Handle] = {}
        self.autoscaler = AutoscalerLoop(self, ca_rng)
        self.cluster_version = 0
        """Counts every change the cluster autoscaler's snapshot would show."""
        self.servers: dict[str, list[ReplicaServer | EngineServer]] = {}
        """Per workload, its replicas' servers. A workload's router and its servers are of
        one kind (queue or engine), which mypy cannot see: hence the ``arg-type`` ignores
        where the world hands a pod's server to its router."""
        self.scrape = ScrapeManager(
            self.engine, metrics, refresh_s=spec.prometheus.discovery_refresh_s, keep=scrape_only
        )
        keep = self.scrape.keep
        # request timing for GPU utilisation is kept only when an exporter is scraped
        track_busy = keep is None or "up" in keep or not keep.isdisjoint(EXPORTER_NAMES)

        self.workloads: dict[str, Workload] = {}
        interned: dict[tuple[object, ...], PodRequirements] = {}
        for w_spec in spec.workloads:
            template_hash = "".join(self._names.choice(NAME_CHARS) for _ in range(10))
            workload = Workload(w_spec, template_hash)
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
        self.load = LoadDriver(
            self,
            load or LoadSpec(),
            load_seed=load_seed,
            router_seed=router_seed,
            lb_rng=lb_rng,
            track_busy=track_busy,
        )
        for pool in spec.pools:
            for _ in range(pool.start_nodes):
                node = self.new_node(pool)
                self.node_ready(node, initial=True)
        self.ledger.added = dict.fromkeys(self.ledger.added, 0)
        for workload in self.workloads.values():
            for _ in range(workload.spec_replicas):
                pod = self._new_pod(workload)
                if warm_start:
                    self._warm_place(pod)
        self.ksm = KubeStateMetrics(self)
        if self._pending:
            self._request_schedule()
        for name, scaler_list in (scalers or {}).items():
            target = self.workload(name)
            for scaler in scaler_list:
                start_scaler(self, target, scaler)
        if spec.autoscaler_enabled:
            self.autoscaler.start()
        self.recorder.touch()

    @property
    def records(self) -> list[Record]:
        """The timeline so far."""
        return self.recorder.records

    def workload(self, name: str) -> Workload:
        """The workload called ``name`` (its name or ``namespace/name``)."""
        for workload in self.workloads.values():
            if name in (workload.spec.name, workload.spec.key):
                return workload
        raise KeyError(f"no workload named {name!r}")

    def _uid(self) -> str:
        return str(uuid.UUID(int=self._names.getrandbits(128), version=4))

    # ------------------------------------------------------------------ pods

    def _new_pod(self, workload: Workload) -> Pod:
        suffix = "".join(self._names.choice(NAME_CHARS) for _ in range(5))
        name = f"{workload.spec.name}-{workload.template_hash}-{suffix}"
        pod = Pod(workload, name, self._uid(), self.engine.now)
        for gauge in workload.spec.gauges:
            pod.gauges[gauge] = 0.0
        workload.pods[pod.key] = pod
        self._pod_changed(pod)
        self._pending[pod.key] = pod
        self.cluster_version += 1
        self.recorder.touch()
        return pod

    def _pod_changed(self, pod: Pod) -> None:
        """A pod was added, changed state or went: what the timeline shows of its
        workload and of the GPUs must be taken again (``Workload.shown``, the ledger)."""
        pod.workload.shown = None
        self.ledger.gpus_stale = True

    def _warm_place(self, pod: Pod) -> None:
        views = [n.view() for n in self.nodes if n.state == "ready"]
        result = schedule_pod(pod.workload.requirements, views, self._sched_rng)
        if result.node is None:
            return
        node = next(n for n in self.nodes if n.name == result.node)
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
        nodes = [n for n in self.nodes if n.state in ("ready", "deleting")]
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
                self.cluster_version += 1
            if result.message != pod.message:
                pod.message = result.message
                self.recorder.decide(
                    Decision(
                        "scheduler", "fail", "FailedScheduling", f"pod/{pod.key}", result.message
                    )
                )
            if newly:
                self.autoscaler.signal()

    def _bind(self, pod: Pod, node: Node, *, warm: bool = False) -> None:
        now = self.engine.now
        if self.audit_enabled:
            reasons, _ = filter_node(pod.workload.requirements, node.view())
            if reasons:
                self.audit.append(f"{now:g}: {pod.key} bound to {node.name} that {reasons}")
        self._pending.pop(pod.key, None)
        self.cluster_version += 1
        pod.node = node
        pod.unschedulable = False
        pod.message = ""
        pod.ca_message = ""
        pod.ip = f"10.244.{node.index}.{len(node.pods) + 10}"
        node.add(pod)
        pod.state = "Starting"
        self._pod_changed(pod)
        spec = pod.workload.spec
        if not warm:
            self.recorder.decide(
                Decision("scheduler", "bind", "Scheduled", f"pod/{pod.key}", f"node {node.name}")
            )
        else:
            self.recorder.touch()
        timing = self.spec.timing
        # the kubelet sees the binding and sets up the sandbox before anything is pulled
        reached = (
            now
            if warm
            else now + timing.draw_once(timing.pod_start_s, self.seed, "pod-start", pod.uid)
        )
        startup = pod_startup(
            reached,
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

    def _pod_running(self, pod: Pod) -> None:
        pod.running = True
        self.recorder.touch()

    def _pod_ready(self, pod: Pod, *, warm: bool = False) -> None:
        now = self.engine.now
        pod.state = "Ready"
        pod.ready_since = now
        workload = pod.workload
        self._pod_changed(pod)
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
            pod.server = workload.router.new_server(pod.name, max(now, pod.serving_at))
            self.servers[spec.key].append(pod.server)
        if spec.scraped and (spec.gauges or workload.router is not None):
            pod.target = pod_target(self, pod)
            self.scrape.add(pod.target, immediate=warm)
        delay = 0.0 if warm else self.spec.control_plane.endpoint_propagation_s
        pod.handles.append(
            self.engine.after(delay, lambda: self._endpoint_add(pod), priority=Priority.ENDPOINTS)
        )
        self.recorder.touch()

    def _pod_available(self, pod: Pod) -> None:
        pod.available = True
        self.recorder.touch()

    def _endpoint_add(self, pod: Pod) -> None:
        if pod.terminating:
            return
        pod.routable = True
        router = pod.workload.router
        if router is not None and pod.server is not None:
            router.advance(self.engine.now)
            router.add_endpoint(pod.server, self.engine.now)  # type: ignore[arg-type]

    def _delete_pod(
        self, pod: Pod, decision: Decision | None, *, grace_cap: float | None = None
    ) -> None:
        now = self.engine.now
        if pod.terminating:
            return
        pod.deleted_at = now
        self.cluster_version += 1
        for handle in pod.handles:
            self.engine.cancel(handle)
        pod.handles = []
        if decision is not None:
            self.recorder.decide(decision)
        else:
            self.recorder.touch()
        spec = pod.workload.spec
        self.request_rs_sync(pod.workload)
        if pod.target is not None:
            self.scrape.remove(pod.target)
        if pod.node is None:
            self._pending.pop(pod.key, None)
            self._pod_gone(pod)
            return
        pod.state = "Terminating"
        self._pod_changed(pod)
        router = pod.workload.router
        if router is not None and pod.server is not None:
            # SIGTERM now: a queue replica drains, a vLLM engine aborts what it holds
            router.advance(now)
            router.terminate(pod.server, now)  # type: ignore[arg-type]
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

    def _endpoint_remove(self, pod: Pod, grace: float) -> None:
        now = self.engine.now
        pod.routable = False
        router = pod.workload.router
        server = pod.server
        assert router is not None
        assert server is not None
        assert pod.deleted_at is not None
        router.advance(now)
        router.remove_endpoint(server)  # type: ignore[arg-type]
        deleted = pod.deleted_at
        gone = min(
            deleted + grace,
            max(deleted + pod.workload.spec.shutdown_s, router.drain_end(server)),  # type: ignore[arg-type]
        )
        server.gone_at = gone
        self.engine.at(max(gone, now), lambda: self._pod_gone(pod), priority=Priority.KUBELET)

    def _pod_gone(self, pod: Pod) -> None:
        now = self.engine.now
        pod.gone_at = min(pod.gone_at, now)
        pod.state = "Gone"
        self.cluster_version += 1
        workload = pod.workload
        self._pod_changed(pod)
        if pod.server is not None and workload.router is not None:
            workload.router.advance(now)
            gone_at = pod.server.gone_at if math.isfinite(pod.server.gone_at) else now
            workload.router.retire(pod.server, gone_at)  # type: ignore[arg-type]
            self.servers[workload.spec.key].remove(pod.server)
        workload.pods.pop(pod.key, None)
        pod.target = None  # the scrape loop keeps its own reference; no cycle left behind
        pod.handles = []
        node = pod.node
        if node is not None:
            node.remove(pod)
            self._request_schedule()
            if node.state == "deleting" and not node.pods:
                self._finish_node(node)
        self.recorder.touch()

    # ------------------------------------------------------------------ ReplicaSet

    def request_rs_sync(self, workload: Workload) -> None:
        key = workload.spec.key
        if key not in self._rs_handles:
            self._rs_handles[key] = self.engine.at(
                self.engine.now, lambda: self._rs_sync(workload), priority=Priority.REPLICASET
            )

    def _rs_sync(self, workload: Workload) -> None:
        self._rs_handles.pop(workload.spec.key, None)
        active = workload.active()
        views = [p.status_view() for p in active]
        decision = manage_replicas(workload.spec_replicas, views, self.engine.now)
        rs_name = f"replicaset/{workload.spec.namespace}/{workload.owner.rsplit('/', 1)[1]}"
        for _ in range(decision.create):
            pod = self._new_pod(workload)
            self.recorder.decide(
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

    # ------------------------------------------------------------------ nodes

    def new_node(self, pool: SimPool) -> Node:
        self._node_index += 1
        suffix = "".join(self._names.choice(NAME_CHARS) for _ in range(5))
        name = f"{pool.name}-{suffix}"
        labels = self.provider.node_labels(dict(pool.labels), pool.name, name)
        node = Node(pool, self._node_index, name, self.engine.now, labels)
        self.nodes.append(node)
        self.recorder.nodes_shown = None
        self.cluster_version += 1
        self.ledger.node_added(node)
        self.recorder.touch()
        return node

    def node_ready(self, node: Node, *, initial: bool = False) -> None:
        node.state = "ready"
        self.recorder.nodes_shown = None
        node.ready_at = self.engine.now
        self.cluster_version += 1
        if node.gpu_resource is not None and self.spec.prometheus.gpu_exporters:
            node.target = exporter_target(self, node)
            self.scrape.add(node.target, immediate=initial)
        self._request_schedule()
        if not initial:
            self.recorder.decide(
                Decision(
                    "kubelet",
                    "node-ready",
                    "NodeReady",
                    f"node/{node.name}",
                    f"pool {node.pool.name}",
                )
            )

    def start_node_deletion(self, node: Node) -> None:
        node.state = "deleting"
        self.recorder.nodes_shown = None
        self.cluster_version += 1
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
        self.recorder.touch()

    def _audit_removal(self, node: Node) -> None:
        others = [n.view() for n in self.nodes if n.state == "ready" and n is not node]
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

    def _finish_node(self, node: Node) -> None:
        self.engine.after(
            node.pool.deletion_s, lambda: self._node_gone(node), priority=Priority.KUBELET
        )

    def _node_gone(self, node: Node) -> None:
        now = self.engine.now
        node.gone_at = now
        node.state = "gone"
        self.recorder.nodes_shown = None
        self.cluster_version += 1
        self.nodes.remove(node)
        self.ledger.node_gone(node, now)
        if node.target is not None:
            self.scrape.remove(node.target)
        self.recorder.decide(
            Decision(
                "cluster-autoscaler",
                "node-gone",
                "NodeDeleted",
                f"node/{node.name}",
                f"pool {node.pool.name}",
            )
        )

    def finish(self, until: float) -> SimulationResult:
        """Account the run up to ``until`` (the engine must be there) and return the result."""
        self.recorder.flush()
        self.ledger.integrate_gpus(until)
        logs: dict[str, RequestLog] = {}
        for workload in self.workloads.values():
            if workload.router is not None:
                servers = self.servers[workload.spec.key]
                logs[workload.spec.key] = workload.router.finish(until, servers)  # type: ignore[arg-type]
        return SimulationResult(
            header=header_of(self.spec, self.seed),
            records=tuple(self.recorder.records),
            requests=logs,
            cost=self.ledger.report(until),
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
