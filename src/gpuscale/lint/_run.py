"""Run the selected rules over a manifest set and collect a :class:`LintReport`.

:func:`run_lint` is the core of ``gpuscale lint``: the command loads manifests
(:func:`gpuscale.inputs.read_manifests`) and the profile
(:func:`gpuscale.inputs.read_profile`), then calls it; tests and other commands call it
directly. It does no I/O.

Inline suppression is the loader's: a ``# gpuscale: ignore[slug, ...]`` comment on the
offending key's line or the line above it, or on the object's first line or the line
above it (:meth:`Manifest.ignored_at <gpuscale.manifests.Manifest.ignored_at>`).

A rule that cannot run (it needs a profile and there is none, or it checks schemas and
this run does not) is left out; when the user selected it
by name, the report says so (:attr:`LintReport.not_run`), and a run in which no selected
rule could run exits 2, so it never passes for a clean result.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuscale.errors import InputError
from gpuscale.lint._context import DEFAULT_NAMESPACE, LintContext
from gpuscale.lint._findings import Finding, Hit, ObjectRef, Severity
from gpuscale.lint._registry import REGISTRY, Rule
from gpuscale.lint.rules import SCHEMA_RULE, catalogue
from gpuscale.manifests import DEFAULT_KUBE_VERSION, IGNORE_COMMENT, Location, Manifest

if TYPE_CHECKING:
    from gpuscale.profile import Profile

__all__ = [
    "LintOptions",
    "LintReport",
    "parse_slugs",
    "run_lint",
    "schema_version",
    "selected_rules",
    "why_not_run",
]


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
    validate: bool = False
    """Check the manifests against their schemas too (rule ``schema-invalid``).
    ``gpuscale lint`` always does; off by default for callers that validate on their own
    first (``gpuscale deploy``), which would otherwise list each schema problem twice."""
    kube_version: str | None = None
    """The Kubernetes version whose schemas ``schema-invalid`` uses (``1.33``); ``None``:
    the profile's ``cluster.version`` when it names one, else the newest gpuscale knows."""


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
    """Things the user should know that are not findings (unknown slugs in comments, rules
    that were selected but not run...)."""
    not_run: tuple[tuple[str, str], ...] = field(default=())
    """``(slug, why)`` of each rule selected by name (``--select``) that could not run."""

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
    def nothing_ran(self) -> bool:
        """Whether rules were selected by name and none of them could run."""
        return not self.rules and bool(self.not_run)

    @property
    def exit_code(self) -> int:
        """2 when :attr:`nothing_ran`, 1 when :attr:`failed`, else 0."""
        if self.nothing_ran:
            return 2
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


def why_not_run(entry: Rule, profile: Profile | None, options: LintOptions) -> str | None:
    """Why ``entry`` cannot run with this profile and these options; ``None`` if it can."""
    if entry.requires == "profile" and profile is None:
        return (
            "it needs the profile: pass --profile FILE, or run where ./gpuscale.yaml is "
            "(gpuscale init writes one)"
        )
    if entry.slug == SCHEMA_RULE and not options.validate:
        return "this run does not check schemas (LintOptions.validate is off)"
    return None


def selected_rules(options: LintOptions, profile: Profile | None = None) -> list[Rule]:
    """The catalogue's rules that ``options`` select and that can run (see
    :func:`why_not_run`; without ``profile``, the rules that need one are left out)."""
    rules = []
    for entry in catalogue():
        if options.select is not None and entry.slug not in options.select:
            continue
        if entry.slug in options.ignore or why_not_run(entry, profile, options) is not None:
            continue
        rules.append(entry)
    return rules


def _not_run(profile: Profile | None, options: LintOptions) -> list[tuple[str, str]]:
    """``(slug, why)`` for the rules the user named in ``--select`` that cannot run."""
    if options.select is None:
        return []
    found = []
    for entry in catalogue():
        if entry.slug in options.select and entry.slug not in options.ignore:
            reason = why_not_run(entry, profile, options)
            if reason is not None:
                found.append((entry.slug, reason))
    return found


