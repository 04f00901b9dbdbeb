"""``gpuscale tune --report FILE``: one HTML page, written whole or not at all, with the
table of every scored part, the front of dollars against attainment over every trial,
the search's convergence (the cheapest feasible trial so far) and the replica
timelines of the user's configuration, the recommendation and the clairvoyant schedule.
The figures are matplotlib's (no pyplot), encoded by :func:`gpuscale.report.plots.png_bytes`.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuscale._files import write_atomically
from gpuscale.errors import InputError
from gpuscale.report.plots import DPI, png_bytes
from gpuscale.tune.slo import SLO
from gpuscale.tune.study import StudyResult

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from gpuscale.cli._tune_score import Scored

__all__ = ["write_tune_report"]

_STYLES = {
    "your config": ("#d62728", "-"),
    "recommended": ("#2ca02c", "--"),
    "clairvoyant": ("#1f77b4", ":"),
}


def _figure(height: float = 3.4) -> tuple[Figure, Any]:
    from matplotlib.figure import Figure  # noqa: PLC0415 - kept out of the CLI's import time

    figure = Figure(figsize=(9.0, height), dpi=DPI)
    figure.subplots_adjust(left=0.09, right=0.97, top=0.88, bottom=0.16)
    return figure, figure.subplots()


def _front_figure(result: StudyResult, front: Sequence[dict[str, Any]]) -> Figure:
    figure, axes = _figure()
    for feasible, color, label in (
        (True, "#2ca02c", "meets the SLOs"),
        (False, "#999999", "misses"),
    ):
        points = [t for t in result.trials if t.feasible is feasible]
        axes.scatter(
            [t.outcome["dollars"] for t in points],
            [100 * t.outcome["attainment"] for t in points],
            s=12,
            color=color,
            label=label,
        )
    axes.step(
        [p["dollars"] for p in front],
        [100 * p["attainment"] for p in front],
        where="post",
        color="black",
        linewidth=1,
        label="front",
    )
    axes.set_xlabel("dollars of the run")
    axes.set_ylabel("requests on time (%)")
    axes.set_title("Every trial: dollars against attainment")
    axes.legend(loc="lower right")
    return figure


def _convergence_figure(result: StudyResult) -> Figure:
    figure, axes = _figure()
    best: float | None = None
    xs, ys = [], []
    ordered = sorted(result.trials, key=lambda t: (t.study != "tpe", t.number))
    for index, trial in enumerate(ordered, start=1):
        if trial.feasible and (best is None or trial.outcome["dollars"] < best):
            best = trial.outcome["dollars"]
        if best is not None:
            xs.append(index)
            ys.append(best)
    axes.step(xs, ys, where="post", color="#2ca02c")
    axes.set_xlabel("trial")
    axes.set_ylabel("cheapest feasible ($)")
    axes.set_title("Convergence of the search (TPE trials, then NSGA-II)")
    return figure


def _timeline_figure(scored: Scored) -> Figure:
    figure, axes = _figure()
    for label, (color, style) in _STYLES.items():
        outcome = scored.rows.get(label)
        if outcome is None or not outcome.timeline:
            continue
        ts = [p[0] / 60 for p in outcome.timeline] + [scored.until / 60]
        replicas = [p[1] for p in outcome.timeline]
        axes.step(
            ts, [*replicas, replicas[-1]], where="post", color=color, linestyle=style, label=label
        )
    axes.set_xlabel("minutes")
    axes.set_ylabel("spec.replicas")
    axes.set_title(f"Replicas on {scored.part}")
    axes.legend(loc="upper right")
    return figure


def _img(figure: Figure, alt: str) -> str:
    data = base64.b64encode(png_bytes(figure)).decode("ascii")
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def _table(scored: Scored) -> str:
    head = (
        "<tr><th></th><th>$</th><th>×LB</th><th>×clairvoyant</th><th>GPU-h</th><th>SLO</th>"
        "<th>on time</th><th>p95</th><th>p99</th><th>changes</th><th>flaps</th>"
        "<th>cold starts</th></tr>"
    )
    clair = scored.rows["clairvoyant"].dollars
    bound = scored.bound.dollars
    rows = []
    for label, o in scored.rows.items():
        p95, p99 = o.latency["p95"], o.latency["p99"]
        cells = [
            label,
            f"${o.dollars:.2f}",
            f"{o.dollars / bound:.2f}×" if bound > 0 else "—",
            f"{o.dollars / clair:.2f}×" if clair > 0 else "—",
            f"{o.gpu_hours:.2f}",
            "met" if o.check.met else "MISSED",
            f"{o.attainment:.2%}",
            "—" if p95 is None else f"{p95:.1f}s",
            "—" if p99 is None else f"{p99:.1f}s",
            str(o.replica_changes),
            str(o.flaps),
            str(o.cold_starts),
        ]
        rows.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    rows.append(f"<tr><td>lower bound</td><td>${bound:.2f}</td>" + "<td></td>" * 10 + "</tr>")
    return f"<h2>{html.escape(scored.part)}</h2><table>{head}{''.join(rows)}</table>"


def write_tune_report(
    path: Path,
    result: StudyResult,
    scored: Sequence[Scored],
    front: Sequence[dict[str, Any]],
    slos: Sequence[SLO],
) -> Path:
    """Write the page to ``path``; returns it."""
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise InputError(
            "the directory does not exist", where=str(path), fix="create it or pick another path"
        )
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>gpuscale tune</title>",
        "<style>body{font-family:sans-serif;max-width:60em;margin:auto}"
        "td,th{padding:2px 8px;text-align:right}td:first-child{text-align:left}</style>",
        "</head><body><h1>gpuscale tune</h1>",
        f"<p>SLOs: {html.escape(', '.join(s.text for s in slos))}; {len(result.trials)} trials."
        " The lower bound and the clairvoyant schedule are defined in docs/tune.md.</p>",
        *(_table(s) for s in scored),
        "<h2>The front</h2>",
        _img(_front_figure(result, front), "dollars against attainment"),
        "<h2>Convergence</h2>",
        _img(_convergence_figure(result), "cheapest feasible trial so far"),
        "<h2>Replica timelines</h2>",
        *(_img(_timeline_figure(s), f"replicas on {s.part}") for s in scored),
        "</body></html>",
    ]
    try:
        write_atomically(path, "\n".join(parts).encode("utf-8"))
    except OSError as error:
        raise InputError(
            f"cannot write the report ({error.strerror})",
            where=str(path),
            fix="pick a writable path",
        ) from None
    return path
