"""Outputs: text, JSON (stable schema) and SARIF 2.1.0 validated against the OASIS schema."""

from __future__ import annotations

import io
import json
import re
from pathlib import PurePosixPath
from typing import Any

import jsonschema
import pytest
from rich.console import Console

from gpuscale.lint import LintOptions, LintReport, Severity, catalogue, run_lint
from gpuscale.lint.output import (
    artifact_uri,
    explain,
    print_catalogue,
    print_explanation,
    print_text,
    render_json,
    render_sarif,
)
from gpuscale.manifests import load_text
from tests.unit.lint.conftest import DATA, EXAMPLES, line_of

TUTORIAL = (EXAMPLES / "tutorial" / "resources.yaml").read_text()
SARIF_SCHEMA = json.loads((DATA / "sarif" / "sarif-schema-2.1.0.json").read_text())
FILE = "examples/tutorial/resources.yaml"


def _report(text: str = TUTORIAL, file: str = FILE) -> LintReport:
    return run_lint(load_text(text, file), None, LintOptions())


def _console() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, width=120, no_color=True, highlight=False), buffer


# --- text -------------------------------------------------------------------------------


def test_text_groups_by_file_and_shows_why_and_fix() -> None:
    report = _report()
    console, buffer = _console()
    print_text(report, console)
    out = buffer.getvalue()
    assert out.count(FILE) == 1
    query_line = line_of(TUTORIAL, "query:")
    assert f"{query_line}:9  error  query-divides-by-replicas" in out
    assert "ScaledObject default/go-from-configmap" in out
    assert "why: With metricType AverageValue" in out
    assert "query: sum(my_custom_gauge{})" in out
    counts = report.counts()
    assert f"{counts[Severity.ERROR]} errors, {counts[Severity.WARNING]} warnings" in out
    assert "in 5 objects from 1 file" in out


def test_text_for_a_set_without_errors_or_warnings() -> None:
    report = _report((EXAMPLES / "tutorial-fixed" / "resources.yaml").read_text())
    console, buffer = _console()
    print_text(report, console)
    info = report.counts()[Severity.INFO]
    assert buffer.getvalue().splitlines()[-1] == (
        f"0 errors, 0 warnings, {info} info in 4 objects from 1 file"
    )
    assert not report.failed


# --- JSON -------------------------------------------------------------------------------


def test_json_schema_is_stable() -> None:
    document = json.loads(render_json(_report()))
    assert set(document) == {
        "schema",
        "tool",
        "failOn",
        "failed",
        "summary",
        "findings",
        "suppressed",
        "notes",
        "notRun",
    }
    assert document["schema"] == "gpuscale.lint/v1"
    assert set(document["summary"]) == {
        "error",
        "warning",
        "info",
        "suppressed",
        "objects",
        "files",
    }
    finding = next(f for f in document["findings"] if f["rule"] == "query-divides-by-replicas")
    assert set(finding) == {"rule", "severity", "location", "object", "message", "why", "fix"}
    assert finding["location"] == {"file": FILE, "line": line_of(TUTORIAL, "query:"), "column": 9}
    assert finding["object"]["kind"] == "ScaledObject"
    assert finding["object"]["namespace"] == "default"
    assert finding["object"]["name"] == "go-from-configmap"
    assert finding["object"]["location"]["line"] == line_of(TUTORIAL, "kind: ScaledObject") - 1
    assert finding["severity"] == "error"
    assert document["failed"] is True
    assert document["summary"]["error"] == sum(
        1 for f in document["findings"] if f["severity"] == "error"
    )


# --- SARIF ------------------------------------------------------------------------------


def _sarif(report: LintReport, base: str = "/work/project") -> dict[str, Any]:
    log: dict[str, Any] = json.loads(render_sarif(report, PurePosixPath(base)))
    return log


def test_sarif_validates_against_the_oasis_schema() -> None:
    log = _sarif(_report())
    jsonschema.Draft4Validator.check_schema(SARIF_SCHEMA)
    errors = sorted(jsonschema.Draft4Validator(SARIF_SCHEMA).iter_errors(log), key=str)
    assert errors == []


def test_sarif_rules_and_results() -> None:
    report = _report()
    log = _sarif(report)
    assert log["version"] == "2.1.0"
    assert log["$schema"].endswith("sarif-schema-2.1.0.json")
    [run] = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "gpuscale"
    assert "informationUri" not in driver
    assert [r["id"] for r in driver["rules"]] == [r.slug for r in catalogue()]
    for rule, entry in zip(driver["rules"], catalogue(), strict=True):
        assert rule["shortDescription"]["text"] == entry.title
        assert rule["fullDescription"]["markdown"] == entry.explanation
        assert "`" not in rule["fullDescription"]["text"]
        # No made-up URL: the explanation, the example and the fix travel in the log.
        assert "helpUri" not in rule
        assert entry.fix in rule["help"]["text"]
        assert entry.example in rule["help"]["markdown"]
        assert rule["defaultConfiguration"]["level"] in {"error", "warning", "note"}
    flaps = next(r for r in driver["rules"] if r["id"] == "flaps-under-steady-load")
    assert flaps["properties"] == {"requires": "simulator"}
    assert len(run["results"]) == len(report.findings)
    for result, finding in zip(run["results"], report.findings, strict=True):
        assert result["ruleId"] == finding.rule
        assert driver["rules"][result["ruleIndex"]]["id"] == finding.rule
        assert (
            result["level"]
            == {"error": "error", "warning": "warning", "info": "note"}[finding.severity.value]
        )
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"] == FILE
        assert location["region"] == {
            "startLine": finding.location.line,
            "startColumn": finding.location.column,
        }
        assert finding.message in result["message"]["text"]


