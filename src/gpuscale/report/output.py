"""The report's edge: put plots and page together, and write them to files.

:func:`report_html` renders the page in memory; :func:`write_report` renders the plots
once and writes the page and/or the PNGs. Both targets are checked before anything is
drawn, and every file is written to a temporary name in its directory and renamed into
place, so an interrupted or failed run leaves no half-written file and the previous
report untouched.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from gpuscale._files import write_atomically
from gpuscale.errors import InputError
from gpuscale.report.compare import compare_timelines, comparison_table
from gpuscale.report.page import MAX_DECISIONS, render_html
from gpuscale.report.plots import PLOT_NAMES, render_plots
from gpuscale.report.run import ReportRun

__all__ = ["WrittenReport", "report_html", "write_report"]


@dataclass(frozen=True, slots=True)
class WrittenReport:
    """What :func:`write_report` wrote."""

    html: Path | None
    """The HTML page, when one was asked for."""
    plots: tuple[Path, ...]
    """The PNG files, in :data:`~gpuscale.report.PLOT_NAMES` order (empty when not asked)."""


def report_html(
    runs: Sequence[ReportRun],
    *,
    title: str = "gpuscale report",
    threshold: float | None = None,
    metrics: Sequence[str] | None = None,
    compare: bool = True,
    max_decisions: int = MAX_DECISIONS,
    plots: Mapping[str, bytes] | None = None,
) -> str:
    """The whole report for ``runs`` as one self-contained HTML string.

    With exactly two runs and ``compare``, the page compares the first (say, the
    prediction) with the second (what happened). ``threshold`` overrides the headers'
    trigger thresholds; ``metrics`` picks the metrics plotted against it. ``plots`` reuses
    PNGs already drawn by :func:`~gpuscale.report.render_plots` for the same runs.
    """
    if plots is None:
        plots = render_plots(runs, threshold=threshold, metrics=metrics)
    comparison = None
    if compare and len(runs) == 2:
        first, second = runs
        comparison = comparison_table(
            compare_timelines(first.timeline, second.timeline, labels=(first.label, second.label))
        )
    return render_html(
        runs, plots=plots, title=title, comparison=comparison, max_decisions=max_decisions
    )


def _check_html_target(path: Path) -> None:
    if path.is_dir():
        raise InputError(
            "is a directory", where=str(path), fix="name a file for --html, such as report.html"
        )
    if not path.parent.is_dir():
        raise InputError(
            "the directory to write into does not exist",
            where=str(path),
            fix=f"create {path.parent} or choose another path",
        )


def _check_plots_target(folder: Path) -> None:
    if folder.exists() and not folder.is_dir():
        raise InputError(
            "exists and is not a directory", where=str(folder), fix="name a directory for --plots"
        )
    existing = next((p for p in folder.parents if p.exists()), None)
    if existing is not None and not existing.is_dir():
        raise InputError(
            f"{existing} is a file, so the directory cannot be created",
            where=str(folder),
            fix="name a directory for --plots",
        )


def write_report(
    runs: Sequence[ReportRun],
    *,
    html: Path | str | None = None,
    plots_dir: Path | str | None = None,
    title: str = "gpuscale report",
    threshold: float | None = None,
    metrics: Sequence[str] | None = None,
    compare: bool = True,
    max_decisions: int = MAX_DECISIONS,
) -> WrittenReport:
    """Write the HTML page to ``html`` and/or every plot as ``plots_dir/<name>.png``.

    The plot directory is created when missing; existing files of the same names are
    replaced whole. Unwritable targets are an :class:`~gpuscale.errors.InputError`
    naming the path, raised before anything is drawn or written.
    """
    page = None if html is None else Path(html)
    folder = None if plots_dir is None else Path(plots_dir)
    if page is not None:
        _check_html_target(page)
    if folder is not None:
        _check_plots_target(folder)
    if page is None and folder is None:
        return WrittenReport(html=None, plots=())
    plots = render_plots(runs, threshold=threshold, metrics=metrics)
    written: list[Path] = []
    if folder is not None:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            for name in PLOT_NAMES:
                write_atomically(folder / f"{name}.png", plots[name])
                written.append(folder / f"{name}.png")
        except OSError as exc:
            raise InputError(
                f"cannot write ({exc.strerror or exc})",
                where=str(folder),
                fix="name a writable directory for --plots",
            ) from None
    if page is not None:
        text = report_html(
            runs,
            title=title,
            compare=compare,
            max_decisions=max_decisions,
            plots=plots,
        )
        try:
            write_atomically(page, text.encode("utf-8"))
        except OSError as exc:
            raise InputError(
                f"cannot write ({exc.strerror or exc})",
                where=str(page),
                fix="name a writable file for --html",
            ) from None
    return WrittenReport(html=page, plots=tuple(written))
