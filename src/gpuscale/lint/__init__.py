"""``gpuscale lint``: autoscaling mistakes in manifests, each with file:line, why and the fix.

Where it sits: lint reads the manifests :func:`gpuscale.inputs.read_manifests` loads and
the :class:`gpuscale.profile.Profile`, through the typed views of
:mod:`gpuscale.manifests` and the KEDA model of :mod:`gpuscale.controllers.keda`; it runs
its rules and renders findings. The CLI (``gpuscale.cli.lint_cmd``) does the file I/O.
The query analysis it stands on is :mod:`gpuscale.lint.query`; outputs are in
:mod:`gpuscale.lint.output`.

Public API::

    manifests = read_manifests(["k8s/"])
    report = run_lint(manifests, read_profile("gpuscale.yaml"), LintOptions(namespace="prod"))
    report.findings      # tuple[Finding, ...], sorted by file and line
    report.exit_code     # 0, or 1 with a finding at or above options.fail_on

Each name is imported from its module on first use (:func:`gpuscale._lazy.lazy_exports`):
``from gpuscale.lint import Severity`` loads two small modules, while ``run_lint`` brings
the rules, the KEDA and HPA models and the PromQL parser with it. ``gpuscale lint
--help`` needs only the first (``benchmarks/cli_startup.py``).
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuscale.lint._context import DEFAULT_NAMESPACE, LintContext
    from gpuscale.lint._findings import Finding, Hit, ObjectRef, Severity
    from gpuscale.lint._registry import REGISTRY, Rule
    from gpuscale.lint._run import LintOptions, LintReport, parse_slugs, run_lint, selected_rules
    from gpuscale.lint.rules import catalogue
else:
    from gpuscale._lazy import lazy_exports

    # REGISTRY is read through the rules package, whose import fills it.
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "gpuscale.lint._context": ("DEFAULT_NAMESPACE", "LintContext"),
            "gpuscale.lint._findings": ("Finding", "Hit", "ObjectRef", "Severity"),
            "gpuscale.lint._registry": ("Rule",),
            "gpuscale.lint._run": (
                "LintOptions",
                "LintReport",
                "parse_slugs",
                "run_lint",
                "selected_rules",
            ),
            "gpuscale.lint.rules": ("REGISTRY", "catalogue"),
        },
    )

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
