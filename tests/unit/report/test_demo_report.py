"""The demo's report tells one set of numbers: every plot runs to the run's end, and the
cost and the HPA's arithmetic are the same in the story, the tables, the page and the plots.

The demo runs once (``gpuscale demo -o json``, as a user runs it). The expected numbers
are computed here from the written timelines' records, independently of the report's
code: dollars as node-seconds × the header's prices, each HPA rescale as what the HPA read
÷ the ``status.replicas`` it saw, against the target in the decision. Each output is then
held to them.
"""

from __future__ import annotations

import contextlib
import html
import io
import json
import math
from typing import Any

import pytest

from gpuscale.cli.main import main
from gpuscale.report import ReportRun, read_timeline, summarize
from gpuscale.report.plots import (
    figure_cost,
    figure_load,
    figure_metric,
    figure_nodes,
    figure_pending,
    figure_replicas,
)
from gpuscale.report.series import run_end
from gpuscale.timeline import Timeline

LABELS = ("tutorial", "tutorial-fixed")
METRIC = "s0-prometheus"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("demo")
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert main(["demo", "--out", str(out), "-o", "json"]) == 0
    document = json.loads(buffer.getvalue())
    timelines = {label: read_timeline(out / f"{label}.jsonl") for label in LABELS}
    return {
        "document": document,
        "runs": {run["label"]: run for run in document["runs"]},
        "timelines": timelines,
        "page": (out / "report.html").read_text(encoding="utf-8"),
    }


def _report_runs(timelines: dict[str, Timeline]) -> list[ReportRun]:
    return [ReportRun(label, timelines[label]) for label in LABELS]


def _dollars(timeline: Timeline, end: float) -> float:
    """Node-seconds × price per hour, from the records alone."""
    records = timeline.records
    total = 0.0
    for record, nxt in zip(records, [*records[1:], None], strict=True):
        until = end if nxt is None else nxt.t
        for pool, states in record.nodes.items():
            price = timeline.header.pools[pool]["price_per_hour"]
            total += sum(states.values()) * price * (until - record.t) / 3600.0
    return total


def _rescales(timeline: Timeline) -> list[dict[str, Any]]:
    """Every HPA rescale, with its arithmetic computed from the records."""
    found = []
    records = timeline.records
    for index, record in enumerate(records):
        for decision in record.decisions:
            if decision.controller != "hpa" or decision.action != "scale":
                continue
            state = record.workloads[0]
            seen = records[index - 1].workloads[0] if index else state
            read = state.metrics[f"hpa:{METRIC}"]
            target = timeline.header.meta["thresholds"][f"hpa:{METRIC}"]
            replicas = seen.status
            per = read / replicas
            desired = math.ceil(read / target)
            found.append(
                {
                    "t": record.t,
                    "before": seen.spec,
                    "after": state.spec,
                    "text": (
                        f"{read:g} / {replicas} replica{'' if replicas == 1 else 's'} = {per:g} "
                        f"per replica against a target of {target:g} per replica: "
                        f"ceil({replicas} × {per:g}/{target:g}) = {desired}"
                    ),
                    "per": per,
                    "target": target,
                    "detail": decision.detail,
                }
            )
    return found


def _lines(figure: Any) -> list[Any]:
    return [line for ax in figure.axes for line in ax.get_lines()]


@pytest.mark.parametrize(
    "draw",
    [figure_load, figure_metric, figure_replicas, figure_pending, figure_nodes, figure_cost],
    ids=["load", "metric", "replicas", "pending", "nodes", "cost"],
)
def test_every_plot_runs_to_the_run_end(demo: dict[str, Any], draw: Any) -> None:
    timelines = demo["timelines"]
    figure = draw(_report_runs(timelines))
    for label in LABELS:
        timeline = timelines[label]
        end_minutes = run_end(timeline) / 60.0
        assert run_end(timeline) == timeline.header.meta["duration_s"] == 2400.0
        assert timeline.records[-1].t < run_end(timeline)  # the fix stops changing at ~12 min
        mine = [
            line
            for line in _lines(figure)
            if line.get_label().startswith(f"{label} ") or line.get_label() == label
        ]
        assert mine, f"no line of {label}"
        for line in mine:
            assert max(line.get_xdata()) == pytest.approx(end_minutes), line.get_label()
    for ax in figure.axes:
        assert ax.get_xlim() == pytest.approx((0.0, 40.0))


