"""Run the selected rules over a manifest set and collect a :class:`LintReport`.

:func:`run_lint` is the core of ``gpuscale lint``: the command loads manifests
(:func:`gpuscale.manifests.load_paths`) and the profile
(:func:`gpuscale.profile.load_profile`), then calls it; tests and other commands call it
directly. It does no I/O.

Inline suppression is the loader's: a ``# gpuscale: ignore[slug, ...]`` comment on the
offending key's line or the line above it, or on the object's first line or the line
above it (:meth:`Manifest.ignored_at <gpuscale.manifests.Manifest.ignored_at>`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuscale.errors import InputError
from gpuscale.lint._context import DEFAULT_NAMESPACE, LintContext
from gpuscale.lint._findings import Finding, Hit, ObjectRef, Severity
from gpuscale.lint._registry import REGISTRY, Rule
from gpuscale.lint.rules import catalogue
from gpuscale.manifests import IGNORE_COMMENT, Location, Manifest

if TYPE_CHECKING:
    from gpuscale.profile import Profile

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
    return Finding(
        rule=entry.slug,
        severity=hit.severity or entry.severity,
        location=obj.line_of(hit.key_path),
        object=ObjectRef(obj.kind, ctx.namespace_of(obj), obj.name or None),
        object_location=obj.source,
        message=hit.message,
        why=hit.why,
        fix=hit.fix,
    )


def _suppressed(hit: Hit, slug: str) -> bool:
    return slug in hit.obj.ignored_at(hit.key_path) or slug in hit.obj.ignored_at(())


def _unknown_slugs(objects: Iterable[Manifest]) -> list[str]:
    """``file:line: ...`` notes for suppression comments naming slugs that are not rules."""
    notes = []
    seen: set[str] = set()
    for obj in objects:
        if obj.file in seen:
            continue
        seen.add(obj.file)
        for line, text in sorted(obj.comments.items()):
            for match in IGNORE_COMMENT.finditer(text):
                for slug in (part.strip() for part in match.group(1).split(",")):
                    if slug and slug not in REGISTRY:
                        notes.append(
                            f"{obj.file}:{line}: unknown rule {slug!r} in a suppression comment"
                        )
    return notes


def run_lint(
    objects: Iterable[Manifest],
    profile: Profile | None,
    options: LintOptions,
) -> LintReport:
    """Lint ``objects`` with the rules ``options`` select.

    ``profile`` is ``None`` when the user gave no profile: rules that need it stay
    silent. Findings that a ``# gpuscale: ignore[slug]`` comment covers are moved to
    :attr:`LintReport.suppressed`.
    """
    ctx = LintContext(objects, profile, default_namespace=options.namespace)
    rules = selected_rules(options)
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
            (silenced if _suppressed(hit, entry.slug) else reported).append(finding)
    return LintReport(
        findings=tuple(sorted(reported, key=Finding.sort_key)),
        suppressed=tuple(sorted(silenced, key=Finding.sort_key)),
        rules=tuple(rules),
        objects=len(ctx.objects),
        files=tuple(dict.fromkeys(obj.file for obj in ctx.objects)),
        fail_on=options.fail_on,
        notes=tuple(_unknown_slugs(ctx.objects)),
    )
