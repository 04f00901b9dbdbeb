"""Summary tables as the renderers take them: sections of (label, value, note) rows.

The numbers come from :mod:`gpuscale.report.summary` (replica flaps, time to capacity,
pending pod-seconds, GPU-hours, dollars, latency percentiles, from the timeline records),
which builds a :class:`Summary`; the text, JSON and HTML renderers only lay it out.
:func:`side_by_side` lines several runs' summaries up in columns (the tutorial next to its
fix, a prediction next to what the cluster did).

:func:`timeline_basics` is the one exception: a handful of facts read directly off a
timeline (duration, replica min/max/final, nodes per pool, last cost) so that
the HTML page has something to show for a run handed to it without a summary. It is
deliberately small; anything statistical belongs to :mod:`gpuscale.report.summary`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gpuscale.kube import format_duration
from gpuscale.report.series import (
    node_pools,
    node_series,
    pod_series,
    run_end,
    workload_names,
    workload_series,
)
from gpuscale.timeline import NODE_STATES, Timeline

__all__ = [
    "Summary",
    "SummaryGrid",
    "SummaryGridRow",
    "SummaryGridSection",
    "SummaryRow",
    "SummarySection",
    "SummaryValue",
    "format_value",
    "side_by_side",
    "timeline_basics",
]

SummaryValue = str | int | float | None
"""A cell: text already formatted by its producer (``"$3.98"``, ``"5m30s"``), a number, or
None for "not applicable"."""


@dataclass(frozen=True, slots=True)
class SummaryRow:
    """One line of a summary."""

    label: str
    """What the value is, e.g. ``replicas max`` or ``time to Ready capacity``."""
    value: SummaryValue
    """The value; strings are shown as given, numbers formatted by :func:`format_value`."""
    note: str = ""
    """Why or how, e.g. ``pods Pending: no node fits amd.com/gpu``; may be empty."""


@dataclass(frozen=True, slots=True)
class SummarySection:
    """A titled group of rows (``Replicas``, ``Nodes``, ``Cost``...)."""

    title: str
    """Heading of the section; sections of several runs with equal titles line up."""
    rows: tuple[SummaryRow, ...]
    """The rows, in display order; rows of several runs with equal labels line up."""


@dataclass(frozen=True, slots=True)
class Summary:
    """Everything one run's summary says, in display order."""

    sections: tuple[SummarySection, ...]
    """The sections, in display order."""

    def as_json(self) -> list[dict[str, Any]]:
        """The summary as JSON-ready lists and dicts (values keep their type)."""
        return [
            {
                "title": section.title,
                "rows": [
                    {"label": row.label, "value": row.value, "note": row.note}
                    for row in section.rows
                ],
            }
            for section in self.sections
        ]


@dataclass(frozen=True, slots=True)
class SummaryGridRow:
    """One label across several runs."""

    label: str
    values: tuple[SummaryValue, ...]
    """One value per column; None where that run's summary has no such row."""
    note: str
    """The runs' distinct non-empty notes, joined with ``; ``."""


@dataclass(frozen=True, slots=True)
class SummaryGridSection:
    """One section across several runs."""

    title: str
    rows: tuple[SummaryGridRow, ...]


@dataclass(frozen=True, slots=True)
class SummaryGrid:
    """Several summaries side by side: one column per run."""

    columns: tuple[str, ...]
    """The runs' labels, in column order."""
    sections: tuple[SummaryGridSection, ...]


def side_by_side(columns: Sequence[str], summaries: Sequence[Summary]) -> SummaryGrid:
    """Line ``summaries`` up by section title and row label, one column per run.

    Sections and rows keep the order in which they first appear across the runs.
    """
    if len(columns) != len(summaries):
        raise ValueError("one column label per summary")
    cells: dict[str, dict[str, list[SummaryRow | None]]] = {}
    for index, summary in enumerate(summaries):
        for section in summary.sections:
            rows = cells.setdefault(section.title, {})
            for row in section.rows:
                rows.setdefault(row.label, [None] * len(summaries))[index] = row
    return SummaryGrid(
        columns=tuple(columns),
        sections=tuple(
            SummaryGridSection(
                title=title,
                rows=tuple(
                    SummaryGridRow(
                        label=label,
                        values=tuple(None if r is None else r.value for r in found),
                        note="; ".join(
                            dict.fromkeys(r.note for r in found if r is not None and r.note)
                        ),
                    )
                    for label, found in rows.items()
                ),
            )
            for title, rows in cells.items()
        ),
    )


def format_value(value: SummaryValue) -> str:
    """A cell as text: strings as given, integers with thousands separators, floats with
    four significant digits (whole numbers above 10,000), None as an em dash."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if abs(value) >= 10_000:
            return f"{value:,.0f}"
        return f"{value:.4g}"
    return value


def _int_range(values: list[float]) -> tuple[int | None, int | None]:
    if not values:
        return None, None
    return int(min(values)), int(max(values))


def timeline_basics(timeline: Timeline) -> Summary:
    """Facts read directly off ``timeline``: duration, replicas, nodes per pool, last cost.

    A stand-in for runs that come without the simulator's summary (``gpuscale report`` on a
    file, a live ``watch`` timeline); it takes minima, maxima and last values only.
    """
    records = timeline.records
    end = run_end(timeline)
    sections = [
        SummarySection(
            "Run",
            (
                SummaryRow("world", timeline.header.world),
                SummaryRow("duration", format_duration(end)),
                SummaryRow("records", len(records)),
                SummaryRow("controller decisions", sum(len(r.decisions) for r in records)),
            ),
        )
    ]
    for name in workload_names(timeline):
        spec = workload_series(timeline, name, "spec").defined()
        ready = workload_series(timeline, name, "ready").defined()
        pending = pod_series(timeline, name, "Pending").defined()
        low, high = _int_range(spec)
        sections.append(
            SummarySection(
                f"Workload {name}",
                (
                    SummaryRow("replicas min", low, "spec.replicas"),
                    SummaryRow("replicas max", high, "spec.replicas"),
                    SummaryRow("final replicas", None if not spec else int(spec[-1])),
                    SummaryRow("final ready", None if not ready else int(ready[-1])),
                    SummaryRow("pending pods max", _int_range(pending)[1]),
                ),
            )
        )
    pools = node_pools(timeline)
    if pools:
        rows = []
        for pool in pools:
            per_state = [node_series(timeline, pool, s).defined() for s in NODE_STATES]
            totals = [sum(counts) for counts in zip(*per_state, strict=True)]
            rows.append(SummaryRow(f"{pool} nodes max", _int_range(totals)[1], "in any state"))
        sections.append(SummarySection("Nodes", tuple(rows)))
    last_t = records[-1].t if records else 0.0
    sections.append(
        SummarySection(
            "Cost",
            (
                SummaryRow(
                    "dollars",
                    f"${records[-1].cost_usd:,.2f}" if records else None,
                    f"at the last record ({format_duration(last_t)})",
                ),
            ),
        )
    )
    return Summary(tuple(sections))
