"""The report's plots, drawn from timeline records with matplotlib's Agg renderer.

Six plots, each with a stable name (:data:`PLOT_NAMES`, the file stems ``--plots DIR``
writes): the load, the trigger's metric against its threshold, desired/spec/ready
replicas, pending pods, nodes per pool by state, and cost. Several runs share the axes,
one colour per run, so a comparison ("tutorial" vs "fixed", "simulate" vs "live") reads
at a glance. Values hold between records, so everything but cost is drawn as steps;
cost grows with the nodes up between records and is drawn point to point.

matplotlib is imported inside the functions, so importing :mod:`gpuscale.report` costs the
CLI nothing. Figures are built with :class:`matplotlib.figure.Figure` directly (no pyplot,
no global figure registry, the user's backend untouched), under matplotlib's default style
whatever the user's matplotlibrc says, at a fixed size and DPI, and saved without the
software/date metadata, so the same timelines give byte-identical PNGs on one machine
and matplotlib version.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from gpuscale.report.hpa import per_replica_values
from gpuscale.report.run import ReportRun
from gpuscale.report.series import (
    StepSeries,
    cost_series,
    load_keys,
    load_series,
    metric_names,
    node_pools,
    node_series,
    pod_series,
    run_end,
    workload_metric_series,
    workload_names,
    workload_series,
)
from gpuscale.timeline import Timeline

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "DPI",
    "PLOT_NAMES",
    "PLOT_NOTES",
    "PLOT_TITLES",
    "figure_cost",
    "figure_load",
    "figure_metric",
    "figure_nodes",
    "figure_pending",
    "figure_replicas",
    "png_bytes",
    "render_plots",
    "thresholds_for",
]

DPI = 100
PLOT_NAMES = ("load", "metric", "replicas", "pending", "nodes", "cost")
PLOT_TITLES: Mapping[str, str] = {
    "load": "Load over time",
    "metric": "Trigger metric vs threshold",
    "replicas": "Replicas: desired, spec, ready",
    "pending": "Pending pods",
    "nodes": "Nodes per pool by state",
    "cost": "Cost so far",
}
PLOT_NOTES: Mapping[str, str] = {
    "load": "The load the run was driven with; values hold until the next record.",
    "metric": (
        "The trigger query's value (query:), what the HPA read (hpa:) and, under an "
        "AverageValue target, what the HPA compares with its target: what it read ÷ the "
        "replicas (hpa: ÷ replicas), against the target per replica, so it wants "
        "ceil(replicas × per replica / target); values hold until the next record."
    ),
    "replicas": (
        "desired: the HPA's desiredReplicas (dotted); spec: spec.replicas (dashed); "
        "ready: pods with the Ready condition (solid)."
    ),
    "pending": "Pods not bound to a node: waiting for a node that fits their requests.",
    "nodes": "Nodes per pool: ready (solid), provisioning (dashed), deleting (dotted).",
    "cost": (
        "Dollars spent on nodes since the start, as recorded; joined point to point "
        "between records."
    ),
}
_WIDTH, _HEIGHT = 9.0, 3.4
_FIELD_STYLES = {"desired": ":", "spec": "--", "ready": "-"}
_NODE_STYLES = {"ready": "-", "provisioning": "--", "deleting": ":"}
_SERIES_STYLES = ("-", "--", ":", "-.")
_HOURS_FROM = 3 * 3600.0


@contextmanager
def _default_style() -> Iterator[None]:
    import matplotlib as mpl  # noqa: PLC0415 - kept out of the CLI's import time
    import matplotlib.style  # noqa: PLC0415

    with matplotlib.style.context("default"), mpl.rc_context({"svg.hashsalt": "gpuscale"}):
        yield


def _new_figure(rows: int = 1, *, legend_lines: int = 0) -> tuple[Figure, list[Axes]]:
    """A figure of ``rows`` subplots; ``legend_lines`` > 0 keeps room for a legend of that
    many lines under the axes (long labels) instead of on the right."""
    from matplotlib.figure import Figure  # noqa: PLC0415

    height = _HEIGHT if rows == 1 else min(2.4 * rows + 0.6, 12.0)
    below = 0.2 * legend_lines + 0.25 if legend_lines else 0.0
    height += below
    figure = Figure(figsize=(_WIDTH, height), dpi=DPI)
    # Fixed margins in inches (room on the right or below for the legend): one draw per
    # save, where a layout engine would draw twice.
    figure.subplots_adjust(
        left=0.75 / _WIDTH,
        right=1 - (0.3 if legend_lines else 2.35) / _WIDTH,
        top=1 - 0.45 / height,
        bottom=(0.55 + below) / height,
        hspace=0.3,
    )
    axes = figure.subplots(rows, 1, sharex=True, squeeze=False)
    return figure, [row[0] for row in axes]


def _end(runs: Sequence[ReportRun]) -> float:
    return max((run_end(r.timeline) for r in runs), default=0.0)


def _time_unit(runs: Sequence[ReportRun]) -> tuple[float, str]:
    longest = _end(runs)
    return (3600.0, "hours") if longest > _HOURS_FROM else (60.0, "minutes")


def _color(index: int) -> str:
    return f"C{index % 10}"


def _width(index: int, count: int) -> float:
    """Earlier runs are drawn wider, so where runs agree every colour still shows."""
    return min(1.5 + 1.1 * (count - 1 - index), 3.7)


def _nan(value: float | None) -> float:
    return math.nan if value is None else value


def _step(
    axes: Axes,
    series: StepSeries,
    scale: float,
    *,
    label: str,
    color: str,
    style: str,
    width: float,
) -> bool:
    if not series.times or series.is_empty():
        return False
    xs = [t / scale for t in series.times]
    ys = [_nan(v) for v in series.values]
    if series.end > series.times[-1]:
        xs.append(series.end / scale)
        ys.append(ys[-1])
    axes.step(xs, ys, where="post", label=label, color=color, linestyle=style, linewidth=width)
    return True


def _integer_ticks(axes: Axes) -> None:
    from matplotlib.ticker import MaxNLocator  # noqa: PLC0415

    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_ylim(bottom=0, top=max(axes.get_ylim()[1], 1.05))


def _finish(
    figure: Figure,
    axes: list[Axes],
    title: str,
    unit: str,
    *,
    drawn: bool,
    empty: str,
    end: float = 0.0,
    legend_below: bool = False,
) -> Figure:
    """Title, labels, grid and legend; the time axis runs from 0 to ``end`` (the longest
    run's end in the plot's unit), so every plot spans the whole run."""
    figure.suptitle(title)
    axes[-1].set_xlabel(f"time ({unit})")
    for ax in axes:
        ax.grid(visible=True, alpha=0.3)
        ax.set_xlim(left=0, right=end if end > 0 else None)
        if not ax.get_legend_handles_labels()[0]:
            continue
        if legend_below:
            ax.legend(
                loc="upper left",
                bbox_to_anchor=(0.0, -0.55 / ax.get_position().height / figure.get_figheight()),
                fontsize="small",
                ncol=2,
                frameon=False,
            )
        else:
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    if not drawn:
        axes[0].text(0.5, 0.5, empty, transform=axes[0].transAxes, ha="center", va="center")
    return figure


def _workload_label(run: ReportRun, workload: str, several: bool) -> str:
    return f"{run.label} {workload}" if several else run.label


def figure_load(runs: Sequence[ReportRun]) -> Figure:
    """The load (``request_rate``, gauge values set by the scenario), one subplot per name."""
    with _default_style():
        scale, unit = _time_unit(runs)
        keys = list(dict.fromkeys(k for r in runs for k in load_keys(r.timeline)))
        figure, axes = _new_figure(max(len(keys), 1))
        drawn = False
        for ax, key in zip(axes, keys, strict=False):
            for index, run in enumerate(runs):
                drawn |= _step(
                    ax,
                    load_series(run.timeline, key),
                    scale,
                    label=run.label,
                    color=_color(index),
                    width=_width(index, len(runs)),
                    style="-",
                )
            ax.set_ylabel(key)
        return _finish(
            figure,
            axes,
            PLOT_TITLES["load"],
            unit,
            drawn=drawn,
            end=_end(runs) / scale,
            empty="no load values in these timelines",
        )


def thresholds_for(timeline: Timeline, metric: str) -> float | None:
    """The trigger threshold the header gives for ``metric``.

    Read from ``meta["thresholds"]`` (a mapping keyed by the metric's full name,
    ``query:s0-prometheus``, or its bare name, ``s0-prometheus``), else ``meta["threshold"]``.
    """
    meta = timeline.header.meta
    table = meta.get("thresholds")
    if isinstance(table, Mapping):
        bare = metric.split(":", 1)[1] if ":" in metric else metric
        for key in (metric, bare):
            found = table.get(key)
            if (number := _number(found)) is not None:
                return number
    single = meta.get("threshold")
    return _number(single)


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
        return number if math.isfinite(number) else None
    return None


def _chosen_metrics(timeline: Timeline, metrics: Sequence[str] | None) -> list[str]:
    names = metric_names(timeline)
    if metrics is not None:
        return [m for m in metrics if m in names]
    trigger = [m for m in names if m.startswith(("query:", "hpa:"))]
    return trigger or list(names)


def figure_metric(
    runs: Sequence[ReportRun],
    *,
    threshold: float | None = None,
    metrics: Sequence[str] | None = None,
) -> Figure:
    """The trigger query's value (``query:*``) and what the HPA read (``hpa:*``) against the
    threshold: ``threshold`` when given, else each header's (see :func:`thresholds_for`).

    ``metrics`` picks metric names; by default every ``query:``/``hpa:`` metric, or every
    metric when there are none of those.
    """
    with _default_style():
        scale, unit = _time_unit(runs)
        drawing: list[tuple[StepSeries, str, int, str]] = []
        lines: dict[float, list[str]] = {}
        averaged: set[str] = set()
        for index, run in enumerate(runs):
            workloads = workload_names(run.timeline)
            chosen = _chosen_metrics(run.timeline, metrics)
            records = run.timeline.records
            number = 0
            for workload in workloads:
                name = _workload_label(run, workload, len(workloads) > 1)
                for metric in chosen:
                    series = workload_metric_series(run.timeline, workload, metric)
                    read = " (what the HPA read)" if metric.startswith("hpa:") else ""
                    drawing.append((series, f"{name} {metric}{read}", index, _style(number)))
                    number += 1
                    bare = metric.split(":", 1)[-1]
                    per = (
                        per_replica_values(records, workload, bare)
                        if metric.startswith("hpa:")
                        else None
                    )
                    if per is not None:
                        averaged.add(bare)
                        divided = StepSeries(series.times, tuple(per), series.end)
                        label = f"{name} {metric} ÷ replicas (per replica)"
                        drawing.append((divided, label, index, _style(number)))
                        number += 1
            for metric in chosen:
                level = threshold if threshold is not None else thresholds_for(run.timeline, metric)
                if level is not None:
                    bare = metric.split(":", 1)[-1]
                    names = lines.setdefault(level, [])
                    if bare not in names:
                        names.append(bare)
        labels = len(drawing) + len(lines)
        figure, axes = _new_figure(legend_lines=math.ceil(labels / 2))
        ax = axes[0]
        drawn = False
        for series, label, index, style in drawing:
            drawn |= _step(
                ax,
                series,
                scale,
                label=label,
                color=_color(index),
                width=_width(index, len(runs)),
                style=style,
            )
        for level, names in sorted(lines.items()):
            per_replica = " per replica" if any(n in averaged for n in names) else ""
            ax.axhline(
                level,
                color="black",
                linestyle=(0, (6, 3)),
                linewidth=1.0,
                label=f"target {level:g}{per_replica} ({', '.join(names)})",
            )
        ax.set_ylabel("value")
        return _finish(
            figure,
            axes,
            PLOT_TITLES["metric"],
            unit,
            drawn=drawn,
            empty="no metric values in these timelines",
            end=_end(runs) / scale,
            legend_below=True,
        )


def _style(number: int) -> str:
    return _SERIES_STYLES[number % len(_SERIES_STYLES)]


def figure_replicas(runs: Sequence[ReportRun]) -> Figure:
    """Desired (the HPA's), spec and ready replicas of every workload, as steps."""
    with _default_style():
        scale, unit = _time_unit(runs)
        figure, axes = _new_figure()
        ax = axes[0]
        drawn = False
        for index, run in enumerate(runs):
            workloads = workload_names(run.timeline)
            for workload in workloads:
                name = _workload_label(run, workload, len(workloads) > 1)
                for field, style in _FIELD_STYLES.items():
                    drawn |= _step(
                        ax,
                        workload_series(run.timeline, workload, field),
                        scale,
                        label=f"{name} {field}",
                        color=_color(index),
                        width=_width(index, len(runs)),
                        style=style,
                    )
        ax.set_ylabel("replicas")
        _integer_ticks(ax)
        return _finish(
            figure,
            axes,
            PLOT_TITLES["replicas"],
            unit,
            drawn=drawn,
            end=_end(runs) / scale,
            empty="no workloads in these timelines",
        )


def figure_pending(runs: Sequence[ReportRun]) -> Figure:
    """Pods in phase ``Pending`` (not bound to a node) per workload."""
    with _default_style():
        scale, unit = _time_unit(runs)
        figure, axes = _new_figure()
        ax = axes[0]
        drawn = False
        for index, run in enumerate(runs):
            workloads = workload_names(run.timeline)
            for number, workload in enumerate(workloads):
                drawn |= _step(
                    ax,
                    pod_series(run.timeline, workload, "Pending"),
                    scale,
                    label=_workload_label(run, workload, len(workloads) > 1),
                    color=_color(index),
                    width=_width(index, len(runs)),
                    style=_SERIES_STYLES[number % len(_SERIES_STYLES)],
                )
        ax.set_ylabel("pending pods")
        _integer_ticks(ax)
        return _finish(
            figure,
            axes,
            PLOT_TITLES["pending"],
            unit,
            drawn=drawn,
            end=_end(runs) / scale,
            empty="no workloads in these timelines",
        )


def figure_nodes(runs: Sequence[ReportRun]) -> Figure:
    """Nodes per pool (one subplot each) by state; states a run never had are left out."""
    with _default_style():
        scale, unit = _time_unit(runs)
        pools = list(dict.fromkeys(p for r in runs for p in node_pools(r.timeline)))
        figure, axes = _new_figure(max(len(pools), 1))
        drawn = False
        for ax, pool in zip(axes, pools, strict=False):
            for index, run in enumerate(runs):
                for state, style in _NODE_STYLES.items():
                    series = node_series(run.timeline, pool, state)
                    if state != "ready" and not any(series.defined()):
                        continue
                    drawn |= _step(
                        ax,
                        series,
                        scale,
                        label=f"{run.label} {state}",
                        color=_color(index),
                        width=_width(index, len(runs)),
                        style=style,
                    )
            ax.set_ylabel(f"{pool} nodes")
            _integer_ticks(ax)
        return _finish(
            figure,
            axes,
            PLOT_TITLES["nodes"],
            unit,
            drawn=drawn,
            end=_end(runs) / scale,
            empty="no node pools in these timelines",
        )


def figure_cost(runs: Sequence[ReportRun]) -> Figure:
    """Dollars spent so far, joined point to point between records."""
    with _default_style():
        scale, unit = _time_unit(runs)
        figure, axes = _new_figure()
        ax = axes[0]
        drawn = False
        for index, run in enumerate(runs):
            series = cost_series(run.timeline)
            if not series.times:
                continue
            ax.plot(
                [t / scale for t in series.times],
                [_nan(v) for v in series.values],
                label=run.label,
                color=_color(index),
                linewidth=_width(index, len(runs)),
            )
            drawn = True
        ax.set_ylabel("US dollars")
        ax.set_ylim(bottom=0)
        return _finish(
            figure,
            axes,
            PLOT_TITLES["cost"],
            unit,
            drawn=drawn,
            end=_end(runs) / scale,
            empty="no records in these timelines",
        )


def png_bytes(figure: Figure) -> bytes:
    """``figure`` as PNG bytes, at :data:`DPI`, without software or date metadata."""
    with _default_style():
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
        return buffer.getvalue()


def render_plots(
    runs: Sequence[ReportRun],
    *,
    threshold: float | None = None,
    metrics: Sequence[str] | None = None,
) -> dict[str, bytes]:
    """Every plot as PNG bytes, keyed by its name in :data:`PLOT_NAMES` order."""
    if not runs:
        raise ValueError("render_plots needs at least one run")
    figures = {
        "load": lambda: figure_load(runs),
        "metric": lambda: figure_metric(runs, threshold=threshold, metrics=metrics),
        "replicas": lambda: figure_replicas(runs),
        "pending": lambda: figure_pending(runs),
        "nodes": lambda: figure_nodes(runs),
        "cost": lambda: figure_cost(runs),
    }
    return {name: png_bytes(figures[name]()) for name in PLOT_NAMES}
