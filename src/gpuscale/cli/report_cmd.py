"""``gpuscale report``: summarise timelines, compare two, write the HTML page and PNGs.

This module holds only the command's options, so that ``gpuscale --help`` and
``gpuscale report --help`` import nothing heavy; the work is in
:mod:`gpuscale.cli._report`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gpuscale.cli.main import app

__all__ = ["report_command"]


@app.command("report")
def report_command(
    *,
    timelines: Annotated[
        list[Path],
        typer.Argument(
            metavar="FILE",
            help="Timeline files (JSON Lines) from simulate, demo or watch.",
            show_default=False,
        ),
    ],
    html: Annotated[
        Path | None,
        typer.Option(
            "--html",
            metavar="FILE",
            help="Write the self-contained HTML report here.",
            show_default=False,
        ),
    ] = None,
    plots: Annotated[
        Path | None,
        typer.Option(
            "--plots",
            metavar="DIR",
            help="Write the plots as PNG files into this directory.",
            show_default=False,
        ),
    ] = None,
    label: Annotated[
        list[str] | None,
        typer.Option(
            "--label",
            metavar="TEXT",
            help="Name of each timeline in tables and legends, once per file in order.",
            show_default=False,
        ),
    ] = None,
    threshold: Annotated[
        float | None,
        typer.Option(
            "--threshold",
            metavar="NUMBER",
            help="Trigger threshold to draw (default: the timelines' own).",
            show_default=False,
        ),
    ] = None,
    title: Annotated[
        str, typer.Option("--title", metavar="TEXT", help="Title of the HTML page.")
    ] = "gpuscale report",
    output: Annotated[
        str, typer.Option("--output", "-o", metavar="text|json", help="text or json.")
    ] = "text",
) -> None:
    """Summarise timelines side by side; compare two; write the HTML report and PNG plots.

    Documentation: docs/commands/report.md.

    [bold]Examples[/bold]

      gpuscale report gpuscale-demo/*.jsonl
      gpuscale report before.jsonl after.jsonl --label before --label after \\
          --html report.html --plots plots/
    """
    from gpuscale.cli import _report  # noqa: PLC0415 - heavy; see module doc

    _report.execute(
        timelines=timelines,
        html=html,
        plots=plots,
        label=label,
        threshold=threshold,
        title=title,
        output=output,
    )
