"""The timeline of a run: one :class:`~gpuscale.timeline.Record` per instant at which
something changed, and the run's one :class:`~gpuscale.timeline.Header`. Pure.

A change marks the recorder dirty and schedules one write at the current instant at
:attr:`~gpuscale.sim.engine.Priority.TIMELINE`, after everything else due then, so a
record shows the instant's outcome, not its steps.

A record shares with the one before it every part that is the same (a workload's state,
its phases or metrics, the node counts, the load, the GPUs), compared value for value and
type for type and in the same order (``1`` and ``1.0``, ``0.0`` and ``-0.0`` are not the
same: they are written differently). Records are read, never changed, so sharing changes
nothing a reader sees; the 55,000 records of a week of the conversation trace took 60 MB
without it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuscale.sim.engine import Handle, Priority
from gpuscale.sim.ledger import CostReport
from gpuscale.sim.requests import RequestLog
from gpuscale.sim.specs import SimulationSpec
from gpuscale.timeline import Decision, Header, Record, WorkloadState

if TYPE_CHECKING:
    from collections.abc import Mapping

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

    __slots__ = ("_dirty", "_flush", "_last", "_world", "changes", "decisions", "records")

    def __init__(self, world: World) -> None:
        self._world = world
        self.records: list[Record] = []
        self.decisions: list[Decision] = []
        self._dirty = False
        self.changes = 0
        """Counts every change the timeline sees (which includes every change of what
        kube-state-metrics reports)."""
        self._flush: Handle | None = None
        self._last: Record | None = None

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
        ledger.observe_gpus(world.nodes)
        last = self._last
        before = last.workloads if last is not None and last.workloads else ()
        states = []
        for index, workload in enumerate(world.workloads.values()):
            phases: dict[str, int] = {}
            ready = 0
            for pod in workload.pods.values():
                state = pod.state
                phases[state] = phases.get(state, 0) + 1
                if state == "Ready":
                    ready += 1
            status = len(workload.pods) - phases.get("Terminating", 0) - phases.get("Gone", 0)
            phases.pop("Gone", None)
            metrics = workload.metrics
            was = before[index] if index < len(before) else None
            if was is not None and was.name == workload.spec.key:
                same_phases = _same_counts(was.pods, phases)
                same_metrics = _same_values(was.metrics, metrics)
                if (
                    same_phases
                    and same_metrics
                    and was.spec == workload.spec_replicas
                    and was.status == status
                    and was.ready == ready
                    and _same_value(was.desired, workload.desired)
                ):
                    states.append(was)
                    continue
                if same_phases:
                    phases = was.pods  # type: ignore[assignment]
                kept = was.metrics if same_metrics else dict(metrics)
            else:
                kept = dict(metrics)
            states.append(
                WorkloadState(
                    workload.spec.key,
                    workload.spec_replicas,
                    status,
                    ready,
                    workload.desired,
                    phases,
                    kept,
                )
            )
        nodes: dict[str, dict[str, int]] = {}
        for node in world.nodes:
            pool_states = nodes.setdefault(node.pool.name, {})
            pool_states[node.state] = pool_states.get(node.state, 0) + 1
        gpus = {
            pool: {"total": total, "busy": busy}
            for pool, (total, busy) in ledger.gpus_state.items()
            if total
        }
        load = world.load_values
        record = Record(
            t=now,
            workloads=tuple(states),
            nodes=last.nodes if last is not None and _same_nested(last.nodes, nodes) else nodes,
            cost_usd=ledger.cost(world.nodes, now),
            load=last.load if last is not None and _same_values(last.load, load) else dict(load),
            decisions=tuple(self.decisions),
            gpus=last.gpus if last is not None and _same_nested(last.gpus, gpus) else gpus,
        )
        self._last = record
        self.decisions = []
        self.records.append(record)


def _same_value(a: object, b: object) -> bool:
    """Equal and written alike: the same type, and for floats the same sign of zero
    (a NaN is the same only as itself)."""
    if a is b:
        return True
    if type(a) is not type(b) or a != b:
        return False
    if isinstance(a, float) and isinstance(b, float) and a == 0.0:
        return math.copysign(1.0, a) == math.copysign(1.0, b)
    return True


def _same_values(a: Mapping[str, object], b: Mapping[str, object]) -> bool:
    """The same keys in the same order (a record is written in its dicts' order), each
    value the same (:func:`_same_value`). The C-level comparisons first: equal items in
    order, then equal types; only a zero needs its sign looked at."""
    if len(a) != len(b) or list(a.items()) != list(b.items()):
        return False
    if list(map(type, a.values())) != list(map(type, b.values())):
        return False
    if 0.0 not in b.values():
        return True
    return all(
        _same_value(value_a, value_b)
        for value_a, value_b in zip(a.values(), b.values(), strict=True)
    )


def _same_counts(a: Mapping[str, int], b: Mapping[str, int]) -> bool:
    """The same keys in the same order, the same counts (counts are ints)."""
    return len(a) == len(b) and list(a.items()) == list(b.items())


def _same_nested(a: Mapping[str, Mapping[str, int]], b: Mapping[str, Mapping[str, int]]) -> bool:
    """The same keys in the same order, each inner mapping :func:`_same_counts`."""
    if a != b or list(a) != list(b):
        return False
    return all(list(inner.items()) == list(b[key].items()) for key, inner in a.items())
