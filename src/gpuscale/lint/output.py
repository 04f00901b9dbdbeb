"""Render a :class:`~gpuscale.lint.LintReport` as text, JSON or SARIF 2.1.0, and the catalogue.

- **text** (rich): findings grouped by file, each with ``line:column``, severity, slug,
  object, message, why and the fix snippet; a summary line.
- **JSON**: a stable schema (``"schema": "gpuscale.lint/v1"``), documented in
  ``docs/commands/lint.md``; fields are only ever added.
- **SARIF 2.1.0** (OASIS): one run whose ``tool.driver.rules`` is the catalogue and whose
  results point at ``artifactLocation.uri`` (relative to the working directory, forward
  slashes) and ``region.startLine``/``startColumn``, so code-scanning tools show each
  finding on its line.

The markdown catalogue (``docs/lint-rules.md``) is generated here too, from the same
registry, so the docs cannot drift from ``--list``/``--explain``.
"""

from __future__ import annotations

import json
import posixpath
import textwrap
from collections.abc import Callable, Iterable
from pathlib import PurePath, PurePosixPath
from typing import Any
from urllib.parse import quote

from rich.console import COLOR_SYSTEMS, Console
from rich.control import strip_control_codes
from rich.style import Style
from rich.text import Text

from gpuscale import __version__
from gpuscale.lint._findings import Finding, Severity
from gpuscale.lint._registry import Rule
from gpuscale.lint._run import LintReport
from gpuscale.lint.rules import catalogue
from gpuscale.manifests import STDIN

__all__ = [
    "CATALOGUE_SCHEMA_ID",
    "JSON_SCHEMA_ID",
    "SARIF_SCHEMA_URI",
    "artifact_uri",
    "catalogue_markdown",
    "explain",
    "print_catalogue",
    "print_explanation",
    "print_text",
    "render_catalogue_json",
    "render_json",
    "render_sarif",
]

JSON_SCHEMA_ID = "gpuscale.lint/v1"
SARIF_SCHEMA_URI = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
_STYLES = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


def _snippet(text: str, indent: str = "  ") -> Text:
    """A YAML snippet as printed: indented, verbatim (soft-wrapped, so it can be copied)."""
    return Text(textwrap.indent(text, indent), style="green")


def _summary(report: LintReport) -> str:
    counts = report.counts()
    parts = [
        f"{counts[Severity.ERROR]} error{'s' * (counts[Severity.ERROR] != 1)}",
        f"{counts[Severity.WARNING]} warning{'s' * (counts[Severity.WARNING] != 1)}",
        f"{counts[Severity.INFO]} info",
    ]
    text = ", ".join(parts)
    if report.suppressed:
        text += f" ({len(report.suppressed)} suppressed)"
    files = len(report.files)
    text += f" in {report.objects} objects from {files} file{'s' * (files != 1)}"
    if report.nothing_ran:
        text += "; none of the selected rules could run"
    return text


def _wrapped(text: str, width: int, indent: str) -> str:
    return textwrap.fill(
        text,
        width=max(width, 40),
        initial_indent=indent,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    )


def _painter(console: Console) -> Callable[[str, str], str]:
    """``paint(text, style)``: ``text`` in ANSI ``style`` on a console with colour, else as is.

    Text output is plain strings written in one go: rich's per-line layout (wrapping,
    cell widths) cost more than the linting itself on large sets, and the text is already
    wrapped here. Each line is painted on its own, as rich does, so pagers keep the style.
    """
    system = console.color_system
    if system is None:
        return lambda text, _style: text
    color_system = COLOR_SYSTEMS[system]
    styles: dict[str, Style] = {}

    def paint(text: str, style: str) -> str:
        if style not in styles:
            parsed = Style.parse(style)
            styles[style] = parsed.without_color if console.no_color else parsed
        rendered = styles[style]
        return "\n".join(
            rendered.render(line, color_system=color_system, legacy_windows=console.legacy_windows)
            if line
            else line
            for line in text.split("\n")
        )

    return paint


def print_text(report: LintReport, console: Console) -> None:
    """Print the report for people: grouped by file, each finding with why and fix.

    Message and why are wrapped to the console's width; the fix is printed as is, so it
    can be copied into a manifest. Colour only when the console has it (a terminal).
    """
    paint = _painter(console)
    width = console.width
    current: str | None = None
    out: list[str] = []
    for finding in report.findings:
        if finding.location.file != current:
            current = finding.location.file
            out.append(paint(strip_control_codes(current), "bold underline"))
        location = f"{finding.location.line}:{finding.location.column}"
        severity = paint(finding.severity.value, _STYLES[finding.severity])
        out.append(
            f"  {paint(location, 'bold')}  {severity}  {paint(finding.rule, 'magenta')}"
            + paint(strip_control_codes(f"  {finding.object}"), "dim")
        )
        out.append(strip_control_codes(_wrapped(finding.message, width, "    ")))
        why = strip_control_codes(_wrapped(f"why: {finding.why}", width, "    "))
        out.append(paint(why[:8], "bold") + why[8:])
        out.append(paint("    fix:", "bold"))
        out.append(paint(strip_control_codes(textwrap.indent(finding.fix, "      ")), "green"))
        out.append("")
    out.extend(paint(strip_control_codes(f"note: {note}"), "yellow") for note in report.notes)
    style = "bold red" if report.failed or report.nothing_ran else "bold green"
    out.append(paint(_summary(report), style))
    console.file.write("\n".join(out) + "\n")
    console.file.flush()


