"""Which kubeconfig a live command uses, and which context in it: found and read as
kubectl does, every problem one line with the fix (exit 2).

kubectl's rules (``k8s.io/client-go/tools/clientcmd/loader.go``, ``ClientConfigLoadingRules``):
``--kubeconfig FILE`` is used alone and must exist; else the files ``$KUBECONFIG`` lists
(joined with ``:``) are merged, the first file to name a context or set
``current-context`` winning, and files that do not exist are skipped; else
``~/.kube/config``. The context is ``--context``, else ``current-context``; its
namespace, else ``default``, places objects that name none.

This module only reads files (no Kubernetes client), so ``gpuscale deploy
--dry-run=client`` and ``gpuscale install`` can learn the context's namespace or check
the kubeconfig without the client's import cost or any exec plugin running;
:func:`gpuscale.live.kube.connect` builds the client on what it chooses.
:func:`load_kubeconfig_file` also serves ``gpuscale cluster kubeconfig --merge``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from gpuscale._redact import register_kubeconfig
from gpuscale.errors import InputError

__all__ = [
    "KUBECONFIG_FIX",
    "KubeconfigChoice",
    "NoKubeconfigError",
    "choose_kubeconfig",
    "kubeconfig_files",
    "load_kubeconfig_file",
]

KUBECONFIG_FIX = (
    "point KUBECONFIG at the cluster's kubeconfig (on DOKS: gpuscale cluster kubeconfig "
    "--merge) or pass --kubeconfig/--context"
)


class NoKubeconfigError(InputError):
    """No kubeconfig file at all: ``$KUBECONFIG`` unset (or naming only missing files)
    and no ``~/.kube/config``. Inside a pod the service account may serve instead."""


@dataclass(frozen=True, slots=True)
class KubeconfigChoice:
    """The kubeconfig files and the context a command uses (never credentials)."""

    files: tuple[Path, ...]
    """The files merged, in order; each exists and is a valid kubeconfig."""
    context: str
    """The chosen context's name."""
    namespace: str
    """The context's namespace, else ``default``."""
    exec_command: str | None = None
    """The credential plugin the context's user runs (``users[].user.exec.command``,
    e.g. ``doctl``), if it has one."""

    @property
    def path(self) -> str:
        """The files joined with ``:``, as ``$KUBECONFIG`` lists them."""
        return os.pathsep.join(str(f) for f in self.files)


def kubeconfig_files(
    kubeconfig: str | None, environ: Mapping[str, str], home: Path
) -> tuple[Path, ...]:
    """The files to read, as kubectl finds them. Raises :class:`InputError` when
    ``--kubeconfig`` names a missing file and :class:`NoKubeconfigError` when there is
    no file at all."""
    if kubeconfig:
        path = Path(kubeconfig).expanduser()
        if not path.exists():
            raise InputError(
                "the kubeconfig does not exist", where=f"--kubeconfig {path}", fix=KUBECONFIG_FIX
            )
        return (path,)
    listed = [Path(p).expanduser() for p in environ.get("KUBECONFIG", "").split(os.pathsep) if p]
    if listed:
        found = tuple(p for p in listed if p.exists())
        if not found:
            names = ", ".join(str(p) for p in listed)
            raise NoKubeconfigError(
                f"KUBECONFIG names {names}, and no such file exists",
                where="KUBECONFIG",
                fix=KUBECONFIG_FIX,
            )
        return found
    default = home / ".kube" / "config"
    if default.exists():
        return (default,)
    raise NoKubeconfigError(
        "no kubeconfig: KUBECONFIG is not set and ~/.kube/config does not exist",
        where="KUBECONFIG",
        fix=KUBECONFIG_FIX,
    )


