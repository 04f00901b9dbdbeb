"""Helpers for lint tests: lint a YAML string through the real loader, build a profile,
find the line a key is on."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from gpuscale.lint import Finding, LintOptions, Severity, run_lint
from gpuscale.manifests import load_text
from gpuscale.profile import Profile

DATA = Path(__file__).parent / "data"
EXAMPLES = Path(__file__).parents[3] / "examples"


def lint_yaml(
    text: str,
    *,
    profile: Profile | None = None,
    select: Iterable[str] | None = None,
    namespace: str = "default",
    file: str = "manifest.yaml",
    validate: bool = False,
) -> list[Finding]:
    """Findings for ``text`` (dedented), restricted to ``select`` rules when given; with
    ``validate``, schemas are checked too (as ``gpuscale lint`` does)."""
    manifests = load_text(textwrap.dedent(text), file)
    options = LintOptions(
        select=frozenset(select) if select is not None else None,
        namespace=namespace,
        fail_on=Severity.INFO,
        validate=validate,
    )
    return list(run_lint(manifests, profile, options).findings)


def make_profile(**sections: Any) -> Profile:
    """A profile from its sections as plain data (``gpuscale.yaml``'s keys), defaults filled
    as :func:`gpuscale.inputs.read_profile` fills them."""
    return Profile.model_validate(sections)


def gpu_pool(
    name: str = "gpu",
    size: str = "gpu-mi300x1-192gb",
    max_nodes: int = 4,
    **fields: Any,
) -> dict[str, Any]:
    """A node pool entry for :func:`make_profile` (DOKS labels and taints from the size)."""
    return {"name": name, "size": size, "min_nodes": 0, "max_nodes": max_nodes, **fields}


def line_of(text: str, needle: str, occurrence: int = 1) -> int:
    """The 1-based line of the ``occurrence``-th line of ``text`` (dedented) holding ``needle``."""
    seen = 0
    for number, line in enumerate(textwrap.dedent(text).splitlines(), start=1):
        if needle in line:
            seen += 1
            if seen == occurrence:
                return number
    raise AssertionError(f"{needle!r} not in the manifest")


def only(findings: list[Finding], rule: str) -> list[Finding]:
    """The findings of one rule."""
    return [f for f in findings if f.rule == rule]
