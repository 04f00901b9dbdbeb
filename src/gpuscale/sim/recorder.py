"""The timeline of a run: one :class:`~gpuscale.timeline.Record` per instant at which
something changed, and the run's one :class:`~gpuscale.timeline.Header`. Pure.

A change marks the recorder dirty and schedules one write at the current instant at
:attr:`~gpuscale.sim.engine.Priority.TIMELINE`, after everything else due then, so a
record shows the instant's outcome, not its steps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuscale.sim.engine import Handle, Priority
from gpuscale.sim.ledger import CostReport
from gpuscale.sim.specs import SimulationSpec
from gpuscale.timeline import Decision, Header, Record, WorkloadState

if TYPE_CHECKING:
    from collections.abc import Mapping

    from gpuscale.sim.cluster import Workload
    from gpuscale.sim.requests import RequestLog
    from gpuscale.sim.world import World

__all__ = ["Recorder", "SimulationResult", "header_of"]


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


def header_of(spec: SimulationSpec, seed: int) -> Header:
    """The header of a simulated run: its pools' prices and GPUs, and the seed."""
    return Header(
        world="simulate",
        pools={
            p.name: {"price_per_hour": p.price_per_hour, "gpus_per_node": p.gpus_per_node}
            for p in spec.pools
        },
        meta={"seed": seed},
    )


class Recorder:
    """Collects decisions and writes a record whenever the world changed."""

    __slots__ = (
        "_dirty",
        "_flush",
        "_gpus_shown",
        "_load_shown",
        "_world",
        "changes",
        "decisions",
        "nodes_shown",
        "records",
    )

    def __init__(self, world: World) -> None:
        self._world = world
        self.records: list[Record] = []
        self.decisions: list[Decision] = []
        self._dirty = False
        self.changes = 0
        """Counts every change the timeline sees (which includes every change of what
        kube-state-metrics reports)."""
        self._flush: Handle | None = None
        self._gpus_shown: dict[str, dict[str, int]] = {}
        self._load_shown: dict[str, float] = {}
        self.nodes_shown: dict[str, dict[str, int]] | None = None
        """Nodes per pool and state as last recorded; None once a node came, went or
        changed state (the world sets it), so it is counted again only then."""

    def touch(self) -> None:
        """Something changed: write a record at this instant."""
        self._dirty = True
        self.changes += 1
        if self._flush is None:
            engine = self._world.engine
            self._flush = engine.at(engine.now, self.write, priority=Priority.TIMELINE)

    def decide(self, decision: Decision) -> None:
        """A controller decided something: it goes into the next record."""
        self.decisions.append(decision)
        self.touch()

    def flush(self) -> None:
        """Write the pending record now, if any (at the end of a run)."""
        if self._dirty:
            self.write()

    def write(self) -> None:
        self._flush = None
        if not self._dirty:
            return
        self._dirty = False
        world = self._world
        now = world.engine.now
        ledger = world.ledger
        ledger.integrate_gpus(now)
        # the GPUs held by Ready pods change only with a node or a pod (both mark the
        # ledger stale), and a workload's state only with what marks it: otherwise the
        # last ones stand
        if ledger.gpus_stale:
            ledger.observe_gpus(world.nodes)
            self._gpus_shown = {
                pool: {"total": total, "busy": busy}
                for pool, (total, busy) in ledger.gpus_state.items()
                if total
            }
        # records share what did not change (fewer objects for the collector to walk)
        if world.load_values != self._load_shown:
            self._load_shown = dict(world.load_values)
        states = tuple([w.shown or _workload_state(w) for w in world.workloads.values()])
        nodes = self.nodes_shown
        if nodes is None:
            nodes = {}
            for node in world.nodes:
                pool_states = nodes.setdefault(node.pool.name, {})
                pool_states[node.state] = pool_states.get(node.state, 0) + 1
            self.nodes_shown = nodes
        record = Record(
            t=now,
            workloads=states,
            nodes=nodes,
            cost_usd=ledger.cost(now),
            load=self._load_shown,
            decisions=tuple(self.decisions),
            gpus=self._gpus_shown,
        )
        self.decisions = []
        self.records.append(record)


def _workload_state(workload: Workload) -> WorkloadState:
    """What the timeline shows of ``workload`` now, kept as its ``shown`` state. Its pod
    counts are the last state's dict while they are the same counts in the same order
    (ints, so equal items are written alike): a sync that changes a metric or the desired
    count leaves the pods as they were, and a week's records then share one dict."""
    phases: dict[str, int] = {}
    ready = 0
    for pod in workload.pods.values():
        phase = pod.state
        phases[phase] = phases.get(phase, 0) + 1
        if phase == "Ready":
            ready += 1
    status = len(workload.pods) - phases.get("Terminating", 0) - phases.get("Gone", 0)
    phases.pop("Gone", None)
    was = workload.was_shown
    if was is not None and list(was.pods.items()) == list(phases.items()):
        phases = was.pods  # type: ignore[assignment]
    state = workload.shown = workload.was_shown = WorkloadState(
        workload.spec.key,
        workload.spec_replicas,
        status,
        ready,
        workload.desired,
        phases,
        dict(workload.metrics),
    )
    return state
