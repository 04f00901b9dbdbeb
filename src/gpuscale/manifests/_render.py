"""Objects back to YAML, as ``kubectl apply -f -`` takes them.

One stream of documents separated by ``---``, in the order given; in each object
``apiVersion``, ``kind``, ``metadata`` and ``spec`` come first and every other key keeps
the order it was built in, so the same input always renders byte for byte the same.
Strings that Kubernetes' YAML decoder (go-yaml v2, YAML 1.1) or a YAML 1.2 reader would
take for another type — ``"false"``, ``"80"``, ``"yes"``, ``"y"``, ``"1e3"`` — are quoted,
and multi-line strings (a program kept in a ConfigMap) are written as literal blocks.
Optional comments, keyed by the path of the key they explain, are written on the line
above that key.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.scalarstring import LiteralScalarString, SingleQuotedScalarString

from gpuscale.manifests._loader import _plain
from gpuscale.manifests._model import KeyPath, Manifest

__all__ = ["render"]

_FIRST_KEYS = ("apiVersion", "kind", "metadata", "spec")
_RESOLVERS = (VersionedResolver(version=(1, 1)), VersionedResolver(version=(1, 2)))
_STR_TAG = "tag:yaml.org,2002:str"


def _needs_quotes(text: str) -> bool:
    if not isinstance(_plain(text), str):
        return True
    return any(
        resolver.resolve(ScalarNode, text, (True, False)) != _STR_TAG for resolver in _RESOLVERS
    )


def _dumper() -> YAML:
    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096
    yaml.explicit_start = False
    return yaml


def render(
    objects: Iterable[Manifest | Mapping[str, Any]],
    *,
    comments: Mapping[int, Mapping[KeyPath, str]] | None = None,
) -> str:
    """``objects`` (manifests or plain dicts) as one multi-document YAML stream.

    ``comments`` maps an object's position in ``objects`` to ``{key path: text}``; each
    text is written as ``# text`` lines above that key (or list item).
    """
    yaml = _dumper()
    parts: list[str] = []
    for index, item in enumerate(objects):
        body = item.body if isinstance(item, Manifest) else item
        tree = _convert(_ordered(dict(body)))
        for path, text in ((comments or {}).get(index) or {}).items():
            _attach(tree, path, text)
        buffer = io.StringIO()
        yaml.dump(tree, buffer)
        parts.append(buffer.getvalue())
    return "---\n".join(parts)


def _ordered(body: dict[str, Any]) -> dict[str, Any]:
    first = {key: body[key] for key in _FIRST_KEYS if key in body}
    first.update({key: value for key, value in body.items() if key not in first})
    return first


def _convert(value: Any) -> Any:
    if isinstance(value, Mapping):
        mapping = CommentedMap()
        for key, item in value.items():
            mapping[str(key)] = _convert(item)
        return mapping
    if isinstance(value, list | tuple):
        return CommentedSeq(_convert(item) for item in value)
    if isinstance(value, str):
        if "\n" in value:
            return LiteralScalarString(value)
        if _needs_quotes(value):
            return SingleQuotedScalarString(value)
    return value


def _attach(tree: Any, path: KeyPath, text: str) -> None:
    if not path:
        tree.yaml_set_start_comment(text)
        return
    parent = tree
    for part in path[:-1]:
        parent = parent[part]
    # Under indent(mapping=2, sequence=4, offset=2) every level adds two columns, so a key
    # or a list item's dash at depth d is written at column 2 * d.
    parent.yaml_set_comment_before_after_key(path[-1], before=text, indent=2 * (len(path) - 1))