def test_cost_is_the_same_in_the_plot_the_summary_the_tables_and_the_page(
    demo: dict[str, Any],
) -> None:
    timelines, runs = demo["timelines"], demo["runs"]
    figure = figure_cost(_report_runs(timelines))
    for label in LABELS:
        timeline = timelines[label]
        expected = _dollars(timeline, run_end(timeline))
        assert expected > 2.0  # 40 minutes of a GPU node, not the 12 of the last record
        [line] = [line for line in _lines(figure) if line.get_label() == label]
        assert line.get_ydata()[-1] == pytest.approx(expected, rel=1e-9)
        assert runs[label]["summary"]["dollars"] == pytest.approx(expected, rel=1e-9)
        stats = summarize(timeline.records, until=run_end(timeline), pools=timeline.header.pools)
        assert stats.dollars == pytest.approx(expected, rel=1e-9)
        table = {
            (section["title"], row["label"]): row["value"]
            for section in runs[label]["table"]
            for row in section["rows"]
        }
        shown = f"${expected:,.2f}"
        assert table[("Cost", "dollars")] == shown
        assert shown in demo["page"]


def test_the_hpa_arithmetic_is_the_same_in_the_story_the_page_and_the_plot(
    demo: dict[str, Any],
) -> None:
    timelines, runs = demo["timelines"], demo["runs"]
    figure = figure_metric(_report_runs(timelines))
    lines = {line.get_label(): line for line in _lines(figure)}
    for label in LABELS:
        rescales = _rescales(timelines[label])
        assert rescales
        per_replica = lines[f"{label} hpa:{METRIC} ÷ replicas (per replica)"]
        xs, ys = list(per_replica.get_xdata()), list(per_replica.get_ydata())
        target_lines = [line for name, line in lines.items() if name.startswith("target ")]
        assert [name for name in lines if name.startswith("target ")] == [
            f"target 80 per replica ({METRIC})"
        ]
        told = [m["text"] for m in runs[label]["moments"] if m["text"].startswith("HPA ")]
        assert told
        by_time = {(r["t"], r["before"], r["after"]): r for r in rescales}
        for moment in (m for m in runs[label]["moments"] if m["text"].startswith("HPA ")):
            sizes = moment["text"].split(":", 1)[0].removeprefix("HPA ").split("→")
            rescale = by_time[(moment["t"], int(sizes[0]), int(sizes[1]))]
            assert moment["text"].startswith(f"HPA {sizes[0]}→{sizes[1]}: {rescale['text']}")
        for rescale in rescales:
            # the decisions table leads with the same sentence, then the controller's detail
            assert html.escape(rescale["text"]) in demo["page"]
            assert html.escape(rescale["detail"]) in demo["page"]
            # the decision's own per-replica number is the one computed here
            assert f"{rescale['per']:g} / target {rescale['target']:g}" in rescale["detail"]
            # the plot's per-replica line holds that number from the decision on
            index = max(i for i, x in enumerate(xs) if x == pytest.approx(rescale["t"] / 60.0))
            assert ys[index] == pytest.approx(rescale["per"])
            assert target_lines[0].get_ydata()[0] == pytest.approx(rescale["target"])
    down = next(r for r in _rescales(timelines["tutorial"]) if r["after"] < r["before"])
    up = next(r for r in _rescales(timelines["tutorial"]) if r["after"] > r["before"])
    assert down["text"] == (
        "80 / 2 replicas = 40 per replica against a target of 80 per replica: ceil(2 × 40/80) = 1"
    )
    why = " ".join(runs["tutorial"]["why"])
    assert down["text"] in why
    assert up["text"] in why
    fixed_why = " ".join(runs["tutorial-fixed"]["why"])
    assert _rescales(timelines["tutorial-fixed"])[0]["text"] in fixed_why
