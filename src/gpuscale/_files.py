"""Writing a file whole or not at all: every output gpuscale writes (timelines, reports,
plots, scaffolds, kubeconfigs) goes through here.

The data lands in a hidden temporary file beside the target, then ``os.replace`` swaps it
in, so a reader never sees half a file and an interrupted run leaves the old one. The
temporary is created with ``mode`` through the umask, as a plain ``open()`` would
(``tempfile.mkstemp`` would leave 0600 on files the user expects to share); kubeconfigs
pass 0600.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

__all__ = ["stage", "write_atomically"]


def stage(path: Path, data: bytes, *, mode: int = 0o666) -> Path:
    """Write ``data`` to a new hidden file beside ``path`` and return it; the caller
    ``os.replace``-s it onto ``path`` (or unlinks it). Nothing is left behind on error."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return temporary


def write_atomically(path: Path, data: bytes, *, mode: int = 0o666) -> None:
    """Replace ``path`` with ``data`` in one step (see the module doc)."""
    temporary = stage(path, data, mode=mode)
    try:
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
