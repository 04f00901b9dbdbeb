"""The HPA's arithmetic at each of its decisions, read off the timeline. Pure.

Under an ``AverageValue`` target (KEDA's default for a Prometheus trigger) the HPA divides
what it reads by the replicas before comparing with the target, which is a target *per
replica*: it reads 80 at 2 replicas, so 80 / 2 = 40 per replica against a target of 80 per
replica, and wants ceil(2 × 40/80) = 1 (upstream ``GetExternalPerPodMetricReplicas`` in
``pkg/controller/podautoscaler/replica_calculator.go``: the proposal is
ceil(total / target), the usage it reports is total / status.replicas). A query that
already divides by the replicas (the tutorial's) is divided twice.

That sentence used to be told three ways (the story with the total against the target,
the decisions table with the per-replica usage, the plot with the total against the
target line). Now every place — the demo's story (:mod:`gpuscale.report.story`), the
report's decisions table, the metric plot's per-replica line — takes its numbers from
:func:`hpa_steps`, which reads them from one place: each HPA decision's detail (the usage,
target, target type and proposal the controller logged), the record's ``hpa:<metric>``
(what the HPA read) and the replicas it divided by (``status.replicas`` of the record
before the sync); the words are :func:`gpuscale._hpa_words.hpa_step_text`, which lint's
texts use too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from gpuscale._hpa_words import hpa_step_text
from gpuscale.timeline import Decision, Record, WorkloadState

__all__ = ["HpaStep", "hpa_step", "hpa_steps", "per_replica_values"]

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_PROPOSAL = re.compile(
    rf"(?:^|; )\w+ metric (\S+) ({_NUMBER}) / target ({_NUMBER}) "
    r"\((\w+)\) -> desired (\d+)"
)
_SIZES = re.compile(r"; (\d+) -> (\d+)(?: \(|$|;)")
_TOLERANCE = 1e-3


@dataclass(frozen=True, slots=True)
class HpaStep:
    """One metric's part in one HPA decision, with the numbers behind it."""

    t: float
    """When the HPA decided."""
    workload: str
    """``namespace/name`` of the scaled workload."""
    metric: str
    """The metric's name (``s0-prometheus``)."""
    target_type: str
    """``AverageValue`` (a target per replica) or ``Value`` (a target for the total)."""
    usage: float
    """What the controller compared with the target: per replica under AverageValue."""
    target: float
    """The target (per replica under AverageValue)."""
    desired: int
    """What this metric proposed."""
    read: float | None
    """What the HPA read (the record's ``hpa:<metric>``): the query's value."""
    replicas: int
    """The replicas it divided by (``status.replicas`` when it synced)."""
    before: int | None
    """``spec.replicas`` before the decision."""
    after: int | None
    """``spec.replicas`` after it (equal to ``before`` for a hold)."""

    def arithmetic(self) -> str:
        """The step in words, both numbers and the formula, e.g. ``80 / 2 replicas = 40 per
        replica against a target of 80 per replica: ceil(2 × 40/80) = 1``."""
        return hpa_step_text(
            target_type=self.target_type,
            usage=self.usage,
            target=self.target,
            replicas=self.replicas,
            desired=self.desired,
            read=self.read,
        )


def _state(record: Record, target: str) -> WorkloadState | None:
    name = target.removeprefix("deployment/").removeprefix("statefulset/")
    for state in record.workloads:
        if state.name == name:
            return state
    return None


def hpa_step(records: Sequence[Record], index: int, decision: Decision) -> list[HpaStep]:
    """The steps (one per metric) of ``decision``, an HPA decision in ``records[index]``;
    empty when its detail states no numbers (a failed metric)."""
    if decision.controller != "hpa":
        return []
    record = records[index]
    state = _state(record, decision.target)
    if state is None:
        return []
    seen = _state(records[index - 1], decision.target) if index > 0 else None
    status = (seen or state).status
    sizes = _SIZES.search(decision.detail)
    before, after = (int(sizes.group(1)), int(sizes.group(2))) if sizes else (None, None)
    steps = []
    for found in _PROPOSAL.finditer(decision.detail):
        metric, usage, target = found.group(1), float(found.group(2)), float(found.group(3))
        read = state.metrics.get(f"hpa:{metric}")
        replicas = status
        if found.group(4) == "AverageValue" and read and usage > 0:
            divided = round(read / usage)
            if divided >= 1 and abs(read / divided - usage) <= _TOLERANCE * max(usage, 1.0):
                replicas = divided
        steps.append(
            HpaStep(
                t=record.t,
                workload=state.name,
                metric=metric,
                target_type=found.group(4),
                usage=usage,
                target=target,
                desired=int(found.group(5)),
                read=read,
                replicas=replicas,
                before=before,
                after=after,
            )
        )
    return steps


def hpa_steps(records: Sequence[Record], *, scales_only: bool = False) -> list[HpaStep]:
    """Every HPA decision's steps in ``records``, in time order (``scales_only``: rescales)."""
    return [
        step
        for index, record in enumerate(records)
        for decision in record.decisions
        if not scales_only or decision.action == "scale"
        for step in hpa_step(records, index, decision)
    ]


def per_replica_values(
    records: Sequence[Record], workload: str, metric: str
) -> list[float | None] | None:
    """What the HPA compared with an AverageValue target at each record: what it read ÷
    the replicas, as of its last sync — the decision's own number at a decision, else
    ``hpa:<metric>`` over the ``status.replicas`` it saw. None when no decision of the
    run shows an AverageValue target for ``metric`` (nothing to divide)."""
    target = f"deployment/{workload}"
    steps = {
        (index, s.metric): s
        for index, record in enumerate(records)
        for d in record.decisions
        if d.target in (target, f"statefulset/{workload}")
        for s in hpa_step(records, index, d)
    }
    if not any(s.metric == metric and s.target_type == "AverageValue" for s in steps.values()):
        return None
    values: list[float | None] = []
    current: float | None = None
    previous_read: float | None = None
    previous_status: int | None = None
    for index, record in enumerate(records):
        state = next((w for w in record.workloads if w.name == workload), None)
        read = None if state is None else state.metrics.get(f"hpa:{metric}")
        step = steps.get((index, metric))
        if step is not None:
            current = step.usage
        elif read != previous_read:
            divisor = previous_status or (state.status if state is not None else 0)
            current = None if read is None or not divisor else read / divisor
        values.append(current)
        previous_read = read
        if state is not None:
            previous_status = state.status
    return values
