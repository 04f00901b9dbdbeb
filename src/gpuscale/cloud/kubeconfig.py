"""A kubeconfig for a DOKS cluster, built from its short-lived credentials.

pydo's ``kubernetes.get_kubeconfig`` cannot decode the ``application/yaml`` answer
(pydo README "Known Issues", issue #264), so gpuscale asks for the JSON credentials
(``GET …/credentials?expiry_seconds=N``) and writes the kubeconfig itself, with the
names doctl uses: cluster and context ``do-<region>-<name>``, user
``do-<region>-<name>-admin``.

A kubeconfig holds a secret. It is written only where the user said (a file they name,
or merged into the first file of ``$KUBECONFIG``, else ``~/.kube/config``), atomically
(a temporary file in the same directory, then a rename) and with mode 0600; never to
stdout.
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from gpuscale._files import stage
from gpuscale._redact import register_kubeconfig_user
from gpuscale.errors import InputError
from gpuscale.live.kubeconfig import load_kubeconfig_file

__all__ = [
    "build_kubeconfig",
    "context_name",
    "default_kubeconfig_path",
    "dump_yaml",
    "merge_kubeconfig",
    "read_kubeconfig",
    "write_private",
]


def context_name(name: str, region: str) -> str:
    """doctl's context name for a cluster: ``do-<region>-<name>``."""
    return f"do-{region}-{name}"


def build_kubeconfig(name: str, region: str, credentials: Mapping[str, Any]) -> dict[str, Any]:
    """A one-cluster kubeconfig from a ``…/credentials`` answer.

    Token credentials become ``user.token``; certificate credentials become
    ``client-certificate-data`` and ``client-key-data``. Either is registered as a
    secret (:mod:`gpuscale._redact`): it goes into the file, never on the screen.
    """
    context = context_name(name, region)
    user_name = f"{context}-admin"
    server = credentials.get("server")
    if not server:
        raise InputError(
            "the credentials answer has no server address",
            where="GET …/credentials",
            fix="retry; the cluster may not be running yet (gpuscale cluster status)",
        )
    cluster: dict[str, Any] = {"server": str(server)}
    if credentials.get("certificate_authority_data"):
        cluster["certificate-authority-data"] = str(credentials["certificate_authority_data"])
    user: dict[str, Any] = {}
    if credentials.get("token"):
        user["token"] = str(credentials["token"])
    elif credentials.get("client_certificate_data") and credentials.get("client_key_data"):
        user["client-certificate-data"] = str(credentials["client_certificate_data"])
        user["client-key-data"] = str(credentials["client_key_data"])
    else:
        raise InputError(
            "the credentials answer has neither a token nor a client certificate",
            where="GET …/credentials",
            fix="retry; DOKS clusters normally return a token",
        )
    register_kubeconfig_user(user)
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "preferences": {},
        "clusters": [{"name": context, "cluster": cluster}],
        "users": [{"name": user_name, "user": user}],
        "contexts": [{"name": context, "context": {"cluster": context, "user": user_name}}],
        "current-context": context,
    }


def merge_kubeconfig(
    existing: Mapping[str, Any] | None, new: Mapping[str, Any], *, set_current: bool = True
) -> dict[str, Any]:
    """``existing`` with ``new``'s clusters, users and contexts added or replaced by name."""
    merged: dict[str, Any] = dict(existing or {})
    merged.setdefault("apiVersion", "v1")
    merged.setdefault("kind", "Config")
    merged.setdefault("preferences", {})
    for key in ("clusters", "users", "contexts"):
        incoming = list(new.get(key) or [])
        names = {entry["name"] for entry in incoming}
        kept = [
            e
            for e in merged.get(key) or []
            if not (isinstance(e, Mapping) and e.get("name") in names)
        ]
        merged[key] = kept + incoming
    if set_current or not merged.get("current-context"):
        merged["current-context"] = new.get("current-context")
    return merged


def default_kubeconfig_path(environ: Mapping[str, str], home: Path) -> Path:
    """Where ``--merge`` writes: the first file in ``$KUBECONFIG``, else ``~/.kube/config``."""
    listed = [p for p in environ.get("KUBECONFIG", "").split(os.pathsep) if p]
    if listed:
        return Path(listed[0]).expanduser()
    return home / ".kube" / "config"


def dump_yaml(doc: Mapping[str, Any]) -> str:
    """YAML text of ``doc`` (block style, keys in insertion order)."""
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    stream = io.StringIO()
    yaml.dump(dict(doc), stream)
    return stream.getvalue()


def read_kubeconfig(path: Path) -> dict[str, Any] | None:
    """The kubeconfig at ``path`` (None if the file does not exist or is empty), read by
    the same reader the live commands use; a file gpuscale cannot read as a kubeconfig
    is refused, untouched (:class:`InputError`)."""
    return load_kubeconfig_file(
        path,
        fix="repair the file (gpuscale will not merge into a broken kubeconfig), or write "
        "a separate one with --output-file FILE",
    )


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically with mode 0600 (parents made with 0700)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temp = stage(path, text.encode("utf-8"), mode=0o600)
    try:
        os.chmod(temp, 0o600)  # whatever the umask: a kubeconfig holds credentials
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
