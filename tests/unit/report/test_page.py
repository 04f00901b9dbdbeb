from __future__ import annotations

import base64
import re

import pytest

from gpuscale.report import PLOT_NAMES, ReportRun, report_html
from gpuscale.report.page import OPEN_DECISIONS, render_html
from gpuscale.timeline import Decision, Header, Record, Timeline, WorkloadState
from tests.unit.report import timelines
from tests.unit.report.htmlcheck import external_references, parse_page

FAKE_PLOTS = {name: b"\x89PNG\r\n\x1a\n" + name.encode() for name in PLOT_NAMES}


def _hostile() -> Timeline:
    """A run whose every string tries to break out of the page."""
    state = WorkloadState(name="ns/<b>w</b>", spec=1, status=1, ready=1)
    decision = Decision(
        controller="hpa",
        action="scale",
        reason='<script>alert("x")</script>',
        target="deployment/ns/<w>",
        detail="metric 160 / target 80 -> 2 & more",
    )
    header = Header(
        world="live",
        started_at="2026-11-30T12:00:00Z",
        pools={"gpu": {"price_per_hour": 1.99}},
        meta={
            "manifests": ["<img src=x onerror=alert(1)>"],
            "approximations": ["pods start <instantly>", "cost & time"],
            "attribution": 'Patel et al., "Splitwise", ISCA 2024 — https://example.org/paper',
            "note": {"k": "<v>"},
        },
    )
    return Timeline(header, (Record(t=0.0, workloads=(state,), decisions=(decision,)),))


def test_page_is_well_formed_self_contained_and_complete() -> None:
    runs = [ReportRun("tutorial", timelines.tutorial()), ReportRun("fixed", timelines.fixed())]
    page = render_html(runs, plots=FAKE_PLOTS, title="Tutorial vs fixed")
    parsed = parse_page(page)
    assert page.startswith("<!DOCTYPE html>")
    assert external_references(parsed) == []
    assert not any(tag in ("script", "link", "iframe") for tag, _ in parsed.tags)
    for name in PLOT_NAMES:
        assert f"plot-{name}" in parsed.ids()
        encoded = base64.b64encode(FAKE_PLOTS[name]).decode()
        assert f'src="data:image/png;base64,{encoded}"' in page
    assert {"provenance", "summary", "plots", "decisions", "approximations"} <= parsed.ids()
    text = parsed.all_text()
    # provenance from the headers
    for expected in (
        "examples/tutorial/",
        "examples/tutorial-fixed/",
        "gauge-160.yaml",
        "simulate",
    ):
        assert expected in text
    # the read-off summary, side by side
    assert "replicas max" in text
    assert "$0.94" in text
    # every decision of both runs is listed
    assert text.count("FailedScheduling") == 2
    assert text.count("TriggeredScaleUp") == 2
    assert "metric 80 / target 80 -> 1" in text
    assert "image pull time is a fixed duration from the profile" in text


def test_every_string_is_escaped() -> None:
    page = render_html([ReportRun("<i>run</i>", _hostile())], plots=FAKE_PLOTS)
    parsed = parse_page(page)
    tags = {tag for tag, _ in parsed.tags}
    assert "script" not in tags
    assert "b" not in tags
    assert "i" not in tags
    assert [a for t, a in parsed.tags if t == "img" and a.get("src") == "x"] == []
    assert external_references(parsed) == []
    text = parsed.all_text()
    assert '<script>alert("x")</script>' in text  # shown as text
    assert "&lt;script&gt;" in page
    assert "metric 160 / target 80 -> 2 & more" in text
    assert "pods start <instantly>" in text
    assert "ns/<b>w</b>" in text
    assert '{"k": "<v>"}' in text


def test_attribution_is_shown_and_links_stay_text() -> None:
    page = render_html([ReportRun("trace", _hostile())], plots=FAKE_PLOTS)
    parsed = parse_page(page)
    assert "attribution" in parsed.ids()
    assert 'Patel et al., "Splitwise", ISCA 2024' in parsed.all_text()
    assert external_references(parsed) == []


def test_no_attribution_section_without_a_trace() -> None:
    page = render_html([ReportRun("tutorial", timelines.tutorial())], plots=FAKE_PLOTS)
    assert "attribution" not in parse_page(page).ids()


def _many_decisions(count: int) -> Timeline:
    state = WorkloadState(name="ns/w", spec=1, status=1, ready=1)
    return Timeline(
        Header(world="simulate"),
        tuple(
            Record(
                t=float(i),
                workloads=(state,),
                decisions=(Decision("keda", "poll", "Polled", detail=f"poll number {i}"),),
            )
            for i in range(count)
        ),
    )


@pytest.mark.parametrize(("count", "opened"), [(OPEN_DECISIONS, True), (OPEN_DECISIONS + 1, False)])
def test_long_decision_lists_are_collapsed(count: int, opened: bool) -> None:
    page = render_html([ReportRun("r", _many_decisions(count))], plots=FAKE_PLOTS)
    parsed = parse_page(page)
    details = [a for t, a in parsed.tags if t == "details"]
    assert len(details) == 1
    assert ("open" in details[0]) is opened
    assert f"r: {count} decisions" in parsed.all_text()


def test_decision_list_is_capped_and_says_so() -> None:
    page = render_html([ReportRun("r", _many_decisions(50))], plots=FAKE_PLOTS, max_decisions=10)
    text = parse_page(page).all_text()
    assert "poll number 9" in text
    assert "poll number 10" not in text
    assert "First 10 of 50 shown" in text


def test_report_html_compares_two_runs_only() -> None:
    tutorial = ReportRun("tutorial", timelines.tutorial())
    fixed = ReportRun("fixed", timelines.fixed())
    two = report_html([tutorial, fixed])
    parsed = parse_page(two)
    assert "comparison" in parsed.ids()
    assert "30s of 15m (3%)" in parsed.all_text()
    assert len(re.findall(r'src="data:image/png;base64,iVBORw0KGgo', two)) == len(PLOT_NAMES)
    assert "comparison" not in parse_page(report_html([tutorial], plots=FAKE_PLOTS)).ids()
    three = report_html([tutorial, fixed, tutorial], plots=FAKE_PLOTS)
    assert "comparison" not in parse_page(three).ids()
    assert (
        "comparison"
        not in parse_page(report_html([tutorial, fixed], plots=FAKE_PLOTS, compare=False)).ids()
    )


def test_same_runs_give_the_same_page() -> None:
    runs = [ReportRun("tutorial", timelines.tutorial()), ReportRun("fixed", timelines.fixed())]
    assert render_html(runs, plots=FAKE_PLOTS) == render_html(runs, plots=FAKE_PLOTS)