def _finding_json(finding: Finding) -> dict[str, Any]:
    return {
        "rule": finding.rule,
        "severity": finding.severity.value,
        "location": {
            "file": finding.location.file,
            "line": finding.location.line,
            "column": finding.location.column,
        },
        "object": {
            "kind": finding.object.kind,
            "namespace": finding.object.namespace,
            "name": finding.object.name,
            "location": {
                "file": finding.object_location.file,
                "line": finding.object_location.line,
                "column": finding.object_location.column,
            },
        },
        "message": finding.message,
        "why": finding.why,
        "fix": finding.fix,
    }


def render_json(report: LintReport) -> str:
    """The report as JSON (schema ``gpuscale.lint/v1``, see docs/commands/lint.md)."""
    counts = report.counts()
    document = {
        "schema": JSON_SCHEMA_ID,
        "tool": {"name": "gpuscale", "version": __version__},
        "failOn": report.fail_on.value,
        "failed": report.failed,
        "summary": {
            "error": counts[Severity.ERROR],
            "warning": counts[Severity.WARNING],
            "info": counts[Severity.INFO],
            "suppressed": len(report.suppressed),
            "objects": report.objects,
            "files": list(report.files),
        },
        "findings": [_finding_json(f) for f in report.findings],
        "suppressed": [_finding_json(f) for f in report.suppressed],
        "notes": list(report.notes),
        "notRun": [{"rule": slug, "reason": reason} for slug, reason in report.not_run],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def artifact_uri(file: str, base: PurePath) -> str:
    """A finding's file as a SARIF ``artifactLocation.uri``.

    Relative to ``base`` (the working directory) with forward slashes when the file is
    under it (or given relatively), an absolute ``file://`` URI otherwise; standard input
    (``<stdin>``) becomes ``stdin``. Characters URIs do not allow are percent-encoded.
    """
    if file == STDIN:
        return "stdin"
    path = PurePath(file)
    if path.is_absolute():
        try:
            path = path.relative_to(base)
        except ValueError:
            return "file://" + quote(PurePosixPath(*path.parts).as_posix().replace("//", "/"))
    posix = posixpath.normpath(PurePosixPath(*path.parts).as_posix())
    return quote(posix, safe="/-._~")


def _sarif_rule(entry: Rule) -> dict[str, Any]:
    """One ``reportingDescriptor``; the explanation travels in the log itself
    (``fullDescription``, ``help``), as gpuscale publishes no catalogue URL to point at."""
    properties: dict[str, Any] = {"requires": entry.requires} if entry.requires else {}
    return {
        "id": entry.slug,
        "name": "".join(part.capitalize() for part in entry.slug.split("-")),
        "shortDescription": {"text": entry.title},
        "fullDescription": {"text": _plain(entry.explanation), "markdown": entry.explanation},
        "help": {
            "text": f"{_plain(entry.explanation)}\n\nReported:\n{entry.example}\n\n"
            f"Fixed:\n{entry.fix}",
            "markdown": f"{entry.explanation}\n\nReported:\n\n```yaml\n{entry.example}\n"
            f"```\n\nFixed:\n\n```yaml\n{entry.fix}\n```",
        },
        "defaultConfiguration": {"level": entry.severity.sarif_level},
        "properties": properties,
    }


def _sarif_result(finding: Finding, index: dict[str, int], base: PurePath) -> dict[str, Any]:
    kind = finding.object
    return {
        "ruleId": finding.rule,
        "ruleIndex": index[finding.rule],
        "level": finding.severity.sarif_level,
        "message": {"text": f"{finding.message}\n\n{finding.why}\n\nFix:\n{finding.fix}"},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": artifact_uri(finding.location.file, base)},
                    "region": {
                        "startLine": finding.location.line,
                        "startColumn": finding.location.column,
                    },
                },
                "logicalLocations": [
                    {
                        "name": kind.name or "<unnamed>",
                        "fullyQualifiedName": f"{kind.kind}/{kind.namespace}/{kind.name or ''}",
                        "kind": "object",
                    }
                ],
            }
        ],
        "properties": {"fix": finding.fix, "why": finding.why},
    }


