"""Which profile a command uses: one rule, here, for every command that reads one.

1. ``--profile FILE`` when given (it must exist).
2. Else a ``gpuscale.yaml`` (or ``gpuscale.yml``) beside the first manifest path: in
   that directory (a directory path) or the file's directory, else one level up, which is
   how ``gpuscale init DIR`` lays a project out (``DIR/gpuscale.yaml`` beside
   ``DIR/manifests/``). A first path of ``-`` (stdin) has no place, so this step is
   skipped.
3. Else ``./gpuscale.yaml`` (or ``.yml``) in the working directory.
4. Else the built-in defaults (:meth:`Profile.default`); ``source`` is then ``None``.

``simulate``, ``lint``, ``deploy`` and ``verify`` pass their manifest paths; ``install``
and ``watch``, which take none, start at step 3. ``gpuscale cluster`` and ``profile``
name their file themselves. Before this rule ``simulate DIR`` looked beside the
manifests while ``lint``, ``deploy`` and ``verify`` looked only in the working
directory, so ``lint``'s flap rule could simulate another profile than ``simulate`` on
the same directory.

The profile package (pydantic models) is imported on the first call, so the commands
that use this module start without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuscale.profile import Profile

__all__ = ["DEFAULTS_SOURCE", "DEFAULT_PROFILE", "find_profile_file", "optional_profile"]

DEFAULT_PROFILE = Path("gpuscale.yaml")

DEFAULTS_SOURCE = "defaults (no gpuscale.yaml found)"
"""What :attr:`Profile.source` says when no file was found."""

_NAMES = ("gpuscale.yaml", "gpuscale.yml")


def find_profile_file(
    given: Path | None, manifests: Sequence[str | Path] = (), *, cwd: Path | None = None
) -> Path | None:
    """The profile file the rule of the module docstring picks, or ``None`` (defaults).

    ``given`` is returned as is, existing or not (reading it then says what is wrong);
    ``cwd`` stands for the working directory (tests)."""
    if given is not None:
        return given
    here = cwd if cwd is not None else Path()
    places: list[Path] = []
    if manifests and str(manifests[0]) != "-":
        first = Path(manifests[0])
        folder = first if first.is_dir() else first.parent
        places += [folder, folder.parent]
    places.append(here)
    for folder in places:
        for name in _NAMES:
            candidate = folder / name
            if candidate.is_file():
                return candidate
    return None


def optional_profile(
    path: Path | None, manifests: Sequence[str | Path] = ()
) -> tuple[Profile, str | None]:
    """The profile :func:`find_profile_file` picks, read and validated, with the file it
    came from; the defaults and ``None`` when it picks none."""
    from gpuscale.inputs import read_profile  # noqa: PLC0415 - see module doc
    from gpuscale.profile import Profile  # noqa: PLC0415 - see module doc

    found = find_profile_file(path, manifests)
    if found is None:
        return Profile.default().located({}, DEFAULTS_SOURCE), None
    return read_profile(found), str(found)
