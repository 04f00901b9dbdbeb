"""The HTML report: one self-contained page that opens offline and can be mailed around.

The page holds a title, the provenance of each run (from the timeline headers), the
summaries side by side, the comparison of two runs when there are exactly two, the plots
as base64 PNGs, every controller decision (in collapsible ``<details>``; an HPA decision
leads with its arithmetic from :mod:`gpuscale.report.hpa`, the demo's words), what the runs
modelled approximately, and the attribution a replayed trace requires. Inline CSS, no
script, no external asset; every piece of text passes through :func:`html.escape`.

Header ``meta`` keys read here (writers: ``gpuscale simulate``, ``demo``, ``watch``):

- ``approximations``: a string or list of strings, listed under "Approximations";
- ``attribution``: a string or list of strings (the citation a trace's licence asks for);
- ``thresholds`` / ``threshold``: the trigger thresholds (see
  :func:`gpuscale.report.plots.thresholds_for`);
- ``duration_s``: seconds the run covered, when later than its last record;
- every other key is shown as provenance (``manifests``, ``profile``, ``scenario``,
  ``trace``, ``seed``, ``gpuscale_version``...).

Rendering is pure (:func:`render_html` returns the text); writing is
:func:`gpuscale.report.write_report`.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

from gpuscale import __version__
from gpuscale.kube import format_duration
from gpuscale.report.compare import ComparisonTable
from gpuscale.report.hpa import hpa_step
from gpuscale.report.plots import PLOT_NAMES, PLOT_NOTES, PLOT_TITLES
from gpuscale.report.run import ReportRun
from gpuscale.report.tables import (
    SummaryGrid,
    format_value,
    side_by_side,
    timeline_basics,
)

__all__ = [
    "MAX_DECISIONS",
    "OPEN_DECISIONS",
    "PROVENANCE_FIRST",
    "grid_table",
    "meta_texts",
    "render_html",
]

MAX_DECISIONS = 2000
"""Decisions listed per run; a longer list says how many were left out (the timeline has all)."""
OPEN_DECISIONS = 30
PROVENANCE_FIRST = (
    "manifests",
    "profile",
    "scenario",
    "trace",
    "seed",
    "until",
    "gpuscale_version",
)
"""Meta keys shown first in the provenance table, in this order; others follow sorted."""
_SPECIAL_META = frozenset({"approximations", "attribution", "thresholds", "threshold"})

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;
max-width:72rem;padding:0 1rem;color:#1b1f24;line-height:1.45}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.25rem;margin-top:2rem;
border-bottom:1px solid #d0d7de;padding-bottom:.2rem}h3{font-size:1.05rem}
table{border-collapse:collapse;margin:.5rem 0;font-size:.92rem}
th,td{border:1px solid #d0d7de;padding:.25rem .55rem;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.section th{background:#eaeef2;text-align:left}
td.note,p.note,span.note{color:#57606a;font-size:.85rem}
figure{margin:1rem 0}figure img{max-width:100%;height:auto;border:1px solid #eaeef2}
figcaption{color:#57606a;font-size:.85rem}
details{margin:.5rem 0}summary{cursor:pointer;font-weight:600}
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.88em}
footer{margin-top:2.5rem;color:#57606a;font-size:.85rem}
"""


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def meta_texts(runs: Sequence[ReportRun], key: str) -> list[str]:
    """The distinct strings under ``meta[key]`` across the runs (a string or list of them)."""
    found: list[str] = []
    for run in runs:
        value = run.timeline.header.meta.get(key)
        items: Iterable[Any] = (
            [value] if isinstance(value, str) else value if isinstance(value, list) else ()
        )
        for item in items:
            text = str(item).strip()
            if text and text not in found:
                found.append(text)
    return found


