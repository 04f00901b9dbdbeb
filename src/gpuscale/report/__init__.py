"""Reports from timelines: text summaries, PNG plots and a self-contained HTML page.

Every world writes the same timeline (:mod:`gpuscale.timeline`), so one report serves
``gpuscale simulate``, ``gpuscale demo`` and ``gpuscale watch``, and sets any
of them side by side. The layer sits at the edge: it turns timeline records into the summary
(:mod:`gpuscale.report.summary`: flaps, time to capacity, pending pod-seconds, GPU-hours,
dollars, latency), draws (matplotlib, imported only when a plot is drawn) and writes files.

The calls a producer makes::

    summary = summary_table(summarize(timeline.records, until=end, pools=timeline.header.pools))
    runs = [ReportRun("tutorial", timeline, summary), ReportRun("fixed", timeline2, summary2)]
    write_report(runs, html="report.html", plots_dir="plots/")  # page + load.png, metric.png...
    report_html(runs)                                           # the page as a string
    compare_timelines(predicted, observed)                      # prediction vs reality

Each name is imported from its module on first use (:func:`gpuscale._lazy.lazy_exports`):
``gpuscale simulate`` prints a summary table without loading the comparison, the page and
the plots.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuscale.report.compare import (
        Comparison,
        ComparisonTable,
        LevelReach,
        SeriesDiff,
        compare_steps,
        compare_timelines,
        comparison_table,
        first_reach,
    )
    from gpuscale.report.output import WrittenReport, report_html, write_report
    from gpuscale.report.page import grid_table, render_html
    from gpuscale.report.plots import PLOT_NAMES, PLOT_TITLES, png_bytes, render_plots
    from gpuscale.report.run import ReportRun, read_timeline
    from gpuscale.report.series import StepSeries
    from gpuscale.report.summary import (
        PendingStats,
        PoolStats,
        Reaction,
        ReplicaStats,
        RequestStats,
        RunStats,
        summarize,
        summary_table,
        timeline_summary,
    )
    from gpuscale.report.tables import (
        Summary,
        SummaryGrid,
        SummaryRow,
        SummarySection,
        format_value,
        side_by_side,
        timeline_basics,
    )
else:
    from gpuscale._lazy import lazy_exports

    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "gpuscale.report.compare": (
                "Comparison",
                "ComparisonTable",
                "LevelReach",
                "SeriesDiff",
                "compare_steps",
                "compare_timelines",
                "comparison_table",
                "first_reach",
            ),
            "gpuscale.report.output": (
                "WrittenReport",
                "report_html",
                "write_report",
            ),
            "gpuscale.report.page": (
                "grid_table",
                "render_html",
            ),
            "gpuscale.report.plots": (
                "PLOT_NAMES",
                "PLOT_TITLES",
                "png_bytes",
                "render_plots",
            ),
            "gpuscale.report.run": (
                "ReportRun",
                "read_timeline",
            ),
            "gpuscale.report.series": ("StepSeries",),
            "gpuscale.report.summary": (
                "PendingStats",
                "PoolStats",
                "Reaction",
                "ReplicaStats",
                "RequestStats",
                "RunStats",
                "summarize",
                "summary_table",
                "timeline_summary",
            ),
            "gpuscale.report.tables": (
                "Summary",
                "SummaryGrid",
                "SummaryRow",
                "SummarySection",
                "format_value",
                "side_by_side",
                "timeline_basics",
            ),
        },
    )

__all__ = [
    "PLOT_NAMES",
    "PLOT_TITLES",
    "Comparison",
    "ComparisonTable",
    "LevelReach",
    "PendingStats",
    "PoolStats",
    "Reaction",
    "ReplicaStats",
    "ReportRun",
    "RequestStats",
    "RunStats",
    "SeriesDiff",
    "StepSeries",
    "Summary",
    "SummaryGrid",
    "SummaryRow",
    "SummarySection",
    "WrittenReport",
    "compare_steps",
    "compare_timelines",
    "comparison_table",
    "first_reach",
    "format_value",
    "grid_table",
    "png_bytes",
    "read_timeline",
    "render_html",
    "render_plots",
    "report_html",
    "side_by_side",
    "summarize",
    "summary_table",
    "timeline_basics",
    "timeline_summary",
    "write_report",
]
