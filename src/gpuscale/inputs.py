"""The edge where gpuscale reads the user's files: manifests, the profile, scenarios, traces.

The packages that decide (``manifests``, ``profile``, ``sim``) are pure: they parse text
they are given (``load_text``, ``load_profile_text``, ``parse_scenario``, ``parse_trace``)
and never open a file, read standard input or look at the file system; the import-linter
contract and ``tests/unit/test_pure_layers.py`` hold them to it. This module is the one
place that does, for the commands, the lint runner, the simulator's callers and the tests:

```
paths, -  ─► read_manifests ─► load_text ─► ManifestSet
FILE      ─► read_profile   ─► load_profile_text ─► Profile
FILE      ─► read_scenario  ─► parse_scenario ─► Scenario
FILE      ─► read_trace     ─► parse_trace ─► Trace
```

Every problem with a path (missing, a directory where a file is wanted, not UTF-8, not
readable) is the same one-line :class:`~gpuscale.errors.InputError` subclass the parser
raises for that kind of input, naming the path and the fix. The parsers are imported on
first use, so importing this module costs nothing a command does not need (reading the
manifests does not bring pydantic, nor reading the profile ruamel's emitter or numpy).
"""

from __future__ import annotations

import errno
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from gpuscale.errors import InputError, ManifestError, ProfileError

if TYPE_CHECKING:
    from gpuscale.manifests import ManifestSet
    from gpuscale.profile import Profile
    from gpuscale.sim.scenario import Scenario
    from gpuscale.sim.traces import Trace, TraceFormat

__all__ = ["read_manifests", "read_profile", "read_scenario", "read_trace"]

_YAML_SUFFIXES = (".yaml", ".yml")
_KUSTOMIZATIONS = ("kustomization.yaml", "kustomization.yml")
"""Kustomize's build files (``kind: Kustomization``): they list manifests, they are not
one; ``kustomize build DIR | gpuscale lint -`` lints what they produce."""


def read_manifests(paths: Sequence[str | Path], *, stdin: TextIO | None = None) -> ManifestSet:
    """Every manifest in ``paths``, in the order given.

    A path may be a file (any name), a directory (its ``*.yaml``/``*.yml`` files,
    recursively, in sorted order, skipping hidden entries, the profile
    ``gpuscale.yaml`` and kustomize's ``kustomization.yaml``, which are not manifests), or
    ``-`` for ``stdin``. A file named explicitly is read whatever its name.
    Raises :class:`ManifestError` for a missing path, an unreadable or non-UTF-8 file,
    a directory with no manifests, or YAML that does not parse.
    """
    from gpuscale.manifests import STDIN, Manifest, ManifestSet, load_text  # noqa: PLC0415

    manifests: list[Manifest] = []
    for raw in paths:
        if str(raw) == "-":
            if stdin is None:
                raise ManifestError(
                    "'-' names standard input, but none was given", where=STDIN, fix=None
                )
            manifests.extend(load_text(stdin.read(), STDIN))
            continue
        for file in _expand(Path(raw)):
            text = _read_text(file, error=ManifestError, what="file or directory")
            manifests.extend(load_text(text, str(file)))
    return ManifestSet(manifests)


def read_profile(path: str | Path) -> Profile:
    """The profile in the file ``path``; raises :class:`ProfileError` for any problem."""
    from gpuscale.profile import load_profile_text  # noqa: PLC0415 - see module doc

    file = Path(path)
    text = _read_text(
        file,
        error=ProfileError,
        what="file",
        missing_fix="create it with gpuscale init, or pass the right path",
        directory_fix="pass the profile file, e.g. DIR/gpuscale.yaml",
    )
    return load_profile_text(text, str(file))


def read_scenario(path: str | Path) -> Scenario:
    """The scenario in the YAML file ``path``; errors name ``file:line``."""
    from gpuscale.sim.scenario import parse_scenario  # noqa: PLC0415 - see module doc

    file = Path(path)
    text = _read_text(
        file, error=InputError, what="scenario file", missing_fix="pass an existing --scenario FILE"
    )
    return parse_scenario(text, source=str(file))


def read_trace(path: str | Path, *, fmt: TraceFormat = "auto") -> Trace:
    """The request trace in the file ``path`` (``fmt="auto"`` tells the format from its
    first line); errors name ``file:line``."""
    from gpuscale.sim.traces import parse_trace  # noqa: PLC0415 - see module doc

    text = _read_text(Path(path), error=InputError, what="trace file")
    return parse_trace(text, source=str(path), fmt=fmt)


def _expand(path: Path) -> Iterable[Path]:
    """The manifest files a path names: itself, or a directory's YAML files."""
    from gpuscale.manifests import PROFILE_NAMES  # noqa: PLC0415 - see module doc

    if path.is_dir():
        found = sorted(
            candidate
            for candidate in path.rglob("*")
            if candidate.suffix in _YAML_SUFFIXES
            and candidate.is_file()
            and candidate.name not in PROFILE_NAMES
            and candidate.name not in _KUSTOMIZATIONS
            and not any(part.startswith(".") for part in candidate.relative_to(path).parts)
        )
        if not found:
            kustomized = any((path / name).is_file() for name in _KUSTOMIZATIONS)
            raise ManifestError(
                "the directory holds no *.yaml or *.yml files"
                + (" besides its kustomization.yaml" if kustomized else ""),
                where=str(path),
                fix="kustomize build DIR | gpuscale lint -"
                if kustomized
                else "point at the directory with the manifests, or at the files themselves",
            )
        return found
    if not path.exists():
        if _symlink_loop(path):
            raise ManifestError(
                _LOOP_MESSAGE, where=str(path), fix="point the link at a real file or directory"
            )
        raise ManifestError(
            "no such file or directory", where=str(path), fix="check the path (or use - for stdin)"
        )
    return [path]


_LOOP_MESSAGE = "is a symlink loop: following its links comes back to it without end"


def _symlink_loop(path: Path) -> bool:
    """Whether ``path`` cannot be reached because its symbolic links form a loop (ELOOP),
    which ``Path.exists`` reports as a missing file."""
    try:
        path.stat()
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def _read_text(
    path: Path,
    *,
    error: type[InputError],
    what: str,
    missing_fix: str = "check the path",
    directory_fix: str | None = None,
) -> str:
    """The UTF-8 text of ``path``, or ``error`` saying why it cannot be had."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"no such {what}", where=str(path), fix=missing_fix) from None
    except IsADirectoryError:
        fix = directory_fix or f"pass the {what.split(' or ', maxsplit=1)[0]} itself"
        raise error("is a directory", where=str(path), fix=fix) from None
    except UnicodeDecodeError as exc:
        raise error(
            f"not UTF-8 text (byte {exc.start})", where=str(path), fix="save the file as UTF-8"
        ) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise error(
                _LOOP_MESSAGE, where=str(path), fix="point the link at a real file"
            ) from None
        raise error(
            f"cannot read: {exc.strerror or exc}", where=str(path), fix="check the permissions"
        ) from None
