"""What one lint finding is: the rule, how bad, where, which object, and what to do.

A rule reports a :class:`Hit` (a manifest, the key path that is wrong, the message, the
why and the fix); :func:`gpuscale.lint.run_lint` turns each hit into a :class:`Finding`
by adding the rule's slug and severity and resolving the key path to the
:class:`~gpuscale.manifests.Location` (file, line, column) through
:meth:`Manifest.line_of <gpuscale.manifests.Manifest.line_of>`. Findings are plain frozen
values, so every output (text, JSON, SARIF) renders the same thing.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuscale.manifests import KeyPath, Location, Manifest

__all__ = ["Finding", "Hit", "ObjectRef", "Severity"]


class Severity(enum.StrEnum):
    """How bad a finding is. Ordered: ``ERROR`` > ``WARNING`` > ``INFO``."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        """2 for error, 1 for warning, 0 for info: compare with ``>=`` for ``--fail-on``."""
        return _RANKS[self]

    @property
    def sarif_level(self) -> str:
        """The SARIF 2.1.0 ``level`` for this severity (``info`` is ``note`` there)."""
        return "note" if self is Severity.INFO else self.value


_RANKS = {Severity.ERROR: 2, Severity.WARNING: 1, Severity.INFO: 0}


@dataclass(frozen=True)
class ObjectRef:
    """The Kubernetes object a finding is about."""

    kind: str
    namespace: str
    """The object's namespace, or the ``--namespace`` default when the manifest sets none."""
    name: str | None
    """``metadata.name``; ``None`` when the manifest has none (or it is not a string)."""

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name or '<unnamed>'}"


@dataclass(frozen=True)
class Hit:
    """What a rule reports before the framework adds the rule's slug and resolves lines."""

    obj: Manifest
    """The manifest the finding is about."""
    key_path: KeyPath
    """The offending key; a path that does not exist resolves to its deepest existing parent."""
    message: str
    """One sentence: what is wrong."""
    why: str
    """One paragraph: why it matters, with the arithmetic where there is some."""
    fix: str
    """The fix as a YAML snippet (or, rarely, a short instruction when no snippet fits)."""
    severity: Severity | None = None
    """Overrides the rule's default severity for this finding (e.g. worse with a fallback)."""


@dataclass(frozen=True)
class Finding:
    """One problem in one object, ready to print."""

    rule: str
    """The rule's slug, e.g. ``query-divides-by-replicas``."""
    severity: Severity
    location: Location
    """Where the offending key is."""
    object: ObjectRef
    object_location: Location
    """Where the object starts (its first key)."""
    message: str
    why: str
    fix: str

    def sort_key(self) -> tuple[str, int, int, str]:
        """Order of output: file, line, column, rule."""
        return (self.location.file, self.location.line, self.location.column, self.rule)