def schema_version(options: LintOptions, profile: Profile | None) -> str:
    """The Kubernetes minor version ``schema-invalid`` validates against (see
    :attr:`LintOptions.kube_version`)."""
    if options.kube_version:
        return options.kube_version
    match = re.match(r"v?(\d+\.\d+)", profile.cluster.version) if profile is not None else None
    return match.group(1) if match else DEFAULT_KUBE_VERSION


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


def _deferred(found: list[tuple[Finding, bool]]) -> list[tuple[Finding, bool]]:
    """``found`` without the findings whose rule defers to a rule that reported (or had
    suppressed) a finding on the same line of the same object."""
    where = {(f.rule, f.object_location, f.location.line) for f, _ in found}
    return [
        (finding, silenced)
        for finding, silenced in found
        if not any(
            (other, finding.object_location, finding.location.line) in where
            for other in REGISTRY[finding.rule].defers_to
        )
    ]


_DIRECTIVE = re.compile(r"gpuscale:\s*ignore\b")
"""Where a suppression comment starts; what follows must be ``[slug, ...]``."""


def _unknown_slug(place: str, slug: str) -> str:
    close = difflib.get_close_matches(slug, REGISTRY, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return (
        f"{place}: unknown rule {slug!r} in a suppression comment; it suppresses nothing "
        f"({hint}`gpuscale lint --list` prints every rule's slug)"
    )


def _comment_notes(place: str, text: str) -> list[str]:
    """Notes for one comment: unknown slugs, and ``gpuscale: ignore`` without ``[slug]``."""
    notes = []
    for start in _DIRECTIVE.finditer(text):
        match = IGNORE_COMMENT.match(text, start.start())
        slugs = [part.strip() for part in match.group(1).split(",")] if match else []
        if not any(slugs):
            notes.append(
                f"{place}: a suppression comment without rules suppresses nothing; name them: "
                "# gpuscale: ignore[slug, ...] (`gpuscale lint --list` prints the slugs)"
            )
        notes += [_unknown_slug(place, slug) for slug in slugs if slug and slug not in REGISTRY]
    return notes


def _unknown_slugs(objects: Iterable[Manifest]) -> list[str]:
    """``file:line: ...`` notes for suppression comments that suppress nothing: slugs that
    are not rules, and ``gpuscale: ignore`` without ``[slug, ...]`` (or with ``[]``)."""
    notes = []
    seen: set[str] = set()
    for obj in objects:
        if obj.file in seen:
            continue
        seen.add(obj.file)
        for line, text in sorted(obj.comments.items()):
            notes += _comment_notes(f"{obj.file}:{line}", text)
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
    ctx = LintContext(
        objects,
        profile,
        default_namespace=options.namespace,
        schema_version=schema_version(options, profile) if options.validate else None,
    )
    rules = selected_rules(options, profile)
    seen: set[tuple[str, Location, str]] = set()
    found: list[tuple[Finding, bool]] = []
    for entry in rules:
        for hit in entry.check(ctx):
            finding = _finding(entry, hit, ctx)
            key = (finding.rule, finding.location, finding.message)
            if key in seen:
                continue
            seen.add(key)
            found.append((finding, _suppressed(hit, entry.slug)))
    kept = _deferred(found)
    not_run = _not_run(profile, options)
    notes = _unknown_slugs(ctx.objects) + ctx.notes
    notes += [f"rule {slug} was not run: {reason}" for slug, reason in not_run]
    return LintReport(
        findings=tuple(sorted((f for f, s in kept if not s), key=Finding.sort_key)),
        suppressed=tuple(sorted((f for f, s in kept if s), key=Finding.sort_key)),
        rules=tuple(rules),
        objects=len(ctx.objects),
        files=tuple(dict.fromkeys(obj.file for obj in ctx.objects)),
        fail_on=options.fail_on,
        notes=tuple(notes),
        not_run=tuple(not_run),
    )