def load_kubeconfig_file(path: Path, *, fix: str = KUBECONFIG_FIX) -> dict[str, Any] | None:
    """The kubeconfig at ``path`` as a dict; None when the file does not exist or is empty.

    Its users' credentials are registered with :mod:`gpuscale._redact` as it is read,
    so no message, log line or file of gpuscale can show them. A file that cannot be
    read, is not UTF-8 text, is not YAML or is not a mapping raises
    :class:`InputError` naming the file (and the line) with ``fix``."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InputError(
            f"cannot read the kubeconfig ({exc.strerror})", where=str(path), fix=fix
        ) from None
    except UnicodeDecodeError:
        raise InputError("the kubeconfig is not UTF-8 text", where=str(path), fix=fix) from None
    try:
        doc = YAML(typ="safe", pure=True).load(text)
    except YAMLError as exc:
        line, problem = _yaml_error_place(exc, text)
        raise InputError(
            "the kubeconfig is not valid YAML" + (f" ({problem})" if problem else ""),
            where=f"{path}:{line}" if line is not None else str(path),
            fix=fix,
        ) from None
    if doc is None:
        return None
    if not isinstance(doc, dict):
        raise InputError(
            f"the kubeconfig is a YAML {type(doc).__name__}, not a mapping of clusters, "
            "users and contexts",
            where=str(path),
            fix=fix,
        )
    register_kubeconfig(doc)
    return doc


def _yaml_error_place(exc: YAMLError, text: str) -> tuple[int | None, str | None]:
    """The 1-based line and the problem of a YAML error: a parser error's mark, or a
    reader error's character position (ruamel's ``ReaderError``: a control character
    or other byte YAML does not allow, which has no mark)."""
    mark = getattr(exc, "problem_mark", None)
    if mark is not None:
        return int(mark.line) + 1, getattr(exc, "problem", None)
    position = getattr(exc, "position", None)
    if isinstance(position, int):
        character = getattr(exc, "character", None)
        shown = f"#x{character:04x}" if isinstance(character, int) else repr(character)
        reason = getattr(exc, "reason", None) or "not allowed"
        return text.count("\n", 0, position) + 1, f"character {shown}: {reason}"
    return None, getattr(exc, "problem", None)


_KUBECONFIG_KEYS = frozenset(
    {"apiVersion", "kind", "clusters", "users", "contexts", "current-context", "preferences"}
)
"""The top-level keys of a kubeconfig (``clientcmd/api/v1`` ``Config``); a mapping with
none of them is some other YAML file."""


def _contexts(doc: Mapping[str, Any], path: Path) -> list[Mapping[str, Any]]:
    entries = doc.get("contexts") or []
    if not isinstance(entries, list) or not all(
        isinstance(e, Mapping) and e.get("name") for e in entries
    ):
        raise InputError(
            "contexts must be a list of entries with a name and a context",
            where=f"{path}: contexts",
            fix=KUBECONFIG_FIX,
        )
    return entries


def choose_kubeconfig(
    *,
    kubeconfig: str | None = None,
    context: str | None = None,
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> KubeconfigChoice:
    """The kubeconfig files and the context a command uses (see the module docstring).

    Raises :class:`NoKubeconfigError` when there is no kubeconfig, :class:`InputError`
    for every other problem: a missing ``--kubeconfig`` file, a file that cannot be read
    or parsed, no contexts, an unknown ``--context``, no ``current-context``."""
    env = os.environ if environ is None else environ
    files = kubeconfig_files(kubeconfig, env, home or Path.home())
    merged: dict[str, Mapping[str, Any]] = {}
    named: dict[str, dict[str, Mapping[str, Any]]] = {"clusters": {}, "users": {}}
    current: str | None = None
    used: list[Path] = []
    for path in files:
        doc = load_kubeconfig_file(path)
        if doc is None:
            continue
        if not _KUBECONFIG_KEYS & set(doc):
            keys = ", ".join(sorted(str(k) for k in doc)[:5])
            raise InputError(
                f"the file is YAML but not a kubeconfig (its keys: {keys}; a kubeconfig has "
                "clusters, users and contexts)",
                where=str(path),
                fix=KUBECONFIG_FIX,
            )
        used.append(path)
        for entry in _contexts(doc, path):
            merged.setdefault(str(entry["name"]), entry)
        for key, entries in named.items():
            for entry in doc.get(key) or []:
                if isinstance(entry, Mapping) and entry.get("name"):
                    entries.setdefault(str(entry["name"]), entry)
        current = current or (str(doc.get("current-context") or "") or None)
    where = used[0] if len(used) == 1 else None
    place = str(where) if where is not None else os.pathsep.join(str(f) for f in files)
    names = ", ".join(sorted(merged))
    if not used:
        raise InputError(
            "the kubeconfig is empty" if len(files) == 1 else "the kubeconfigs are all empty",
            where=place,
            fix=KUBECONFIG_FIX,
        )
    if not merged:
        raise InputError("the kubeconfig has no contexts", where=place, fix=KUBECONFIG_FIX)
    chosen = context or current
    if chosen is None:
        raise InputError(
            "the kubeconfig sets no current-context",
            where=place,
            fix=f"pass --context (one of {names}) or run kubectl config use-context NAME",
        )
    if chosen not in merged:
        raise InputError(
            f"no context {chosen!r} in the kubeconfig"
            if context
            else f"its current-context {chosen!r} is none of its contexts",
            where=place,
            fix=f"pass --context with one of {names} (kubectl config get-contexts lists them)",
        )
    body = merged[chosen].get("context")
    body = body if isinstance(body, Mapping) else {}
    _check_cluster(named["clusters"], body.get("cluster"), chosen, place)
    user = named["users"].get(str(body.get("user") or ""), {}).get("user")
    command = _exec_command(user)
    namespace = body.get("namespace")
    return KubeconfigChoice(tuple(used), chosen, str(namespace or "default"), command)


def _check_cluster(
    clusters: Mapping[str, Mapping[str, Any]], name: Any, context: str, place: str
) -> None:
    """The context's cluster exists and has an http(s) ``server``, as the client needs."""
    entry = clusters.get(str(name or ""))
    if entry is None:
        raise InputError(
            f"context {context!r} names cluster {name!r}, which the kubeconfig does not have",
            where=place,
            fix=KUBECONFIG_FIX,
        )
    server = (entry.get("cluster") or {}).get("server") if isinstance(entry, Mapping) else None
    if not (isinstance(server, str) and server.startswith(("https://", "http://"))):
        raise InputError(
            f"cluster {name!r} of context {context!r} has no https:// server address",
            where=place,
            fix=KUBECONFIG_FIX,
        )


def _exec_command(user: Any) -> str | None:
    """The credential plugin a user runs (``doctl`` for doctl's kubeconfigs), if any."""
    exec_ = user.get("exec") if isinstance(user, Mapping) else None
    command = exec_.get("command") if isinstance(exec_, Mapping) else None
    return str(command) if command else None