def test_sarif_of_an_empty_report_is_valid() -> None:
    report = run_lint([], None, LintOptions())
    errors = list(jsonschema.Draft4Validator(SARIF_SCHEMA).iter_errors(_sarif(report)))
    assert errors == []


@pytest.mark.parametrize(
    ("file", "uri"),
    [
        ("examples/tutorial/resources.yaml", "examples/tutorial/resources.yaml"),
        ("./deploy/a.yaml", "deploy/a.yaml"),
        ("deploy/../k8s/a.yaml", "k8s/a.yaml"),
        ("/work/project/k8s/so.yaml", "k8s/so.yaml"),
        ("/elsewhere/so.yaml", "file:///elsewhere/so.yaml"),
        ("k8s/my app.yaml", "k8s/my%20app.yaml"),
        ("<stdin>", "stdin"),
    ],
)
def test_artifact_uri(file: str, uri: str) -> None:
    assert artifact_uri(file, PurePosixPath("/work/project")) == uri


# --- catalogue --------------------------------------------------------------------------


def test_list_prints_every_rule() -> None:
    console, buffer = _console()
    print_catalogue(console)
    out = buffer.getvalue()
    for entry in catalogue():
        assert entry.slug in out
    assert "(needs the simulator)" in " ".join(out.split())
    assert all(line == line.rstrip() for line in out.splitlines())


def test_explain_prints_the_explanation_and_both_snippets() -> None:
    entry = explain("cooldown-has-no-effect")
    assert entry is not None
    console, buffer = _console()
    print_explanation(entry, console)
    out = buffer.getvalue()
    assert out.startswith("cooldown-has-no-effect: ")
    assert "default severity: warning" in out
    assert "scaleToZeroOrIdle" in out
    assert "stabilizationWindowSeconds: 300" in out
    assert explain("no-such-rule") is None


def test_explain_on_a_terminal_colours_only_the_slug_of_the_heading() -> None:
    entry = explain("cooldown-has-no-effect")
    assert entry is not None
    buffer = io.StringIO()
    console = Console(file=buffer, width=200, force_terminal=True, color_system="standard")
    print_explanation(entry, console)
    heading = buffer.getvalue().splitlines()[0]
    assert heading == f"\x1b[1;35mcooldown-has-no-effect\x1b[0m: {entry.title}"


def test_the_schema_check_is_not_vacuous() -> None:
    log = _sarif(_report())
    log["runs"][0]["results"][0]["level"] = "info"
    del log["runs"][0]["tool"]["driver"]["name"]
    errors = list(jsonschema.Draft4Validator(SARIF_SCHEMA).iter_errors(log))
    assert len(errors) >= 2


def test_text_fixes_are_verbatim_and_lines_have_no_trailing_spaces() -> None:
    report = _report()
    console, buffer = _console()
    print_text(report, console)
    lines = buffer.getvalue().splitlines()
    assert all(line == line.rstrip() for line in lines)
    pending = next(f for f in report.findings if f.rule == "replica-count-includes-pending")
    query_line = next(line for line in pending.fix.splitlines() if "query:" in line)
    assert len(query_line) > 100
    assert f"      {query_line}" in lines


def test_text_does_not_lay_out_findings_with_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    """Text output is pre-wrapped strings: rich's per-line layout (Text.wrap, cell widths)
    cost more than linting 1,000 manifests (docs/benchmarks/lint.md)."""
    from rich.text import Text

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("rich laid out a finding")

    monkeypatch.setattr(Text, "wrap", refuse)
    monkeypatch.setattr(Text, "__rich_console__", refuse)
    report = _report()
    console, buffer = _console()
    print_text(report, console)
    assert buffer.getvalue().count("    fix:") == len(report.findings)


def test_text_on_a_terminal_is_styled_line_by_line() -> None:
    report = _report()
    buffer = io.StringIO()
    console = Console(file=buffer, width=80, force_terminal=True, color_system="standard")
    print_text(report, console)
    out = buffer.getvalue()
    lines = out.splitlines()
    assert lines[0] == "\x1b[1;4m" + FILE + "\x1b[0m"
    assert "\x1b[1;31merror\x1b[0m" in out
    assert "\x1b[35mquery-divides-by-replicas\x1b[0m" in out
    why = next(line for line in lines if "why:" in line)
    # Only the label is bold; the paragraph after it is plain.
    assert why.startswith("\x1b[1m    why:\x1b[0m ")
    assert not why.endswith("\x1b[0m")
    assert all(line.count("\x1b[32m") <= 1 for line in lines)
    plain = io.StringIO()
    print_text(report, Console(file=plain, width=80, no_color=True, highlight=False))
    assert re.sub(r"\x1b\[[0-9;]*m", "", out) == plain.getvalue()
