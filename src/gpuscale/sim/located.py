"""Where in a manifest an error is: a key path as the manifest's ``file:line``, and a
controller model's error (whose ``where`` is a dotted key path) moved onto it. Pure."""

from __future__ import annotations

import re

from gpuscale.errors import GpuscaleError, InputError
from gpuscale.manifests import KeyPath, Manifest

__all__ = ["path_of", "relocate", "where"]


def where(manifest: Manifest, path: KeyPath) -> str:
    """The ``file:line`` of ``path`` in ``manifest`` (its nearest written parent's)."""
    return str(manifest.line_of(path))


def path_of(text: str) -> KeyPath:
    """``spec.triggers[0].metadata.query`` → ``("spec", "triggers", 0, "metadata", "query")``."""
    parts: list[str | int] = []
    for token in re.findall(r"[^.\[\]]+|\[\d+\]", text):
        parts.append(int(token[1:-1]) if token.startswith("[") else token)
    return tuple(parts)


def relocate(error: GpuscaleError, manifest: Manifest, base: KeyPath = ()) -> InputError:
    """``error`` with its key path (``spec.x[0]``) turned into the manifest's ``file:line``."""
    path = path_of(error.where or "")
    if path[: len(base)] != base:
        path = (*base, *path)
    return InputError(
        f"{manifest.kind} {manifest.name}: {error.message}",
        where=where(manifest, path),
        fix=error.fix,
    )
