"""``gpuscale lint``: autoscaling mistakes in manifests, each with file:line, why and the fix.

Where it sits: lint reads manifests and profile values through a small protocol
(:class:`ManifestObject`, :class:`ProfileValues`) that the loaders adapt to, runs its
rules, and renders findings; the CLI (``gpuscale.cli.lint_cmd``) does the file I/O. The
query analysis it stands on is :mod:`gpuscale.lint.query`; outputs are in
:mod:`gpuscale.lint.output`.

Public API::

    report = run_lint(objects, profile_values, LintOptions(namespace="prod"), sources=texts)
    report.findings      # tuple[Finding, ...], sorted by file and line
    report.exit_code     # 0, or 1 with a finding at or above options.fail_on
"""

from gpuscale.lint._context import (
    DEFAULT_NAMESPACE,
    LintContext,
    ManifestObject,
    NodePool,
    ProfileValues,
    Taint,
)
from gpuscale.lint._findings import Finding, Hit, KeyPath, Location, ObjectRef, Severity
from gpuscale.lint._registry import REGISTRY, Rule
from gpuscale.lint._run import LintOptions, LintReport, parse_slugs, run_lint, selected_rules
from gpuscale.lint.rules import catalogue

__all__ = [
    "DEFAULT_NAMESPACE",
    "REGISTRY",
    "Finding",
    "Hit",
    "KeyPath",
    "LintContext",
    "LintOptions",
    "LintReport",
    "Location",
    "ManifestObject",
    "NodePool",
    "ObjectRef",
    "ProfileValues",
    "Rule",
    "Severity",
    "Taint",
    "catalogue",
    "parse_slugs",
    "run_lint",
    "selected_rules",
]
