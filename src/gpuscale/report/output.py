"""The report's edge: put plots and page together, and write them to files.

:func:`report_html` renders everything in memory; :func:`write_html_report` and
:func:`write_plot_files` write it. Every file is written to a temporary name in its
directory and renamed into place, so an interrupted run leaves no half-written report
and a failed run leaves the previous one untouched.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from gpuscale.errors import InputError
from gpuscale.report.compare import compare_timelines, comparison_summary
from gpuscale.report.page import MAX_DECISIONS, render_html
from gpuscale.report.plots import render_plots
from gpuscale.report.run import ReportRun

__all__ = ["report_html", "write_html_report", "write_plot_files"]


def report_html(
    runs: Sequence[ReportRun],
    *,
    title: str = "gpuscale report",
    threshold: float | None = None,
    metrics: Sequence[str] | None = None,
    compare: bool = True,
    max_decisions: int = MAX_DECISIONS,
) -> str:
    """The whole report for ``runs`` as one self-contained HTML string.

    With exactly two runs and ``compare``, the page compares the first (say, the
    prediction) with the second (what happened). ``threshold`` overrides the headers'
    trigger thresholds; ``metrics`` picks the metrics plotted against it.
    """
    plots = render_plots(runs, threshold=threshold, metrics=metrics)
    comparison = None
    if compare and len(runs) == 2:
        first, second = runs
        comparison = comparison_summary(
            compare_timelines(first.timeline, second.timeline, labels=(first.label, second.label))
        )
    return render_html(
        runs, plots=plots, title=title, comparison=comparison, max_decisions=max_decisions
    )


def _write_atomically(path: Path, data: bytes) -> None:
    handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed before the rename below
        dir=path.parent, prefix=f".{path.name}.", suffix=".tmp", delete=False
    )
    try:
        with handle:
            handle.write(data)
        os.replace(handle.name, path)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise


def _check_file_target(path: Path) -> None:
    if path.is_dir():
        raise InputError("is a directory", where=str(path), fix="name a file such as report.html")
    if not path.parent.is_dir():
        raise InputError(
            "the directory to write into does not exist",
            where=str(path),
            fix=f"create {path.parent} or choose another path",
        )


def write_html_report(
    path: Path | str,
    runs: Sequence[ReportRun],
    *,
    title: str = "gpuscale report",
    threshold: float | None = None,
    metrics: Sequence[str] | None = None,
    compare: bool = True,
    max_decisions: int = MAX_DECISIONS,
) -> Path:
    """Write :func:`report_html` to ``path`` (replacing it whole) and return the path."""
    target = Path(path)
    _check_file_target(target)
    text = report_html(
        runs,
        title=title,
        threshold=threshold,
        metrics=metrics,
        compare=compare,
        max_decisions=max_decisions,
    )
    try:
        _write_atomically(target, text.encode("utf-8"))
    except OSError as exc:
        raise InputError(f"cannot write ({exc.strerror or exc})", where=str(target)) from None
    return target


def write_plot_files(
    directory: Path | str,
    runs: Sequence[ReportRun],
    *,
    threshold: float | None = None,
    metrics: Sequence[str] | None = None,
) -> list[Path]:
    """Write every plot as ``DIRECTORY/<name>.png`` (names in
    :data:`gpuscale.report.PLOT_NAMES`), creating the directory; returns the paths."""
    folder = Path(directory)
    if folder.exists() and not folder.is_dir():
        raise InputError(
            "exists and is not a directory", where=str(folder), fix="name a directory for --plots"
        )
    plots = render_plots(runs, threshold=threshold, metrics=metrics)
    written = []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in plots.items():
            target = folder / f"{name}.png"
            _write_atomically(target, data)
            written.append(target)
    except OSError as exc:
        raise InputError(f"cannot write ({exc.strerror or exc})", where=str(folder)) from None
    return written
