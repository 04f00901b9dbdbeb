"""What a loaded manifest is: its plain body plus where every key came from.

The loader (``_loader``) builds these; validation, the typed views, lint, deploy and the
simulator read them. A :class:`Manifest` keeps the document's body as plain JSON-like
data (dicts, lists, str, int, float, bool, None), so it can be handed to a JSON-schema
validator or sent to the API server unchanged, and keeps, beside it, the
:class:`Location` of every key and list item so that any finding can name ``file:line``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, overload

from gpuscale.errors import KeyPath, format_key_path

__all__ = [
    "IGNORE_COMMENT",
    "KeyPath",
    "Location",
    "Manifest",
    "ManifestSet",
    "format_path",
    "nearest_location",
]

IGNORE_COMMENT = re.compile(r"gpuscale:\s*ignore\[([^\]]*)\]")
"""The suppression comment lint honours: ``# gpuscale: ignore[slug, other-slug]``."""


class Location(NamedTuple):
    """A place in a source file: 1-based line and column. ``file`` is ``<stdin>`` for stdin.

    A named tuple (immutable, ordered by file, line, column) because the loader makes one
    per key and list item."""

    file: str
    line: int
    column: int = 1

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


def nearest_location(positions: Mapping[KeyPath, Location], path: KeyPath) -> Location | None:
    """Where the key (or list item) at ``path`` is written, else its nearest written
    ancestor; ``None`` when nothing of the path is. One lookup for manifests and the
    profile, whose loaders both record a position per key."""
    probe = tuple(path)
    while probe:
        found = positions.get(probe)
        if found is not None:
            return found
        probe = probe[:-1]
    return None


def format_path(path: KeyPath) -> str:
    """``("spec", "containers", 0, "image")`` as ``spec.containers[0].image``
    (``(document)`` for the whole document)."""
    return format_key_path(path) or "(document)"


@dataclass(frozen=True)
class Manifest:
    """One Kubernetes-style object as read from a file, not validated.

    ``kind``, ``api_version`` and ``name`` are ``""`` when the document lacks them (or
    holds a non-string there); ``namespace`` is ``None`` when ``metadata.namespace`` is
    absent, as ``kubectl apply -n`` then decides it. ``body`` is the whole document as
    plain data; treat it as read-only.
    """

    kind: str
    api_version: str
    name: str
    namespace: str | None
    body: dict[str, Any]
    source: Location
    positions: Mapping[KeyPath, Location] = field(repr=False, compare=False)
    comments: Mapping[int, str] = field(repr=False, compare=False)
    """Comment text (after ``#``, stripped) by 1-based line number, for the whole file the
    manifest came from (shared by its manifests); ``#`` inside quoted or block scalars is
    not a comment."""

    @property
    def file(self) -> str:
        """The file the manifest was read from (``<stdin>`` for stdin)."""
        return self.source.file

    @property
    def spec(self) -> dict[str, Any]:
        """``body["spec"]`` when it is a mapping, else ``{}`` (the raw spec, e.g. of a
        ScaledObject, whose typed model lives in ``gpuscale.controllers.keda``)."""
        spec = self.body.get("spec")
        return spec if isinstance(spec, dict) else {}

    @property
    def ref(self) -> str:
        """``Kind/name`` (``Kind/namespace/name`` when namespaced), for messages."""
        if self.namespace:
            return f"{self.kind}/{self.namespace}/{self.name}"
        return f"{self.kind}/{self.name}"

    def effective_namespace(self, default: str = "default") -> str:
        """The namespace the object lands in when applied with ``kubectl apply -n default``."""
        return self.namespace or default

    def get(self, path: KeyPath, default: Any = None) -> Any:
        """The value at ``path`` in the body, or ``default`` when any step is missing."""
        node: Any = self.body
        for part in path:
            if isinstance(part, int):
                if not isinstance(node, list) or not -len(node) <= part < len(node):
                    return default
            elif not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node

    def line_of(self, path: KeyPath) -> Location:
        """Where the key (or list item) at ``path`` is written.

        Falls back to the nearest ancestor that exists, then to the document itself, so a
        finding about a missing key points at the mapping that should hold it.
        """
        return nearest_location(self.positions, path) or self.source

    def ignored_at(self, path: KeyPath = ()) -> frozenset[str]:
        """Rule slugs suppressed for ``path`` by ``# gpuscale: ignore[...]`` comments.

        A comment counts on the key's own line or on the line just above it; for the whole
        object (``path == ()``), on the document's first line or the line above it.
        """
        line = self.line_of(path).line
        slugs: set[str] = set()
        for number in (line - 1, line):
            text = self.comments.get(number)
            if text is None:
                continue
            for match in IGNORE_COMMENT.finditer(text):
                slugs.update(part.strip() for part in match.group(1).split(",") if part.strip())
        return frozenset(slugs)


