"""Prediction against reality: two timelines aligned on time and compared series by series.

``gpuscale simulate`` predicts a timeline; ``gpuscale watch`` records one from the cluster.
Both start at t = 0 and hold every value until the next record, so two runs compare as
two step functions over the time both cover (from the later first record to the earlier
end, see :func:`gpuscale.report.series.run_end`). For each series (desired, spec and ready
replicas, pending pods, nodes per pool and state) this module reports how long the two
disagreed, the largest difference, the area between them (for replicas: replica-seconds)
and, for each count either run reached, when each run first reached it. Pure: no files,
no clock.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from gpuscale.kube import format_duration
from gpuscale.report.series import (
    StepSeries,
    node_pools,
    node_series,
    pod_series,
    workload_names,
    workload_series,
)
from gpuscale.timeline import Timeline

__all__ = [
    "Comparison",
    "ComparisonTable",
    "LevelReach",
    "SeriesDiff",
    "compare_steps",
    "compare_timelines",
    "comparison_table",
    "first_reach",
]


@dataclass(frozen=True, slots=True)
class LevelReach:
    """When each run first held a value of at least ``level``."""

    level: float
    a: float | None
    """Seconds until the first run reached ``level``; None if it never did."""
    b: float | None
    """Seconds until the second run reached ``level``; None if it never did."""


@dataclass(frozen=True, slots=True)
class SeriesDiff:
    """How one series of two runs differed over the time both cover."""

    name: str
    """What was compared: ``spec replicas``, ``pending pods``, ``provisioning nodes``."""
    group: str
    """What it belongs to: the workload (``ns/name``, or ``ns/a / ns/b`` when paired
    across names) or ``pool <name>``; may be empty."""
    overlap_s: float
    """Seconds in which both series had a value."""
    seconds_different: float
    """Seconds (within the overlap) in which the values differed."""
    max_difference: float
    """Largest ``|a - b|`` in the overlap; 0 when they always agreed."""
    area: float
    """Integral of ``|a - b|`` over the overlap (replica-seconds for replica counts)."""
    reach: tuple[LevelReach, ...]
    """First time at or above each level, for integer series; levels both runs held at
    their first record are left out."""

    def as_json(self) -> dict[str, Any]:
        """The difference as JSON-ready dicts."""
        return {
            "group": self.group,
            "name": self.name,
            "overlap_s": self.overlap_s,
            "seconds_different": self.seconds_different,
            "max_difference": self.max_difference,
            "area": self.area,
            "reach": [{"level": r.level, "a": r.a, "b": r.b} for r in self.reach],
        }


@dataclass(frozen=True, slots=True)
class Comparison:
    """Two runs compared: ``labels[0]`` is ``a`` (e.g. the prediction), ``labels[1]`` ``b``."""

    labels: tuple[str, str]
    series: tuple[SeriesDiff, ...]

    def as_json(self) -> dict[str, Any]:
        """The comparison as JSON-ready dicts."""
        return {
            "a": self.labels[0],
            "b": self.labels[1],
            "series": [s.as_json() for s in self.series],
        }


def first_reach(series: StepSeries, level: float) -> float | None:
    """The first time ``series`` held a value of at least ``level``; None if never."""
    for t, value in zip(series.times, series.values, strict=True):
        if t > series.end:
            break
        if value is not None and value >= level:
            return t
    return None


def _first_value(series: StepSeries) -> float | None:
    return next((v for v in series.values if v is not None), None)


def compare_steps(
    name: str, a: StepSeries, b: StepSeries, *, group: str = "", levels: bool = True
) -> SeriesDiff:
    """Compare two step series over the time both cover.

    With ``levels``, also report when each first reached every value either one held
    (meaningful for counts: replicas, pods, nodes).
    """
    end = min(a.end, b.end)
    cuts = sorted({t for t in (*a.times, *b.times) if t <= end} | {end})
    overlap = differing = largest = area = 0.0
    for start, stop in itertools.pairwise(cuts):
        va, vb = a.at(start), b.at(start)
        if va is None or vb is None:
            continue
        span = stop - start
        overlap += span
        gap = abs(va - vb)
        if gap > 0:
            differing += span
            area += gap * span
            largest = max(largest, gap)
    reach: list[LevelReach] = []
    if levels:
        start_a, start_b = _first_value(a), _first_value(b)
        for level in sorted({*a.defined(), *b.defined()}):
            held_a = start_a is not None and start_a >= level
            held_b = start_b is not None and start_b >= level
            if held_a and held_b:
                continue
            reach.append(LevelReach(level, first_reach(a, level), first_reach(b, level)))
    return SeriesDiff(
        name=name,
        group=group,
        overlap_s=overlap,
        seconds_different=differing,
        max_difference=largest,
        area=area,
        reach=tuple(reach),
    )


def _pair_workloads(
    a: Timeline, b: Timeline, workload_a: str | None, workload_b: str | None
) -> list[tuple[str, str]]:
    if workload_a is not None or workload_b is not None:
        first = workload_a or workload_b or ""
        return [(first, workload_b or first)]
    names_a, names_b = workload_names(a), workload_names(b)
    common = [n for n in names_a if n in names_b]
    if common:
        return [(n, n) for n in common]
    if len(names_a) == 1 and len(names_b) == 1:
        return [(names_a[0], names_b[0])]
    return []


def compare_timelines(
    a: Timeline,
    b: Timeline,
    *,
    labels: tuple[str, str] = ("a", "b"),
    workload_a: str | None = None,
    workload_b: str | None = None,
) -> Comparison:
    """Compare ``a`` (say, ``gpuscale simulate``'s prediction) with ``b`` (``watch``'s record).

    Workloads pair by name; when the names differ and each run has one workload, those
    two pair (the tutorial and its fix may name their Deployments differently). Pass
    ``workload_a``/``workload_b`` to choose. Node series are compared for pools both runs
    know, and left out when both runs had no node in that state.
    """
    diffs: list[SeriesDiff] = []
    for name_a, name_b in _pair_workloads(a, b, workload_a, workload_b):
        title = name_a if name_a == name_b else f"{name_a} / {name_b}"
        for field in ("desired", "spec", "ready"):
            diffs.append(
                compare_steps(
                    f"{field} replicas",
                    workload_series(a, name_a, field),
                    workload_series(b, name_b, field),
                    group=title,
                )
            )
        diffs.append(
            compare_steps(
                "pending pods",
                pod_series(a, name_a, "Pending"),
                pod_series(b, name_b, "Pending"),
                group=title,
            )
        )
    pools_b = node_pools(b)
    for pool in (p for p in node_pools(a) if p in pools_b):
        for state in ("provisioning", "ready"):
            sa, sb = node_series(a, pool, state), node_series(b, pool, state)
            if not any(sa.defined()) and not any(sb.defined()):
                continue
            diffs.append(compare_steps(f"{state} nodes", sa, sb, group=f"pool {pool}"))
    return Comparison(labels=labels, series=tuple(diffs))


def _when(t: float | None) -> str:
    return "never" if t is None else format_duration(t)


@dataclass(frozen=True, slots=True)
class ComparisonTable:
    """A comparison laid out as text cells, for the terminal and HTML renderers."""

    headers: tuple[str, ...]
    sections: tuple[tuple[str, tuple[tuple[str, ...], ...]], ...]
    """``(group, rows)`` in order; each row has one cell per header."""


def comparison_table(comparison: Comparison) -> ComparisonTable:
    """One row per series, grouped by workload and pool: how long and how much the runs
    differed, and when each first reached each count (``2: 1m30s / 2m`` reads
    "2 or more: a at 1m30s, b at 2m")."""
    label_a, label_b = comparison.labels
    groups: dict[str, list[tuple[str, ...]]] = {}
    for diff in comparison.series:
        share = diff.seconds_different / diff.overlap_s if diff.overlap_s else 0.0
        groups.setdefault(diff.group, []).append(
            (
                diff.name,
                f"{format_duration(diff.seconds_different)} of "
                f"{format_duration(diff.overlap_s)} ({share:.0%})",
                f"{diff.max_difference:g}",
                f"{diff.area:g}",
                "; ".join(f"{r.level:g}: {_when(r.a)} / {_when(r.b)}" for r in diff.reach),
            )
        )
    return ComparisonTable(
        headers=(
            "series",
            "differed",
            "max diff",
            "diff × s",
            f"first ≥ n ({label_a} / {label_b})",
        ),
        sections=tuple((group, tuple(rows)) for group, rows in groups.items()),
    )
