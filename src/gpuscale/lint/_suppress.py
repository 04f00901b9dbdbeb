"""Inline suppression: ``# gpuscale: ignore[slug]`` comments in the manifests.

A comment ``# gpuscale: ignore[slug1,slug2]`` (or ``# gpuscale: ignore`` for every rule)
suppresses findings of those rules

- on its own line (a trailing comment on the offending key),
- on the next line, when the comment is alone on its line (a comment above the key),
- in the whole object, when it is on the object's first line or alone on the line above
  it (above ``apiVersion:``).

Directives are read from the raw text, line by line; a directive naming a slug lint does
not know is reported as a note rather than silently ignored.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from gpuscale.lint._findings import Finding

__all__ = ["Directive", "Suppressions"]

_DIRECTIVE = re.compile(r"#\s*gpuscale:\s*ignore(?:\[([^\]]*)\])?")


@dataclass(frozen=True)
class Directive:
    """One ``# gpuscale: ignore[...]`` comment."""

    line: int
    slugs: frozenset[str] | None
    """The rules it names; ``None`` for all rules."""
    alone: bool
    """Whether the comment is the only thing on its line."""

    def covers(self, slug: str) -> bool:
        """Whether the directive names ``slug`` (or all rules)."""
        return self.slugs is None or slug in self.slugs


def _directives(text: str) -> dict[int, Directive]:
    found: dict[int, Directive] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if "gpuscale" not in line:
            continue
        for match in _DIRECTIVE.finditer(line):
            start = match.start()
            if start > 0 and not line[start - 1].isspace():
                continue
            names = match.group(1)
            slugs = (
                frozenset(s.strip() for s in names.split(",") if s.strip())
                if names is not None
                else None
            )
            found[number] = Directive(number, slugs, alone=line[:start].strip() == "")
            break
    return found


class Suppressions:
    """The directives of every source file, and the question: is this finding suppressed?"""

    def __init__(self, sources: Mapping[str, str] | None) -> None:
        self._by_file = {file: _directives(text) for file, text in (sources or {}).items()}

    def unknown_slugs(self, known: frozenset[str]) -> list[str]:
        """``file:line: ...`` notes for directives naming slugs that are not rules."""
        notes = []
        for file, directives in sorted(self._by_file.items()):
            for line, directive in sorted(directives.items()):
                for slug in sorted((directive.slugs or frozenset()) - known):
                    notes.append(f"{file}:{line}: unknown rule {slug!r} in a suppression comment")
        return notes

    def suppressed(self, finding: Finding) -> bool:
        """Whether a comment suppresses ``finding`` (see the module docstring)."""
        slug = finding.rule
        return self._at(finding.location.file, finding.location.line, slug) or self._at(
            finding.object_location.file, finding.object_location.line, slug
        )

    def _at(self, file: str, line: int, slug: str) -> bool:
        directives = self._by_file.get(file)
        if not directives:
            return False
        here = directives.get(line)
        if here is not None and here.covers(slug):
            return True
        above = directives.get(line - 1)
        return above is not None and above.alone and above.covers(slug)
