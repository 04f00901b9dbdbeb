"""Helpers for lint tests: lint a YAML string, find the line a key is on."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from pathlib import Path

import pytest

from gpuscale.lint import Finding, LintOptions, ProfileValues, Severity, run_lint
from tests.unit.lint.adapter import load_text

DATA = Path(__file__).parent / "data"


def lint_yaml(
    text: str,
    *,
    profile: ProfileValues | None = None,
    select: Iterable[str] | None = None,
    namespace: str = "default",
    file: str = "manifest.yaml",
) -> list[Finding]:
    """Findings for ``text`` (dedented), restricted to ``select`` rules when given."""
    text = textwrap.dedent(text)
    objects = load_text(text, file)
    options = LintOptions(
        select=frozenset(select) if select is not None else None,
        namespace=namespace,
        fail_on=Severity.INFO,
    )
    return list(run_lint(objects, profile, options, sources={file: text}).findings)


def line_of(text: str, needle: str, occurrence: int = 1) -> int:
    """The 1-based line of the ``occurrence``-th line of ``text`` (dedented) holding ``needle``."""
    seen = 0
    for number, line in enumerate(textwrap.dedent(text).splitlines(), start=1):
        if needle in line:
            seen += 1
            if seen == occurrence:
                return number
    raise AssertionError(f"{needle!r} not in the manifest")


def only(findings: list[Finding], rule: str) -> list[Finding]:
    """The findings of one rule."""
    return [f for f in findings if f.rule == rule]


@pytest.fixture
def tutorial_text() -> str:
    return (DATA / "tutorial" / "resources.yaml").read_text()
