"""TEST SCAFFOLDING: a minimal YAML loader that gives lint its object protocol.

This is not gpuscale's manifest loader (``gpuscale.manifests`` will be); it exists so the
lint rules can be tested before that loader lands. It parses multi-document YAML with
ruamel (round-trip mode keeps every key's line and column), turns each mapping document
into a :class:`YamlObject` with a plain-dict ``body``, and answers ``line_of`` from
ruamel's position records. The lead replaces it with an adapter over the real loader.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from gpuscale.lint import KeyPath, NodePool, ProfileValues, Taint

__all__ = ["YamlObject", "load_text", "read_profile"]


def _plain(node: Any) -> Any:
    if isinstance(node, Mapping):
        return {str(k) if not isinstance(k, str) else k: _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(item) for item in node]
    if isinstance(node, str):
        return str(node)
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    return node


@dataclass(frozen=True)
class YamlObject:
    """One document of a YAML file, in lint's :class:`~gpuscale.lint.ManifestObject` shape."""

    file: str
    node: CommentedMap
    body: Mapping[str, Any]

    @property
    def kind(self) -> str:
        kind = self.body.get("kind")
        return kind if isinstance(kind, str) else ""

    @property
    def name(self) -> str | None:
        meta = self.body.get("metadata")
        name = meta.get("name") if isinstance(meta, Mapping) else None
        return name if isinstance(name, str) else None

    @property
    def namespace(self) -> str | None:
        meta = self.body.get("metadata")
        namespace = meta.get("namespace") if isinstance(meta, Mapping) else None
        return namespace if isinstance(namespace, str) else None

    def line_of(self, key_path: KeyPath) -> tuple[str, int, int]:
        node: Any = self.node
        first = next(iter(node), None)
        line, column = node.lc.key(first) if first is not None else (node.lc.line, node.lc.col)
        for step in key_path:
            if isinstance(node, CommentedMap) and step in node:
                line, column = node.lc.key(step)
                node = node[step]
            elif isinstance(node, CommentedSeq) and isinstance(step, int) and 0 <= step < len(node):
                line, column = node.lc.item(step)
                node = node[step]
            else:
                break
        return self.file, line + 1, column + 1


def load_text(text: str, file: str = "manifest.yaml") -> list[YamlObject]:
    """Every mapping document of ``text`` (other documents are skipped)."""
    yaml = YAML(typ="rt")
    objects = []
    for document in yaml.load_all(io.StringIO(text)):
        if isinstance(document, CommentedMap):
            objects.append(YamlObject(file=file, node=document, body=_plain(document)))
    return objects


def read_profile(path: Path) -> ProfileValues:
    """TEST SCAFFOLDING: a profile file with lint's own field names (not gpuscale.yaml)."""
    data = YAML(typ="safe").load(path.read_text())
    pools = tuple(
        NodePool(
            name=pool["name"],
            gpu_vendor=pool.get("gpu_vendor"),
            gpus_per_node=pool.get("gpus_per_node", 0),
            labels=pool.get("labels", {}),
            taints=tuple(Taint(**taint) for taint in pool.get("taints", [])),
            max_nodes=pool.get("max_nodes", 0),
        )
        for pool in data.get("node_pools", [])
    )
    return ProfileValues(
        release_name=data.get("release_name"),
        prometheus_namespace=data.get("prometheus_namespace"),
        scrape_interval=data.get("scrape_interval"),
        node_pools=pools,
        default_startup_seconds=data.get("default_startup_seconds"),
    )