class ManifestSet(Sequence[Manifest]):
    """Manifests in file order, with lookups by kind and by (kind, namespace, name).

    Lookups compare the namespace exactly as written (``None`` for none); callers that
    know the ``kubectl apply -n`` namespace use :meth:`find`.
    """

    def __init__(self, manifests: Sequence[Manifest] = ()) -> None:
        self._items: tuple[Manifest, ...] = tuple(manifests)
        by_key: dict[tuple[str, str | None, str], Manifest] = {}
        for manifest in self._items:
            by_key.setdefault((manifest.kind, manifest.namespace, manifest.name), manifest)
        self._by_key = by_key

    @overload
    def __getitem__(self, index: int) -> Manifest: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Manifest, ...]: ...

    def __getitem__(self, index: int | slice) -> Manifest | tuple[Manifest, ...]:
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Manifest]:
        return iter(self._items)

    def __repr__(self) -> str:
        return f"ManifestSet({len(self._items)} manifests)"

    @property
    def files(self) -> tuple[str, ...]:
        """The files the manifests came from, in the order first seen."""
        return tuple(dict.fromkeys(m.file for m in self._items))

    def by_kind(self, *kinds: str) -> tuple[Manifest, ...]:
        """The manifests whose kind is one of ``kinds``, in file order."""
        wanted = set(kinds)
        return tuple(m for m in self._items if m.kind in wanted)

    def get(self, kind: str, namespace: str | None, name: str) -> Manifest | None:
        """The first manifest with exactly this kind, namespace (``None`` = unset) and name."""
        return self._by_key.get((kind, namespace, name))

    def find(
        self, kind: str, name: str, namespace: str, *, default: str = "default"
    ) -> Manifest | None:
        """The first ``kind``/``name`` that lands in ``namespace`` once unset namespaces
        take ``default`` (as ``kubectl apply -n default`` does)."""
        for manifest in self._items:
            if (
                manifest.kind == kind
                and manifest.name == name
                and manifest.effective_namespace(default) == namespace
            ):
                return manifest
        return None

    def duplicates(self, *, default: str = "default") -> tuple[tuple[Manifest, Manifest], ...]:
        """``(first, later)`` for each object defined again: the same API group, kind,
        namespace (unset ones take ``default``, as ``kubectl apply -n`` places them) and
        name, in file order. ``kubectl apply`` would keep only the later one and silently
        drop what only the first says. The same document read twice (one file named
        twice) and documents without a kind or name are not counted."""
        first: dict[tuple[str, str, str, str], Manifest] = {}
        found: list[tuple[Manifest, Manifest]] = []
        for manifest in self._items:
            if not manifest.kind or not manifest.name:
                continue
            key = (
                manifest.api_version.rpartition("/")[0],
                manifest.kind,
                manifest.effective_namespace(default),
                manifest.name,
            )
            earlier = first.setdefault(key, manifest)
            if earlier is not manifest and earlier.source != manifest.source:
                found.append((earlier, manifest))
        return tuple(found)

    def __add__(self, other: object) -> ManifestSet:
        if not isinstance(other, ManifestSet):
            return NotImplemented
        return ManifestSet(self._items + other._items)
