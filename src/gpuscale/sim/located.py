"""Where in a manifest an error is: a key path as the manifest's ``file:line``, and a
controller model's error (which carries its ``key_path``) moved onto it. Pure."""

from __future__ import annotations

from gpuscale.errors import GpuscaleError, InputError
from gpuscale.manifests import KeyPath, Manifest

__all__ = ["relocate", "where"]


def where(manifest: Manifest, path: KeyPath) -> str:
    """The ``file:line`` of ``path`` in ``manifest`` (its nearest written parent's)."""
    return str(manifest.line_of(path))


def relocate(error: GpuscaleError, manifest: Manifest, base: KeyPath = ()) -> InputError:
    """``error`` with its key path (``("spec", "x", 0)``) turned into the manifest's
    ``file:line``."""
    path = error.key_path
    if path[: len(base)] != base:
        path = (*base, *path)
    return InputError(
        f"{manifest.kind} {manifest.name}: {error.message}",
        where=where(manifest, path),
        fix=error.fix,
    )
