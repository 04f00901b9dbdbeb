"""What a run amounts to, from its timeline records (and, for a simulated run, its request
logs), laid out as the report's summary table. Pure.

It reads only :class:`~gpuscale.timeline.Record` s and request logs, so the same summary
applies to a simulated or a live timeline, and it lives with the report that shows it:
``gpuscale simulate``, ``demo`` and ``report`` all call :func:`summarize` then
:func:`summary_table`, so the terminal, ``-o json`` and the HTML page show the same
numbers. Definitions:

- **replicas**: min/max of ``spec`` and ``ready``, the time-weighted mean of ``spec``, the
  number of spec changes and of **flaps** — changes in the opposite direction of the
  previous change (1→2→1→2 has two) — and, when it flaps, the **period**: the median
  time between successive increases of ``spec``.
- **reactions**: for each load change the scenario made (a gauge set, a request rate or
  ramp corner; the rate of 0 before the first step and measured trace rates are not load
  changes), per affected workload, the first later spec change (*to desired*) and the
  first time after it that ``ready`` reached that spec (*to Ready capacity*; for a
  scale-down, fell to it) — None when it did not happen before the next load change.
- **pending**: pod-seconds with pods Pending (not bound), split by the scheduler's
  FailedScheduling message they had (``not yet scheduled`` before any attempt).
- **pools**: nodes added and removed (increases and decreases of the node count),
  node-hours, dollars, GPU-hours on existing nodes and idle GPU-hours (GPUs not held by
  a Ready pod), idle dollars (idle GPU-hours at the per-GPU share of the node price).
- **requests**: served, late (served slower than the target), timed out, dropped,
  unfinished, and latency percentiles of the served ones; for ``serving.kind: vllm``
  workloads also TTFT and ITL (each request's mean inter-token gap) p50/p95/p99.

:func:`summarize` returns the numbers (:class:`RunStats`, ``-o json``'s ``summary``);
:func:`summary_table` lays them out as the report's
:class:`~gpuscale.report.tables.Summary` (titled sections of label, value, note rows);
:func:`timeline_summary` does both for a timeline read from a file. The request logs are
the simulator's (:class:`gpuscale.sim.requests.RequestLog`); their outcome codes (and
numpy, which reads them) are imported only when there are logs, so importing the report
loads neither the simulator nor numpy.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gpuscale.kube import format_duration
from gpuscale.report.tables import Summary, SummaryRow, SummarySection
from gpuscale.timeline import Record, Timeline

if TYPE_CHECKING:
    import numpy as np

    from gpuscale.sim.requests import RequestLog

__all__ = [
    "PendingStats",
    "PoolStats",
    "Reaction",
    "ReplicaStats",
    "RequestStats",
    "RunStats",
    "summarize",
    "summary_table",
    "timeline_summary",
]

_NOT_YET = "not yet scheduled"


@dataclass(frozen=True, slots=True)
class ReplicaStats:
    workload: str
    min_spec: int
    max_spec: int
    mean_spec: float
    """Time-weighted mean of ``spec.replicas``."""
    min_ready: int
    max_ready: int
    changes: int
    flaps: int
    flap_period_s: float | None = None
    """Median time between successive increases of ``spec`` when it flaps, else None."""
    flap_period_range_s: tuple[float, float] | None = None
    """The shortest and longest of those times: the HPA's drift against the scrapes
    moves single turns by a sync (``docs/timing.md``)."""


@dataclass(frozen=True, slots=True)
class Reaction:
    at: float
    """When the load changed."""
    change: str
    """What changed, e.g. ``my_custom_gauge=160``."""
    workload: str
    desired: int | None
    """The spec the scalers moved to (None: no change)."""
    to_desired_s: float | None
    to_ready_s: float | None


@dataclass(frozen=True, slots=True)
class PendingStats:
    workload: str
    pod_seconds: float
    by_reason: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PoolStats:
    pool: str
    added: int
    removed: int
    node_hours: float
    dollars: float
    gpu_hours: float
    idle_gpu_hours: float
    idle_dollars: float


@dataclass(frozen=True, slots=True)
class RequestStats:
    workload: str
    total: int
    served: int
    late: int
    timed_out: int
    dropped: int
    unfinished: int
    target_s: float | None
    p50_s: float | None
    p90_s: float | None
    p99_s: float | None
    max_s: float | None
    ttft_p50_s: float | None = None
    """Time to first token of served requests (``vllm`` workloads; ``None`` otherwise)."""
    ttft_p95_s: float | None = None
    ttft_p99_s: float | None = None
    itl_p50_s: float | None = None
    """Inter-token latency: each served request's mean gap between tokens after the
    first (vLLM's per-request TPOT), over requests of two tokens or more."""
    itl_p95_s: float | None = None
    itl_p99_s: float | None = None


@dataclass(frozen=True, slots=True)
class RunStats:
    """The numbers of one run (see the module docstring for each definition)."""

    duration_s: float
    replicas: tuple[ReplicaStats, ...]
    reactions: tuple[Reaction, ...]
    pending: tuple[PendingStats, ...]
    pools: tuple[PoolStats, ...]
    dollars: float
    idle_dollars: float
    requests: tuple[RequestStats, ...]

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (for ``-o json``)."""
        return {
            "duration_s": self.duration_s,
            "replicas": [_fields(r) for r in self.replicas],
            "reactions": [_fields(r) for r in self.reactions],
            "pending": [
                {
                    "workload": p.workload,
                    "pod_seconds": p.pod_seconds,
                    "by_reason": dict(p.by_reason),
                }
                for p in self.pending
            ],
            "pools": [_fields(p) for p in self.pools],
            "dollars": self.dollars,
            "idle_dollars": self.idle_dollars,
            "requests": [_fields(r) for r in self.requests],
        }


def _fields(obj: Any) -> dict[str, Any]:
    return {name: getattr(obj, name) for name in obj.__slots__}


def _spans(records: Sequence[Record], until: float) -> list[float]:
    ends = [r.t for r in records[1:]] + [until]
    return [max(end - r.t, 0.0) for r, end in zip(records, ends, strict=True)]


def _replicas(records: Sequence[Record], spans: Sequence[float]) -> list[ReplicaStats]:
    names = [w.name for w in records[0].workloads] if records else []
    stats = []
    for name in names:
        specs: list[int] = []
        readies: list[int] = []
        times: list[float] = []
        weighted = 0.0
        for record, span in zip(records, spans, strict=True):
            state = next((w for w in record.workloads if w.name == name), None)
            if state is None:
                continue
            specs.append(state.spec)
            times.append(record.t)
            readies.append(state.ready)
            weighted += state.spec * span
        changes = flaps = 0
        last_direction = 0
        rises: list[float] = []
        for (before, after), t in zip(itertools.pairwise(specs), times[1:], strict=True):
            if after == before:
                continue
            changes += 1
            direction = 1 if after > before else -1
            if direction > 0:
                rises.append(t)
            if last_direction and direction != last_direction:
                flaps += 1
            last_direction = direction
        gaps = sorted(b - a for a, b in itertools.pairwise(rises))
        period = gaps[len(gaps) // 2] if flaps >= 2 and gaps else None
        spread = (gaps[0], gaps[-1]) if period is not None else None
        total = sum(spans)
        stats.append(
            ReplicaStats(
                workload=name,
                min_spec=min(specs),
                max_spec=max(specs),
                mean_spec=weighted / total if total > 0 else float(specs[-1]),
                min_ready=min(readies),
                max_ready=max(readies),
                changes=changes,
                flaps=flaps,
                flap_period_s=period,
                flap_period_range_s=spread,
            )
        )
    return stats


def _load_changes(records: Sequence[Record]) -> list[tuple[float, str, str | None]]:
    changes: list[tuple[float, str, str | None]] = []
    previous: Mapping[str, float] = {}
    for record in records:
        for decision in record.decisions:
            if decision.controller == "load" and decision.reason == "Scenario":
                workload = decision.target.removeprefix("deployment/")
                changes.append((record.t, decision.detail.split(" on ")[0], workload))
        for key, value in record.load.items():
            if not key.startswith("request_rate:"):
                continue
            if previous.get(key, 0.0) != value:
                name = key.split(":", 1)[1]
                changes.append((record.t, f"request_rate={value:g}", name))
        previous = record.load
    return changes


def _state(record: Record, workload: str) -> Any:
    for state in record.workloads:
        if state.name == workload or state.name.endswith(f"/{workload}"):
            return state
    return None


def _reactions(records: Sequence[Record]) -> list[Reaction]:
    changes = _load_changes(records)
    reactions: list[Reaction] = []
    for index, (at, text, workload) in enumerate(changes):
        horizon = changes[index + 1][0] if index + 1 < len(changes) else math.inf
        names = [workload] if workload is not None else [w.name for w in records[0].workloads]
        for name in names:
            before = next(
                (_state(r, name) for r in reversed(records) if r.t <= at and _state(r, name)),
                None,
            )
            if before is None:
                continue
            desired_at: float | None = None
            desired: int | None = None
            ready_at: float | None = None
            for record in records:
                if record.t < at or record.t >= horizon:
                    continue
                state = _state(record, name)
                if state is None:
                    continue
                if desired_at is None and state.spec != before.spec:
                    desired_at, desired = record.t, state.spec
                if desired is not None and desired_at is not None:
                    up = desired > before.spec
                    if (up and state.ready >= desired) or (not up and state.ready <= desired):
                        ready_at = record.t
                        break
            reactions.append(
                Reaction(
                    at=at,
                    change=text,
                    workload=before.name,
                    desired=desired,
                    to_desired_s=None if desired_at is None else desired_at - at,
                    to_ready_s=None if ready_at is None else ready_at - at,
                )
            )
    return reactions


def _pod_from_detail(detail: str, namespace: str) -> str | None:
    marker = "Deleted pod: "
    if detail.startswith(marker):
        return f"{namespace}/{detail[len(marker) :]}"
    return None


def _pending(records: Sequence[Record], spans: Sequence[float]) -> list[PendingStats]:
    names = [w.name for w in records[0].workloads] if records else []
    totals = dict.fromkeys(names, 0.0)
    reasons: dict[str, dict[str, float]] = {name: {} for name in names}
    current: dict[str, str] = {}
    for record, span in zip(records, spans, strict=True):
        for decision in record.decisions:
            target = decision.target
            if decision.controller == "scheduler" and target.startswith("pod/"):
                pod = target[4:]
                if decision.reason == "FailedScheduling":
                    current[pod] = decision.detail.split(". preemption:")[0]
                else:
                    current.pop(pod, None)
            elif decision.controller == "replicaset" and decision.action == "delete":
                namespace = target.split("/")[1] if target.count("/") >= 2 else ""
                deleted = _pod_from_detail(decision.detail, namespace)
                if deleted is not None:
                    current.pop(deleted, None)
        for state in record.workloads:
            pending = state.pods.get("Pending", 0)
            if not pending or state.name not in totals:
                continue
            totals[state.name] += pending * span
            prefix = state.name + "-"
            known = [m for pod, m in current.items() if pod.startswith(prefix)]
            by_reason = reasons[state.name]
            for message in known[:pending]:
                by_reason[message] = by_reason.get(message, 0.0) + span
            unknown = pending - min(len(known), pending)
            if unknown:
                by_reason[_NOT_YET] = by_reason.get(_NOT_YET, 0.0) + unknown * span
    return [PendingStats(name, totals[name], reasons[name]) for name in names]


def _pools(
    records: Sequence[Record], spans: Sequence[float], pools: Mapping[str, Mapping[str, Any]]
) -> list[PoolStats]:
    names = sorted(set(pools) | {p for r in records for p in r.nodes})
    result = []
    for name in names:
        price = float(pools.get(name, {}).get("price_per_hour", 0.0))
        gpus_per_node = int(pools.get(name, {}).get("gpus_per_node", 0) or 0)
        added = removed = 0
        previous: int | None = None
        node_seconds = gpu_seconds = idle_seconds = 0.0
        for record, span in zip(records, spans, strict=True):
            count = sum(record.nodes.get(name, {}).values())
            if previous is not None:
                if count > previous:
                    added += count - previous
                elif count < previous:
                    removed += previous - count
            previous = count
            node_seconds += count * span
            gpus = record.gpus.get(name, {})
            gpu_seconds += gpus.get("total", 0) * span
            idle_seconds += (gpus.get("total", 0) - gpus.get("busy", 0)) * span
        idle_dollars = idle_seconds / 3600.0 * price / gpus_per_node if gpus_per_node else 0.0
        result.append(
            PoolStats(
                pool=name,
                added=added,
                removed=removed,
                node_hours=node_seconds / 3600.0,
                dollars=node_seconds / 3600.0 * price,
                gpu_hours=gpu_seconds / 3600.0,
                idle_gpu_hours=idle_seconds / 3600.0,
                idle_dollars=idle_dollars,
            )
        )
    return result


def _percentile(values: np.ndarray[Any, Any], q: float) -> float | None:
    import numpy as np  # noqa: PLC0415 - see the module docstring

    return float(np.percentile(values, q)) if values.size else None


def _requests(logs: Mapping[str, RequestLog], targets: Mapping[str, float]) -> list[RequestStats]:
    if not logs:
        return []
    import numpy as np  # noqa: PLC0415 - see the module docstring

    from gpuscale.sim.requests import (  # noqa: PLC0415 - see the module docstring
        DROPPED,
        SERVED,
        TIMED_OUT,
        UNFINISHED,
    )

    stats = []
    for name, log in logs.items():
        served_mask = log.outcomes == SERVED
        served = log.latencies[served_mask]
        target = targets.get(name) or targets.get(name.split("/")[-1])
        late = int(np.count_nonzero(served > target)) if target is not None else 0
        tokens: dict[str, float | None] = {}
        for label, column in (("ttft", log.ttft), ("itl", log.itl)):
            if column is None:
                continue
            values = column[served_mask]
            values = values[~np.isnan(values)]
            for q in (50, 95, 99):
                tokens[f"{label}_p{q}_s"] = _percentile(values, q)
        stats.append(
            RequestStats(
                workload=name,
                total=len(log),
                served=int(served.size),
                late=late,
                timed_out=log.count(TIMED_OUT),
                dropped=log.count(DROPPED),
                unfinished=log.count(UNFINISHED),
                target_s=target,
                p50_s=_percentile(served, 50),
                p90_s=_percentile(served, 90),
                p99_s=_percentile(served, 99),
                max_s=float(served.max()) if served.size else None,
                **tokens,
            )
        )
    return stats


def summarize(
    records: Sequence[Record],
    *,
    until: float,
    pools: Mapping[str, Mapping[str, Any]],
    requests: Mapping[str, RequestLog] | None = None,
    latency_targets: Mapping[str, float] | None = None,
) -> RunStats:
    """Summarise a run from its records (up to ``until``) and request logs.

    ``pools`` is the timeline header's ``pools`` (price per hour and GPUs per node).
    """
    if not records:
        raise ValueError("a summary needs at least one record")
    spans = _spans(records, until)
    pool_stats = _pools(records, spans, pools)
    return RunStats(
        duration_s=until - records[0].t,
        replicas=tuple(_replicas(records, spans)),
        reactions=tuple(_reactions(records)),
        pending=tuple(_pending(records, spans)),
        pools=tuple(pool_stats),
        dollars=sum(p.dollars for p in pool_stats),
        idle_dollars=sum(p.idle_dollars for p in pool_stats),
        requests=tuple(_requests(requests or {}, latency_targets or {})),
    )


# --------------------------------------------------------------------------- the table


def _period_note(stats: ReplicaStats) -> str:
    spread = stats.flap_period_range_s
    if spread is None or round(spread[0]) == round(spread[1]):
        return "between scale-ups"
    low, high = (format_duration(round(s)) for s in spread)
    return f"median between scale-ups; {low}–{high} in this run"


def _duration(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    if seconds < 60 and seconds != int(seconds):
        return f"{seconds:.3g}s"
    return format_duration(seconds)


def _short(workload: str) -> str:
    return workload.split("/", 1)[-1]


def summary_table(summary: RunStats) -> Summary:
    """The numbers as the report's summary table: titled sections of rows."""
    sections = [
        SummarySection("Run", (SummaryRow("simulated time", _duration(summary.duration_s)),))
    ]
    pending = {p.workload: p for p in summary.pending}
    for stats in summary.replicas:
        rows = [
            SummaryRow("replicas (spec) min–max", f"{stats.min_spec}–{stats.max_spec}"),
            SummaryRow("replicas (spec) mean", f"{stats.mean_spec:.2f}", "time-weighted"),
            SummaryRow("ready replicas min–max", f"{stats.min_ready}–{stats.max_ready}"),
            SummaryRow("replica changes", stats.changes),
            SummaryRow("flaps", stats.flaps, "reversals of direction"),
            SummaryRow("flap period", _duration(stats.flap_period_s), _period_note(stats)),
        ]
        for reaction in summary.reactions:
            if reaction.workload != stats.workload:
                continue
            label = f"{reaction.change} at {_duration(reaction.at)}"
            moved = "" if reaction.desired is None else f"spec → {reaction.desired}"
            rows.append(SummaryRow(f"{label}: to desired", _duration(reaction.to_desired_s), moved))
            rows.append(
                SummaryRow(
                    f"{label}: to Ready capacity",
                    _duration(reaction.to_ready_s),
                    ""
                    if reaction.to_ready_s is not None or reaction.desired is None
                    else "not reached before the next load change or the end",
                )
            )
        waiting = pending.get(stats.workload)
        if waiting is not None:
            reasons = sorted(waiting.by_reason.items(), key=lambda item: -item[1])
            note = "" if not reasons else reasons[0][0].split(": ", 1)[-1]
            rows.append(SummaryRow("pod-seconds Pending", f"{waiting.pod_seconds:,.1f}", note))
        sections.append(SummarySection(f"Workload {_short(stats.workload)}", tuple(rows)))
    for pool in summary.pools:
        rows = [
            SummaryRow("nodes added", pool.added),
            SummaryRow("nodes removed", pool.removed),
            SummaryRow("node-hours", f"{pool.node_hours:,.3f}"),
            SummaryRow("dollars", f"${pool.dollars:,.2f}"),
        ]
        if pool.gpu_hours:
            rows += [
                SummaryRow("GPU-hours allocated", f"{pool.gpu_hours:,.3f}"),
                SummaryRow(
                    "GPU-hours idle",
                    f"{pool.idle_gpu_hours:,.3f}",
                    "GPUs on nodes not held by a Ready pod",
                ),
                SummaryRow("idle dollars", f"${pool.idle_dollars:,.2f}"),
            ]
        sections.append(SummarySection(f"Pool {pool.pool}", tuple(rows)))
    sections.append(
        SummarySection(
            "Cost",
            (
                SummaryRow("dollars", f"${summary.dollars:,.2f}", "node-hours × price"),
                SummaryRow("idle GPU dollars", f"${summary.idle_dollars:,.2f}"),
            ),
        )
    )
    for req in summary.requests:
        target = "" if req.target_s is None else f"target {_duration(req.target_s)}"
        rows = [
            SummaryRow("requests", req.total),
            SummaryRow("served", req.served),
            SummaryRow("late", req.late if req.target_s is not None else None, target),
            SummaryRow("timed out", req.timed_out),
            SummaryRow("dropped", req.dropped, "their replica went away"),
            SummaryRow("unfinished", req.unfinished, "still in flight at the end"),
            SummaryRow("latency p50", _duration(req.p50_s)),
            SummaryRow("latency p90", _duration(req.p90_s)),
            SummaryRow("latency p99", _duration(req.p99_s), target),
            SummaryRow("latency max", _duration(req.max_s)),
        ]
        if req.ttft_p50_s is not None:
            rows += [
                SummaryRow("TTFT p50", _duration(req.ttft_p50_s), "time to first token"),
                SummaryRow("TTFT p95", _duration(req.ttft_p95_s)),
                SummaryRow("TTFT p99", _duration(req.ttft_p99_s)),
            ]
        if req.itl_p50_s is not None:
            rows += [
                SummaryRow("ITL p50", _duration(req.itl_p50_s), "per-request mean (TPOT)"),
                SummaryRow("ITL p95", _duration(req.itl_p95_s)),
                SummaryRow("ITL p99", _duration(req.itl_p99_s)),
            ]
        sections.append(SummarySection(f"Requests {_short(req.workload)}", tuple(rows)))
    return Summary(tuple(sections))


def timeline_summary(timeline: Timeline, end: float) -> Summary:
    """The summary table of any timeline up to ``end`` (requests excepted: a timeline holds
    no request log); an empty table for a timeline without records."""
    if not timeline.records:
        return Summary(())
    stats = summarize(timeline.records, until=end, pools=timeline.header.pools)
    return summary_table(stats)
