"""The cluster autoscaler's loop in the simulated cluster: when it runs, the snapshot it
is given, and how its decisions are applied. Pure.

The decisions themselves are :func:`gpuscale.controllers.cluster_autoscaler.run_once`'s.
The loop follows kubernetes/autoscaler ``cluster-autoscaler/main.go`` (``run``: wait,
then ``RunOnce``) and ``loop/trigger.go`` (``LoopTrigger.Wait``): the autoscaler is a
long-running process, so at ``t = 0`` its loop stands at a phase of its own within a
scan interval; each ``RunOnce`` decides on the snapshot at its start and takes the
run's ``autoscaler_run_once`` latency; then ``Wait`` sleeps a scan interval, returns at
once after a productive iteration, or when a pod turns unschedulable (the pod
observer's signal; one that comes during ``RunOnce`` waits in the channel's buffer and
starts the next iteration as soon as this one ends). An iteration over the same cluster
before any of the model's time thresholds is crossed would decide the same, so it is
skipped (its duration still drawn, so skipping changes no later draw).
"""

from __future__ import annotations

import functools
import math
import random
from typing import TYPE_CHECKING

from gpuscale.controllers import cluster_autoscaler as ca
from gpuscale.controllers.scheduler import NodeView, quantities
from gpuscale.sim.engine import Handle, Priority
from gpuscale.sim.timing import LoopClock
from gpuscale.timeline import Decision

if TYPE_CHECKING:
    from gpuscale.sim.world import World

__all__ = ["AutoscalerLoop"]


class AutoscalerLoop:
    """The cluster autoscaler over one world, with the model's state between runs."""

    __slots__ = (
        "_busy_until",
        "_clock",
        "_next",
        "_rng",
        "_seen_version",
        "_state",
        "_templates",
        "_valid_until",
        "_world",
        "options",
        "runs",
    )

    def __init__(self, world: World, rng: random.Random) -> None:
        self._world = world
        self._rng = rng
        self._state = ca.AutoscalerState()
        self.options = world.spec.autoscaler
        self._next: Handle | None = None
        self._seen_version = -1
        self._valid_until = -math.inf
        self._clock = LoopClock(world.spec.timing, world.seed, "cluster-autoscaler", "")
        self._busy_until = -math.inf
        self._templates: dict[str, NodeView] = {}
        """Each pool's template node, built at the first snapshot (a pool's spec and the
        provider's labels do not change during a run)."""
        self.runs = 0
        """Iterations run (skipped ones not counted)."""

    def start(self) -> None:
        """The first iteration, at the loop's phase (0 with exact timing)."""
        first = self._clock.phase(self.options.scan_interval_s)
        self._next = self._world.engine.at(first, self.run, priority=Priority.AUTOSCALER)

    def signal(self) -> None:
        """A pod turned unschedulable: run as soon as ``RunOnce`` is not running, rather
        than at the next scan."""
        engine = self._world.engine
        handle = self._next
        when = max(engine.now, self._busy_until)
        if handle is None or handle.cancelled or handle.time <= when:
            return
        engine.cancel(handle)
        self._next = engine.at(when, self.run, priority=Priority.AUTOSCALER)

    def snapshot(self) -> ca.ClusterSnapshot:
        """The cluster as the autoscaler's informers see it now."""
        world = self._world
        provider = world.provider
        groups = []
        upcoming: dict[str, int] = {}
        deleting: dict[str, int] = {}
        drains = 0
        for pool in world.spec.pools:
            members = [n for n in world.nodes if n.pool is pool]
            upcoming[pool.name] = sum(1 for n in members if n.state == "provisioning")
            deleting[pool.name] = sum(1 for n in members if n.state == "deleting")
            drains += sum(1 for n in members if n.state == "deleting" and n.pods)
            template = self._templates.get(pool.name)
            if template is None:
                allocatable = dict(pool.allocatable)
                if not pool.template_has_gpus:
                    for name in ca.GPU_RESOURCE_NAMES:
                        allocatable.pop(name, None)
                template = self._templates[pool.name] = NodeView(
                    f"template-{pool.name}",
                    provider.template_labels(dict(pool.labels), pool.name),
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
            for n in world.nodes
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
            for w in world.workloads.values()
            for p in w.pods.values()
        }
        return ca.ClusterSnapshot(tuple(groups), nodes, pods, upcoming, deleting, drains)

    def run(self) -> None:
        """One iteration: decide on a snapshot, then add, drain and report."""
        world = self._world
        engine = world.engine
        options = self.options
        now = engine.now
        took = self._clock.latency(world.spec.timing.autoscaler_run_once_s)
        self._busy_until = now + took
        if world.cluster_version == self._seen_version and now < self._valid_until:
            # same snapshot, no time threshold crossed: the iteration would decide the same
            self._next = engine.after(
                took + options.scan_interval_s, self.run, priority=Priority.AUTOSCALER
            )
            return
        self.runs += 1
        snapshot = self.snapshot()
        result, self._state = ca.run_once(snapshot, self._state, options, now, self._rng)
        self._seen_version = world.cluster_version
        self._valid_until = (
            -math.inf if result.productive else ca.next_change(snapshot, self._state, options, now)
        )
        for decision in result.decisions:
            world.recorder.decide(decision)
        pools = {p.name: p for p in world.spec.pools}
        for pool_name, delta in result.scale_ups:
            pool = pools[pool_name]
            for _ in range(delta):
                node = world.new_node(pool)
                engine.after(
                    pool.provisioning_s,
                    functools.partial(world.node_ready, node),
                    priority=Priority.KUBELET,
                )
        by_name = {n.name: n for n in world.nodes}
        for deletion in result.deletions:
            doomed = by_name.get(deletion.node)
            if doomed is not None and doomed.state == "ready":
                world.start_node_deletion(doomed)
        for workload in world.workloads.values():
            for pod in workload.pods.values():
                message = result.not_triggered.get(pod.key, "")
                if message and message != pod.ca_message:
                    world.recorder.decide(
                        Decision(
                            "cluster-autoscaler",
                            "hold",
                            "NotTriggerScaleUp",
                            f"pod/{pod.key}",
                            message,
                        )
                    )
                pod.ca_message = message
        delay = took if result.productive else took + options.scan_interval_s
        self._next = engine.after(delay, self.run, priority=Priority.AUTOSCALER)
