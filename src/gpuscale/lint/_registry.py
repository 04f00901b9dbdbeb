"""The rule catalogue: every rule's slug, default severity, title, explanation and check.

Rule modules register their checks with :func:`rule`; importing
:mod:`gpuscale.lint.rules` fills the registry. The catalogue is what ``--list`` prints,
what ``--explain SLUG`` shows, what the SARIF ``tool.driver.rules`` array lists and what
``docs/lint-rules.md`` is generated from, so the four never disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from gpuscale.lint._context import LintContext
from gpuscale.lint._findings import Hit, Severity

__all__ = ["REGISTRY", "Check", "Rule", "rule"]

Check = Callable[[LintContext], Iterable[Hit]]


@dataclass(frozen=True)
class Rule:
    """One catalogue entry."""

    slug: str
    severity: Severity
    """The default severity; a finding may be raised or lowered from it (the why says why)."""
    title: str
    """One line: what the rule finds."""
    explanation: str
    """Why it matters and how KEDA/the HPA/Kubernetes behave, with sources."""
    example: str
    """A manifest fragment that the rule reports."""
    fix: str
    """The same fragment, fixed."""
    check: Check
    """The check."""
    requires: str = ""
    """What the rule needs besides manifests: ``profile`` (it does not run without one),
    ``simulator`` (it runs a simulation: it costs more than the others) or empty."""
    defers_to: tuple[str, ...] = ()
    """More specific rules that report the same problem better: a finding of this rule is
    dropped when one of theirs is on the same line of the same object (when they run)."""


REGISTRY: dict[str, Rule] = {}
"""Every rule by slug, in registration order (the catalogue's order)."""


def rule(
    slug: str,
    *,
    severity: Severity,
    title: str,
    explanation: str,
    example: str,
    fix: str,
    requires: str = "",
    defers_to: tuple[str, ...] = (),
) -> Callable[[Check], Check]:
    """Register the decorated function as the check of rule ``slug``."""

    def register(check: Check) -> Check:
        add(
            Rule(
                slug=slug,
                severity=severity,
                title=title,
                explanation=explanation,
                example=example,
                fix=fix,
                check=check,
                requires=requires,
                defers_to=defers_to,
            )
        )
        return check

    return register


def add(entry: Rule) -> None:
    """Add ``entry`` to the registry; a slug may be registered once."""
    if entry.slug in REGISTRY:
        raise ValueError(f"lint rule {entry.slug!r} is registered twice")
    REGISTRY[entry.slug] = entry
