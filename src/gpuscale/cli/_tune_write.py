"""``gpuscale tune --write DIR``: the recommended configuration as minimal edits of the
user's own files.

Each file that holds the tuned ScaledObject (and the profile, when the GPU pool's
``min_nodes`` or ``max_nodes`` changes) is read with ruamel.yaml's round-trip loader, which keeps
comments, key order and quoting; only the tuned keys are set (a quoted threshold stays
quoted, a new string is written quoted so YAML does not read it as a number), and the
file is written under ``DIR`` with its own name, whole or not at all (files with no tuned
key are not copied). ``diff`` between a user's file and its namesake in ``DIR`` then shows
exactly the tuned keys.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.scalarstring import ScalarString, SingleQuotedScalarString

from gpuscale._files import write_atomically
from gpuscale.errors import InputError
from gpuscale.manifests import KeyPath, Manifest, ManifestSet
from gpuscale.profile import Profile
from gpuscale.tune.space import DELETE

__all__ = ["write_recommended"]


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096
    return yaml


def _like(old: Any, new: Any) -> Any:
    """``new`` in the scalar style of ``old`` (a quoted string stays quoted)."""
    if isinstance(new, str) and isinstance(old, ScalarString):
        return type(old)(new)
    if isinstance(new, str):
        return SingleQuotedScalarString(new)
    return new


def _set(document: Any, path: KeyPath, value: Any) -> None:
    node = document
    for part in path[:-1]:
        if isinstance(part, int):
            node = node[part]
            continue
        if not isinstance(node.get(part), dict | list):
            node[part] = CommentedMap()
        node = node[part]
    last = path[-1]
    if value is DELETE:
        if isinstance(node, dict) and last in node:
            del node[last]
        return
    node[last] = _like(node.get(last) if isinstance(node, dict) else None, value)


def _edit_file(path: Path, edits: Mapping[int, Mapping[KeyPath, Any]]) -> str:
    yaml = _yaml()
    text = path.read_text(encoding="utf-8")
    documents = list(yaml.load_all(text))
    for index, changes in edits.items():
        for key, value in changes.items():
            _set(documents[index], key, value)
    stream = io.StringIO()
    yaml.dump_all(documents, stream)
    out = stream.getvalue()
    if text.startswith("---") is False and out.startswith("---"):
        out = out[3:].lstrip("\n")
    return out


def _document_index(manifests: ManifestSet, target: Manifest) -> int:
    """The position of ``target`` among the documents of its file."""
    same = [m for m in manifests if m.file == target.file]
    lines = sorted({m.source.line for m in same})
    return lines.index(target.source.line)


def write_recommended(
    folder: Path,
    *,
    manifests: ManifestSet,
    scaled_object: Manifest,
    changes: Mapping[KeyPath, Any],
    profile: Profile,
    pool: str | None,
    min_nodes: int | None,
    max_nodes: int | None = None,
) -> list[str]:
    """Write the edited files into ``folder`` (created if missing); their paths. The GPU
    ``pool``'s ``min_nodes`` and ``max_nodes`` are written when given (not None)."""
    outputs: dict[Path, str] = {}
    source = Path(scaled_object.file)
    if not source.is_file():
        raise InputError(
            "the ScaledObject was not read from a file",
            where=scaled_object.file,
            fix="pass the manifests as files or a directory to use --write",
        )
    if changes:
        outputs[folder / source.name] = _edit_file(
            source, {_document_index(manifests, scaled_object): changes}
        )
    nodes = {k: v for k, v in (("min_nodes", min_nodes), ("max_nodes", max_nodes)) if v is not None}
    if nodes and pool is not None:
        where = Path(profile.source)
        if not where.is_file():
            raise InputError(
                f"the GPU pool's {' and '.join(nodes)} changed but the profile came from no file",
                where="--write",
                fix="give --profile FILE so the change can be written there",
            )
        index = next(i for i, p in enumerate(profile.node_pools) if p.name == pool)
        outputs[folder / where.name] = _edit_file(
            where, {0: {("node_pools", index, key): value for key, value in nodes.items()}}
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for path, text in outputs.items():
            write_atomically(path, text.encode("utf-8"))
    except OSError as error:
        raise InputError(
            f"cannot write the recommended files ({error.strerror})",
            where=str(folder),
            fix="pick a writable directory",
        ) from None
    return [str(path) for path in outputs]
