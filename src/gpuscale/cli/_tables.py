"""Summaries side by side as a rich table, for ``simulate``, ``demo`` and ``report``.

One renderer, so the three commands print the same layout. A row's label never wraps
(a wrapped ``…: to Ready capacity`` read like a section heading of its own); the note
column folds instead.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from gpuscale.report import SummaryGrid, format_value

__all__ = ["grid_table"]


def grid_table(grid: SummaryGrid, title: str) -> Table:
    """``grid`` as a rich table: one column per run, a bold row per section."""
    table = Table(title=title, title_justify="left", show_lines=False)
    table.add_column("", no_wrap=True)
    for column in grid.columns:
        table.add_column(column, justify="right", no_wrap=True)
    table.add_column("note", style="dim", overflow="fold")
    for section in grid.sections:
        table.add_row(Text(section.title, style="bold"), *([""] * (len(grid.columns) + 1)))
        for row in section.rows:
            table.add_row(f"  {row.label}", *(format_value(v) for v in row.values), row.note)
    return table
