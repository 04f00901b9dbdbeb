"""``gpuscale lint``: autoscaling mistakes in manifests, each with file:line, why and the fix.

Where it sits: lint reads the manifests :func:`gpuscale.manifests.load_paths` loads and
the :class:`gpuscale.profile.Profile`, through the typed views of
:mod:`gpuscale.manifests` and the KEDA model of :mod:`gpuscale.controllers.keda`; it runs
its rules and renders findings. The CLI (``gpuscale.cli.lint_cmd``) does the file I/O.
The query analysis it stands on is :mod:`gpuscale.lint.query`; outputs are in
:mod:`gpuscale.lint.output`.

Public API::

    manifests = load_paths(["k8s/"])
    report = run_lint(manifests, load_profile("gpuscale.yaml"), LintOptions(namespace="prod"))
    report.findings      # tuple[Finding, ...], sorted by file and line
    report.exit_code     # 0, or 1 with a finding at or above options.fail_on
"""

from gpuscale.lint._context import DEFAULT_NAMESPACE, LintContext
from gpuscale.lint._findings import Finding, Hit, ObjectRef, Severity
from gpuscale.lint._registry import REGISTRY, Rule
from gpuscale.lint._run import LintOptions, LintReport, parse_slugs, run_lint, selected_rules
from gpuscale.lint.rules import catalogue

__all__ = [
    "DEFAULT_NAMESPACE",
    "REGISTRY",
    "Finding",
    "Hit",
    "LintContext",
    "LintOptions",
    "LintReport",
    "ObjectRef",
    "Rule",
    "Severity",
    "catalogue",
    "parse_slugs",
    "run_lint",
    "selected_rules",
]
