"""The work of ``gpuscale report``: summarise timelines, compare two, write the HTML page
and PNGs.

Reads one or more timeline files (from ``gpuscale simulate --timeline``, ``demo`` or
``watch --timeline``), prints their summaries side by side (``-o json`` for the same as
JSON) and, with exactly two, how the second differed from the first. ``--html`` writes the
self-contained page, ``--plots DIR`` the PNGs. Files are written before anything is
printed, and whole or not at all. The command's options are in
:mod:`gpuscale.cli.report_cmd`, which imports this module only when the command runs.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from gpuscale.cli._tables import grid_table
from gpuscale.errors import InputError
from gpuscale.report import (
    Comparison,
    ReportRun,
    compare_timelines,
    comparison_table,
    read_timeline,
    side_by_side,
    timeline_summary,
    write_report,
)
from gpuscale.report.series import run_end

__all__ = ["execute"]


def _labels(paths: list[Path], given: list[str], metas: list[Any]) -> list[str]:
    if given and len(given) != len(paths):
        raise InputError(
            f"{len(given)} --label for {len(paths)} timelines",
            where="--label",
            fix="give one --label per timeline, in the same order, or none",
        )
    if given:
        return given
    labels = []
    for path, meta in zip(paths, metas, strict=True):
        label = meta.get("label")
        labels.append(label if isinstance(label, str) and label else path.stem)
    if len(set(labels)) != len(labels):
        return [str(p) for p in paths]
    return labels


def execute(
    *,
    timelines: list[Path],
    html: Path | None,
    plots: Path | None,
    label: list[str] | None,
    threshold: float | None,
    title: str,
    output: str,
) -> None:
    """Run ``gpuscale report`` with the options of
    :func:`gpuscale.cli.report_cmd.report_command`."""
    if output not in ("text", "json"):
        raise InputError(
            f"unknown output format {output!r}", where="--output", fix="use -o text or -o json"
        )
    if threshold is not None and not math.isfinite(threshold):
        raise InputError(
            f"must be a finite number, not {threshold}",
            where="--threshold",
            fix="e.g. --threshold 80, or leave it out to draw the timelines' own",
        )
    if label is not None and any(not name.strip() for name in label):
        raise InputError(
            "a label cannot be empty", where="--label", fix="give each timeline a visible name"
        )
    decoded = [read_timeline(path) for path in timelines]
    for path, timeline in zip(timelines, decoded, strict=True):
        if not timeline.records:
            raise InputError(
                "the timeline holds no records, only its header (a run that stopped before "
                "its first record)",
                where=str(path),
                fix="run gpuscale simulate --timeline or watch --timeline again until it "
                "records something",
            )
    labels = _labels(timelines, label or [], [t.header.meta for t in decoded])
    # the simulator's summary, computed from the records alone (request logs are not in a
    # timeline), for simulated and live timelines alike
    summaries = [timeline_summary(timeline, run_end(timeline)) for timeline in decoded]
    runs = [
        ReportRun(label=name, timeline=timeline, summary=summary, source=str(path))
        for name, timeline, summary, path in zip(labels, decoded, summaries, timelines, strict=True)
    ]
    comparison: Comparison | None = None
    if len(runs) == 2:
        comparison = compare_timelines(
            runs[0].timeline, runs[1].timeline, labels=(labels[0], labels[1])
        )

    done = write_report(runs, html=html, plots_dir=plots, title=title, threshold=threshold)
    written: dict[str, Any] = {}
    if done.plots:
        written["plots"] = [str(f) for f in done.plots]
        sys.stderr.write(f"gpuscale: wrote {len(done.plots)} plots into {plots}\n")
    if done.html is not None:
        written["html"] = str(done.html)
        sys.stderr.write(f"gpuscale: wrote {done.html}\n")

    if output == "json":
        document = {
            "runs": [
                {
                    "label": run.label,
                    "source": run.source,
                    "world": run.timeline.header.world,
                    "summary": summary.as_json(),
                }
                for run, summary in zip(runs, summaries, strict=True)
            ],
            "comparison": None if comparison is None else comparison.as_json(),
            "written": written,
        }
        sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
        return
    console = Console(highlight=False)
    console.print(grid_table(side_by_side(labels, summaries), "Summary"))
    if comparison is not None:
        laid_out = comparison_table(comparison)
        table = Table(title=f"Comparison: {labels[0]} vs {labels[1]}", title_justify="left")
        for index, header in enumerate(laid_out.headers):
            table.add_column(
                header,
                justify="left" if index in (0, 4) else "right",
                overflow="fold",
                no_wrap=index in (2, 3),
            )
        for group, rows in laid_out.sections:
            if group:
                table.add_row(Text(group, style="bold"), *([""] * (len(laid_out.headers) - 1)))
            for row in rows:
                table.add_row(f"  {row[0]}", *row[1:])
        console.print(table)
