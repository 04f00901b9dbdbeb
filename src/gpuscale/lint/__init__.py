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

Each name is imported on first use (PEP 562): ``from gpuscale.lint import Severity`` loads
two small modules, while ``run_lint`` brings the rules, the KEDA and HPA models, the
PromQL parser and the profile models with it. ``gpuscale lint --help`` needs only the
first (``benchmarks/cli_startup.py``).
"""

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
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

# Where each name lives. REGISTRY comes through the rules package, whose import fills it.
_HOMES = {
    "DEFAULT_NAMESPACE": "gpuscale.lint._context",
    "LintContext": "gpuscale.lint._context",
    "Finding": "gpuscale.lint._findings",
    "Hit": "gpuscale.lint._findings",
    "ObjectRef": "gpuscale.lint._findings",
    "Severity": "gpuscale.lint._findings",
    "REGISTRY": "gpuscale.lint.rules",
    "Rule": "gpuscale.lint._registry",
    "LintOptions": "gpuscale.lint._run",
    "LintReport": "gpuscale.lint._run",
    "parse_slugs": "gpuscale.lint._run",
    "run_lint": "gpuscale.lint._run",
    "selected_rules": "gpuscale.lint._run",
    "catalogue": "gpuscale.lint.rules",
}

if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        home = _HOMES.get(name)
        if home is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})
