"""Run the selected rules over a manifest set and collect a :class:`LintReport`.

:func:`run_lint` is the core of ``gpuscale lint``: the command loads manifests and the
profile, then calls it; tests and other commands call it directly. It does no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from gpuscale.errors import InputError
from gpuscale.lint._context import DEFAULT_NAMESPACE, LintContext, ManifestObject, ProfileValues
from gpuscale.lint._findings import Finding, Hit, Location, ObjectRef, Severity
from gpuscale.lint._registry import REGISTRY, Rule
from gpuscale.lint._suppress import Suppressions
from gpuscale.lint.rules import catalogue

__all__ = ["LintOptions", "LintReport", "parse_slugs", "run_lint", "selected_rules"]


@dataclass(frozen=True)
class LintOptions:
    """What the user asked for on the command line."""

    select: frozenset[str] | None = None
    """Run only these rules (``--select``); ``None``: all."""
    ignore: frozenset[str] = frozenset()
    """Skip these rules (``--ignore``)."""
    fail_on: Severity = Severity.ERROR
    """Exit 1 when a finding is at or above this severity (``--fail-on``)."""
    namespace: str = DEFAULT_NAMESPACE
    """The namespace of objects whose manifest sets none (``--namespace``)."""


@dataclass(frozen=True)
class LintReport:
    """The outcome of one lint run."""

    findings: tuple[Finding, ...]
    """Reported findings, sorted by file, line, column and rule."""
    suppressed: tuple[Finding, ...]
    """Findings an inline ``# gpuscale: ignore[...]`` comment silenced."""
    rules: tuple[Rule, ...]
    """The rules that ran."""
    objects: int
    files: tuple[str, ...]
    fail_on: Severity = Severity.ERROR
    notes: tuple[str, ...] = field(default=())
    """Things the user should know that are not findings (unknown slugs in comments...)."""

    def counts(self) -> dict[Severity, int]:
        """Number of reported findings per severity."""
        counts = dict.fromkeys(Severity, 0)
        for finding in self.findings:
            counts[finding.severity] += 1
        return counts

    @property
    def failed(self) -> bool:
        """Whether a finding is at or above :attr:`fail_on`."""
        return any(f.severity.rank >= self.fail_on.rank for f in self.findings)

    @property
    def exit_code(self) -> int:
        """1 when :attr:`failed`, else 0."""
        return 1 if self.failed else 0


def parse_slugs(values: Iterable[str], *, flag: str) -> frozenset[str]:
    """Slugs from repeated and/or comma-separated flag values; unknown slugs are an error."""
    slugs = frozenset(s.strip() for value in values for s in value.split(",") if s.strip())
    unknown = sorted(slugs - REGISTRY.keys())
    if unknown:
        raise InputError(
            f"unknown rule {', '.join(unknown)}",
            where=flag,
            fix="`gpuscale lint --list` prints every rule's slug",
        )
    return slugs


def selected_rules(options: LintOptions) -> list[Rule]:
    """The catalogue's rules that ``options`` select and that can run in this build."""
    rules = []
    for entry in catalogue():
        if options.select is not None and entry.slug not in options.select:
            continue
        if entry.slug in options.ignore or not entry.available:
            continue
        rules.append(entry)
    return rules


def _finding(entry: Rule, hit: Hit, ctx: LintContext) -> Finding:
    obj = hit.obj
    file, line, column = obj.line_of(hit.key_path)
    start_file, start_line, start_column = obj.line_of(())
    name = obj.name if isinstance(obj.name, str) else None
    return Finding(
        rule=entry.slug,
        severity=hit.severity or entry.severity,
        location=Location(file, line, column),
        object=ObjectRef(obj.kind, ctx.namespace_of(obj), name),
        object_location=Location(start_file, start_line, start_column),
        message=hit.message,
        why=hit.why,
        fix=hit.fix,
    )


def run_lint(
    objects: Sequence[ManifestObject],
    profile: ProfileValues | None,
    options: LintOptions,
    *,
    sources: Mapping[str, str] | None = None,
) -> LintReport:
    """Lint ``objects`` with the rules ``options`` select.

    ``profile`` is ``None`` when the user gave no profile: rules that need it stay
    silent. ``sources`` maps each file name (as ``line_of`` reports it) to its text, for
    the ``# gpuscale: ignore[...]`` comments; without it nothing is suppressed.
    """
    ctx = LintContext(objects, profile, default_namespace=options.namespace)
    rules = selected_rules(options)
    suppressions = Suppressions(sources)
    seen: set[tuple[str, Location, str]] = set()
    reported: list[Finding] = []
    silenced: list[Finding] = []
    for entry in rules:
        for hit in entry.check(ctx) if entry.check is not None else ():
            finding = _finding(entry, hit, ctx)
            key = (finding.rule, finding.location, finding.message)
            if key in seen:
                continue
            seen.add(key)
            (silenced if suppressions.suppressed(finding) else reported).append(finding)
    files = tuple(dict.fromkeys(obj.line_of(())[0] for obj in objects))
    return LintReport(
        findings=tuple(sorted(reported, key=Finding.sort_key)),
        suppressed=tuple(sorted(silenced, key=Finding.sort_key)),
        rules=tuple(rules),
        objects=len(objects),
        files=files,
        fail_on=options.fail_on,
        notes=tuple(suppressions.unknown_slugs(frozenset(REGISTRY))),
    )
