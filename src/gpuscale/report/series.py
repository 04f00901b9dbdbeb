"""Step series read straight off a timeline: the values the plots and comparisons need.

A timeline record holds the full state after a change, so every quantity in it is a step
function of time: the value of the last record at or before ``t`` holds until the next
record. This module turns a :class:`~gpuscale.timeline.Timeline` into such series (replica
counts, pods by phase, nodes by pool and state, metric and load values, cost) and answers
"what was the value at ``t``". It computes no statistics; those belong to the simulator's
summary. Pure: no files, no clock.

A run's end is the later of its last record and ``meta["duration_s"]`` when the writer
put one in the header (a run whose state stopped changing at 10 min but that was observed
until 30 min ends at 30 min).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from gpuscale.timeline import NODE_STATES, Timeline, WorkloadState

__all__ = [
    "StepSeries",
    "cost_series",
    "load_keys",
    "load_series",
    "metric_names",
    "node_pools",
    "node_series",
    "pod_series",
    "run_end",
    "workload_metric_series",
    "workload_names",
    "workload_series",
]


@dataclass(frozen=True, slots=True)
class StepSeries:
    """Values that hold from each time until the next one; None where there is no value."""

    times: tuple[float, ...]
    """Seconds since the start of the run, non-decreasing."""
    values: tuple[float | None, ...]
    """The value from ``times[i]`` until ``times[i + 1]`` (or the end of the run)."""
    end: float
    """Seconds at which the run ends; the last value holds until then."""

    def __post_init__(self) -> None:
        if len(self.times) != len(self.values):
            raise ValueError("times and values must have the same length")
        if any(b < a for a, b in zip(self.times, self.times[1:], strict=False)):
            raise ValueError("times must be non-decreasing")

    def at(self, t: float) -> float | None:
        """The value holding at ``t``: None before the first time or after the end."""
        if t > self.end:
            return None
        index = bisect.bisect_right(self.times, t) - 1
        return None if index < 0 else self.values[index]

    def defined(self) -> list[float]:
        """The values that are not None, in time order."""
        return [v for v in self.values if v is not None]

    def is_empty(self) -> bool:
        """True when no record holds a value."""
        return all(v is None for v in self.values)


def run_end(timeline: Timeline) -> float:
    """Seconds the run covered: its last record, or ``meta["duration_s"]`` if later."""
    last = timeline.records[-1].t if timeline.records else 0.0
    declared = timeline.header.meta.get("duration_s")
    if (
        isinstance(declared, int | float)
        and not isinstance(declared, bool)
        and math.isfinite(declared)
    ):
        return max(last, float(declared))
    return last


def _series(timeline: Timeline, value: Callable[[int], float | None]) -> StepSeries:
    times = tuple(r.t for r in timeline.records)
    values = tuple(value(i) for i in range(len(timeline.records)))
    return StepSeries(times=times, values=values, end=run_end(timeline))


def _unique(names: Iterator[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))


def workload_names(timeline: Timeline) -> tuple[str, ...]:
    """Every workload that appears in the timeline, in order of first appearance."""
    return _unique(w.name for r in timeline.records for w in r.workloads)


def _workload(timeline: Timeline, index: int, name: str) -> WorkloadState | None:
    for state in timeline.records[index].workloads:
        if state.name == name:
            return state
    return None


def workload_series(timeline: Timeline, workload: str, field: str) -> StepSeries:
    """``spec``, ``status``, ``ready`` or ``desired`` replicas of ``workload`` over time."""
    if field not in ("spec", "status", "ready", "desired"):
        raise ValueError(f"unknown replica field {field!r}")

    def value(index: int) -> float | None:
        state = _workload(timeline, index, workload)
        if state is None:
            return None
        number: int | None = getattr(state, field)
        return None if number is None else float(number)

    return _series(timeline, value)


def pod_series(timeline: Timeline, workload: str, phase: str) -> StepSeries:
    """Pods of ``workload`` in ``phase`` over time (a phase left out of a record counts 0)."""

    def value(index: int) -> float | None:
        state = _workload(timeline, index, workload)
        return None if state is None else float(state.pods.get(phase, 0))

    return _series(timeline, value)


def metric_names(timeline: Timeline) -> tuple[str, ...]:
    """Every metric name any workload reports, in order of first appearance."""
    return _unique(m for r in timeline.records for w in r.workloads for m in w.metrics)


def _metric_value(metrics: Mapping[str, float | None], name: str) -> float | None:
    number = metrics.get(name)
    return None if number is None or not math.isfinite(number) else number


def workload_metric_series(timeline: Timeline, workload: str, metric: str) -> StepSeries:
    """The named metric of ``workload`` over time; None where it had no value."""

    def value(index: int) -> float | None:
        state = _workload(timeline, index, workload)
        return None if state is None else _metric_value(state.metrics, metric)

    return _series(timeline, value)


def node_pools(timeline: Timeline) -> tuple[str, ...]:
    """Pools named in the header, then any other pool that appears in a record."""
    return _unique(
        name
        for names in (iter(timeline.header.pools), (p for r in timeline.records for p in r.nodes))
        for name in names
    )


def node_series(timeline: Timeline, pool: str, state: str) -> StepSeries:
    """Nodes of ``pool`` in ``state`` over time (absent means 0)."""
    if state not in NODE_STATES:
        raise ValueError(f"unknown node state {state!r}, expected one of {NODE_STATES}")
    return _series(timeline, lambda i: float(timeline.records[i].nodes.get(pool, {}).get(state, 0)))


def load_keys(timeline: Timeline) -> tuple[str, ...]:
    """Every load value name (``request_rate``, gauge names), in order of first appearance."""
    return _unique(k for r in timeline.records for k in r.load)


def load_series(timeline: Timeline, key: str) -> StepSeries:
    """The load value ``key`` over time; None in records that do not set it."""
    return _series(timeline, lambda i: timeline.records[i].load.get(key))


def cost_series(timeline: Timeline) -> StepSeries:
    """Dollars spent so far at each record and at the run's end. Between records cost grows
    with the nodes up, so plot it joined point to point rather than as steps.

    A run often stops changing long before it ends (the fixed tutorial's last record is at
    12 min of 40): the last point adds what the last record's nodes, in every state, cost
    at the header's ``price_per_hour`` until :func:`run_end` — the same node-seconds times
    price the summary's dollars are made of, so the plot ends where the table's total is.
    """
    series = _series(timeline, lambda i: timeline.records[i].cost_usd)
    if not timeline.records or series.end <= series.times[-1]:
        return series
    last = timeline.records[-1]
    per_hour = 0.0
    for pool, states in last.nodes.items():
        price = _number(timeline.header.pools.get(pool, {}).get("price_per_hour"))
        per_hour += sum(states.values()) * (price or 0.0)
    final = last.cost_usd + per_hour * (series.end - last.t) / 3600.0
    return StepSeries(
        times=(*series.times, series.end), values=(*series.values, final), end=series.end
    )


def _number(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None