def _meta_cell(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ", ".join(value)
    return json.dumps(value, sort_keys=True, separators=(", ", ": "))


def _provenance(runs: Sequence[ReportRun]) -> str:
    rows: dict[str, list[str]] = {
        "world": [r.timeline.header.world for r in runs],
        "source": [r.source for r in runs],
        "started at": [r.timeline.header.started_at or "" for r in runs],
        "pools": [
            ", ".join(
                f"{name} (${price}/h)"
                if isinstance(price := spec.get("price_per_hour"), int | float)
                else name
                for name, spec in r.timeline.header.pools.items()
            )
            for r in runs
        ],
    }
    keys: list[str] = []
    for run in runs:
        keys.extend(k for k in run.timeline.header.meta if k not in _SPECIAL_META)
    ordered = [k for k in PROVENANCE_FIRST if k in keys]
    ordered += sorted(set(keys) - set(ordered))
    for key in ordered:
        rows[key.replace("_", " ")] = [
            _meta_cell(r.timeline.header.meta[key]) if key in r.timeline.header.meta else ""
            for r in runs
        ]
    head = "".join(f"<th>{_e(r.label)}</th>" for r in runs)
    body = "".join(
        f"<tr><th>{_e(name)}</th>{''.join(f'<td>{_e(v)}</td>' for v in values)}</tr>"
        for name, values in rows.items()
        if any(values)
    )
    return (
        '<section id="provenance"><h2>Provenance</h2>'
        f"<table><thead><tr><th></th>{head}</tr></thead><tbody>{body}</tbody></table></section>"
    )


def _cell(value: Any) -> str:
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    css = ' class="num"' if numeric else ""
    return f"<td{css}>{_e(format_value(value))}</td>"


def grid_table(grid: SummaryGrid) -> str:
    """A summary grid as an HTML table: one column per run, one header row per section."""
    head = "".join(f"<th>{_e(c)}</th>" for c in grid.columns)
    span = len(grid.columns) + 2
    parts = [f"<table><thead><tr><th></th>{head}<th>note</th></tr></thead><tbody>"]
    for section in grid.sections:
        parts.append(f'<tr class="section"><th colspan="{span}">{_e(section.title)}</th></tr>')
        for row in section.rows:
            cells = "".join(_cell(v) for v in row.values)
            parts.append(
                f'<tr><th>{_e(row.label)}</th>{cells}<td class="note">{_e(row.note)}</td></tr>'
            )
    parts.append("</tbody></table>")
    return "".join(parts)


def _summaries(runs: Sequence[ReportRun]) -> str:
    summaries = [r.summary or timeline_basics(r.timeline) for r in runs]
    grid = side_by_side([r.label for r in runs], summaries)
    read_off = [r.label for r in runs if r.summary is None]
    note = ""
    if read_off:
        note = (
            '<p class="note">Read directly off the timeline (minimum, maximum, last values) for '
            f"{_e(', '.join(read_off))}; <code>gpuscale simulate</code> adds flaps, time to "
            "capacity, pending pod-seconds, GPU-hours and latency.</p>"
        )
    return f'<section id="summary"><h2>Summary</h2>{grid_table(grid)}{note}</section>'


def _comparison(table: ComparisonTable, labels: tuple[str, str]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in table.headers)
    body = []
    for group, rows in table.sections:
        if group:
            body.append(
                f'<tr class="section"><th colspan="{len(table.headers)}">{_e(group)}</th></tr>'
            )
        body.extend(
            f"<tr><th>{_e(row[0])}</th>{''.join(f'<td>{_e(c)}</td>' for c in row[1:])}</tr>"
            for row in rows
        )
    return (
        '<section id="comparison"><h2>Comparison</h2>'
        f"<p>{_e(labels[0])} against {_e(labels[1])}, aligned on the time since the start of "
        "each run, over the time both cover; values hold between records.</p>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></section>"
    )


def _plots(plots: Mapping[str, bytes]) -> str:
    parts = ['<section id="plots"><h2>Plots</h2>']
    for name in [n for n in PLOT_NAMES if n in plots] + [n for n in plots if n not in PLOT_NAMES]:
        title = PLOT_TITLES.get(name, name)
        data = base64.b64encode(plots[name]).decode("ascii")
        parts.append(
            f'<figure id="plot-{_e(name)}"><img alt="{_e(title)}" '
            f'src="data:image/png;base64,{data}"><figcaption><strong>{_e(title)}.</strong> '
            f"{_e(PLOT_NOTES.get(name, ''))}</figcaption></figure>"
        )
    parts.append("</section>")
    return "".join(parts)


def _decisions(runs: Sequence[ReportRun], limit: int) -> str:
    parts = ['<section id="decisions"><h2>Controller decisions</h2>']
    for run in runs:
        records = run.timeline.records
        listed = [(i, r.t, d) for i, r in enumerate(records) for d in r.decisions]
        shown = listed[:limit]
        opened = " open" if len(listed) <= OPEN_DECISIONS else ""
        parts.append(
            f"<details{opened}><summary>{_e(run.label)}: {len(listed)} decision"
            f"{'' if len(listed) == 1 else 's'}</summary>"
        )
        if shown:
            parts.append(
                "<table><thead><tr><th>time</th><th>controller</th><th>action</th>"
                "<th>reason</th><th>target</th><th>detail</th></tr></thead><tbody>"
            )
            for index, t, decision in shown:
                arithmetic = "; ".join(s.arithmetic() for s in hpa_step(records, index, decision))
                detail = (
                    _e(decision.detail)
                    if not arithmetic
                    else f'{_e(arithmetic)}<br><span class="note">{_e(decision.detail)}</span>'
                )
                parts.append(
                    f'<tr><td class="num">{_e(format_duration(t))}</td>'
                    f"<td>{_e(decision.controller)}</td><td>{_e(decision.action)}</td>"
                    f"<td>{_e(decision.reason)}</td><td>{_e(decision.target)}</td>"
                    f"<td>{detail}</td></tr>"
                )
            parts.append("</tbody></table>")
        if len(listed) > len(shown):
            parts.append(
                f"<p>First {len(shown)} of {len(listed)} shown; the timeline holds them all.</p>"
            )
        parts.append("</details>")
    parts.append("</section>")
    return "".join(parts)


def _listing(section_id: str, title: str, items: list[str], empty: str) -> str:
    body = (
        "<ul>" + "".join(f"<li>{_e(i)}</li>" for i in items) + "</ul>"
        if items
        else f"<p>{_e(empty)}</p>"
    )
    return f'<section id="{section_id}"><h2>{_e(title)}</h2>{body}</section>'


def render_html(
    runs: Sequence[ReportRun],
    *,
    plots: Mapping[str, bytes],
    title: str = "gpuscale report",
    comparison: ComparisonTable | None = None,
    max_decisions: int = MAX_DECISIONS,
) -> str:
    """The report page for ``runs`` as one HTML string.

    ``plots`` maps plot names to PNG bytes (:func:`gpuscale.report.render_plots`);
    ``comparison`` is a comparison's table (:func:`gpuscale.report.comparison_table`),
    shown when given for exactly two runs.
    """
    if not runs:
        raise ValueError("render_html needs at least one run")
    worlds = ", ".join(dict.fromkeys(r.timeline.header.world for r in runs))
    approximations = meta_texts(runs, "approximations")
    attributions = meta_texts(runs, "attribution")
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
        f"<header><h1>{_e(title)}</h1><p>{_e(', '.join(r.label for r in runs))} "
        f"({_e(worlds)})</p></header><main>",
        _provenance(runs),
        _summaries(runs),
    ]
    if comparison is not None and len(runs) == 2:
        parts.append(_comparison(comparison, (runs[0].label, runs[1].label)))
    parts += [
        _plots(plots),
        _decisions(runs, max_decisions),
        _listing(
            "approximations",
            "Approximations",
            approximations,
            "The timelines list nothing modelled approximately.",
        ),
    ]
    if attributions:
        parts.append(_listing("attribution", "Attribution", attributions, ""))
    parts += [
        "</main>",
        f"<footer>Made by gpuscale {_e(__version__)} from "
        f"{len(runs)} timeline{'' if len(runs) == 1 else 's'}.</footer>",
        "</body></html>\n",
    ]
    return "".join(parts)