def render_sarif(report: LintReport, base: PurePath) -> str:
    """The report as a SARIF 2.1.0 log; file URIs relative to ``base`` (the working dir)."""
    rules = catalogue()
    index = {entry.slug: number for number, entry in enumerate(rules)}
    log = {
        "$schema": SARIF_SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "gpuscale",
                        "version": __version__,
                        "rules": [_sarif_rule(entry) for entry in rules],
                    }
                },
                "columnKind": "unicodeCodePoints",
                "invocations": [
                    {
                        "executionSuccessful": not report.nothing_ran,
                        "toolExecutionNotifications": [
                            {"level": "warning", "message": {"text": note}} for note in report.notes
                        ],
                    }
                ],
                "results": [_sarif_result(f, index, base) for f in report.findings],
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def print_catalogue(console: Console, rules: Iterable[Rule] | None = None) -> None:
    """The catalogue, one rule a row (``gpuscale lint --list``): slug, default severity,
    and what it finds, wrapped to the console's width."""
    entries = list(rules if rules is not None else catalogue())
    slug_width = max((len(entry.slug) for entry in entries), default=4)
    indent = " " * (slug_width + 2 + len("severity") + 2)
    console.print(Text(f"{'rule'.ljust(slug_width)}  severity  what it finds"))
    for entry in entries:
        title = entry.title
        if entry.requires:
            title += f" (needs the {entry.requires})"
        lines = textwrap.wrap(
            title, width=max(console.width - len(indent), 30), break_on_hyphens=False
        )
        row = Text(entry.slug.ljust(slug_width), style="magenta")
        row.append("  ")
        row.append(entry.severity.value.ljust(len("severity")), style=_STYLES[entry.severity])
        row.append(f"  {lines[0]}")
        console.print(row, soft_wrap=True)
        for line in lines[1:]:
            console.print(Text(f"{indent}{line}"), soft_wrap=True)


CATALOGUE_SCHEMA_ID = "gpuscale.lint-rules/v1"


def render_catalogue_json(rules: Iterable[Rule] | None = None) -> str:
    """The catalogue as JSON (``gpuscale lint --list -o json``; with ``--explain SLUG``, that
    one rule): schema ``gpuscale.lint-rules/v1``, one object a rule, fields only ever added."""
    entries = list(rules if rules is not None else catalogue())
    document = {
        "schema": CATALOGUE_SCHEMA_ID,
        "tool": {"name": "gpuscale", "version": __version__},
        "rules": [
            {
                "rule": entry.slug,
                "severity": entry.severity.value,
                "title": entry.title,
                "requires": entry.requires or None,
                "explanation": entry.explanation,
                "example": entry.example,
                "fix": entry.fix,
            }
            for entry in entries
        ],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def explain(slug: str) -> Rule | None:
    """The catalogue entry for ``slug``, or ``None``."""
    return next((entry for entry in catalogue() if entry.slug == slug), None)


def print_explanation(entry: Rule, console: Console) -> None:
    """One rule in full (``gpuscale lint --explain SLUG``)."""
    heading = _wrapped(f"{entry.slug}: {entry.title}", console.width, "")
    console.print(
        Text.assemble((heading[: len(entry.slug)], "bold magenta"), heading[len(entry.slug) :])
    )
    console.print(
        Text.assemble("default severity: ", (entry.severity.value, _STYLES[entry.severity]))
    )
    if entry.requires:
        console.print(f"needs: {entry.requires}")
    console.print()
    paragraphs = _plain(entry.explanation).split("\n\n")
    console.print(Text("\n\n".join(_wrapped(p, console.width, "") for p in paragraphs)))
    console.print()
    console.print(Text("reported:", style="bold"))
    console.print(_snippet(entry.example), soft_wrap=True)
    console.print(Text("fixed:", style="bold"))
    console.print(_snippet(entry.fix), soft_wrap=True)


def _plain(markdown: str) -> str:
    return markdown.replace("`", "")


def catalogue_markdown() -> str:
    """``docs/lint-rules.md``: every rule with severity, why, an example and the fix."""
    lines = [
        "# gpuscale lint: the rule catalogue",
        "",
        "Generated from the rule registry (`gpuscale.lint.output.catalogue_markdown`); "
        "`tests/unit/lint/test_run.py` fails when this file is out of date. "
        "`gpuscale lint --list` prints the same table and `gpuscale lint --explain SLUG` one "
        "entry. Severities are defaults: some findings are raised or lowered, and their why "
        "says so.",
        "",
        "Suppress a finding with a YAML comment `# gpuscale: ignore[slug]` (several: "
        "`ignore[slug1, slug2]`) on the offending key's line or on the line above it; on an "
        "object's first line (or the line above it) the comment covers the whole object.",
        "",
        "| rule | severity | what it finds |",
        "| --- | --- | --- |",
    ]
    for entry in catalogue():
        title = entry.title
        if entry.requires:
            title += f" *(needs the {entry.requires})*"
        lines.append(f"| [`{entry.slug}`](#{entry.slug}) | {entry.severity.value} | {title} |")
    for entry in catalogue():
        lines += [
            "",
            f"## {entry.slug}",
            "",
            f"**{entry.title}.** Default severity: **{entry.severity.value}**."
            + (f" Needs the {entry.requires}." if entry.requires else ""),
            "",
            entry.explanation,
            "",
            "Reported:",
            "",
            "```yaml",
            entry.example,
            "```",
            "",
            "Fixed:",
            "",
            "```yaml",
            entry.fix,
            "```",
        ]
    return "\n".join(lines) + "\n"
